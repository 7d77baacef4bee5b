// UNARY: y = op(x) elementwise over a possibly strided input into a contiguous output, with
// candle's names `u<op>_<dtype>` and parameter lists (elu and powf take one extra scalar of the
// element type, passed by value before `inp`). A null `info` means contiguous; `ucopy_*` is the
// strided copy candle's copy_strided_src launches (bitwise: NaN payloads and -0.0 survive).
//
// Semantics (kept from candle unless noted):
// - f16/bf16/fp8 compute in float and round once to the element type (candle evaluates several
//   half ops with half intrinsics; hkb is at most 1 ulp of the output type from the exact value).
//   f32 computes in float, f64 in double, with the accurate (not the fast-math) libm of the vendor.
// - fp8 results saturate to +-448 (infinities included) and NaN becomes 0x7F, as every fp8 store.
// - relu: f32, f64 and fp8 map NaN to 0 (candle's fmax-based maxg, and fp8 goes through float
//   fmaxf); f16 and bf16 propagate NaN (candle's __hmax_nan).
// - round is round-half-away-from-zero (roundf); sign is (x > 0) - (x < 0), so NaN and -0.0 give 0.
// - gelu is the tanh approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), evaluated as
//   x * sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3)), the same function without the cancellation of
//   1 + tanh for negative x. gelu_erf is x * normcdf(x), normcdf(x) = erfc(-x / sqrt(2)) / 2.
//   sigmoid and silu use the branch of the logistic function that cannot overflow exp. For
//   x = -inf, gelu, gelu_erf and silu give NaN like candle's formulas (-inf * 0).
// - elu is x > 0 ? x : alpha * expm1(x) (candle writes exp(x) - 1; expm1 keeps small x accurate).
// - Integer ops hkb adds (candle's Rust side asks for them, candle has no kernel): abs, sqr, sign,
//   relu, ceil, floor, round for u8/u32/i16/i32/i64 and neg for i16/i32/i64. Arithmetic wraps
//   modulo 2^bits (neg/abs of the minimum value give the minimum value); abs and relu of unsigned
//   values, and ceil/floor/round of every integer, are the identity. ucopy also exists for i16/i32.
#include "common/dtype_lists.h"
#include "common/elementwise.h"

