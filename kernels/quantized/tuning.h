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

}  // namespace hkb::quant::tuning
