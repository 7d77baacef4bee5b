// Rotary embeddings rope_i, rope and rope_thd. One pair per loop step; indices in 64 bits with
// 32-bit divisions while they fit (hkb::divmod).
#pragma once

#include "../common/elementwise.h"

namespace {

template <typename T>
HKB_DEVICE void rotate(const T* src, const T* cos, const T* sin, T* dst, uint64_t i1, uint64_t i2,
                       uint64_t cs) {
  const auto a = hkb::widen(src[i1]);
  const auto b = hkb::widen(src[i2]);
  const auto c = hkb::widen(cos[cs]);
  const auto s = hkb::widen(sin[cs]);
  dst[i1] = hkb::narrow<T>(a * c - b * s);
  dst[i2] = hkb::narrow<T>(a * s + b * c);
}

// Interleaved pairs (x[2i], x[2i+1]); cos/sin index = pair index within a (b, h) row of td/2.
template <typename T>
__device__ void rope_i(const T* src, const T* cos, const T* sin, T* dst, uint32_t bh, uint32_t td,
                       uint32_t stride_b) {
  const uint32_t half_td = td / 2;
  if (half_td == 0) return;
  const uint64_t pairs = static_cast<uint64_t>(bh) * td / 2;
  const uint64_t step = hkb::grid_stride();
  for (uint64_t p = hkb::global_thread_index(); p < pairs; p += step) {
    uint64_t cs = hkb::divmod(p, half_td).r;
    if (stride_b != 0) cs += hkb::divmod(2 * p, stride_b).q * half_td;
    rotate(src, cos, sin, dst, 2 * p, 2 * p + 1, cs);
  }
}

// Halves (x[i], x[i + d/2]) of each (b, h, t) vector of d; src is (b, h, t, d).
template <typename T>
__device__ void rope(const T* src, const T* cos, const T* sin, T* dst, uint32_t bh, uint32_t td,
                     uint32_t d, uint32_t stride_b) {
  const uint32_t half_td = td / 2;
  const uint32_t half_d = d / 2;
  if (half_td == 0 || half_d == 0) return;
  const uint64_t pairs = static_cast<uint64_t>(bh) * td / 2;
  const uint64_t step = hkb::grid_stride();
  for (uint64_t p = hkb::global_thread_index(); p < pairs; p += step) {
    const hkb::DivMod bh_td = hkb::divmod(p, half_td);
    const hkb::DivMod t_d = hkb::divmod(bh_td.r, half_d);
    const uint64_t i1 = bh_td.q * td + t_d.q * d + t_d.r;
    uint64_t cs = bh_td.r;  // = i_t * d/2 + i_d
    if (stride_b != 0) cs += hkb::divmod(2 * p, stride_b).q * half_td;
    rotate(src, cos, sin, dst, i1, i1 + half_d, cs);
  }
}

// Halves of each (b, t, h) vector of d; src is (b, t, h, d), cos/sin are (t, d/2) or (b, t, d/2).
template <typename T>
__device__ void rope_thd(const T* src, const T* cos, const T* sin, T* dst, uint32_t b, uint32_t t,
                         uint32_t h, uint32_t d, uint32_t stride_b) {
  const uint32_t half_d = d / 2;
  if (half_d == 0 || t == 0 || h == 0) return;
  const uint64_t pairs = static_cast<uint64_t>(b) * t * h * d / 2;
  const uint64_t half_td = static_cast<uint64_t>(t) * d / 2;
  const uint64_t step = hkb::grid_stride();
  for (uint64_t p = hkb::global_thread_index(); p < pairs; p += step) {
    const hkb::DivMod bth_d = hkb::divmod(p, half_d);
    const uint64_t bt = hkb::divmod(bth_d.q, h).q;
    const uint64_t i_t = hkb::divmod(bt, t).r;
    const uint64_t i1 = bth_d.q * d + bth_d.r;
    uint64_t cs = i_t * half_d + bth_d.r;
    if (stride_b != 0) cs += hkb::divmod(2 * p, stride_b).q * half_td;
    rotate(src, cos, sin, dst, i1, i1 + half_d, cs);
  }
}

}  // namespace
