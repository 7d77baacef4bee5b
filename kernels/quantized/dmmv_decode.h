// How DMMV (quantized/dmmv.h) reads the GGML block formats of blocks.h: a block is kSlices slices
// of kSliceValues values, one thread's share, with its scales decoded once a slice. A slice takes
// one quad (4 consecutive values) of some of its block's 32-value lines of y, the same quad in
// each, and the 8 slices s = 8 g .. 8 g + 7 take the 8 quads of a line: so every 8 neighbouring
// threads read one whole 128-byte line of y in each 16-byte load (4 L1 wavefronts a warp-wide
// load, where threads spread over 16 lines need 16). 32-value blocks: 8 slices of one line each.
// 256-value blocks: 16 or 32 slices of 4 or 2 lines, chosen so that lines' codes share quant words;
// a slice's offsets, shifts and scale bytes stay the same from block to block.
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
// Affines of 7-bit codes centred at kOff whose scale d (s - kS0) has an integer s given by its
// kBits-bit form f: a and c are linear in f, their coefficients d times constants (all exact).
template <int kBits, int kS0, int kOff>
struct ScaledCentered {
  static constexpr float kE = 1.0f / ByteFloat<kBits>::kStep;  // d s = f d kE + d kG
  static constexpr float kG = -(ByteFloat<kBits>::kBase * kE + kS0);
  static constexpr float kM = -(kOff + ByteFloat<7>::kBase / ByteFloat<7>::kStep);  // c = a' kM
  static constexpr float kA = 1.0f / ByteFloat<7>::kStep;
  Affine a, c;
  HKB_DEVICE explicit ScaledCentered(float d)
      : a{d * (kE * kA), d * (kG * kA)}, c{d * (kE * kM), d * (kG * kM)} {}
  HKB_DEVICE Affine at(float f) const { return {fmaf(f, a.a, a.c), fmaf(f, c.a, c.c)}; }
};
// d k times a 7-bit code given by its float form f: f a + c (exact where the product is); k a
// literal, so that a and c are one multiply each.
HKB_DEVICE Affine byte_scale(float d, float k) {
  using B = ByteFloat<7>;
  return {d * (k / B::kStep), d * (-B::kBase * k / B::kStep)};
}
HKB_DEVICE float scaled(float f, Affine s) {
  return fmaf(f, s.a, s.c);
}
// acc + the values of the 4 code bytes of `codes` times x.
template <int kBits>
HKB_DEVICE float quad(uint32_t codes, Affine v, float4 x, float acc) {
  acc = fmaf(fmaf(byte_float<kBits>(codes, 0), v.a, v.c), x.x, acc);
  acc = fmaf(fmaf(byte_float<kBits>(codes, 1), v.a, v.c), x.y, acc);
  acc = fmaf(fmaf(byte_float<kBits>(codes, 2), v.a, v.c), x.z, acc);
  return fmaf(fmaf(byte_float<kBits>(codes, 3), v.a, v.c), x.w, acc);
}
template <typename F>
struct Dmmv;

// q4_0, q4_1, q5_0, q5_1: slice i is quad i: its codes are nibble i / 4 of qs bytes 4 (i % 4) ..
// + 3, its fifth bits bits 4 i .. 4 i + 3 of qh (the 16-bit half i / 4 of it, one load).
template <bool kMin, bool kFifth>
struct Dmmv<Legacy<kMin, kFifth>> {
  using F = Legacy<kMin, kFifth>;
  static constexpr int kValues = F::kValues, kBytes = F::kBytes, kSlices = 8, kSliceValues = 4;
  static HKB_DEVICE int quad0(int i) { return i; }
  struct Raw {
    uint32_t dm, qh, w;
  };
  static HKB_DEVICE Raw load(const uint8_t* b, int i) {
    constexpr int A = F::kAlign;
    return {kMin ? ld32<A>(b) : ld16<A>(b), kFifth ? ld16<A>(b + F::kQh + 2 * (i >> 2)) : 0u,
            ld32<A>(b + F::kQs + 4 * (i & 3))};
  }
  template <typename Y>
  static HKB_DEVICE float dot(const Raw& r, int i, const Y& y, float acc) {
    const float d = half_lo(r.dm);
    if constexpr (!kMin && !kFifth) {
      // q4_0: the nibble stays in place as an 8-bit code q or 16 q, one mask instead of a shift
      // and a mask (the slice's unit and c's factor are constants of the thread; c is exact).
      using B = ByteFloat<8>;
      constexpr float kA = 1.0f / B::kStep, kA16 = kA / 16;
      const bool hi = i >= 4;
      const uint32_t code = r.w & (hi ? 0xF0F0F0F0u : 0x0F0F0F0Fu);
      const float a = hi ? kA16 : kA, c = hi ? -(8.0f + B::kBase * kA16) : -(8.0f + B::kBase * kA);
      return quad<8>(code, {d * a, d * c}, y[0], acc);
    } else {
      uint32_t code = (r.w >> (4 * (i >> 2))) & 0x0F0F0F0Fu;
      if constexpr (kFifth) code |= static_cast<uint32_t>(spread4(r.qh >> (4 * (i & 3))));
      const Affine v = kMin ? affine<7>(d, half_hi(r.dm)) : centered<7>(d, kFifth ? 16.0f : 8.0f);
      return quad<7>(code, v, y[0], acc);
    }
  }
};

