// Layout drivers of the multi-input elementwise families (binary ops, where): K inputs, each with
// its own strides over shared dims, one contiguous output. candle passes the layout as
// info = [dims, strides of input 0, strides of input 1, ...] (K + 1 arrays of num_dims size_t);
// a null info means every input is contiguous. Broadcasting is stride 0.
//
// Speed: candle computes the strided offset of every element of every input with a chain of
// 64-bit divisions and moves one element per thread. Here the dims are first merged from the
// innermost one outwards while every input stays linear over them (a "row" of `row_len` elements
// with one stride per input: 1 = contiguous, 0 = broadcast), then each thread handles a pack of V
// consecutive outputs (16 bytes of the widest operand): one division chain per pack, shared by all
// inputs and 32-bit where the values fit, then a 16-byte load for each input contiguous along the
// row, a single load for each input broadcast along it (any other run is gathered element by
// element), and one 16-byte store. Row vector ([R,C] op [1,C]) and column vector ([R,C] op [R,1])
// broadcasts therefore run as one division per pack.
//
// Work split: the resident split (elementwise.h): all threads of the first blocks loop over the
// units, the other blocks leave as their first act (even before reading an argument). Every path
// takes it, the element paths too (unaligned outputs and 64-bit views, rare and slower). Any grid
// of at least one thread is correct.
//
// Registers: candle launches 1024-thread blocks, so a kernel above 32 registers per thread (NVIDIA)
// fits one block per SM instead of two, and then the idle blocks stall the SM. Hence loops kept
// rolled (`#pragma unroll 1`: they run once per thread under candle's geometry anyway), gathers
// computed element by element rather than as whole packs, and one 64-bit element path shared by
// every case that needs it. f32/f64/f16/bf16/i32/i64 binary kernels and where on 2-byte and wider
// values stay at 32 registers on sm_90; 1-byte element types (16 per pack) take more.
#pragma once

#include "elementwise.h"

namespace hkb {

// Element i of every input after merging the dims from the innermost outwards while every input
// stays linear over them: i lies in row i / row_len at column i % row_len, and input k's element
// is at row_offset_k(row) + column * inner_stride[k]. Dims [0, outer_dims) index the row; size-1
// dims among them contribute nothing and are skipped. All 32-bit: a row layout is used only when
// the element count and every input's largest offset fit in 31 bits, so packs, columns and offsets
// cannot overflow; larger views take map_elements.
template <int K>
struct RowLayout {
  const size_t* info;
  uint32_t num_dims;
  uint32_t row_len;
  uint32_t inner_stride[K];
  uint32_t outer_dims;
  uint32_t first_outer;  // outermost dim of size > 1: its index is the rest of the row, no modulo

  HKB_DEVICE void row_offsets(uint32_t row, uint32_t (&off)[K]) const {
#pragma unroll
    for (int k = 0; k < K; ++k) off[k] = 0;
#pragma unroll 1
    for (uint32_t d = outer_dims; d-- > first_outer;) {
      const uint32_t size = static_cast<uint32_t>(info[d]);
      if (size == 1) continue;
      uint32_t idx = row;
      if (d != first_outer) {
        const uint32_t q = row / size;
        idx = row - q * size;
        row = q;
      }
#pragma unroll
      for (int k = 0; k < K; ++k) {
        off[k] += idx * static_cast<uint32_t>(info[(k + 1) * num_dims + d]);
      }
    }
  }
};

enum class LayoutKind { kDense, kRows, kWide };

// Classifies the layout of n > 0 elements: every input contiguous (dense), a 32-bit row layout
// (filled into *l), or one that needs 64-bit offsets (wide).
template <int K>
HKB_DEVICE LayoutKind analyze_layout(uint64_t n, uint64_t num_dims, const size_t* info,
                                     RowLayout<K>* l) {
  if (info == nullptr) return LayoutKind::kDense;
  const size_t* dims = info;
  uint64_t d = num_dims;  // dims [0, d) are not merged yet
  while (d > 0 && dims[d - 1] == 1) --d;
  uint64_t row_len = 1;
  uint64_t inner[K];
#pragma unroll
  for (int k = 0; k < K; ++k) inner[k] = 1;
  if (d > 0) {
    --d;
    row_len = dims[d];
#pragma unroll
    for (int k = 0; k < K; ++k) inner[k] = info[(k + 1) * num_dims + d];
    while (d > 0) {
      const uint64_t size = dims[d - 1];
      if (size != 1) {
        bool linear = true;
#pragma unroll
        for (int k = 0; k < K; ++k) {
          linear = linear && info[(k + 1) * num_dims + d - 1] == row_len * inner[k];
        }
        if (!linear) break;
        row_len *= size;
      }
      --d;
    }
  }
  bool dense = d == 0;
#pragma unroll
  for (int k = 0; k < K; ++k) dense = dense && inner[k] == 1;
  if (dense) return LayoutKind::kDense;

  constexpr uint64_t kLimit = 0x7FFFFFFFull;
  bool fits = n <= kLimit;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    uint64_t extent = 0;
    for (uint64_t e = 0; e < num_dims; ++e) extent += (dims[e] - 1) * info[(k + 1) * num_dims + e];
    fits = fits && extent <= kLimit;
  }
  if (!fits) return LayoutKind::kWide;

