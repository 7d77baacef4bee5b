// BINARY: out[i] = op(lhs[i], rhs[i]) over two possibly strided / broadcast inputs into a
// contiguous output; info = [dims, lhs strides, rhs strides] or null when both are contiguous
// (drivers in common/binary_layout.h). Ops badd bsub bmul bdiv bmaximum bminimum write the input
// dtype; eq ne lt le gt ge write u8 0/1.
//
// Semantics:
// - f16 / bf16 / f8_e4m3 compute in float and round once to the output type (round to nearest
//   even; f8_e4m3 saturates to +-448 and gives NaN 0x7F for NaN, as candle's __nv_fp8_e4m3).
//   Float is wide enough that this equals the exactly rounded result of each op.
// - bmaximum / bminimum keep candle's NaN rules per dtype:
//     f32, f64, f8_e4m3: NaN-ignoring (fmax / fmin): a NaN operand yields the other operand; NaN
//       only when both are NaN.
//     f16, bf16: NaN-propagating (__hmax_nan / __hmin_nan): any NaN operand yields the canonical
//       NaN 0x7FFF.
//   Zeros of either sign order as -0.0 < +0.0 for every float dtype, so the result is
//   deterministic (max(-0.0, +0.0) = +0.0, min = -0.0).
// - Comparisons of floats are IEEE: false when either operand is NaN, except ne which is true
//   (candle's __half operator!= is the unordered __hneu). f16 / bf16 / f8 compare as float (f8
//   through an order key of its bits: the same result).
// - Integers: add, sub and mul wrap modulo 2^bits (computed unsigned, so no signed overflow);
//   div truncates toward zero. Division by zero, and INT_MIN / -1 for i32 / i64, give an
//   unspecified value (candle: undefined) and never trap.
// - Dtypes: candle's u8 u32 i64 bf16 f16 f32 f64 f8_e4m3 (96 symbols), plus i16 and i32, which
//   candle's Rust side names (`badd_i32`, ...) and candle's kernels lack (24 more).
#include <type_traits>

#include "common/binary_layout.h"
#include "common/dtype_lists.h"

