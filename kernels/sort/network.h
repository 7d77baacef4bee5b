// The register bitonic network: a row of ncols_pad slots held E to a thread by ncols_pad / E
// threads ("workers"), every compare-exchange on one position bit. Under a layout, position p's
// bits are register bits (a thread's E slots, exchanged within the thread), lane bits (exchanged
// with wave shuffles) or wave bits (exchanged through shared memory). Level h compares bits h down
// to 0, so the low bits, compared most often, are register bits.
//
// Layouts (R = log E register bits, K = log wave lane bits). The row layout holds p = t * E + e:
// register bits [0, R), lane bits [R, R + K), wave bits above; loads, stores and every stage on a
// bit below R + K run in it. A level h >= R + K reaches wave bits: its window layout keeps the
// register bits and makes bits [h - K + 1, h] the lane bits, which covers every wave bit since
// a 1024-thread block has at most K wave bits. The level's first K stages run in the window, the
// rest (bits h - K down to 0, all below R + K) back in the row layout: two trips through shared
// memory per such level.
#pragma once

#include "keys.h"

namespace {

template <int N>
constexpr int sort_log2() {
  return N <= 1 ? 0 : 1 + sort_log2<N / 2>();
}

HKB_DEVICE int sort_log2(uint32_t n) {
  int log = 0;
  while ((1u << log) < n) ++log;
  return log;
}

// Shared memory word of position p in a trip between layouts. Register bits [0, R) form a field of
// their own, so both layouts address a thread's slots as one base plus immediates. The row
// layout's lanes fall on consecutive words; the lane index is XORed with the wave index so that a
// window's lanes (the row's upper lane bits and lower wave bits) fall on distinct banks too.
template <int E>
HKB_DEVICE uint32_t sort_word(uint32_t p) {
  constexpr int kRegBits = sort_log2<E>();
  constexpr int kLaneBits = sort_log2<HKB_WAVE_SIZE>();
  const uint32_t e = p & (E - 1);
  const uint32_t lane = (p >> kRegBits) & (HKB_WAVE_SIZE - 1);
  const uint32_t wave = p >> (kRegBits + kLaneBits);
  return ((wave * E + e) << kLaneBits) | (lane ^ (wave & (HKB_WAVE_SIZE - 1)));
}

// Exchange with the lane `mask` apart. Whole: every lane of the wave takes part; otherwise only
// lanes [0, width) do (a row shorter than a wave).
template <bool Whole, typename S>
HKB_DEVICE S lane_partner(const S& v, int mask, int width) {
  if constexpr (sizeof(S) <= 8) {
    return Whole ? hkb::shfl_xor(v, mask, HKB_WAVE_SIZE) : hkb::shfl_xor_first(v, mask, width);
  }
  S o = v;
#pragma unroll
  for (int i = 0; i < SlotWords<S>::kCount; ++i) {
    const uint32_t w = SlotWords<S>::get(v, i);
    SlotWords<S>::set(
        o, i, Whole ? hkb::shfl_xor(w, mask, HKB_WAVE_SIZE) : hkb::shfl_xor_first(w, mask, width));
  }
  return o;
}

// out = first ? a : b; Wide word by word (a select of whole structs keeps them in memory on AMD).
HKB_DEVICE void slot_pick(uint32_t& out, bool first, uint32_t a, uint32_t b) {
  out = first ? a : b;
}
HKB_DEVICE void slot_pick(uint64_t& out, bool first, uint64_t a, uint64_t b) {
  out = first ? a : b;
}
template <typename S>
HKB_DEVICE void slot_pick(S& out, bool first, const S& a, const S& b) {
#pragma unroll
  for (int i = 0; i < SlotWords<S>::kCount; ++i) {
    SlotWords<S>::set(out, i, first ? SlotWords<S>::get(a, i) : SlotWords<S>::get(b, i));
  }
}

// One lane stage on lane bit i: every slot against the same slot of the lane 2^i apart; bit i of
// keep_larger_bits says whether this lane keeps the larger of the two.
template <bool Whole, int E, typename S>
HKB_DEVICE void lane_stage(S (&v)[E], int i, int width, uint32_t keep_larger_bits) {
  const bool keep_larger = ((keep_larger_bits >> i) & 1u) != 0;
#pragma unroll
  for (int e = 0; e < E; ++e) {
    const S o = lane_partner<Whole>(v[e], 1 << i, width);
    slot_pick(v[e], slot_less(o, v[e]) == keep_larger, v[e], o);
  }
}

// The stages of level h (pairs ascending where bit h + 1 of p is clear) on position bits `top`
// down to `bottom`, for slots at p = base | e whose lane bit i sits at position bit lane_pos + i;
// `lane` is the thread's lane among `width` working lanes. kThreadDir: h + 1 >= R, so bit h + 1
// lies above the register bits and every pair of the thread sorts the same way.
template <bool Whole, bool kThreadDir, int E, typename S>
HKB_DEVICE void sort_stages(S (&v)[E], uint32_t base, int lane_pos, int h, int top, int bottom,
                            uint32_t lane, int width, int lane_bits) {
  constexpr int kRegBits = sort_log2<E>();
  // Bit h + 1 lies above every lane stage's bit, so a lane stage's direction is the thread's own.
  const uint32_t base_dir = (base >> (h + 1)) & 1u;
  // Bit i: whether this lane keeps the larger slot of its pair (the upper lane of an ascending
  // pair, the lower of a descending one); one value, not one per lane bit across the levels.
  const uint32_t keep_larger_bits = lane ^ (0u - base_dir);
  const int lane_top = min(top - lane_pos, lane_bits - 1);
  const int lane_bottom = bottom > lane_pos ? bottom - lane_pos : 0;
  if constexpr (Whole) {
    // Unrolled with uniform guards: a runtime loop costs NVIDIA registers here.
#pragma unroll
    for (int i = sort_log2<HKB_WAVE_SIZE>() - 1; i >= 0; --i) {
      if (i <= lane_top && i >= lane_bottom) lane_stage<true>(v, i, width, keep_larger_bits);
    }
  } else {
    // A loop: unrolled, AMD would keep the partner index of every lane bit for a runtime width.
#pragma unroll 1
    for (int i = lane_top; i >= lane_bottom; --i) lane_stage<false>(v, i, width, keep_larger_bits);
  }
#pragma unroll
  for (int r = kRegBits - 1; r >= 0; --r) {
    if (r > top || r < bottom) continue;
#pragma unroll
    for (int e = 0; e < E; ++e) {
      if ((e >> r) & 1) continue;
      const int f = e | (1 << r);
      // Bit h + 1 of base | e: the thread's bit or a register bit (h + 1 < R), never both.
      const bool dir = kThreadDir ? base_dir != 0
                                  : (base_dir ^ ((static_cast<uint32_t>(e) >> (h + 1)) & 1u)) != 0;
      const bool keep = slot_less(v[e], v[f]) != dir;
      const S a = v[e];
      slot_pick(v[e], keep, a, v[f]);
      slot_pick(v[f], keep, v[f], a);
    }
  }
}

// One trip from the layout whose slot 0 sits at position `from` to the one at `to` (slot e at
// position + e in both) through `buf`, E / kPasses slots a thread a pass: pass q moves slots q E /
// kPasses .. , placed as in a row of kPasses times fewer positions (register bits dropped from the
// top of the register field), so that buf holds ncols_pad / kPasses values of W.
template <int E, int kPasses, typename W, typename Get, typename Set>
HKB_DEVICE void sort_trip(W* buf, uint32_t from, uint32_t to, Get get, Set set) {
  static_assert(kPasses >= 1 && E % kPasses == 0, "whole slots a pass");
  constexpr int kChunk = E / kPasses;
  constexpr int kShift = sort_log2<kPasses>();
  const uint32_t src = sort_word<kChunk>(from >> kShift), dst = sort_word<kChunk>(to >> kShift);
#pragma unroll
  for (int q = 0; q < kPasses; ++q) {
    hkb::block_sync();
#pragma unroll
    for (int e = 0; e < kChunk; ++e) buf[src + e * HKB_WAVE_SIZE] = get(q * kChunk + e);
    hkb::block_sync();
#pragma unroll
    for (int e = 0; e < kChunk; ++e) set(q * kChunk + e, buf[dst + e * HKB_WAVE_SIZE]);
  }
}

// The most rows a block's shared memory (ncols_pad words) serves at once with E slots of S a
// thread: a row's trips take ncols_pad / G words, in passes of whole slots (64-bit values whole:
// E / 2 a thread at most; a lone 64-bit value goes as two words and takes it all).
template <int E, typename S>
constexpr int sort_rows_at_once() {
  return SlotWords<S>::kCount == 1 ? E : E / 2 > 1 ? E / 2 : 1;
}

// 64-bit values, G rows a block (every row's trips in its own ncols_pad / G words): 2 G passes of
// E / (2 G) values, each one register pair.
template <int E, int G>
HKB_DEVICE void sort_trip_u64(uint64_t (&v)[E], uint32_t* shared, uint32_t from, uint32_t to) {
  if constexpr (E >= 2 * G) {
    sort_trip<E, 2 * G>(
        reinterpret_cast<uint64_t*>(shared), from, to, [&](int e) { return v[e]; },
        [&](int e, uint64_t x) { v[e] = x; });
  } else {
    static_assert(E == 1 && G == 1, "one 64-bit value a thread: one row a block");
    sort_trip<E, 1>(
        shared, from, to, [&](int e) { return static_cast<uint32_t>(v[e]); },
        [&](int e, uint32_t w) { v[e] = (v[e] & 0xFFFFFFFF00000000ull) | w; });
    sort_trip<E, 1>(
        shared, from, to, [&](int e) { return static_cast<uint32_t>(v[e] >> 32); },
        [&](int e, uint32_t w) { v[e] = (v[e] & 0xFFFFFFFFull) | uint64_t{w} << 32; });
  }
}

// Moves every worker's slots from the layout whose slot 0 sits at position `from` to the one at
// `to`, through the row's ncols_pad / G words of shared memory.
template <int E, int G>
HKB_DEVICE void sort_relayout(uint32_t (&v)[E], uint32_t* shared, uint32_t from, uint32_t to) {
  sort_trip<E, G>(
      shared, from, to, [&](int e) { return v[e]; }, [&](int e, uint32_t w) { v[e] = w; });
}
template <int E, int G>
HKB_DEVICE void sort_relayout(uint64_t (&v)[E], uint32_t* shared, uint32_t from, uint32_t to) {
  sort_trip_u64<E, G>(v, shared, from, to);
}
template <int E, int G>
HKB_DEVICE void sort_relayout(Wide (&v)[E], uint32_t* shared, uint32_t from, uint32_t to) {
  uint64_t keys[E];
#pragma unroll
  for (int e = 0; e < E; ++e) keys[e] = v[e].key;
  sort_trip_u64<E, G>(keys, shared, from, to);
  sort_trip<E, G>(
      shared, from, to, [&](int e) { return v[e].col; }, [&](int e, uint32_t w) { v[e].col = w; });
#pragma unroll
  for (int e = 0; e < E; ++e) v[e].key = keys[e];
}

// Row `row` of a matrix of rows of ncols, addressed from the kernel's pointers where it is used,
// so that no row pointer stays in registers through the network.
HKB_DEVICE uint64_t sort_row_start(uint32_t row, uint32_t ncols) {
  return static_cast<uint64_t>(row) * ncols;
}

// A thread's E keys of a row; past the row, its last column (no branch; the slot becomes padding).
template <int E, typename T>
HKB_DEVICE void sort_fetch(T (&raw)[E], const T* x, uint32_t row, uint32_t ncols, uint32_t base) {
  const T* r = x + sort_row_start(row, ncols);
#pragma unroll
  for (int e = 0; e < E; ++e) raw[e] = r[base + e < ncols ? base + e : ncols - 1];
}

template <bool Ascending, int E, typename T, typename S>
HKB_DEVICE void sort_make_slots(S (&v)[E], const T (&raw)[E], uint32_t ncols, uint32_t base) {
#pragma unroll
  for (int e = 0; e < E; ++e) {
    const uint32_t p = base + e;
    S pad_slot;
    padding_slot(pad_slot, p);
    make_slot<Ascending>(v[e], sort_key(raw[e]), p);
    slot_pick(v[e], p < ncols, v[e], pad_slot);
  }
}

template <int E, typename S>
HKB_DEVICE void sort_store(const S (&v)[E], uint32_t* dst, uint32_t row, uint32_t ncols,
                           uint32_t base) {
  uint32_t* out = dst + sort_row_start(row, ncols);
  if constexpr (E % 4 == 0) {
    // Whole aligned runs of 4 columns as 16-byte stores: whole sectors instead of a 4-byte write
    // every 4E bytes of each store.
    if (base + E <= ncols && (reinterpret_cast<uintptr_t>(out + base) & 15) == 0) {
#pragma unroll
      for (int c = 0; c < E / 4; ++c) {
        reinterpret_cast<uint4*>(out + base)[c] =
            make_uint4(slot_column(v[4 * c]), slot_column(v[4 * c + 1]), slot_column(v[4 * c + 2]),
                       slot_column(v[4 * c + 3]));
      }
      return;
    }
  }
#pragma unroll
  for (int e = 0; e < E; ++e) {
    const uint32_t p = base + e;
    if (p < ncols) out[p] = slot_column(v[e]);
  }
}

// Blocks that sort: the first sort_busy_blocks(G) blocks take rows G blockIdx.x + g, then G busy
// further, ... (g: the thread's row group), and the others leave at once, so that a block reads
// its next rows while it sorts the current ones instead of a new block waiting for the first loads
// of its rows (tuning::kSortBlocksPerMP).
HKB_DEVICE uint32_t sort_busy_blocks(uint32_t groups) {
  const uint32_t per_mp =
      hkb::tuning::kSortBlocksPerMP * (blockDim.x < 1024 ? 1024 / blockDim.x : 1);
  const uint32_t busy = hkb::multiprocessors() * per_mp;
  const uint32_t needed = (gridDim.x + groups - 1) / groups;
  return busy < needed ? busy : needed;
}

// Sorts the rows of a block's row group g of G (slots in registers, in the row layout) with
// `network` and writes each row's first ncols columns; group g of block b takes row G b + g.
// Where a thread's slots and the next row's keys take at most 16 registers, busy blocks read those
// keys before the network runs (more spills on gfx906); otherwise block b sorts its G rows and
// leaves. A group whose rows have run out leaves: its partners' barriers no longer wait for it.
template <bool Ascending, int E, typename T, typename Network>
HKB_DEVICE void sort_rows(const T* x, uint32_t* dst, uint32_t ncols, uint32_t base, uint32_t g,
                          uint32_t groups, Network network) {
  constexpr bool kPrefetch =
      E * (sizeof(slot_t<T>) / 4 + (sizeof(T) + 3) / 4) <= 16 && hkb::tuning::kSortRowLoop;
  uint32_t row = blockIdx.x * groups + g;
  T raw[E];
  slot_t<T> v[E];
  if constexpr (!kPrefetch) {
    if (groups > 1 && row >= gridDim.x) return;
    sort_fetch(raw, x, row, ncols, base);
    sort_make_slots<Ascending>(v, raw, ncols, base);
    network(v);
    sort_store(v, dst, row, ncols, base);
    return;
  }
  const uint32_t rows = gridDim.x;
  const uint32_t busy = sort_busy_blocks(groups);
  if (blockIdx.x >= busy || row >= rows) return;
  const uint32_t step = busy * groups;
  sort_fetch(raw, x, row, ncols, base);
#pragma unroll 1
  for (;;) {
    sort_make_slots<Ascending>(v, raw, ncols, base);
    const uint32_t next = row + step;
    if (next < rows) sort_fetch(raw, x, next, ncols, base);
    network(v);
    sort_store(v, dst, row, ncols, base);
    if (next >= rows) return;
    row = next;
  }
}

// The network of a row of at most one wave of workers: every bit is local, no barrier.
template <int E, typename S>
HKB_DEVICE void sort_network_in_wave(S (&v)[E], uint32_t workers, int pad_bits) {
  constexpr int kRegBits = sort_log2<E>();
  const uint32_t t = threadIdx.x;
  const int lane_bits = pad_bits - kRegBits;
  // Levels below R - 1 compare register bits only, in directions set by register bits: unrolled,
  // their directions are constants. From R - 1 on the direction is the thread's.
#pragma unroll
  for (int h = 0; h < kRegBits - 1; ++h) {
    sort_stages<false, false>(v, t * E, kRegBits, h, h, 0, t, static_cast<int>(workers), lane_bits);
  }
#pragma unroll 1
  for (int h = kRegBits > 0 ? kRegBits - 1 : 0; h < pad_bits; ++h) {
    sort_stages<false, true>(v, t * E, kRegBits, h, h, 0, t, static_cast<int>(workers), lane_bits);
  }
}

// The network of a row of whole waves of workers (at most 1024 threads), G rows a block: thread
// t of row group g is block thread g x workers + t, and the row's trips go through words
// [g ncols_pad / G, (g + 1) ncols_pad / G) of `shared`. Both come from threadIdx.x where used, so
// that no register holds them through the network.
template <int E, int G, typename S>
HKB_DEVICE void sort_network_in_block(S (&v)[E], int pad_bits, uint32_t* shared) {
  constexpr int kRegBits = sort_log2<E>();
  constexpr int kLaneBits = sort_log2<HKB_WAVE_SIZE>();
  constexpr int kLocalBits = kRegBits + kLaneBits;
  const int worker_bits = pad_bits - kRegBits;
  const uint32_t t = G == 1 ? threadIdx.x : threadIdx.x & ((1u << worker_bits) - 1);
  const uint32_t base = t * E;
  const uint32_t lane = t % HKB_WAVE_SIZE;
  const uint32_t wave = t / HKB_WAVE_SIZE;
  // Levels below R - 1: register bits only, unrolled (sort_network_in_wave).
#pragma unroll
  for (int h = 0; h < kRegBits - 1; ++h) {
    sort_stages<true, false>(v, base, kRegBits, h, h, 0, lane, HKB_WAVE_SIZE, kLaneBits);
  }
#pragma unroll 1
  for (int h = kRegBits > 0 ? kRegBits - 1 : 0; h < pad_bits; ++h) {
    int top = h;
    if (h >= kLocalBits) {
      // Window of level h: lane bits [h - K + 1, h]; the wave index fills bits [R, h - K + 1)
      // with its low bits and the bits above h with the rest.
      const int low = h - kLocalBits + 1;
      const int lane_pos = h - kLaneBits + 1;
      const uint32_t window = ((wave & ((1u << low) - 1)) << kRegBits) | (lane << lane_pos) |
                              ((wave >> low) << (h + 1));
      uint32_t* mine =
          G == 1 ? shared : shared + ((threadIdx.x >> worker_bits) << (pad_bits - sort_log2<G>()));
      sort_relayout<E, G>(v, mine, base, window);
      sort_stages<true, true>(v, window, lane_pos, h, h, lane_pos, lane, HKB_WAVE_SIZE, kLaneBits);
      sort_relayout<E, G>(v, mine, window, base);
      top = h - kLaneBits;
    }
    sort_stages<true, true>(v, base, kRegBits, h, top, 0, lane, HKB_WAVE_SIZE, kLaneBits);
  }
}

// Most slots a thread of a row of one wave holds: 16 beside the block path cost NVIDIA spills,
// and such rows come only from blocks far smaller than candle's.
constexpr int kSortMaxWaveItems = 8;

// A block sorting G rows of `workers` threads (more than one wave) at once: row group g is block
// threads g x workers .. (g + 1) x workers - 1.
template <bool Ascending, int E, int G, typename T>
HKB_DEVICE void sort_rows_in_block(const T* x, uint32_t* dst, uint32_t ncols, uint32_t pad,
                                   uint32_t workers, uint32_t* shared) {
  if (threadIdx.x >= G * workers) return;
  const int pad_bits = sort_log2(pad);
  const uint32_t g = G == 1 ? 0 : threadIdx.x / workers;
  const uint32_t t = G == 1 ? threadIdx.x : threadIdx.x % workers;
  sort_rows<Ascending, E>(x, dst, ncols, t * E, g, G, [&](slot_t<T>(&v)[E]) {
    sort_network_in_block<E, G>(v, pad_bits, shared);
  });
}

// Sorts the rows of x (gridDim.x of them), ncols_pad = E * workers slots each (workers a power of
// two, at most `threads`, the block's largest power of two of threads up to 1024; more than one
// wave when E > kSortMaxWaveItems), into the first ncols columns of the same rows of dst. Rows of
// several waves of workers are sorted up to tuning::kSortRowsAtOnce at a time a block where its
// threads and shared memory allow (more waves to hide the network's latencies); rows of one wave,
// one a block. Threads past the workers leave at once: a barrier waits only for threads that have
// not exited (NVIDIA from sm_70, AMD per wave, the CPU platform).
template <bool Ascending, int E, typename T>
HKB_DEVICE void sort_rows_in_registers(const T* x, uint32_t* dst, uint32_t ncols, uint32_t pad,
                                       uint32_t threads, uint32_t* shared) {
  const uint32_t workers = pad / E;
  if constexpr (E <= kSortMaxWaveItems) {
    if (workers <= HKB_WAVE_SIZE) {
      if (threadIdx.x >= workers) return;
      const int pad_bits = sort_log2(pad);
      sort_rows<Ascending, E>(x, dst, ncols, threadIdx.x * E, 0, 1, [&](slot_t<T>(&v)[E]) {
        sort_network_in_wave(v, workers, pad_bits);
      });
      return;
    }
  }
  // Two rows where the shared memory allows and the network of E slots stays within the
  // 64-register cap without spilling (sm_90: not for 16 slots, nor 8 of the 16-bit dtypes').
  constexpr bool kTwo = hkb::tuning::kSortRowsAtOnce >= 2 &&
                        sort_rows_at_once<E, slot_t<T>>() >= 2 && E <= 8 &&
                        !(E == 8 && SlotWords<slot_t<T>>::kCount == 1);
  if constexpr (kTwo) {
    if (threads >= 2 * workers) {
      sort_rows_in_block<Ascending, E, 2>(x, dst, ncols, pad, workers, shared);
      return;
    }
  }
  sort_rows_in_block<Ascending, E, 1>(x, dst, ncols, pad, workers, shared);
}

}  // namespace
