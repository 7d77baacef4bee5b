// QUANTIZED, part 1: quantize_q8_1, dequantize_block_* and get_rows_* with candle's names,
// parameter lists and launch geometry. The semantics of each family, including where hkb defines
// what candle leaves undefined, are in the header it comes from:
//   quantized/blocks.h         the GGML block formats and how a unit of 8 values is decoded;
//   quantized/dequantize.h     dequantize_block_<format>_<f32|f16> (what candle's k counts);
//   quantized/get_rows.h       get_rows_<format> (ids, the 0xFFFFFFFF sentinel, row strides);
//   quantized/quantize_q8_1.h  quantize_q8_1 (rounding, the wave width of its reductions);
//   quantized/split.h          the work split under candle's grids (any grid is correct).
// Part 3 (quantized/mmq.h, quantized/moe.h) differs from candle where candle is wrong:
//   - mul_mat_<format> is right for every k that is a multiple of the format's block (candle
//     reads the next row when k is not a multiple of its k-tile: 256 for q4_0, 128 for q8_0, 512
//     for q2_K / q3_K); tiles at the edges of nrows_x and ncols_y write nothing out of bounds;
//   - mul_mat_q4_K / q5_K take the min term from exact integer sums, as MMVQ does (candle's MMQ
//     uses the q8_1 blocks' rounded sums s), so MMQ and MMVQ agree on the same data;
//   - indexed_moe_forward_q8_0_q8_1 steps over experts by n * k / 32 blocks (candle: QK_K-value
//     blocks, wrong for every expert past the first), and every expert offset is 64-bit.
#include "quantized/dequantize.h"
#include "quantized/get_rows.h"
#include "quantized/quantize_q8_1.h"

namespace q = hkb::quant;

// Blocks of at most 256 threads (candle's largest here); on NVIDIA at most 64 registers, so the
// busy threads leave half of the register file to the idle blocks (common/tuning.h).
#define HKB_Q_KERNEL HKB_GLOBAL void HKB_OCCUPANCY(256, 4)

HKB_Q_KERNEL quantize_q8_1(const float* __restrict__ x, void* __restrict__ vy, const int kx,
                           const int kx_padded) {
  q::quantize_q8_1(x, vy, kx, kx_padded);
}

// dequantize_block_<tag>_<out>: COUNT is how the format's values follow from k (dequantize.h).
#define HKB_DEQUANT_K(TAG, F, COUNT)                                                               \
  HKB_Q_KERNEL dequantize_block_##TAG##_f32(const void* __restrict__ vx, float* __restrict__ y,    \
                                            const int k) {                                         \
    q::dequantize<q::F>(vx, y, q::COUNT(k));                                                       \
  }                                                                                                \
  HKB_Q_KERNEL dequantize_block_##TAG##_f16(const void* __restrict__ vx, hkb::f16* __restrict__ y, \
                                            const int k) {                                         \
    q::dequantize<q::F>(vx, y, q::COUNT(k));                                                       \
  }
HKB_DEQUANT_K(q4_0, Q4_0, values_of_blocks)
HKB_DEQUANT_K(q4_1, Q4_1, values_of_blocks)
HKB_DEQUANT_K(q8_0, Q8_0, values_of_blocks)
HKB_DEQUANT_K(q5_0, Q5_0, values_of_count)
HKB_DEQUANT_K(q5_1, Q5_1, values_of_count)

#define HKB_DEQUANT_SUPER(TAG, F)                                                                 \
  HKB_Q_KERNEL dequantize_block_##TAG##_f32(const void* __restrict__ vx, float* __restrict__ y) { \
    q::dequantize<q::F>(vx, y, q::values_of_grid());                                              \
  }                                                                                               \
  HKB_Q_KERNEL dequantize_block_##TAG##_f16(const void* __restrict__ vx,                          \
                                            hkb::f16* __restrict__ y) {                           \
    q::dequantize<q::F>(vx, y, q::values_of_grid());                                              \
  }
HKB_DEQUANT_SUPER(q2_K, Q2_K)
HKB_DEQUANT_SUPER(q3_K, Q3_K)
HKB_DEQUANT_SUPER(q4_K, Q4_K)
HKB_DEQUANT_SUPER(q5_K, Q5_K)
HKB_DEQUANT_SUPER(q6_K, Q6_K)
HKB_DEQUANT_SUPER(q8_K, Q8_K)

