// MMVQ's lane items: wide slices of a weight block dotted with the q8_1 blocks under them. A lane
// reads its slice as 32-bit words and its activations as whole q8_1 ints, and scales once per 32
// values: a third of the instructions of vecdot.h's 8-value items, which is what bounds a row
// product that reads each byte once. The 32-value formats (q4_0, q4_1, q5_0, q5_1, q8_0) take a
// whole block per item; q4_K, q5_K and q6_K 32 of a super-block's values.
//
// For a weight format F with one, Wide<F> has
//   kItems                        items per weight block (0: none, vecdot.h's items serve F);
//   kMaxCols                      the batches they serve (vecdot.h's items serve wider ones);
//   View load(block, i)           item i in registers; blocks at multiples of F::kAlign bytes (2
//                                 or 4), and never a byte outside the block is read;
//   act(y, i)                     the q8_1 ints item i multiplies (y: the first q8_1 block under
//                                 the weight block);
//   float dot(View, act)          the item's share of the row . column product.
// The integer sums are exact (dot4_i8) and the scalings the CPU reference's (tests/reference/
// ggml_ref_dot.hpp), per 32 values: q4_0 / q5_0 d (d_a sumi - 8 or 16 s_a), q4_1 / q5_1
// d d_a sumi + m s_a, q8_0 d d_a sumi, q4_K / q5_K d_a (d sc sumi - dmin m suma) per group,
// q6_K d_a (d sc sumi) per group.
#pragma once

#include "quantized/vecdot.h"

namespace hkb::quant {

// kW ints of a q8_1 block (half d and s in one word, then 32 signed bytes) from int j0 on, and
// its d and s.
template <int kW>
struct ActW {
  uint32_t ds;
  int a[kW];
};
template <int kW>
HKB_DEVICE ActW<kW> load_actw(const uint8_t* y, int j0) {
  ActW<kW> r;
  r.ds = ld32<4>(y);
#pragma unroll
  for (int j = 0; j < kW; ++j) r.a[j] = static_cast<int>(ld32<4>(y + 4 + 4 * (j0 + j)));
  return r;
}
// A whole q8_1 block.
using Act = ActW<8>;

// A block as its first 2 (kAlign 2) or 4 (kAlign 4) bytes, `head`, and the rest as kBody words.
// kAlign 2 blocks (B = 2 mod 4 bytes) sit at 0 or 2 mod 4: at 2, head is one 16-bit load and the
// body whole words; at 0, the body's words straddle word boundaries and are put together from
// the block's words and its last two bytes.
template <int B, int A>
struct Words {
  static constexpr int kBody = (B - A) / 4;
  uint32_t head, body[kBody];
  static HKB_DEVICE Words load(const uint8_t* p) {
    Words w;
    if constexpr (A == 4) {
      static_assert(B % 4 == 0, "4-aligned blocks of 4n bytes");
      w.head = ld32<4>(p);
#pragma unroll
      for (int j = 0; j < kBody; ++j) w.body[j] = ld32<4>(p + 4 + 4 * j);
    } else {
      static_assert(A == 2 && B % 4 == 2, "2-aligned blocks of 4n + 2 bytes");
      const bool mid = (reinterpret_cast<uintptr_t>(p) & 2u) != 0;
      const uint32_t h = ld16<2>(mid ? p : p + B - 2);
      const uint8_t* q = p + (mid ? 2 : 0);
      uint32_t v[kBody];
#pragma unroll
      for (int j = 0; j < kBody; ++j) v[j] = ld32<4>(q + 4 * j);
      w.head = mid ? h : (v[0] & 0xFFFFu);
#pragma unroll
      for (int j = 0; j < kBody; ++j) {
        const uint32_t next = j + 1 < kBody ? v[j + 1] : h;
        w.body[j] = mid ? v[j] : (v[j] >> 16) | (next << 16);
      }
    }
    return w;
  }
};

// Nibble formats: body = [qh,] qs[16]. Value j's low bits are nibble j / 16 of qs byte j % 16,
// its fifth bit (q5_*) bit j of qh: qs word i's low nibbles pair with q8_1 int i, its high
// nibbles with int i + 4.
template <bool kMin, bool kFifth>
struct WholeNibbles {
  using F = Legacy<kMin, kFifth>;
  using View = Words<F::kBytes, F::kAlign>;
  static HKB_DEVICE float dot(const View& w, const Act& a) {
    constexpr int q0 = kFifth ? 1 : 0;
    const uint32_t qh = kFifth ? w.body[0] : 0u;
    int s = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      int lo = static_cast<int>(w.body[q0 + i] & 0x0F0F0F0Fu);
      int hi = static_cast<int>((w.body[q0 + i] >> 4) & 0x0F0F0F0Fu);
      if constexpr (kFifth) lo |= spread4(qh >> (4 * i)), hi |= spread4(qh >> (16 + 4 * i));
      s = dot4_i8(lo, a.a[i], dot4_i8(hi, a.a[i + 4], s));
    }
    const float da = half_lo(a.ds), sa = half_hi(a.ds);
    if constexpr (kMin) {
      return half_lo(w.head) * da * static_cast<float>(s) + half_hi(w.head) * sa;
    } else {
      return half_lo(w.head) * (da * static_cast<float>(s) - (kFifth ? 16.0f : 8.0f) * sa);
    }
  }
};

