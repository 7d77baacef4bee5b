// Host reference of UNARY. Float ops are evaluated in x87 long double (11 bits beyond float64) on
// the exact input and rounded once to the element type (cast_ref::from_exact), so the reference
// error is far below one ulp of every dtype, f64 included. Integer ops wrap modulo 2^bits.
#pragma once

#include "cast_ref.hpp"

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace unary_ref {

enum class Op {
  Neg,
  Recip,
  Exp,
  Log,
  Sin,
  Cos,
  Tanh,
  Erf,
  Ceil,
  Floor,
  Round,
  NormCdf,
  Abs,
  Sqr,
  Sqrt,
  Gelu,
  GeluErf,
  Relu,
  Elu,
  Silu,
  Powf,
  Sign,
  Sigmoid,
};

struct OpInfo {
  Op op;
  const char* name;  // the symbol is u<name>_<dtype>
  bool has_param;    // elu (alpha) and powf (exponent) take a scalar before `inp`
  bool exact;        // the result is exactly representable: no rounding at all
};

// Every float op of the module, in candle's order.
inline const std::vector<OpInfo>& float_ops() {
  static const std::vector<OpInfo> ops = {
      {Op::Neg, "neg", false, true},           {Op::Recip, "recip", false, false},
      {Op::Exp, "exp", false, false},          {Op::Log, "log", false, false},
      {Op::Sin, "sin", false, false},          {Op::Cos, "cos", false, false},
      {Op::Tanh, "tanh", false, false},        {Op::Erf, "erf", false, false},
      {Op::Ceil, "ceil", false, true},         {Op::Floor, "floor", false, true},
      {Op::Round, "round", false, true},       {Op::NormCdf, "normcdf", false, false},
      {Op::Abs, "abs", false, true},           {Op::Sqr, "sqr", false, false},
      {Op::Sqrt, "sqrt", false, false},        {Op::Gelu, "gelu", false, false},
      {Op::GeluErf, "gelu_erf", false, false}, {Op::Relu, "relu", false, true},
      {Op::Elu, "elu", true, false},           {Op::Silu, "silu", false, false},
      {Op::Powf, "powf", true, false},         {Op::Sign, "sign", false, true},
      {Op::Sigmoid, "sigmoid", false, false},
  };
  return ops;
}

// Integer ops hkb exports beyond candle; neg only for signed dtypes.
inline const std::vector<OpInfo>& int_ops() {
  static const std::vector<OpInfo> ops = {
      {Op::Abs, "abs", false, true},     {Op::Sqr, "sqr", false, true},
      {Op::Sign, "sign", false, true},   {Op::Relu, "relu", false, true},
      {Op::Ceil, "ceil", false, true},   {Op::Floor, "floor", false, true},
      {Op::Round, "round", false, true}, {Op::Neg, "neg", false, true},
  };
  return ops;
}

// Dtype tag of unary symbols: candle spells fp8 `fp8_e4m3` here (but `f8_e4m3` for ucopy).
template <typename T>
std::string op_tag() {
  if constexpr (std::is_same_v<T, hkb::f8e4m3>) {
    return "fp8_e4m3";
  } else {
    return ref::tag<T>();
  }
}

// x * sigmoid(t), the branch that cannot overflow; the algebraic identity
// 0.5 (1 + tanh(u)) = sigmoid(2u) lets gelu use it too.
inline long double mul_sigmoid(long double x, long double t) {
  if (t >= 0) return x / (1 + std::exp(-t));
  const long double e = std::exp(t);
  return x * e / (1 + e);
}

// The op's exact value (to long double precision). `nan_propagates` selects relu's NaN rule.
inline long double apply(Op op, long double x, long double p, bool relu_nan_propagates) {
  const long double sqrt_half = 0.707106781186547524400844362104849039L;
  const long double sqrt_2_over_pi = 0.797884560802865355879892119868763737L;
  switch (op) {
    case Op::Neg:
      return -x;
    case Op::Recip:
      return 1 / x;
    case Op::Exp:
      return std::exp(x);
    case Op::Log:
      return std::log(x);
    case Op::Sin:
      return std::sin(x);
    case Op::Cos:
      return std::cos(x);
    case Op::Tanh:
      return std::tanh(x);
    case Op::Erf:
      return std::erf(x);
    case Op::Ceil:
      return std::ceil(x);
    case Op::Floor:
      return std::floor(x);
    case Op::Round:
      return std::round(x);
    case Op::NormCdf:
      return 0.5L * std::erfc(-x * sqrt_half);
    case Op::Abs:
      return std::fabs(x);
    case Op::Sqr:
      return x * x;
    case Op::Sqrt:
      return std::sqrt(x);
    case Op::Gelu:
      return mul_sigmoid(x, 2 * sqrt_2_over_pi * (x + 0.044715L * x * x * x));
    case Op::GeluErf:
      return x * (0.5L * std::erfc(-x * sqrt_half));
    case Op::Relu:
      if (std::isnan(x)) return relu_nan_propagates ? x : 0.0L;
      return x > 0 ? x : 0.0L;
    case Op::Elu:
      return x > 0 ? x : p * std::expm1(x);
    case Op::Silu:
      return mul_sigmoid(x, x);
    case Op::Powf:
      return std::pow(x, p);
    case Op::Sign:
      return static_cast<long double>((x > 0) - (x < 0));
    case Op::Sigmoid:
      return mul_sigmoid(1.0L, x);
  }
  return std::numeric_limits<long double>::quiet_NaN();
}

// candle keeps NaN through relu for f16/bf16 (__hmax_nan) and maps it to 0 for f32/f64/fp8 (fmax).
template <typename T>
constexpr bool relu_propagates_nan() {
  return std::is_same_v<T, hkb::f16> || std::is_same_v<T, hkb::bf16>;
}

// Float op on a value of T, rounded once to T.
template <typename T>
T float_op(Op op, T x, T param) {
  // A 106-bit product does not fit long double: rounding it to 64 bits and then to 53 could
  // miss by an ulp. IEEE double multiplication is the correctly rounded square.
  if constexpr (std::is_same_v<T, double>) {
    if (op == Op::Sqr) return x * x;
  }
  const long double v =
      apply(op, cast_ref::exact(x), cast_ref::exact(param), relu_propagates_nan<T>());
  return cast_ref::from_exact<T>(v);
}

// Integer op, wrapping modulo 2^bits.
template <typename T>
T int_op(Op op, T x) {
  using U = std::make_unsigned_t<T>;
  const U u = static_cast<U>(x);
  switch (op) {
    case Op::Neg:
      return static_cast<T>(static_cast<U>(U(0) - u));
    case Op::Abs:
      if constexpr (std::is_signed_v<T>) {
        return x < 0 ? static_cast<T>(static_cast<U>(U(0) - u)) : x;
      } else {
        return x;
      }
    case Op::Sqr:
      return static_cast<T>(static_cast<U>(static_cast<uint64_t>(u) * u));
    case Op::Sign:
      if constexpr (std::is_signed_v<T>) {
        return static_cast<T>((x > 0) - (x < 0));
      } else {
        return static_cast<T>(x != 0);
      }
    case Op::Relu:
      if constexpr (std::is_signed_v<T>) {
        return x > 0 ? x : T(0);
      } else {
        return x;
      }
    case Op::Ceil:
    case Op::Floor:
    case Op::Round:
      return x;
    default:
      return x;
  }
}

// Tolerance in ulps of T of a float op against the once-rounded exact value. f16/bf16/fp8 compute
// in float and round once: 1 ulp (0 where float holds the exact result: exact ops and sqr).
// f32/f64 compute in their own precision with the vendor's libm; the composite ops amplify
// argument rounding: erfc(-x/sqrt2) and exp(-2u) of gelu have a relative condition number of
// up to ~50 on |x| <= 4 (x^2 * 3 for erfc, |2u| for gelu).
template <typename T>
double tolerance_ulps(Op op) {
  switch (op) {
    case Op::Neg:
    case Op::Abs:
    case Op::Ceil:
    case Op::Floor:
    case Op::Round:
    case Op::Relu:
    case Op::Sign:
    case Op::Sqr:
      return 0;
    default:
      break;
  }
  if constexpr (!std::is_same_v<T, float> && !std::is_same_v<T, double>) {
    return 1;
  } else {
    switch (op) {
      case Op::Recip:
      case Op::Sqrt:
        return 1;
      case Op::Exp:
      case Op::Log:
      case Op::Sin:
      case Op::Cos:
      case Op::Tanh:
      case Op::Erf:
        return 3;
      case Op::Elu:
        return 4;
      case Op::Sigmoid:
      case Op::Silu:
      case Op::Powf:
        return 8;
      case Op::NormCdf:
      case Op::GeluErf:
      case Op::Gelu:
        return 64;
      default:
        return 0;
    }
  }
}

}  // namespace unary_ref
