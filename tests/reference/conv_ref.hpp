// CPU references of the CONV module in float64 (integers: exact, with the wrap-around of the
// type). Each returns the expected values as doubles plus, per output, the sum of the magnitudes
// of the terms that made it (the scale of the accumulation error a float kernel may add) and the
// number of terms. Inputs are read through a strided 4-D view (1-D ops use the last three dims).
#pragma once

#include "dtypes.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ref {

template <typename T>
struct View4 {
  const T* base;  // already offset by the view's start
  size_t dims[4];
  size_t strides[4];
  T at(size_t a, size_t b, size_t c, size_t d) const {
    return base[a * strides[0] + b * strides[1] + c * strides[2] + d * strides[3]];
  }
};

struct Expect {
  std::vector<double> value;
  std::vector<double> mag;
  double terms = 1;
  void push(double v, double m) {
    value.push_back(v);
    mag.push_back(m);
  }
};

// A sum of products as the kernel's type does it: floats exact in double, integers in 64 bits
// wrapped to T at the end.
template <typename T>
struct Accum {
  double sum = 0, mag = 0;
  uint64_t isum = 0;
  void add_product(T a, T b) {
    if constexpr (is_float_v<T>) {
      const double p = to_double(a) * to_double(b);
      sum += p;
      mag += std::fabs(p);
    } else {
      isum += static_cast<uint64_t>(a) * static_cast<uint64_t>(b);
    }
  }
  void add(T a) {
    if constexpr (is_float_v<T>) {
      sum += to_double(a);
      mag += std::fabs(to_double(a));
    } else {
      isum += static_cast<uint64_t>(a);
    }
  }
  void emit(Expect& e) const {
    if constexpr (is_float_v<T>) {
      e.push(sum, mag);
    } else {
      e.push(static_cast<double>(static_cast<T>(isum)), 0);
    }
  }
};

// conv1d over src (b, c_in, l_in) = dims[1..3] of `src`, kernel (c_out, c_in, k). Keeps candle's
// position (stride * l + k) * dilation - padding.
template <typename T>
Expect conv1d(const View4<T>& src, const View4<T>& k, size_t l_out, size_t stride, size_t padding,
              size_t dilation) {
  Expect e;
  const size_t b_n = src.dims[1], c_in = src.dims[2], l_in = src.dims[3];
  const size_t c_out = k.dims[1], ks = k.dims[3];
  e.terms = static_cast<double>(c_in * ks);
  for (size_t b = 0; b < b_n; ++b)
    for (size_t co = 0; co < c_out; ++co)
      for (size_t l = 0; l < l_out; ++l) {
        Accum<T> acc;
        for (size_t kk = 0; kk < ks; ++kk) {
          const long long pos = static_cast<long long>((stride * l + kk) * dilation) -
                                static_cast<long long>(padding);
          if (pos < 0 || pos >= static_cast<long long>(l_in)) continue;
          for (size_t c = 0; c < c_in; ++c) {
            acc.add_product(src.at(0, b, c, static_cast<size_t>(pos)), k.at(0, co, c, kk));
          }
        }
        acc.emit(e);
      }
  return e;
}

// conv2d: src (b, c_in, h, w), kernel (c_out, c_in, h_k, w_k).
template <typename T>
Expect conv2d(const View4<T>& src, const View4<T>& k, size_t h_out, size_t w_out, size_t stride,
              size_t padding, size_t dilation) {
  Expect e;
  const size_t c_in = src.dims[1], h_in = src.dims[2], w_in = src.dims[3];
  const size_t c_out = k.dims[0], hk = k.dims[2], wk = k.dims[3];
  e.terms = static_cast<double>(c_in * hk * wk);
  for (size_t b = 0; b < src.dims[0]; ++b)
    for (size_t co = 0; co < c_out; ++co)
      for (size_t y = 0; y < h_out; ++y)
        for (size_t x = 0; x < w_out; ++x) {
          Accum<T> acc;
          for (size_t ky = 0; ky < hk; ++ky)
            for (size_t kx = 0; kx < wk; ++kx) {
              const long long sy = static_cast<long long>(y * stride + ky * dilation) -
                                   static_cast<long long>(padding);
              const long long sx = static_cast<long long>(x * stride + kx * dilation) -
                                   static_cast<long long>(padding);
              if (sy < 0 || sy >= static_cast<long long>(h_in)) continue;
              if (sx < 0 || sx >= static_cast<long long>(w_in)) continue;
              for (size_t c = 0; c < c_in; ++c) {
                acc.add_product(src.at(b, c, static_cast<size_t>(sy), static_cast<size_t>(sx)),
                                k.at(co, c, ky, kx));
              }
            }
          acc.emit(e);
        }
  return e;
}