  l->info = info;
  l->num_dims = static_cast<uint32_t>(num_dims);
  l->row_len = static_cast<uint32_t>(row_len);
#pragma unroll
  for (int k = 0; k < K; ++k) l->inner_stride[k] = static_cast<uint32_t>(inner[k]);
  l->outer_dims = static_cast<uint32_t>(d);
  uint32_t first = 0;
  while (first < d && dims[first] == 1) ++first;
  l->first_outer = first;
  return LayoutKind::kRows;
}

// Whether the run p[off + j * stride], j < V, is one aligned vector or one broadcast value.
template <int V, typename T, typename I>
HKB_DEVICE bool is_vector_run(const T* p, I off, I stride) {
  return stride == 0 || (stride == 1 && run_aligned<V>(p + off));
}

// v[j] = p[off + j * stride] for j < V, for a run where is_vector_run holds: one 16-byte load, or
// one load of the broadcast value. Bodies compute other runs element by element (gathers), which
// keeps only one pack per operand in registers on this path.
template <int V, typename T, typename I>
HKB_DEVICE void load_vector_run(const T* p, I off, I stride, T (&v)[V]) {
  if (stride == 0) {
    const T x = p[off];
#pragma unroll
    for (int j = 0; j < V; ++j) v[j] = x;
  } else {
    load_run<V>(p + off, v);
  }
}

// Writes W computed outputs to out[0, W): one element, or a run aligned for W elements.
template <int W, typename T>
HKB_DEVICE void store_results(T* out, const T (&res)[W]) {
  if constexpr (W == 1) {
    out[0] = res[0];
  } else {
    store_run<W>(out, res);
  }
}

// The drivers below take the units this thread handles from map_layout: packs of V outputs, or
// single elements when V = 1.

// Every input contiguous: pack p covers elements [p * V, p * V + V) of every operand.
template <int K, int V, typename TO, typename Body>
HKB_DEVICE void map_dense(uint64_t n, UnitRange range, TO* out, const Body& body) {
  const uint64_t packs = n / V + (n % V != 0 ? 1 : 0);
  uint64_t ones[K];
#pragma unroll
  for (int k = 0; k < K; ++k) ones[k] = 1;
#pragma unroll 1
  for (uint64_t p = range.begin; p < packs; p += range.step) {
    const uint64_t i0 = p * V;
    uint64_t off[K];
    if (i0 + V <= n) {
#pragma unroll
      for (int k = 0; k < K; ++k) off[k] = i0;
      body.template store<V>(off, ones, out + i0);
    } else {
#pragma unroll 1
      for (uint64_t i = i0; i < n; ++i) {
#pragma unroll
        for (int k = 0; k < K; ++k) off[k] = i;
        body.template store<1>(off, ones, out + i);
      }
    }
  }
}

// Strided / broadcast inputs merged into rows (see RowLayout). A thread's packs start range.step
// * V elements apart, so the row and column of the next one come from the current ones by adding
// that distance, split into rows and columns once per thread: no division per pack (under candle's
// geometry a busy thread takes dozens of packs). Row offsets come from RowLayout::row_offsets.
template <int K, int V, typename TO, typename Body>
HKB_DEVICE void map_rows(uint32_t n, UnitRange range, const RowLayout<K>& l, TO* out,
                         const Body& body) {
  const uint32_t packs = n / V + (n % V != 0 ? 1 : 0);
  if (range.begin >= packs) return;
  uint32_t i0 = static_cast<uint32_t>(range.begin) * V;
  uint32_t row = i0 / l.row_len;
  uint32_t col = i0 - row * l.row_len;
  // The distance in rows and columns; only used while the next pack exists, so below n < 2^31.
  const uint64_t dist = range.step * V;
  const uint32_t drow = dist < n ? static_cast<uint32_t>(dist) / l.row_len : 0;
  const uint32_t dcol = dist < n ? static_cast<uint32_t>(dist) - drow * l.row_len : 0;
#pragma unroll 1
  for (uint64_t p = range.begin; p < packs; p += range.step) {
    uint32_t base[K], off[K];
    l.row_offsets(row, base);
    if (i0 + V <= n && col + V <= l.row_len) {
#pragma unroll
      for (int k = 0; k < K; ++k) off[k] = base[k] + col * l.inner_stride[k];
      body.template store<V>(off, l.inner_stride, out + i0);
    } else {
      // The pack crosses a row boundary or is the partial last one: element by element, stepping
      // the column and recomputing the row offsets only when the row changes.
      const uint32_t end = n - i0 < V ? n : i0 + V;
      uint32_t r = row, c = col;
#pragma unroll 1
      for (uint32_t i = i0; i < end; ++i) {
        if (c == l.row_len) {
          c = 0;
          ++r;
          l.row_offsets(r, base);
        }
#pragma unroll
        for (int k = 0; k < K; ++k) off[k] = base[k] + c * l.inner_stride[k];
        body.template store<1>(off, l.inner_stride, out + i);
        ++c;
      }
    }
    i0 += static_cast<uint32_t>(dist < n ? dist : 0);
    col += dcol;
    row += drow;
    if (col >= l.row_len) {
      col -= l.row_len;
      ++row;
    }
  }
}