// kMaxCols: the batches (activation columns) the wide items serve; vecdot.h's items serve wider.
template <typename F>
struct Wide {
  static constexpr int kItems = 0, kMaxCols = 0;  // none: vecdot.h's items serve F
};

// The 32-value formats: one item, the whole block.
template <typename Whole>
struct WholeItem {
  static constexpr int kItems = 1, kMaxCols = 8;
  using View = typename Whole::View;
  static HKB_DEVICE View load(const uint8_t* b, int) { return View::load(b); }
  static HKB_DEVICE Act act(const uint8_t* y, int) { return load_actw<8>(y, 0); }
  static HKB_DEVICE float dot(const View& w, const Act& a) { return Whole::dot(w, a); }
};
template <>
struct Wide<Q4_0> : WholeItem<WholeNibbles<false, false>> {};
template <>
struct Wide<Q4_1> : WholeItem<WholeNibbles<true, false>> {};
template <>
struct Wide<Q5_0> : WholeItem<WholeNibbles<false, true>> {};
template <>
struct Wide<Q5_1> : WholeItem<WholeNibbles<true, true>> {};
// q8_0: body = qs[32], word i pairs with q8_1 int i; s is unused (an infinite s stays harmless).
struct WholeQ8_0 {
  using View = Words<Q8_0::kBytes, Q8_0::kAlign>;
  static HKB_DEVICE float dot(const View& w, const Act& a) {
    int s = 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) s = dot4_i8(static_cast<int>(w.body[i]), a.a[i], s);
    return half_lo(w.head) * (half_lo(a.ds) * static_cast<float>(s));
  }
};
template <>
struct Wide<Q8_0> : WholeItem<WholeQ8_0> {};

