// MMQ's staged forms (quantized/mmq.h): each format's 32-value groups decoded to signed bytes, four
// a 32-bit word in value order (word j: values 4j .. 4j+3 of the group), and the per-row and
// per-column scale data that turn the exact integer sum f of a weight group with a q8_1 block into
// the group's share of the product. MmqFormat<F> has
//   kForm                       how f becomes float (MmqForm below);
//   kRaw, load(block, g, raw)   the raw words of group g (0 .. kValues / 32 - 1) of a weight block
//                               (loads only, so a thread may issue several units' loads first);
//   decode(raw, g, q, r)        the group's words q and its row data r (float bits, kRowWords);
//   kS                          (kOffset, and kMin of the 32-value formats) s's factor in c1.
// Row data r and column data c (c0 = d_a of the q8_1 block) by form:
//   kScale   acc += r0 (c0 f): q8_0.
//   kOffset  acc += r0 (c0 f + c1), c1 = kS s: q4_0 (q - 8 through s), q5_0 (q - 16).
//   kMin     acc += r0 (c0 f) + r1 c1: q4_1, q5_1 (r1 = m, c1 = s); q4_K, q5_K (r0 = d sc,
//            r1 = -dmin mn, c1 = d_a times the exact integer sum of the q8_1 block).
//   kMin2    acc += r0 (c0 f) + r1 c1 + r2 c2: q2_K, whose bytes are sc q (at most 45); r1, r2 =
//            -dmin mn of the two 16-value halves, c1, c2 = d_a times their exact integer sums.
//   kSplit   f = sc0 f0 + sc1 f1, acc += r0 (c0 f): q3_K, q6_K, f0 and f1 the halves' sums, the
//            signed 16-value sub-scales packed in r1 (16 bits each).
// The scalings are those of vecdot.h (MMVQ) and the CPU reference, so MMQ and MMVQ agree.
#pragma once

#include "quantized/blockdot.h"

namespace hkb::quant {

enum class MmqForm { kScale, kOffset, kMin, kMin2, kSplit };

constexpr int mmq_row_words(MmqForm f) {
  return f == MmqForm::kMin2 ? 4 : (f == MmqForm::kMin || f == MmqForm::kSplit) ? 2 : 1;
}
constexpr int mmq_col_words(MmqForm f) {
  return f == MmqForm::kMin2 ? 4 : (f == MmqForm::kOffset || f == MmqForm::kMin) ? 2 : 1;
}

// The 32 nibbles of 4 words (value j: nibble j / 16 of byte j % 16) as 8 words of bytes.
HKB_DEVICE void mmq_nibbles(const uint32_t (&w)[4], uint32_t (&q)[8]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) q[i] = w[i] & 0x0F0F0F0Fu, q[4 + i] = (w[i] >> 4) & 0x0F0F0F0Fu;
}
// Bit j of qh as bit 4 of value j.
HKB_DEVICE void mmq_fifth(uint32_t qh, uint32_t (&q)[8]) {
#pragma unroll
  for (int j = 0; j < 8; ++j) q[j] |= static_cast<uint32_t>(spread4(qh >> (4 * j)));
}
// Two signed 16-value sub-scales as r1.
HKB_DEVICE uint32_t mmq_pack_scales(int sc0, int sc1) {
  return (static_cast<uint32_t>(sc0) & 0xFFFFu) | (static_cast<uint32_t>(sc1) << 16);
}
// The n words at p (2-byte aligned) into raw[at ..].
template <int n, int kRaw>
HKB_DEVICE void mmq_words(const uint8_t* p, uint32_t (&raw)[kRaw], int at) {
#pragma unroll
  for (int i = 0; i < n; ++i) raw[at + i] = ld32<2>(p + 4 * i);
}

// A 2-byte-aligned block of F as blockdot.h's aligned Words (plain loads: MMQ reads a block once a
// column tile): raw = its first 16 bits, then the body's words.
template <typename F, int kRaw>
HKB_DEVICE void mmq_block_words(const uint8_t* b, uint32_t (&raw)[kRaw]) {
  const auto w = Words<F::kBytes, F::kAlign, false>::load(b);
  static_assert(decltype(w)::kBody + 1 == kRaw, "the head, then the body's words");
  raw[0] = w.head;
#pragma unroll
  for (int j = 0; j + 1 < kRaw; ++j) raw[1 + j] = w.body[j];
}

