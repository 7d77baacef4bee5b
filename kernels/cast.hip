// CAST: out[i] = D(in[i]) elementwise over a possibly strided input into a contiguous output, as
// `cast_<src>_<dst>` with candle's parameter list. A null `info` means contiguous. hkb exports the
// full cross product of u8, u32, i16, i32, i64, bf16, f16, f32, f64 and f8_e4m3 (candle's spelling
// for casts): candle's 58 pairs plus the ones its Rust side asks for and candle lacks (i64 <->
// f16/bf16, everything with i16/i32, the remaining fp8 pairs).
//
// Conversions (every one is a single rounding from the exact source value):
// - Same dtype: a bitwise copy (NaN payloads survive).
// - To a float dtype: round to nearest even. fp8 saturates to +-448 (infinities and finite
//   overflow alike, CUDA's __NV_SATFINITE) and NaN becomes 0x7F; f16 and bf16 overflow to
//   infinity. Sources wider than float (f64, i64, u32, i32) reach f16/bf16/fp8 through a float
//   rounded to odd, which then rounds correctly to the narrow type; candle's f64 -> fp8 rounds
//   twice, hkb once.
// - Float to integer: truncate toward zero and saturate to the destination's range; NaN gives 0
//   (what PTX's cvt.rzi does for candle's static_cast; C++ leaves it undefined).
// - Integer to integer: C++ conversion, modulo 2^bits of the destination.
#include "common/dtype_lists.h"
#include "common/elementwise.h"

// Traits in a named namespace: nvcc reports unused members of anonymous-namespace classes.
namespace cast_traits {

template <typename A, typename B>
struct same_type {
  static constexpr bool value = false;
};
template <typename A>
struct same_type<A, A> {
  static constexpr bool value = true;
};

// Integer destinations: signedness and range; `lo` and `hi_excl` (max + 1) are powers of two or
// zero, exact in float and double.
template <typename T>
struct int_traits {
  static constexpr bool is_int = false;
};
#define HKB_INT_TRAITS(T, SIGNED, LO, HI_EXCL, MIN, MAX) \
  template <>                                            \
  struct int_traits<T> {                                 \
    static constexpr bool is_int = true;                 \
    static constexpr bool is_signed = SIGNED;            \
    static constexpr double lo = LO;                     \
    static constexpr double hi_excl = HI_EXCL;           \
    static constexpr T min = MIN;                        \
    static constexpr T max = MAX;                        \
  };
HKB_INT_TRAITS(uint8_t, false, 0.0, 256.0, 0, 0xFF)
HKB_INT_TRAITS(uint32_t, false, 0.0, 4294967296.0, 0, 0xFFFFFFFFu)
HKB_INT_TRAITS(int16_t, true, -32768.0, 32768.0, -0x8000, 0x7FFF)
HKB_INT_TRAITS(int32_t, true, -2147483648.0, 2147483648.0, -0x7FFFFFFF - 1, 0x7FFFFFFF)
HKB_INT_TRAITS(int64_t, true, -9223372036854775808.0, 9223372036854775808.0,
               -0x7FFFFFFFFFFFFFFFll - 1, 0x7FFFFFFFFFFFFFFFll)
#undef HKB_INT_TRAITS

template <typename T>
struct is_native_float {
  static constexpr bool value = false;
};
template <>
struct is_native_float<float> {
  static constexpr bool value = true;
};
template <>
struct is_native_float<double> {
  static constexpr bool value = true;
};

}  // namespace cast_traits

