// What every im2col strategy shares: the launch's shape in its index type, the test that it fits
// 32 bits, output e computed on its own, the busy blocks, and the "elements" strategy.
#pragma once

#include "common.h"

namespace {

// Output e of im2col, with I as the index type and the caller's bounds (see im2col).
template <typename T, typename I>
HKB_DEVICE T im2col_at(I e, I h_out, I w_out, I h_k, I w_k, I stride, I padding, I dilation, I c_in,
                       I h_in, I w_in, const I* s, const T* src) {
  const I kk = h_k * w_k;
  const I p = e / (c_in * kk), q = e - p * (c_in * kk);
  const I c = q / kk, r = q - c * kk;
  const I kh = r / w_k, kw = r - kh * w_k;
  const I t = p / w_out, b = t / h_out;
  const I y = (t - b * h_out) * stride - padding + kh * dilation;
  const I x = (p - t * w_out) * stride - padding + kw * dilation;
  return y < h_in && x < w_in ? src[b * s[0] + c * s[1] + y * s[2] + x * s[3]] : zero<T>();
}

// An im2col launch in the body's index type I: uint32_t when every index and offset fits (the
// caller checks). A row or column left of the padding wraps around to a value above h_in / w_in
// (the caller's bounds make that so), which one unsigned comparison rejects.
template <typename I>
struct Im2colShape {
  I n, h_out, w_out, h_k, w_k, stride, padding, dilation, c_in, h_in, w_in;
  I s[4];
};

// The shape of an im2col launch of n outputs in index type I (the caller checks that every value
// fits I); info = [src dims(4), src strides(4)].
template <typename I>
HKB_DEVICE Im2colShape<I> im2col_shape(uint64_t n, uint64_t h_out, uint64_t w_out, uint64_t h_k,
                                       uint64_t w_k, uint64_t stride, uint64_t padding,
                                       uint64_t dilation, const size_t* info) {
  return {static_cast<I>(n),
          static_cast<I>(h_out),
          static_cast<I>(w_out),
          static_cast<I>(h_k),
          static_cast<I>(w_k),
          static_cast<I>(stride),
          static_cast<I>(padding),
          static_cast<I>(dilation),
          static_cast<I>(info[1]),
          static_cast<I>(info[2]),
          static_cast<I>(info[3]),
          {static_cast<I>(info[4]), static_cast<I>(info[5]), static_cast<I>(info[6]),
           static_cast<I>(info[7])}};
}

// The outputs an im2col launch writes: n, but no more than the info dims imply.
HKB_DEVICE uint64_t im2col_outputs(uint64_t n, uint64_t h_out, uint64_t w_out, uint64_t h_k,
                                   uint64_t w_k, const size_t* info) {
  const uint64_t total = info[0] * h_out * w_out * info[1] * h_k * w_k;
  return n < total ? n : total;
}

// Whether every index and offset of an im2col of n > 0 outputs fits the 32-bit bodies (a row or
// column left of the padding wraps around to a value above h_in / w_in, which one unsigned
// comparison rejects). info = [src dims(4), src strides(4)].
HKB_DEVICE bool im2col_fits32(uint64_t n, uint64_t h_out, uint64_t w_out, uint64_t h_k,
                              uint64_t w_k, uint64_t stride, uint64_t padding, uint64_t dilation,
                              const size_t* info) {
  const uint64_t b = info[0], c_in = info[1], h_in = info[2], w_in = info[3];
  const uint64_t total = b * h_out * w_out * c_in * h_k * w_k;
  const uint64_t lim = 0xFFFFFFFFull - 64;  // the largest value any index expression reaches
  const uint64_t max_y = (h_out - 1) * stride + (h_k - 1) * dilation;
  const uint64_t max_x = (w_out - 1) * stride + (w_k - 1) * dilation;
  const uint64_t max_off =
      (b - 1) * info[4] + (c_in - 1) * info[5] + (h_in - 1) * info[6] + (w_in - 1) * info[7];
  return n <= total && total <= lim && max_y <= lim && max_x <= lim && max_off <= lim &&
         h_in + padding <= lim && w_in + padding <= lim && stride <= lim && dilation <= lim &&
         padding <= lim;
}

// The busy blocks of the whole-team strategies (at least one, at most the grid).
HKB_DEVICE uint32_t im2col_busy_blocks() {
  uint32_t cap = hkb::multiprocessors() * hkb::tuning::kIm2colQuarters / 4;
  if (cap == 0) cap = 1;
  return gridDim.x < cap ? gridDim.x : cap;
}

// Strategy "elements": output by output over the threads of the busy blocks, in either index type
// (the launches no other strategy takes).
template <typename T, typename I>
HKB_DEVICE void im2col_elements(const Im2colShape<I>& a, uint32_t busy, const T* src, T* dst) {
  const uint64_t step = static_cast<uint64_t>(busy) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.n;
       i += step) {
    const I e = static_cast<I>(i);
    dst[e] = im2col_at(e, a.h_out, a.w_out, a.h_k, a.w_k, a.stride, a.padding, a.dilation, a.c_in,
                       a.h_in, a.w_in, a.s, src);
  }
}

}  // namespace
