// What the QUANTIZED matrix tests (MMVQ, DMMV, MMQ, MoE) share: the formats they cover, the guard
// after every output, and the float rounding bound of a weight-row . q8_1-column product.
#pragma once

#include "reference/ggml_ref.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace quantized_dot {

namespace gg = ref::ggml;

constexpr size_t kGuard = 16;             // poisoned floats after every output
constexpr double kEps = 1.0 / (1 << 24);  // half an ulp of 1.0f

// The formats candle's matrix kernels take (q8_1 and q8_K are activation formats only).
constexpr gg::QType kFormats[] = {
    gg::QType::q4_0, gg::QType::q4_1, gg::QType::q5_0, gg::QType::q5_1, gg::QType::q8_0,
    gg::QType::q2_K, gg::QType::q3_K, gg::QType::q4_K, gg::QType::q5_K, gg::QType::q6_K};

inline double half_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return gg::half_to_float(h);
}

// sum over the q8_1 blocks of one weight block's span: d_a * sum |qa| + |s_a|, the magnitude the
// activations contribute to what a product's float scaling rounds.
inline double q8_1_magnitude(const uint8_t* a, size_t values) {
  double act = 0.0;
  for (size_t j = 0; j < values / 32; ++j) {
    const uint8_t* q = a + 36 * j;
    double sq = 0.0;
    for (int i = 0; i < 32; ++i) sq += std::abs(static_cast<int8_t>(q[4 + i]));
    act += std::fabs(half_at(q)) * sq + std::fabs(half_at(q + 2));
  }
  return act;
}

}  // namespace quantized_dot