namespace {

using cast_traits::int_traits;
using cast_traits::is_native_float;
using cast_traits::same_type;

// Truncate toward zero, saturate, NaN to 0. F is float or double.
template <typename D, typename F>
HKB_DEVICE D float_to_int(F x) {
  using L = int_traits<D>;
  if (!(x == x)) return D(0);
  if (x <= F(L::lo)) return L::min;
  if (x >= F(L::hi_excl)) return L::max;
  return static_cast<D>(x);
}

// Round to odd: the float nearest below |x| in magnitude, with its last bit set when inexact. A
// value rounded this way to float's 24 bits rounds correctly from there to any format of at most
// 22 bits (f16, bf16, fp8), which rounding to nearest twice does not.
HKB_DEVICE float double_to_float_odd(double d) {
  const float f = static_cast<float>(d);
  if (!(d == d) || static_cast<double>(f) == d || fabs(d) > 1.7976931348623157e308) return f;
  uint32_t bits = hkb::float_bits(f);
  if (fabs(static_cast<double>(f)) > fabs(d)) bits -= 1;  // one step toward zero (inf -> max)
  return hkb::bits_float(bits | 1u);
}

template <typename S>
HKB_DEVICE float int_to_float_odd(S x) {
  if constexpr (sizeof(S) <= 2) {
    return static_cast<float>(x);  // exact
  } else {
    bool negative = false;
    if constexpr (int_traits<S>::is_signed) negative = x < S(0);
    const uint64_t mag = negative ? uint64_t{0} - static_cast<uint64_t>(static_cast<int64_t>(x))
                                  : static_cast<uint64_t>(x);
    float f;
    if (mag < (uint64_t{1} << 24)) {
      f = static_cast<float>(mag);
    } else {
      const int shift = (63 - __clzll(static_cast<long long>(mag))) - 23;
      uint64_t top = mag >> shift;  // 24 significant bits
      if ((mag & ((uint64_t{1} << shift) - 1)) != 0) top |= 1;
      f = static_cast<float>(top) * hkb::bits_float(static_cast<uint32_t>(127 + shift) << 23);
    }
    return negative ? -f : f;
  }
}

template <typename S, typename D>
HKB_DEVICE D convert(S x) {
  if constexpr (same_type<S, D>::value) {
    return x;
  } else if constexpr (is_native_float<D>::value) {
    if constexpr (hkb::is_reduced_float<S>::value) {
      return static_cast<D>(hkb::to_float(x));  // exact
    } else {
      return static_cast<D>(x);
    }
  } else if constexpr (hkb::is_reduced_float<D>::value) {
    if constexpr (hkb::is_reduced_float<S>::value || same_type<S, float>::value) {
      return hkb::from_float<D>(hkb::to_float(x));
    } else if constexpr (same_type<S, double>::value) {
      return hkb::from_float<D>(double_to_float_odd(x));
    } else {
      return hkb::from_float<D>(int_to_float_odd(x));
    }
  } else if constexpr (int_traits<S>::is_int) {
    return static_cast<D>(x);
  } else if constexpr (hkb::is_reduced_float<S>::value) {
    return float_to_int<D>(hkb::to_float(x));
  } else {
    return float_to_int<D>(x);
  }
}

template <typename S, typename D>
struct Convert {
  HKB_DEVICE D operator()(S x) const { return convert<S, D>(x); }
};

template <typename S, typename D>
__device__ void cast(size_t numel, size_t num_dims, const size_t* info, const S* inp, D* out) {
  hkb::map_unary_layout(numel, num_dims, info, inp, out, Convert<S, D>{});
}

}  // namespace

#define HKB_CAST(STAG, S, DTAG, D)                                                           \
  HKB_GLOBAL void HKB_OCCUPANCY(1024, 2) cast_##STAG##_##DTAG(                               \
      const size_t numel, const size_t num_dims, const size_t* info, const S* inp, D* out) { \
    cast<S, D>(numel, num_dims, info, inp, out);                                             \
  }
// The destination list, spelled out: a macro cannot expand HKB_DTYPES_ALL inside itself.
#define HKB_CAST_TO_ALL(STAG, S)     \
  HKB_CAST(STAG, S, bf16, hkb::bf16) \
  HKB_CAST(STAG, S, f16, hkb::f16)   \
  HKB_CAST(STAG, S, f32, float)      \
  HKB_CAST(STAG, S, f64, double)     \
  HKB_CAST(STAG, S, u8, uint8_t)     \
  HKB_CAST(STAG, S, u32, uint32_t)   \
  HKB_CAST(STAG, S, i16, int16_t)    \
  HKB_CAST(STAG, S, i32, int32_t)    \
  HKB_CAST(STAG, S, i64, int64_t)    \
  HKB_CAST(STAG, S, f8_e4m3, hkb::f8e4m3)
HKB_DTYPES_ALL(HKB_CAST_TO_ALL)