namespace {

template <typename T>
constexpr bool is_float_like = std::is_floating_point<T>::value || hkb::is_reduced_float<T>::value;

// Unsigned type of at least 32 bits for wrapping integer arithmetic: u8 / i16 would otherwise
// promote to int, where a product can overflow.
template <typename T>
using wrap_t = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;

HKB_DEVICE bool sign_bit(float v) {
  return (hkb::float_bits(v) >> 31) != 0;
}
HKB_DEVICE bool sign_bit(double v) {
  return (hkb::double_bits(v) >> 63) != 0;
}

// NaN-ignoring max / min with -0.0 < +0.0.
template <typename C>
HKB_DEVICE C max_ignoring_nan(C a, C b) {
  if (a != a) return b;
  if (b != b) return a;
  if (a == b) return sign_bit(a) ? b : a;
  return a > b ? a : b;
}
template <typename C>
HKB_DEVICE C min_ignoring_nan(C a, C b) {
  if (a != a) return b;
  if (b != b) return a;
  if (a == b) return sign_bit(a) ? a : b;
  return a < b ? a : b;
}

struct Add {
  template <typename T>
  HKB_DEVICE T operator()(T a, T b) const {
    if constexpr (is_float_like<T>) {
      return hkb::narrow<T>(hkb::widen(a) + hkb::widen(b));
    } else {
      return static_cast<T>(static_cast<wrap_t<T>>(a) + static_cast<wrap_t<T>>(b));
    }
  }
};
struct Sub {
  template <typename T>
  HKB_DEVICE T operator()(T a, T b) const {
    if constexpr (is_float_like<T>) {
      return hkb::narrow<T>(hkb::widen(a) - hkb::widen(b));
    } else {
      return static_cast<T>(static_cast<wrap_t<T>>(a) - static_cast<wrap_t<T>>(b));
    }
  }
};
struct Mul {
  template <typename T>
  HKB_DEVICE T operator()(T a, T b) const {
    if constexpr (is_float_like<T>) {
      return hkb::narrow<T>(hkb::widen(a) * hkb::widen(b));
    } else {
      return static_cast<T>(static_cast<wrap_t<T>>(a) * static_cast<wrap_t<T>>(b));
    }
  }
};
struct Div {
  template <typename T>
  HKB_DEVICE T operator()(T a, T b) const {
    if constexpr (is_float_like<T>) {
      return hkb::narrow<T>(hkb::widen(a) / hkb::widen(b));
    } else {
      return static_cast<T>(a / b);
    }
  }
};

// f16 / bf16: NaN-propagating, like __hmax_nan / __hmin_nan, on the 16-bit patterns: a NaN is
// a magnitude above infinity's, and the others compare by their order keys (dtypes.h: -0 below
// +0), so no operand goes through a float.
template <typename T, bool kMax>
HKB_DEVICE T extremum_propagating_nan(T a, T b) {
  constexpr uint32_t kInf = std::is_same<T, hkb::bf16>::value ? 0x7F80u : 0x7C00u;
  const uint32_t ua = a.bits, ub = b.bits;
  if ((ua & 0x7FFFu) > kInf || (ub & 0x7FFFu) > kInf) return T{0x7FFF};
  const int32_t ka = hkb::half_order_key(a.bits), kb = hkb::half_order_key(b.bits);
  return (kMax ? kb > ka : kb < ka) ? b : a;
}

template <bool kMax>
struct Extremum {
  template <typename T>
  HKB_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_same<T, hkb::f16>::value || std::is_same<T, hkb::bf16>::value) {
      return extremum_propagating_nan<T, kMax>(a, b);
    } else if constexpr (is_float_like<T>) {
      const auto x = hkb::widen(a), y = hkb::widen(b);
      return hkb::narrow<T>(kMax ? max_ignoring_nan(x, y) : min_ignoring_nan(x, y));
    } else {
      return kMax ? (a > b ? a : b) : (a < b ? a : b);
    }
  }
};

enum class Cmp { kEq, kNe, kLt, kLe, kGt, kGe };

template <Cmp kCmp, typename K>
HKB_DEVICE bool compare(K x, K y) {
  switch (kCmp) {
    case Cmp::kEq:
      return x == y;
    case Cmp::kNe:
      return x != y;
    case Cmp::kLt:
      return x < y;
    case Cmp::kLe:
      return x <= y;
    case Cmp::kGt:
      return x > y;
    default:
      return x >= y;
  }
}

template <Cmp kCmp>
struct Compare {
  template <typename T>
  HKB_DEVICE uint8_t operator()(T a, T b) const {
    if constexpr (std::is_same<T, hkb::f8e4m3>::value) {
      // The result through float, from the bits: 16 lanes of fp8 -> float conversions per pack
      // spill under gfx906's 64 VGPRs.
      if (hkb::f8_is_nan(a) || hkb::f8_is_nan(b)) return kCmp == Cmp::kNe ? 1 : 0;
      return compare<kCmp>(hkb::f8_order_key(a), hkb::f8_order_key(b)) ? 1 : 0;
    } else {
      return compare<kCmp>(hkb::widen(a), hkb::widen(b)) ? 1 : 0;
    }
  }
};

template <typename T, typename TO, typename Op>
struct BinaryBody {
  const T* lhs;
  const T* rhs;
  Op op;

  template <int W, typename I>
  HKB_DEVICE void store(const I (&off)[2], const I (&stride)[2], TO* out) const {
    TO res[W];
    if (W > 1 && hkb::is_vector_run<W>(lhs, off[0], stride[0]) &&
        hkb::is_vector_run<W>(rhs, off[1], stride[1])) {
      T a[W], b[W];
      hkb::load_vector_run<W>(lhs, off[0], stride[0], a);
      hkb::load_vector_run<W>(rhs, off[1], stride[1], b);
#pragma unroll
      for (int j = 0; j < W; ++j) res[j] = op(a[j], b[j]);
    } else {
#pragma unroll
      for (int j = 0; j < W; ++j)
        res[j] = op(lhs[off[0] + j * stride[0]], rhs[off[1] + j * stride[1]]);
    }
    hkb::store_results<W>(out, res);
  }
};

