// INDEXING: index_select (`is_`), gather (`gather_`), index_add (`ia_`), scatter (`s_`) and
// scatter_add (`sa_`), named `<op>_<index dtype>_<value dtype>` with candle's parameter lists and
// launch geometry (cudarc's for_num_elems over the outputs, or over left_size * right_size for the
// three writing ops). Every loop is grid-stride over 64-bit indices, so any grid is correct.
//
// Semantics (the contract hkb keeps, including where it departs from candle):
// - Shapes: the indexed dim splits a tensor into (left, dim, right). index_select: out is
//   (left, ids_dim_size, right), out[l, i, r] = inp[l, ids[i], r]. gather: ids and out are
//   (left, ids_dim_size, right), out[l, i, r] = inp[l, ids[l, i, r], r]. index_add: for each i <
//   ids_dim_size, out[l, ids[i], r] += inp[l, i, r]. scatter / scatter_add: ids and inp are
//   (left, src_dim_size, right), out[l, ids[l, i, r], r] = (or +=) inp[l, i, r].
// - Sentinel: an id equal to the index dtype's maximum (u8 0xFF, u32 0xFFFFFFFF, i16 0x7FFF,
//   i32 0x7FFFFFFF, i64 INT64_MAX) gives 0 (all bits clear) in index_select and gather and is
//   skipped by index_add, scatter and scatter_add, for every value dtype (candle skips no sentinel
//   in its fp8 index_add/scatter_add; hkb treats all dtypes alike). A u8 id of 0xFF is the sentinel
//   even when the indexed dim has more than 255 entries.
// - Out of range: candle traps with a device assert on an id outside [0, dim). hkb never reads or
//   writes out of bounds and never traps: such an id (negative ones included) behaves exactly like
//   the sentinel (0 for select/gather, skipped for the writing ops).
// - Determinism: index_add, scatter and scatter_add give each (l, r) column to one thread, which
//   walks the ids in increasing order. Duplicate ids therefore accumulate in index order with the
//   value dtype's rounding after every addition (f16/bf16/f8 add in float and round once per step,
//   like candle's arithmetic in T), and for scatter the last duplicate wins. Results are the same
//   bits on every run and every grid. No atomics.
// - index_select's info array describes ids (candle passes [ids dims, ids strides]); hkb reads ids
//   through it. candle applies that layout to the source offset instead, which only agrees for
//   contiguous ids (the layout candle's own callers produce). inp must be contiguous, as candle
//   requires.
// - index_add walks min(ids_dim_size, src_dim_size) ids, so a src shorter than ids is never read
//   past its end (candle's tensor op makes the two equal).
// - index_select and gather write min(numel, left * ids_dim_size * right) outputs.
// - Integer additions wrap (two's complement).
#include "common/dtypes.h"
#include "common/elementwise.h"
#include "common/strided.h"

