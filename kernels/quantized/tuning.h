// Tuning constants of the quantized module, each with the reason for its value (measurements:
// docs/performance.md). They change speed only, never results: every kernel is correct for any
// grid that covers its work.
#pragma once

#include "common/platform.h"

namespace hkb::quant::tuning {

// Threads per multiprocessor that do the work under candle's grids (blocks of 32 to 256 threads,
// one per 256 or 512 values): at 64 registers, 512 of them take half of an SM's register file and
// leave the other half to the idle blocks of candle's grid, which then retire while the data
// moves (with 1024 busy threads they waited for the work to end: q6_K at 41% of copy bandwidth).
constexpr uint32_t kBusyThreadsPerMP = 512;
// Busy blocks per multiprocessor at most: an H100 SM holds 32 blocks, and with 32-thread blocks
// the busy ones must leave half the slots to the idle ones. AMD CUs hold 16 workgroups (gfx9) or
// 32 per WGP; unmeasured, half of the smaller.
#if defined(HKB_PLATFORM_NVIDIA)
constexpr uint32_t kBusyBlocksPerMP = 16;
#else
constexpr uint32_t kBusyBlocksPerMP = 8;
#endif
// 8-value units a thread of dequantize/get_rows loads before decoding the first: two give the 512
// busy threads of a multiprocessor 32 KB of f32 output per round trip; four spill under the
// 64-register cap.
constexpr int kUnitsInFlight = 2;
// q8_1 blocks a lane group of quantize_q8_1 loads (16 bytes a lane each) before reducing them.
constexpr int kQ8BlocksInFlight = 2;

// Items (vecdot.h) a lane of MMVQ loads, weights and activations together, before its first dot:
// on NVIDIA the most that batch 1 fits under the 64-register cap without spills (K-quant items
// hold 4-8x the registers of a 32-value format's; batch 2..8 also keep 2 x NCOLS sums, and q2_K
// spills there at any count); AMD gives every load its own 64-bit VGPR address, so half of that
// there keeps the VGPRs near the one-row-a-block version's and no SGPR spills.
constexpr int mmvq_items_in_flight(bool super_block, int ncols) {
#if defined(HKB_PLATFORM_NVIDIA)
  return ncols == 1 ? (super_block ? 2 : 8) : (super_block ? 1 : 2);
#else
  return ncols == 1 ? (super_block ? 1 : 4) : 1;
#endif
}
// 8-value units a lane of DMMV loads before decoding the first, with 8 floats of y each: eight
// spill under the 64-register cap once the loads are hoisted together.
constexpr int kDmmvUnitsInFlight = 4;

}  // namespace hkb::quant::tuning