template <typename T, typename TO, typename Op>
__device__ void binary(size_t numel, size_t num_dims, const size_t* info, const T* lhs,
                       const T* rhs, TO* out) {
  constexpr int V = hkb::pack_width<T, TO>::value;
  // Two packs a unit where the 32-register budget holds them without spilling (nvcc 13, sm_90):
  // for 4-byte operands always in strided / broadcast layouts, and for 2- and 4-byte operands in
  // contiguous ones except in div and the 4-byte maximum and minimum; 2-byte layouts only in add,
  // sub, mul, maximum and minimum (whose 2-byte form works on the bits).
  constexpr int kSize = hkb::max_size<T, TO>::value;
  constexpr bool kHeavy =
      std::is_same<Op, Div>::value || (kSize != 2 && (std::is_same<Op, Extremum<true>>::value ||
                                                      std::is_same<Op, Extremum<false>>::value));
  constexpr bool kSameType = std::is_same<T, TO>::value;
  constexpr int VW = kSize == 4 || (kSize == 2 && kSameType && !kHeavy) ? 2 * V : V;
  constexpr int VD = (kSize == 4 || kSize == 2) && !kHeavy ? 2 * V : V;
  const BinaryBody<T, TO, Op> body{lhs, rhs, Op{}};
  hkb::map_layout<2, V, VW, VD>(numel, num_dims, info, out, body);
}

}  // namespace

// Two 1024-thread blocks per SM need <= 32 registers; 1-byte operands (16 per pack) and f64
// division (a called slow path) spill there (nvcc 13, sm_90), so they keep one block per SM.
template <typename T, typename Op>
constexpr int binary_blocks() {
  return sizeof(T) == 1 || (sizeof(T) == 8 && std::is_same<Op, Div>::value) ? 1 : 2;
}
#define HKB_BINARY_ENTRY(NAME, T, TO, OP)                                             \
  HKB_GLOBAL void HKB_OCCUPANCY(1024, (binary_blocks<T, OP>()))                       \
      NAME(const size_t numel, const size_t num_dims, const size_t* dims_and_strides, \
           const T* lhs, const T* rhs, TO* out) {                                     \
    binary<T, TO, OP>(numel, num_dims, dims_and_strides, lhs, rhs, out);              \
  }

#define HKB_BINARY(TAG, T)                                  \
  HKB_BINARY_ENTRY(badd_##TAG, T, T, Add)                   \
  HKB_BINARY_ENTRY(bsub_##TAG, T, T, Sub)                   \
  HKB_BINARY_ENTRY(bmul_##TAG, T, T, Mul)                   \
  HKB_BINARY_ENTRY(bdiv_##TAG, T, T, Div)                   \
  HKB_BINARY_ENTRY(bmaximum_##TAG, T, T, Extremum<true>)    \
  HKB_BINARY_ENTRY(bminimum_##TAG, T, T, Extremum<false>)   \
  HKB_BINARY_ENTRY(eq_##TAG, T, uint8_t, Compare<Cmp::kEq>) \
  HKB_BINARY_ENTRY(ne_##TAG, T, uint8_t, Compare<Cmp::kNe>) \
  HKB_BINARY_ENTRY(lt_##TAG, T, uint8_t, Compare<Cmp::kLt>) \
  HKB_BINARY_ENTRY(le_##TAG, T, uint8_t, Compare<Cmp::kLe>) \
  HKB_BINARY_ENTRY(gt_##TAG, T, uint8_t, Compare<Cmp::kGt>) \
  HKB_BINARY_ENTRY(ge_##TAG, T, uint8_t, Compare<Cmp::kGe>)
HKB_DTYPES_ALL(HKB_BINARY)
