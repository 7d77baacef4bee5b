// MMVQ's lane items: wide slices of a weight block dotted with the q8_1 blocks under them. A lane
// reads its slice as 32-bit words and its activations as whole q8_1 ints, and scales once per 32
// values: a third of the instructions of vecdot.h's 8-value items, which is what bounds a row
// product that reads each byte once. The 32-value formats (q4_0, q4_1, q5_0, q5_1, q8_0) take a
// whole block per item; the K-quants 32 of a super-block's values.
//
// For each weight format F, Wide<F> has
//   kItems                        items per weight block;
//   kMaxCols                      the batches they serve (vecdot.h's items serve wider ones);
//   View load(block, i)           item i in registers; blocks at multiples of F::kAlign bytes (2
//                                 or 4), and never a byte outside the block is read;
//   act(y, i)                     the q8_1 ints item i multiplies (y: the first q8_1 block under
//                                 the weight block);
//   float dot(View, act)          the item's share of the row . column product.
// The integer sums are exact (dot4_i8) and the scalings the CPU reference's (tests/reference/
// ggml_ref_dot.hpp), per 32 values: q4_0 / q5_0 d (d_a sumi - 8 or 16 s_a), q4_1 / q5_1
// d d_a sumi + m s_a, q8_0 d d_a sumi, q2_K / q4_K / q5_K d_a (d sc sumi - dmin m suma) per
// group, q3_K / q6_K d_a (d sc sumi) per group.
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

