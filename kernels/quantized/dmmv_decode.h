// How DMMV (quantized/dmmv.h) reads the GGML block formats of blocks.h: a block is kSlices slices
// of kSliceValues values, one thread's share, with its scales decoded once a slice. A slice takes
// quads (4 consecutive values) that are even in slices of even index and odd in the others, so the
// two threads of a slice pair read the two halves of one 32-byte sector of y in each 16-byte load.
// Each Dmmv<F> has
//   kSlices, kSliceValues  as above;
//   quad0(s)               the first quad of slice s (the others at constant distances);
//   Raw, load(block, s)    the weight words slice s needs, loaded together;
//   dot(raw, s, y, acc)    acc + the slice's values times y's quads (y[q]: quad quad0(s) + q).
// A value is f * a + c from its code byte f = byte_float (common/platform.h): a and c fold the
// code's float form, the scale and the offset or min (exact where the format has no min; with a min
// c is rounded once). Codes are 7-bit unless named 8-bit. a and c are values of the block, not
// constants: gfx9 has no FMA of two literals and would copy one to a register for every value.
#pragma once

#include "quantized/blocks.h"

namespace hkb::quant {

struct Affine {
  float a, c;
};
// Codes of kBits bits for values scale * code + offset, from a = scale / kStep (affine_a).
template <int kBits>
HKB_DEVICE Affine affine_a(float a, float offset) {
  return {a, fmaf(-ByteFloat<kBits>::kBase, a, offset)};
}
template <int kBits>
HKB_DEVICE Affine affine(float scale, float offset) {
  return affine_a<kBits>(scale * (1.0f / ByteFloat<kBits>::kStep), offset);
}
// Values scale * (code / unit - off), c exact where scale * (off + kBase / (kStep unit)) is.
template <int kBits, int kUnit = 1>
HKB_DEVICE Affine centered(float scale, float off) {
  using B = ByteFloat<kBits>;
  constexpr float kA = 1.0f / (B::kStep * kUnit);
  return {scale * kA, scale * -(off + B::kBase * kA)};
}
// centered() of a scale that is a 7- or 8-bit code's float form f times e plus g (exact).
template <int kBits>
HKB_DEVICE Affine centered_at(float f, float e, float g, float off) {
  using B = ByteFloat<kBits>;
  const float m = -(off + B::kBase / B::kStep);
  return {fmaf(f, e * (1.0f / B::kStep), g * (1.0f / B::kStep)), fmaf(f, e * m, g * m)};
}
// scale * byte k of w (7 bits), exact where the product is.
HKB_DEVICE float scaled_byte(uint32_t w, int k, float scale) {
  const float a = scale * (1.0f / ByteFloat<7>::kStep);
  return fmaf(byte_float<7>(w, k), a, -ByteFloat<7>::kBase * a);
}
// acc + the values of the 4 code bytes of `codes` times x.
template <int kBits>
HKB_DEVICE float quad(uint32_t codes, Affine v, float4 x, float acc) {
  acc = fmaf(fmaf(byte_float<kBits>(codes, 0), v.a, v.c), x.x, acc);
  acc = fmaf(fmaf(byte_float<kBits>(codes, 1), v.a, v.c), x.y, acc);
  acc = fmaf(fmaf(byte_float<kBits>(codes, 2), v.a, v.c), x.z, acc);
  return fmaf(fmaf(byte_float<kBits>(codes, 3), v.a, v.c), x.w, acc);
}
HKB_DEVICE uint32_t rotl(uint32_t x, int r) {
  return (x << (r & 31)) | (x >> ((32 - r) & 31));
}
// x shifted so that bit `from` lands at bit `to`: one shift once unrolled, where rotl's wrapped
// bits would be masked off anyway.
HKB_DEVICE uint32_t move_bits(uint32_t x, int from, int to) {
  return from <= to ? x << (to - from) : x >> (from - to);
}

template <typename F>
struct Dmmv;

// q4_0, q4_1, q5_0, q5_1: slice h (0, 1) takes qs words h and 2 + h: their low nibbles are quads h
// and 2 + h, their high nibbles quads 4 + h and 6 + h; fifth bits: nibble h of each byte of qh.
template <bool kMin, bool kFifth>
struct Dmmv<Legacy<kMin, kFifth>> {
  using F = Legacy<kMin, kFifth>;
  static constexpr int kValues = F::kValues, kBytes = F::kBytes, kSlices = 2, kSliceValues = 16;
  static HKB_DEVICE int quad0(int h) { return h; }
  struct Raw {
    uint32_t dm, qh, w0, w1;
  };
  static HKB_DEVICE Raw load(const uint8_t* b, int h) {
    constexpr int A = F::kAlign;
    const uint8_t* q = b + F::kQs + 4 * h;
    return {kMin ? ld32<A>(b) : ld16<A>(b), kFifth ? ld32<A>(b + F::kQh) : 0u, ld32<A>(q),
            ld32<A>(q + 8)};
  }
  template <typename Y>
  static HKB_DEVICE float dot(const Raw& r, int h, const Y& y, float acc) {
    // Without a fifth bit or a min, high nibbles stay in place as 8-bit codes 16 q (c is exact;
    // with a min, c of 8-bit codes would round too coarsely).
    constexpr bool kInPlace = !kMin && !kFifth;
    constexpr int kHiBits = kInPlace ? 8 : 7;
    uint32_t c[4] = {r.w0 & 0x0F0F0F0Fu, r.w1 & 0x0F0F0F0Fu,
                     kInPlace ? r.w0 & 0xF0F0F0F0u : (r.w0 >> 4) & 0x0F0F0F0Fu,
                     kInPlace ? r.w1 & 0xF0F0F0F0u : (r.w1 >> 4) & 0x0F0F0F0Fu};
    if constexpr (kFifth) {
      const uint32_t qh = r.qh >> (4 * h);
#pragma unroll
      for (int m = 0; m < 4; ++m) c[m] |= static_cast<uint32_t>(spread4(qh >> (8 * m)));
    }
    const float d = half_lo(r.dm);
    constexpr float kOffset = kFifth ? 16.0f : 8.0f;
    const Affine lo = kMin ? affine<7>(d, half_hi(r.dm)) : centered<7>(d, kOffset);
    const Affine hi = kInPlace ? centered<8, 16>(d, kOffset) : lo;
    acc = quad<7>(c[1], lo, y[2], quad<7>(c[0], lo, y[0], acc));
    return quad<kHiBits>(c[3], hi, y[6], quad<kHiBits>(c[2], hi, y[4], acc));
  }
};

// q8_0: slice h takes quads 2 m + h (m = 0..3): qs words 2 m + h, 8-bit codes q + 128.
template <>
struct Dmmv<Q8_0> {
  static constexpr int kValues = 32, kBytes = Q8_0::kBytes, kSlices = 2, kSliceValues = 16;
  static HKB_DEVICE int quad0(int h) { return h; }
  struct Raw {
    uint32_t d, w[4];
  };
  static HKB_DEVICE Raw load(const uint8_t* b, int h) {
    constexpr int A = Q8_0::kAlign;
    const uint8_t* q = b + Q8_0::kQs + 4 * h;
    return {ld16<A>(b), {ld32<A>(q), ld32<A>(q + 8), ld32<A>(q + 16), ld32<A>(q + 24)}};
  }
  template <typename Y>
  static HKB_DEVICE float dot(const Raw& r, int, const Y& y, float acc) {
    const Affine v = centered<8>(half_lo(r.d), 128.0f);
#pragma unroll
    for (int m = 0; m < 4; ++m) acc = quad<8>(r.w[m] ^ 0x80808080u, v, y[2 * m], acc);
    return acc;
  }
};

// 256-value blocks of 16-value scales (q2_K, q3_K, q6_K): slice s = 4 n + 2 j + h takes, of half n,
// bytes l = 16 j + 4 h + 8 m' + (0..3) (m' = 0, 1) of each quant row: for k = 0..3 the quads
// 32 n + 8 k + 4 j + 2 m' + h, of scale 8 n + 2 k + j (bytes 2 k + j of the half's 8 scale bytes).
struct KHalf {
  int n, j, h, l;
  HKB_DEVICE explicit KHalf(int s) : n(s >> 2), j((s >> 1) & 1), h(s & 1), l(16 * j + 4 * h) {}
  HKB_DEVICE int quad0() const { return 32 * n + 4 * j + h; }
};
constexpr int khalf_quad(int k, int m) {
  return 8 * k + 2 * m;
}

template <>
struct Dmmv<Q2_K> {
  static constexpr int kValues = 256, kBytes = Q2_K::kBytes, kSlices = 8, kSliceValues = 32;
  static HKB_DEVICE int quad0(int s) { return KHalf(s).quad0(); }
  struct Raw {
    uint32_t dm, s0, s1, w[2];
  };
  static HKB_DEVICE Raw load(const uint8_t* b, int s) {
    const KHalf p(s);
    const uint8_t* q = b + Q2_K::kQs + 32 * p.n + p.l;
    return {ld32<4>(b + Q2_K::kDm),
            ld32<4>(b + 8 * p.n),
            ld32<4>(b + 8 * p.n + 4),
            {ld32<4>(q), ld32<4>(q + 8)}};
  }
  template <typename Y>
  static HKB_DEVICE float dot(const Raw& r, int s, const Y& y, float acc) {
    const KHalf p(s);
    const float da = half_lo(r.dm) * (1.0f / ByteFloat<7>::kStep), dmin = half_hi(r.dm);
    // Scale k: byte 2 (k & 1) of word k / 2, shifted by byte j; low nibble d's, high dmin's.
    const uint32_t sw[2] = {r.s0 >> (8 * p.j), r.s1 >> (8 * p.j)};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const uint32_t sc = sw[k >> 1];
      const float ml = scaled_byte((sc >> 4) & 0x0F0F0F0Fu, 2 * (k & 1), dmin);
      const Affine v = affine_a<7>(scaled_byte(sc & 0x0F0F0F0Fu, 2 * (k & 1), da), -ml);
      acc = quad<7>((r.w[1] >> (2 * k)) & 0x03030303u, v, y[khalf_quad(k, 1)],
                    quad<7>((r.w[0] >> (2 * k)) & 0x03030303u, v, y[khalf_quad(k, 0)], acc));
    }
    return acc;
  }
};

