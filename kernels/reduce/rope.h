// Rotary embeddings rope_i, rope and rope_thd. A loop step takes K neighbouring pairs of one row
// (tuning::rope_pairs) where the shape and the pointers allow it, their elements and cos/sin as
// K-element vectors: one index computation and one access per operand for K pairs. Otherwise a
// pair a step. Indices in the index type I (hkb::divmod_as): 64 bits with 32-bit divisions while
// they fit, or 32 bits for one pair a step when every index of the tensor fits. Under candle's
// grid of a thread a pair, the blocks a multiprocessor holds at once loop over the steps and the
// others leave on their index (hkb::unit_a_thread_range).
#pragma once

#include "../common/elementwise.h"

namespace {

// K values from p as one vector (p aligned to K elements).
template <int K, typename T>
HKB_DEVICE hkb::Pack<T, K> load_k(const T* p) {
  return *reinterpret_cast<const hkb::Pack<T, K>*>(p);
}

// (x1, x2) -> (x1 c - x2 s, x1 s + x2 c) for the K pairs x1 = src[i1 + k], x2 = src[i2 + k] with
// c = cos[cs + k], s = sin[cs + k].
template <int K, typename T, typename I>
HKB_DEVICE void rotate(const T* src, const T* cos, const T* sin, T* dst, I i1, I i2, I cs) {
  const auto a = load_k<K>(src + i1), b = load_k<K>(src + i2);
  const auto c = load_k<K>(cos + cs), s = load_k<K>(sin + cs);
  hkb::Pack<T, K> x, y;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const auto ak = hkb::widen(a.v[k]), bk = hkb::widen(b.v[k]);
    const auto ck = hkb::widen(c.v[k]), sk = hkb::widen(s.v[k]);
    x.v[k] = hkb::narrow<T>(ak * ck - bk * sk);
    y.v[k] = hkb::narrow<T>(ak * sk + bk * ck);
  }
  *reinterpret_cast<hkb::Pack<T, K>*>(dst + i1) = x;
  *reinterpret_cast<hkb::Pack<T, K>*>(dst + i2) = y;
}

// rope_i's K interleaved pairs from element i (x[i + 2k], x[i + 2k + 1]).
template <int K, typename T, typename I>
HKB_DEVICE void rotate_interleaved(const T* src, const T* cos, const T* sin, T* dst, I i, I cs) {
  const auto v = load_k<2 * K>(src + i);
  const auto c = load_k<K>(cos + cs), s = load_k<K>(sin + cs);
  hkb::Pack<T, 2 * K> out;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const auto a = hkb::widen(v.v[2 * k]), b = hkb::widen(v.v[2 * k + 1]);
    const auto ck = hkb::widen(c.v[k]), sk = hkb::widen(s.v[k]);
    out.v[2 * k] = hkb::narrow<T>(a * ck - b * sk);
    out.v[2 * k + 1] = hkb::narrow<T>(a * sk + b * ck);
  }
  *reinterpret_cast<hkb::Pack<T, 2 * K>*>(dst + i) = out;
}

// Whether steps of K pairs apply: rows of a multiple of K pairs, K pairs from an even pair index
// in one batch of the tables (stride_b a multiple of 2 K), every pointer aligned to its vectors.
template <int K, typename T>
HKB_DEVICE bool k_pairs(uint64_t row_pairs, uint32_t stride_b, const T* src, const T* cos,
                        const T* sin, T* dst, int src_elems) {
  return K > 1 && row_pairs % K == 0 && stride_b % (2 * K) == 0 &&
         hkb::is_aligned(src, sizeof(T) * src_elems) &&
         hkb::is_aligned(dst, sizeof(T) * src_elems) && hkb::is_aligned(cos, sizeof(T) * K) &&
         hkb::is_aligned(sin, sizeof(T) * K);
}

// Interleaved pairs (x[2i], x[2i+1]); cos/sin index = pair index within a (b, h) row of td/2.
template <int K, typename I, typename T>
HKB_DEVICE void rope_i_steps(hkb::UnitRange r, const T* src, const T* cos, const T* sin, T* dst,
                             uint32_t bh, uint32_t td, uint32_t stride_b) {
  const uint32_t half_td = td / 2;
  const I steps = static_cast<I>(static_cast<uint64_t>(bh) * td / 2 / K);
  for (I u = static_cast<I>(r.begin); u < steps; u += static_cast<I>(r.step)) {
    const I p = u * K;
    I row, cs, batch, unused;
    hkb::divmod_as<I>(p, half_td, row, cs);
    if (stride_b != 0) hkb::divmod_as<I>(2 * p, stride_b, batch, unused), cs += batch * half_td;
    rotate_interleaved<K>(src, cos, sin, dst, 2 * p, cs);
  }
}

