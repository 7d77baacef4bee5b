// Every tuning constant of the kernels, per family, with the reason for its value. A constant that
// differs between targets has one line per target (NVIDIA sm_90 and every other NVIDIA target
// share one column: the kernels are tuned on the H100); the others hold for every target.
// Knobs that a kept benchmark sweeps stay macros a build may override with -D (a tuning variant
// is a whole module compiled with those flags); the rest are constants. Measurements behind the
// values: docs/performance.md. Included by platform.h after the vendor is known.
#pragma once

#include <stdint.h>

namespace hkb {
namespace tuning {

// ---------------------------------------------------------------------------------------------
// Target: compute units of an AMD target, for code objects loaded without hkb (hkb's loader writes
// the device's count, platform.h). The count of the target's largest common part: work splits
// only. HKB_MULTIPROCESSORS (a CMake option) names the count of the GPU the bundle is for.
#if defined(HKB_MULTIPROCESSORS)
constexpr uint32_t kAmdComputeUnits = HKB_MULTIPROCESSORS;
#elif defined(__gfx908__)
constexpr uint32_t kAmdComputeUnits = 120;  // MI100
#elif defined(__gfx90a__)
constexpr uint32_t kAmdComputeUnits = 110;  // MI250X, one die
#elif defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
constexpr uint32_t kAmdComputeUnits = 304;  // MI300X
#elif defined(__gfx90c__)
constexpr uint32_t kAmdComputeUnits = 8;  // Renoir/Cezanne APUs
#elif defined(__gfx1010__) || defined(__gfx1031__)
constexpr uint32_t kAmdComputeUnits = 40;  // RX 5700 XT, RX 6700 XT
#elif defined(__gfx1030__)
constexpr uint32_t kAmdComputeUnits = 80;  // RX 6900 XT
#elif defined(__gfx1100__)
constexpr uint32_t kAmdComputeUnits = 96;  // RX 7900 XTX
#else
constexpr uint32_t kAmdComputeUnits = 64;  // gfx803/gfx900/gfx906 (Fury, Vega 64, MI50/60), others
#endif

// ---------------------------------------------------------------------------------------------
// Element-wise maps and copies (common/elementwise.h, common/binary_layout.h).

// Busy blocks of the resident split, in quarters of a block per multiprocessor: half a block per
// multiprocessor keeps a copy near the memory limit while the idle blocks retire beside it.
#ifndef HKB_RESIDENT_QUARTERS
#define HKB_RESIDENT_QUARTERS 2
#endif
constexpr uint32_t kResidentQuarters = HKB_RESIDENT_QUARTERS;
// 1024-thread blocks a multiprocessor holds at once at most (2048 threads on sm_90 and gfx90a,
// 2560 on gfx906/gfx908): the busy blocks of the strided paths under candle's grid (one instead,
// so that the idle blocks retire beside it, was slower).
#ifndef HKB_RESIDENT_GRID_PER_MP
#define HKB_RESIDENT_GRID_PER_MP 2
#endif
constexpr uint32_t kResidentGridPerMP = HKB_RESIDENT_GRID_PER_MP;
// A grid of at most this many blocks a row has every block work (hkb_launch_config_tuned's grids,
// rows of the loader's kTunedRowBlocks, the same count); of a wider one (candle's) no block at or
// past this index is busy, so its idle blocks leave on their index alone: a read of the
// multiprocessor count on each of them slows their retirement.
constexpr uint32_t kResidentBlockBound = 1024;
// Bytes of the wider operand a thread of the strided unary-shaped path (elementwise.h,
// map_strided_in) moves per run of a contiguous inner dim: 16-byte runs spill gelu and silu f32
// under NVIDIA's 32-register cap.
#ifndef HKB_STRIDED_RUN_BYTES
#define HKB_STRIDED_RUN_BYTES 8
#endif
constexpr int kStridedRunBytes = HKB_STRIDED_RUN_BYTES;
// Transposed inputs (common/transpose.h): square tiles of kTransposeTile (a warp's line of 4-byte
// values); a thread loads kTransposeInFlight elements before its first shared store (one element
// of 2048 threads per multiprocessor keeps too few bytes in flight); dims shorter than
// kTransposeMinDim leave most of a tile empty and go element by element.
constexpr uint32_t kTransposeTile = 32;
#ifndef HKB_TRANSPOSE_IN_FLIGHT
#define HKB_TRANSPOSE_IN_FLIGHT 4
#endif
constexpr int kTransposeInFlight = HKB_TRANSPOSE_IN_FLIGHT;
// Tiles a thread of the 2-byte pair path (transpose.h, map_transposed_pairs) loads before its
// first shared store: two vector loads of each.
#ifndef HKB_TRANSPOSE_PAIRS_IN_FLIGHT
#define HKB_TRANSPOSE_PAIRS_IN_FLIGHT 2
#endif
constexpr int kTransposePairsInFlight = HKB_TRANSPOSE_PAIRS_IN_FLIGHT;
constexpr uint64_t kTransposeMinDim = 8;
// Bytes of the wider operand a busy thread moves per unit: one 16-byte vector access per operand.
constexpr int kPackBytes = 16;
// Packs of 2- and 4-byte values a thread loads before its first store (others: one, since a
// second pack of 1- or 8-byte values spills under the 32-register budget; heavy ops take one too:
// a second pack of bf16 sin spills under the 64 VGPRs of gfx906's 1024-thread blocks).
constexpr int kContiguousInflight = 2;
// On a grid of rows (every block busy), a thread's second pack lies a block after its first (each
// block streams one span) for inputs of at most this many bytes an element, else a grid after:
// 2-byte inputs gain a point, f32 gelu and silu lose four (H100).
#ifndef HKB_CONTIGUOUS_BLOCK_PAIRS_BYTES
#define HKB_CONTIGUOUS_BLOCK_PAIRS_BYTES 2
#endif
constexpr int kContiguousBlockPairsBytes = HKB_CONTIGUOUS_BLOCK_PAIRS_BYTES;

// ---------------------------------------------------------------------------------------------
// Convolution family (conv.hip).

// Units of 4-byte values a thread of the copying kernels (upsample_nearest2d, im2col in blocks
// that are not whole teams) takes per round: their loads are all issued before the stores.
#ifndef HKB_CONV_COPY_PACKS
#define HKB_CONV_COPY_PACKS 2
#endif
constexpr int kConvCopyPacks = HKB_CONV_COPY_PACKS;
// Rounds of kConvCopyPacks units per thread of a spread group: the group's chain of index math
// and loads is paid once for that many rounds.
constexpr int kConvGroupRounds = 2;
// Busy blocks of upsample_nearest2d's path for scales that are not powers of two (f64 products,
// one unit a thread), in quarters of a block per multiprocessor: its index math wants a block on
// every multiprocessor, where the power-of-two paths, bound by bytes, keep kResidentQuarters
// (measurements: docs/performance-round2b.md).
constexpr uint32_t kNearestScaledQuarters = 4;
// Outputs a thread of the im2col tap table loads before storing them.
constexpr int kIm2colRounds = 4;
// Busy blocks of im2col in quarters of a block per multiprocessor: two 1024-thread blocks fill
// every thread slot (one per multiprocessor left bandwidth idle).
constexpr uint32_t kIm2colQuarters = 8;
// Tap-table entries (h_k * w_k) of im2col: 8 KB of shared memory.
constexpr uint32_t kIm2colTaps = 1024;
// Bytes of one of the two row tiles of im2col: NVIDIA fills its 48 KB of static shared memory,
// AMD leaves room for two blocks in a compute unit's 64 KB.
#if defined(HKB_PLATFORM_NVIDIA)
constexpr uint32_t kIm2colTileBytes = 24000;
#else
constexpr uint32_t kIm2colTileBytes = 15360;
#endif
// Outputs a busy im2col block needs for the row tiles: with fewer its tile copy cannot overlap its
// writes and the tap table is faster.
constexpr uint64_t kIm2colRowTileMin = 16384;
// Output positions of an im2col1d tile (conv/col1d.h; 32 channels a tile).
#ifndef HKB_IM2COL1D_TILE_L
#define HKB_IM2COL1D_TILE_L 64
#endif
constexpr uint32_t kIm2col1dTileL = HKB_IM2COL1D_TILE_L;
// Busy 1024-thread blocks per multiprocessor of upsample_bilinear2d: its f64 math wants every
// thread slot (one block a multiprocessor, leaving the other to candle's idle blocks, was slower).
#ifndef HKB_BILINEAR_BUSY_PER_MP
#define HKB_BILINEAR_BUSY_PER_MP 2
#endif
constexpr uint32_t kBilinearBusyPerMP = HKB_BILINEAR_BUSY_PER_MP;
// Entries of each axis's tap table of upsample_bilinear2d (16 bytes each): outputs up to this
// wide and high take their taps from the tables.
#ifndef HKB_BILINEAR_TAPS
#define HKB_BILINEAR_TAPS 1024
#endif
constexpr uint32_t kBilinearTaps = HKB_BILINEAR_TAPS;
// Output rows of a thread's strip in upsample_bilinear2d's table path: longer strips reuse more
// source-row blends, shorter ones balance the resident threads better.
#ifndef HKB_BILINEAR_STRIP_ROWS
#define HKB_BILINEAR_STRIP_ROWS 16
#endif
constexpr uint32_t kBilinearStripRows = HKB_BILINEAR_STRIP_ROWS;
// Tiles of conv_transpose1d/2d (conv/transpose_tiles.h): a thread's register tile of
// kConvTThreadCo output channels x 4 or 2 positions (up to 16 f32 sums, within the 64
// registers of a 1024-thread block), 16 thread rows a tile (64 channels: one 1024-thread block
// then takes 256 positions, 16384 outputs); input channels staged kConvTChunk at a time, two
// chunks double-buffered (44 KB of f32 with the position table: within NVIDIA's 48 KB static).
constexpr uint32_t kConvTThreadCo = 4;
// Positions a thread: conv_transpose2d takes 2 (half a tile: more tiles than multiprocessors,
// so that the phases' unequal taps finish more evenly), conv_transpose1d 4 (2 was slower:
// docs/performance-round2.md).
#ifndef HKB_CONVT_THREAD_POS_1D
#define HKB_CONVT_THREAD_POS_1D 4
#endif
#ifndef HKB_CONVT_THREAD_POS_2D
#define HKB_CONVT_THREAD_POS_2D 2
#endif
constexpr uint32_t kConvTThreadPos1d = HKB_CONVT_THREAD_POS_1D;
constexpr uint32_t kConvTThreadPos2d = HKB_CONVT_THREAD_POS_2D;
constexpr uint32_t kConvTRows = 16;
#ifndef HKB_CONVT_CHUNK
#define HKB_CONVT_CHUNK 16
#endif
constexpr uint32_t kConvTChunk = HKB_CONVT_CHUNK;
// Strides up to this take the tiles: a tile finds its phase among stride^2 of them.
constexpr uint64_t kConvTMaxStride = 4;
// Threads of the f32-summed transposed convolutions a multiprocessor holds (64 registers each:
// its whole register file at 1024): their busy blocks; the rest of candle's grid leaves on its
// index alone, since a block that reads the sizes first holds the registers the busy ones wait for.
constexpr uint32_t kConvTThreadsPerMP = 1024;
// 1: avg_pool2d / max_pool2d's threads are those of the resident grid (elementwise.h), looping
// over the outputs, and the rest of candle's grid leaves on its index; 0: every thread of the grid.
#ifndef HKB_POOL_RESIDENT
#define HKB_POOL_RESIDENT 1
#endif
constexpr bool kPoolResident = HKB_POOL_RESIDENT;
// Busy 1024-thread pool blocks a multiprocessor (resident_grid_range's per_mp): one, so that the
// idle blocks of candle's grid retire through the other slot while the busy ones work.
#ifndef HKB_POOL_PER_MP
#define HKB_POOL_PER_MP 1
#endif
constexpr uint32_t kPoolPerMP = HKB_POOL_PER_MP;
// Outputs of a 2 x 2 window a pool thread takes a step, all their loads in flight together.
#ifndef HKB_POOL_BATCH
#define HKB_POOL_BATCH 2
#endif
constexpr int kPoolBatch = HKB_POOL_BATCH;
// 1: 2 x 2 windows of stride 2 along a contiguous, aligned last dim take kPoolUnit adjacent
// outputs a unit (at most 8 bytes), each source row's values in one load; 0: an output a unit, a
// value a load.
#ifndef HKB_POOL_ROW_PACKS
#define HKB_POOL_ROW_PACKS 1
#endif
constexpr bool kPoolRowPacks = HKB_POOL_ROW_PACKS;
#ifndef HKB_POOL_UNIT
#define HKB_POOL_UNIT 4
#endif
constexpr int kPoolUnit = HKB_POOL_UNIT;
// 2 x 2 pools over evenly strided batches, channels and rows index a row of outputs at once.
#ifndef HKB_POOL_ROW_INDEX
#define HKB_POOL_ROW_INDEX 1
#endif
constexpr bool kPoolRowIndex = HKB_POOL_ROW_INDEX;
// Units of values under 4 bytes a pool thread takes a step (kPoolBatch for the wider ones).
#ifndef HKB_POOL_UNIT_BATCH_NARROW
#define HKB_POOL_UNIT_BATCH_NARROW 1
#endif
constexpr int kPoolUnitBatchNarrow = HKB_POOL_UNIT_BATCH_NARROW;

// ---------------------------------------------------------------------------------------------
// Reductions (reduce.hip).

// 1: rope's threads are those of the resident grid (elementwise.h), looping over the pairs, and
// the rest of candle's grid leaves on its index; 0: every thread of the grid, a pair each.
#ifndef HKB_ROPE_RESIDENT
#define HKB_ROPE_RESIDENT 1
#endif
constexpr bool kRopeResident = HKB_ROPE_RESIDENT;
// Neighbouring pairs a rope_i / rope / rope_thd thread rotates a step (reduce/rope.h), as vectors
// of `bytes`-byte values: as many as make 16 bytes of the source (rope_i's pairs are interleaved:
// 2 values a pair), at most 4. HKB_ROPE_PAIRS sets all (sweeps).
constexpr int rope_pairs(bool interleaved, int bytes) {
#ifdef HKB_ROPE_PAIRS
  (void)interleaved, (void)bytes;
  return HKB_ROPE_PAIRS;
#else
  const int k = 16 / (interleaved ? 2 * bytes : bytes);
  return k > 4 ? 4 : k < 1 ? 1 : k;
#endif
}

// Blocks of fast_* that do work: of 1024-thread blocks kFastThreadsPerMP / 1024 a multiprocessor,
// of smaller ones kFastBlocks (at most kFastBlocks either way); the rest of candle's
// block-per-output grid leaves at once. Blocks past the ones a multiprocessor holds at once would
// start only after the idle blocks before them retire.
#ifndef HKB_FAST_BLOCKS
#define HKB_FAST_BLOCKS 1024
#endif
constexpr uint32_t kFastBlocks = HKB_FAST_BLOCKS;
#ifndef HKB_FAST_THREADS_PER_MP
#define HKB_FAST_THREADS_PER_MP 2048
#endif
constexpr uint32_t kFastThreadsPerMP = HKB_FAST_THREADS_PER_MP;
// Rows of at most this many bytes (0: none) take one busy 1024-thread block a multiprocessor:
// candle's grid then holds many idle blocks, which retire only in the slots busy blocks leave.
// fast_sum / min / max; argmin / argmax (more work a value: the second block pays sooner).
#ifndef HKB_FAST_SHORT_ROW_BYTES
#define HKB_FAST_SHORT_ROW_BYTES 4096
#endif
constexpr uint64_t kFastShortRowBytes = HKB_FAST_SHORT_ROW_BYTES;
// 1: over such rows, blocks of under 1024 threads also keep to half of a multiprocessor's threads
// (kFastThreadsPerMP / 2), as the 1024-thread ones do, so that candle's idle blocks find room to
// retire during the work (fast_sum_f32 65536x256: docs/performance-round2g.md).
#ifndef HKB_FAST_SHORT_ROWS_HALF_SM
#define HKB_FAST_SHORT_ROWS_HALF_SM 1
#endif
constexpr bool kFastShortRowsHalfSM = HKB_FAST_SHORT_ROWS_HALF_SM != 0;
#ifndef HKB_FAST_SHORT_ROW_BYTES_ARG
#define HKB_FAST_SHORT_ROW_BYTES_ARG 2048
#endif
constexpr uint64_t kFastShortRowBytesArg = HKB_FAST_SHORT_ROW_BYTES_ARG;
// Row passes whose partials a thread keeps before one barrier combines them all.
#ifndef HKB_FAST_ROWS
#define HKB_FAST_ROWS 8
#endif
constexpr int kFastRows = HKB_FAST_ROWS;
// 16-byte packs of 4- and 8-byte values a thread has in flight in the packed-row path.
#ifndef HKB_FAST_DEPTH
#define HKB_FAST_DEPTH 2
#endif
constexpr int kFastDepth = HKB_FAST_DEPTH;
// Packs of each row a thread reads in fast_*'s packed-row path, at least (fewer threads share a
// row, down to a wave, where the row is long enough): 4- and 8-byte values, 2-byte values.
#ifndef HKB_FAST_ROW_PACKS
#define HKB_FAST_ROW_PACKS 2
#endif
constexpr int kFastRowPacks = HKB_FAST_ROW_PACKS;
#ifndef HKB_FAST_ROW_PACKS_NARROW
#define HKB_FAST_ROW_PACKS_NARROW 8
#endif
constexpr int kFastRowPacksNarrow = HKB_FAST_ROW_PACKS_NARROW;
// 1: the packed-row path adds a pack's values pairwise before the compensated sum.
#ifndef HKB_FAST_PRESUM
#define HKB_FAST_PRESUM 1
#endif
constexpr bool kFastPresum = HKB_FAST_PRESUM != 0;
// Packs of 2-byte values in flight: they widen to 8 floats, and a second one spills on NVIDIA.
#ifndef HKB_FAST_DEPTH_NARROW
#define HKB_FAST_DEPTH_NARROW 1
#endif
constexpr int kFastDepthNarrow = HKB_FAST_DEPTH_NARROW;
// 1: fast_min / fast_max of f16 / bf16 compare the packed-row path's values two a word as 16-bit
// keys (HalfKeyExtremeOp); 0: one at a time, widened (KeyExtremeOp).
#ifndef HKB_FAST_HALF_KEYS
#define HKB_FAST_HALF_KEYS 1
#endif
constexpr bool kFastHalfKeys = HKB_FAST_HALF_KEYS;
// 1: fast_argmin / fast_argmax of f16 / bf16 compare two values a word too, each lane's key beside
// its count in one 32-bit entry (HalfKeyArgOp); 0: one at a time, widened (KeyArgOp). gfx8 has no
// packed 16-bit max, and its lanes taken one by one spill a register there.
#ifndef HKB_FAST_HALF_ARG_KEYS
#if defined(__gfx801__) || defined(__gfx802__) || defined(__gfx803__) || defined(__gfx805__) || \
    defined(__gfx810__)
#define HKB_FAST_HALF_ARG_KEYS 0
#else
#define HKB_FAST_HALF_ARG_KEYS 1
#endif
#endif
constexpr bool kFastHalfArgKeys = HKB_FAST_HALF_ARG_KEYS;
// 16-byte loads a thread has in flight in the row loops of softmax and the norms.
constexpr int kRowUnroll = 4;
// The same in softmax's write pass over 2-byte values: four packs are 32 exps in flight, which
// spill under the 64 VGPRs of gfx906's 1024-thread blocks (and measured slower on sm_90).
#ifndef HKB_SOFTMAX_NARROW_DEPTH
#define HKB_SOFTMAX_NARROW_DEPTH 2
#endif
constexpr int kSoftmaxNarrowDepth = HKB_SOFTMAX_NARROW_DEPTH;
// Packs a stage of softmax's first pass over f32 rows, the next stage's loads issued before this
// stage's values are added (0: kRowUnroll packs, then their values, as the norms do). 0 on AMD:
// eight packs in flight spill under the 64 VGPRs of gfx906's 1024-thread blocks.
#ifndef HKB_SOFTMAX_READ_STAGE
#if defined(HKB_PLATFORM_NVIDIA)
#define HKB_SOFTMAX_READ_STAGE 4
#else
#define HKB_SOFTMAX_READ_STAGE 0
#endif
#endif
constexpr int kSoftmaxReadStage = HKB_SOFTMAX_READ_STAGE;
// Values of softmax's first pass that share one rescale of the running sum (their max taken
// first): 1, 2 or 4 (a whole pack of 2-byte values, 8, spilled on gfx906).
#ifndef HKB_SOFTMAX_RUN
#define HKB_SOFTMAX_RUN 4
#endif
constexpr int kSoftmaxRun = HKB_SOFTMAX_RUN;
static_assert(kSoftmaxRun == 1 || kSoftmaxRun == 2 || kSoftmaxRun == 4, "softmax runs of 1, 2, 4");
// 1: a softmax row of at most a 16-byte pack a thread stays in registers between the reduction
// and the write (read once); 0: it is read again like longer rows.
#ifndef HKB_SOFTMAX_HELD
#define HKB_SOFTMAX_HELD 1
#endif
constexpr bool kSoftmaxHeld = HKB_SOFTMAX_HELD;
// Longer rows: only the waves a row fills with one pack a thread take it, the block's other waves
// leave at once (more rows in flight when a row has fewer packs than the block has threads); 0
// keeps the whole block, 2 trims only where at least half of the block leaves.
#ifndef HKB_NORM_TRIM
#define HKB_NORM_TRIM 1
#endif
constexpr int kNormTrim = HKB_NORM_TRIM;
// Rows of at most one 16-byte pack a thread: candle's blocks take them by groups of this many (the
// first block of each group, the others leaving at once), so that a block moves as many bytes
// between its barriers as a row of two packs a thread does; 1 keeps a row a block.
#ifndef HKB_NORM_GROUP
#define HKB_NORM_GROUP 2
#endif
constexpr int kNormGroup = HKB_NORM_GROUP;
static_assert(kNormGroup == 1 || kNormGroup == 2, "norm groups of 1 or 2 rows");
// Whether the grouped rows' write pass reads a thread's packs again instead of keeping them in
// registers: 0 never, 1 for 2-byte values (kept, their conversions spill 2-byte layernorm under
// NVIDIA's 32-register cap), 2 always.
#ifndef HKB_NORM_GROUP_RELOAD
#define HKB_NORM_GROUP_RELOAD 1
#endif
// 1: the grouped rows' path is compiled apart from the row-a-block one (HKB_DEVICE_APART): inlined
// beside it, both spill under NVIDIA's 32-register cap.
#ifndef HKB_NORM_APART
#define HKB_NORM_APART 1
#endif
constexpr bool norm_group_reload(uint64_t value_bytes) {
  return HKB_NORM_GROUP_RELOAD == 2 || (HKB_NORM_GROUP_RELOAD == 1 && value_bytes == 2);
}

// ---------------------------------------------------------------------------------------------
// Indexing (indexing.hip).

// Words each busy thread of index_select moves per step, all in flight together.
#ifndef HKB_IS_UNITS
#define HKB_IS_UNITS 4
#endif
constexpr int kIndexSelectUnits = HKB_IS_UNITS;
// 1024-thread blocks of index_select resident per NVIDIA multiprocessor (32 registers a thread).
constexpr int kIndexSelectBlocks = 2;

// 1: gather's threads are those of the resident grid (elementwise.h), looping over the outputs,
// and the rest of candle's grid leaves on its index; 0: every thread of the grid.
#ifndef HKB_GATHER_RESIDENT
#define HKB_GATHER_RESIDENT 1
#endif
constexpr bool kGatherResident = HKB_GATHER_RESIDENT;
// Outputs a gather thread takes a step, their ids and then their source values all in flight.
#ifndef HKB_GATHER_BATCH
#define HKB_GATHER_BATCH 2
#endif
constexpr int kGatherBatch = HKB_GATHER_BATCH;

// ---------------------------------------------------------------------------------------------
// Sort (sort.hip, sort/).

// Elements a thread holds at least in the register network (a power of two): rows of up to
// 1024 columns then leave part of candle's 1024-thread block idle and compare more in registers.
#ifndef HKB_SORT_MIN_ITEMS
#define HKB_SORT_MIN_ITEMS 4
#endif
constexpr uint32_t kSortMinItems = HKB_SORT_MIN_ITEMS;
static_assert(kSortMinItems >= 1 && kSortMinItems <= 16 &&
                  (kSortMinItems & (kSortMinItems - 1)) == 0,
              "HKB_SORT_MIN_ITEMS: a power of two of at most 16");
// Workers of a row at most, where that takes at most 16 slots a thread (8 for 8-byte dtypes): a
// wide row then compares more in registers, with fewer waves and trips through shared memory.
#ifndef HKB_SORT_MAX_WORKERS
#define HKB_SORT_MAX_WORKERS 512
#endif
constexpr uint32_t kSortMaxWorkers = HKB_SORT_MAX_WORKERS;
static_assert(kSortMaxWorkers >= 1 && (kSortMaxWorkers & (kSortMaxWorkers - 1)) == 0,
              "HKB_SORT_MAX_WORKERS: a power of two");
// 1: rows whose slots and next keys fit 16 registers are sorted by the busy blocks only, each
// reading its next row while it sorts the current one. Busy blocks: kSortBlocksPerMP of 1024
// threads a multiprocessor (smaller blocks in proportion), more than NVIDIA holds at 64 registers
// a thread, so that no AMD compute unit holding two is left half idle.
#ifndef HKB_SORT_ROW_LOOP
#define HKB_SORT_ROW_LOOP 1
#endif
constexpr bool kSortRowLoop = HKB_SORT_ROW_LOOP != 0;
#ifndef HKB_SORT_BLOCKS_PER_MP
#define HKB_SORT_BLOCKS_PER_MP 2
#endif
constexpr uint32_t kSortBlocksPerMP = HKB_SORT_BLOCKS_PER_MP;
// Rows of several waves of workers a block sorts at once where it has the threads (2: candle's
// 1024-thread block on rows of 512 workers, whose other half would leave), each row's trips
// through its own part of the row's shared memory (sort/network.h); 1: one.
#ifndef HKB_SORT_ROWS_AT_ONCE
#define HKB_SORT_ROWS_AT_ONCE 2
#endif
constexpr int kSortRowsAtOnce = HKB_SORT_ROWS_AT_ONCE;
static_assert(kSortRowsAtOnce == 1 || kSortRowsAtOnce == 2, "HKB_SORT_ROWS_AT_ONCE: 1 or 2");

}  // namespace tuning
}  // namespace hkb

// The quantized family's knobs, apart for length: the same namespace, included with the rest.
#include "tuning_quantized.h"
