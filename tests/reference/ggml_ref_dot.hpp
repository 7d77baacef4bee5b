// GGML block formats, CPU reference: the dot product of one weight row with one q8_1 activation
// row, as candle's MMVQ kernels (vec_dot_*_q8_1) define it. Every integer sum is exact; the
// scales are the stored halves (q8_1: d_a, s_a per 32 values) and the products and the sum over
// blocks are taken in double, so an implementation differs from this only by its float rounding.
//
// Per weight block (w = weight fields, a = the q8_1 block(s) under it, Σ over the block's values):
//   q4_0  d_w (d_a Σ q qa - 8 s_a)          q in 0..15: the -8 offset goes through s_a
//   q4_1  d_w d_a Σ q qa + m_w s_a          q in 0..15
//   q5_0  d_w (d_a Σ q qa - 16 s_a)         q in 0..31
//   q5_1  d_w d_a Σ q qa + m_w s_a          q in 0..31
//   q8_0  d_w d_a Σ q qa
//   q2_K  d Σ_g d_a sc_g Σ_g q qa - dmin Σ_g d_a m_g Σ_g qa       16 groups g of 16
//   q3_K  d Σ_g d_a sc_g Σ_g q qa            q = 2 bits - 4 (hmask clear), sc_g in -32..31
//   q4_K  d Σ_g d_a sc_g Σ_g q qa - dmin Σ_g d_a m_g Σ_g qa       8 groups of 32
//   q5_K  as q4_K with 5-bit q
//   q6_K  d Σ_g d_a sc_g Σ_g q qa            q in -32..31, 16 groups of 16
// d_a is that of the q8_1 block holding the group (two 16-groups share one). For q8_0 and the
// K-quants this equals Σ dequantize(w) * (d_a qa) exactly; q4_0 .. q5_1 use the stored float sum
// s_a in place of d_a Σ qa, so they differ from that by offset * (s_a - d_a Σ qa) per block.
// The MMQ kernels (mul_mat_*) compute the same except for q4_K and q5_K, whose min term there is
// dmin Σ_g m_g s_a (each 32-group is one q8_1 block): Form::mmq selects that.
#pragma once

#include "ggml_ref_kquants.hpp"
#include "ggml_ref_legacy.hpp"

