// mul_mat_vec_<format>_q8_1_cuda<NCOLS>: dst[c * nrows_dst + row] = weight row `row` (ncols_x
// values of the format) . q8_1 column c (columns nrows_y values apart, candle's k_padded), for
// NCOLS columns. candle's geometry: NCOLS = 1 gives a GPU block one row (grid nrows, block
// (32, 4); for some formats every other block takes two and the rest leave, tuning::mmvq_rows1);
// NCOLS 2..8 give it two rows (grid ceil(nrows / 2), block (32, 4) or (32, 2); for some formats
// and batches every other block takes four and the rest leave, tuning::mmvq_batch_rows). Any
// block of at most kMaxThreads threads, a multiple of 32, works; rows past nrows_x are never
// written (candle writes one float past an odd nrows). dst is stored, not accumulated into: the
// caller's zeroing is not needed.
//
// Threads step over the row's items: blockdot.h's wide ones (a whole block of the 32-value
// formats, 32 values of the K-quants), and vecdot.h's 8-value ones for q2_K to q5_K at batches
// over 2 (q3_K: over 1; blockdot.h's kMaxCols). Each item's weights are decoded once and used for
// every column; the weights are loaded evict-first on NVIDIA (blocks.h: ldw16, ldw32), the
// activations, which every row reads again, plainly. Reduction: xor shuffles of width 32 (a
// 32-thread row of the block, half of a 64-lane CDNA wave, all of an NVIDIA warp or RDNA wave),
// then shared memory across the rows.
#pragma once

#include <type_traits>

#include "quantized/blockdot.h"

namespace hkb::quant {

// W::Aligned where the wide items have a variant for rows whose blocks all sit at multiples of 16
// bytes (q4_K, q5_K), else W itself.
template <typename W, typename = void>
struct Aligned16 {
  using type = W;
};
template <typename W>
struct Aligned16<W, std::void_t<typename W::Aligned>> {
  using type = typename W::Aligned;
};

constexpr int kMmvqMaxThreads = 128;
// The NVIDIA register cap of format F's batch-1 row product at kRows1 rows a block (tuning.h).
template <typename F, int kRows1 = hkb::tuning::mmvq_rows1(F::kBytes)>
constexpr int mmvq_row_blocks_per_sm() {
  return hkb::tuning::mmvq_row_blocks_per_sm(F::kBytes, kRows1);
}

// The NVIDIA register cap of format F's product at batch NCOLS (2-8; tuning.h).
template <typename F, int NCOLS>
constexpr int mmvq_batch_blocks_per_sm() {
  return hkb::tuning::mmvq_batch_blocks_per_sm(F::kBytes, NCOLS);
}

// Sums each thread's acc[r][c] over the block and stores row row0 + r of column c. Within each
// 32-thread row: five xor shuffles a sum, or (kV = kRows * NCOLS <= tuning::kMmvqButterflySums)
// the kV sums down a halving butterfly: at mask m a lane keeps half of its values and adds its
// partner's copy of them, sending the other half, so kP - 1 + log2(32 / kP) shuffles (kP: kV
// rounded up to a power of two) instead of 5 kV; lane l then holds value (l / (32 / kP)) % kP.
template <int kRows, int NCOLS, int kGroups>
HKB_DEVICE void mmvq_store(float (&acc)[kRows][NCOLS], float (&partial)[kGroups][kRows * NCOLS],
                           int tid, int threads, int row0, int nrows_x, float* __restrict__ dst,
                           int nrows_dst) {
  constexpr int kV = kRows * NCOLS;
  const int group = tid >> 5, groups = threads >> 5;
  if constexpr (kV > hkb::tuning::kMmvqButterflySums) {
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
#pragma unroll
      for (int c = 0; c < NCOLS; ++c) {
        float v = acc[r][c];
#pragma unroll
        for (int m = 16; m > 0; m >>= 1) v += shfl_xor(v, m, 32);
        acc[r][c] = v;
      }
    }
    if ((tid & 31) == 0) {
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
#pragma unroll
        for (int c = 0; c < NCOLS; ++c) partial[group][r * NCOLS + c] = acc[r][c];
      }
    }
  } else {
    constexpr int kP = kV <= 1 ? 1 : kV <= 2 ? 2 : kV <= 4 ? 4 : kV <= 8 ? 8 : kV <= 16 ? 16 : 32;
    static_assert(kV <= 32, "at most 32 sums a thread");
    const int lane = tid & 31;
    float x[kP];
#pragma unroll
    for (int v = 0; v < kP; ++v) x[v] = v < kV ? acc[v / NCOLS][v % NCOLS] : 0.0f;
#pragma unroll
    for (int c = kP, m = 16; c > 1; c >>= 1, m >>= 1) {
      const bool upper = (lane & m) != 0;
#pragma unroll
      for (int v = 0; v < c / 2; ++v) {
        const float keep = upper ? x[v + c / 2] : x[v];
        const float send = upper ? x[v] : x[v + c / 2];
        x[v] = keep + shfl_xor(send, m, 32);
      }
    }
#pragma unroll
    for (int m = 16 / kP; m > 0; m >>= 1) x[0] += shfl_xor(x[0], m, 32);
    const int v = lane / (32 / kP);
    if (lane % (32 / kP) == 0 && v < kV) partial[group][v] = x[0];
  }
  block_sync();
  if (tid < kV) {
    const int r = tid / NCOLS, c = tid % NCOLS;
    float s = 0.0f;
    if (groups == kGroups) {  // candle's blocks of 128 threads: a fixed sum, no loop
#pragma unroll
      for (int g = 0; g < kGroups; ++g) s += partial[g][tid];
    } else {
      for (int g = 0; g < groups; ++g) s += partial[g][tid];
    }
    if (row0 + r < nrows_x) dst[static_cast<size_t>(c) * nrows_dst + row0 + r] = s;
  }
}

