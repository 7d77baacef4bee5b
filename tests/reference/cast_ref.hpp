// Host reference of CAST, and the correctly rounded "exact value -> dtype" step the UNARY reference
// shares. Values are carried as x87 long double (64-bit significand): every source value of every
// dtype, integers up to 64 bits included, is exact there. Rounding to a float dtype scales by a
// power of two and rounds to an integer (nearbyintl, ties to even): a method independent of the
// kernels' float-rounded-to-odd path.
#pragma once

#include "dtypes.hpp"

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace cast_ref {

static_assert(std::numeric_limits<long double>::digits >= 64,
              "the reference needs a 64-bit significand to hold int64 and double exactly");

template <typename T>
struct float_format;  // explicit significand bits, smallest normal exponent, largest finite
template <>
struct float_format<hkb::f16> {
  static constexpr int mant = 10, min_exp = -14;
  static constexpr long double max = 0x1.ffcp15L;  // 65504
  static constexpr bool saturate = false;
};
template <>
struct float_format<hkb::bf16> {
  static constexpr int mant = 7, min_exp = -126;
  static constexpr long double max = 0x1.fep127L;
  static constexpr bool saturate = false;
};
template <>
struct float_format<hkb::f8e4m3> {
  static constexpr int mant = 3, min_exp = -6;
  static constexpr long double max = 448.0L;
  static constexpr bool saturate = true;  // CUDA's __NV_SATFINITE: no infinity in E4M3
};
template <>
struct float_format<float> {
  static constexpr int mant = 23, min_exp = -126;
  static constexpr long double max = FLT_MAX;
  static constexpr bool saturate = false;
};
template <>
struct float_format<double> {
  static constexpr int mant = 52, min_exp = -1022;
  static constexpr long double max = DBL_MAX;
  static constexpr bool saturate = false;
};

// The exact value of x.
template <typename T>
long double exact(T x) {
  if constexpr (ref::is_float_v<T>) {
    return static_cast<long double>(ref::to_double(x));
  } else {
    return static_cast<long double>(x);
  }
}

// v rounded to nearest even in T's format (a value of T, returned as long double).
template <typename T>
long double round_value(long double v) {
  using F = float_format<T>;
  if (std::isnan(v)) return v;
  if (std::isinf(v)) return F::saturate ? std::copysign(F::max, v) : v;
  const long double a = std::fabs(v);
  if (a == 0) return v;
  int e = std::ilogb(a);
  if (e < F::min_exp) e = F::min_exp;
  const long double ulp = std::ldexp(1.0L, e - F::mant);
  long double r = std::nearbyint(a / ulp) * ulp;  // the default rounding mode: ties to even
  if (r > F::max) r = F::saturate ? F::max : std::numeric_limits<long double>::infinity();
  return std::copysign(r, v);
}

// v rounded once to float dtype T (NaN stays NaN; fp8's NaN is 0x7F).
template <typename T>
T to_float_dtype(long double v) {
  const long double r = round_value<T>(v);
  if constexpr (std::is_same_v<T, float>) {
    return static_cast<float>(r);
  } else if constexpr (std::is_same_v<T, double>) {
    return static_cast<double>(r);
  } else {
    // r is a value of T (or NaN), so these conversions are exact.
    return ref::from_double<T>(static_cast<double>(r));
  }
}

// Float value to integer dtype D: truncate toward zero, saturate, NaN -> 0.
template <typename D>
D to_int_dtype(long double v) {
  if (std::isnan(v)) return D(0);
  const long double t = std::trunc(v);
  if (t <= static_cast<long double>(std::numeric_limits<D>::min())) {
    return std::numeric_limits<D>::min();
  }
  if (t >= static_cast<long double>(std::numeric_limits<D>::max())) {
    return std::numeric_limits<D>::max();
  }
  return static_cast<D>(t);
}

// The exact value v as dtype T, rounded once.
template <typename T>
T from_exact(long double v) {
  if constexpr (ref::is_float_v<T>) {
    return to_float_dtype<T>(v);
  } else {
    return to_int_dtype<T>(v);
  }
}

// cast_<S>_<D> of one value.
template <typename S, typename D>
D cast(S x) {
  if constexpr (std::is_same_v<S, D>) {
    return x;
  } else if constexpr (!ref::is_float_v<S> && !ref::is_float_v<D>) {
    // Integer to integer: modulo 2^bits of D.
    using UD = std::make_unsigned_t<D>;
    return static_cast<D>(static_cast<UD>(static_cast<uint64_t>(static_cast<int64_t>(x))));
  } else {
    return from_exact<D>(exact(x));
  }
}

// Exact equality for casts: identical bits, or NaN on both sides.
template <typename T>
bool same_value(const T& got, const T& want) {
  if constexpr (ref::is_float_v<T>) {
    if (std::isnan(ref::to_double(got)) && std::isnan(ref::to_double(want))) return true;
  }
  return ref::same_bits(got, want);
}

}  // namespace cast_ref