// q8_0: slice i is quad i, qs word i, 8-bit codes q + 128.
template <>
struct Dmmv<Q8_0> {
  static constexpr int kValues = 32, kBytes = Q8_0::kBytes, kSlices = 8, kSliceValues = 4;
  static HKB_DEVICE int quad0(int i) { return i; }
  struct Raw {
    uint32_t d, w;
  };
  static HKB_DEVICE Raw load(const uint8_t* b, int i) {
    constexpr int A = Q8_0::kAlign;
    return {ld16<A>(b), ld32<A>(b + Q8_0::kQs + 4 * i)};
  }
  template <typename Y>
  static HKB_DEVICE float dot(const Raw& r, int, const Y& y, float acc) {
    return quad<8>(r.w ^ 0x80808080u, centered<8>(half_lo(r.d), 128.0f), y[0], acc);
  }
};

// 256-value blocks: line k = 4 n + t is values 128 n + 32 t + l' (half n, l' = 0..31). A slice
// takes quad i (l' = 4 i .. 4 i + 3) of lines whose codes share their quant bytes. q2_K, q3_K,
// q4_K, q5_K: 16 slices s (i = s % 8, h = s / 8) of 4 lines, 2 a half: q2_K, q3_K lines h and
// h + 2 (one qs byte a half), q4_K, q5_K lines 2 h and 2 h + 1 (its two nibbles), so a thread
// decodes a block's scales once for 16 values. q6_K: 32 slices (below), fewer loads of its
// 2-byte-aligned words. Scale bytes are loaded alone or as 16-bit pairs, the rest as words.

// q2_K: value 128 n + 32 t + l' is bits 2 t of qs byte 32 n + l'; its scale byte is 8 n + 2 t +
// l' / 16 (low nibble d's, high nibble dmin's): 8 n + 4 u + s / 4 for line t = h + 2 u.
template <>
struct Dmmv<Q2_K> {
  static constexpr int kValues = 256, kBytes = Q2_K::kBytes, kSlices = 16, kSliceValues = 16;
  static HKB_DEVICE int quad0(int s) { return s; }  // line (n, h + 2 u): quad s + 32 n + 16 u
  struct Raw {
    uint32_t dm, sc[4], w[2];
  };
  static HKB_DEVICE Raw load(const uint8_t* b, int s) {
    const uint8_t* sc = b + (s >> 2);
    const uint8_t* q = b + Q2_K::kQs + 4 * (s & 7);
    return {ld32<4>(b + Q2_K::kDm), {sc[0], sc[4], sc[8], sc[12]}, {ld32<4>(q), ld32<4>(q + 32)}};
  }
  template <typename Y>
  static HKB_DEVICE float dot(const Raw& r, int s, const Y& y, float acc) {
    const int h = s >> 3;
    // d sc / kStep and -dmin m from the float forms of sc and m.
    const Affine ds = byte_scale(half_lo(r.dm), 1.0f / ByteFloat<7>::kStep);
    const Affine ms = byte_scale(half_hi(r.dm), -1.0f);
#pragma unroll
    for (int m = 0; m < 4; ++m) {  // n = m / 2, u = m % 2
      const Affine v = affine_a<7>(scaled(byte_float<7>(r.sc[m] & 15u, 0), ds),
                                   scaled(byte_float<7>(r.sc[m] >> 4, 0), ms));
      const uint32_t code = (r.w[m >> 1] >> (2 * h + 4 * (m & 1))) & 0x03030303u;
      acc = quad<7>(code, v, y[16 * m], acc);
    }
    return acc;
  }
};

