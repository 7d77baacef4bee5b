// REDUCE: candle's reduction family. fast_{sum,min,max,argmin,argmax} (one block per output),
// sum (atomic scatter into a pre-zeroed output), softmax over the last dim, rmsnorm, layernorm and
// the three rotary embeddings rope_i / rope / rope_thd. Names, parameters and launch geometry are
// candle's (manifests/candle-abi.tsv); the semantics below are hkb's contract.
//
// Geometry. fast_*: any grid (blocks loop over outputs), block = next_pow2(min(1024, E)) as candle
// launches it, or any other block of at most 1024 threads. softmax/rmsnorm/layernorm: one block
// per row, row = blockIdx.x (the kernels have no row-count parameter, so the grid must equal the
// row count, as in candle); any block shape of at most 1024 threads, candle's (1,32,1) and 32/1024
// included; rmsnorm/layernorm's `block_size` argument is accepted and the launch's real block size
// is used. rope*: any grid (the resident grid's threads loop over the pairs). Every cross-lane step
// is a shuffle with an explicit width; a block of a power-of-two size below the wave (32 threads on
// a 64-lane CDNA wave) reduces with shuffles of that width, a block that is a multiple of the wave
// reduces per wave and then through shared memory (norm rows of at most a pack a thread by pairs of
// blocks), any other size through shared memory alone (docs/wavefront.md).
//
// fast_* work split: the first blocks, those the multiprocessors hold at once
// (tuning::kFastThreadsPerMP, at most tuning::kFastBlocks), each take one chunk of consecutive
// outputs (ceil(outputs / blocks)); the other blocks return before reading anything, so candle's
// grid of one block per output costs only their launch. Contiguous 16-byte aligned rows of whole
// 16-byte packs (2+ byte types, power-of-two blocks) are read as one coalesced stream per chunk,
// several rows per pass when a row has fewer packs than the block has threads, or a thread has
// fewer than tuning::kFastRowPacks of a row (aligned power-of-two segments of threads per row),
// with the next packs in flight across row ends.
// Every path reduces tuning::kFastRows rows (or passes) with one barrier (segment_put/finish).
// fast_* layout: info = [dims, strides] of the source with the reduced dims last (candle's
// FastReduce order); output o reduces logical elements [o*E, (o+1)*E) with E =
// el_to_sum_per_block. E == 0 writes the identity to outputs 0..gridDim.x-1 (candle's empty case).
//
// Semantics decisions (candle's CUDA kernels are order-dependent here; these are deterministic):
// - argmin/argmax: the index is the position inside the reduced group (row-major over the reduced
//   dims; equal to candle's idx % dims[nd-1] for one reduced dim). Ties: the first (smallest)
//   index wins; -0.0 < +0.0 as for min/max. NaN: a NaN beats every number for both argmin and
//   argmax, so the result is the index of the first NaN (numpy/PyTorch). An empty group gives
//   0xFFFFFFFF.
// - min/max: NaN propagates (any NaN gives NaN); -0.0 < +0.0 (IEEE 754-2019 minimum/maximum).
//   Empty: max = -inf / the type's minimum, min = +inf / the type's maximum.
// - sums: f16/bf16/f32 accumulate in f32, f64 in f64. Each thread sums with Neumaier compensation
//   (the packed-row path over pack sums: a 16-byte pack's values added pairwise first),
//   then a tree of at most log2(block) levels (power-of-two blocks): |error| <= (log2(block) + 3) *
//   eps * sum|x| for any n. An infinite or NaN partial skips its compensation term, so inf/NaN
//   propagate as in a plain sum. Integer sums wrap modulo 2^bits (u8 as candle's u8 accumulator
//   does).
// - sum (atomic): out[dst(i)] += inp[i] where dst(i) removes each summed dim in the order given by
//   info = [dims, strides, sum_dims_l, sum_dims_s]: di = (di / s / l) * s + di % s. f16/bf16 add in
//   f32 and round per atomic step (compare-and-swap on the enclosing 32-bit word).
// - softmax: f32 math for f16/bf16 (candle does max/exp in T), f64 for f64. Online max/sum in one
//   pass, then exp(x - max) / sum; -inf entries give 0; a NaN anywhere makes the row NaN; a +inf
//   entry, or a row of only -inf, makes the row NaN (inf - inf), as PyTorch.
// - rmsnorm: y = x / sqrt(mean(x^2) + eps) * alpha. layernorm: y = (x - mean) / sqrt(var + eps) *
//   alpha + beta with var = mean((x - mean)^2) (two passes; candle's E[x^2] - mean^2 cancels). A
//   null alpha means 1, a null beta 0. Math in f32 (f64 for f64); in f32 the means' division by
//   n and 1 / sqrt are rsqrtf / __fdividef (within 2 ulp on NVIDIA).
// - rope*: math in f32 for f16/bf16 (candle rounds to T at each step). d (and td) must be even; a
//   zero half-width writes nothing. stride_b != 0 selects per-batch cos/sin tables: batch =
//   (2 * pair) / stride_b, table offset batch * td/2 (rope_i, rope) or batch * t*d/2 (rope_thd).
//
// Layout: the ops live in reduce/ (fast.h, scatter.h, rows.h: softmax, norm.h, rope.h, over block.h
// and ops.h); this file holds the entry points.
#include "common/dtype_lists.h"
#include "reduce/fast.h"
#include "reduce/norm.h"
#include "reduce/rope.h"
#include "reduce/rows.h"
#include "reduce/scatter.h"

// ---------------------------------------------------------------------------------------------
// Entry points: candle's names and parameter lists. Every kernel may run with 1024 threads per
// block (candle launches fast_*, the norms and rope so), so the register budget is bounded for it:
// without the bound nvcc gives fast_sum_f32 66 registers and a 1024-thread launch fails.

