// Tuning knobs of the quantized family (quantized.hip, quantized/), part of common/tuning.h, which
// includes this file: each knob is a macro HKB_* that a -D flag overrides (bench/tune.sh) and a
// constant the kernels read; the reason for each default is beside it.
#pragma once

#include <stdint.h>

namespace hkb {
namespace tuning {

// Quantized family (quantized.hip, quantized/): dequantize, get_rows, quantize_q8_1 under
// candle's grids of small blocks.

// Threads per multiprocessor that do the work under candle's grids (blocks of 32 to 256 threads,
// one per 256 or 512 values): at 64 registers, 512 of them take half of an SM's register file and
// leave the other half to the idle blocks of candle's grid, which then retire while the data
// moves instead of waiting for the work to end (docs/performance-quantized.md).
#ifndef HKB_QUANT_BUSY_THREADS
#define HKB_QUANT_BUSY_THREADS 512
#endif
constexpr uint32_t kQuantBusyThreadsPerMP = HKB_QUANT_BUSY_THREADS;
// Busy blocks per multiprocessor at most: an H100 SM holds 32 blocks, and with 32-thread blocks
// the busy ones must leave half the slots to the idle ones. AMD CUs hold 16 workgroups (gfx9) or
// 32 per WGP; unmeasured, half of the smaller.
#if defined(HKB_PLATFORM_NVIDIA)
constexpr uint32_t kQuantBusyBlocksPerMP = 16;
#else
constexpr uint32_t kQuantBusyBlocksPerMP = 8;
#endif
// 8-value units a thread of dequantize/get_rows loads before decoding the first: two give the 512
// busy threads of a multiprocessor 32 KB of f32 output per round trip; three were no faster and
// four spill under the 64-register cap (docs/performance-h200.md).
#ifndef HKB_QUANT_UNITS
#define HKB_QUANT_UNITS 2
#endif
constexpr int kQuantUnitsInFlight = HKB_QUANT_UNITS;
// get_rows of quantized tables: a thread loads the ids of its next round's units while this
// round's data is in flight, so a round waits for one load instead of an id load and then a data
// load (quantized/decode.h; docs/performance-h200.md).
#ifndef HKB_QUANT_IDS_AHEAD
#define HKB_QUANT_IDS_AHEAD 1
#endif
constexpr bool kQuantIdsAhead = HKB_QUANT_IDS_AHEAD != 0;
// dequantize / get_rows step over units and output offsets in 32 bits where the job has fewer than
// 2^31 values (fewer instructions a unit: these kernels issue, they do not wait on memory).
#ifndef HKB_QUANT_INDEX32
#define HKB_QUANT_INDEX32 1
#endif
constexpr bool kQuantIndex32 = HKB_QUANT_INDEX32 != 0;
// q8_1 blocks a lane group of quantize_q8_1 loads (16 bytes a lane each) before reducing them.
constexpr int kQuantQ8BlocksInFlight = 2;

// Batch-1 row products (MMVQ cuda1; quantized/mmvq.h) by format, the format named by its
// block's bytes: rows a working block of candle's grid (a block a row) takes, one activation
// load serving them, the other blocks leaving at once (the MoE kernels keep a row a block). Two for
// q4_0 (18), q2_K (84), q3_K (110), q4_K (144) and q6_K (210); one for q4_1, q5_0, q5_1, q8_0 and
// q5_K, which two rows made slower on some of #19's shapes (docs/performance-round2e.md).
constexpr int mmvq_rows1(int block_bytes) {
#ifdef HKB_MMVQ_ROWS1
  (void)block_bytes;
  return HKB_MMVQ_ROWS1;
#else
  return block_bytes == 18 || block_bytes == 84 || block_bytes == 110 || block_bytes == 144 ||
                 block_bytes == 210
             ? 2
             : 1;
#endif
}
// NVIDIA blocks of 128 threads resident per SM for them at `rows` rows a block: 16 (32
// registers) at one, so more of candle's blocks overlap; at two 12 (40) for q4_0 and q4_K, 8 (64)
// for q2_K, q3_K and q6_K, whose two rows spill under 40.
constexpr int mmvq_row_blocks_per_sm(int block_bytes, int rows) {
#ifdef HKB_MMVQ_ROW_BLOCKS_PER_SM
  (void)block_bytes, (void)rows;
  return HKB_MMVQ_ROW_BLOCKS_PER_SM;
#else
  return rows == 1 ? 16 : block_bytes == 18 || block_bytes == 144 ? 12 : 8;
#endif
}

// Rows a working block of MMVQ at batch `ncols` (2-8; quantized/mmvq.h), the format named by its
// block's bytes: 2, candle's, or 4, where every other block of candle's grid takes four rows (one
// activation load for them all) and the rest leave. 4 at every batch for q4_0 (18), q2_K (84)
// and q4_K (144), for q3_K (110) but at batch 3 (a tie on sm_90, one wave a SIMD on gfx906), at
// batch 2 for q5_K (176), from batch 5 for the others (docs/performance-round2k.md).
constexpr int mmvq_batch_rows(int block_bytes, int ncols) {
#ifdef HKB_MMVQ_BATCH_ROWS
  (void)block_bytes, (void)ncols;
  return HKB_MMVQ_BATCH_ROWS;
#else
  if (block_bytes == 18 || block_bytes == 84 || block_bytes == 144) return 4;
  if (block_bytes == 110) return ncols == 3 ? 2 : 4;
  if (block_bytes == 176) return ncols == 2 ? 4 : 2;
  return ncols >= 5 ? 4 : 2;
#endif
}

// NVIDIA blocks of 128 threads resident per SM for MMVQ at batch `ncols` (2-8), the format named
// by its block's bytes: at four rows a working block 5 (96 registers) at batch 2 and for q4_0 to
// batch 4, else 4 (128); at two 8 (64), but for q2_K (84) at 4-8 and q3_K (110) at 8, which
// spill under 64 (6 or, q2_K from batch 6, 4: docs/performance-round2g.md; two rows come there
// only from HKB_MMVQ_BATCH_ROWS=2, which so gives back the two-row kernels as they were).
constexpr int mmvq_batch_blocks_per_sm(int block_bytes, int ncols) {
#ifdef HKB_MMVQ_BATCH_BLOCKS_PER_SM
  (void)block_bytes, (void)ncols;
  return HKB_MMVQ_BATCH_BLOCKS_PER_SM;
#else
  if (mmvq_batch_rows(block_bytes, ncols) == 4) {
    return ncols == 2 || (block_bytes == 18 && ncols <= 4) ? 5 : 4;
  }
  if (block_bytes == 84 && ncols >= 4) return ncols >= 6 ? 4 : 6;
  return block_bytes == 110 && ncols == 8 ? 6 : 8;
#endif
}

// Wide items (quantized/blockdot.h) a thread of a batch-1 MMVQ row loads before its first dot
// product: one; two or four hold more registers and measured slower
// (docs/performance-quantized.md).
#ifndef HKB_MMVQ_WIDE_ITEMS
#define HKB_MMVQ_WIDE_ITEMS 1
#endif
constexpr int kMmvqWideItems = HKB_MMVQ_WIDE_ITEMS;

// MMVQ sums a thread's kRows x NCOLS values down a halving butterfly when there are at most this
// many (mmvq_store), else with five shuffles each: faster at batch 4, slower at 8 (sm_90).
#ifndef HKB_MMVQ_BUTTERFLY_SUMS
#define HKB_MMVQ_BUTTERFLY_SUMS 8
#endif
constexpr int kMmvqButterflySums = HKB_MMVQ_BUTTERFLY_SUMS;
// vecdot.h's items a thread of a batch over 1 loads at once: two spill q2_K / q3_K on sm_90.
#ifndef HKB_MMVQ_VEC_UNROLL
#define HKB_MMVQ_VEC_UNROLL 1
#endif
constexpr int kMmvqVecUnroll = HKB_MMVQ_VEC_UNROLL;

// Values whose weights a DMMV thread loads before decoding the first (quantized/dmmv.h), in whole
// slices: at 32, 8 blocks of the 32-value formats (4 values each), 2 or 4 of the K-quants (16 or 8
// values each), a warp's 1024 values. 64 on NVIDIA (no spills in 64 registers on sm_90); 32 on AMD,
// where 64 takes up to 31 VGPRs more and costs gfx906 and gfx1030 waves a SIMD.
#ifndef HKB_DMMV_VALUES
#if defined(HKB_PLATFORM_NVIDIA)
#define HKB_DMMV_VALUES 64
#else
#define HKB_DMMV_VALUES 32
#endif
#endif
constexpr int kDmmvValues = HKB_DMMV_VALUES;

// MMQ (quantized/mmq.h). Rows of a thread's register tile: 8, and 4 in q6_K's 64 x 64 tile, whose
// 16 row groups then store runs of 16 consecutive rows (8 x 4 holds as many words).
constexpr int mmq_thread_rows(int mmq_x, int mmq_y) {
  return mmq_x == 64 && mmq_y == 64 ? 4 : 8;
}
// Columns of q8_1 words a thread with `outputs` accumulators holds at once (8 words each): 8, and
// beside q3_K's 128 accumulators 2 on NVIDIA (a 16-byte spill on sm_90, yet faster than 1) and
// 1 on AMD (2 spill on gfx90a and gfx940) and on the CPU platform, which runs the AMD path.
#ifndef HKB_MMQ_WIDE_COLS
#if defined(HKB_PLATFORM_AMD)  // and the CPU platform
#define HKB_MMQ_WIDE_COLS 1
#else
#define HKB_MMQ_WIDE_COLS 2
#endif
#endif
#ifndef HKB_MMQ_COLS_HELD
#define HKB_MMQ_COLS_HELD 8
#endif
constexpr int mmq_cols_held(int outputs) {
  return outputs > 64 ? HKB_MMQ_WIDE_COLS : HKB_MMQ_COLS_HELD;
}
// NVIDIA blocks of 128 threads resident per SM (the register cap of mul_mat_*), for a tile of
// mmq_x x mmq_y with `row_words` words of row data per group: 3 (168 registers) hide more of each
// block's staging behind the others' work; 2 (255) where 168 spill: formats with a min or
// sub-scales (two or more row words: q4_1, q5_1, q2_K, q4_K, q5_K) and q3_K's 128 x 128 tile.
constexpr int mmq_blocks_per_sm(int mmq_x, int mmq_y, int row_words) {
#ifdef HKB_MMQ_BLOCKS_PER_SM
  (void)mmq_x, (void)mmq_y, (void)row_words;
  return HKB_MMQ_BLOCKS_PER_SM;
#else
  return row_words == 1 || mmq_x * mmq_y <= 4096 ? 3 : 2;
#endif
}
// Whether a thread of mul_mat_* stages its units of a chunk (a line's 32 values) of a format with
// `row_words` words of row data unrolled, all its loads in flight at once, or one unit after
// another. NVIDIA: unrolled (faster at 255 registers) but for the one-row-word formats (q4_0, q5_0,
// q8_0: 168 registers), which stage unit by unit (faster: docs/performance-quantized.md).
// AMD: unit by unit (unrolled spills on gfx906, q3_K on every target). The CPU platform takes
// both, so that its tests cover them.
#ifndef HKB_MMQ_STAGE_LOOP
#define HKB_MMQ_STAGE_LOOP 1
#endif
constexpr bool mmq_stage_at_once(int row_words) {
#if defined(HKB_PLATFORM_CPU)
  return row_words > 1;
#elif defined(HKB_PLATFORM_AMD)
  (void)row_words;
  return false;
#else
  return !(HKB_MMQ_STAGE_LOOP != 0 && row_words == 1);
#endif
}
// Values of k staged per chunk: 128 keeps q3_K's 128 x 128 tile (decoded bytes of both operands
// and their scale data) within NVIDIA's 48 KiB of static shared memory.
#ifndef HKB_MMQ_CHUNK_VALUES
#define HKB_MMQ_CHUNK_VALUES 128
#endif
constexpr int kMmqChunkValues = HKB_MMQ_CHUNK_VALUES;

}  // namespace tuning
}  // namespace hkb
