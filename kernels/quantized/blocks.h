// GGML block formats on the device (layouts: ggml-formats.md of the project's shared spec). A
// format is read in units of 8 consecutive values: unit p of a block holds its values 8p .. 8p+7.
// Each format F has
//   kValues, kBytes        values and bytes of a block;
//   kAlign                 the alignment of its blocks in a row-major table (2 or 4 bytes);
//   Raw                    the bytes one unit needs, in registers;
//   load<A>(block, p)      reads them, where every block starts at a multiple of A bytes (A =
//                          kAlign: whole 16/32-bit words; A = 1: byte by byte, for a table at an
//                          odd address);
//   decode(raw, p, v)      the unit's 8 values as float.
// Each value is computed as ggml writes it (e.g. q4_K: (d * sc) * q - dmin * m). Every product is
// exact in float (the scales are halves of 11 significant bits times integers of at most 8), so an
// f32 result is the exact value rounded once: bit-identical to the exact value rounded to f32.
#pragma once

#include "common/platform.h"

namespace hkb::quant {

// 16 and 32 bits at byte p, little-endian, where p is a multiple of A (1, 2 or 4); kStreamed:
// data read once (load_streamed, common/platform.h), for the weights of a row product (MMVQ).
template <int A, bool kStreamed = false>
HKB_DEVICE uint32_t ld16(const uint8_t* p) {
  if constexpr (A >= 2) {
    const auto* q = reinterpret_cast<const uint16_t*>(p);
    if constexpr (kStreamed) return load_streamed(q);
    return *q;
  } else {
    return p[0] | (static_cast<uint32_t>(p[1]) << 8);
  }
}
template <int A, bool kStreamed = false>
HKB_DEVICE uint32_t ld32(const uint8_t* p) {
  if constexpr (A >= 4) {
    const auto* q = reinterpret_cast<const uint32_t*>(p);
    if constexpr (kStreamed) return load_streamed(q);
    return *q;
  } else {
    return ld16<A, kStreamed>(p) | (ld16<A, kStreamed>(p + 2) << 16);
  }
}
template <int A>
HKB_DEVICE uint32_t ldw16(const uint8_t* p) {
  return ld16<A, true>(p);
}
template <int A>
HKB_DEVICE uint32_t ldw32(const uint8_t* p) {
  return ld32<A, true>(p);
}

// The fifth bits of four values (bits 0..3 of h) as bit 4 of each byte: the multiply puts bit i at
// 8 i + 4, and no two of its terms overlap.
HKB_DEVICE int spread4(uint32_t h) {
  return static_cast<int>(((h & 15u) * 0x02040810u) & 0x10101010u);
}
HKB_DEVICE float half_lo(uint32_t w) {
  return half_bits_to_float(static_cast<uint16_t>(w & 0xFFFFu));
}
HKB_DEVICE float half_hi(uint32_t w) {
  return half_bits_to_float(static_cast<uint16_t>(w >> 16));
}
// The four bytes of w (each below 128) minus kBias, as floats c[0..3], exactly: byte_float
// (platform.h) puts a byte into a float's mantissa with one permute and one FMA by powers of two
// makes it the integer again (NVIDIA converts integers at a quarter of the float rate).
template <int kBias>
HKB_DEVICE void codes4(uint32_t w, float* c) {
#pragma unroll
  for (int k = 0; k < 4; ++k) c[k] = fmaf(byte_float<7>(w, k), 256.0f, -(128.0f + kBias));
}
// The eight codes of the words w0, w1 (codes4).
template <int kBias>
HKB_DEVICE void codes8(uint32_t w0, uint32_t w1, float (&c)[8]) {
  codes4<kBias>(w0, c);
  codes4<kBias>(w1, c + 4);
}
// The four bytes of w as signed integers, as floats, exactly (codes4 of the bytes plus 128).
HKB_DEVICE void sbytes4(uint32_t w, float* c) {
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    c[k] = fmaf(byte_float<8>(w ^ 0x80808080u, k), 65536.0f, -(32768.0f + 128.0f));
  }
}

