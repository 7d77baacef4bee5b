// Elementwise drivers shared by the elementwise families. Every loop is grid-stride over 64-bit
// indices, so any grid that launches at least one thread is correct. Contiguous paths move 16-byte
// packs: one element per thread cannot keep enough bytes in flight to reach copy bandwidth.
//
// Work split under candle's geometry (block 1024, grid ceil(n / 1024): one thread per element,
// so with 16-byte packs most threads and blocks have nothing to do). Launching and retiring the
// 65536 blocks of a 64M-element grid alone takes 49 us on an H100 (an empty kernel), half the
// time a 2-byte copy needs at full bandwidth; when every block also does a little work the two
// add up. The resident split (resident_range, below) overlaps them: only the first blocks work,
// looping over all units with all their threads, while the idle blocks stream through the other
// block slots and leave after a handful of instructions. bench/geometry_probe.cu (a standalone
// copy, % of a device-to-device copy): 4-byte elements 92% (one element per thread: 70%; 256
// threads of every block moving one pack each: 92%), 2-byte 90% (64%), 1-byte 64% (40%).
// The idle blocks' path must be as short as possible: the grid drains no faster than they retire,
// so callers test resident_cap() before anything else where every path of theirs is resident.
// Measured through the kernels (bench/elementwise_probe, H100, 64M elements): ucopy f32 / bf16
// 92% / 89%, uexp 91% / 84%, cast f32 -> bf16 88%, badd f32 / bf16 92%, where_u8 f32 / bf16 93% /
// 92%; before the short idle path bf16 gave 74% (ucopy), 66% (uexp) and 89% (where).
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
// operand; 32: two, both in flight before either is used).
#ifndef HKB_PACK_BYTES
#define HKB_PACK_BYTES 16
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
// Blocks that take units: min(gridDim.x, ceil(units / busy)). When that is below gridDim.x,
// units < gridDim.x * busy < 2^43 (busy <= 4096), so the quotient comes from two 32-bit divisions
// (high 23 and low 20 bits of the dividend; the remainder shifted stays below 2^32): no 64-bit
// division, whose call would cost registers.
HKB_DEVICE uint32_t active_blocks(uint64_t units, uint32_t busy) {
  if (units >= static_cast<uint64_t>(gridDim.x) * busy) return gridDim.x;
  const uint64_t a = units + busy - 1;
  const uint32_t hi = static_cast<uint32_t>(a >> 20), lo = static_cast<uint32_t>(a & 0xFFFFF);
  const uint32_t q_hi = hi / busy;
  const uint32_t q_lo = (((hi - q_hi * busy) << 20) | lo) / busy;
  return (q_hi << 20) + q_lo;
}
// Resident split: under candle's geometry most of the grid's 1024-thread blocks have nothing to
// do, and launching and retiring them costs 49 us for 64M elements on the H100 whatever they do.
// So only the first blocks work, all their threads looping over the units, while the rest of the
// grid streams through the other block slots and leaves at once: the data moves while the idle
// blocks retire instead of after them. Busy blocks: a quarter of a block per multiprocessor times
// HKB_RESIDENT_QUARTERS (2: half of the multiprocessors; at least one, at most the grid).
// bench/geometry_probe.cu on the H100 (132 SMs), 64M
// elements, % of a device-to-device copy: 4-byte copy 92% with 66 busy blocks and two packs a
// thread in flight (95% with 132 and one pack), 2-byte 90% (86% with 132), 1-byte 64%.
#ifndef HKB_RESIDENT_QUARTERS
#define HKB_RESIDENT_QUARTERS 2
#endif
// The most blocks the resident split makes busy: HKB_RESIDENT_QUARTERS quarters of a block per
// multiprocessor, at least one. No division, so idle blocks can test it first: they outnumber the
// busy ones a thousand to one under candle's geometry, and every instruction they run before
// leaving lengthens the launch (two 32-bit divisions there cost ucopy_f32 a fifth of its bandwidth
// on the H100).
HKB_DEVICE uint32_t resident_cap() {
  const uint32_t cap = multiprocessors() * HKB_RESIDENT_QUARTERS / 4;
  return cap == 0 ? 1 : cap;
}
// Busy blocks of the resident split over `units` when a block takes per_block (<= 4096) of them a
// step (at least 1, at most the grid and no more than the units need), or 0 when this block is not
// one of them; the cap is tested first.
HKB_DEVICE uint32_t resident_blocks(uint64_t units, uint32_t per_block) {
  uint32_t blocks = resident_cap();
  if (blockIdx.x >= blocks) return 0;
  const uint32_t need = active_blocks(units, per_block);
  if (need < blocks) blocks = need;
  if (blocks == 0) blocks = 1;
  return blockIdx.x < blocks ? blocks : 0;
}
// All threads of the busy blocks (the first min(resident_cap(), gridDim.x)), one unit each a step;
// threads whose begin is past the last unit have none. No division: busy blocks start at once.
HKB_DEVICE UnitRange resident_range() {
  const uint32_t cap = resident_cap();
  const uint32_t blocks = gridDim.x < cap ? gridDim.x : cap;
  if (blockIdx.x >= blocks) return {kIdle, 1};
  return {static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x,
          static_cast<uint64_t>(blocks) * blockDim.x};
}

