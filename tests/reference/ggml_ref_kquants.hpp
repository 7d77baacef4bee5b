// GGML block formats, CPU reference: the 256-value K-quant super-blocks q2_K .. q6_K and q8_K,
// one super-block at a time. Quantizers follow ggml's quantize_row_*_ref (float arithmetic);
// dequantizers give each value exactly, in double. Field offsets are the byte layout of
// ggml-formats.md; value v of a block always belongs to group v / 16 (q2_K, q3_K, q6_K) or
// v / 32 (q4_K, q5_K).
#pragma once

#include "ggml_ref_kfit.hpp"

namespace ref::ggml::detail {

// 2-bit planes of q2_K / q3_K: value v sits in byte (v / 128) * 32 + v % 32, at bit
// 2 * ((v / 32) % 4).
inline int two_bits(const uint8_t* qs, int v) {
  return (qs[(v / 128) * 32 + v % 32] >> (2 * ((v / 32) % 4))) & 3;
}
inline void pack_two_bits(const uint8_t* L, uint8_t* qs) {
  for (int half = 0; half < 256; half += 128) {
    for (int l = 0; l < 32; ++l) {
      qs[half / 4 + l] = static_cast<uint8_t>(L[half + l] | (L[half + l + 32] << 2) |
                                              (L[half + l + 64] << 4) | (L[half + l + 96] << 6));
    }
  }
}

// ---- q2_K: u8 scales[16]; u8 qs[64]; half d, dmin (offsets 0, 16, 80, 82) -----------------------
inline void quantize_q2_K(const float* x, uint8_t* b) {
  uint8_t L[256];
  float weights[16], mins[16], scales[16];
  float max_scale = 0.0f, max_min = 0.0f;
  for (int g = 0; g < 16; ++g) {
    for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * g + l]);
    scales[g] =
        make_qkx2_quants(16, 3, x + 16 * g, weights, L + 16 * g, &mins[g], -0.5f, 0.1f, 15, true);
    max_scale = std::max(max_scale, scales[g]);
    max_min = std::max(max_min, mins[g]);
  }
  uint8_t* sc = b;
  if (max_scale > 0.0f) {
    const float iscale = 15.0f / max_scale;
    for (int g = 0; g < 16; ++g) sc[g] = static_cast<uint8_t>(nearest_int(iscale * scales[g]));
    store_half(b + 80, max_scale / 15.0f);
  } else {
    for (int g = 0; g < 16; ++g) sc[g] = 0;
    store_half(b + 80, 0.0f);
  }
  if (max_min > 0.0f) {
    const float iscale = 15.0f / max_min;
    for (int g = 0; g < 16; ++g) {
      sc[g] =
          static_cast<uint8_t>(sc[g] | (static_cast<unsigned>(nearest_int(iscale * mins[g])) << 4));
    }
    store_half(b + 82, max_min / 15.0f);
  } else {
    store_half(b + 82, 0.0f);
  }
  // Requantize against the stored (rounded) scales; a group whose scale is 0 keeps its fit.
  const float d = load_half(b + 80), dmin = load_half(b + 82);
  for (int g = 0; g < 16; ++g) {
    const float dg = d * static_cast<float>(sc[g] & 0xF);
    if (dg == 0.0f) continue;
    const float mg = dmin * static_cast<float>(sc[g] >> 4);
    for (int i = 0; i < 16; ++i) {
      L[16 * g + i] = static_cast<uint8_t>(clamp_int(nearest_int((x[16 * g + i] + mg) / dg), 0, 3));
    }
  }
  pack_two_bits(L, b + 16);
}
inline void dequantize_q2_K(const uint8_t* b, double* y) {
  const double d = load_half(b + 80), dmin = load_half(b + 82);
  for (int v = 0; v < 256; ++v) {
    const int s = b[v / 16];
    y[v] = d * (s & 0xF) * two_bits(b + 16, v) - dmin * (s >> 4);
  }
}

// Fits the 16 groups of 16 of a symmetric format; returns the scale of largest magnitude
// (the first one on ties), with its sign.
inline float fit_groups16(const float* x, int8_t* L, float* scales,
                          float (*fit)(int, int, const float*, int8_t*), int nmax) {
  float max_scale = 0.0f, amax = 0.0f;
  for (int g = 0; g < 16; ++g) {
    scales[g] = fit(16, nmax, x + 16 * g, L + 16 * g);
    if (std::fabs(scales[g]) > amax) {
      amax = std::fabs(scales[g]);
      max_scale = scales[g];
    }
  }
  return max_scale;
}