// A strided layout (info not null) with 64-bit offsets, one element per step: views whose element
// count or offsets need more than 31 bits, and outputs not aligned for packs. `range` may come from
// a split into packs: its begins cover [0, step) all the same.
template <int K, typename TO, typename Body>
HKB_DEVICE void map_elements(uint64_t n, UnitRange range, uint64_t num_dims, const size_t* info,
                             TO* out, const Body& body) {
#pragma unroll 1
  for (uint64_t i = range.begin; i < n; i += range.step) {
    uint64_t off[K];
#pragma unroll
    for (int k = 0; k < K; ++k) off[k] = 0;
    uint64_t rest = i;
#pragma unroll 1
    for (uint64_t d = num_dims; d-- > 0;) {
      const uint64_t size = info[d];
      if (size == 1) continue;
      const DivMod qr = divmod_inline(rest, size);
      rest = qr.q;
#pragma unroll
      for (int k = 0; k < K; ++k) off[k] += qr.r * info[(k + 1) * num_dims + d];
    }
    body.template store<1>(off, off, out + i);
  }
}

// out[i] = body(element i of every input) for i < n, out contiguous. `Body::store<W>(off, stride,
// out)` computes W consecutive outputs whose input k elements are at off[k] + j * stride[k] and
// writes them to out[0, W) (aligned for a W-element run when W > 1). V is the unit width in
// outputs (a multiple of 16 bytes of the widest operand). The idle blocks of the resident split
// (most of the grid under candle's geometry) leave before anything else; the busy ones take units
// of V, or single elements when the output is not aligned for packs.
template <int K, int V, typename TO, typename Body>
HKB_DEVICE void map_layout_units(uint64_t n, uint64_t num_dims, const size_t* info, TO* out,
                                 const Body& body) {
  const UnitRange range = resident_range(info == nullptr);
  if (range.begin == kIdle || n == 0) return;
  const bool packed = run_aligned<V>(out);
  RowLayout<K> l;
  const LayoutKind kind = analyze_layout<K>(n, num_dims, info, &l);
  if (kind == LayoutKind::kDense) {
    if (packed) {
      map_dense<K, V>(n, range, out, body);
    } else {
      map_dense<K, 1>(n, range, out, body);
    }
  } else if (kind == LayoutKind::kRows && packed) {
    map_rows<K, V>(static_cast<uint32_t>(n), range, l, out, body);
  } else {
    map_elements<K>(n, range, num_dims, info, out, body);
  }
}

// V: one 16-byte pack of the widest operand. Contiguous operands (null info) take the resident
// split (elementwise.h) with units of VD outputs, layouts given by info with units of VW: the
// callers choose two packs where the registers allow it (faster than one wherever it fits).
// Idle blocks leave before anything else, the test of info included: without that, nvcc merged the
// two paths' resident_range and the idle path took 34 instructions instead of 9, which with 65536
// blocks of 32 warps was most of all instructions issued.
template <int K, int V, int VW, int VD, typename TO, typename Body>
HKB_DEVICE void map_layout(uint64_t n, uint64_t num_dims, const size_t* info, TO* out,
                           const Body& body) {
  if (past_resident_bound() ||
      blockIdx.x >= resident_cap(tuning::kResidentQuarters, info == nullptr)) {
    return;
  }
  if (info == nullptr) {
    map_layout_units<K, VD>(n, num_dims, info, out, body);
  } else {
    map_layout_units<K, VW>(n, num_dims, info, out, body);
  }
}

}  // namespace hkb