// Thread tid takes items tid, tid + threads, ... of its rows (V: Wide<F> or Vec<F>), kUnroll at a
// time with every weight load of the round issued before the first dot product.
template <typename F, typename V, int kUnroll, int NCOLS, int kRows>
HKB_DEVICE void mmvq_rows(const uint8_t* const (&wrow)[kRows], const uint8_t* y, size_t col_bytes,
                          int blocks, int tid, int threads, float (&acc)[kRows][NCOLS]) {
  constexpr int kYPerBlock = F::kValues / 32 * kQ81Bytes;
  const int items = blocks * V::kItems;
  for (int base = tid; base < items; base += kUnroll * threads) {
    decltype(V::load(nullptr, 0)) w[kUnroll][kRows];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int it = base + u * threads;
      if (it < items) {
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          w[u][r] =
              V::load(wrow[r] + static_cast<size_t>(it / V::kItems) * F::kBytes, it % V::kItems);
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int it = base + u * threads;
      if (it < items) {
        const uint8_t* yb = y + static_cast<size_t>(it / V::kItems) * kYPerBlock;
#pragma unroll
        for (int c = 0; c < NCOLS; ++c) {
          const auto a = V::act(yb + col_bytes * c, it % V::kItems);
#pragma unroll
          for (int r = 0; r < kRows; ++r) acc[r][c] += V::dot(w[u][r], a);
        }
      }
    }
  }
}

// kRows1: rows a working block of a batch-1 grid of a block a row takes (tuning::mmvq_rows1):
// above 1, every kRows1-th block takes that many (one activation load for them all) and the
// others leave at once.
template <typename F, int NCOLS, int kRows1 = hkb::tuning::mmvq_rows1(F::kBytes)>
HKB_DEVICE void mmvq(const void* __restrict__ vx, const void* __restrict__ vy,
                     float* __restrict__ dst, int ncols_x, int nrows_x, int nrows_y,
                     int nrows_dst) {
  constexpr int kRows = NCOLS == 1 ? kRows1 : hkb::tuning::mmvq_batch_rows(F::kBytes, NCOLS);
  static_assert(kRows == 1 || kRows == 2 || kRows == 4, "mmvq_store: up to 32 sums a block");
  static_assert(NCOLS == 1 || kRows >= 2, "candle's batch grid gives a block two rows");
  constexpr int kGroups = kMmvqMaxThreads / 32;
  __shared__ float partial[kGroups][kRows * NCOLS];

  // Blocks of candle's grid hold one row (batch 1) or two (batches 2-8) each: with more rows a
  // working block, every kRows-th (kRows / 2-th) block works and the others leave at once.
  constexpr int kGridRows = NCOLS == 1 ? 1 : 2;
  if (kRows > kGridRows && blockIdx.x % (kRows / kGridRows) != 0) return;
  const int row0 = static_cast<int>(blockIdx.x) * kGridRows;
  if (row0 >= nrows_x) return;  // the whole block: before any barrier
  const int tid = static_cast<int>(threadIdx.x + blockDim.x * threadIdx.y);
  const int threads = static_cast<int>(blockDim.x * blockDim.y);
  const int blocks = ncols_x / F::kValues;
  const size_t row_bytes = static_cast<size_t>(blocks) * F::kBytes;
  const size_t col_bytes = static_cast<size_t>(nrows_y / 32) * kQ81Bytes;

  // A second row past nrows_x reads row0 again and its sums are dropped.
  const uint8_t* wrow[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const int row = row0 + r < nrows_x ? row0 + r : row0;
    wrow[r] = static_cast<const uint8_t*>(vx) + row_bytes * static_cast<size_t>(row);
  }
  const uint8_t* y = static_cast<const uint8_t*>(vy);

  float acc[kRows][NCOLS] = {};
  if constexpr (NCOLS <= Wide<F>::kMaxCols) {
    constexpr int kUnroll = NCOLS == 1 ? hkb::tuning::kMmvqWideItems : 1;
    using W16 = typename Aligned16<Wide<F>>::type;
    bool rows16 = false;  // one test for the GPU block's rows, not one an item
    if constexpr (!std::is_same_v<W16, Wide<F>>) {
      rows16 = row_bytes % 16 == 0;
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        rows16 = rows16 && (reinterpret_cast<uintptr_t>(wrow[r]) & 15u) == 0;
      }
    }
    if (rows16) {
      mmvq_rows<F, W16, kUnroll, NCOLS, kRows>(wrow, y, col_bytes, blocks, tid, threads, acc);
    } else {
      mmvq_rows<F, Wide<F>, kUnroll, NCOLS, kRows>(wrow, y, col_bytes, blocks, tid, threads, acc);
    }
  } else {  // q2_K to q5_K at batches over 2 (q3_K: over 1)
    constexpr int kUnroll = hkb::tuning::kMmvqVecUnroll;
    mmvq_rows<F, Vec<F>, kUnroll, NCOLS, kRows>(wrow, y, col_bytes, blocks, tid, threads, acc);
  }
  mmvq_store<kRows, NCOLS>(acc, partial, tid, threads, row0, nrows_x, dst, nrows_dst);
}

}  // namespace hkb::quant
