// Storage types for the reduced-precision dtypes and their explicit conversions to and from float.
// Each is a trivially copyable struct of the exact storage size and alignment of candle's CUDA type
// (__half, __nv_bfloat16: 2 bytes; __nv_fp8_e4m3: 1 byte), so kernel arguments passed by value have
// the same byte layout on both vendors. Arithmetic happens in float and rounds once on the way out.
#pragma once

#include "platform.h"

namespace hkb {

// N values moved by one vector access.
template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

// *dst = p as one store of an integer of p's size (up to 8 bytes): stored member by member, a
// pack beside a branch that stores its first value alone is split into scalar stores.
template <typename T, int N>
HKB_DEVICE void store_whole(Pack<T, N>* dst, const Pack<T, N>& p) {
  constexpr int kBytes = sizeof(T) * N;
  static_assert(kBytes == 2 || kBytes == 4 || kBytes == 8, "a pack of 2, 4 or 8 bytes");
  using U = typename std::conditional<
      kBytes == 2, uint16_t,
      typename std::conditional<kBytes == 4, uint32_t, uint64_t>::type>::type;
  U bits;
  __builtin_memcpy(&bits, &p, kBytes);
  *reinterpret_cast<U*>(dst) = bits;
}

struct f16 {
  uint16_t bits;
};
struct bf16 {
  uint16_t bits;
};
// OCP FP8 E4M3 (the OFP8 spec's E4M3, as CUDA's __nv_fp8_e4m3): bias 7, no infinities, NaN is
// S.1111.111, largest finite 448. Not the FNUZ variant of MI300's native instructions.
struct f8e4m3 {
  uint8_t bits;
};

static_assert(sizeof(f16) == 2 && alignof(f16) == 2, "f16 layout");
static_assert(sizeof(bf16) == 2 && alignof(bf16) == 2, "bf16 layout");
static_assert(sizeof(f8e4m3) == 1 && alignof(f8e4m3) == 1, "f8e4m3 layout");

HKB_DEVICE float to_float(f16 v) {
  return half_bits_to_float(v.bits);
}
HKB_DEVICE float to_float(bf16 v) {
  return bits_float(static_cast<uint32_t>(v.bits) << 16);
}
HKB_DEVICE float to_float(f8e4m3 v) {
  const uint32_t sign = (v.bits & 0x80u) << 24;
  const uint32_t exp = (v.bits >> 3) & 0xFu;
  const uint32_t man = v.bits & 0x7u;
  if (exp == 0xFu && man == 0x7u) return bits_float(sign | 0x7FC00000u);
  float mag;
  if (exp == 0) {
    mag = static_cast<float>(man) * 0.001953125f;  // man/8 * 2^-6
  } else {
    mag = bits_float(((exp + 120u) << 23) | (man << 20));  // (1+man/8) * 2^(exp-7)
  }
  return bits_float(float_bits(mag) | sign);
}

// E4M3 values ordered without a float: every value but NaN maps to an int whose order is the
// values' order (magnitudes increase with the low 7 bits; both zeros give 0).
HKB_DEVICE bool f8_is_nan(f8e4m3 v) {
  return (v.bits & 0x7Fu) == 0x7Fu;
}
HKB_DEVICE int f8_order_key(f8e4m3 v) {
  const int m = v.bits & 0x7F;
  return (v.bits & 0x80u) != 0 ? -m : m;
}

// Floats ordered as ints: key(a) < key(b) iff a < b, and -0.0 < +0.0. NaNs land outside the
// values (positive ones above +inf, negative ones below -inf), so callers place them first. The
// map is its own inverse: float_order_key(bits_float(key)) gives the bits back.
HKB_DEVICE int32_t float_order_key(float v) {
  const int32_t b = static_cast<int32_t>(float_bits(v));
  return b ^ ((b >> 31) & 0x7FFFFFFF);
}
HKB_DEVICE float key_float(int32_t key) {
  return bits_float(static_cast<uint32_t>(key ^ ((key >> 31) & 0x7FFFFFFF)));
}
// The same for the 16-bit floats (f16, bf16: sign and magnitude as in float), from their bits.
HKB_DEVICE int32_t half_order_key(uint16_t bits) {
  const int32_t s = static_cast<int16_t>(bits);
  return s ^ ((s >> 31) & 0x7FFF);
}

template <typename T>
HKB_DEVICE T from_float(float v);

template <>
HKB_DEVICE f16 from_float<f16>(float v) {
  return f16{float_to_half_bits(v)};
}
// Round to nearest even (platform.h).
template <>
HKB_DEVICE bf16 from_float<bf16>(float v) {
  return bf16{float_to_bf16_bits(v)};
}
// Round to nearest even; finite overflow and infinities saturate to +-448 (CUDA's __NV_SATFINITE,
// what candle's __nv_fp8_e4m3 constructor does); NaN becomes 0x7F.
template <>
HKB_DEVICE f8e4m3 from_float<f8e4m3>(float v) {
  const uint32_t u = float_bits(v);
  const uint8_t sign = static_cast<uint8_t>((u >> 24) & 0x80u);
  const uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return f8e4m3{0x7F};
  if (a >= 0x43E00000u) return f8e4m3{static_cast<uint8_t>(sign | 0x7E)};  // >= 448
  if (a < 0x3C800000u) {                                                   // < 2^-6: subnormal
    const float q = rintf(bits_float(a) * 512.0f);                         // units of 2^-9
    return f8e4m3{static_cast<uint8_t>(sign | static_cast<uint32_t>(q))};
  }
  const uint32_t rounded = a + 0x7FFFFu + ((a >> 20) & 1u);
  uint32_t code = ((((rounded >> 23) & 0xFFu) - 120u) << 3) | ((rounded >> 20) & 0x7u);
  if (code > 0x7Eu) code = 0x7Eu;
  return f8e4m3{static_cast<uint8_t>(sign | code)};
}
template <>
HKB_DEVICE float from_float<float>(float v) {
  return v;
}
template <>
HKB_DEVICE double from_float<double>(float v) {
  return v;
}

// Compute type: what a dtype is widened to for arithmetic. Reduced-precision floats compute in
// float; everything else in itself.
template <typename T>
struct compute_type {
  using type = T;
};
template <>
struct compute_type<f16> {
  using type = float;
};
template <>
struct compute_type<bf16> {
  using type = float;
};
template <>
struct compute_type<f8e4m3> {
  using type = float;
};
template <typename T>
using compute_t = typename compute_type<T>::type;

// Widen to the compute type / narrow back from it.
template <typename T>
HKB_DEVICE compute_t<T> widen(T v) {
  return v;
}
template <>
HKB_DEVICE float widen<f16>(f16 v) {
  return to_float(v);
}
template <>
HKB_DEVICE float widen<bf16>(bf16 v) {
  return to_float(v);
}
template <>
HKB_DEVICE float widen<f8e4m3>(f8e4m3 v) {
  return to_float(v);
}
// A pack's values widened to the compute type; bf16 by 32-bit words (one shift or mask a value,
// where taking each half out first costs a second instruction).
template <typename T, int N>
HKB_DEVICE void widen_pack(const Pack<T, N>& p, compute_t<T> (&out)[N]) {
  if constexpr (std::is_same<T, bf16>::value && N % 2 == 0) {
    uint32_t w[N / 2];
    __builtin_memcpy(w, &p, sizeof(w));
#pragma unroll
    for (int i = 0; i < N / 2; ++i) {
      out[2 * i] = bits_float(w[i] << 16);
      out[2 * i + 1] = bits_float(w[i] & 0xFFFF0000u);
    }
  } else {
#pragma unroll
    for (int k = 0; k < N; ++k) out[k] = widen(p.v[k]);
  }
}
template <typename T>
HKB_DEVICE T narrow(compute_t<T> v) {
  return static_cast<T>(v);
}
template <>
HKB_DEVICE f16 narrow<f16>(float v) {
  return from_float<f16>(v);
}
template <>
HKB_DEVICE bf16 narrow<bf16>(float v) {
  return from_float<bf16>(v);
}
template <>
HKB_DEVICE f8e4m3 narrow<f8e4m3>(float v) {
  return from_float<f8e4m3>(v);
}

// Any value to float / double, for casts.
template <typename T>
HKB_DEVICE float to_float(T v) {
  return static_cast<float>(v);
}
template <typename T>
HKB_DEVICE double to_double(T v) {
  return static_cast<double>(v);
}
template <>
HKB_DEVICE double to_double<f16>(f16 v) {
  return to_float(v);
}
template <>
HKB_DEVICE double to_double<bf16>(bf16 v) {
  return to_float(v);
}
template <>
HKB_DEVICE double to_double<f8e4m3>(f8e4m3 v) {
  return to_float(v);
}

template <typename T>
struct is_reduced_float {
  static constexpr bool value = false;
};
template <>
struct is_reduced_float<f16> {
  static constexpr bool value = true;
};
template <>
struct is_reduced_float<bf16> {
  static constexpr bool value = true;
};
template <>
struct is_reduced_float<f8e4m3> {
  static constexpr bool value = true;
};

// Accumulators of sums and reductions: reduced floats in float, other floats in themselves.
// acc_t: integers in themselves (wrapping like candle), except u8 widened to 32 bits so a shuffle
// can carry it. wide_acc_t: integers in 64 bits, for sums that must not wrap before they are
// scaled (pooling averages) or are truncated to the type at the end (convolutions).
template <typename T>
struct acc_type {
  using type = compute_t<T>;
};
template <>
struct acc_type<uint8_t> {
  using type = uint32_t;
};
template <typename T>
using acc_t = typename acc_type<T>::type;
template <typename T>
struct wide_acc_type {
  using type = compute_t<T>;
};
template <>
struct wide_acc_type<uint8_t> {
  using type = uint64_t;
};
template <>
struct wide_acc_type<uint32_t> {
  using type = uint64_t;
};
template <typename T>
using wide_acc_t = typename wide_acc_type<T>::type;

// v in its accumulator type, and an accumulator back in T (reduced floats rounded once, integers
// truncated).
template <typename T>
HKB_DEVICE acc_t<T> to_acc(T v) {
  return static_cast<acc_t<T>>(widen(v));
}
template <typename T>
HKB_DEVICE wide_acc_t<T> to_wide_acc(T v) {
  return static_cast<wide_acc_t<T>>(widen(v));
}
template <typename T, typename A>
HKB_DEVICE T from_acc(A v) {
  if constexpr (is_reduced_float<T>::value) {
    return narrow<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

}  // namespace hkb