// q3_K: value 128 n + 32 t + l' is bits 2 t of qs byte 32 n + l' with bit 4 n + t of hmask byte
// l' as bit 2 of its code. Scale 8 n + 2 t + l' / 16 for t = h + 2 u: low 4 bits nibble n of
// scales byte s / 4 + 4 u, high 2 bits at 4 n + 2 u of byte 8 + s / 4.
template <>
struct Dmmv<Q3_K> {
  static constexpr int kValues = 256, kBytes = Q3_K::kBytes, kSlices = 16, kSliceValues = 16;
  static HKB_DEVICE int quad0(int s) { return s; }  // line (n, h + 2 u): quad s + 32 n + 16 u
  struct Raw {
    uint32_t d, sl[2], sh, hm, w[2];
  };
  static HKB_DEVICE Raw load(const uint8_t* b, int s) {
    constexpr int A = Q3_K::kAlign;
    const uint8_t* sc = b + Q3_K::kScales + (s >> 2);
    const uint8_t* q = b + Q3_K::kQs + 4 * (s & 7);
    return {ld16<A>(b + Q3_K::kD),
            {sc[0], sc[4]},
            sc[8],
            ld32<A>(b + 4 * (s & 7)),
            {ld32<A>(q), ld32<A>(q + 32)}};
  }
  template <typename Y>
  static HKB_DEVICE float dot(const Raw& r, int s, const Y& y, float acc) {
    const int h = s >> 3;
    const ScaledCentered<7, 32, 4> sv(half_lo(r.d));  // d (sc - 32) (code - 4)
    // High-mask bit 4 n + t of each byte to bit 2: half 0's bit t (t <= 3) moved to t + 2 first,
    // inside its byte.
    const uint32_t hm0 = r.hm << 2;
#pragma unroll
    for (int m = 0; m < 4; ++m) {  // n = m / 2, u = m % 2
      const int n = m >> 1, u = m & 1, t = h + 2 * u;
      const uint32_t sc = ((r.sl[u] >> (4 * n)) & 15u) | (((r.sh >> (4 * n + 2 * u)) & 3u) << 4);
      const uint32_t hb = n ? r.hm >> (2 + t) : hm0 >> t;
      const uint32_t code = ((r.w[n] >> (2 * t)) & 0x03030303u) | (hb & 0x04040404u);
      acc = quad<7>(code, sv.at(byte_float<7>(sc, 0)), y[16 * m], acc);
    }
    return acc;
  }
};

