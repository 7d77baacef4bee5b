// What the ops of the conv module share: 64-bit index math (indexmath.h), zeros of any dtype, and
// the work split of the copying kernels (Group).
#pragma once

#include "../common/elementwise.h"

namespace {

using hkb::divmod;
using hkb::DivMod;

template <typename T>
HKB_DEVICE T zero() {
  if constexpr (hkb::is_reduced_float<T>::value) {
    return T{0};
  } else {
    return static_cast<T>(0);
  }
}

// How the copying kernels (upsample_nearest2d, and im2col in blocks that are not whole teams of 32
// threads) split units of work (a unit: V consecutive outputs written with one store) among a
// launch's threads. Under candle's geometry few blocks are resident, and a block's throughput is
// its bytes over the dependent chain of info loads, index math, data loads and stores, longer here
// than in a plain copy. Groups: the blocks gather in groups of K = V * M * rounds consecutive
// blocks; the first block of a group takes the units of all its blocks' ranges with every thread,
// M units a thread (units t, t + blockDim.x, ...: each load and store instruction of a warp stays
// contiguous), issuing all M units' loads before the stores; the other blocks of the group leave
// before any memory access. This spreads the busy blocks over the grid and pays the chain once
// for M * 16 bytes a thread. The group's range repeats with a stride of gridDim.x ranges, so any
// grid is correct. M (copy_packs) and rounds: tuning.h.
struct Group {
  uint64_t base;  // first unit of the group in the first grid-stride step
  uint64_t step;  // units of one grid-stride step: gridDim.x block ranges
  uint32_t span;  // units of the group: its blocks' ranges
};
// False for a thread with no unit in any step. Resident: one group per busy block of the resident
// split (elementwise.h) instead, its threads M units each a round; the grid's own size (one output
// per thread) bounds the busy blocks, as counting the units takes info reads. upsample_nearest2d
// is faster resident, im2col spread (its index math per unit wants every multiprocessor).
template <int V, int M, bool Resident, uint32_t kQuarters = hkb::tuning::kResidentQuarters>
HKB_DEVICE bool group_of_block(Group* g) {
  if (Resident) {
    uint32_t busy = hkb::resident_cap(kQuarters);
    if (blockIdx.x >= busy) return false;
    const uint32_t span = blockDim.x * M;
    const uint32_t rounds = (gridDim.x + V * M - 1) / (V * M);
    if (rounds < busy) busy = rounds;
    if (blockIdx.x >= busy) return false;
    g->span = span;
    g->base = static_cast<uint64_t>(blockIdx.x) * span;
    g->step = static_cast<uint64_t>(busy) * span;
    return true;
  }
  constexpr uint32_t K = static_cast<uint32_t>(V * M * hkb::tuning::kConvGroupRounds);
  if (blockIdx.x % K != 0) return false;
  const uint32_t per_block = blockDim.x >= static_cast<uint32_t>(V) ? blockDim.x / V : 1;
  const uint32_t left = gridDim.x - blockIdx.x;
  g->span = (left < K ? left : K) * per_block;
  if (threadIdx.x >= g->span) return false;
  g->base = static_cast<uint64_t>(blockIdx.x) * per_block;
  g->step = static_cast<uint64_t>(gridDim.x) * per_block;
  return true;
}

// Units [0, units) of this thread, M at a time: f(u, count) with the first unit u (the others are
// u + i * blockDim.x for i < count, all below units). I: the index type of the caller's body; a
// 32-bit body has units <= 2^31, so no sum below wraps.
template <int M, typename I, typename F>
HKB_DEVICE void for_group_units(const Group& g, I units, F f) {
  if (g.base >= units) return;
  const I bd = blockDim.x;
  const I step = static_cast<I>(g.step < units ? g.step : units);  // as good as g.step here
  for (I g0 = static_cast<I>(g.base); g0 < units; g0 += step) {
    for (I off = threadIdx.x; off < g.span; off += M * bd) {
      const I u = g0 + off;
      if (u >= units) break;
      int count = 1;
#pragma unroll
      for (int i = 1; i < M; ++i) {
        if (off + i * bd < g.span && u + i * bd < units) count = i + 1;
      }
      f(u, count);
    }
  }
}

// Outputs per unit of the copying kernels (im2col, upsample_nearest2d): 16 bytes, except 8 for
// 1-byte values, whose sixteen per-output index updates do not fit the register budget.
template <typename T>
struct pack_width {
  static constexpr int value = sizeof(T) == 1 ? 8 : 16 / sizeof(T);
};

// Units per thread and step of the copying kernels (see Group): tuning::kConvCopyPacks for 4-byte
// values, one for the others: V scalar loads of 1- or 2-byte values take V registers in flight,
// and 8-byte values two each, so two packs of them do not fit the 32-register budget.
template <typename T>
struct copy_packs {
  static constexpr int value = sizeof(T) == 4 ? hkb::tuning::kConvCopyPacks : 1;
};

}  // namespace