#define HKB_GET_ROWS_Q(TAG, F)                                                                  \
  HKB_Q_KERNEL get_rows_##TAG(const void* __restrict__ src0, const uint32_t* __restrict__ src1, \
                              float* __restrict__ dst, const int64_t ne00, const size_t nb01) { \
    q::get_rows_blocks<q::F>(src0, src1, dst, ne00, nb01);                                      \
  }
HKB_GET_ROWS_Q(q4_0, Q4_0)
HKB_GET_ROWS_Q(q4_1, Q4_1)
HKB_GET_ROWS_Q(q5_0, Q5_0)
HKB_GET_ROWS_Q(q5_1, Q5_1)
HKB_GET_ROWS_Q(q8_0, Q8_0)
HKB_GET_ROWS_Q(q2_K, Q2_K)
HKB_GET_ROWS_Q(q3_K, Q3_K)
HKB_GET_ROWS_Q(q4_K, Q4_K)
HKB_GET_ROWS_Q(q5_K, Q5_K)
HKB_GET_ROWS_Q(q6_K, Q6_K)

// nb01 is ignored: rows of f32/f16/bf16 tables are ne00 elements apart (as in candle).
#define HKB_GET_ROWS_PLAIN(TAG, T)                                                           \
  HKB_Q_KERNEL get_rows_##TAG(const T* __restrict__ src0, const uint32_t* __restrict__ src1, \
                              float* __restrict__ dst, const int64_t ne00, const size_t) {   \
    q::get_rows_plain<T>(src0, src1, dst, ne00);                                             \
  }
HKB_GET_ROWS_PLAIN(f32, float)
HKB_GET_ROWS_PLAIN(f16, hkb::f16)
HKB_GET_ROWS_PLAIN(bf16, hkb::bf16)

// ---- part 2: matrix-vector products (quantized/dmmv.h, quantized/mmvq.h, quantized/blockdot.h,
// quantized/vecdot.h) ----
#include "quantized/dmmv.h"
#include "quantized/mmvq.h"

#define HKB_DMMV_KERNEL HKB_GLOBAL void HKB_OCCUPANCY(64, 16)
// MMVQ: NVIDIA blocks of 128 threads per SM by format, batch-1 row products their
// mmvq_row_blocks_per_sm, batches 2-8 mmvq_batch_blocks_per_sm (tuning_quantized.h).
#define HKB_MMVQ_KERNEL(MIN_BLOCKS) HKB_GLOBAL void HKB_OCCUPANCY(128, MIN_BLOCKS)

#define HKB_DMMV(NAME, F)                                                                \
  HKB_DMMV_KERNEL dequantize_mul_mat_vec_##NAME(                                         \
      const void* __restrict__ vx, const float* __restrict__ y, float* __restrict__ dst, \
      const int ncols, const int nrows) {                                                \
    q::dmmv<q::F>(vx, y, dst, ncols, nrows);                                             \
  }
HKB_DMMV(q4_0_cuda, Q4_0)
HKB_DMMV(q4_1_cuda, Q4_1)
HKB_DMMV(q5_0_cuda, Q5_0)
HKB_DMMV(q5_1_cuda, Q5_1)
HKB_DMMV(q8_0_cuda, Q8_0)
HKB_DMMV(q2_k, Q2_K)
HKB_DMMV(q3_k, Q3_K)
HKB_DMMV(q4_k, Q4_K)
HKB_DMMV(q6_k, Q6_K)
// candle's q5_k kernel has no nrows (its launch pushes one, which the kernel never reads): the
// grid is the row count.
HKB_DMMV_KERNEL dequantize_mul_mat_vec_q5_k(const void* __restrict__ vx,
                                            const float* __restrict__ yy, float* __restrict__ dst,
                                            const int ncols) {
  q::dmmv<q::Q5_K>(vx, yy, dst, ncols, static_cast<int>(gridDim.x));
}

#define HKB_MMVQ_1(TAG, F, N, MIN_BLOCKS)                                                         \
  HKB_MMVQ_KERNEL(MIN_BLOCKS)                                                                     \
  mul_mat_vec_##TAG##_q8_1_cuda##N(const void* __restrict__ vx, const void* __restrict__ vy,      \
                                   float* __restrict__ dst, const int ncols_x, const int nrows_x, \
                                   const int nrows_y, const int nrows_dst) {                      \
    q::mmvq<q::F, N>(vx, vy, dst, ncols_x, nrows_x, nrows_y, nrows_dst);                          \
  }