template <typename F>
struct MmqFormat;

// q4_0 / q5_0: raw words half d, (q5_0) qh, qs.
template <bool kFifth>
struct MmqLegacyOffset {
  static constexpr MmqForm kForm = MmqForm::kOffset;
  static constexpr float kS = kFifth ? -16.0f : -8.0f;
  static constexpr int kQh = 1, kQs = kFifth ? 2 : 1, kRaw = kQs + 4;
  // Aligned words: raw = d, [qh,] qs.
  static HKB_DEVICE void load(const uint8_t* b, int, uint32_t (&raw)[kRaw]) {
    mmq_block_words<Legacy<false, kFifth>>(b, raw);
  }
  static HKB_DEVICE void decode(const uint32_t (&raw)[kRaw], int, uint32_t (&q)[8],
                                uint32_t (&r)[1]) {
    const uint32_t w[4] = {raw[kQs], raw[kQs + 1], raw[kQs + 2], raw[kQs + 3]};
    mmq_nibbles(w, q);
    if constexpr (kFifth) mmq_fifth(raw[kQh], q);
    r[0] = float_bits(half_lo(raw[0]));
  }
};
template <>
struct MmqFormat<Q4_0> : MmqLegacyOffset<false> {};
template <>
struct MmqFormat<Q5_0> : MmqLegacyOffset<true> {};

// q4_1 / q5_1: d and m in the block's first word, then (q5_1) qh, then qs.
template <bool kFifth>
struct MmqLegacyMin {
  static constexpr MmqForm kForm = MmqForm::kMin;
  static constexpr float kS = 1.0f;
  static constexpr int kQs = kFifth ? 2 : 1, kRaw = kQs + 4;
  static HKB_DEVICE void load(const uint8_t* b, int, uint32_t (&raw)[kRaw]) {
#pragma unroll
    for (int i = 0; i < kRaw; ++i) raw[i] = ld32<4>(b + 4 * i);
  }
  static HKB_DEVICE void decode(const uint32_t (&raw)[kRaw], int, uint32_t (&q)[8],
                                uint32_t (&r)[2]) {
    const uint32_t w[4] = {raw[kQs], raw[kQs + 1], raw[kQs + 2], raw[kQs + 3]};
    mmq_nibbles(w, q);
    if constexpr (kFifth) mmq_fifth(raw[1], q);
    r[0] = float_bits(half_lo(raw[0])), r[1] = float_bits(half_hi(raw[0]));
  }
};
template <>
struct MmqFormat<Q4_1> : MmqLegacyMin<false> {};
template <>
struct MmqFormat<Q5_1> : MmqLegacyMin<true> {};

template <>
struct MmqFormat<Q8_0> {
  static constexpr MmqForm kForm = MmqForm::kScale;
  static constexpr int kRaw = 9;
  // Aligned words: 9 loads where 16-bit halves take 17.
  static HKB_DEVICE void load(const uint8_t* b, int, uint32_t (&raw)[kRaw]) {
    mmq_block_words<Q8_0>(b, raw);
  }
  static HKB_DEVICE void decode(const uint32_t (&raw)[kRaw], int, uint32_t (&q)[8],
                                uint32_t (&r)[1]) {
#pragma unroll
    for (int j = 0; j < 8; ++j) q[j] = raw[1 + j];
    r[0] = float_bits(half_lo(raw[0]));
  }
};

