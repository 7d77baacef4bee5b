// avg_pool2d and max_pool2d: one output a thread (grid-stride).
#pragma once

#include "common.h"

namespace {

// Pooling. info = [dims(4), strides(4)]; "w" pools dims[2], "h" pools dims[3].

template <typename T>
HKB_DEVICE T max_of(T a, T b) {
  if constexpr (std::is_same<T, float>::value) {
    return fmaxf(a, b);
  } else if constexpr (std::is_same<T, double>::value) {
    return fmax(a, b);
  } else if constexpr (hkb::is_reduced_float<T>::value) {
    const float fa = hkb::widen(a), fb = hkb::widen(b);
    if (fa != fa) return a;
    if (fb != fb) return b;
    return fb > fa ? b : a;
  } else {
    return b > a ? b : a;
  }
}

struct PoolShape {
  uint64_t n, c, w_in, h_in, w_out, h_out;
};
HKB_DEVICE PoolShape pool_shape(const size_t* info, uint64_t w_k, uint64_t h_k, uint64_t w_stride,
                                uint64_t h_stride) {
  PoolShape p{0, info[1], info[2], info[3], 0, 0};
  if (w_k > p.w_in || h_k > p.h_in || w_stride == 0 || h_stride == 0) return p;
  p.w_out = (p.w_in - w_k) / w_stride + 1;
  p.h_out = (p.h_in - h_k) / h_stride + 1;
  p.n = info[0] * p.c * p.w_out * p.h_out;
  return p;
}

template <typename T, bool kMax>
__device__ void pool2d(uint64_t w_k, uint64_t h_k, uint64_t w_stride, uint64_t h_stride,
                       const size_t* info, const T* src, T* dst) {
  const PoolShape p = pool_shape(info, w_k, h_k, w_stride, h_stride);
  const size_t* st = info + 4;
  for (uint64_t i = hkb::global_thread_index(); i < p.n; i += hkb::grid_stride()) {
    const DivMod oh = divmod(i, p.h_out);
    const DivMod ow = divmod(oh.q, p.w_out);
    const DivMod bc = divmod(ow.q, p.c);
    const T* s = src + bc.q * st[0] + bc.r * st[1];
    // Visits the window's sources that lie inside the input (the window is clipped, not padded).
    const auto for_window = [&](auto&& visit) {
      for (uint64_t a = 0; a < w_k; ++a) {
        const uint64_t x = w_stride * ow.r + a;
        if (x >= p.w_in) continue;
        for (uint64_t b = 0; b < h_k; ++b) {
          const uint64_t y = h_stride * oh.r + b;
          if (y < p.h_in) visit(s[x * st[2] + y * st[3]]);
        }
      }
    };
    if constexpr (kMax) {
      T m = zero<T>();
      bool set = false;
      for_window([&](const T v) {
        m = set ? max_of(m, v) : v;
        set = true;
      });
      dst[i] = m;
    } else {
      hkb::wide_acc_t<T> acc = 0;
      for_window([&](const T v) { acc += hkb::to_wide_acc(v); });
      const double inv = 1.0 / static_cast<double>(w_k * h_k);
      if constexpr (std::is_same<hkb::wide_acc_t<T>, double>::value) {
        dst[i] = static_cast<T>(acc * inv);
      } else if constexpr (std::is_same<hkb::wide_acc_t<T>, float>::value) {
        dst[i] = hkb::from_acc<T>(acc * static_cast<float>(inv));
      } else {
        dst[i] = static_cast<T>(static_cast<float>(acc) * static_cast<float>(inv));
      }
    }
  }
}

}  // namespace