// Transposed conv written as a scatter (the opposite direction of the kernel's gather): every
// input position i and tap k adds into output i * stride + k * dilation - padding.
// 1-D uses h = 1 with no padding along h: src (b, c_in, 1, l), kernel (c_in, c_out, 1, k).
template <typename T>
Expect conv_transpose2d(const View4<T>& src, const View4<T>& k, size_t h_out, size_t w_out,
                        size_t stride, size_t padding, size_t dilation, bool pad_h = true) {
  const long long padding_h = pad_h ? static_cast<long long>(padding) : 0;
  const size_t b_n = src.dims[0], c_in = src.dims[1], h_in = src.dims[2], w_in = src.dims[3];
  const size_t c_out = k.dims[1], hk = k.dims[2], wk = k.dims[3];
  const size_t n = b_n * c_out * h_out * w_out;
  std::vector<Accum<T>> acc(n);
  for (size_t b = 0; b < b_n; ++b)
    for (size_t c = 0; c < c_in; ++c)
      for (size_t iy = 0; iy < h_in; ++iy)
        for (size_t ix = 0; ix < w_in; ++ix)
          for (size_t ky = 0; ky < hk; ++ky)
            for (size_t kx = 0; kx < wk; ++kx) {
              const long long oy = static_cast<long long>(iy * stride + ky * dilation) - padding_h;
              const long long ox = static_cast<long long>(ix * stride + kx * dilation) -
                                   static_cast<long long>(padding);
              if (oy < 0 || oy >= static_cast<long long>(h_out)) continue;
              if (ox < 0 || ox >= static_cast<long long>(w_out)) continue;
              for (size_t co = 0; co < c_out; ++co) {
                const size_t o = ((b * c_out + co) * h_out + static_cast<size_t>(oy)) * w_out +
                                 static_cast<size_t>(ox);
                acc[o].add_product(src.at(b, c, iy, ix), k.at(c, co, ky, kx));
              }
            }
  Expect e;
  e.terms = static_cast<double>(c_in * hk * wk);
  for (const auto& a : acc) a.emit(e);
  return e;
}

// im2col: dst (b, h_out, w_out, c_in, h_k, w_k), 0 in the padding. Copies: exact.
template <typename T>
Expect im2col(const View4<T>& src, size_t h_out, size_t w_out, size_t hk, size_t wk, size_t stride,
              size_t padding, size_t dilation) {
  Expect e;
  for (size_t b = 0; b < src.dims[0]; ++b)
    for (size_t y = 0; y < h_out; ++y)
      for (size_t x = 0; x < w_out; ++x)
        for (size_t c = 0; c < src.dims[1]; ++c)
          for (size_t ky = 0; ky < hk; ++ky)
            for (size_t kx = 0; kx < wk; ++kx) {
              const long long sy = static_cast<long long>(y * stride + ky * dilation) -
                                   static_cast<long long>(padding);
              const long long sx = static_cast<long long>(x * stride + kx * dilation) -
                                   static_cast<long long>(padding);
              double v = 0;
              if (sy >= 0 && sy < static_cast<long long>(src.dims[2]) && sx >= 0 &&
                  sx < static_cast<long long>(src.dims[3])) {
                v = to_double(src.at(b, c, static_cast<size_t>(sy), static_cast<size_t>(sx)));
              }
              e.push(v, 0);
            }
  return e;
}

