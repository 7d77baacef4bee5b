// GGML block formats, CPU reference: the 32-value formats q4_0, q4_1, q5_0, q5_1, q8_0 and q8_1,
// one block at a time. Quantizers follow ggml's quantize_row_*_ref in float arithmetic;
// dequantizers give each value exactly, in double.
#pragma once

#include "ggml_ref_types.hpp"

namespace ref::ggml::detail {

// The value with the largest magnitude, the first one on ties (its sign picks the scale's sign).
inline float signed_absmax(const float* x, size_t n) {
  float amax = 0.0f, max = 0.0f;
  for (size_t j = 0; j < n; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max;
}

inline float absmax(const float* x, size_t n) {
  float amax = 0.0f;
  for (size_t j = 0; j < n; ++j) amax = std::max(amax, std::fabs(x[j]));
  return amax;
}

// q4_1 / q5_1: d = (max - min) / levels and m = min stored as halves; returns min and 1 / d.
inline void affine_scale(const float* x, float levels, uint8_t* b, float* mn, float* id) {
  float lo = x[0], hi = x[0];
  for (size_t j = 1; j < 32; ++j) {
    if (x[j] < lo) lo = x[j];
    if (x[j] > hi) hi = x[j];
  }
  const float d = (hi - lo) / levels;
  *mn = lo;
  *id = d != 0.0f ? 1.0f / d : 0.0f;
  store_half(b, d);
  store_half(b + 2, lo);
}

// Nibble layout of every 32-value 4/5-bit format: byte j holds value j (low) and j + 16 (high).
inline void pack_nibbles(const uint8_t* q, uint8_t* qs) {
  for (int j = 0; j < 16; ++j)
    qs[j] = static_cast<uint8_t>((q[j] & 0xF) | ((q[j + 16] & 0xF) << 4));
}
inline int nibble(const uint8_t* qs, int j) {
  return j < 16 ? (qs[j] & 0xF) : (qs[j - 16] >> 4);
}

// The fifth bit of value j is bit j of the little-endian u32 qh.
inline void pack_high_bits(const uint8_t* q, uint8_t* qh) {
  uint32_t bits = 0;
  for (int j = 0; j < 32; ++j) bits |= static_cast<uint32_t>((q[j] >> 4) & 1) << j;
  store_u32(qh, bits);
}

// ---- q4_0: half d; u8 qs[16]; x = (q - 8) d ---------------------------------------------------
inline void quantize_q4_0(const float* x, uint8_t* b) {
  // d = max / -8 maps the extreme value to q = 0; q = trunc(x / d + 8.5) capped at 15.
  const float d = signed_absmax(x, 32) / -8.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  store_half(b, d);
  uint8_t q[32];
  for (int j = 0; j < 32; ++j) {
    q[j] =
        static_cast<uint8_t>(std::min(15, static_cast<int>(static_cast<int8_t>(x[j] * id + 8.5f))));
  }
  pack_nibbles(q, b + 2);
}
inline void dequantize_q4_0(const uint8_t* b, double* y) {
  const double d = load_half(b);
  for (int j = 0; j < 32; ++j) y[j] = (nibble(b + 2, j) - 8) * d;
}

// ---- q4_1: half d, m; u8 qs[16]; x = q d + m ---------------------------------------------------
inline void quantize_q4_1(const float* x, uint8_t* b) {
  float mn, id;
  affine_scale(x, 15.0f, b, &mn, &id);
  uint8_t q[32];
  for (int j = 0; j < 32; ++j) {
    q[j] = static_cast<uint8_t>(
        std::min(15, static_cast<int>(static_cast<int8_t>((x[j] - mn) * id + 0.5f))));
  }
  pack_nibbles(q, b + 4);
}
inline void dequantize_q4_1(const uint8_t* b, double* y) {
  const double d = load_half(b), m = load_half(b + 2);
  for (int j = 0; j < 32; ++j) y[j] = nibble(b + 4, j) * d + m;
}

// ---- q5_0: half d; u8 qh[4]; u8 qs[16]; x = (q - 16) d -----------------------------------------
inline void quantize_q5_0(const float* x, uint8_t* b) {
  const float d = signed_absmax(x, 32) / -16.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  store_half(b, d);
  uint8_t q[32];
  for (int j = 0; j < 32; ++j) {
    q[j] = static_cast<uint8_t>(
        std::min(31, static_cast<int>(static_cast<int8_t>(x[j] * id + 16.5f))));
  }
  pack_high_bits(q, b + 2);
  pack_nibbles(q, b + 6);
}
inline int q5_value(const uint8_t* qh, const uint8_t* qs, int j) {
  return nibble(qs, j) | static_cast<int>(((load_u32(qh) >> j) & 1u) << 4);
}
inline void dequantize_q5_0(const uint8_t* b, double* y) {
  const double d = load_half(b);
  for (int j = 0; j < 32; ++j) y[j] = (q5_value(b + 2, b + 6, j) - 16) * d;
}

// ---- q5_1: half d, m; u8 qh[4]; u8 qs[16]; x = q d + m -----------------------------------------
inline void quantize_q5_1(const float* x, uint8_t* b) {
  float mn, id;
  affine_scale(x, 31.0f, b, &mn, &id);
  uint8_t q[32];
  // ggml does not cap q5_1 at 31: (x - min) / d never reaches 31.5 for finite input.
  for (int j = 0; j < 32; ++j) q[j] = static_cast<uint8_t>((x[j] - mn) * id + 0.5f);
  pack_high_bits(q, b + 4);
  pack_nibbles(q, b + 8);
}
inline void dequantize_q5_1(const uint8_t* b, double* y) {
  const double d = load_half(b), m = load_half(b + 2);
  for (int j = 0; j < 32; ++j) y[j] = q5_value(b + 4, b + 8, j) * d + m;
}

// ---- q8_0: half d; i8 qs[32]; x = q d ----------------------------------------------------------
// Shared by q8_0 and q8_1 (ggml's rule): d = amax / 127, q = roundf(x * (1 / d)).
inline float quantize_8bit(const float* x, int8_t* q) {
  const float d = absmax(x, 32) / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int j = 0; j < 32; ++j) q[j] = static_cast<int8_t>(std::round(x[j] * id));
  return d;
}
inline void quantize_q8_0(const float* x, uint8_t* b) {
  int8_t q[32];
  store_half(b, quantize_8bit(x, q));
  std::memcpy(b + 2, q, 32);
}
inline void dequantize_q8_0(const uint8_t* b, double* y) {
  const double d = load_half(b);
  for (int j = 0; j < 32; ++j) y[j] = static_cast<int8_t>(b[2 + j]) * d;
}

// ---- q8_1: half d, s; i8 qs[32]; x = q d
// --------------------------------------------------------- ggml's quantize_row_q8_1_ref stores s =
// (sum of q) * d, a float product rounded to half.
inline void quantize_q8_1(const float* x, uint8_t* b) {
  int8_t q[32];
  const float d = quantize_8bit(x, q);
  int sum = 0;
  for (int j = 0; j < 32; ++j) sum += q[j];
  store_half(b, d);
  store_half(b + 2, static_cast<float>(sum) * d);
  std::memcpy(b + 4, q, 32);
}
inline void dequantize_q8_1(const uint8_t* b, double* y) {
  const double d = load_half(b);
  for (int j = 0; j < 32; ++j) y[j] = static_cast<int8_t>(b[4 + j]) * d;
}

// candle's quantize_q8_1 kernel on one block: q = roundf(x / d) (a division, unlike ggml's
// reciprocal), s = the float sum of the inputs themselves. Returns the exact sum.
inline double quantize_q8_1_candle(const float* x, uint8_t* b) {
  const float amax = absmax(x, 32);
  const float d = amax / 127.0f;
  float sum = 0.0f;
  double exact = 0.0;
  for (int j = 0; j < 32; ++j) {
    b[4 + j] = static_cast<uint8_t>(amax == 0.0f ? 0 : static_cast<int8_t>(std::round(x[j] / d)));
    sum += x[j];
    exact += x[j];
  }
  store_half(b, d);
  store_half(b + 2, sum);
  return exact;
}

}  // namespace ref::ggml::detail