// q3_K: scale 8 n + 2 k + j: low 4 bits in nibble n of scales byte 2 k + j, high 2 bits at bits
// 4 n + 2 (k >> 1) of byte 8 + 2 (k & 1) + j; the value's high-mask bit is bit 4 n + k of hmask
// byte l, moved to bit 2 of the code.
template <>
struct Dmmv<Q3_K> {
  static constexpr int kValues = 256, kBytes = Q3_K::kBytes, kSlices = 8, kSliceValues = 32;
  static HKB_DEVICE int quad0(int s) { return KHalf(s).quad0(); }
  struct Raw {
    uint32_t d, s0, s1, s2, hm[2], w[2];
  };
  static HKB_DEVICE Raw load(const uint8_t* b, int s) {
    constexpr int A = Q3_K::kAlign;
    const KHalf p(s);
    const uint8_t* sc = b + Q3_K::kScales;
    const uint8_t* q = b + Q3_K::kQs + 32 * p.n + p.l;
    return {ld16<A>(b + Q3_K::kD),
            ld32<A>(sc),
            ld32<A>(sc + 4),
            ld32<A>(sc + 8),
            {ld32<A>(b + p.l), ld32<A>(b + p.l + 8)},
            {ld32<A>(q), ld32<A>(q + 8)}};
  }
  template <typename Y>
  static HKB_DEVICE float dot(const Raw& r, int s, const Y& y, float acc) {
    const KHalf p(s);
    const int sh = 8 * p.j + 4 * p.n;
    const uint32_t sc[2] = {
        ((r.s0 >> sh) & 0x000F000Fu) | (((r.s2 >> sh) & 0x00030003u) << 4),
        ((r.s1 >> sh) & 0x000F000Fu) | (((r.s2 >> (sh + 2)) & 0x00030003u) << 4)};
    // d (sc - 32) = f d / kStep - d (kBase / kStep + 32), f the float form of sc.
    const float d = half_lo(r.d), e = d * (1.0f / ByteFloat<7>::kStep);
    const float g = -d * (ByteFloat<7>::kBase / ByteFloat<7>::kStep + 32.0f);
    // High-mask bit 4 n + k of each byte to bit 2 + k: one rotation a word, then a shift by k.
    const uint32_t hm[2] = {rotl(r.hm[0], 2 - 4 * p.n), rotl(r.hm[1], 2 - 4 * p.n)};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const Affine v = centered_at<7>(byte_float<7>(sc[k >> 1], 2 * (k & 1)), e, g, 4.0f);
#pragma unroll
      for (int m = 0; m < 2; ++m) {
        const uint32_t code = ((r.w[m] >> (2 * k)) & 0x03030303u) | ((hm[m] >> k) & 0x04040404u);
        acc = quad<7>(code, v, y[khalf_quad(k, m)], acc);
      }
    }
    return acc;
  }
};