namespace {

// Overloads so every op is written once for float and double.
#define HKB_MATH1(NAME, FN_F, FN_D)  \
  HKB_DEVICE float NAME(float x) {   \
    return FN_F(x);                  \
  }                                  \
  HKB_DEVICE double NAME(double x) { \
    return FN_D(x);                  \
  }
HKB_MATH1(m_exp, expf, exp)
HKB_MATH1(m_expm1, expm1f, expm1)
HKB_MATH1(m_log, logf, log)
HKB_MATH1(m_sin, sinf, sin)
HKB_MATH1(m_cos, cosf, cos)
HKB_MATH1(m_tanh, tanhf, tanh)
HKB_MATH1(m_erf, erff, erf)
HKB_MATH1(m_erfc, erfcf, erfc)
HKB_MATH1(m_ceil, ceilf, ceil)
HKB_MATH1(m_floor, floorf, floor)
HKB_MATH1(m_round, roundf, round)
HKB_MATH1(m_abs, fabsf, fabs)
HKB_MATH1(m_sqrt, sqrtf, sqrt)
#undef HKB_MATH1
HKB_DEVICE float m_pow(float x, float y) {
  return powf(x, y);
}
HKB_DEVICE double m_pow(double x, double y) {
  return pow(x, y);
}

template <bool kFast, typename C>
HKB_DEVICE C exp_of(C x) {
  if constexpr (kFast) {
    return hkb::fast_exp(x);
  } else {
    return m_exp(x);
  }
}

// x * sigmoid(t) without overflow: exp is only taken of -|t|, e = exp(-|t|), and the result is
// x / (1 + e) for t >= 0, x * e / (1 + e) below. One exp and one division and no branch: the two
// branches of a warp whose lanes straddle 0 ran one after the other, and a branch per element
// kept the elements of a pack from overlapping.
// kFast (f16 / bf16 / fp8, computed in float and rounded to at most 11 significant bits): exp is
// hkb::fast_exp and the division by 1 + e, which lies in [1, 2], is the approximate one (2 ulp of
// float), both far finer than the output's rounding; f32 and f64 are exact to their libm.
template <bool kFast, typename C>
HKB_DEVICE C mul_sigmoid(C x, C t) {
  const C e = exp_of<kFast>(-m_abs(t));
  const C num = t >= C(0) ? x : x * e;
  if constexpr (kFast) {
    return __fdividef(num, C(1) + e);
  } else {
    return num / (C(1) + e);
  }
}

// Float ops, written over the compute type C (float or double).
struct Neg {
  template <typename C>
  HKB_DEVICE C operator()(C x) const {
    return -x;
  }
};
struct Recip {
  template <typename C>
  HKB_DEVICE C operator()(C x) const {
    return C(1) / x;
  }
};
// Heavy: the body is a long libm routine (common/elementwise.h, is_heavy).
#define HKB_OP_STRUCT(NAME, HEAVY, EXPR)  \
  struct NAME {                           \
    static constexpr bool kHeavy = HEAVY; \
    template <typename C>                 \
    HKB_DEVICE C operator()(C x) const {  \
      return EXPR;                        \
    }                                     \
  };
#define HKB_FLOAT_OP(NAME, EXPR) HKB_OP_STRUCT(NAME, false, EXPR)
#define HKB_HEAVY_FLOAT_OP(NAME, EXPR) HKB_OP_STRUCT(NAME, true, EXPR)
HKB_FLOAT_OP(Log, m_log(x))
HKB_HEAVY_FLOAT_OP(Sin, m_sin(x))
HKB_HEAVY_FLOAT_OP(Cos, m_cos(x))
HKB_FLOAT_OP(Tanh, m_tanh(x))
HKB_HEAVY_FLOAT_OP(Erf, m_erf(x))
HKB_FLOAT_OP(Ceil, m_ceil(x))
HKB_FLOAT_OP(Floor, m_floor(x))
HKB_FLOAT_OP(Round, m_round(x))
HKB_FLOAT_OP(Abs, m_abs(x))
HKB_FLOAT_OP(Sqr, x* x)
HKB_FLOAT_OP(Sqrt, m_sqrt(x))
HKB_HEAVY_FLOAT_OP(NormCdf, C(0.5) * m_erfc(x * C(-0.7071067811865476)))
HKB_HEAVY_FLOAT_OP(GeluErf, x*(C(0.5) * m_erfc(x * C(-0.7071067811865476))))
HKB_FLOAT_OP(Sign, C((x > C(0)) - (x < C(0))))
#undef HKB_FLOAT_OP
#undef HKB_HEAVY_FLOAT_OP
#undef HKB_OP_STRUCT

// exp and the logistic ops, with exp_reduced (and mul_sigmoid's fast division) for the
// reduced-precision dtypes.
// 2 sqrt(2/pi) = 1.5957691216057308; 2 sqrt(2/pi) * 0.044715 = 0.07135481627260025.
#define HKB_REDUCED_FAST_OP(NAME, EXPR)  \
  template <bool kFast>                  \
  struct NAME {                          \
    template <typename C>                \
    HKB_DEVICE C operator()(C x) const { \
      return EXPR;                       \
    }                                    \
  };                                     \
  template <typename T>                  \
  using NAME##Of = NAME<hkb::is_reduced_float<T>::value>;
HKB_REDUCED_FAST_OP(Exp, exp_of<kFast>(x))
HKB_REDUCED_FAST_OP(Gelu, (mul_sigmoid<kFast>(x, x*(C(1.5957691216057308) +
                                                    C(0.07135481627260025) * x * x))))
HKB_REDUCED_FAST_OP(Silu, mul_sigmoid<kFast>(x, x))
HKB_REDUCED_FAST_OP(Sigmoid, mul_sigmoid<kFast>(C(1), x))
#undef HKB_REDUCED_FAST_OP

// relu, with candle's per-dtype NaN behaviour (see the top of the file).
template <bool kPropagateNan>
struct Relu {
  template <typename C>
  HKB_DEVICE C operator()(C x) const {
    if (kPropagateNan && x != x) return x;
    return x > C(0) ? x : C(0);
  }
};
template <typename T>
using ReluOf = Relu<sizeof(T) == 2>;  // f16 and bf16 are the 2-byte float dtypes

template <typename C>
struct Elu {
  C alpha;
  HKB_DEVICE C operator()(C x) const { return x > C(0) ? x : alpha * m_expm1(x); }
};
template <typename C>
struct Powf {
  static constexpr bool kHeavy = true;
  C exponent;
  HKB_DEVICE C operator()(C x) const { return m_pow(x, exponent); }
};

// Float op on storage type T: widen, apply in the compute type, round once.
template <typename T, typename Op>
struct InCompute {
  static constexpr bool kHeavy = hkb::is_heavy<Op>::value;
  Op op;
  HKB_DEVICE T operator()(T x) const { return hkb::narrow<T>(op(hkb::widen(x))); }
};

template <typename T>
struct Identity {
  HKB_DEVICE T operator()(T x) const { return x; }
};

// Integer ops. Signedness is spelled out per type so no unsigned value is compared with zero.
template <typename T>
struct is_signed_int {
  static constexpr bool value = false;
};
template <>
struct is_signed_int<int16_t> {
  static constexpr bool value = true;
};
template <>
struct is_signed_int<int32_t> {
  static constexpr bool value = true;
};
template <>
struct is_signed_int<int64_t> {
  static constexpr bool value = true;
};

// Two's-complement wrap: the arithmetic happens in uint64_t, where it is defined.
template <typename T>
HKB_DEVICE T wrap_neg(T x) {
  return static_cast<T>(uint64_t{0} - static_cast<uint64_t>(x));
}
template <typename T>
struct IntNeg {
  HKB_DEVICE T operator()(T x) const { return wrap_neg(x); }
};
template <typename T>
struct IntAbs {
  HKB_DEVICE T operator()(T x) const {
    if constexpr (is_signed_int<T>::value) {
      return x < T(0) ? wrap_neg(x) : x;
    } else {
      return x;
    }
  }
};
template <typename T>
struct IntSqr {
  HKB_DEVICE T operator()(T x) const {
    return static_cast<T>(static_cast<uint64_t>(x) * static_cast<uint64_t>(x));
  }
};
template <typename T>
struct IntSign {
  HKB_DEVICE T operator()(T x) const {
    if constexpr (is_signed_int<T>::value) {
      return static_cast<T>((x > T(0)) - (x < T(0)));
    } else {
      return static_cast<T>(x != T(0));
    }
  }
};
template <typename T>
struct IntRelu {
  HKB_DEVICE T operator()(T x) const {
    if constexpr (is_signed_int<T>::value) {
      return x > T(0) ? x : T(0);
    } else {
      return x;
    }
  }
};

template <typename T, typename F>
__device__ void unary(size_t numel, size_t num_dims, const size_t* info, const T* inp, T* out,
                      F f) {
  hkb::map_unary_layout(numel, num_dims, info, inp, out, f);
}

template <typename T, typename Op>
__device__ void unary_float(size_t numel, size_t num_dims, const size_t* info, const T* inp, T* out,
                            Op op) {
  unary(numel, num_dims, info, inp, out, InCompute<T, Op>{op});
}

}  // namespace