// im2col1d over src (b, c_in, l) = dims[1..3]: dst (b, l_out, c_in, l_k).
template <typename T>
Expect im2col1d(const View4<T>& src, size_t l_out, size_t lk, size_t stride, size_t padding,
                size_t dilation) {
  Expect e;
  for (size_t b = 0; b < src.dims[1]; ++b)
    for (size_t l = 0; l < l_out; ++l)
      for (size_t c = 0; c < src.dims[2]; ++c)
        for (size_t k = 0; k < lk; ++k) {
          const long long s =
              static_cast<long long>(l * stride + k * dilation) - static_cast<long long>(padding);
          double v = 0;
          if (s >= 0 && s < static_cast<long long>(src.dims[3])) {
            v = to_double(src.at(0, b, c, static_cast<size_t>(s)));
          }
          e.push(v, 0);
        }
  return e;
}

// col2im1d: col (b, l_in, c_out, k) contiguous, dst (b, c_out, l_out), l = i * stride + k.
template <typename T>
Expect col2im1d(const std::vector<T>& col, size_t b_n, size_t l_in, size_t c_out, size_t ks,
                size_t stride) {
  const size_t l_out = (l_in - 1) * stride + ks;
  std::vector<Accum<T>> acc(b_n * c_out * l_out);
  for (size_t b = 0; b < b_n; ++b)
    for (size_t i = 0; i < l_in; ++i)
      for (size_t c = 0; c < c_out; ++c)
        for (size_t k = 0; k < ks; ++k) {
          acc[(b * c_out + c) * l_out + i * stride + k].add(
              col[((b * l_in + i) * c_out + c) * ks + k]);
        }
  Expect e;
  e.terms = static_cast<double>(ks);
  for (const auto& a : acc) a.emit(e);
  return e;
}

// Pool output size along one dim (no padding).
inline size_t pool_out(size_t in, size_t k, size_t stride) {
  return (in - k) / stride + 1;
}

// avg_pool2d: "w" (w_k, w_stride) pools dims[2], "h" pools dims[3]. Floats: the exact mean times
// the kernel's scale (float(1 / n) for f32/f16/bf16, 1 / n for f64); integers: truncation of
// float(sum) * float(1 / n) as the kernel does.
template <typename T>
Expect avg_pool2d(const View4<T>& src, size_t wk, size_t hk, size_t ws, size_t hs) {
  Expect e;
  const size_t wo = pool_out(src.dims[2], wk, ws), ho = pool_out(src.dims[3], hk, hs);
  const double inv = 1.0 / static_cast<double>(wk * hk);
  e.terms = static_cast<double>(wk * hk);
  for (size_t b = 0; b < src.dims[0]; ++b)
    for (size_t c = 0; c < src.dims[1]; ++c)
      for (size_t x = 0; x < wo; ++x)
        for (size_t y = 0; y < ho; ++y) {
          double sum = 0, mag = 0;
          uint64_t isum = 0;
          for (size_t a = 0; a < wk; ++a)
            for (size_t d = 0; d < hk; ++d) {
              const T v = src.at(b, c, x * ws + a, y * hs + d);
              sum += to_double(v);
              mag += std::fabs(to_double(v));
              if constexpr (!is_float_v<T>) isum += static_cast<uint64_t>(v);
            }
          if constexpr (std::is_same_v<T, double>) {
            e.push(sum * inv, mag * inv);
          } else if constexpr (is_float_v<T>) {
            const double scale = static_cast<float>(inv);
            e.push(sum * scale, mag * scale);
          } else {
            const float r = static_cast<float>(isum) * static_cast<float>(inv);
            e.push(static_cast<double>(static_cast<T>(r)), 0);
          }
        }
  return e;
}

// max_pool2d: f32/f64 skip NaN (NaN only when the whole window is NaN), f16/bf16 give NaN when
// any element is NaN, integers plain max.
template <typename T>
Expect max_pool2d(const View4<T>& src, size_t wk, size_t hk, size_t ws, size_t hs) {
  constexpr bool kPropagateNan = std::is_same_v<T, f16> || std::is_same_v<T, bf16>;
  Expect e;
  const size_t wo = pool_out(src.dims[2], wk, ws), ho = pool_out(src.dims[3], hk, hs);
  for (size_t b = 0; b < src.dims[0]; ++b)
    for (size_t c = 0; c < src.dims[1]; ++c)
      for (size_t x = 0; x < wo; ++x)
        for (size_t y = 0; y < ho; ++y) {
          double m = -std::numeric_limits<double>::infinity();
          bool any_nan = false, all_nan = true;
          for (size_t a = 0; a < wk; ++a)
            for (size_t d = 0; d < hk; ++d) {
              const double v = to_double(src.at(b, c, x * ws + a, y * hs + d));
              if (std::isnan(v)) {
                any_nan = true;
                continue;
              }
              all_nan = false;
              m = std::max(m, v);
            }
          const bool nan = kPropagateNan ? any_nan : all_nan;
          e.push(nan ? std::numeric_limits<double>::quiet_NaN() : m, 0);
        }
  return e;
}

