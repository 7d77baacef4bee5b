// Integer dot products of a weight block with q8_1 activations: MMVQ's 8-value-wide items for the
// batches blockdot.h's wide items do not serve (q3_K above batch 1, q2_K, q4_K, q5_K above 2). A
// weight block is cut into kItems items; an item is a few 32-bit words of packed signed bytes (the
// weight levels) and their float scales. For those formats Vec<F> has
//   kItems                      items per weight block;
//   W load(block, i)            item i of a weight block (block at a multiple of F::kAlign bytes);
//   A act(y, i)                 the activation bytes item i multiplies (y: the first q8_1 block
//                               under the weight block; q8_1 blocks are 36 bytes, 4-aligned);
//   float dot(W, A)             the item's share of the dot product.
// The integer sums are exact (dot4_i8); the scalings follow the CPU reference (tests/reference/
// ggml_ref_dot.hpp): d_a times exact integer sums. (q6_levels below also serves MMQ's decoding.)
#pragma once

#include "quantized/blocks.h"

namespace hkb::quant {

constexpr int kQ81Bytes = 36;
constexpr uint32_t kOnes = 0x01010101u;

// Activation ints j0, j1 of a q8_1 block and its d (the K-quants' sums are exact integers: the
// block's stored sum s goes unused).
struct A2 {
  int a0, a1;
  float d;
};
HKB_DEVICE A2 act_q81(const uint8_t* y, int j0, int j1) {
  const uint32_t ds = ld32<4>(y);
  return {static_cast<int>(ld32<4>(y + 4 + 4 * j0)), static_cast<int>(ld32<4>(y + 4 + 4 * j1)),
          half_lo(ds)};
}

template <typename F>
struct Vec;

// ---- q2_K, q3_K above batch 2 / 1 (the activation sums and level offsets are taken per row here,
// per column in blockdot.h's items: fewer registers a column): item i = (half n = i / 4, r = i % 4)
// holds, for k = 0..3, the values 128 n + 32 k + 8 r .. +7 (blocks.h's layout): q8_1 block
// 4 n + k, ints 2 r and 2 r + 1, and the 16-value group 8 n + 2 k + r / 2.
struct A8 {
  int a[4][2];
  float d[4];
};
HKB_DEVICE A8 act_k4(const uint8_t* y, int i) {
  A8 r;
  const int n = i >> 2, j = 2 * (i & 3);
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const A2 x = act_q81(y + kQ81Bytes * (4 * n + k), j, j + 1);
    r.a[k][0] = x.a0, r.a[k][1] = x.a1, r.d[k] = x.d;
  }
  return r;
}
struct W8 {
  int q[4][2];
  float d, dmin;
  uint32_t sc;  // byte k: group k's scale (q2_K: scale | min << 4; q3_K: a signed byte)
};
HKB_DEVICE int dot_k(const W8& w, const A8& a, int k) {
  return dot4_i8(w.q[k][0], a.a[k][0], dot4_i8(w.q[k][1], a.a[k][1], 0));
}
HKB_DEVICE int sum_k(const A8& a, int k) {
  return dot4_i8(static_cast<int>(kOnes), a.a[k][0],
                 dot4_i8(static_cast<int>(kOnes), a.a[k][1], 0));
}
HKB_DEVICE int group_k(int i, int k) {
  return 8 * (i >> 2) + 2 * k + ((i & 3) >> 1);
}

// Items of 4 groups of 8 values (q2_K, q3_K): d_a per group times the group's d * scale
// times its integer sum, less (q2_K) dmin * min times the activations' integer sum.
template <bool kMin>
struct Groups16 {
  static constexpr int kItems = 8;
  static HKB_DEVICE A8 act(const uint8_t* y, int i) { return act_k4(y, i); }
  static HKB_DEVICE float dot(const W8& w, const A8& a) {
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const uint32_t sc = (w.sc >> (8 * k)) & 0xFFu;
      const float scale = kMin ? static_cast<float>(sc & 15u)
                               : static_cast<float>(static_cast<int8_t>(static_cast<uint8_t>(sc)));
      float t = w.d * scale * static_cast<float>(dot_k(w, a, k));
      if constexpr (kMin)
        t -= w.dmin * static_cast<float>(sc >> 4) * static_cast<float>(sum_k(a, k));
      s += a.d[k] * t;
    }
    return s;
  }
};

template <>
struct Vec<Q2_K> : Groups16<true> {
  static HKB_DEVICE W8 load(const uint8_t* b, int i) {
    const uint8_t* q = b + 16 + 32 * (i >> 2) + 8 * (i & 3);
    const uint32_t w0 = ldw32<4>(q), w1 = ldw32<4>(q + 4), dm = ldw32<4>(b + 80);
    W8 w;
    w.d = half_lo(dm), w.dmin = half_hi(dm), w.sc = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      w.q[k][0] = static_cast<int>((w0 >> (2 * k)) & 0x03030303u);
      w.q[k][1] = static_cast<int>((w1 >> (2 * k)) & 0x03030303u);
      w.sc |= static_cast<uint32_t>(b[group_k(i, k)]) << (8 * k);
    }
    return w;
  }
};

// Levels 0..3 with bit 2 from the high mask: the byte is q - 4 when the mask bit is clear, i.e.
// the 2-bit level with bits 2..7 set (0xFC | q), a carry-free multiply of the clear-bit flags.
HKB_DEVICE int q3_levels(uint32_t q, uint32_t h) {
  return static_cast<int>(q | (((~h) & kOnes) * 0xFCu));
}
// Group g's 6-bit scale less 32 as a signed byte (bits 0..7 of the result).
HKB_DEVICE uint32_t q3_scale(const uint8_t* sc, int g) {
  return (q3_scale_bits(sc[g & 7], sc[8 + (g & 3)], g) - 32u) & 0xFFu;
}