namespace {

// Index math: hkb::divmod_inline (indexmath.h), since a call for 64-bit division would put its
// registers on every path of these kernels.
using hkb::DivMod;

template <typename I>
HKB_DEVICE I sentinel();
template <>
HKB_DEVICE uint8_t sentinel<uint8_t>() {
  return 0xFF;
}
template <>
HKB_DEVICE uint32_t sentinel<uint32_t>() {
  return 0xFFFFFFFFu;
}
template <>
HKB_DEVICE int16_t sentinel<int16_t>() {
  return 0x7FFF;
}
template <>
HKB_DEVICE int32_t sentinel<int32_t>() {
  return 0x7FFFFFFF;
}
template <>
HKB_DEVICE int64_t sentinel<int64_t>() {
  return 0x7FFFFFFFFFFFFFFFll;
}

// True and the position in [0, dim) when `id` addresses an entry; false for the sentinel and for
// anything out of range.
template <typename I>
HKB_DEVICE bool resolve(I id, uint64_t dim, uint64_t& pos) {
  if (id == sentinel<I>()) return false;
  const int64_t v = static_cast<int64_t>(id);
  if (v < 0 || static_cast<uint64_t>(v) >= dim) return false;
  pos = static_cast<uint64_t>(v);
  return true;
}

// a + b in the value dtype: reduced floats in float with one rounding, integers wrapping.
template <typename T>
HKB_DEVICE T add_values(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
HKB_DEVICE float add_values(float a, float b) {
  return a + b;
}
HKB_DEVICE double add_values(double a, double b) {
  return a + b;
}
HKB_DEVICE hkb::f16 add_values(hkb::f16 a, hkb::f16 b) {
  return hkb::narrow<hkb::f16>(hkb::widen(a) + hkb::widen(b));
}
HKB_DEVICE hkb::bf16 add_values(hkb::bf16 a, hkb::bf16 b) {
  return hkb::narrow<hkb::bf16>(hkb::widen(a) + hkb::widen(b));
}
HKB_DEVICE hkb::f8e4m3 add_values(hkb::f8e4m3 a, hkb::f8e4m3 b) {
  return hkb::narrow<hkb::f8e4m3>(hkb::widen(a) + hkb::widen(b));
}

// Raw storage words that index_select moves: a row chunk of B bytes, copied bit for bit.
template <int B>
struct Word;
template <>
struct Word<16> {
  using type = uint4;
  static HKB_DEVICE type zero() { return make_uint4(0, 0, 0, 0); }
};
template <>
struct Word<8> {
  using type = uint2;
  static HKB_DEVICE type zero() { return make_uint2(0, 0); }
};
template <>
struct Word<4> {
  using type = uint32_t;
  static HKB_DEVICE type zero() { return 0; }
};
template <>
struct Word<2> {
  using type = uint16_t;
  static HKB_DEVICE type zero() { return 0; }
};
template <>
struct Word<1> {
  using type = uint8_t;
  static HKB_DEVICE type zero() { return 0; }
};

// Reads of index_select's ids: contiguous, or through the layout candle passes in info.
template <typename I>
struct ContiguousIds {
  const I* ids;
  HKB_DEVICE I operator[](uint64_t i) const { return ids[i]; }
};
// Offset of the i-th id of a strided ids layout. The 64-bit case (an ids tensor of 2^32 elements
// or a stride of 2^32) divides bit by bit: the hardware 64-bit division sequence would raise the
// register count of the whole kernel above the 32 per thread that keep two 1024-thread blocks
// resident per NVIDIA multiprocessor, and that case only reads one id per output row.
HKB_DEVICE uint64_t strided_id_offset(uint64_t i, uint64_t num_dims, const size_t* dims,
                                      const size_t* strides) {
  uint64_t offset = 0;
  for (uint64_t d = num_dims; d-- > 0;) {
    const uint64_t dim = dims[d];
    uint64_t q = 0;
    if ((i | dim) <= 0xFFFFFFFFull) {
      q = static_cast<uint32_t>(i) / static_cast<uint32_t>(dim);
    } else {
      uint64_t r = 0;
      for (int b = 63; b >= 0; --b) {
        r = (r << 1) | ((i >> b) & 1u);
        if (r >= dim) {
          r -= dim;
          q |= 1ull << b;
        }
      }
    }
    offset += (i - q * dim) * strides[d];
    i = q;
  }
  return offset;
}

template <typename I>
struct StridedIds {
  const I* ids;
  uint64_t num_dims;
  const size_t* dims;
  const size_t* strides;
  HKB_DEVICE I operator[](uint64_t i) const {
    return ids[strided_id_offset(i, num_dims, dims, strides)];
  }
};

// index_select over B-byte words: each output row (one (l, i) pair) is `words_per_row` words.
// This thread's words are first + u * sub for u < U, then the same plus step, plus 2 step, ...
// (below `words`). The U words' ids are read first, then their sources, then the stores, so U
// loads are in flight at each step.
template <int B, int U, typename Ids>
HKB_DEVICE void select_words(uint64_t first, uint32_t sub, uint64_t step, uint64_t words,
                             uint64_t words_per_row, const Ids& ids, const void* inp, void* out,
                             uint64_t src_dim, uint64_t ids_dim) {
  using W = typename Word<B>::type;
  const W* __restrict__ src = static_cast<const W*>(inp);
  W* __restrict__ dst = static_cast<W*>(out);
  for (uint64_t base = first; base < words; base += step) {
    uint64_t at[U];  // source word, or ~0 for a zero (sentinel, out of range, past the end)
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const uint64_t p = base + static_cast<uint64_t>(u) * sub;
      at[u] = ~0ull;
      if (p < words) {
        const DivMod row_col = hkb::divmod_inline(p, words_per_row);
        const DivMod left_id = hkb::divmod_inline(row_col.q, ids_dim);
        uint64_t pos;
        if (resolve(ids[left_id.r], src_dim, pos)) {
          at[u] = (left_id.q * src_dim + pos) * words_per_row + row_col.r;
        }
      }
    }
    W v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = at[u] != ~0ull ? src[at[u]] : Word<B>::zero();
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const uint64_t p = base + static_cast<uint64_t>(u) * sub;
      if (p < words) dst[p] = v[u];
    }
  }
}