// ---- q3_K: u8 hmask[32]; u8 qs[64]; u8 scales[12]; half d (offsets 0, 32, 96, 108) -------------
// Scale g (6 bits, stored + 32): low nibble in byte g % 8 (high nibble for g >= 8), top two bits
// in byte 8 + g % 4 at bit 2 * (g / 4).
inline int q3_scale(const uint8_t* s, int g) {
  const int lo = g < 8 ? (s[g] & 0xF) : (s[g - 8] >> 4);
  const int hi = (s[8 + g % 4] >> (2 * (g / 4))) & 3;
  return (lo | (hi << 4)) - 32;
}
// Value v's third bit is bit v / 32 of hmask[v % 32]; a clear bit means q - 4.
inline int q3_value(const uint8_t* b, int v) {
  const bool high = (b[v % 32] >> (v / 32)) & 1;
  return two_bits(b + 32, v) - (high ? 0 : 4);
}
inline void quantize_q3_K(const float* x, uint8_t* b) {
  int8_t L[256];
  float scales[16];
  const float max_scale = fit_groups16(x, L, scales, make_q3_quants, 4);
  uint8_t* s = b + 96;
  std::memset(s, 0, 12);
  if (max_scale != 0.0f) {
    const float iscale = -32.0f / max_scale;
    for (int g = 0; g < 16; ++g) {
      // ggml narrows to int8 before clamping; |iscale * scale| <= 32 keeps that lossless.
      const int l = clamp_int(static_cast<int8_t>(nearest_int(iscale * scales[g])), -32, 31) + 32;
      if (g < 8) {
        s[g] = static_cast<uint8_t>(l & 0xF);
      } else {
        s[g - 8] = static_cast<uint8_t>(s[g - 8] | ((l & 0xF) << 4));
      }
      s[8 + g % 4] = static_cast<uint8_t>(s[8 + g % 4] | ((l >> 4) << (2 * (g / 4))));
    }
    store_half(b + 108, 1.0f / iscale);
  } else {
    store_half(b + 108, 0.0f);
  }
  const float d = load_half(b + 108);
  for (int g = 0; g < 16; ++g) {
    const float dg = d * static_cast<float>(q3_scale(s, g));
    if (dg == 0.0f) continue;
    for (int i = 0; i < 16; ++i) {
      L[16 * g + i] = static_cast<int8_t>(clamp_int(nearest_int(x[16 * g + i] / dg), -4, 3) + 4);
    }
  }
  std::memset(b, 0, 32);
  uint8_t low[256];
  for (int v = 0; v < 256; ++v) {
    int l = L[v];
    if (l > 3) {
      b[v % 32] = static_cast<uint8_t>(b[v % 32] | (1 << (v / 32)));
      l -= 4;
    }
    low[v] = static_cast<uint8_t>(l);
  }
  pack_two_bits(low, b + 32);
}
inline void dequantize_q3_K(const uint8_t* b, double* y) {
  const double d = load_half(b + 108);
  for (int v = 0; v < 256; ++v) y[v] = d * q3_scale(b + 96, v / 16) * q3_value(b, v);
}

// ---- Shared by q4_K and q5_K: 8 groups of 32, 6-bit scale and min packed in 12 bytes ------------
// Groups 0..3: scale = s[g] & 63, min = s[g + 4] & 63. Groups 4..7: low nibbles in s[g + 4],
// top two bits in the top bits of s[g - 4] (scale) and s[g] (min).
inline void k4_scale_min(const uint8_t* s, int g, int* sc, int* m) {
  if (g < 4) {
    *sc = s[g] & 63;
    *m = s[g + 4] & 63;
  } else {
    *sc = (s[g + 4] & 0xF) | ((s[g - 4] >> 6) << 4);
    *m = (s[g + 4] >> 4) | ((s[g] >> 6) << 4);
  }
}

