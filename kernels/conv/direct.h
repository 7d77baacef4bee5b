// Direct convolutions: conv1d, conv2d, conv_transpose1d, conv_transpose2d, one output a thread
// (grid-stride), summed in the wide accumulator (dtypes.h). The transposed ones of f32, f16 and
// bf16 take the tiles of transpose_tiles.h where they apply, and leave candle's surplus blocks
// idle.
#pragma once

#include "common.h"
#include "transpose_tiles.h"

namespace {

// acc += the sum over c < c_in of s[c * s_step] * w[c * w_step] (the input channels of one tap).
// Not unrolled: clang's unrolled copies of this loop spill 6 SGPRs in conv2d_u32 on gfx90a.
template <typename T>
HKB_DEVICE void add_channels(hkb::wide_acc_t<T>& acc, const T* s, uint64_t s_step, const T* w,
                             uint64_t w_step, uint64_t c_in) {
#pragma unroll 1
  for (uint64_t c = 0; c < c_in; ++c) {
    acc += hkb::to_wide_acc(s[c * s_step]) * hkb::to_wide_acc(w[c * w_step]);
  }
}

// The input index that output o reads through tap k of a transposed conv, or false when
// o + padding - k * dilation is negative, not a multiple of stride, or past the input.
HKB_DEVICE bool transposed_source(uint64_t o, uint64_t k, uint64_t stride, uint64_t padding,
                                  uint64_t dilation, uint64_t in, uint64_t* i) {
  const uint64_t reach = o + padding;
  const uint64_t back = k * dilation;
  if (back > reach) return false;
  const DivMod d = divmod(reach - back, stride);
  if (d.r != 0 || d.q >= in) return false;
  *i = d.q;
  return true;
}

// info = [src dims(3), src strides(3), kernel dims(3), kernel strides(3)].
template <typename T>
__device__ void conv1d(uint64_t l_out, uint64_t stride, uint64_t padding, uint64_t dilation,
                       const size_t* info, const T* src, const T* kernel, T* dst) {
  const size_t* sd = info;
  const size_t* ss = info + 3;
  const size_t* kd = info + 6;
  const size_t* ks = info + 9;
  const uint64_t c_in = sd[1], l_in = sd[2], c_out = kd[0], k_size = kd[2];
  const uint64_t n = sd[0] * c_out * l_out;
  for (uint64_t i = hkb::global_thread_index(); i < n; i += hkb::grid_stride()) {
    const DivMod t = divmod(i, l_out);
    const DivMod bc = divmod(t.q, c_out);
    const T* k_row = kernel + bc.r * ks[0];
    hkb::wide_acc_t<T> acc = 0;
    for (uint64_t k = 0; k < k_size; ++k) {
      const uint64_t pos = (stride * t.r + k) * dilation;
      if (pos < padding || pos - padding >= l_in) continue;
      const T* s = src + bc.q * ss[0] + (pos - padding) * ss[2];
      const T* w = k_row + k * ks[2];
      add_channels(acc, s, ss[1], w, ks[1], c_in);
    }
    dst[i] = hkb::from_acc<T>(acc);
  }
}

// info as conv1d; kernel is (c_in, c_out, k). The tiles (transpose_tiles.h) where they apply.
template <typename T>
__device__ void conv_transpose1d(uint64_t l_out, uint64_t stride, uint64_t padding,
                                 uint64_t dilation, const size_t* info, const T* src,
                                 const T* kernel, T* dst) {
  // Blocks past the busy ones leave before any read (the f32-summed dtypes, transpose_tiles.h).
  const uint32_t busy = convt_tiled_dtype<T>::value ? convt_busy_blocks() : gridDim.x;
  if (blockIdx.x >= busy) return;
  const size_t* sd = info;
  const size_t* ss = info + 3;
  const size_t* kd = info + 6;
  const size_t* ks = info + 9;
  if constexpr (convt_tiled_dtype<T>::value) {
    if (transpose_tiles_apply<T>(3, sd, ss, kd, ks, 1, l_out, stride, padding, dilation)) {
      conv_transpose_tiles<hkb::tuning::kConvTThreadPos1d>(
          convt_geom(info, false, 1, l_out, stride, padding), busy, src, kernel, dst);
      return;
    }
  }
  const uint64_t c_in = sd[1], l_in = sd[2], c_out = kd[1], k_size = kd[2];
  const uint64_t n = sd[0] * c_out * l_out, step = static_cast<uint64_t>(busy) * blockDim.x;
  for (uint64_t i = hkb::global_thread_index(); i < n; i += step) {
    const DivMod t = divmod(i, l_out);
    const DivMod bc = divmod(t.q, c_out);
    hkb::wide_acc_t<T> acc = 0;
    for (uint64_t k = 0; k < k_size; ++k) {
      uint64_t x;
      if (!transposed_source(t.r, k, stride, padding, dilation, l_in, &x)) continue;
      const T* s = src + bc.q * ss[0] + x * ss[2];
      const T* w = kernel + bc.r * ks[1] + k * ks[2];
      add_channels(acc, s, ss[1], w, ks[0], c_in);
    }
    dst[i] = hkb::from_acc<T>(acc);
  }
}

// info = [src dims(4), src strides(4), kernel dims(4), kernel strides(4)]; kernel (c_out, c_in,
// h_k, w_k). The convolutions stay apart: one template for direct and transposed made nvcc spill
// (conv2d_f64) and raised AMD's VGPRs.
template <typename T>
__device__ void conv2d(uint64_t w_out, uint64_t h_out, uint64_t stride, uint64_t padding,
                       uint64_t dilation, const size_t* info, const T* src, const T* kernel,
                       T* dst) {
  const size_t *sd = info, *ss = info + 4, *kd = info + 8, *ks = info + 12;
  const uint64_t c_in = sd[1], h_in = sd[2], w_in = sd[3];
  const uint64_t c_out = kd[0], h_k = kd[2], w_k = kd[3];
  const uint64_t n = sd[0] * c_out * h_out * w_out;
  for (uint64_t i = hkb::global_thread_index(); i < n; i += hkb::grid_stride()) {
    const DivMod xw = divmod(i, w_out);
    const DivMod yh = divmod(xw.q, h_out);
    const DivMod bc = divmod(yh.q, c_out);
    hkb::wide_acc_t<T> acc = 0;
    for (uint64_t ky = 0; ky < h_k; ++ky) {
      const uint64_t y = stride * yh.r + ky * dilation;
      if (y < padding || y - padding >= h_in) continue;
      for (uint64_t kx = 0; kx < w_k; ++kx) {
        const uint64_t x = stride * xw.r + kx * dilation;
        if (x < padding || x - padding >= w_in) continue;
        const T* s = src + bc.q * ss[0] + (y - padding) * ss[2] + (x - padding) * ss[3];
        const T* w = kernel + bc.r * ks[0] + ky * ks[2] + kx * ks[3];
        add_channels(acc, s, ss[1], w, ks[1], c_in);
      }
    }
    dst[i] = hkb::from_acc<T>(acc);
  }
}

// info as conv2d; kernel (c_in, c_out, h_k, w_k). The tiles (transpose_tiles.h) where they apply.
template <typename T>
__device__ void conv_transpose2d(uint64_t w_out, uint64_t h_out, uint64_t stride, uint64_t padding,
                                 uint64_t dilation, const size_t* info, const T* src,
                                 const T* kernel, T* dst) {
  const uint32_t busy = convt_tiled_dtype<T>::value ? convt_busy_blocks() : gridDim.x;
  if (blockIdx.x >= busy) return;
  const size_t *sd = info, *ss = info + 4, *kd = info + 8, *ks = info + 12;
  if constexpr (convt_tiled_dtype<T>::value) {
    if (transpose_tiles_apply<T>(4, sd, ss, kd, ks, h_out, w_out, stride, padding, dilation)) {
      conv_transpose_tiles<hkb::tuning::kConvTThreadPos2d>(
          convt_geom(info, true, h_out, w_out, stride, padding), busy, src, kernel, dst);
      return;
    }
  }
  const uint64_t c_in = sd[1], h_in = sd[2], w_in = sd[3];
  const uint64_t c_out = kd[1], h_k = kd[2], w_k = kd[3];
  const uint64_t n = sd[0] * c_out * h_out * w_out;
  const uint64_t step = static_cast<uint64_t>(busy) * blockDim.x;
  for (uint64_t i = hkb::global_thread_index(); i < n; i += step) {
    const DivMod xw = divmod(i, w_out);
    const DivMod yh = divmod(xw.q, h_out);
    const DivMod bc = divmod(yh.q, c_out);
    hkb::wide_acc_t<T> acc = 0;
    for (uint64_t ky = 0; ky < h_k; ++ky) {
      uint64_t y;
      if (!transposed_source(yh.r, ky, stride, padding, dilation, h_in, &y)) continue;
      for (uint64_t kx = 0; kx < w_k; ++kx) {
        uint64_t x;
        if (!transposed_source(xw.r, kx, stride, padding, dilation, w_in, &x)) continue;
        const T* s = src + bc.q * ss[0] + y * ss[2] + x * ss[3];
        const T* w = kernel + bc.r * ks[1] + ky * ks[2] + kx * ks[3];
        add_channels(acc, s, ss[1], w, ks[0], c_in);
      }
    }
    dst[i] = hkb::from_acc<T>(acc);
  }
}

}  // namespace