#define HKB_UNARY_SIG(NAME, TAG, T)                       \
  HKB_GLOBAL void HKB_OCCUPANCY(1024, 2) u##NAME##_##TAG( \
      const size_t numel, const size_t num_dims, const size_t* info, const T* inp, T* out)

// Float dtypes (fp8 with the `fp8_e4m3` spelling candle's unary ops use).
#define HKB_UNARY_FLOAT(NAME, OP, TAG, T)                  \
  HKB_UNARY_SIG(NAME, TAG, T) {                            \
    unary_float<T>(numel, num_dims, info, inp, out, OP{}); \
  }
#define HKB_UNARY_FLOAT_OPS(TAG, T)                                                              \
  HKB_UNARY_FLOAT(neg, Neg, TAG, T)                                                              \
  HKB_UNARY_FLOAT(recip, Recip, TAG, T)                                                          \
  HKB_UNARY_FLOAT(exp, ExpOf<T>, TAG, T)                                                         \
  HKB_UNARY_FLOAT(log, Log, TAG, T)                                                              \
  HKB_UNARY_FLOAT(sin, Sin, TAG, T)                                                              \
  HKB_UNARY_FLOAT(cos, Cos, TAG, T)                                                              \
  HKB_UNARY_FLOAT(tanh, Tanh, TAG, T)                                                            \
  HKB_UNARY_FLOAT(erf, Erf, TAG, T)                                                              \
  HKB_UNARY_FLOAT(ceil, Ceil, TAG, T)                                                            \
  HKB_UNARY_FLOAT(floor, Floor, TAG, T)                                                          \
  HKB_UNARY_FLOAT(round, Round, TAG, T)                                                          \
  HKB_UNARY_FLOAT(normcdf, NormCdf, TAG, T)                                                      \
  HKB_UNARY_FLOAT(abs, Abs, TAG, T)                                                              \
  HKB_UNARY_FLOAT(sqr, Sqr, TAG, T)                                                              \
  HKB_UNARY_FLOAT(sqrt, Sqrt, TAG, T)                                                            \
  HKB_UNARY_FLOAT(gelu, GeluOf<T>, TAG, T)                                                       \
  HKB_UNARY_FLOAT(gelu_erf, GeluErf, TAG, T)                                                     \
  HKB_UNARY_FLOAT(relu, ReluOf<T>, TAG, T)                                                       \
  HKB_UNARY_FLOAT(silu, SiluOf<T>, TAG, T)                                                       \
  HKB_UNARY_FLOAT(sign, Sign, TAG, T)                                                            \
  HKB_UNARY_FLOAT(sigmoid, SigmoidOf<T>, TAG, T)                                                 \
  HKB_GLOBAL void HKB_OCCUPANCY(1024, 2)                                                         \
      uelu_##TAG(const size_t numel, const size_t num_dims, const size_t* info, const T param,   \
                 const T* inp, T* out) {                                                         \
    unary_float<T>(numel, num_dims, info, inp, out, Elu<hkb::compute_t<T>>{hkb::widen(param)});  \
  }                                                                                              \
  HKB_GLOBAL void HKB_OCCUPANCY(1024, 2)                                                         \
      upowf_##TAG(const size_t numel, const size_t num_dims, const size_t* info, const T param,  \
                  const T* inp, T* out) {                                                        \
    unary_float<T>(numel, num_dims, info, inp, out, Powf<hkb::compute_t<T>>{hkb::widen(param)}); \
  }