// Fits the 8 groups, stores d, dmin (offsets 0, 2) and the 12 scale bytes (offset 4) and leaves
// each value's level (0 .. nmax) in L.
inline void quantize_k4_common(const float* x, uint8_t* b, int nmax, float rmin, int nstep,
                               uint8_t* L) {
  float weights[32], mins[8], scales[8];
  float max_scale = 0.0f, max_min = 0.0f;
  for (int g = 0; g < 8; ++g) {
    const float* xg = x + 32 * g;
    float sum_x2 = 0.0f;
    for (int l = 0; l < 32; ++l) sum_x2 += xg[l] * xg[l];
    const float av_x = std::sqrt(sum_x2 / 32.0f);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(xg[l]);
    scales[g] =
        make_qkx2_quants(32, nmax, xg, weights, L + 32 * g, &mins[g], rmin, 0.1f, nstep, false);
    max_scale = std::max(max_scale, scales[g]);
    max_min = std::max(max_min, mins[g]);
  }
  const float inv_scale = max_scale > 0.0f ? 63.0f / max_scale : 0.0f;
  const float inv_min = max_min > 0.0f ? 63.0f / max_min : 0.0f;
  uint8_t* s = b + 4;
  for (int g = 0; g < 8; ++g) {
    // ggml narrows to uint8 first, then caps at 63.
    const uint8_t ls =
        std::min<uint8_t>(63, static_cast<uint8_t>(nearest_int(inv_scale * scales[g])));
    const uint8_t lm = std::min<uint8_t>(63, static_cast<uint8_t>(nearest_int(inv_min * mins[g])));
    if (g < 4) {
      s[g] = ls;
      s[g + 4] = lm;
    } else {
      s[g + 4] = static_cast<uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
      s[g - 4] = static_cast<uint8_t>(s[g - 4] | ((ls >> 4) << 6));
      s[g] = static_cast<uint8_t>(s[g] | ((lm >> 4) << 6));
    }
  }
  store_half(b, max_scale / 63.0f);
  store_half(b + 2, max_min / 63.0f);
  const float d = load_half(b), dmin = load_half(b + 2);
  for (int g = 0; g < 8; ++g) {
    int sc, m;
    k4_scale_min(s, g, &sc, &m);
    const float dg = d * static_cast<float>(sc);
    if (dg == 0.0f) continue;
    const float mg = dmin * static_cast<float>(m);
    for (int i = 0; i < 32; ++i) {
      L[32 * g + i] =
          static_cast<uint8_t>(clamp_int(nearest_int((x[32 * g + i] + mg) / dg), 0, nmax));
    }
  }
}
// Low nibbles: byte (v / 64) * 32 + v % 32, low half for even groups, high half for odd ones.
inline int k4_nibble(const uint8_t* qs, int v) {
  const uint8_t byte = qs[(v / 64) * 32 + v % 32];
  return (v / 32) % 2 == 0 ? (byte & 0xF) : (byte >> 4);
}
inline void dequantize_k4_common(const uint8_t* b, const uint8_t* qh, const uint8_t* qs,
                                 double* y) {
  const double d = load_half(b), dmin = load_half(b + 2);
  for (int v = 0; v < 256; ++v) {
    int sc, m;
    k4_scale_min(b + 4, v / 32, &sc, &m);
    const int fifth = qh != nullptr ? ((qh[v % 32] >> (v / 32)) & 1) << 4 : 0;
    y[v] = d * sc * (k4_nibble(qs, v) | fifth) - dmin * m;
  }
}

// ---- q4_K: half d, dmin; u8 scales[12]; u8 qs[128] (offsets 0, 2, 4, 16) ------------------------
inline void quantize_q4_K(const float* x, uint8_t* b) {
  uint8_t L[256];
  quantize_k4_common(x, b, 15, -1.0f, 20, L);
  uint8_t* q = b + 16;
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l)
      q[32 * c + l] = static_cast<uint8_t>(L[64 * c + l] | (L[64 * c + 32 + l] << 4));
  }
}
inline void dequantize_q4_K(const uint8_t* b, double* y) {
  dequantize_k4_common(b, nullptr, b + 16, y);
}

// ---- q5_K: half d, dmin; u8 scales[12]; u8 qh[32]; u8 qs[128] (offsets 0, 2, 4, 16, 48) --------
// Value v's fifth bit is bit v / 32 of qh[v % 32].
inline void quantize_q5_K(const float* x, uint8_t* b) {
  uint8_t L[256];
  quantize_k4_common(x, b, 31, -0.5f, 15, L);
  uint8_t* qh = b + 16;
  uint8_t* q = b + 48;
  std::memset(qh, 0, 32);
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l) {
      int lo = L[64 * c + l], hi = L[64 * c + 32 + l];
      if (lo > 15) {
        lo -= 16;
        qh[l] = static_cast<uint8_t>(qh[l] | (1 << (2 * c)));
      }
      if (hi > 15) {
        hi -= 16;
        qh[l] = static_cast<uint8_t>(qh[l] | (2 << (2 * c)));
      }
      q[32 * c + l] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}