// hkb::is_contiguous with each dim's size and stride read together: one memory latency per dim
// instead of two, and this check runs before the first id read of every busy thread.
HKB_DEVICE bool ids_contiguous(uint64_t num_dims, const size_t* dims, const size_t* strides) {
  uint64_t expected = 1;
  bool dense = true;
  for (uint64_t d = num_dims; d-- > 0;) {
    const uint64_t dim = dims[d], st = strides[d];
    dense &= (dim == 1) | (st == expected);
    expected *= dim;
  }
  return dense;
}

// index_select moves tuning::kIndexSelectUnits words a busy thread per step, all in flight
// together, under the resident split of common/elementwise.h (all threads of the first blocks loop,
// the others leave before their first memory access).
// Moves the n outputs as B-byte words. A busy block takes chunks of per_block * U consecutive
// words. The split is decided from the arguments alone, so threads without work leave before their
// first memory access (the ids layout lives in device memory).
template <int B, typename I>
HKB_DEVICE void select_as_words(uint64_t n, size_t row_elems, uint64_t elem_bytes, size_t num_dims,
                                const size_t* info, const I* ids, const void* inp, void* out,
                                uint64_t src_dim, uint64_t ids_dim) {
  constexpr int U = hkb::tuning::kIndexSelectUnits;
  const uint64_t words = n * elem_bytes / B;
  const uint32_t per_block = blockDim.x;
  const uint64_t chunk = static_cast<uint64_t>(per_block) * U;
  const uint32_t slots = hkb::resident_blocks(words, per_block * U);
  if (slots == 0) return;
  const uint64_t first = static_cast<uint64_t>(blockIdx.x) * chunk + threadIdx.x;
  const uint64_t step = static_cast<uint64_t>(slots) * chunk;
  const uint64_t words_per_row = row_elems * elem_bytes / B;
  if (info == nullptr || ids_contiguous(num_dims, info, info + num_dims)) {
    select_words<B, U>(first, per_block, step, words, words_per_row, ContiguousIds<I>{ids}, inp,
                       out, src_dim, ids_dim);
  } else {
    select_words<B, U>(first, per_block, step, words, words_per_row,
                       StridedIds<I>{ids, num_dims, info, info + num_dims}, inp, out, src_dim,
                       ids_dim);
  }
}

// The widest word (at most 16 bytes) that divides a row and the output and to which both
// pointers are aligned; every thread of the launch takes the same branch.
template <typename I, typename T>
__device__ void index_select(size_t numel, size_t num_dims, const size_t* info, const I* ids,
                             const T* inp, T* out, size_t left, size_t src_dim, size_t ids_dim,
                             size_t right) {
  // Every path takes the resident split: the blocks past its cap (nearly all of candle's grid)
  // leave before any other instruction.
  if (hkb::past_resident_bound() || blockIdx.x >= hkb::resident_cap()) return;
  uint64_t n = static_cast<uint64_t>(left) * ids_dim * right;
  if (numel < n) n = numel;
  if (n == 0) return;
  const uint64_t row_bytes = static_cast<uint64_t>(right) * sizeof(T);
  const uint64_t total_bytes = n * sizeof(T);
  auto fits = [&](uint64_t b) {
    return b > sizeof(T) && row_bytes % b == 0 && total_bytes % b == 0 && hkb::is_aligned(inp, b) &&
           hkb::is_aligned(out, b);
  };
  if (fits(16)) {
    select_as_words<16>(n, right, sizeof(T), num_dims, info, ids, inp, out, src_dim, ids_dim);
  } else if (fits(8)) {
    select_as_words<8>(n, right, sizeof(T), num_dims, info, ids, inp, out, src_dim, ids_dim);
  } else if (fits(4)) {
    select_as_words<4>(n, right, sizeof(T), num_dims, info, ids, inp, out, src_dim, ids_dim);
  } else if (fits(2)) {
    select_as_words<2>(n, right, sizeof(T), num_dims, info, ids, inp, out, src_dim, ids_dim);
  } else {
    select_as_words<sizeof(T)>(n, right, sizeof(T), num_dims, info, ids, inp, out, src_dim,
                               ids_dim);
  }
}