// q4_K, q5_K: slice s = 2 p + h takes bytes l = 8 m + 4 h + (0..3) (m = 0..3) of quant rows 2 p and
// 2 p + 1: group 4 p + t (t = 0..3: row 2 p + t / 2, nibble t % 2) is quads 32 p + 8 t + 2 m + h.
// The four groups' scales and mins are byte t of blocks.h's k_scale_min words a, b, c (scales
// 0..3, 4..7, 8..11): p = 0: a & 63, b & 63; p = 1: (c & 15) | (a >> 6) << 4, (c >> 4) | (b >> 6)
// << 4. q5_K's fifth bits are bits 4 p + t of qh byte l.
template <bool kFifth>
struct Dmmv<KMin<kFifth>> {
  using F = KMin<kFifth>;
  static constexpr int kValues = 256, kBytes = F::kBytes, kSlices = 4, kSliceValues = 64;
  static HKB_DEVICE int quad0(int s) { return 32 * (s >> 1) + (s & 1); }
  struct Raw {
    uint32_t dm, a, b, c, w[2][4], qh[kFifth ? 4 : 1];
  };
  static HKB_DEVICE Raw load(const uint8_t* b, int s) {
    const uint8_t* q = b + F::kQs + 64 * (s >> 1) + 4 * (s & 1);
    const uint8_t* qh = b + F::kQh + 4 * (s & 1);
    Raw r{ld32<4>(b), ld32<4>(b + 4), ld32<4>(b + 8), ld32<4>(b + 12), {}, {}};
#pragma unroll
    for (int m = 0; m < 4; ++m) {
      r.w[0][m] = ld32<4>(q + 8 * m), r.w[1][m] = ld32<4>(q + 32 + 8 * m);
      if constexpr (kFifth) r.qh[m] = ld32<4>(qh + 8 * m);
    }
    return r;
  }
  template <typename Y>
  static HKB_DEVICE float dot(const Raw& r, int s, const Y& y, float acc) {
    const int p = s >> 1;
    const uint32_t am = p ? 0x30303030u : 0x3F3F3F3Fu, cm = p ? 0x0F0F0F0Fu : 0u;
    const uint32_t sc = (r.c & cm) | ((r.a >> (2 * p)) & am);
    const uint32_t mn = ((r.c >> 4) & cm) | ((r.b >> (2 * p)) & am);
    const float da = half_lo(r.dm) * (1.0f / ByteFloat<7>::kStep), dmin = half_hi(r.dm);
#pragma unroll
    for (int t = 0; t < 4; ++t) {
      const Affine v = affine_a<7>(scaled_byte(sc, t, da), -scaled_byte(mn, t, dmin));
#pragma unroll
      for (int m = 0; m < 4; ++m) {
        const uint32_t w = r.w[t >> 1][m];
        uint32_t code = (t & 1 ? w >> 4 : w) & 0x0F0F0F0Fu;
        if constexpr (kFifth) code |= rotl(r.qh[m], 4 - 4 * p - t) & 0x10101010u;
        acc = quad<7>(code, v, y[8 * t + 2 * m], acc);
      }
    }
    return acc;
  }
};