HKB_DTYPES_FLOAT(HKB_UNARY_FLOAT_OPS)
HKB_DTYPES_F8_ALT(HKB_UNARY_FLOAT_OPS)

// Integer dtypes.
#define HKB_UNARY_INT(NAME, OP, TAG, T)                 \
  HKB_UNARY_SIG(NAME, TAG, T) {                         \
    unary<T>(numel, num_dims, info, inp, out, OP<T>{}); \
  }
#define HKB_UNARY_INT_OPS(TAG, T)        \
  HKB_UNARY_INT(abs, IntAbs, TAG, T)     \
  HKB_UNARY_INT(sqr, IntSqr, TAG, T)     \
  HKB_UNARY_INT(sign, IntSign, TAG, T)   \
  HKB_UNARY_INT(relu, IntRelu, TAG, T)   \
  HKB_UNARY_INT(ceil, Identity, TAG, T)  \
  HKB_UNARY_INT(floor, Identity, TAG, T) \
  HKB_UNARY_INT(round, Identity, TAG, T)
HKB_DTYPES_INT(HKB_UNARY_INT_OPS)
#define HKB_UNARY_INT_SIGNED_OPS(TAG, T) HKB_UNARY_INT(neg, IntNeg, TAG, T)
HKB_UNARY_INT_SIGNED_OPS(i16, int16_t)
HKB_UNARY_INT_SIGNED_OPS(i32, int32_t)
HKB_UNARY_INT_SIGNED_OPS(i64, int64_t)

// ucopy for every dtype (fp8 with the `f8_e4m3` spelling candle's ucopy uses).
#define HKB_UCOPY(TAG, T) HKB_UNARY_INT(copy, Identity, TAG, T)
HKB_DTYPES_ALL(HKB_UCOPY)
