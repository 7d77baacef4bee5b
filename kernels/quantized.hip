// QUANTIZED, part 1: quantize_q8_1, dequantize_block_* and get_rows_* with candle's names,
// parameter lists and launch geometry. The semantics of each family, including where hkb defines
// what candle leaves undefined, are in the header it comes from:
//   quantized/blocks.h         the GGML block formats and how a unit of 8 values is decoded;
//   quantized/dequantize.h     dequantize_block_<format>_<f32|f16> (what candle's k counts);
//   quantized/get_rows.h       get_rows_<format> (ids, the 0xFFFFFFFF sentinel, row strides);
//   quantized/quantize_q8_1.h  quantize_q8_1 (rounding, the wave width of its reductions);
//   quantized/split.h          the work split under candle's grids (any grid is correct).
#include "quantized/dequantize.h"
#include "quantized/get_rows.h"
#include "quantized/quantize_q8_1.h"

namespace q = hkb::quant;

// Blocks of at most 256 threads (candle's largest here); on NVIDIA at most 64 registers, so the
// busy threads leave half of the register file to the idle blocks (quantized/tuning.h).
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

// ---- part 2: matrix-vector products (quantized/dmmv.h, quantized/mmvq.h, quantized/vecdot.h) ----
#include "quantized/dmmv.h"
#include "quantized/mmvq.h"

#define HKB_DMMV_KERNEL HKB_GLOBAL void HKB_OCCUPANCY(64, 16)
#define HKB_MMVQ_KERNEL HKB_GLOBAL void HKB_OCCUPANCY(128, 8)

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

#define HKB_MMVQ_1(TAG, F, N)                                                            \
  HKB_MMVQ_KERNEL mul_mat_vec_##TAG##_q8_1_cuda##N(                                      \
      const void* __restrict__ vx, const void* __restrict__ vy, float* __restrict__ dst, \
      const int ncols_x, const int nrows_x, const int nrows_y, const int nrows_dst) {    \
    q::mmvq<q::F, N>(vx, vy, dst, ncols_x, nrows_x, nrows_y, nrows_dst);                 \
  }
#define HKB_MMVQ(TAG, F) \
  HKB_MMVQ_1(TAG, F, 1)  \
  HKB_MMVQ_1(TAG, F, 2)  \
  HKB_MMVQ_1(TAG, F, 3)  \
  HKB_MMVQ_1(TAG, F, 4)  \
  HKB_MMVQ_1(TAG, F, 5)  \
  HKB_MMVQ_1(TAG, F, 6)  \
  HKB_MMVQ_1(TAG, F, 7)  \
  HKB_MMVQ_1(TAG, F, 8)
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
