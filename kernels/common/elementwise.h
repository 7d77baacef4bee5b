// Elementwise drivers shared by the elementwise families. Every loop is grid-stride over 64-bit
// indices, so any grid that launches at least one thread is correct. Contiguous paths move 16-byte
// packs: one element per thread cannot keep enough bytes in flight to reach copy bandwidth.
//
// Work split under candle's geometry (block 1024, grid ceil(n / 1024): one thread per element,
// so most threads have no pack). Measured on an H100 (bench/geometry_probe.cu, a standalone copy
// of 64M elements, grid 65536 x 1024, % of a device-to-device copy): 4-byte elements, one per
// thread 69%; 256 threads of every block moving one pack each 92%; 128 threads 89%; 512 threads
// 77%; all 1024 threads of the first quarter of the blocks 66%. 2-byte elements: 41%, 64% (256
// threads of the first half of the blocks), 50%, 55%, 44%. The launch and retirement of the 65536
// blocks alone take 49 us (an empty kernel), half the time a 2-byte copy needs at full bandwidth,
// which bounds the 2-byte and 1-byte kernels under this geometry.
//
// map_layout (binary_layout.h: binary ops, where) splits its packs with block_units (256 threads a
// block); bench_binary measured badd_f32 81-88% with it against 75% with packs spread over all
// threads. map_contiguous (unary, cast, affine) keeps the plain grid-stride split over all threads
// (ucopy_f32 69-70%): the block_units split measured 56-58% there, and again 62% (66% with 32-byte
// units, HKB_PACK_BYTES=32) in bench/elementwise_probe, a gap to the standalone copy that is not
// explained yet. 32-byte units left badd_f32 unchanged (88%), so 16 stays the default.
#pragma once

#include "dtypes.h"
#include "strided.h"