// q4_K, q5_K: item i = (chunk c = i / kPer, part h = i % kPer) is quant bytes L h .. L h + L - 1
// of chunk c: values 64 c + L h .. (group 2 c, low nibbles, q8_1 block 2 c, ints L h / 4 ..)
// and as many of group 2 c + 1 (high nibbles, q8_1 block 2 c + 1). The head words d, dmin and
// scales[12] are read whole and the two groups' 6-bit scales and mins cut from them.
template <int kW>
struct ViewK4 {
  uint32_t head[4];  // d and dmin, scales[12]
  int lo[kW], hi[kW];
  int c;
};
template <bool kFifth, int L>
struct WideK4 {
  static constexpr int kW = L / 4, kPer = 32 / L, kItems = 4 * kPer, kQs = kFifth ? 48 : 16;
  // Columns at most: the AMD compilers hold each column's ten activation words at once, 20 VGPRs
  // a column (gfx906 cuda8: 185 against vecdot.h's 90), so wider batches keep vecdot.h's items.
  static constexpr int kMaxCols = 2;
  using View = ViewK4<kW>;
  static HKB_DEVICE View load(const uint8_t* b, int i) {
    View w;
    w.c = i / kPer;
    const int h = i % kPer;
    const uint8_t* q = b + kQs + 32 * w.c + L * h;
    uint32_t x[kW];
    const bool vec = L == 16 && (reinterpret_cast<uintptr_t>(b) & 15u) == 0;
    if (vec) {
      // 16-aligned super-blocks (every block of a 16-aligned matrix: 144 and 176 bytes are
      // multiples of 16), so are the head and the item's quants: two 16-byte loads.
      const uint4 hv = *reinterpret_cast<const uint4*>(b);
      const uint4 qv = *reinterpret_cast<const uint4*>(q);
      w.head[0] = hv.x, w.head[1] = hv.y, w.head[2] = hv.z, w.head[3] = hv.w;
      const uint32_t qw[4] = {qv.x, qv.y, qv.z, qv.w};
#pragma unroll
      for (int j = 0; j < kW; ++j) x[j] = qw[j % 4];
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) w.head[j] = ld32<4>(b + 4 * j);
#pragma unroll
      for (int j = 0; j < kW; ++j) x[j] = ld32<4>(q + 4 * j);
    }
#pragma unroll
    for (int j = 0; j < kW; ++j) {
      w.lo[j] = static_cast<int>(x[j] & 0x0F0F0F0Fu);
      w.hi[j] = static_cast<int>((x[j] >> 4) & 0x0F0F0F0Fu);
    }
    if constexpr (kFifth) {  // bit 2 c (2 c + 1) of qh byte l: bit 4 of value l of group 2 c (+1)
      const uint8_t* qh = b + 16 + L * h;
      uint32_t hw[kW];
      if (vec) {
        const uint4 v = *reinterpret_cast<const uint4*>(qh);
        const uint32_t vw[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int j = 0; j < kW; ++j) hw[j] = vw[j % 4];
      } else {
#pragma unroll
        for (int j = 0; j < kW; ++j) hw[j] = ld32<4>(qh + 4 * j);
      }
#pragma unroll
      for (int j = 0; j < kW; ++j) {
        const uint32_t x = hw[j] >> (2 * w.c);
        w.lo[j] |= static_cast<int>((x & kOnes) << 4);
        w.hi[j] |= static_cast<int>(((x >> 1) & kOnes) << 4);
      }
    }
    return w;
  }
  struct A {
    ActW<kW> lo, hi;
  };
  static HKB_DEVICE A act(const uint8_t* y, int i) {
    const int c = i / kPer, j0 = (i % kPer) * kW;
    return {load_actw<kW>(y + kQ81Bytes * (2 * c), j0),
            load_actw<kW>(y + kQ81Bytes * (2 * c + 1), j0)};
  }
  static HKB_DEVICE float dot(const View& w, const A& a) {
    const int one = static_cast<int>(kOnes);
    int s0 = 0, s1 = 0, m0 = 0, m1 = 0;
#pragma unroll
    for (int j = 0; j < kW; ++j) {
      s0 = dot4_i8(w.lo[j], a.lo.a[j], s0);
      s1 = dot4_i8(w.hi[j], a.hi.a[j], s1);
      m0 = dot4_i8(one, a.lo.a[j], m0);
      m1 = dot4_i8(one, a.hi.a[j], m1);
    }
    const uint32_t g0 = 2 * w.c, g1 = g0 + 1;
    const KScaleMin k0 = k_scale_min(w.head[0], scale_byte(w.head, 0, g0),
                                     scale_byte(w.head, 4, g0), scale_byte(w.head, 8, g0), g0);
    const KScaleMin k1 = k_scale_min(w.head[0], scale_byte(w.head, 0, g1),
                                     scale_byte(w.head, 4, g1), scale_byte(w.head, 8, g1), g1);
    return half_lo(a.lo.ds) * (k0.d * static_cast<float>(s0) - k0.m * static_cast<float>(m0)) +
           half_lo(a.hi.ds) * (k1.d * static_cast<float>(s1) - k1.m * static_cast<float>(m1));
  }
  // scales byte off + (g & 3) (off 0, 4, 8), from the head words (scales start at byte 4).
  static HKB_DEVICE uint32_t scale_byte(const uint32_t (&head)[4], int off, uint32_t g) {
    return (head[1 + off / 4] >> (8 * (g & 3))) & 0xFFu;
  }
};
// 16 bytes a group: 32 (a whole chunk, half the items) measured slower
// (docs/performance-quantized.md).
template <>
struct Wide<Q4_K> : WideK4<false, 16> {};
template <>
struct Wide<Q5_K> : WideK4<true, 16> {};

