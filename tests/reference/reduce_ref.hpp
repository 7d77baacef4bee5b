// CPU references of the REDUCE family, written from the contract at the top of kernels/reduce.hip:
// floats in double, integers with wrap-around, and the tolerances the GPU results are held to.
#pragma once

#include "dtypes.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

namespace ref {

// Machine epsilon (2^-mantissa bits) of the type a kernel computes in for storage type T: f32 for
// f16/bf16/f32, f64 for f64.
template <typename T>
double compute_eps() {
  return std::is_same_v<T, double> ? std::ldexp(1.0, -52) : std::ldexp(1.0, -23);
}

// Whether a GPU float result `got` matches the exact value `want` within one rounding to T plus
// `abs_tol`. NaN matches NaN; infinities must match exactly.
template <typename T>
bool close_to(T got, double want, double abs_tol) {
  const double g = to_double(got);
  if (std::isnan(want) || std::isnan(g)) return std::isnan(want) && std::isnan(g);
  if (std::isinf(g) && !std::isinf(want)) {
    // Overflow is right when the exact value, moved by the tolerance towards g, rounds to g in T.
    const double edge = want + std::copysign(abs_tol + ulp_at<T>(std::fabs(want)), g);
    return to_double(from_double<T>(edge)) == g;
  }
  if (std::isinf(want) || std::isinf(g)) return g == want;
  return std::fabs(g - want) <= ulp_at<T>(std::fabs(want)) + abs_tol;
}

// IEEE 754-2019 maximum/minimum: NaN wins, -0 < +0.
inline bool ieee_less(double a, double b) {
  if (a < b) return true;
  if (a == b) return std::signbit(a) && !std::signbit(b);
  return false;
}

enum class FastOp { sum, min, max, argmin, argmax };

// Result of a fast_* reduction over one group, as double (values) or index.
struct FastResult {
  double value = 0;    // floats
  int64_t ivalue = 0;  // integers (wrapped to T's width)
  uint32_t index = 0;  // argmin/argmax
};

template <typename T>
FastResult reduce_group(FastOp op, const std::vector<T>& group) {
  FastResult r;
  if constexpr (is_float_v<T>) {
    if (op == FastOp::sum) {
      for (const T& x : group) r.value += to_double(x);
      return r;
    }
    const bool want_max = op == FastOp::max || op == FastOp::argmax;
    double best = want_max ? -INFINITY : INFINITY;
    int64_t best_i = -1;
    for (size_t j = 0; j < group.size(); ++j) {
      const double x = to_double(group[j]);
      if (best_i >= 0 && std::isnan(best)) break;  // the first NaN wins
      const bool wins = std::isnan(x) || (want_max ? ieee_less(best, x) : ieee_less(x, best)) ||
                        (best_i < 0 && x == best);
      if (wins) {
        best = x;
        best_i = static_cast<int64_t>(j);
      }
    }
    r.value = best;
    r.index = best_i < 0 ? 0xFFFFFFFFu : static_cast<uint32_t>(best_i);
    return r;
  } else {
    using U = std::make_unsigned_t<T>;
    if (op == FastOp::sum) {
      U s = 0;
      for (const T& x : group) s = static_cast<U>(s + static_cast<U>(x));
      r.ivalue = static_cast<int64_t>(static_cast<T>(s));
      return r;
    }
    const bool want_max = op == FastOp::max || op == FastOp::argmax;
    T best = want_max ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
    int64_t best_i = -1;
    for (size_t j = 0; j < group.size(); ++j) {
      const T x = group[j];
      const bool wins = want_max ? (x > best) : (x < best);
      if (wins || (best_i < 0 && x == best)) {
        best = x;
        best_i = static_cast<int64_t>(j);
      }
    }
    r.ivalue = static_cast<int64_t>(best);
    r.index = best_i < 0 ? 0xFFFFFFFFu : static_cast<uint32_t>(best_i);
    return r;
  }
}

// Softmax of one row: exp(x - max) / sum, with the NaN/inf rules of the kernel. exp and the sum
// are in long double and the sum is compensated (Neumaier): a plain double sum of 65537 terms is
// off by tens of ulp of a double, as much as the tolerance of an f64 kernel.
template <typename T>
std::vector<double> softmax_row(const T* x, size_t n) {
  std::vector<long double> v(n);
  std::vector<double> y(n);
  long double m = -INFINITY;
  bool nan = false;
  for (size_t j = 0; j < n; ++j) {
    v[j] = to_double(x[j]);
    if (std::isnan(v[j])) nan = true;
    if (v[j] > m) m = v[j];
  }
  long double s = 0, c = 0;
  for (size_t j = 0; j < n; ++j) {
    const long double t = std::exp(v[j] - m);  // inf - inf, -inf - -inf give NaN
    const long double u = s + t;
    c += std::fabs(s) >= std::fabs(t) ? (s - u) + t : (t - u) + s;
    s = u;
  }
  s += c;
  for (size_t j = 0; j < n; ++j) {
    y[j] = nan ? NAN : static_cast<double>(std::exp(v[j] - m) / s);
  }
  return y;
}

// sum_i exp(x_i - max) * |x_i - max| / sum_i exp(x_i - max) over the finite entries: the
// exp-weighted distance to the row maximum, which bounds the relative error a rounded argument
// x_i - max' (max' between x_i and max) gives the sum of exp(x_i - max'). 0 for a row without a
// finite entry.
template <typename T>
double softmax_weighted_spread(const T* x, size_t n) {
  double m = -INFINITY;
  for (size_t j = 0; j < n; ++j) {
    const double v = to_double(x[j]);
    if (std::isfinite(v) && v > m) m = v;
  }
  double s = 0, w = 0;
  for (size_t j = 0; j < n; ++j) {
    const double v = to_double(x[j]);
    if (!std::isfinite(v)) continue;
    const double t = std::exp(v - m);
    s += t;
    if (t > 0) w += t * (m - v);
  }
  return s > 0 ? w / s : 0;
}

// rmsnorm / layernorm of one row in double. alpha/beta null mean 1/0.
template <typename T>
std::vector<double> rmsnorm_row(const T* x, const T* alpha, size_t n, double eps) {
  long double sq = 0;  // like layernorm_stats: below an f64 kernel's rounding on long rows
  for (size_t j = 0; j < n; ++j) sq += static_cast<long double>(to_double(x[j])) * to_double(x[j]);
  const double inv = static_cast<double>(1.0L / std::sqrt(sq / n + eps));
  std::vector<double> y(n);
  for (size_t j = 0; j < n; ++j) y[j] = to_double(x[j]) * inv * (alpha ? to_double(alpha[j]) : 1.0);
  return y;
}
// mean, 1 / sqrt(var + eps) and the mean of |x|, summed in long double so that the reference's
// own rounding stays far below an f64 kernel's.
struct LayerNormStats {
  double mean, inv, mean_abs;
};
template <typename T>
LayerNormStats layernorm_stats(const T* x, size_t n, double eps) {
  long double s = 0, a = 0;
  for (size_t j = 0; j < n; ++j) {
    s += to_double(x[j]);
    a += std::fabs(to_double(x[j]));
  }
  const long double mean = s / n;
  long double d = 0;
  for (size_t j = 0; j < n; ++j) d += (to_double(x[j]) - mean) * (to_double(x[j]) - mean);
  return {static_cast<double>(mean), static_cast<double>(1.0L / std::sqrt(d / n + eps)),
          static_cast<double>(a / n)};
}

// Rotary embeddings: output index -> (value, magnitude of the two products) for every element.
struct RopeOut {
  std::vector<double> value, magnitude;
};
inline void rope_pair(RopeOut& out, double a, double b, double c, double s, size_t i1, size_t i2) {
  out.value[i1] = a * c - b * s;
  out.value[i2] = a * s + b * c;
  out.magnitude[i1] = std::fabs(a * c) + std::fabs(b * s);
  out.magnitude[i2] = std::fabs(a * s) + std::fabs(b * c);
}
// variant 0: rope_i on (b, h, t, d); 1: rope on (b, h, t, d); 2: rope_thd on (b, t, h, d).
// cos/sin are (t, d/2), or (b, t, d/2) when per_batch.
template <typename T>
RopeOut rope(int variant, const std::vector<T>& x, const std::vector<T>& cos,
             const std::vector<T>& sin, size_t b, size_t h, size_t t, size_t d, bool per_batch) {
  RopeOut out{std::vector<double>(x.size()), std::vector<double>(x.size())};
  for (size_t ib = 0; ib < b; ++ib) {
    for (size_t ih = 0; ih < h; ++ih) {
      for (size_t it = 0; it < t; ++it) {
        const size_t row =
            variant == 2 ? ((ib * t + it) * h + ih) * d : ((ib * h + ih) * t + it) * d;
        for (size_t i = 0; i < d / 2; ++i) {
          const size_t cs = (per_batch ? ib * t * (d / 2) : 0) + it * (d / 2) + i;
          const size_t i1 = variant == 0 ? row + 2 * i : row + i;
          const size_t i2 = variant == 0 ? row + 2 * i + 1 : row + i + d / 2;
          rope_pair(out, to_double(x[i1]), to_double(x[i2]), to_double(cos[cs]), to_double(sin[cs]),
                    i1, i2);
        }
      }
    }
  }
  return out;
}

}  // namespace ref