#define HKB_REDUCE_GLOBAL HKB_GLOBAL __launch_bounds__(1024)

// fast_*: 1024-thread blocks resident per multiprocessor (on NVIDIA a register cap of 32 for 2),
// per dtype: two let one block's loads run while the other reduces or starts; the 8-byte and u8
// paths need more registers than two blocks leave.
#define HKB_REDUCE_FAST_DTYPES(X) \
  X(bf16, hkb::bf16, 2)           \
  X(f16, hkb::f16, 2)             \
  X(f32, float, 2) X(f64, double, 1) X(u8, uint8_t, 1) X(u32, uint32_t, 2) X(i64, int64_t, 1)

#define HKB_FAST_ARGS                                                              \
  const size_t src_numel, const size_t el_to_sum_per_block, const size_t num_dims, \
      const size_t *info
#define HKB_FAST(TAG, T, BLOCKS)                                                      \
  HKB_GLOBAL void HKB_OCCUPANCY(1024, BLOCKS)                                         \
      fast_sum_##TAG(HKB_FAST_ARGS, const T* src, T* dst) {                           \
    fast_sum<T>(src_numel, el_to_sum_per_block, num_dims, info, src, dst);            \
  }                                                                                   \
  HKB_GLOBAL void HKB_OCCUPANCY(1024, BLOCKS)                                         \
      fast_min_##TAG(HKB_FAST_ARGS, const T* src, T* dst) {                           \
    fast_extreme<T, false>(src_numel, el_to_sum_per_block, num_dims, info, src, dst); \
  }                                                                                   \
  HKB_GLOBAL void HKB_OCCUPANCY(1024, BLOCKS)                                         \
      fast_max_##TAG(HKB_FAST_ARGS, const T* src, T* dst) {                           \
    fast_extreme<T, true>(src_numel, el_to_sum_per_block, num_dims, info, src, dst);  \
  }                                                                                   \
  HKB_GLOBAL void HKB_OCCUPANCY(1024, BLOCKS)                                         \
      fast_argmin_##TAG(HKB_FAST_ARGS, const T* src, uint32_t* dst) {                 \
    fast_arg<T, false>(src_numel, el_to_sum_per_block, num_dims, info, src, dst);     \
  }                                                                                   \
  HKB_GLOBAL void HKB_OCCUPANCY(1024, BLOCKS)                                         \
      fast_argmax_##TAG(HKB_FAST_ARGS, const T* src, uint32_t* dst) {                 \
    fast_arg<T, true>(src_numel, el_to_sum_per_block, num_dims, info, src, dst);      \
  }
HKB_REDUCE_FAST_DTYPES(HKB_FAST)

#define HKB_SUM(TAG, T)                                                                         \
  HKB_REDUCE_GLOBAL void sum_##TAG(const size_t numel, const size_t num_dims,                   \
                                   const size_t num_sum_dims, const size_t* info, const T* inp, \
                                   T* out) {                                                    \
    sum_scatter<T>(numel, num_dims, num_sum_dims, info, inp, out);                              \
  }
HKB_DTYPES_FLOAT(HKB_SUM)
HKB_SUM(u32, uint32_t)

// rmsnorm / layernorm: two 1024-thread blocks per multiprocessor (a 32-register cap on NVIDIA) for
// values of up to 4 bytes, so the loads of one row run while the other block reduces; f64 rows
// need more registers than two blocks leave.
#define HKB_NORM_BLOCKS(T) (sizeof(T) == 8 ? 1 : 2)

#define HKB_ROW_OPS(TAG, T)                                                                       \
  HKB_REDUCE_GLOBAL void softmax_##TAG(const T* src, T* dst, const int n_cols) {                  \
    softmax<T>(src, dst, n_cols);                                                                 \
  }                                                                                               \
  HKB_GLOBAL void HKB_OCCUPANCY(1024, HKB_NORM_BLOCKS(T))                                         \
      rmsnorm_##TAG(const T* src, T* dst, const T* alpha, const int n_cols, const int block_size, \
                    const float eps) {                                                            \
    rmsnorm<T>(src, dst, alpha, n_cols, eps);                                                     \
  }                                                                                               \
  HKB_GLOBAL void HKB_OCCUPANCY(1024, HKB_NORM_BLOCKS(T))                                         \
      layernorm_##TAG(const T* src, T* dst, const T* alpha, const T* beta, const int n_cols,      \
                      const int block_size, const float eps) {                                    \
    layernorm<T>(src, dst, alpha, beta, n_cols, eps);                                             \
  }                                                                                               \
  HKB_REDUCE_GLOBAL void rope_i_##TAG(const T* src, const T* cos, const T* sin, T* dst,           \
                                      const uint32_t bh, const uint32_t td,                       \
                                      const uint32_t stride_b) {                                  \
    rope_i<T>(src, cos, sin, dst, bh, td, stride_b);                                              \
  }                                                                                               \
  HKB_REDUCE_GLOBAL void rope_##TAG(const T* src, const T* cos, const T* sin, T* dst,             \
                                    const uint32_t bh, const uint32_t td, const uint32_t d,       \
                                    const uint32_t stride_b) {                                    \
    rope<T>(src, cos, sin, dst, bh, td, d, stride_b);                                             \
  }                                                                                               \
  HKB_REDUCE_GLOBAL void rope_thd_##TAG(const T* src, const T* cos, const T* sin, T* dst,         \
                                        const uint32_t b, const uint32_t t, const uint32_t h,     \
                                        const uint32_t d, const uint32_t stride_b) {              \
    rope_thd<T>(src, cos, sin, dst, b, t, h, d, stride_b);                                        \
  }
HKB_DTYPES_FLOAT(HKB_ROW_OPS)