// ---- 32-value formats: unit p in 0..3 -------------------------------------------------------
// q4_0, q4_1, q5_0, q5_1: `half d; [half m]; [u32 qh]; u8 qs[16]`. Value j's 4 low bits are the
// nibble j / 16 of byte j % 16 of qs, its fifth bit (q5_*) bit j of qh. x = (q - 8 or 16) d, or
// with a min (q4_1, q5_1) x = q d + m.
template <bool kMin, bool kFifth>
struct Legacy {
  static constexpr int kValues = 32, kAlign = kMin ? 4 : 2;
  static constexpr int kQh = kMin ? 4 : 2, kQs = kQh + (kFifth ? 4 : 0), kBytes = kQs + 16;
  struct Raw {
    uint32_t dm, qh, q0, q1;
  };
  template <int A>
  static HKB_DEVICE Raw load(const uint8_t* b, uint32_t p) {
    const uint8_t* q = b + kQs + 8 * (p & 1);
    return {kMin ? ld32<A>(b) : ld16<A>(b), kFifth ? ld32<A>(b + kQh) : 0u, ld32<A>(q),
            ld32<A>(q + 4)};
  }
  static HKB_DEVICE void decode(const Raw& r, uint32_t p, float (&v)[8]) {
    const float d = half_lo(r.dm), m = half_hi(r.dm);
    const int sh = 4 * static_cast<int>(p >> 1);
    uint32_t w0 = (r.q0 >> sh) & 0x0F0F0F0Fu, w1 = (r.q1 >> sh) & 0x0F0F0F0Fu;
    if constexpr (kFifth) {
      const uint32_t hi = r.qh >> (8 * p);
      w0 |= static_cast<uint32_t>(spread4(hi));
      w1 |= static_cast<uint32_t>(spread4(hi >> 4));
    }
    float c[8];
    codes8<kMin ? 0 : (kFifth ? 16 : 8)>(w0, w1, c);
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = kMin ? c[i] * d + m : c[i] * d;
  }
};
using Q4_0 = Legacy<false, false>;
using Q4_1 = Legacy<true, false>;
using Q5_0 = Legacy<false, true>;
using Q5_1 = Legacy<true, true>;
static_assert(Q4_0::kBytes == 18 && Q4_1::kBytes == 20 && Q5_0::kBytes == 22 && Q5_1::kBytes == 24,
              "legacy block sizes");

// q8_0 (`half d; i8 qs[32]`) and q8_K (`float d; i8 qs[256]; i16 bsums[16]`, the sums unused
// here): x = q d.
template <int kValues_, int kBytes_, bool kFloatD>
struct Q8 {
  static constexpr int kValues = kValues_, kBytes = kBytes_, kAlign = kFloatD ? 4 : 2;
  static constexpr int kQs = kFloatD ? 4 : 2;
  struct Raw {
    uint32_t d, q0, q1;
  };
  template <int A>
  static HKB_DEVICE Raw load(const uint8_t* b, uint32_t p) {
    const uint8_t* q = b + kQs + 8 * p;
    return {kFloatD ? ld32<A>(b) : ld16<A>(b), ld32<A>(q), ld32<A>(q + 4)};
  }
  static HKB_DEVICE void decode(const Raw& r, uint32_t, float (&v)[8]) {
    const float d = kFloatD ? bits_float(r.d) : half_lo(r.d);
    float c[8];
    sbytes4(r.q0, c);
    sbytes4(r.q1, c + 4);
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = c[i] * d;
  }
};
using Q8_0 = Q8<32, 34, false>;
using Q8_K = Q8<256, 292, true>;

// ---- 256-value super-blocks: unit p in 0..31 ---------------------------------------------------
// q2_K, q3_K and q6_K keep 128-value halves n = p / 16; in a half, value 32 k + l (k = (p / 4) % 4,
// l = 8 (p % 4) + i) sits in byte l of the half's quant bytes, at bits 2k (q2_K, q3_K) or in the
// nibble k / 2 of byte l + 32 (k % 2) (q6_K). Scales are per 16 values: scale p / 2.