// gather: under candle's grid of an output a thread, the resident grid's threads loop over the
// outputs (tuning::kGatherResident; the rest of the grid leaves on its index first), taking
// tuning::kGatherBatch outputs a step: every id, then every source value, in flight together.
template <typename I, typename T>
__device__ void gather(size_t numel, const I* __restrict__ ids, const T* __restrict__ inp,
                       T* __restrict__ out, size_t left, size_t src_dim, size_t ids_dim,
                       size_t right) {
  // Nearly all of candle's grid leaves on its block index alone (through the range, that test
  // merged with the kIdle compare: more instructions a warp).
  if (hkb::tuning::kGatherResident && hkb::past_resident_bound()) return;
  const hkb::UnitRange r = hkb::unit_a_thread_range<hkb::tuning::kGatherResident>();
  if (r.begin == hkb::kIdle) return;
  uint64_t n = static_cast<uint64_t>(left) * ids_dim * right;
  if (numel < n) n = numel;
  constexpr int B = hkb::tuning::kGatherBatch;
  for (uint64_t i0 = r.begin; i0 < n; i0 += B * r.step) {
    I id[B];
#pragma unroll
    for (int b = 0; b < B; ++b) {
      const uint64_t i = i0 + b * r.step;
      if (i < n) id[b] = ids[i];
    }
    T v[B];
#pragma unroll
    for (int b = 0; b < B; ++b) {
      const uint64_t i = i0 + b * r.step;
      v[b] = T{};  // all bits clear for every value dtype
      uint64_t pos;
      if (i < n && resolve(id[b], src_dim, pos)) {
        const DivMod row_r = hkb::divmod_inline(i, right);
        const uint64_t left_i = hkb::divmod_inline(row_r.q, ids_dim).q;
        v[b] = inp[(left_i * src_dim + pos) * right + row_r.r];
      }
    }
#pragma unroll
    for (int b = 0; b < B; ++b) {
      const uint64_t i = i0 + b * r.step;
      if (i < n) out[i] = v[b];
    }
  }
}

// Ids per batch of index_add for positions of P: as many as the 64-register budget of a 1024-thread
// block holds without spilling (8-byte values, 64-bit positions and fp8's conversions take more).
template <typename P, typename T>
struct add_batch {
  static constexpr int wide = sizeof(T) > 4 || sizeof(P) > 4 || std::is_same<T, hkb::f8e4m3>::value
                                  ? 1
                                  : 0;
  static constexpr int value = wide ? 4 : 8;
};

