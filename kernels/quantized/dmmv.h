// dequantize_mul_mat_vec_<format>: dst[row] = weight row `row` (ncols values) . y (ncols f32),
// candle's grid (nrows) of blocks (32, 1). Work split (rows.h): the first busy blocks loop over
// the rows, one row a 32-thread group at a time, and the rest of the grid leaves at once; any
// gridDim.x >= 1 and any block of whole 32-thread groups works. Each lane decodes units of 8
// values (blocks.h) and multiplies them with 8 floats of y, kUnroll units at a time so that their
// weight loads are in flight together. Reduction: xor shuffles of width 32 within the group (a
// 32-thread block on a 64-lane CDNA wave is its lower half; the other lanes do not exist). dst is
// stored (candle's DMMV stores too).
#pragma once

#include "quantized/blocks.h"
#include "quantized/rows.h"

namespace hkb::quant {

// 8 floats of y: two 16-byte loads where y is 16-byte aligned (a buffer start), else one by one.
HKB_DEVICE void load8(const float* p, bool aligned, float (&x)[8]) {
  if (aligned) {
    const float4 a = reinterpret_cast<const float4*>(p)[0],
                 b = reinterpret_cast<const float4*>(p)[1];
    x[0] = a.x, x[1] = a.y, x[2] = a.z, x[3] = a.w, x[4] = b.x, x[5] = b.y, x[6] = b.z, x[7] = b.w;
  } else {
#pragma unroll
    for (int i = 0; i < 8; ++i) x[i] = p[i];
  }
}

template <typename F>
HKB_DEVICE void dmmv(const void* __restrict__ vx, const float* __restrict__ y,
                     float* __restrict__ dst, int ncols, int nrows) {
  constexpr int kUnits = F::kValues / 8;
  constexpr int kUnroll = tuning::kDmmvUnitsInFlight;
  const RowGroups rg = row_groups(1);
  if (!rg.busy) return;  // idle blocks and threads past the last whole group
  const int lane = rg.lane, lanes = rg.lanes;
  const int units = ncols / F::kValues * kUnits;
  const size_t row_bytes = static_cast<size_t>(ncols / F::kValues) * F::kBytes;
  const bool aligned =
      (reinterpret_cast<uintptr_t>(y) & 15u) == 0;  // uniform: a branch, not a split

#pragma unroll 1
  for (int64_t first = rg.first; first < nrows; first += rg.step) {
    // A group past nrows reads the chunk's first row and drops its sum (same trips for all).
    const int64_t row = first + rg.group;
    const uint8_t* w = static_cast<const uint8_t*>(vx) +
                       row_bytes * static_cast<size_t>(row < nrows ? row : first);
    float acc = 0.0f;
    auto step = [&](const typename F::Raw& raw, int unit) {
      float v[8];
      F::decode(raw, unit % kUnits, v);
      float xv[8];
      load8(y + 8 * static_cast<size_t>(unit), aligned, xv);
#pragma unroll
      for (int i = 0; i < 8; ++i) acc += v[i] * xv[i];
    };
    // Whole rounds first: no conditions, so a round's weight loads are all issued together; then
    // the rest, fewer than kUnroll units a lane.
    int unit = lane;
#pragma unroll 1
    for (; unit + (kUnroll - 1) * lanes < units; unit += kUnroll * lanes) {
      typename F::Raw raw[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int uu = unit + u * lanes;
        raw[u] = F::template load<F::kAlign>(w + (uu / kUnits) * F::kBytes, uu % kUnits);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) step(raw[u], unit + u * lanes);
    }
#pragma unroll 1
    for (; unit < units; unit += lanes)
      step(F::template load<F::kAlign>(w + (unit / kUnits) * F::kBytes, unit % kUnits), unit);
#pragma unroll
    for (int m = 16; m > 0; m >>= 1) acc += shfl_xor_first(acc, m, 32);
    if (lane == 0 && row < nrows) dst[row] = acc;
  }
}

}  // namespace hkb::quant