struct Q2_K {
  static constexpr int kValues = 256, kBytes = 84, kAlign = 4;
  static constexpr int kQs = 16, kDm = 80;  // scales at 0
  struct Raw {
    uint32_t dm, sc, q0, q1;
  };
  template <int A>
  static HKB_DEVICE Raw load(const uint8_t* b, uint32_t p) {
    const uint8_t* q = b + kQs + 32 * (p >> 4) + 8 * (p & 3);
    return {ld32<A>(b + kDm), b[p >> 1], ld32<A>(q), ld32<A>(q + 4)};
  }
  static HKB_DEVICE void decode(const Raw& r, uint32_t p, float (&v)[8]) {
    const float dl = half_lo(r.dm) * static_cast<float>(r.sc & 15u);
    const float ml = half_hi(r.dm) * static_cast<float>(r.sc >> 4);
    const int sh = 2 * static_cast<int>((p >> 2) & 3);
    float c[8];
    codes8<0>((r.q0 >> sh) & 0x03030303u, (r.q1 >> sh) & 0x03030303u, c);
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = dl * c[i] - ml;
  }
};

// Scale s (0..15), 6 bits minus 32: low 4 bits in byte s % 8 of scales (low nibble for s < 8),
// high 2 bits in byte 8 + s % 4 at bits 2 (s / 4). Value's high-mask bit: 4 n + k of byte l.
// q3_scale_bits: the 6 bits of scale s from its low-nibble byte lo and high-bits byte hi (any bits
// above the byte are ignored).
HKB_DEVICE uint32_t q3_scale_bits(uint32_t lo, uint32_t hi, int s) {
  return ((lo >> (4 * (s >> 3))) & 15u) | (((hi >> (2 * (s >> 2))) & 3u) << 4);
}
struct Q3_K {
  static constexpr int kValues = 256, kBytes = 110, kAlign = 2;
  static constexpr int kQs = 32, kScales = 96, kD = 108;  // hmask at 0
  struct Raw {
    uint32_t d, h0, h1, q0, q1, sl, sh;
  };
  template <int A>
  static HKB_DEVICE Raw load(const uint8_t* b, uint32_t p) {
    const uint32_t s = p >> 1;
    const uint8_t* h = b + 8 * (p & 3);
    const uint8_t* q = b + kQs + 32 * (p >> 4) + 8 * (p & 3);
    return {ld16<A>(b + kD), ld32<A>(h),           ld32<A>(h + 4),          ld32<A>(q),
            ld32<A>(q + 4),  b[kScales + (s & 7)], b[kScales + 8 + (s & 3)]};
  }
  static HKB_DEVICE void decode(const Raw& r, uint32_t p, float (&v)[8]) {
    const uint32_t s = p >> 1;
    const float dl =
        half_lo(r.d) *
        static_cast<float>(static_cast<int>(q3_scale_bits(r.sl, r.sh, static_cast<int>(s))) - 32);
    const int k = static_cast<int>((p >> 2) & 3);
    const int bit = 4 * static_cast<int>(p >> 4) + k;
    // Code lo + 4 h minus 4: lo - 4 without the high-mask bit h, lo with it.
    const auto code = [&](uint32_t q, uint32_t h) {
      return ((q >> (2 * k)) & 0x03030303u) | (((h >> bit) & 0x01010101u) << 2);
    };
    float c[8];
    codes8<4>(code(r.q0, r.h0), code(r.q1, r.h1), c);
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = dl * c[i];
  }
};

// q4_K / q5_K: 8 groups of 32 (group g = p / 4), byte l of quant row g / 2, nibble g % 2. The
// group's 6-bit scale and min (ggml's get_scale_min_k4) come from bytes a = scales[g % 4],
// b = scales[g % 4 + 4], c = scales[g % 4 + 8]: g < 4: (a & 63, b & 63); else
// ((c & 15) | (a >> 6) << 4, (c >> 4) | (b >> 6) << 4).
struct KScaleMin {
  float d, m;
};
HKB_DEVICE KScaleMin k_scale_min(uint32_t dm, uint32_t a, uint32_t b, uint32_t c, uint32_t g) {
  uint32_t sc, mn;
  if (g < 4) {
    sc = a & 63u, mn = b & 63u;
  } else {
    sc = (c & 15u) | ((a >> 6) << 4), mn = (c >> 4) | ((b >> 6) << 4);
  }
  return {half_lo(dm) * static_cast<float>(sc), half_hi(dm) * static_cast<float>(mn)};
}