// A block as its first 2 (kAlign 2) or 4 (kAlign 4) bytes, `head`, and the rest as kBody words,
// from aligned loads only. kAlign 2 blocks (B = 2 mod 4 bytes) sit at 0 or 2 mod 4: at 2, head is
// one 16-bit load and the body whole words; at 0, the body's words straddle word boundaries and
// are put together from the block's words and its last two bytes. kStreamed: loaded evict-first
// (MMVQ's weights, read once; MMQ's are read by every column tile).
template <int B, int A, bool kStreamed = true>
struct Words {
  static constexpr int kBody = (B - A) / 4;
  uint32_t head, body[kBody];
  static HKB_DEVICE Words load(const uint8_t* p) {
    Words w;
    if constexpr (A == 4) {
      static_assert(B % 4 == 0, "4-aligned blocks of 4n bytes");
      w.head = ld32<4, kStreamed>(p);
#pragma unroll
      for (int j = 0; j < kBody; ++j) w.body[j] = ld32<4, kStreamed>(p + 4 + 4 * j);
    } else {
      static_assert(A == 2 && B % 4 == 2, "2-aligned blocks of 4n + 2 bytes");
      const bool mid = (reinterpret_cast<uintptr_t>(p) & 2u) != 0;
      const uint32_t h = ld16<2, kStreamed>(mid ? p : p + B - 2);
      const uint8_t* q = p + (mid ? 2 : 0);
      uint32_t v[kBody];
#pragma unroll
      for (int j = 0; j < kBody; ++j) v[j] = ld32<4, kStreamed>(q + 4 * j);
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
struct Wide;

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
// kRows16: every block of the rows sits at a multiple of 16 bytes (the caller tested the rows once;
// Aligned is that variant), so no item tests its own block.
template <bool kFifth, int L, bool kRows16 = false>
struct WideK4 {
  static constexpr int kW = L / 4, kPer = 32 / L, kItems = 4 * kPer, kQs = kFifth ? 48 : 16;
  using Aligned = WideK4<kFifth, L, true>;
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
    const bool vec = L == 16 && (kRows16 || (reinterpret_cast<uintptr_t>(b) & 15u) == 0);
    if (vec) {
      // 16-aligned super-blocks (every block of a 16-aligned matrix: 144 and 176 bytes are
      // multiples of 16), so are the head and the item's quants: two 16-byte loads.
      const uint4 hv = load_streamed(reinterpret_cast<const uint4*>(b));
      const uint4 qv = load_streamed(reinterpret_cast<const uint4*>(q));
      w.head[0] = hv.x, w.head[1] = hv.y, w.head[2] = hv.z, w.head[3] = hv.w;
      const uint32_t qw[4] = {qv.x, qv.y, qv.z, qv.w};
#pragma unroll
      for (int j = 0; j < kW; ++j) x[j] = qw[j % 4];
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) w.head[j] = ldw32<4>(b + 4 * j);
#pragma unroll
      for (int j = 0; j < kW; ++j) x[j] = ldw32<4>(q + 4 * j);
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
        const uint4 v = load_streamed(reinterpret_cast<const uint4*>(qh));
        const uint32_t vw[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int j = 0; j < kW; ++j) hw[j] = vw[j % 4];
      } else {
#pragma unroll
        for (int j = 0; j < kW; ++j) hw[j] = ldw32<4>(qh + 4 * j);
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
  // A column's activations under an item, and their integer sums per group (the min term's,
  // shared by every row the item is dotted with).
  struct A {
    ActW<kW> lo, hi;
    int m0, m1;
  };
  static HKB_DEVICE A act(const uint8_t* y, int i) {
    const int c = i / kPer, j0 = (i % kPer) * kW;
    A a{load_actw<kW>(y + kQ81Bytes * (2 * c), j0), load_actw<kW>(y + kQ81Bytes * (2 * c + 1), j0),
        0, 0};
    const int one = static_cast<int>(kOnes);
#pragma unroll
    for (int j = 0; j < kW; ++j) {
      a.m0 = dot4_i8(one, a.lo.a[j], a.m0);
      a.m1 = dot4_i8(one, a.hi.a[j], a.m1);
    }
    return a;
  }
  static HKB_DEVICE float dot(const View& w, const A& a) {
    int s0 = 0, s1 = 0;
#pragma unroll
    for (int j = 0; j < kW; ++j) {
      s0 = dot4_i8(w.lo[j], a.lo.a[j], s0);
      s1 = dot4_i8(w.hi[j], a.hi.a[j], s1);
    }
    // Groups 2 c and 2 c + 1 sit in the same half of each scales word: bytes 2 (c & 1) and
    // 2 (c & 1) + 1 of scales[0..3], [4..7] and [8..11], cut as 16-bit pairs without a branch.
    const uint32_t sh = 16u * static_cast<uint32_t>(w.c & 1);
    const uint32_t x = w.head[1] >> sh, y = w.head[2] >> sh, z = w.head[3] >> sh;
    const bool low = w.c < 2;  // groups 0..3: 6-bit scale and min; 4..7: 4 bits + 2 high bits
    const uint32_t sc = low ? x & 0x3F3Fu : (z & 0x0F0Fu) | ((x >> 2) & 0x3030u);
    const uint32_t mn = low ? y & 0x3F3Fu : ((z >> 4) & 0x0F0Fu) | ((y >> 2) & 0x3030u);
    const float da0 = half_lo(a.lo.ds), da1 = half_lo(a.hi.ds);
    const int ds0 = s0 * static_cast<int>(sc & 0xFFu), ds1 = s1 * static_cast<int>(sc >> 8);
    const int dm0 = a.m0 * static_cast<int>(mn & 0xFFu), dm1 = a.m1 * static_cast<int>(mn >> 8);
    return half_lo(w.head[0]) * (da0 * static_cast<float>(ds0) + da1 * static_cast<float>(ds1)) -
           half_hi(w.head[0]) * (da0 * static_cast<float>(dm0) + da1 * static_cast<float>(dm1));
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
  for (int m = 0; m < n - 1; ++m) v[m] = ldw32<4>(q + (mid ? 2 : 0) + 4 * m);
  const uint32_t a = ldw16<2>(mid ? q : q + L - 4), b = ldw16<2>(q + L - 2);
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

// q2_K, q3_K and q6_K share one item shape: item i = (half n = i / kPer, part j = i % kPer) is
// bytes l = L j .. L j + L - 1 of the half's quant rows, and for k = 0..3 the values
// 128 n + 32 k + l .. (q8_1 block 4 n + k, ints l / 4 ..) of 16-value group 8 n + 2 k + l / 16.
// A column's activations under such an item, and per k their integer sum weighted by the byte
// kWeight (shared by every row the item is dotted with): q2_K's min term (1), or a level offset
// folded into the sum (q3_K -4, q6_K -32: unsigned levels give the same exact integer in fewer
// instructions than signed ones).
template <int kW>
struct Act4 {
  ActW<kW> k[4];
  int sum[4];
};
template <int kW, int kPer, uint32_t kWeight>
HKB_DEVICE Act4<kW> load_act4(const uint8_t* y, int i) {
  const int n = i / kPer, j0 = (i % kPer) * kW;
  Act4<kW> a;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    a.k[k] = load_actw<kW>(y + kQ81Bytes * (4 * n + k), j0);
    a.sum[k] = 0;
#pragma unroll
    for (int m = 0; m < kW; ++m)
      a.sum[k] = dot4_i8(static_cast<int>(kWeight), a.k[k].a[m], a.sum[k]);
  }
  return a;
}
// The scale bytes of groups 8 n + 2 k + s0 (k = 0..3, s0 = 0 or 1) from the half's 8 scale bytes
// (words w0, w1): byte 2 (k % 2) + k / 2 of the result holds group k's (scale_at).
HKB_DEVICE uint32_t every_other_byte(uint32_t w0, uint32_t w1, int s0) {
  const int sh = 8 * s0;
  return ((w0 >> sh) & 0x00FF00FFu) | (((w1 >> sh) & 0x00FF00FFu) << 8);
}
HKB_DEVICE uint32_t scale_at(uint32_t sc, int k) {
  return (sc >> (8 * (2 * (k & 1) + (k >> 1)))) & 0xFFu;
}
// Sum over the item's four groups of d_a times term(k, s), s the group's exact integer sum, which
// starts at the activations' weighted sum (q3_K's and q6_K's level offsets).
template <int kW, typename Term>
HKB_DEVICE float dot_offset4(const int (&q)[4][kW], const Act4<kW>& a, Term term) {
  float r = 0.0f;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    int s = a.sum[k];
#pragma unroll
    for (int m = 0; m < kW; ++m) s = dot4_i8(q[k][m], a.k[k].a[m], s);
    r += half_lo(a.k[k].ds) * term(k, s);
  }
  return r;
}

// q2_K (4-aligned): bits 2 k of qs byte 32 n + l; scale bytes (scale | min << 4) at 8 n.
template <int kW>
struct ViewQ2 {
  int q[4][kW];  // levels 0..3
  uint32_t sc, dm;
};
template <int L>
struct WideQ2 {
  // Columns at most: wider batches spill on sm_90 and take up to twice vecdot.h's VGPRs on gfx906
  // (docs/performance-h200b.md); vecdot.h's items serve them.
  static constexpr int kW = L / 4, kPer = 32 / L, kItems = 2 * kPer, kMaxCols = 2;
  using View = ViewQ2<kW>;
  using A = Act4<kW>;
  static HKB_DEVICE View load(const uint8_t* b, int i) {
    const int n = i / kPer, l = (i % kPer) * L;
    uint32_t x[kW];
#pragma unroll
    for (int m = 0; m < kW; ++m) x[m] = ldw32<4>(b + Q2_K::kQs + 32 * n + l + 4 * m);
    View w;
    w.sc = every_other_byte(ldw32<4>(b + 8 * n), ldw32<4>(b + 8 * n + 4), l / 16);
    w.dm = ldw32<4>(b + Q2_K::kDm);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
#pragma unroll
      for (int m = 0; m < kW; ++m) w.q[k][m] = static_cast<int>((x[m] >> (2 * k)) & 0x03030303u);
    }
    return w;
  }
  static HKB_DEVICE A act(const uint8_t* y, int i) {
    return load_act4<kW, kPer, kOnes>(y, i);
  }
  static HKB_DEVICE float dot(const View& w, const A& a) {
    float rd = 0.0f, rm = 0.0f;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      int s = 0;
#pragma unroll
      for (int m = 0; m < kW; ++m) s = dot4_i8(w.q[k][m], a.k[k].a[m], s);
      const uint32_t b = scale_at(w.sc, k);
      const float da = half_lo(a.k[k].ds);
      rd += da * static_cast<float>(s * static_cast<int>(b & 15u));
      rm += da * static_cast<float>(a.sum[k] * static_cast<int>(b >> 4));
    }
    return half_lo(w.dm) * rd - half_hi(w.dm) * rm;
  }
};
template <>
struct Wide<Q2_K> : WideQ2<8> {};

// q3_K (2-aligned): bits 2 k of qs byte 32 n + l, bit 4 n + k of hmask byte l; levels 0..7 (the
// sum starts at -4 times the activations'); group g's 6-bit scale (less 32) has its low nibble in
// scales byte g % 8 (nibble g / 8) and its high 2 bits in byte 8 + g % 4 (bits 2 (g / 4)).
// q3_K's and q6_K's view: the levels of shift k four a word, scale_at(sc, k) group k's scale byte
// (q3_K: plus 32; q6_K: signed), d.
template <int kW>
struct ViewScaled {
  int q[4][kW];
  uint32_t sc;
  float d;
};
template <int L>
struct WideQ3 {
  // Batch 1 only: from batch 2 on vecdot.h's items are as fast or faster (as for q2_K).
  static constexpr int kW = L / 4, kPer = 32 / L, kItems = 2 * kPer, kMaxCols = 1;
  using View = ViewScaled<kW>;
  using A = Act4<kW>;
  static HKB_DEVICE View load(const uint8_t* b, int i) {
    const int n = i / kPer, l = (i % kPer) * L;
    uint32_t q[kW], h[kW], s[3];
    const bool mid = (reinterpret_cast<uintptr_t>(b) & 2u) != 0;  // every span's offset: 4 m
    span_words<L>(b + Q3_K::kQs + 32 * n + l, mid, q);
    span_words<L>(b + l, mid, h);
    span_words<12>(b + Q3_K::kScales, mid, s);
    View w;
    w.d = half_lo(ldw16<2>(b + Q3_K::kD));
    // Groups 8 n + 2 k + s0: low nibbles from bytes 2 k + s0, high bits from byte 8 + s0 (k even)
    // or 10 + s0 (k odd) at bits 4 n + 2 (k / 2), placed as every_other_byte places the lows.
    const uint32_t lo = (every_other_byte(s[0], s[1], l / 16) >> (4 * n)) & 0x0F0F0F0Fu;
    const uint32_t t = (s[2] >> (8 * (l / 16))) >> (4 * n);
    w.sc = lo | (((t & 0x00030003u) | ((t << 6) & 0x03000300u)) << 4);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
#pragma unroll
      for (int m = 0; m < kW; ++m) {
        w.q[k][m] = static_cast<int>(((q[m] >> (2 * k)) & 0x03030303u) |
                                     (((h[m] >> (4 * n + k)) & kOnes) << 2));
      }
    }
    return w;
  }
  static HKB_DEVICE A act(const uint8_t* y, int i) {
    return load_act4<kW, kPer, 0xFCFCFCFCu>(y, i);  // -4 in every byte
  }
  static HKB_DEVICE float dot(const View& w, const A& a) {
    return w.d * dot_offset4(w.q, a, [&](int k, int s) {
             return static_cast<float>(s * (static_cast<int>(scale_at(w.sc, k)) - 32));
           });
  }
};
template <>
struct Wide<Q3_K> : WideQ3<8> {};