namespace ref::ggml::detail {

enum class Form { mmvq, mmq };

struct Q81 {  // one q8_1 activation block, decoded
  double d, s;
  const int8_t* q;
};
inline Q81 q8_1_block(const uint8_t* a) {
  return Q81{load_half(a), load_half(a + 2), reinterpret_cast<const int8_t*>(a + 4)};
}
inline int64_t sum_q(const int8_t* qa, int n) {
  int64_t s = 0;
  for (int i = 0; i < n; ++i) s += qa[i];
  return s;
}

// ---- 32-value formats: one weight block per q8_1 block ---------------------------------------
inline double dot_q4_0(const uint8_t* w, const uint8_t* a) {
  const Q81 x = q8_1_block(a);
  int64_t sumi = 0;
  for (int j = 0; j < 32; ++j) sumi += nibble(w + 2, j) * x.q[j];
  return static_cast<double>(load_half(w)) * (x.d * static_cast<double>(sumi) - 8.0 * x.s);
}
inline double dot_q4_1(const uint8_t* w, const uint8_t* a) {
  const Q81 x = q8_1_block(a);
  int64_t sumi = 0;
  for (int j = 0; j < 32; ++j) sumi += nibble(w + 4, j) * x.q[j];
  return static_cast<double>(load_half(w)) * x.d * static_cast<double>(sumi) +
         static_cast<double>(load_half(w + 2)) * x.s;
}
inline double dot_q5_0(const uint8_t* w, const uint8_t* a) {
  const Q81 x = q8_1_block(a);
  int64_t sumi = 0;
  for (int j = 0; j < 32; ++j) sumi += q5_value(w + 2, w + 6, j) * x.q[j];
  return static_cast<double>(load_half(w)) * (x.d * static_cast<double>(sumi) - 16.0 * x.s);
}
inline double dot_q5_1(const uint8_t* w, const uint8_t* a) {
  const Q81 x = q8_1_block(a);
  int64_t sumi = 0;
  for (int j = 0; j < 32; ++j) sumi += q5_value(w + 4, w + 8, j) * x.q[j];
  return static_cast<double>(load_half(w)) * x.d * static_cast<double>(sumi) +
         static_cast<double>(load_half(w + 2)) * x.s;
}
inline double dot_q8_0(const uint8_t* w, const uint8_t* a) {
  const Q81 x = q8_1_block(a);
  int64_t sumi = 0;
  for (int j = 0; j < 32; ++j) sumi += static_cast<int8_t>(w[2 + j]) * x.q[j];
  return static_cast<double>(load_half(w)) * x.d * static_cast<double>(sumi);
}

// ---- K-quants: one super-block over eight q8_1 blocks (a points at the first) ------------------
// q2_K, q4_K, q5_K: d Σ_g d_a sc_g Σ q qa - dmin Σ_g d_a m_g Σ qa, over `groups` groups of
// 256 / groups values; level(v) is value v's unsigned level, scale_min(g) its scale and min.
template <typename Level, typename ScaleMin>
double dot_affine_k(double d, double dmin, int groups, const uint8_t* a, Level level,
                    ScaleMin scale_min, Form form = Form::mmvq) {
  const int len = 256 / groups;
  double sum_d = 0.0, sum_m = 0.0;
  for (int g = 0; g < groups; ++g) {
    const int v0 = g * len;
    const Q81 x = q8_1_block(a + 36 * (v0 / 32));
    const int8_t* qa = x.q + v0 % 32;
    int64_t sumi = 0;
    for (int i = 0; i < len; ++i) sumi += level(v0 + i) * qa[i];
    int sc, m;
    scale_min(g, &sc, &m);
    sum_d += x.d * static_cast<double>(sc * sumi);
    sum_m += form == Form::mmq ? x.s * m : x.d * static_cast<double>(m * sum_q(qa, len));
  }
  return d * sum_d - dmin * sum_m;
}
inline double dot_q2_K(const uint8_t* w, const uint8_t* a) {
  return dot_affine_k(
      load_half(w + 80), load_half(w + 82), 16, a, [&](int v) { return two_bits(w + 16, v); },
      [&](int g, int* sc, int* m) {
        *sc = w[g] & 0xF;
        *m = w[g] >> 4;
      });
}
inline double dot_q4_K_form(const uint8_t* w, const uint8_t* a, Form form) {
  return dot_affine_k(
      load_half(w), load_half(w + 2), 8, a, [&](int v) { return k4_nibble(w + 16, v); },
      [&](int g, int* sc, int* m) { k4_scale_min(w + 4, g, sc, m); }, form);
}
inline double dot_q5_K_form(const uint8_t* w, const uint8_t* a, Form form) {
  return dot_affine_k(
      load_half(w), load_half(w + 2), 8, a,
      [&](int v) { return k4_nibble(w + 48, v) | (((w[16 + v % 32] >> (v / 32)) & 1) << 4); },
      [&](int g, int* sc, int* m) { k4_scale_min(w + 4, g, sc, m); }, form);
}
inline double dot_q4_K(const uint8_t* w, const uint8_t* a) {
  return dot_q4_K_form(w, a, Form::mmvq);
}
inline double dot_q5_K(const uint8_t* w, const uint8_t* a) {
  return dot_q5_K_form(w, a, Form::mmvq);
}
inline double dot_q4_K_mmq(const uint8_t* w, const uint8_t* a) {
  return dot_q4_K_form(w, a, Form::mmq);
}
inline double dot_q5_K_mmq(const uint8_t* w, const uint8_t* a) {
  return dot_q5_K_form(w, a, Form::mmq);
}

// q3_K, q6_K: d Σ_g d_a sc_g Σ q qa over 16 groups of 16 signed levels.
template <typename Level, typename Scale>
double dot_symmetric_k(double d, const uint8_t* a, Level level, Scale scale) {
  double sum = 0.0;
  for (int g = 0; g < 16; ++g) {
    const int v0 = g * 16;
    const Q81 x = q8_1_block(a + 36 * (v0 / 32));
    const int8_t* qa = x.q + v0 % 32;
    int64_t sumi = 0;
    for (int i = 0; i < 16; ++i) sumi += level(v0 + i) * qa[i];
    sum += x.d * static_cast<double>(scale(g) * sumi);
  }
  return d * sum;
}
inline double dot_q3_K(const uint8_t* w, const uint8_t* a) {
  return dot_symmetric_k(
      load_half(w + 108), a, [&](int v) { return q3_value(w, v); },
      [&](int g) { return q3_scale(w + 96, g); });
}
inline double dot_q6_K(const uint8_t* w, const uint8_t* a) {
  return dot_symmetric_k(
      load_half(w + 208), a, [&](int v) { return q6_value(w, v); },
      [&](int g) { return static_cast<int>(static_cast<int8_t>(w[192 + g])); });
}

}  // namespace ref::ggml::detail