template <>
struct Vec<Q3_K> : Groups16<false> {
  static HKB_DEVICE W8 load(const uint8_t* b, int i) {
    const int n = i >> 2;
    const uint8_t* q = b + 32 + 32 * n + 8 * (i & 3);
    const uint8_t* hm = b + 8 * (i & 3);
    const uint32_t w0 = ldw32<2>(q), w1 = ldw32<2>(q + 4), h0 = ldw32<2>(hm), h1 = ldw32<2>(hm + 4);
    W8 w;
    w.d = half_lo(ldw16<2>(b + 108)), w.dmin = 0.0f, w.sc = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int bit = 4 * n + k;
      w.q[k][0] = q3_levels((w0 >> (2 * k)) & 0x03030303u, h0 >> bit);
      w.q[k][1] = q3_levels((w1 >> (2 * k)) & 0x03030303u, h1 >> bit);
      w.sc |= q3_scale(b + 96, group_k(i, k)) << (8 * k);
    }
    return w;
  }
};

// Levels 0..63 minus 32 as signed bytes: x ^ 32 is right for x >= 32; below, bits 6 and 7 are
// set as well (the flag is bit 5 of x ^ 32).
HKB_DEVICE int q6_levels(uint32_t x) {
  const uint32_t y = x ^ 0x20202020u;
  return static_cast<int>(y | (((y >> 5) & kOnes) * 0xC0u));
}

// ---- q4_K, q5_K: item i = (chunk c = i / 4, r = i % 4): quant bytes 8 r .. 8 r + 7 of chunk c
// hold values 64 c + 8 r .. (group 2 c, low nibbles) and 64 c + 32 + 8 r .. (group 2 c + 1).
struct W4 {
  int lo[2], hi[2];
  KScaleMin s0, s1;
};
struct A4 {
  A2 lo, hi;
};
template <int Q>
HKB_DEVICE W4 load_k4(const uint8_t* b, int i) {
  const int c = i >> 2;
  const uint8_t* q = b + Q + 32 * c + 8 * (i & 3);
  const uint32_t w[2] = {ldw32<4>(q), ldw32<4>(q + 4)}, dm = ldw32<4>(b);
  const uint32_t g0 = 2 * c, g1 = 2 * c + 1;
  W4 r;
#pragma unroll
  for (int j = 0; j < 2; ++j) {
    r.lo[j] = static_cast<int>(w[j] & 0x0F0F0F0Fu);
    r.hi[j] = static_cast<int>((w[j] >> 4) & 0x0F0F0F0Fu);
  }
  r.s0 = k_scale_min(dm, b[4 + (g0 & 3)], b[8 + (g0 & 3)], b[12 + (g0 & 3)], g0);
  r.s1 = k_scale_min(dm, b[4 + (g1 & 3)], b[8 + (g1 & 3)], b[12 + (g1 & 3)], g1);
  return r;
}
HKB_DEVICE A4 act_k2(const uint8_t* y, int i) {
  const int c = i >> 2, j = 2 * (i & 3);
  return {act_q81(y + kQ81Bytes * (2 * c), j, j + 1),
          act_q81(y + kQ81Bytes * (2 * c + 1), j, j + 1)};
}
HKB_DEVICE float dot_k2(const W4& w, const A4& a) {
  const int one = static_cast<int>(kOnes);
  const int s0 = dot4_i8(w.lo[0], a.lo.a0, dot4_i8(w.lo[1], a.lo.a1, 0));
  const int s1 = dot4_i8(w.hi[0], a.hi.a0, dot4_i8(w.hi[1], a.hi.a1, 0));
  const int m0 = dot4_i8(one, a.lo.a0, dot4_i8(one, a.lo.a1, 0));
  const int m1 = dot4_i8(one, a.hi.a0, dot4_i8(one, a.hi.a1, 0));
  return a.lo.d * (w.s0.d * static_cast<float>(s0) - w.s0.m * static_cast<float>(m0)) +
         a.hi.d * (w.s1.d * static_cast<float>(s1) - w.s1.m * static_cast<float>(m1));
}

template <>
struct Vec<Q4_K> {
  static constexpr int kItems = 16;
  static HKB_DEVICE W4 load(const uint8_t* b, int i) { return load_k4<16>(b, i); }
  static HKB_DEVICE A4 act(const uint8_t* y, int i) { return act_k2(y, i); }
  static HKB_DEVICE float dot(const W4& w, const A4& a) { return dot_k2(w, a); }
};

// q5_K: bit 4 of value 64 c + l from bit 2 c of qh byte l (32 + l: bit 2 c + 1).
template <>
struct Vec<Q5_K> {
  static constexpr int kItems = 16;
  static HKB_DEVICE W4 load(const uint8_t* b, int i) {
    W4 w = load_k4<48>(b, i);
    const int c = i >> 2;
    const uint8_t* h = b + 16 + 8 * (i & 3);
    const uint32_t hw[2] = {ldw32<4>(h), ldw32<4>(h + 4)};
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      w.lo[j] |= static_cast<int>(((hw[j] >> (2 * c)) & kOnes) << 4);
      w.hi[j] |= static_cast<int>(((hw[j] >> (2 * c + 1)) & kOnes) << 4);
    }
    return w;
  }
  static HKB_DEVICE A4 act(const uint8_t* y, int i) {
    return act_k2(y, i);
  }
  static HKB_DEVICE float dot(const W4& w, const A4& a) {
    return dot_k2(w, a);
  }
};

}  // namespace hkb::quant
