// im2col1d and col2im1d: one row of l_k outputs, or one output, a thread (grid-stride).
#pragma once

#include "common.h"

namespace {

// rows = b * l_out * c_in; row r writes dst[r * l_k .. r * l_k + l_k). info = [dims(3),
// strides(3)].
template <typename T>
__device__ void im2col1d(uint64_t rows, uint64_t l_out, uint64_t l_k, uint64_t stride,
                         uint64_t padding, uint64_t dilation, const size_t* info, const T* src,
                         T* dst) {
  const uint64_t c_in = info[1], l_in = info[2];
  const uint64_t total = info[0] * l_out * c_in;
  if (rows > total) rows = total;
  for (uint64_t r = hkb::global_thread_index(); r < rows; r += hkb::grid_stride()) {
    const DivMod c = divmod(r, c_in);
    const DivMod bl = divmod(c.q, l_out);
    const T* s = src + bl.q * info[3] + c.r * info[4];
    T* d = dst + r * l_k;
    for (uint64_t k = 0; k < l_k; ++k) {
      const uint64_t x = bl.r * stride + k * dilation;
      d[k] = (x >= padding && x - padding < l_in) ? s[(x - padding) * info[5]] : zero<T>();
    }
  }
}

template <typename T>
__device__ void col2im1d(uint64_t n, uint64_t l_out, uint64_t l_in, uint64_t c_out, uint64_t k_size,
                         uint64_t stride, const T* src, T* dst) {
  for (uint64_t i = hkb::global_thread_index(); i < n; i += hkb::grid_stride()) {
    const DivMod l = divmod(i, l_out);
    const DivMod bc = divmod(l.q, c_out);
    const T* s = src + (bc.q * l_in * c_out + bc.r) * k_size;
    const DivMod ik = divmod(l.r, stride);
    hkb::wide_acc_t<T> acc = 0;
    // Taps k = l - x * stride for x = l / stride, l / stride - 1, ... while k < k_size.
    uint64_t x = ik.q, k = ik.r;
    while (k < k_size) {
      if (x < l_in) acc += hkb::to_wide_acc(s[x * c_out * k_size + k]);
      if (x == 0) break;
      --x;
      k += stride;
    }
    dst[i] = hkb::from_acc<T>(acc);
  }
}

}  // namespace