// q6_K: quant rows c = 0, 1 of half n (ql bytes 64 n + 32 c + l) hold k = c in their low nibbles
// and k = c + 2 in their high ones; qh byte 32 n + l has k's two high bits at bits 2 k; scales are
// int8, 8-bit codes sc + 128.
template <>
struct Dmmv<Q6_K> {
  static constexpr int kValues = 256, kBytes = Q6_K::kBytes, kSlices = 8, kSliceValues = 32;
  static HKB_DEVICE int quad0(int s) { return KHalf(s).quad0(); }
  struct Raw {
    uint32_t d, s0, s1, ql[2][2], qh[2];
  };
  static HKB_DEVICE Raw load(const uint8_t* b, int s) {
    constexpr int A = Q6_K::kAlign;
    const KHalf p(s);
    const uint8_t* l = b + 64 * p.n + p.l;
    const uint8_t* qh = b + Q6_K::kQh + 32 * p.n + p.l;
    const uint8_t* sc = b + Q6_K::kScales + 8 * p.n;
    return {ld16<A>(b + Q6_K::kD),
            ld32<A>(sc),
            ld32<A>(sc + 4),
            {{ld32<A>(l), ld32<A>(l + 8)}, {ld32<A>(l + 32), ld32<A>(l + 40)}},
            {ld32<A>(qh), ld32<A>(qh + 8)}};
  }
  template <typename Y>
  static HKB_DEVICE float dot(const Raw& r, int s, const Y& y, float acc) {
    const KHalf p(s);
    const uint32_t sw[2] = {(r.s0 >> (8 * p.j)) ^ 0x00800080u, (r.s1 >> (8 * p.j)) ^ 0x00800080u};
    // d sc = f d / kStep - d (kBase / kStep + 128), f the float form of sc + 128.
    const float d = half_lo(r.d), e = d * (1.0f / ByteFloat<8>::kStep);
    const float g = -d * (ByteFloat<8>::kBase / ByteFloat<8>::kStep + 128.0f);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const Affine v = centered_at<7>(byte_float<8>(sw[k >> 1], 2 * (k & 1)), e, g, 32.0f);
#pragma unroll
      for (int m = 0; m < 2; ++m) {
        const uint32_t q = r.ql[k & 1][m];
        const uint32_t code =
            ((k < 2 ? q : q >> 4) & 0x0F0F0F0Fu) | (move_bits(r.qh[m], 2 * k, 4) & 0x30303030u);
        acc = quad<7>(code, v, y[khalf_quad(k, m)], acc);
      }
    }
    return acc;
  }
};

}  // namespace hkb::quant