// One thread per (l, r) column, walking the ids in order (see the contract at the top). candle's
// geometry gives this op only left * right threads (a few blocks for an embedding's backward), so
// one memory latency per id would dominate: the ids go add_batch at a time, with the batch's
// source and destination reads in flight together. A position repeated within a batch takes the
// value the batch computed for it last, and the stores go out in index order, so every element
// sees exactly the additions, in exactly the order, of walking the ids one at a time. Positions
// are held as P: 32-bit whenever dst_dim allows, which keeps a batch within the register budget.
template <typename P, typename I, typename T>
HKB_DEVICE void index_add_columns(const I* __restrict__ ids, uint64_t count,
                                  const T* __restrict__ inp, T* __restrict__ out, uint64_t n,
                                  uint64_t src_dim, uint64_t dst_dim, uint64_t right) {
  constexpr int K = add_batch<P, T>::value;
  const uint64_t stride = hkb::grid_stride();
  for (uint64_t t = hkb::global_thread_index(); t < n; t += stride) {
    const DivMod lr = hkb::divmod_inline(t, right);
    const T* src_col = inp + lr.q * src_dim * right + lr.r;
    T* dst_col = out + lr.q * dst_dim * right + lr.r;
    for (uint64_t j0 = 0; j0 < count; j0 += K) {
      P pos[K];
      bool hit[K];
      T s[K], d[K];
#pragma unroll
      for (int k = 0; k < K; ++k) {
        const bool in = j0 + k < count;
        uint64_t p = 0;
        hit[k] = in && resolve(ids[j0 + k], dst_dim, p);
        pos[k] = static_cast<P>(p);
        if (in) s[k] = src_col[(j0 + k) * right];
      }
#pragma unroll
      for (int k = 0; k < K; ++k) {
        if (hit[k]) d[k] = dst_col[static_cast<uint64_t>(pos[k]) * right];
      }
#pragma unroll
      for (int k = 0; k < K; ++k) {
        if (!hit[k]) continue;
        T cur = d[k];
#pragma unroll
        for (int m = 0; m < k; ++m) {
          if (hit[m] && pos[m] == pos[k]) cur = d[m];
        }
        d[k] = add_values(cur, s[k]);
      }
#pragma unroll
      for (int k = 0; k < K; ++k) {
        if (hit[k]) dst_col[static_cast<uint64_t>(pos[k]) * right] = d[k];
      }
    }
  }
}

template <typename I, typename T>
__device__ void index_add(const I* __restrict__ ids, size_t ids_dim, const T* __restrict__ inp,
                          T* __restrict__ out, size_t left, size_t src_dim, size_t dst_dim,
                          size_t right) {
  const uint64_t n = static_cast<uint64_t>(left) * right;
  const uint64_t count = ids_dim < src_dim ? ids_dim : src_dim;
  if (dst_dim <= 0xFFFFFFFFull) {
    index_add_columns<uint32_t>(ids, count, inp, out, n, src_dim, dst_dim, right);
  } else {
    index_add_columns<uint64_t>(ids, count, inp, out, n, src_dim, dst_dim, right);
  }
}

// scatter (Accumulate = false) and scatter_add (true): one thread per (l, r) column, ids walked
// in increasing i, so the last duplicate wins / duplicates add in order.
template <bool Accumulate, typename I, typename T>
__device__ void scatter(const I* __restrict__ ids, const T* __restrict__ inp, T* __restrict__ out,
                        size_t left, size_t src_dim, size_t dst_dim, size_t right) {
  const uint64_t n = static_cast<uint64_t>(left) * right;
  const uint64_t stride = hkb::grid_stride();
  for (uint64_t t = hkb::global_thread_index(); t < n; t += stride) {
    const DivMod lr = hkb::divmod_inline(t, right);
    const uint64_t src_base = lr.q * src_dim * right + lr.r;
    T* dst_col = out + lr.q * dst_dim * right + lr.r;
    for (uint64_t j = 0; j < src_dim; ++j) {
      const uint64_t s = src_base + j * right;
      uint64_t pos;
      if (!resolve(ids[s], dst_dim, pos)) continue;
      T* d = dst_col + pos * right;
      if (Accumulate) {
        *d = add_values(*d, inp[s]);
      } else {
        *d = inp[s];
      }
    }
  }
}

}  // namespace

#define HKB_INDEX_SELECT(ITAG, I, VTAG, V)                                                       \
  HKB_GLOBAL void HKB_OCCUPANCY(1024, hkb::tuning::kIndexSelectBlocks) is_##ITAG##_##VTAG(       \
      const size_t numel, const size_t num_dims, const size_t* info, const I* ids, const V* inp, \
      V* out, const size_t left_size, const size_t src_dim_size, const size_t ids_dim_size,      \
      const size_t right_size) {                                                                 \
    index_select<I, V>(numel, num_dims, info, ids, inp, out, left_size, src_dim_size,            \
                       ids_dim_size, right_size);                                                \
  }