// upsample_nearest2d: "w" is dims[2]. Source index min(trunc(o * scale), in - 1), the product in
// double (the scales are the host's in / out ratios).
template <typename T>
Expect upsample_nearest2d(const View4<T>& src, size_t w_out, size_t h_out, double w_scale,
                          double h_scale) {
  Expect e;
  for (size_t b = 0; b < src.dims[0]; ++b)
    for (size_t c = 0; c < src.dims[1]; ++c)
      for (size_t x = 0; x < w_out; ++x)
        for (size_t y = 0; y < h_out; ++y) {
          const size_t sx =
              std::min(static_cast<size_t>(static_cast<double>(x) * w_scale), src.dims[2] - 1);
          const size_t sy =
              std::min(static_cast<size_t>(static_cast<double>(y) * h_scale), src.dims[3] - 1);
          e.push(to_double(src.at(b, c, sx, sy)), 0);
        }
  return e;
}

// PyTorch's upsample_bilinear2d (aten/src/ATen/native/UpSample.h: area_pixel_compute_scale,
// area_pixel_compute_source_index, and the two-tap weights), NCHW: h is dims[2], w is dims[3].
// `scale_factor` <= 0 means none given.
inline double bilinear_scale(size_t in, size_t out, bool align_corners, double scale_factor) {
  if (align_corners) {
    return out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  }
  return scale_factor > 0 ? 1.0 / scale_factor : static_cast<double>(in) / static_cast<double>(out);
}
struct Taps {
  size_t i0, i1;
  double w0, w1;
};
inline Taps bilinear_taps(size_t o, double scale, bool align_corners, size_t in) {
  double src =
      align_corners ? scale * static_cast<double>(o) : scale * (static_cast<double>(o) + 0.5) - 0.5;
  if (src < 0) src = 0;
  Taps t;
  t.i0 = std::min(static_cast<size_t>(src), in - 1);
  t.i1 = t.i0 < in - 1 ? t.i0 + 1 : t.i0;
  // At the clamped edge both taps are the last pixel: weight 1 on it (PyTorch's weights sum to
  // 1 there up to rounding).
  t.w1 = t.i1 == t.i0 ? 0.0 : src - static_cast<double>(static_cast<size_t>(src));
  t.w0 = 1.0 - t.w1;
  return t;
}
template <typename T>
Expect upsample_bilinear2d(const View4<T>& src, size_t h_out, size_t w_out, bool align_corners,
                           double scale_h, double scale_w) {
  Expect e;
  e.terms = 4;
  const double sh = bilinear_scale(src.dims[2], h_out, align_corners, scale_h);
  const double sw = bilinear_scale(src.dims[3], w_out, align_corners, scale_w);
  for (size_t b = 0; b < src.dims[0]; ++b)
    for (size_t c = 0; c < src.dims[1]; ++c)
      for (size_t y = 0; y < h_out; ++y)
        for (size_t x = 0; x < w_out; ++x) {
          const Taps ty = bilinear_taps(y, sh, align_corners, src.dims[2]);
          const Taps tx = bilinear_taps(x, sw, align_corners, src.dims[3]);
          const double v00 = to_double(src.at(b, c, ty.i0, tx.i0));
          const double v01 = to_double(src.at(b, c, ty.i0, tx.i1));
          const double v10 = to_double(src.at(b, c, ty.i1, tx.i0));
          const double v11 = to_double(src.at(b, c, ty.i1, tx.i1));
          const double v =
              ty.w0 * (tx.w0 * v00 + tx.w1 * v01) + ty.w1 * (tx.w0 * v10 + tx.w1 * v11);
          const double mag = std::max(std::max(std::fabs(v00), std::fabs(v01)),
                                      std::max(std::fabs(v10), std::fabs(v11)));
          e.push(v, mag);
        }
  return e;
}

}  // namespace ref
