// Host reference dtypes for the GPU tests, written independently of the kernels' conversions:
// f16 through the compiler's _Float16, bf16 by bit rounding, f8e4m3 by decoding all 256 codes and
// picking the nearest (ties to even). Tolerances are in units in the last place of the output.
#pragma once

#include <hkb/hkb.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

namespace ref {

using hkb::bf16;
using hkb::f16;
using hkb::f8e4m3;

inline float f16_to_float(f16 v) {
  _Float16 h;
  std::memcpy(&h, &v.bits, 2);
  return static_cast<float>(h);
}
inline f16 f16_from_double(double d) {
  // Round once from double: _Float16 conversion from double rounds to nearest even.
  const _Float16 h = static_cast<_Float16>(d);
  f16 v;
  std::memcpy(&v.bits, &h, 2);
  return v;
}

inline float bf16_to_float(bf16 v) {
  const uint32_t u = static_cast<uint32_t>(v.bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline bf16 bf16_from_float(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f)) return bf16{static_cast<uint16_t>((u >> 16) | 0x40)};
  const uint32_t lsb = (u >> 16) & 1u;
  return bf16{static_cast<uint16_t>((u + 0x7FFFu + lsb) >> 16)};
}

inline const std::array<double, 256>& f8_table() {
  static const std::array<double, 256> table = [] {
    std::array<double, 256> t{};
    for (int c = 0; c < 256; ++c) {
      const int s = c >> 7, e = (c >> 3) & 15, m = c & 7;
      double mag;
      if (e == 15 && m == 7) {
        mag = std::numeric_limits<double>::quiet_NaN();
      } else if (e == 0) {
        mag = std::ldexp(m / 8.0, -6);
      } else {
        mag = std::ldexp(1.0 + m / 8.0, e - 7);
      }
      t[c] = s ? -mag : mag;
    }
    return t;
  }();
  return table;
}
inline float f8_to_float(f8e4m3 v) {
  return static_cast<float>(f8_table()[v.bits]);
}
// Nearest finite code, ties to the even code; saturates to +-448; NaN gives 0x7F.
inline f8e4m3 f8_from_double(double d) {
  if (std::isnan(d)) return f8e4m3{0x7F};
  const auto& t = f8_table();
  const int sign = std::signbit(d) ? 0x80 : 0;
  const double a = std::fabs(d);
  int best = 0;
  double best_err = std::numeric_limits<double>::infinity();
  for (int c = 0; c <= 0x7E; ++c) {
    const double err = std::fabs(t[c] - a);
    if (err < best_err || (err == best_err && (c & 1) == 0)) {
      best = c;
      best_err = err;
    }
  }
  return f8e4m3{static_cast<uint8_t>(sign | best)};
}

// Generic access: every test type to double and back (integers convert as C does).
template <typename T>
double to_double(T v) {
  if constexpr (std::is_same_v<T, f16>) {
    return f16_to_float(v);
  } else if constexpr (std::is_same_v<T, bf16>) {
    return bf16_to_float(v);
  } else if constexpr (std::is_same_v<T, f8e4m3>) {
    return f8_to_float(v);
  } else {
    return static_cast<double>(v);
  }
}
template <typename T>
T from_double(double d) {
  if constexpr (std::is_same_v<T, f16>) {
    return f16_from_double(d);
  } else if constexpr (std::is_same_v<T, bf16>) {
    return bf16_from_float(static_cast<float>(d));
  } else if constexpr (std::is_same_v<T, f8e4m3>) {
    return f8_from_double(d);
  } else {
    return static_cast<T>(d);
  }
}

template <typename T>
constexpr bool is_float_v = std::is_floating_point_v<T> || std::is_same_v<T, f16> ||
                            std::is_same_v<T, bf16> || std::is_same_v<T, f8e4m3>;

// candle's dtype tag as used in symbol names (fp8: the `f8_e4m3` spelling).
template <typename T>
const char* tag() {
  if constexpr (std::is_same_v<T, f16>) return "f16";
  if constexpr (std::is_same_v<T, bf16>) return "bf16";
  if constexpr (std::is_same_v<T, f8e4m3>) return "f8_e4m3";
  if constexpr (std::is_same_v<T, float>) return "f32";
  if constexpr (std::is_same_v<T, double>) return "f64";
  if constexpr (std::is_same_v<T, uint8_t>) return "u8";
  if constexpr (std::is_same_v<T, uint32_t>) return "u32";
  if constexpr (std::is_same_v<T, int16_t>) return "i16";
  if constexpr (std::is_same_v<T, int32_t>) return "i32";
  if constexpr (std::is_same_v<T, int64_t>) return "i64";
  return "?";
}

// Size of one unit in the last place of T at magnitude `m` (subnormal spacing below the
// smallest normal).
template <typename T>
double ulp_at(double m) {
  int mant_bits, min_exp;
  if constexpr (std::is_same_v<T, f16>) {
    mant_bits = 10, min_exp = -14;
  } else if constexpr (std::is_same_v<T, bf16>) {
    mant_bits = 7, min_exp = -126;
  } else if constexpr (std::is_same_v<T, f8e4m3>) {
    mant_bits = 3, min_exp = -6;
  } else if constexpr (std::is_same_v<T, float>) {
    mant_bits = 23, min_exp = -126;
  } else {
    mant_bits = 52, min_exp = -1022;
  }
  int e = m > 0 ? std::ilogb(m) : min_exp;
  if (e < min_exp) e = min_exp;
  return std::ldexp(1.0, e - mant_bits);
}

// Distance in units in the last place of T between two values of T (0 when equal, both NaN, or
// both zero of either sign). Integers: absolute difference.
template <typename T>
double ulp_distance(T a, T b) {
  if constexpr (!is_float_v<T>) {
    return std::fabs(static_cast<double>(a) - static_cast<double>(b));
  } else {
    const double x = to_double(a), y = to_double(b);
    if (std::isnan(x) || std::isnan(y)) {
      return std::isnan(x) && std::isnan(y) ? 0 : std::numeric_limits<double>::infinity();
    }
    if (x == y) return 0;
    if (std::isinf(x) || std::isinf(y)) return std::numeric_limits<double>::infinity();
    return std::fabs(x - y) / ulp_at<T>(std::max(std::fabs(x), std::fabs(y)));
  }
}

// Bitwise identity (for copies: -0.0 and NaN payloads must survive).
template <typename T>
bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

}  // namespace ref