// Halves (x[i], x[i + d/2]) of each (b, h, t) vector of d; src is (b, h, t, d).
template <int K, typename I, typename T>
HKB_DEVICE void rope_steps(hkb::UnitRange r, const T* src, const T* cos, const T* sin, T* dst,
                           uint32_t bh, uint32_t td, uint32_t d, uint32_t stride_b) {
  const uint32_t half_td = td / 2, half_d = d / 2;
  const I steps = static_cast<I>(static_cast<uint64_t>(bh) * td / 2 / K);
  for (I u = static_cast<I>(r.begin); u < steps; u += static_cast<I>(r.step)) {
    const I p = u * K;
    I i_bh, cs, i_t, i_d, batch, unused;
    hkb::divmod_as<I>(p, half_td, i_bh, cs);  // cs = i_t * d/2 + i_d
    hkb::divmod_as<I>(cs, half_d, i_t, i_d);
    const I i1 = i_bh * td + i_t * d + i_d;
    if (stride_b != 0) hkb::divmod_as<I>(2 * p, stride_b, batch, unused), cs += batch * half_td;
    rotate<K>(src, cos, sin, dst, i1, i1 + half_d, cs);
  }
}

// Halves of each (b, t, h) vector of d; src is (b, t, h, d), cos/sin are (t, d/2) or (b, t, d/2).
template <int K, typename I, typename T>
HKB_DEVICE void rope_thd_steps(hkb::UnitRange r, const T* src, const T* cos, const T* sin, T* dst,
                               uint32_t b, uint32_t t, uint32_t h, uint32_t d, uint32_t stride_b) {
  const uint32_t half_d = d / 2;
  const I steps = static_cast<I>(static_cast<uint64_t>(b) * t * h * d / 2 / K);
  const I half_td = static_cast<I>(static_cast<uint64_t>(t) * half_d);
  for (I u = static_cast<I>(r.begin); u < steps; u += static_cast<I>(r.step)) {
    const I p = u * K;
    I bth, i_d, bt, i_h, i_b, i_t, batch, unused;
    hkb::divmod_as<I>(p, half_d, bth, i_d);
    hkb::divmod_as<I>(bth, h, bt, i_h);
    hkb::divmod_as<I>(bt, t, i_b, i_t);
    const I i1 = bth * d + i_d;
    I cs = i_t * half_d + i_d;
    if (stride_b != 0) hkb::divmod_as<I>(2 * p, stride_b, batch, unused), cs += batch * half_td;
    rotate<K>(src, cos, sin, dst, i1, i1 + half_d, cs);
  }
}

// The steps of K pairs where k_pairs allows them, else of one pair, those in 32-bit indices when
// `elems` (the tensor's element count) and the threads' step stay below 2^32 (32-bit indices
// measured faster for one pair a step and slower for K). Idle threads leave first.
#define HKB_ROPE_DISPATCH(STEPS, K, ELEMS, K_OK, ...)                                \
  do {                                                                               \
    if (hkb::tuning::kRopeResident && hkb::past_resident_bound()) return;            \
    const hkb::UnitRange r = hkb::unit_a_thread_range<hkb::tuning::kRopeResident>(); \
    if (r.begin == hkb::kIdle) return;                                               \
    if (K_OK) {                                                                      \
      STEPS<K, uint64_t>(r, __VA_ARGS__);                                            \
    } else if ((ELEMS) < (1ull << 32) && r.step < (1ull << 31)) {                    \
      STEPS<1, uint32_t>(r, __VA_ARGS__);                                            \
    } else {                                                                         \
      STEPS<1, uint64_t>(r, __VA_ARGS__);                                            \
    }                                                                                \
  } while (0)

template <typename T>
__device__ void rope_i(const T* src, const T* cos, const T* sin, T* dst, uint32_t bh, uint32_t td,
                       uint32_t stride_b) {
  constexpr int K = hkb::tuning::rope_pairs(true, sizeof(T));
  if (td / 2 == 0) return;
  HKB_ROPE_DISPATCH(rope_i_steps, K, static_cast<uint64_t>(bh) * td,
                    td % 2 == 0 && k_pairs<K>(td / 2, stride_b, src, cos, sin, dst, 2 * K), src,
                    cos, sin, dst, bh, td, stride_b);
}

template <typename T>
__device__ void rope(const T* src, const T* cos, const T* sin, T* dst, uint32_t bh, uint32_t td,
                     uint32_t d, uint32_t stride_b) {
  constexpr int K = hkb::tuning::rope_pairs(false, sizeof(T));
  if (td / 2 == 0 || d / 2 == 0) return;
  HKB_ROPE_DISPATCH(rope_steps, K, static_cast<uint64_t>(bh) * td,
                    td % d == 0 && k_pairs<K>(d / 2, stride_b, src, cos, sin, dst, K), src, cos,
                    sin, dst, bh, td, d, stride_b);
}

template <typename T>
__device__ void rope_thd(const T* src, const T* cos, const T* sin, T* dst, uint32_t b, uint32_t t,
                         uint32_t h, uint32_t d, uint32_t stride_b) {
  constexpr int K = hkb::tuning::rope_pairs(false, sizeof(T));
  if (d / 2 == 0 || t == 0 || h == 0) return;
  HKB_ROPE_DISPATCH(rope_thd_steps, K, static_cast<uint64_t>(b) * t * h * d,
                    k_pairs<K>(d / 2, stride_b, src, cos, sin, dst, K), src, cos, sin, dst, b, t, h,
                    d, stride_b);
}

#undef HKB_ROPE_DISPATCH

}  // namespace
