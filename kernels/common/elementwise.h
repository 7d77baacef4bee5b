// Elementwise drivers shared by the elementwise families. Every loop is grid-stride over 64-bit
// indices, so any grid that launches at least one thread is correct. Contiguous paths move 16-byte
// packs: one element per thread cannot keep enough bytes in flight to reach copy bandwidth.
//
// Work split under candle's geometry (block 1024, grid ceil(n / 1024): one thread per element, so
// with 16-byte packs most threads and blocks have nothing to do; a grid of at most
// tuning::kResidentBlockBound blocks a row, such as hkb_launch_config_tuned's, has every block work
// instead, over contiguous data in every row): the resident split (resident_range, below) lets
// only the first blocks work, looping over all units with all their
// threads, while the idle blocks stream through the other block slots and leave after a handful of
// instructions. The grid drains no faster than the idle blocks retire, so callers test
// resident_cap() before anything else where every path of theirs is resident. Measurements:
// docs/performance.md.
#pragma once

#include "dtypes.h"
#include "strided.h"
#include "transpose.h"

namespace hkb {

template <typename A, typename B>
struct max_size {
  static constexpr int value = sizeof(A) > sizeof(B) ? sizeof(A) : sizeof(B);
};

constexpr int kPackBytes = tuning::kPackBytes;

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
// Whether every pointer is aligned to `bytes` (a power of two; null pointers are): one test of
// their bits together.
template <typename... P>
HKB_DEVICE bool all_aligned(uint64_t bytes, const P*... p) {
  return ((reinterpret_cast<uintptr_t>(p) | ...) & (bytes - 1)) == 0;
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
// True for a block at or past tuning::kResidentBlockBound, which no resident split makes busy:
// nearly all of candle's grid. Such blocks leave on this test alone, before a count or a layout is
// read; written as a test of the cap instead, it compiled to branches to the cap's compare, two
// more on those blocks' path. The blocks of a smaller grid (the tuned one) all stay.
HKB_DEVICE bool past_resident_bound() {
  return blockIdx.x >= tuning::kResidentBlockBound;
}

// Resident split: under candle's geometry most of the grid's 1024-thread blocks have nothing to
// do, and launching and retiring them takes the same time whatever they do. So only the first
// blocks work, all their threads looping over the units, while the rest of the grid streams
// through the other block slots and leaves at once: the data moves while the idle blocks retire.
// The most blocks the resident split makes busy: every block of a grid of at most
// tuning::kResidentBlockBound blocks (hkb_launch_config_tuned's grids, whose blocks each take a
// few packs: many blocks streaming their own spans are faster than a few looping over everything);
// of a larger grid, `quarters` (tuning::kResidentQuarters) quarters of a block per multiprocessor,
// at least one and below kResidentBlockBound, which idle blocks test before anything else. No
// division, so idle blocks can test it first: they outnumber the busy ones a thousand to one, and
// every instruction they run before leaving lengthens the launch.
// A grid of several rows of at most kResidentBlockBound blocks (the tuned launch of more blocks
// than that): paths over contiguous memory (whole_grid) make every block of every row busy, in one
// pass; the other paths use the first row only, as a one-row grid, and the other rows are idle.
// Planes past the first (gridDim.z > 1) are idle everywhere.

// The tuned launch's grid (one row or several of at most kResidentBlockBound blocks): paths over
// contiguous memory make every block of its first plane busy on this test of the grid's shape
// alone, before any count or cap is read, so that the blocks reach their first load sooner.
HKB_DEVICE bool tuned_grid() {
  return grid_row_of_at_most(tuning::kResidentBlockBound);
}
// The tuned launch's grid of several rows.
HKB_DEVICE bool rows_all_busy() {
  return grid_rows() && tuned_grid();
}
HKB_DEVICE bool past_first_row() {
  return (blockIdx.y | blockIdx.z) != 0;
}
HKB_DEVICE uint32_t resident_cap(uint32_t quarters = tuning::kResidentQuarters,
                                 bool whole_grid = false) {
  constexpr uint32_t kBound = tuning::kResidentBlockBound;
  if (past_resident_bound()) return kBound;  // idle whatever the count: no read of it
  if (past_first_row()) return whole_grid && blockIdx.z == 0 && rows_all_busy() ? kBound : 0;
  if (whole_grid && tuned_grid()) return kBound;
  const uint32_t mps = multiprocessors();
  uint32_t cap = mps * quarters / 4;
  if (gridDim.x <= kBound) cap = gridDim.x;
  if (cap > kBound) cap = kBound;
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
// All threads of the busy blocks (the first min(resident_cap(), gridDim.x), or with whole_grid
// every block of the tuned grid's first plane, numbered by rank), one unit each a step; threads
// whose begin is past the last unit have none. No division: busy blocks start at once.
HKB_DEVICE UnitRange resident_range(bool whole_grid = false) {
  if (whole_grid && tuned_grid()) {
    if (blockIdx.z != 0) return {kIdle, 1};
    return {grid_thread_rank(), grid_threads()};
  }
  const uint32_t cap = resident_cap();
  const uint32_t blocks = gridDim.x < cap ? gridDim.x : cap;
  if (blockIdx.x >= blocks) return {kIdle, 1};
  return {static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x,
          static_cast<uint64_t>(blocks) * blockDim.x};
}

// The resident grid: the first min(gridDim.x, per_mp * 1024 / blockDim.x blocks per
// multiprocessor) blocks, by default (kResidentGridPerMP) all a multiprocessor holds at once, each
// thread a unit a step; the rest are idle (begin = kIdle) and test only their index first. For
// paths bound by index math or gathers rather than by bandwidth (strided views), which want every
// thread slot busy, each thread many units (a thread's setup is paid once): under candle's grid,
// and the tuned one, the blocks past it leave before they read a layout.
HKB_DEVICE UnitRange resident_grid_range(uint32_t per_mp = tuning::kResidentGridPerMP) {
  constexpr uint32_t kBound = tuning::kResidentBlockBound;
  if (blockIdx.x >= kBound || past_first_row()) return {kIdle, 1};
  // Past the threads the multiprocessors hold, idle whatever the division below gives: the blocks
  // between the resident ones and kBound leave on a multiply instead of a division.
  const uint32_t mps = multiprocessors();
  if (blockIdx.x * blockDim.x >= mps * per_mp * 1024 && blockIdx.x != 0) return {kIdle, 1};
  uint32_t blocks = mps * (per_mp * 1024 / blockDim.x);
  if (blocks > kBound) blocks = kBound;
  if (blocks == 0) blocks = 1;
  if (blocks > gridDim.x) blocks = gridDim.x;
  if (blockIdx.x >= blocks) return {kIdle, 1};
  return {static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x,
          static_cast<uint64_t>(blocks) * blockDim.x};
}

// The units of a kernel that takes a unit a thread under candle's grid: with kResident, those of
// the resident grid, looping, the blocks past kResidentBlockBound leaving on their index first
// (kIdle); without, every thread of the grid, grid-stride.
template <bool kResident>
HKB_DEVICE UnitRange unit_a_thread_range() {
  if constexpr (kResident) {
    if (past_resident_bound()) return {kIdle, 1};
    return resident_grid_range();
  }
  return {global_thread_index(), grid_stride()};
}

// An op whose body is a long libm routine (sin, cos, erf, erfc, pow) declares
// `static constexpr bool kHeavy = true;`: every inlined copy of such a body costs many registers.
template <typename F, typename = void>
struct is_heavy {
  static constexpr bool value = false;
};
template <typename F>
struct is_heavy<F, decltype(void(F::kHeavy))> {
  static constexpr bool value = F::kHeavy;
};

// Packs a thread of map_contiguous loads before it stores the first (see tuning.h).
template <typename TI, typename TO, typename F>
struct packs_in_flight {
  static constexpr int size = max_size<TI, TO>::value;
  static constexpr int value =
      !is_heavy<F>::value && (size == 2 || size == 4) ? tuning::kContiguousInflight : 1;
};

// Packs p = first, first + step, ... below `packs`, each with p + apart too when kTwo (loaded
// before the first store).
template <bool kTwo, int V, typename TI, typename TO, typename F>
HKB_DEVICE void map_packs(const Pack<TI, V>* in_p, Pack<TO, V>* out_p, uint64_t packs,
                          uint64_t first, uint64_t apart, uint64_t step, F f) {
  for (uint64_t p = first; p < packs; p += step) {
    const uint64_t q = p + apart;
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
}

// out[i] = f(in[i]) for i in [0, n), both contiguous. `in` may equal `out`. Resident split: only
// blocks below resident_cap() work (and every block of a grid of rows when whole_grid), so
// callers may let the others leave before calling. Aligned operands move as packs,
// packs_in_flight packs of a thread loaded before the first is stored, the second a grid after
// the first, or on a grid of rows a block after for inputs of at most
// tuning::kContiguousBlockPairsBytes (a loop of its own: a distance chosen at run time cost
// candle's grid a point); unaligned operands element by element.
template <typename TI, typename TO, typename F>
HKB_DEVICE void map_contiguous(uint64_t n, const TI* in, TO* out, F f, bool whole_grid = true) {
  constexpr int V = pack_width<TI, TO>::value;
  constexpr bool kTwo = packs_in_flight<TI, TO, F>::value > 1;
  constexpr bool kBlockPairs =
      kTwo && static_cast<int>(sizeof(TI)) <= tuning::kContiguousBlockPairsBytes;
  const UnitRange r = resident_range(whole_grid);
  if (r.begin == kIdle) return;
  if (V > 1 && is_aligned(in, sizeof(TI) * V) && is_aligned(out, sizeof(TO) * V)) {
    const uint64_t packs = n / V;
    const Pack<TI, V>* in_p = reinterpret_cast<const Pack<TI, V>*>(in);
    Pack<TO, V>* out_p = reinterpret_cast<Pack<TO, V>*>(out);
    const uint64_t step = (kTwo ? 2 : 1) * r.step;
    if (kBlockPairs && whole_grid && rows_all_busy()) {
      map_packs<kTwo>(in_p, out_p, packs, 2 * r.begin - threadIdx.x, blockDim.x, step, f);
    } else {
      map_packs<kTwo>(in_p, out_p, packs, r.begin, r.step, step, f);
    }
    for (uint64_t i = packs * V + r.begin; i < n; i += r.step) out[i] = f(in[i]);
    return;
  }
  for (uint64_t i = r.begin; i < n; i += r.step) out[i] = f(in[i]);
}

// Whether a strided input moves in runs of V elements with 32-bit index math: its inner dim is
// contiguous and a multiple of V long, every other stride a multiple of V, the runs and the output
// V-aligned, and every element count and offset below 2^31.
template <int V, typename TI, typename TO>
HKB_DEVICE bool runs_of(uint64_t n, uint64_t num_dims, const size_t* dims, const size_t* strides,
                        const TI* in, const TO* out) {
  if (V == 1 || num_dims == 0 || n >= (1ull << 31) || strides[num_dims - 1] != 1 ||
      dims[num_dims - 1] % V != 0 || !is_aligned(in, sizeof(TI) * V) ||
      !is_aligned(out, sizeof(TO) * V)) {
    return false;
  }
  uint64_t last = 0;
  for (uint64_t d = 0; d + 1 < num_dims; ++d) {
    if (strides[d] % V != 0 || strides[d] >= (1ull << 31)) return false;
    last += (dims[d] - 1) * strides[d];  // n > 0 here: no dim is 0, each below 2^31
  }
  return last + dims[num_dims - 1] <= (1ull << 31);
}

// out[i] = f(in[strided(i)]) with the input described by info = [dims, strides]; out contiguous.
// The threads of r (resident_grid_range) loop over the elements. An input whose inner dim is
// contiguous (a head transpose, a slice of rows) moves in runs of tuning::kStridedRunBytes, one
// 32-bit index computation a run, and a transposed one by tiles (transpose.h); ops with a long
// libm body stay an element a step. Every thread of a busy block calls it (the tiles' barriers).
template <typename TI, typename TO, typename F>
HKB_DEVICE void map_strided_in(uint64_t n, uint64_t num_dims, const size_t* info, const TI* in,
                               TO* out, F f, UnitRange r) {
  const size_t* dims = info;
  const size_t* strides = info + num_dims;
  constexpr int V = tuning::kStridedRunBytes / max_size<TI, TO>::value;
  // 8-byte values go element by element: their tiles spill under NVIDIA's 32-register cap.
  if constexpr (!is_heavy<F>::value && max_size<TI, TO>::value <= 4) {  // r.step: busy threads
    if (map_transposed(n, num_dims, info, in, out, f, blockIdx.x,
                       static_cast<uint32_t>(r.step) / blockDim.x)) {
      return;
    }
  }
  if constexpr (V > 1 && !is_heavy<F>::value) {
    if (runs_of<V>(n, num_dims, dims, strides, in, out)) {
      Pack<TO, V>* out_p = reinterpret_cast<Pack<TO, V>*>(out);
      const uint32_t packs = static_cast<uint32_t>(n) / V, step = static_cast<uint32_t>(r.step);
      for (uint32_t p = static_cast<uint32_t>(r.begin); p < packs; p += step) {
        const uint32_t off = strided_offset32(p * V, num_dims, dims, strides);
        const Pack<TI, V> a = *reinterpret_cast<const Pack<TI, V>*>(in + off);
        Pack<TO, V> b;
#pragma unroll
        for (int k = 0; k < V; ++k) b.v[k] = f(a.v[k]);
        out_p[p] = b;
      }
      return;
    }
  }
  for (uint64_t i = r.begin; i < n; i += r.step) {
    out[i] = f(in[strided_offset(i, num_dims, dims, strides)]);
  }
}

// map_unary_layout for heavy ops on 8-byte values (f64 erf, erfc, pow), an element a step, each
// layout in a loop whose trip count is the same for every thread of a block: their bodies hoist
// some 35 64-bit constants into scalar registers, and the exit bookkeeping of a loop that lanes
// leave one by one, or a second element per step, then spills scalar registers.
template <typename TI, typename TO, typename F>
HKB_DEVICE void map_unary_layout_uniform(uint64_t n, uint64_t num_dims, const size_t* info,
                                         const TI* in, TO* out, F f) {
  if (info != nullptr && past_first_row()) return;  // see map_unary_layout
  if (info == nullptr || is_contiguous(num_dims, info, info + num_dims)) {
    const UnitRange r = resident_range(info == nullptr);
    if (r.begin == kIdle) return;
    for (uint64_t b = r.begin - threadIdx.x; b < n; b += r.step) {
      const uint64_t i = b + threadIdx.x;
      if (i < n) out[i] = f(in[i]);
    }
    return;
  }
  for (uint64_t b = global_thread_index() - threadIdx.x; b < n; b += grid_stride()) {
    const uint64_t i = b + threadIdx.x;
    if (i < n) out[i] = f(in[strided_offset(i, num_dims, info, info + num_dims)]);
  }
}

// The unary-shaped entry contract of candle (affine, unary, cast): null info, or an info that
// describes a contiguous layout, takes the vectorised path (heavy ops on 8-byte values:
// map_unary_layout_uniform).
// candle's idle blocks (past_resident_bound) leave first, on their index alone: under candle's
// grid they are nearly all of the grid, their path decides how fast it drains, and an exit that
// waits for a parameter's load slows it. Then blocks above the cap leave when info is null. The
// uniform path tests info first, as before: the early exit spilled upowf_f64 on gfx906 / gfx908.
template <typename TI, typename TO, typename F>
HKB_DEVICE void map_unary_layout(uint64_t n, uint64_t num_dims, const size_t* info, const TI* in,
                                 TO* out, F f) {
  constexpr bool kUniform = is_heavy<F>::value && max_size<TI, TO>::value == 8;
  if (!kUniform && past_resident_bound()) return;
  if (info == nullptr &&
      (past_resident_bound() || blockIdx.x >= resident_cap(tuning::kResidentQuarters, true))) {
    return;
  }
  if constexpr (kUniform) {
    map_unary_layout_uniform(n, num_dims, info, in, out, f);
    return;
  }
  // A grid of rows: a layout given by info, contiguous or not, is the first row's, and the other
  // rows leave before they read it (thousands of blocks of the tuned grid).
  if (info != nullptr && past_first_row()) return;
  if (info == nullptr || is_contiguous(num_dims, info, info + num_dims)) {
    map_contiguous(n, in, out, f, info == nullptr);
    return;
  }
  const UnitRange r = resident_grid_range();
  if (r.begin != kIdle) map_strided_in(n, num_dims, info, in, out, f, r);
}

}  // namespace hkb
