// dequantize_mul_mat_vec_<format>: dst[row] = weight row `row` (ncols values) . y (ncols f32),
// candle's grid (nrows) of blocks (32, 1): one GPU block a row. The row's blocks are cut into
// slices (quantized/dmmv_decode.h) dealt to kDmmvLanes lanes: lane v always takes slice v % kSlices
// of every (kDmmvLanes / kSlices)-th block, so its scale decoding and addressing stay fixed, and
// each 8 neighbouring lanes read whole 128-byte lines of y (4 lines a warp-wide 16-byte load). A
// thread is a lane (a block of fewer threads gives a thread several, one of more idles the rest),
// and loads the weights of tuning::kDmmvValues values' slices before decoding the first. dst is
// stored (candle's DMMV stores too). Blocks of any size up to 64 threads work, with a reduction of
// xor shuffles of width 32 over the block's first 32 threads (on a 64-lane CDNA wave they are its
// lower half; the others do not exist) and through shared memory for a second 32-thread row, or
// through shared memory alone for a block that is not whole 32-thread rows.
#pragma once

#include "quantized/dmmv_decode.h"

namespace hkb::quant {

// Quad q (4 consecutive floats) of y from p: one 16-byte load where y is 16-byte aligned (a buffer
// start), else four.
template <bool kVec>
struct YQuads {
  const float* p;
  HKB_DEVICE float4 operator[](int q) const {
    if constexpr (kVec) {
      return reinterpret_cast<const float4*>(p)[q];
    } else {
      return make_float4(p[4 * q], p[4 * q + 1], p[4 * q + 2], p[4 * q + 3]);
    }
  }
};

constexpr int kDmmvMaxThreads = 64;
// Virtual lanes: candle's 32 threads take one each; a compile-time count makes a lane's steps
// immediate offsets (a block's threads past 32 find none and add nothing).
constexpr int kDmmvLanes = 32;

// Virtual lane v's share of the row w (nb blocks) . y.
template <typename D, bool kVec>
HKB_DEVICE float dmmv_lane(const uint8_t* w, const float* y, int nb, int v) {
  constexpr int kStep = kDmmvLanes / D::kSlices;  // blocks from one of v's slices to the next
  constexpr int kRound =
      hkb::tuning::kDmmvValues > D::kSliceValues ? hkb::tuning::kDmmvValues / D::kSliceValues : 1;
  constexpr size_t kWStep = static_cast<size_t>(kStep) * D::kBytes;
  constexpr size_t kYStep = static_cast<size_t>(kStep) * D::kValues;
  const int s = static_cast<int>(static_cast<unsigned>(v) % D::kSlices);  // v >= 0: a mask
  int b = static_cast<int>(static_cast<unsigned>(v) / D::kSlices);
  w += static_cast<size_t>(b) * D::kBytes;
  y += static_cast<size_t>(b) * D::kValues + 4 * D::quad0(s);
  float acc = 0.0f;
  for (; b + (kRound - 1) * kStep < nb; b += kRound * kStep) {
    typename D::Raw raw[kRound];
#pragma unroll
    for (int u = 0; u < kRound; ++u) raw[u] = D::load(w + u * kWStep, s);
#pragma unroll
    for (int u = 0; u < kRound; ++u) acc = D::dot(raw[u], s, YQuads<kVec>{y + u * kYStep}, acc);
    w += kRound * kWStep;
    y += kRound * kYStep;
  }
  for (; b < nb; b += kStep, w += kWStep, y += kYStep) {
    acc = D::dot(D::load(w, s), s, YQuads<kVec>{y}, acc);
  }
  return acc;
}

template <typename F>
HKB_DEVICE void dmmv(const void* __restrict__ vx, const float* __restrict__ y,
                     float* __restrict__ dst, int ncols, int nrows) {
  using D = Dmmv<F>;
  __shared__ float partial[kDmmvMaxThreads];
  const int row = static_cast<int>(blockIdx.x);
  if (row >= nrows) return;
  const int tid = static_cast<int>(threadIdx.x + blockDim.x * threadIdx.y);
  const int threads = static_cast<int>(blockDim.x * blockDim.y);
  const int nb = ncols / D::kValues;
  const uint8_t* w = static_cast<const uint8_t*>(vx) + static_cast<size_t>(nb) * D::kBytes * row;

  const bool vec = (reinterpret_cast<uintptr_t>(y) & 15u) == 0;  // uniform: a branch, not a split
  float acc = 0.0f;
  for (int v = tid; v < kDmmvLanes; v += threads) {
    acc += vec ? dmmv_lane<D, true>(w, y, nb, v) : dmmv_lane<D, false>(w, y, nb, v);
  }
  if (threads % 32 == 0) {
#pragma unroll
    for (int m = 16; m > 0; m >>= 1) acc += shfl_xor_first(acc, m, 32);
    if (threads == 32) {
      if (tid == 0) dst[row] = acc;
      return;
    }
    if ((tid & 31) == 0) partial[tid >> 5] = acc;
    block_sync();
    if (tid == 0) dst[row] = partial[0] + partial[1];
    return;
  }
  // Not whole rows of 32 lanes: the shuffles would read lanes that do not exist.
  partial[tid] = acc;
  block_sync();
  if (tid == 0) {
    float sum = 0.0f;
    for (int i = 0; i < threads; ++i) sum += partial[i];
    dst[row] = sum;
  }
}

}  // namespace hkb::quant