#define HKB_GATHER(ITAG, I, VTAG, V)                                                       \
  HKB_GLOBAL void HKB_OCCUPANCY(1024, 2) gather_##ITAG##_##VTAG(                           \
      const size_t numel, const I* ids, const V* inp, V* out, const size_t left_size,      \
      const size_t src_dim_size, const size_t ids_dim_size, const size_t right_size) {     \
    gather<I, V>(numel, ids, inp, out, left_size, src_dim_size, ids_dim_size, right_size); \
  }
#define HKB_INDEX_ADD(ITAG, I, VTAG, V)                                                      \
  HKB_GLOBAL void HKB_OCCUPANCY(1024, 1) ia_##ITAG##_##VTAG(                                 \
      const I* ids, const size_t ids_dim_size, const V* inp, V* out, const size_t left_size, \
      const size_t src_dim_size, const size_t dst_dim_size, const size_t right_size) {       \
    index_add<I, V>(ids, ids_dim_size, inp, out, left_size, src_dim_size, dst_dim_size,      \
                    right_size);                                                             \
  }
#define HKB_SCATTER(ITAG, I, VTAG, V)                                                           \
  HKB_GLOBAL void s_##ITAG##_##VTAG(const I* ids, const V* inp, V* out, const size_t left_size, \
                                    const size_t src_dim_size, const size_t dst_dim_size,       \
                                    const size_t right_size) {                                  \
    scatter<false, I, V>(ids, inp, out, left_size, src_dim_size, dst_dim_size, right_size);     \
  }
#define HKB_SCATTER_ADD(ITAG, I, VTAG, V)                                                        \
  HKB_GLOBAL void sa_##ITAG##_##VTAG(const I* ids, const V* inp, V* out, const size_t left_size, \
                                     const size_t src_dim_size, const size_t dst_dim_size,       \
                                     const size_t right_size) {                                  \
    scatter<true, I, V>(ids, inp, out, left_size, src_dim_size, dst_dim_size, right_size);       \
  }

// candle's set: every op for index dtypes u8/u32/i64 over its eight value dtypes, except that
// scatter has no fp8 entry; i16 and i32 indices exist only with fp8 values and without scatter.
#define HKB_INDEXING_NO_SCATTER(ITAG, I, VTAG, V) \
  HKB_INDEX_SELECT(ITAG, I, VTAG, V)              \
  HKB_GATHER(ITAG, I, VTAG, V)                    \
  HKB_INDEX_ADD(ITAG, I, VTAG, V)                 \
  HKB_SCATTER_ADD(ITAG, I, VTAG, V)
#define HKB_INDEXING_ALL(ITAG, I, VTAG, V) \
  HKB_INDEXING_NO_SCATTER(ITAG, I, VTAG, V) HKB_SCATTER(ITAG, I, VTAG, V)
#define HKB_INDEXING_FOR_INDEX(ITAG, I)      \
  HKB_INDEXING_ALL(ITAG, I, bf16, hkb::bf16) \
  HKB_INDEXING_ALL(ITAG, I, f16, hkb::f16)   \
  HKB_INDEXING_ALL(ITAG, I, f32, float)      \
  HKB_INDEXING_ALL(ITAG, I, f64, double)     \
  HKB_INDEXING_ALL(ITAG, I, u8, uint8_t)     \
  HKB_INDEXING_ALL(ITAG, I, u32, uint32_t)   \
  HKB_INDEXING_ALL(ITAG, I, i64, int64_t)    \
  HKB_INDEXING_NO_SCATTER(ITAG, I, f8_e4m3, hkb::f8e4m3)

HKB_INDEXING_FOR_INDEX(u8, uint8_t)
HKB_INDEXING_FOR_INDEX(u32, uint32_t)
HKB_INDEXING_FOR_INDEX(i64, int64_t)
HKB_INDEXING_NO_SCATTER(i16, int16_t, f8_e4m3, hkb::f8e4m3)
HKB_INDEXING_NO_SCATTER(i32, int32_t, f8_e4m3, hkb::f8e4m3)
