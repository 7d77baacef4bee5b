// mul_mat_vec_<format>_q8_1_cuda<NCOLS>: dst[c * nrows_dst + row] = weight row `row` (ncols_x
// values of the format) . q8_1 column c (columns nrows_y values apart, candle's k_padded), for
// NCOLS columns. candle's geometry: grid nrows (NCOLS = 1) or ceil(nrows / 2), block (32, 4) or
// (32, 2). Rows past nrows_x are never written (candle writes one float past an odd nrows). dst
// is stored, not accumulated into: the caller's zeroing is not needed.
//
// Work split (rows.h): the first busy blocks along x loop over chunks of rows and the rest of
// candle's grid leaves at once; each 32-thread group owns kRows rows of a chunk and reduces them
// alone (xor shuffles of width 32: an NVIDIA warp or RDNA wave, half of a 64-lane CDNA wave), so
// there is no barrier per row. Any gridDim.x >= 1 and any block of whole 32-thread groups works.
// A lane loads the weights and activations of kInFlight items before its first dot product; each
// item's weights are decoded once and used for every column.
#pragma once

#include "quantized/rows.h"
#include "quantized/vecdot.h"

namespace hkb::quant {

template <typename F, int NCOLS>
HKB_DEVICE void mmvq(const void* __restrict__ vx, const void* __restrict__ vy,
                     float* __restrict__ dst, int ncols_x, int nrows_x, int nrows_y,
                     int nrows_dst) {
  using V = Vec<F>;
  using W = decltype(V::load(nullptr, 0));
  using A = decltype(V::act(nullptr, 0));
  constexpr int kRows = NCOLS == 1 ? 1 : 2;
  constexpr int kInFlight = tuning::mmvq_items_in_flight(F::kValues == 256, NCOLS);
  constexpr int kYPerBlock = F::kValues / 32 * kQ81Bytes;
  const RowGroups rg = row_groups(kRows);
  if (!rg.busy) return;  // idle blocks and threads past the last whole group
  const int lane = rg.lane, lanes = rg.lanes;
  const int items = ncols_x / F::kValues * V::kItems;
  const size_t row_bytes = static_cast<size_t>(ncols_x / F::kValues) * F::kBytes;
  const size_t col_bytes = static_cast<size_t>(nrows_y / 32) * kQ81Bytes;
  const uint8_t* x = static_cast<const uint8_t*>(vx);
  const uint8_t* y = static_cast<const uint8_t*>(vy);

#pragma unroll 1
  for (int64_t first = rg.first; first < nrows_x; first += rg.step) {
    // Rows past nrows_x read the chunk's first row again and drop their sums: every group of the
    // block takes the same trips, so 64-lane waves reach the shuffles together.
    const int64_t row0 = first + rg.group * kRows;
    const uint8_t* wrow[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      wrow[r] = x + row_bytes * static_cast<size_t>(row0 + r < nrows_x ? row0 + r : first);

    float acc[kRows][NCOLS] = {};
    auto step = [&](const W(&w)[kRows], int it) {
      const uint8_t* yb = y + static_cast<size_t>(it / V::kItems) * kYPerBlock;
#pragma unroll
      for (int c = 0; c < NCOLS; ++c) {
        const A a = V::act(yb + col_bytes * c, it % V::kItems);
#pragma unroll
        for (int r = 0; r < kRows; ++r) acc[r][c] += V::dot(w[r], a);
      }
    };
    // Whole rounds first: no conditions, so every load of a round can be issued before its first
    // dot; then the rest, fewer than kInFlight items a lane.
    int it = lane;
#pragma unroll 1
    for (; it + (kInFlight - 1) * lanes < items; it += kInFlight * lanes) {
      W w[kInFlight][kRows];
      A a[kInFlight];
#pragma unroll
      for (int u = 0; u < kInFlight; ++u) {
        const int iu = it + u * lanes;
#pragma unroll
        for (int r = 0; r < kRows; ++r)
          w[u][r] =
              V::load(wrow[r] + static_cast<size_t>(iu / V::kItems) * F::kBytes, iu % V::kItems);
        if constexpr (NCOLS == 1)
          a[u] = V::act(y + static_cast<size_t>(iu / V::kItems) * kYPerBlock, iu % V::kItems);
      }
#pragma unroll
      for (int u = 0; u < kInFlight; ++u) {
        if constexpr (NCOLS == 1) {
          acc[0][0] += V::dot(w[u][0], a[u]);
        } else {
          step(w[u], it + u * lanes);
        }
      }
    }
#pragma unroll 1
    for (; it < items; it += lanes) {
      W w[kRows];
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        w[r] = V::load(wrow[r] + static_cast<size_t>(it / V::kItems) * F::kBytes, it % V::kItems);
      step(w, it);
    }

#pragma unroll
    for (int r = 0; r < kRows; ++r) {
#pragma unroll
      for (int c = 0; c < NCOLS; ++c) {
#pragma unroll
        for (int m = 16; m > 0; m >>= 1) acc[r][c] += shfl_xor(acc[r][c], m, 32);
      }
    }
    if (lane == 0) {
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        if (row0 + r < nrows_x) {
#pragma unroll
          for (int c = 0; c < NCOLS; ++c)
            dst[static_cast<size_t>(c) * nrows_dst + static_cast<size_t>(row0 + r)] = acc[r][c];
        }
      }
    }
  }
}

}  // namespace hkb::quant
