// CPU reference of the BINARY module (kernels/binary.hip), written from the semantics stated there:
// floats computed exactly in double and rounded once to the output type (for one +, -, *, / of
// values of T, double then T rounds exactly like the kernel's float then T); max/min with candle's
// NaN rules per dtype and -0.0 < +0.0; comparisons in double; integers wrapping, division
// truncating.
#pragma once

#include "dtypes.hpp"

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace ref {

enum class BinaryOp { kAdd, kSub, kMul, kDiv, kMaximum, kMinimum, kEq, kNe, kLt, kLe, kGt, kGe };

inline constexpr BinaryOp kAllBinaryOps[] = {BinaryOp::kAdd, BinaryOp::kSub,     BinaryOp::kMul,
                                             BinaryOp::kDiv, BinaryOp::kMaximum, BinaryOp::kMinimum,
                                             BinaryOp::kEq,  BinaryOp::kNe,      BinaryOp::kLt,
                                             BinaryOp::kLe,  BinaryOp::kGt,      BinaryOp::kGe};

// candle's symbol prefix of each op.
inline const char* binary_op_prefix(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd:
      return "badd";
    case BinaryOp::kSub:
      return "bsub";
    case BinaryOp::kMul:
      return "bmul";
    case BinaryOp::kDiv:
      return "bdiv";
    case BinaryOp::kMaximum:
      return "bmaximum";
    case BinaryOp::kMinimum:
      return "bminimum";
    case BinaryOp::kEq:
      return "eq";
    case BinaryOp::kNe:
      return "ne";
    case BinaryOp::kLt:
      return "lt";
    case BinaryOp::kLe:
      return "le";
    case BinaryOp::kGt:
      return "gt";
    case BinaryOp::kGe:
      return "ge";
  }
  return "?";
}

inline bool is_comparison(BinaryOp op) {
  return op == BinaryOp::kEq || op == BinaryOp::kNe || op == BinaryOp::kLt || op == BinaryOp::kLe ||
         op == BinaryOp::kGt || op == BinaryOp::kGe;
}

// f16 and bf16 propagate NaN through max/min (candle: __hmax_nan / __hmin_nan); f32, f64 and
// f8_e4m3 ignore a NaN operand (fmax / fmin).
template <typename T>
constexpr bool minmax_propagates_nan_v = std::is_same_v<T, f16> || std::is_same_v<T, bf16>;

// max / min of two doubles with -0.0 < +0.0 and the NaN rule of T.
template <typename T>
double extremum(double x, double y, bool want_max) {
  if (std::isnan(x) || std::isnan(y)) {
    if (minmax_propagates_nan_v<T>) return std::numeric_limits<double>::quiet_NaN();
    return std::isnan(x) ? y : x;  // NaN only when both are NaN
  }
  if (x == y) {  // equal values, or zeros of either sign
    const bool x_first = want_max ? !std::signbit(x) : std::signbit(x);
    return x_first ? x : y;
  }
  return (want_max ? x > y : x < y) ? x : y;
}

// Result of an arithmetic op (add sub mul div maximum minimum) on a, b of T.
template <typename T>
T binary_value(BinaryOp op, T a, T b) {
  if constexpr (is_float_v<T>) {
    const double x = to_double(a), y = to_double(b);
    double r = 0;
    switch (op) {
      case BinaryOp::kAdd:
        r = x + y;
        break;
      case BinaryOp::kSub:
        r = x - y;
        break;
      case BinaryOp::kMul:
        r = x * y;
        break;
      case BinaryOp::kDiv:
        r = x / y;
        break;
      case BinaryOp::kMaximum:
        r = extremum<T>(x, y, true);
        break;
      case BinaryOp::kMinimum:
        r = extremum<T>(x, y, false);
        break;
      default:
        break;
    }
    return from_double<T>(r);
  } else {
    // Wrapping arithmetic in 64-bit unsigned, then truncated to T (two's complement).
    const uint64_t ua = static_cast<uint64_t>(static_cast<int64_t>(a));
    const uint64_t ub = static_cast<uint64_t>(static_cast<int64_t>(b));
    switch (op) {
      case BinaryOp::kAdd:
        return static_cast<T>(ua + ub);
      case BinaryOp::kSub:
        return static_cast<T>(ua - ub);
      case BinaryOp::kMul:
        return static_cast<T>(ua * ub);
      case BinaryOp::kDiv:
        // Truncating division of the values (C semantics); the caller keeps b != 0 and, for
        // i32/i64, avoids MIN / -1. i16 MIN / -1 = 32768 wraps to MIN like the kernel's int math.
        if constexpr (std::is_signed_v<T>) {
          return static_cast<T>(static_cast<int64_t>(a) / static_cast<int64_t>(b));
        } else {
          return static_cast<T>(static_cast<uint64_t>(a) / static_cast<uint64_t>(b));
        }
      case BinaryOp::kMaximum:
        return a > b ? a : b;
      case BinaryOp::kMinimum:
        return a < b ? a : b;
      default:
        return T{};
    }
  }
}

// Result (0 or 1) of a comparison op on a, b of T; floats compare as their exact values.
template <typename T>
uint8_t binary_compare(BinaryOp op, T a, T b) {
  bool r = false;
  if constexpr (is_float_v<T>) {
    const double x = to_double(a), y = to_double(b);
    switch (op) {
      case BinaryOp::kEq:
        r = x == y;
        break;
      case BinaryOp::kNe:
        r = x != y;
        break;
      case BinaryOp::kLt:
        r = x < y;
        break;
      case BinaryOp::kLe:
        r = x <= y;
        break;
      case BinaryOp::kGt:
        r = x > y;
        break;
      case BinaryOp::kGe:
        r = x >= y;
        break;
      default:
        break;
    }
  } else {
    switch (op) {
      case BinaryOp::kEq:
        r = a == b;
        break;
      case BinaryOp::kNe:
        r = a != b;
        break;
      case BinaryOp::kLt:
        r = a < b;
        break;
      case BinaryOp::kLe:
        r = a <= b;
        break;
      case BinaryOp::kGt:
        r = a > b;
        break;
      case BinaryOp::kGe:
        r = a >= b;
        break;
      default:
        break;
    }
  }
  return r ? 1 : 0;
}

// Identity of results: the same bits, or both NaN (NaN payloads are not part of the contract of
// arithmetic results). -0.0 and +0.0 differ.
template <typename T>
bool same_value(T a, T b) {
  if constexpr (is_float_v<T>) {
    if (std::isnan(to_double(a)) && std::isnan(to_double(b))) return true;
  }
  return same_bits(a, b);
}

}  // namespace ref