// q6_K (2-aligned): low bits from ql byte 64 n + 32 (k % 2) + l (nibble k / 2), high bits from
// qh byte 32 n + l (bits 2 k), signed scale bytes at 192 + 8 n; levels 0..63 (the sum starts at
// -32 times the activations').
template <int L>
struct WideQ6 {
  static constexpr int kW = L / 4, kPer = 32 / L, kItems = 2 * kPer, kMaxCols = 8;
  using View = ViewScaled<kW>;
  using A = Act4<kW>;
  static HKB_DEVICE View load(const uint8_t* b, int i) {
    const int n = i / kPer, l = (i % kPer) * L;
    uint32_t l0[kW], l1[kW], h[kW], s[2];
    const bool mid = (reinterpret_cast<uintptr_t>(b) & 2u) != 0;  // every span's offset: 4 m
    span_words<L>(b + 64 * n + l, mid, l0);
    span_words<L>(b + 64 * n + 32 + l, mid, l1);
    span_words<L>(b + 128 + 32 * n + l, mid, h);
    span_words<8>(b + 192 + 8 * n, mid, s);
    View w;
    w.d = half_lo(ldw16<2>(b + 208));
    // Byte by byte: every_other_byte here made ptxas spill cuda7 (docs/performance-h200b.md).
    const int s0 = l / 16;
    w.sc = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const uint32_t b = ((k < 2 ? s[0] : s[1]) >> (8 * ((2 * k + s0) & 3))) & 0xFFu;
      w.sc |= b << (8 * (2 * (k & 1) + (k >> 1)));
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) {
#pragma unroll
      for (int m = 0; m < kW; ++m) {
        const uint32_t lo = ((k & 1 ? l1[m] : l0[m]) >> (4 * (k >> 1))) & 0x0F0F0F0Fu;
        w.q[k][m] = static_cast<int>(lo | (((h[m] >> (2 * k)) & 0x03030303u) << 4));
      }
    }
    return w;
  }
  static HKB_DEVICE A act(const uint8_t* y, int i) {
    return load_act4<kW, kPer, 0xE0E0E0E0u>(y, i);  // -32 in every byte
  }
  static HKB_DEVICE float dot(const View& w, const A& a) {
    return dot_offset4(w.q, a, [&](int k, int s) {
      return w.d * static_cast<float>(static_cast<int8_t>(scale_at(w.sc, k))) *
             static_cast<float>(s);
    });
  }
};
// 8 bytes a row: 16 (half the items) measured slower (docs/performance-quantized.md).
template <>
struct Wide<Q6_K> : WideQ6<8> {};

}  // namespace hkb::quant