#define HKB_MMVQ(TAG, F)                                          \
  HKB_MMVQ_1(TAG, F, 1, q::mmvq_row_blocks_per_sm<q::F>())        \
  HKB_MMVQ_1(TAG, F, 2, (q::mmvq_batch_blocks_per_sm<q::F, 2>())) \
  HKB_MMVQ_1(TAG, F, 3, (q::mmvq_batch_blocks_per_sm<q::F, 3>())) \
  HKB_MMVQ_1(TAG, F, 4, (q::mmvq_batch_blocks_per_sm<q::F, 4>())) \
  HKB_MMVQ_1(TAG, F, 5, (q::mmvq_batch_blocks_per_sm<q::F, 5>())) \
  HKB_MMVQ_1(TAG, F, 6, (q::mmvq_batch_blocks_per_sm<q::F, 6>())) \
  HKB_MMVQ_1(TAG, F, 7, (q::mmvq_batch_blocks_per_sm<q::F, 7>())) \
  HKB_MMVQ_1(TAG, F, 8, (q::mmvq_batch_blocks_per_sm<q::F, 8>()))
HKB_MMVQ(q4_0, Q4_0)
HKB_MMVQ(q4_1, Q4_1)
HKB_MMVQ(q5_0, Q5_0)
HKB_MMVQ(q5_1, Q5_1)
HKB_MMVQ(q8_0, Q8_0)
HKB_MMVQ(q2_K, Q2_K)
HKB_MMVQ(q3_K, Q3_K)
HKB_MMVQ(q4_K, Q4_K)
HKB_MMVQ(q5_K, Q5_K)
HKB_MMVQ(q6_K, Q6_K)
// ---- part 3: matrix-matrix products (quantized/mmq.h) and indexed mixture of experts
// (quantized/moe.h) ----
#include "quantized/mmq.h"
#include "quantized/moe.h"

// MMQ_X, MMQ_Y: candle's tile of columns and rows per GPU block (its grid follows from them); the
// NVIDIA register cap is per format (tuning::mmq_blocks_per_sm).
#define HKB_MMQ(TAG, F, MMQ_X, MMQ_Y)                                                       \
  HKB_GLOBAL void HKB_OCCUPANCY(128, (q::mmq_blocks_per_sm<q::F, MMQ_X, MMQ_Y>()))          \
      mul_mat_##TAG(const void* __restrict__ vx, const void* __restrict__ vy,               \
                    float* __restrict__ dst, const int ncols_x, const int nrows_x,          \
                    const int ncols_y, const int nrows_y, const int nrows_dst) {            \
    q::mmq<q::F, MMQ_X, MMQ_Y>(vx, vy, dst, ncols_x, nrows_x, ncols_y, nrows_y, nrows_dst); \
  }
HKB_MMQ(q4_0, Q4_0, 64, 128)
HKB_MMQ(q4_1, Q4_1, 64, 128)
HKB_MMQ(q5_0, Q5_0, 128, 64)
HKB_MMQ(q5_1, Q5_1, 128, 64)
HKB_MMQ(q8_0, Q8_0, 128, 64)
HKB_MMQ(q2_K, Q2_K, 64, 128)
HKB_MMQ(q3_K, Q3_K, 128, 128)
HKB_MMQ(q4_K, Q4_K, 64, 128)
HKB_MMQ(q5_K, Q5_K, 64, 128)
HKB_MMQ(q6_K, Q6_K, 64, 64)

// Each GPU block is MMVQ's batch-1 row product at a row a block: that register bound.
#define HKB_MOE(TAG, F)                                                                       \
  HKB_MMVQ_KERNEL((q::mmvq_row_blocks_per_sm<q::F, 1>()))                                     \
  indexed_moe_forward_##TAG##_q8_1(                                                           \
      const void* __restrict__ all_weights, const void* __restrict__ all_inputs,              \
      const unsigned int* __restrict__ indices, float* __restrict__ all_outputs, const int n, \
      const int k, const int, const int topk, const int k_padded, const int input_dim1) {     \
    q::indexed_moe<q::F>(all_weights, all_inputs, indices, all_outputs, n, k, topk, k_padded, \
                         input_dim1);                                                         \
  }
HKB_MOE(q2k, Q2_K)
HKB_MOE(q3k, Q3_K)
HKB_MOE(q4k, Q4_K)
HKB_MOE(q5k, Q5_K)
HKB_MOE(q6k, Q6_K)
HKB_MOE(q8_0, Q8_0)
