// quantize_q8_1(x, vy, kx, kx_padded): rows of kx floats (row stride kx) to q8_1 activations.
// The number of rows is the grid's y dimension (candle: grid (ceil(kx_padded / 256), rows),
// block 256; its host loops over chunks of 65535 rows with offset pointers). Row r becomes
// kx_padded / 32 blocks of 36 bytes at vy + r * kx_padded / 32 * 36; values past kx are zeros.
// Per block of 32 values: amax = max |x|, d = amax / 127 (IEEE division), q = amax == 0 ? 0 :
// roundf(x / d), s = the sum of the 32 x. d and s are stored as halves (round to nearest even).
// qs and d are exactly candle's; s is summed in double and rounded to float, then to half: within
// one ulp of the half nearest to the exact sum (candle's float sum can be further off).
//
// Wave width: one q8_1 block is reduced by a group of 8 consecutive lanes holding 4 values each;
// both reductions (max of |x|, sum) are xor shuffles of width 8, so a 32-lane wave holds 4 blocks
// and a 64-lane CDNA wave 8, and no shuffle crosses a group. All lanes of a wave stay in the loop
// until its first group runs out of blocks (lanes without a block shuffle zeros), so every shuffle
// is converged. Block sizes must be multiples of 32 (candle: 256); other sizes write nothing.
// kx_padded must be a positive multiple of 32 (candle: a multiple of 512), else nothing is
// written. x must be 4-byte aligned, vy 4-byte aligned (block_q8_1's alignment).
#pragma once

#include "quantized/split.h"

namespace hkb::quant {

constexpr int kQ8Lanes = 8;  // lanes per q8_1 block
constexpr uint32_t kQ8Bytes = 36;

// The 4 values of lane `li` in block `col` of row `row` (zeros past kx).
HKB_DEVICE float4 q8_load(const float* x, uint64_t row, uint64_t col, uint32_t li, uint64_t kx,
                          bool vec) {
  const uint64_t c0 = 32 * col + 4 * li;
  const float* p = x + row * kx + c0;
  if (vec && c0 + 4 <= kx) return *reinterpret_cast<const float4*>(p);
  float v[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) v[i] = c0 + i < kx ? p[i] : 0.0f;
  return make_float4(v[0], v[1], v[2], v[3]);
}

HKB_DEVICE void store_u32(uint8_t* p, uint32_t w, bool aligned) {
  if (aligned) {
    *reinterpret_cast<uint32_t*>(p) = w;
    return;
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(w >> (8 * i));
}

// Reduces and writes one block; every lane of the wave calls it (valid or not).
HKB_DEVICE void q8_block(float4 x, bool valid, uint8_t* out, uint32_t li, bool aligned) {
  float amax = fmaxf(fmaxf(fabsf(x.x), fabsf(x.y)), fmaxf(fabsf(x.z), fabsf(x.w)));
  double sum = (static_cast<double>(x.x) + x.y) + (static_cast<double>(x.z) + x.w);
#pragma unroll
  for (int m = kQ8Lanes / 2; m > 0; m /= 2) {
    amax = fmaxf(amax, shfl_xor(amax, m, kQ8Lanes));
    sum += shfl_xor(sum, m, kQ8Lanes);
  }
  if (!valid) return;
  const float d = amax / 127.0f;
  const float xs[4] = {x.x, x.y, x.z, x.w};
  uint32_t q = 0;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int qi = amax == 0.0f ? 0 : static_cast<int>(roundf(xs[i] / d));
    q |= static_cast<uint32_t>(static_cast<uint8_t>(static_cast<int8_t>(qi))) << (8 * i);
  }
  store_u32(out + 4 + 4 * li, q, aligned);
  if (li == 0) {
    const uint32_t ds = float_to_half_bits(d) |
                        (static_cast<uint32_t>(float_to_half_bits(static_cast<float>(sum))) << 16);
    store_u32(out, ds, aligned);
  }
}

HKB_DEVICE void quantize_q8_1(const float* x, void* vy, int kx_arg, int kx_padded) {
  if (idle_block()) return;
  const uint32_t threads = block_threads();
  if (kx_padded <= 0 || kx_padded % 32 != 0 || threads % 32 != 0) return;
  const Busy b = busy_range();
  const uint64_t kx = kx_arg > 0 ? static_cast<uint64_t>(kx_arg) : 0;
  const uint64_t cols = static_cast<uint64_t>(kx_padded) / 32;
  const uint64_t total = cols * gridDim.y;
  const uint64_t group = b.first / kQ8Lanes, groups = b.step / kQ8Lanes;
  const uint32_t li = flat_thread() % kQ8Lanes;
  // Groups of this wave before this lane's group: the wave's first group has unit u - lag.
  const uint64_t lag = (flat_thread() % HKB_WAVE_SIZE) / kQ8Lanes;
  const bool vec = (reinterpret_cast<uintptr_t>(x) & 15u) == 0 && kx % 4 == 0;
  uint8_t* y = static_cast<uint8_t*>(vy);
  const bool aligned = (reinterpret_cast<uintptr_t>(y) & 3u) == 0;
  constexpr int U = hkb::tuning::kQuantQ8BlocksInFlight;
  Cursor<> c(group, groups, cols);
  for (uint64_t u = group; u - lag < total; u += U * groups) {
    uint64_t row[U], col[U];
    float4 v[U];
#pragma unroll
    for (int j = 0; j < U; ++j) {
      row[j] = c.row, col[j] = c.col;
      c.next();
      v[j] = u + j * groups < total ? q8_load(x, row[j], col[j], li, kx, vec)
                                    : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
#pragma unroll
    for (int j = 0; j < U; ++j) {
      q8_block(v[j], u + j * groups < total, y + (row[j] * cols + col[j]) * kQ8Bytes, li, aligned);
    }
  }
}

}  // namespace hkb::quant