// L bytes (a multiple of 4) at a 2-aligned q as words: L / 4 - 1 word loads and two 16-bit ones
// wherever q sits, none outside the span. mid: q is 2 past a multiple of 4 (the caller knows it
// once for every span of a block at a multiple of 4 bytes from its start).
template <int L>
HKB_DEVICE void span_words(const uint8_t* q, bool mid, uint32_t (&w)[L / 4]) {
  constexpr int n = L / 4;
  uint32_t v[n - 1];
#pragma unroll
  for (int m = 0; m < n - 1; ++m) v[m] = ld32<4>(q + (mid ? 2 : 0) + 4 * m);
  const uint32_t a = ld16<2>(mid ? q : q + L - 4), b = ld16<2>(q + L - 2);
  if (mid) {
    w[0] = a | (v[0] << 16);
#pragma unroll
    for (int m = 1; m < n - 1; ++m) w[m] = (v[m - 1] >> 16) | (v[m] << 16);
    w[n - 1] = (v[n - 2] >> 16) | (b << 16);
  } else {
#pragma unroll
    for (int m = 0; m < n - 1; ++m) w[m] = v[m];
    w[n - 1] = a | (b << 16);
  }
}

// q6_K: item i = (half n = i / kPer, part j = i % kPer) is bytes l = L j .. L j + L - 1 of the
// half's quant rows: for k = 0..3 the values 128 n + 32 k + l (q8_1 block 4 n + k, ints l / 4 ..),
// low bits from ql byte 64 n + 32 (k % 2) + l (nibble k / 2), high bits from qh byte 32 n + l
// (bits 2 k), scale 8 n + 2 k + l / 16 (one per k: L <= 16). The view keeps the levels 0..63
// (valid signed bytes) and the sum starts at -32 times the activations' sum (A::bias): the same
// exact integer, fewer instructions than turning each byte into level - 32.
template <int kW>
struct ViewQ6 {
  int q[4][kW];  // levels 0..63, four a word
  uint32_t sc;   // byte k: group k's signed scale
  float d;
};
template <int L>
struct WideQ6 {
  static constexpr int kW = L / 4, kPer = 32 / L, kItems = 2 * kPer, kMaxCols = 8;
  using View = ViewQ6<kW>;
  static HKB_DEVICE View load(const uint8_t* b, int i) {
    const int n = i / kPer, l = (i % kPer) * L;
    uint32_t l0[kW], l1[kW], h[kW], s[2];
    const bool mid = (reinterpret_cast<uintptr_t>(b) & 2u) != 0;  // every span's offset: 4 m
    span_words<L>(b + 64 * n + l, mid, l0);
    span_words<L>(b + 64 * n + 32 + l, mid, l1);
    span_words<L>(b + 128 + 32 * n + l, mid, h);
    span_words<8>(b + 192 + 8 * n, mid, s);
    View w;
    w.d = half_lo(ld16<2>(b + 208));
    const int s0 = l / 16;
    w.sc = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
#pragma unroll
      for (int m = 0; m < kW; ++m) {
        const uint32_t lo = ((k & 1 ? l1[m] : l0[m]) >> (4 * (k >> 1))) & 0x0F0F0F0Fu;
        w.q[k][m] = static_cast<int>(lo | (((h[m] >> (2 * k)) & 0x03030303u) << 4));
      }
      const int e = 2 * k + s0;
      w.sc |= (((e < 4 ? s[0] : s[1]) >> (8 * (e & 3))) & 0xFFu) << (8 * k);
    }
    return w;
  }
  // A column's activations under an item, and per group k their sum times -32 (shared by every
  // row the item is dotted with).
  struct A {
    ActW<kW> k[4];
    int bias[4];
  };
  static HKB_DEVICE A act(const uint8_t* y, int i) {
    const int n = i / kPer, j0 = (i % kPer) * kW;
    constexpr int kMinus32 = static_cast<int>(0xE0E0E0E0u);  // -32 in every byte
    A a;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      a.k[k] = load_actw<kW>(y + kQ81Bytes * (4 * n + k), j0);
      a.bias[k] = 0;
#pragma unroll
      for (int m = 0; m < kW; ++m) a.bias[k] = dot4_i8(kMinus32, a.k[k].a[m], a.bias[k]);
    }
    return a;
  }
  static HKB_DEVICE float dot(const View& w, const A& a) {
    float r = 0.0f;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      int s = a.bias[k];
#pragma unroll
      for (int m = 0; m < kW; ++m) s = dot4_i8(w.q[k][m], a.k[k].a[m], s);
      const float scale = static_cast<float>(static_cast<int8_t>((w.sc >> (8 * k)) & 0xFFu));
      r += half_lo(a.k[k].ds) * (w.d * scale * static_cast<float>(s));
    }
    return r;
  }
};
// 8 bytes a row: 16 (half the items) measured slower (docs/performance-quantized.md).
template <>
struct Wide<Q6_K> : WideQ6<8> {};

}  // namespace hkb::quant