// q2_K, q3_K, q6_K: group g = 4 n + k is values 128 n + 32 k + l (l = 0..31) of half n
// (blocks.h), 16-value sub-groups 2 g and 2 g + 1.
template <>
struct MmqFormat<Q2_K> {
  static constexpr MmqForm kForm = MmqForm::kMin2;
  static constexpr int kRaw = 10;  // qs words of half n, d/dmin, the two scale bytes
  static HKB_DEVICE void load(const uint8_t* b, int g, uint32_t (&raw)[kRaw]) {
#pragma unroll
    for (int j = 0; j < 8; ++j) raw[j] = ld32<4>(b + 16 + 32 * (g >> 2) + 4 * j);
    raw[8] = ld32<4>(b + 80), raw[9] = ld16<2>(b + 2 * g);
  }
  static HKB_DEVICE void decode(const uint32_t (&raw)[kRaw], int g, uint32_t (&q)[8],
                                uint32_t (&r)[4]) {
    const int sh = 2 * (g & 3);
    const uint32_t sc[2] = {raw[9] & 0xFFu, raw[9] >> 8};
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      // Levels 0..3 times a scale of at most 15: no byte carries into the next.
      q[j] = ((raw[j] >> sh) & 0x03030303u) * (sc[j >> 2] & 15u);
    }
    const float dmin = half_hi(raw[8]);
    r[0] = float_bits(half_lo(raw[8]));
    r[1] = float_bits(-dmin * static_cast<float>(sc[0] >> 4));
    r[2] = float_bits(-dmin * static_cast<float>(sc[1] >> 4));
    r[3] = 0;
  }
};
// q3_K: qs and hmask words, d, and the scale bytes of sub-groups 2 g, 2 g + 1 (adjacent: low
// nibbles at 96 + (2 g) % 8, high bits at 104 + (2 g) % 4).
template <>
struct MmqFormat<Q3_K> {
  static constexpr MmqForm kForm = MmqForm::kSplit;
  static constexpr int kRaw = 19;
  static HKB_DEVICE void load(const uint8_t* b, int g, uint32_t (&raw)[kRaw]) {
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      raw[j] = ld32<2>(b + 32 + 32 * (g >> 2) + 4 * j), raw[8 + j] = ld32<2>(b + 4 * j);
    }
    raw[16] = ld16<2>(b + 108);
    raw[17] = ld16<2>(b + 96 + ((2 * g) & 7)), raw[18] = ld16<2>(b + 104 + ((2 * g) & 3));
  }
  // Sub-group s's 6-bit scale less 32, from its low-nibble byte lo and high-bits byte hi.
  static HKB_DEVICE int scale(uint32_t lo, uint32_t hi, int s) {
    return static_cast<int>(q3_scale_bits(lo, hi, s)) - 32;
  }
  static HKB_DEVICE void decode(const uint32_t (&raw)[kRaw], int g, uint32_t (&q)[8],
                                uint32_t (&r)[2]) {
    const int sh = 2 * (g & 3);  // hmask bit 4 n + k = g of byte l
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      q[j] = static_cast<uint32_t>(q3_levels((raw[j] >> sh) & 0x03030303u, raw[8 + j] >> g));
    }
    r[0] = float_bits(half_lo(raw[16]));
    r[1] = mmq_pack_scales(scale(raw[17] & 0xFFu, raw[18] & 0xFFu, 2 * g),
                           scale(raw[17] >> 8, raw[18] >> 8, 2 * g + 1));
  }
};
template <>
struct MmqFormat<Q6_K> {
  static constexpr MmqForm kForm = MmqForm::kSplit;
  static constexpr int kQh = 8, kSc = 16, kRaw = 18;  // ql, qh, scales, d
  static HKB_DEVICE void load(const uint8_t* b, int g, uint32_t (&raw)[kRaw]) {
    const int n = g >> 2, k = g & 3;
    mmq_words<8>(b + 64 * n + 32 * (k & 1), raw, 0);
    mmq_words<8>(b + 128 + 32 * n, raw, kQh);
    raw[kSc] = ld16<2>(b + 192 + 2 * g), raw[kSc + 1] = ld16<2>(b + 208);
  }
  static HKB_DEVICE void decode(const uint32_t (&raw)[kRaw], int g, uint32_t (&q)[8],
                                uint32_t (&r)[2]) {
    const int k = g & 3;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const uint32_t lo = (raw[j] >> (4 * (k >> 1))) & 0x0F0F0F0Fu;
      const uint32_t hi = (raw[kQh + j] >> (2 * k)) & 0x03030303u;
      q[j] = static_cast<uint32_t>(q6_levels(lo | (hi << 4)));
    }
    r[0] = float_bits(half_lo(raw[kSc + 1]));
    r[1] =
        mmq_pack_scales(static_cast<int8_t>(raw[kSc] & 0xFFu), static_cast<int8_t>(raw[kSc] >> 8));
  }
};

