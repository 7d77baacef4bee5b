// dequantize_mul_mat_vec_<format>: dst[row] = weight row `row` (ncols values) . y (ncols f32),
// candle's grid (nrows) of blocks (32, 1): one GPU block a row. Each thread decodes units of 8
// values (blocks.h) and multiplies them with 8 floats of y, kDmmvUnits units at a time so that
// their weight loads are in flight together. dst is stored (candle's DMMV stores too). Blocks of
// any size up to 64 threads work, with a reduction of xor shuffles of width 32 over the block's
// first 32 threads (on a 64-lane CDNA wave they are its lower half; the others do not exist) or
// through shared memory for a second 32-thread row.
#pragma once

#include "quantized/blocks.h"

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
  constexpr int kUnroll = hkb::tuning::kDmmvUnits;
  __shared__ float partial[2];
  const int row = static_cast<int>(blockIdx.x);
  if (row >= nrows) return;
  const int tid = static_cast<int>(threadIdx.x + blockDim.x * threadIdx.y);
  const int threads = static_cast<int>(blockDim.x * blockDim.y);
  const int units = ncols / F::kValues * kUnits;
  const uint8_t* w =
      static_cast<const uint8_t*>(vx) + static_cast<size_t>(ncols / F::kValues) * F::kBytes * row;

  const bool aligned =
      (reinterpret_cast<uintptr_t>(y) & 15u) == 0;  // uniform: a branch, not a split
  float acc = 0.0f;
  for (int base = tid; base < units; base += kUnroll * threads) {
    typename F::Raw raw[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int unit = base + u * threads;
      if (unit < units)
        raw[u] = F::template load<F::kAlign>(w + (unit / kUnits) * F::kBytes, unit % kUnits);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int unit = base + u * threads;
      if (unit < units) {
        float v[8];
        F::decode(raw[u], unit % kUnits, v);
        float x[8];
        load8(y + 8 * static_cast<size_t>(unit), aligned, x);
#pragma unroll
        for (int i = 0; i < 8; ++i) acc += v[i] * x[i];
      }
    }
  }
#pragma unroll
  for (int m = 16; m > 0; m >>= 1) acc += shfl_xor_first(acc, m, 32);
  if (threads <= 32) {
    if (tid == 0) dst[row] = acc;
    return;
  }
  if ((tid & 31) == 0) partial[tid >> 5] = acc;
  block_sync();
  if (tid == 0) dst[row] = partial[0] + partial[1];
}

}  // namespace hkb::quant