// Packs a thread of map_contiguous loads before it stores the first: HKB_CONTIGUOUS_INFLIGHT (2)
// when the wider operand has 2 or 4 bytes, else 1: a second pack of 16 one-byte or two eight-byte
// elements kept live across the first one's op spilled registers under the 32-register budget
// (fp8 and f64 transcendentals, u8 ops).
#ifndef HKB_CONTIGUOUS_INFLIGHT
#define HKB_CONTIGUOUS_INFLIGHT 2
#endif
template <typename TI, typename TO>
struct packs_in_flight {
  static constexpr int size = max_size<TI, TO>::value;
  static constexpr int value = size == 2 || size == 4 ? HKB_CONTIGUOUS_INFLIGHT : 1;
};

// out[i] = f(in[i]) for i in [0, n), both contiguous. `in` may equal `out`. Resident split: only
// blocks below resident_cap() work, so callers may let the others leave before calling. Aligned
// operands move as packs, packs_in_flight packs of a thread loaded before the first is stored;
// unaligned ones element by element.
template <typename TI, typename TO, typename F>
HKB_DEVICE void map_contiguous(uint64_t n, const TI* in, TO* out, F f) {
  constexpr int V = pack_width<TI, TO>::value;
  constexpr bool kTwo = packs_in_flight<TI, TO>::value > 1;
  const UnitRange r = resident_range();
  if (r.begin == kIdle) return;
  if (V > 1 && is_aligned(in, sizeof(TI) * V) && is_aligned(out, sizeof(TO) * V)) {
    const uint64_t packs = n / V;
    const Pack<TI, V>* in_p = reinterpret_cast<const Pack<TI, V>*>(in);
    Pack<TO, V>* out_p = reinterpret_cast<Pack<TO, V>*>(out);
    for (uint64_t p = r.begin; p < packs; p += (kTwo ? 2 : 1) * r.step) {
      const uint64_t q = p + r.step;
      const bool two = kTwo && q < packs;
      const Pack<TI, V> a = in_p[p];
      Pack<TI, V> a2;
      if (two) a2 = in_p[q];
      Pack<TO, V> b;
#pragma unroll
      for (int k = 0; k < V; ++k) b.v[k] = f(a.v[k]);
      out_p[p] = b;
      if (two) {
#pragma unroll
        for (int k = 0; k < V; ++k) b.v[k] = f(a2.v[k]);
        out_p[q] = b;
      }
    }
    for (uint64_t i = packs * V + r.begin; i < n; i += r.step) out[i] = f(in[i]);
    return;
  }
  for (uint64_t i = r.begin; i < n; i += r.step) out[i] = f(in[i]);
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
// Blocks above the resident split's cap leave first when info is null, before any other
// instruction: under candle's grid they are nearly all of the grid, and the length of their path
// decides how fast the grid drains (bench/elementwise_probe: ucopy_bf16 74% -> 89% of copy).
template <typename TI, typename TO, typename F>
HKB_DEVICE void map_unary_layout(uint64_t n, uint64_t num_dims, const size_t* info, const TI* in,
                                 TO* out, F f) {
  if (info == nullptr && blockIdx.x >= resident_cap()) return;
  if (info == nullptr || is_contiguous(num_dims, info, info + num_dims)) {
    map_contiguous(n, in, out, f);
  } else {
    map_strided_in(n, num_dims, info, in, out, f);
  }
}

}  // namespace hkb