// q4_K / q5_K: group g is nibble g % 2 of quant row g / 2; q5_K's fifth bit is bit g of byte l
// of qh. Raw: the quant words, (q5_K) the qh words, d/dmin and the group's three scale bytes.
template <bool kFifth>
struct MmqKMin {
  static constexpr MmqForm kForm = MmqForm::kMin;
  static constexpr int kQh = 12, kRaw = kFifth ? 20 : 12;
  static HKB_DEVICE void load(const uint8_t* b, int g, uint32_t (&raw)[kRaw]) {
    const uint8_t* qs = b + (kFifth ? 48 : 16) + 32 * (g >> 1);
#pragma unroll
    for (int j = 0; j < 8; ++j) raw[j] = ld32<4>(qs + 4 * j);
    if constexpr (kFifth) {
#pragma unroll
      for (int j = 0; j < 8; ++j) raw[kQh + j] = ld32<4>(b + 16 + 4 * j);
    }
    const int i = g & 3;
    raw[8] = ld32<4>(b), raw[9] = b[4 + i], raw[10] = b[8 + i], raw[11] = b[12 + i];
  }
  static HKB_DEVICE void decode(const uint32_t (&raw)[kRaw], int g, uint32_t (&q)[8],
                                uint32_t (&r)[2]) {
    const int sh = 4 * (g & 1);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      q[j] = (raw[j] >> sh) & 0x0F0F0F0Fu;
      if constexpr (kFifth) q[j] |= ((raw[kQh + j] >> g) & kOnes) << 4;
    }
    const KScaleMin s = k_scale_min(raw[8], raw[9], raw[10], raw[11], static_cast<uint32_t>(g));
    r[0] = float_bits(s.d), r[1] = float_bits(-s.m);
  }
};
template <>
struct MmqFormat<Q4_K> : MmqKMin<false> {};
template <>
struct MmqFormat<Q5_K> : MmqKMin<true> {};

// Column data of a q8_1 block (d_a, s and its ints a): c0 = d_a; c1 = kS s (kOffset, and kMin of
// the 32-value formats), d_a times the sum of all 32 (kMin of the K-quants) or of the first 16
// (kMin2, whose c2 takes the last 16).
template <typename F>
HKB_DEVICE void mmq_col_data(uint32_t ds, const uint32_t (&a)[8],
                             float (&c)[mmq_col_words(MmqFormat<F>::kForm)]) {
  constexpr MmqForm kForm = MmqFormat<F>::kForm;
  const float d = half_lo(ds);
  c[0] = d;
  if constexpr (kForm == MmqForm::kOffset || (kForm == MmqForm::kMin && F::kValues == 32)) {
    c[1] = MmqFormat<F>::kS * half_hi(ds);
  } else if constexpr (kForm == MmqForm::kMin || kForm == MmqForm::kMin2) {
    int s0 = 0, s1 = 0;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      s0 = dot4_i8(static_cast<int>(kOnes), static_cast<int>(a[j]), s0);
      s1 = dot4_i8(static_cast<int>(kOnes), static_cast<int>(a[4 + j]), s1);
    }
    if constexpr (kForm == MmqForm::kMin) {
      c[1] = d * static_cast<float>(s0 + s1);
    } else {
      c[1] = d * static_cast<float>(s0), c[2] = d * static_cast<float>(s1), c[3] = 0.0f;
    }
  }
}

// acc plus the share of weight words w (row data r) and q8_1 words a (column data c).
template <MmqForm kForm>
HKB_DEVICE float mmq_madd(float acc, const uint32_t (&w)[8], const uint32_t (&a)[8],
                          const float (&r)[3], int sc0, int sc1, const float (&c)[4]) {
  if constexpr (kForm == MmqForm::kSplit) {
    int f0 = 0, f1 = 0;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      f0 = dot4_i8(static_cast<int>(w[j]), static_cast<int>(a[j]), f0);
      f1 = dot4_i8(static_cast<int>(w[4 + j]), static_cast<int>(a[4 + j]), f1);
    }
    return acc + r[0] * (c[0] * static_cast<float>(f0 * sc0 + f1 * sc1));
  } else {
    int f = 0;
#pragma unroll
    for (int j = 0; j < 8; ++j) f = dot4_i8(static_cast<int>(w[j]), static_cast<int>(a[j]), f);
    const float x = static_cast<float>(f);
    if constexpr (kForm == MmqForm::kScale) return acc + r[0] * (c[0] * x);
    if constexpr (kForm == MmqForm::kOffset) return acc + r[0] * (c[0] * x + c[1]);
    if constexpr (kForm == MmqForm::kMin) return acc + r[1] * c[1] + r[0] * (c[0] * x);
    return acc + r[2] * c[2] + r[1] * c[1] + r[0] * (c[0] * x);
  }
}

}  // namespace hkb::quant