namespace hkb {

template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

template <typename A, typename B>
struct max_size {
  static constexpr int value = sizeof(A) > sizeof(B) ? sizeof(A) : sizeof(B);
};

// Bytes of the wider operand that one busy thread moves per unit (16: one vector access per
// operand; 32: two, both in flight before either is used), and the busy threads of a block.
#ifndef HKB_PACK_BYTES
#define HKB_PACK_BYTES 16
#endif
#ifndef HKB_PACK_THREADS
#define HKB_PACK_THREADS 256
#endif
constexpr int kPackBytes = HKB_PACK_BYTES;

// Elements per thread step for a map from TI to TO: kPackBytes of the wider type, at most 16
// elements (1-byte types stay at one 16-byte vector: more would spill).
template <typename TI, typename TO>
struct pack_width {
  static constexpr int raw = kPackBytes / max_size<TI, TO>::value;
  static constexpr int value = raw > 16 ? 16 : raw;
};

HKB_DEVICE bool is_aligned(const void* p, uint64_t bytes) {
  return (reinterpret_cast<uintptr_t>(p) & (bytes - 1)) == 0;
}

// W consecutive elements of T are accessed as vectors of chunk_elems<T, W> elements (at most 16
// bytes, the widest access of both vendors); a run of W elements needs that vector's alignment.
template <typename T, int W>
struct chunk_elems {
  static constexpr int per16 = 16 / static_cast<int>(sizeof(T));
  static constexpr int value = W < per16 ? W : per16;
  static constexpr uint64_t bytes = sizeof(T) * value;
};
template <int W, typename T>
HKB_DEVICE bool run_aligned(const T* p) {
  return is_aligned(p, chunk_elems<T, W>::bytes);
}
template <int W, typename T>
HKB_DEVICE void load_run(const T* p, T (&v)[W]) {
  constexpr int C = chunk_elems<T, W>::value;
#pragma unroll
  for (int c = 0; c < W / C; ++c) {
    const Pack<T, C> x = reinterpret_cast<const Pack<T, C>*>(p)[c];
#pragma unroll
    for (int k = 0; k < C; ++k) v[c * C + k] = x.v[k];
  }
}
template <int W, typename T>
HKB_DEVICE void store_run(T* p, const T (&v)[W]) {
  constexpr int C = chunk_elems<T, W>::value;
#pragma unroll
  for (int c = 0; c < W / C; ++c) {
    Pack<T, C> x;
#pragma unroll
    for (int k = 0; k < C; ++k) x.v[k] = v[c * C + k];
    reinterpret_cast<Pack<T, C>*>(p)[c] = x;
  }
}

// The units (16-byte packs, or elements) this thread handles: begin, begin + step, ... while
// < units. The begins of the busy threads are exactly [0, step), so a grid-stride loop over any
// other unit count with the same range also covers all its units. Idle threads get begin = kIdle.
struct UnitRange {
  uint64_t begin;
  uint64_t step;
};
constexpr uint64_t kIdle = ~0ull;
// Busy threads per block when the units are 16-byte packs (see the top of the file).
constexpr uint32_t kPackThreads = HKB_PACK_THREADS;

// Blocks that take units: min(gridDim.x, ceil(units / busy)). When that is below gridDim.x,
// units < gridDim.x * busy < 2^41 (busy <= 1024), so the quotient comes from two 32-bit divisions
// (high 21 and low 20 bits of the dividend): no 64-bit division, whose call would cost registers.
HKB_DEVICE uint32_t active_blocks(uint64_t units, uint32_t busy) {
  if (units >= static_cast<uint64_t>(gridDim.x) * busy) return gridDim.x;
  const uint64_t a = units + busy - 1;
  const uint32_t hi = static_cast<uint32_t>(a >> 20), lo = static_cast<uint32_t>(a & 0xFFFFF);
  const uint32_t q_hi = hi / busy;
  const uint32_t q_lo = (((hi - q_hi * busy) << 20) | lo) / busy;
  return (q_hi << 20) + q_lo;
}
HKB_DEVICE uint32_t busy_threads(uint32_t per_block) {
  return blockDim.x < per_block ? blockDim.x : per_block;
}
// Threads [0, per_block) of the first ceil(units / per_block) blocks (at most the whole grid) each
// take a unit per step; the others are idle and should return before reading anything else.
HKB_DEVICE UnitRange block_units(uint64_t units, uint32_t per_block) {
  const uint32_t busy = busy_threads(per_block);
  if (threadIdx.x >= busy) return {kIdle, 1};
  const uint32_t active = active_blocks(units, busy);
  if (blockIdx.x >= active) return {kIdle, 1};
  return {static_cast<uint64_t>(blockIdx.x) * busy + threadIdx.x,
          static_cast<uint64_t>(active) * busy};
}
// Units of V elements: packs with kPackThreads threads a block, single elements with all of them.
template <int V>
HKB_DEVICE UnitRange units_for(uint64_t units) {
  return block_units(units, V > 1 ? kPackThreads : blockDim.x);
}

// HKB_CONTIGUOUS_UNITS=1 (for timing, bench/geometry_probe.cu): map_contiguous splits its packs
// with units_for, like map_layout, instead of over all threads.
#ifndef HKB_CONTIGUOUS_UNITS
#define HKB_CONTIGUOUS_UNITS 0
#endif

// out[i] = f(in[i]) for i in [0, n), both contiguous. `in` may equal `out`.
template <typename TI, typename TO, typename F>
HKB_DEVICE void map_contiguous(uint64_t n, const TI* in, TO* out, F f) {
  constexpr int V = pack_width<TI, TO>::value;
  const uint64_t tid = global_thread_index();
  const uint64_t stride = grid_stride();
  uint64_t done = 0;
  if (V > 1 && is_aligned(in, sizeof(TI) * V) && is_aligned(out, sizeof(TO) * V)) {
    const uint64_t packs = n / V;
    const Pack<TI, V>* in_p = reinterpret_cast<const Pack<TI, V>*>(in);
    Pack<TO, V>* out_p = reinterpret_cast<Pack<TO, V>*>(out);
    uint64_t first = tid, step = stride;
    if (HKB_CONTIGUOUS_UNITS) {
      const UnitRange r = units_for<V>(packs);
      first = r.begin;
      step = r.step;
    }
    for (uint64_t p = first; p < packs; p += step) {
      const Pack<TI, V> a = in_p[p];
      Pack<TO, V> b;
#pragma unroll
      for (int k = 0; k < V; ++k) b.v[k] = f(a.v[k]);
      out_p[p] = b;
    }
    done = packs * V;
  }
  for (uint64_t i = done + tid; i < n; i += stride) out[i] = f(in[i]);
}

// out[i] = f(in[strided(i)]) with the input described by info = [dims, strides]; out contiguous.
template <typename TI, typename TO, typename F>
HKB_DEVICE void map_strided_in(uint64_t n, uint64_t num_dims, const size_t* info, const TI* in,
                               TO* out, F f) {
  const size_t* dims = info;
  const size_t* strides = info + num_dims;
  for (uint64_t i = global_thread_index(); i < n; i += grid_stride()) {
    out[i] = f(in[strided_offset(i, num_dims, dims, strides)]);
  }
}

// The unary-shaped entry contract of candle (affine, unary, cast): null info, or an info that
// describes a contiguous layout, takes the vectorised path.
template <typename TI, typename TO, typename F>
HKB_DEVICE void map_unary_layout(uint64_t n, uint64_t num_dims, const size_t* info, const TI* in,
                                 TO* out, F f) {
  if (info == nullptr || is_contiguous(num_dims, info, info + num_dims)) {
    map_contiguous(n, in, out, f);
  } else {
    map_strided_in(n, num_dims, info, in, out, f);
  }
}

}  // namespace hkb