// q4_K (`half d, dmin; u8 scales[12]; u8 qs[128]`) and q5_K (the same with `u8 qh[32]` before
// qs): the fifth bit of a q5_K value is bit g of byte l of qh.
template <bool kFifth>
struct KMin {
  static constexpr int kValues = 256, kAlign = 4, kQs = kFifth ? 48 : 16, kBytes = kQs + 128;
  static constexpr int kQh = 16;  // scales at 4
  struct Raw {
    uint32_t dm, a, b, c, h0, h1, q0, q1;
  };
  template <int A>
  static HKB_DEVICE Raw load(const uint8_t* b, uint32_t p) {
    const uint32_t g = p >> 2;
    const uint8_t* h = b + kQh + 8 * (p & 3);
    const uint8_t* q = b + kQs + 32 * (g >> 1) + 8 * (p & 3);
    return {ld32<A>(b),
            b[4 + (g & 3)],
            b[8 + (g & 3)],
            b[12 + (g & 3)],
            kFifth ? ld32<A>(h) : 0u,
            kFifth ? ld32<A>(h + 4) : 0u,
            ld32<A>(q),
            ld32<A>(q + 4)};
  }
  static HKB_DEVICE void decode(const Raw& r, uint32_t p, float (&v)[8]) {
    const uint32_t g = p >> 2;
    const KScaleMin s = k_scale_min(r.dm, r.a, r.b, r.c, g);
    const int sh = 4 * static_cast<int>(g & 1);
    const auto code = [&](uint32_t q, uint32_t h) {
      return ((q >> sh) & 0x0F0F0F0Fu) | (kFifth ? ((h >> g) & 0x01010101u) << 4 : 0u);
    };
    float c[8];
    codes8<0>(code(r.q0, r.h0), code(r.q1, r.h1), c);
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = s.d * c[i] - s.m;
  }
};
using Q4_K = KMin<false>;
using Q5_K = KMin<true>;
static_assert(Q4_K::kBytes == 144 && Q5_K::kBytes == 176, "q4_K / q5_K block sizes");

struct Q6_K {
  static constexpr int kValues = 256, kBytes = 210, kAlign = 2;
  static constexpr int kQh = 128, kScales = 192, kD = 208;  // ql at 0
  struct Raw {
    uint32_t d, l0, l1, h0, h1, sc;
  };
  template <int A>
  static HKB_DEVICE Raw load(const uint8_t* b, uint32_t p) {
    const uint32_t n = p >> 4, k = (p >> 2) & 3;
    const uint8_t* l = b + 64 * n + 32 * (k & 1) + 8 * (p & 3);
    const uint8_t* h = b + kQh + 32 * n + 8 * (p & 3);
    return {ld16<A>(b + kD), ld32<A>(l),     ld32<A>(l + 4),
            ld32<A>(h),      ld32<A>(h + 4), b[kScales + (p >> 1)]};
  }
  static HKB_DEVICE void decode(const Raw& r, uint32_t p, float (&v)[8]) {
    const int k = static_cast<int>((p >> 2) & 3);
    const float dl = half_lo(r.d) * static_cast<float>(static_cast<int8_t>(r.sc));
    const int sh = 4 * (k >> 1);
    const auto code = [&](uint32_t l, uint32_t h) {
      return ((l >> sh) & 0x0F0F0F0Fu) | (((h >> (2 * k)) & 0x03030303u) << 4);
    };
    float c[8];
    codes8<32>(code(r.l0, r.h0), code(r.l1, r.h1), c);
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = dl * c[i];
  }
};

}  // namespace hkb::quant