// q4_K, q5_K: value 128 n + 32 t + l' is group g = 4 n + t: nibble t % 2 of qs byte
// 32 (2 n + t / 2) + l', q5_K's fifth bit bit g of qh byte l'. The scales and mins of groups 2 h,
// 2 h + 1 of a half come from the 16-bit pairs at scales bytes 2 h, 4 + 2 h, 8 + 2 h (blocks.h's
// k_scale_min a, b, c): n = 0: a & 63, b & 63; n = 1: (c & 15) | (a >> 6) << 4, (c >> 4) |
// (b >> 6) << 4, both bytes of a pair at once.
template <bool kFifth>
struct Dmmv<KMin<kFifth>> {
  using F = KMin<kFifth>;
  static constexpr int kValues = 256, kBytes = F::kBytes, kSlices = 16, kSliceValues = 16;
  // Line (n, 2 h + u): quad s + 8 h + 32 n + 8 u.
  static HKB_DEVICE int quad0(int s) { return s + 8 * (s >> 3); }
  struct Raw {
    uint32_t dm, a, b, c, w[2], qh;
  };
  static HKB_DEVICE Raw load(const uint8_t* b, int s) {
    const int h = s >> 3, i = s & 7;
    const uint8_t* sc = b + 4 + 2 * h;
    const uint8_t* q = b + F::kQs + 32 * h + 4 * i;
    return {ld32<4>(b),
            ld16<4>(sc),
            ld16<4>(sc + 4),
            ld16<4>(sc + 8),
            {ld32<4>(q), ld32<4>(q + 64)},
            kFifth ? ld32<4>(b + F::kQh + 4 * i) : 0u};
  }
  template <typename Y>
  static HKB_DEVICE float dot(const Raw& r, int s, const Y& y, float acc) {
    const int h = s >> 3;
    const uint32_t sc[2] = {r.a & 0x3F3Fu, (r.c & 0x0F0Fu) | ((r.a >> 2) & 0x3030u)};
    const uint32_t mn[2] = {r.b & 0x3F3Fu, ((r.c >> 4) & 0x0F0Fu) | ((r.b >> 2) & 0x3030u)};
    const Affine ds = byte_scale(half_lo(r.dm), 1.0f / ByteFloat<7>::kStep);
    const Affine ms = byte_scale(half_hi(r.dm), -1.0f);
#pragma unroll
    for (int m = 0; m < 4; ++m) {  // n = m / 2, u = m % 2
      const int n = m >> 1, u = m & 1;
      const Affine v =
          affine_a<7>(scaled(byte_float<7>(sc[n], u), ds), scaled(byte_float<7>(mn[n], u), ms));
      uint32_t code = (r.w[n] >> (4 * u)) & 0x0F0F0F0Fu;
      // q5_K: fifth bit 4 n + 2 h + u of each byte to bit 4, inside the byte.
      if constexpr (kFifth) {
        code |= (n ? r.qh >> (2 * h + u) : r.qh << (4 - 2 * h - u)) & 0x10101010u;
      }
      acc = quad<7>(code, v, y[32 * n + 8 * u], acc);
    }
    return acc;
  }
};

// q6_K: 32 slices l (i = l % 8, n = l / 16, t0 = (l / 8) % 2) of lines t0 and t0 + 2 of half n.
// Value 128 n + 32 t + l' is nibble t / 2 of ql byte 64 n + 32 (t % 2) + l' (the slice's lines:
// both nibbles of ql word l) with bits 2 t of qh byte 32 n + l' above it; scale byte 8 n + 2 t +
// l' / 16 (8 n + j, 4 on, j = (l / 4) % 4) is int8 (8-bit code sc + 128).
struct KSlice {
  int n, t0, i, j;
  HKB_DEVICE explicit KSlice(int l) : n(l >> 4), t0((l >> 3) & 1), i(l & 7), j((l >> 2) & 3) {}
};
template <>
struct Dmmv<Q6_K> {
  static constexpr int kValues = 256, kBytes = Q6_K::kBytes, kSlices = 32, kSliceValues = 8;
  static HKB_DEVICE int quad0(int l) { return l + 16 * (l >> 4); }  // 16 quads to line t0 + 2
  struct Raw {
    uint32_t d, sc[2], ql, qh;
  };
  static HKB_DEVICE Raw load(const uint8_t* b, int l) {
    constexpr int A = Q6_K::kAlign;
    const KSlice p(l);
    const uint8_t* sc = b + Q6_K::kScales + 8 * p.n + p.j;
    return {ld16<A>(b + Q6_K::kD),
            {sc[0], sc[4]},
            ld32<A>(b + 4 * l),
            ld32<A>(b + Q6_K::kQh + 32 * p.n + 4 * p.i)};
  }
  template <typename Y>
  static HKB_DEVICE float dot(const Raw& r, int l, const Y& y, float acc) {
    const KSlice p(l);
    const ScaledCentered<8, 128, 32> sv(half_lo(r.d));  // d (sc + 128 - 128) (code - 32)
    // qh bits 2 t of each byte to bits 4 and 5: t0 (0, 1) up by 4 - 2 t0, t0 + 2 down by 2 t0.
    const uint32_t hi[2] = {r.qh << (4 - 2 * p.t0), r.qh >> (2 * p.t0)};
#pragma unroll
    for (int u = 0; u < 2; ++u) {
      const uint32_t code = ((r.ql >> (4 * u)) & 0x0F0F0F0Fu) | (hi[u] & 0x30303030u);
      acc = quad<7>(code, sv.at(byte_float<8>(r.sc[u] ^ 0x80u, 0)), y[16 * u], acc);
    }
    return acc;
  }
};

}  // namespace hkb::quant