inline void dequantize_q5_K(const uint8_t* b, double* y) {
  dequantize_k4_common(b, b + 16, b + 48, y);
}

// ---- q6_K: u8 ql[128]; u8 qh[64]; i8 scales[16]; half d (offsets 0, 128, 192, 208) --------------
// Value v = 128 n + 32 r + l: low nibble in ql[64 n + 32 (r % 2) + l] (high half when r >= 2),
// two high bits at bit 2 r of qh[32 n + l]; q = that 6-bit number - 32.
inline int q6_value(const uint8_t* b, int v) {
  const int n = v / 128, r = (v / 32) % 4, l = v % 32;
  const uint8_t lo_byte = b[64 * n + 32 * (r % 2) + l];
  const int lo = r < 2 ? (lo_byte & 0xF) : (lo_byte >> 4);
  const int hi = (b[128 + 32 * n + l] >> (2 * r)) & 3;
  return (lo | (hi << 4)) - 32;
}
inline void quantize_q6_K(const float* x, uint8_t* b) {
  int8_t L[256];
  float scales[16];
  const float max_scale = fit_groups16(x, L, scales, make_qx_quants, 32);
  if (std::fabs(max_scale) < kGroupMaxEps) {
    std::memset(b, 0, 210);
    return;
  }
  const float iscale = -128.0f / max_scale;
  store_half(b + 208, 1.0f / iscale);
  int8_t* sc = reinterpret_cast<int8_t*>(b + 192);
  for (int g = 0; g < 16; ++g)
    sc[g] = static_cast<int8_t>(std::min(127, nearest_int(iscale * scales[g])));
  const float d = load_half(b + 208);
  for (int g = 0; g < 16; ++g) {
    const float dg = d * static_cast<float>(sc[g]);
    if (dg == 0.0f) continue;
    for (int i = 0; i < 16; ++i) {
      L[16 * g + i] = static_cast<int8_t>(clamp_int(nearest_int(x[16 * g + i] / dg), -32, 31) + 32);
    }
  }
  for (int n = 0; n < 2; ++n) {
    const int8_t* Ln = L + 128 * n;
    uint8_t* ql = b + 64 * n;
    uint8_t* qh = b + 128 + 32 * n;
    for (int l = 0; l < 32; ++l) {
      ql[l] = static_cast<uint8_t>((Ln[l] & 0xF) | ((Ln[l + 64] & 0xF) << 4));
      ql[l + 32] = static_cast<uint8_t>((Ln[l + 32] & 0xF) | ((Ln[l + 96] & 0xF) << 4));
      qh[l] = static_cast<uint8_t>((Ln[l] >> 4) | ((Ln[l + 32] >> 4) << 2) |
                                   ((Ln[l + 64] >> 4) << 4) | ((Ln[l + 96] >> 4) << 6));
    }
  }
}
inline void dequantize_q6_K(const uint8_t* b, double* y) {
  const double d = load_half(b + 208);
  for (int v = 0; v < 256; ++v) y[v] = d * static_cast<int8_t>(b[192 + v / 16]) * q6_value(b, v);
}

// ---- q8_K: float d; i8 qs[256]; i16 bsums[16] (offsets 0, 4, 260) -------------------------------
inline void quantize_q8_K(const float* x, uint8_t* b) {
  float amax, max;
  extreme(x, 256, &amax, &max);
  std::memset(b, 0, 292);
  if (amax == 0.0f) return;
  // ggml maps the extreme value to -127 through a negative scale and caps at +127.
  const float iscale = -127.0f / max;
  for (int v = 0; v < 256; ++v)
    b[4 + v] = static_cast<uint8_t>(std::min(127, nearest_int(iscale * x[v])));
  for (int g = 0; g < 16; ++g) {
    int sum = 0;
    for (int i = 0; i < 16; ++i) sum += static_cast<int8_t>(b[4 + 16 * g + i]);
    store_u16(b + 260 + 2 * g, static_cast<uint16_t>(static_cast<int16_t>(sum)));
  }
  store_f32(b, 1.0f / iscale);
}
inline void dequantize_q8_K(const uint8_t* b, double* y) {
  const double d = load_f32(b);
  for (int v = 0; v < 256; ++v) y[v] = static_cast<int8_t>(b[4 + v]) * d;
}

}  // namespace ref::ggml::detail
