// Unit tests of the GGML reference's q8_1 side (tests/reference/ggml_ref.hpp): candle's
// quantize_q8_1 (padding, zero / all-equal / large blocks, roundf's ties, division rather than a
// reciprocal, the float sum s) and the MMVQ dot product of every weight format against q8_1.
#include "../reference/ggml_ref.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace {

using ref::ggml::QType;
namespace g = ref::ggml;

uint16_t u16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | p[1] << 8);
}
int8_t q_at(const std::vector<uint8_t>& b, size_t block, size_t j) {
  return static_cast<int8_t>(b[block * 36 + 4 + j]);
}

std::vector<float> uniform(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> x(n);
  for (auto& v : x) v = dist(rng);
  return x;
}

// Every block of a quantize_q8_1_rows result against the rule written out directly.
void expect_candle_rule(const std::vector<uint8_t>& b, const float* x, size_t rows, size_t kx,
                        size_t kx_padded) {
  ASSERT_EQ(b.size(), rows * kx_padded / 32 * 36);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t blk = 0; blk < kx_padded / 32; ++blk) {
      const size_t at = r * kx_padded / 32 + blk;
      float v[32], amax = 0.0f, sum = 0.0f;
      for (size_t j = 0; j < 32; ++j) {
        const size_t col = blk * 32 + j;
        v[j] = col < kx ? x[r * kx + col] : 0.0f;
        amax = std::max(amax, std::fabs(v[j]));
        sum += v[j];
      }
      const float d = amax / 127.0f;
      ASSERT_EQ(u16(&b[at * 36]), g::float_to_half(d)) << "row " << r << " block " << blk;
      ASSERT_EQ(u16(&b[at * 36 + 2]), g::float_to_half(sum)) << "row " << r << " block " << blk;
      for (size_t j = 0; j < 32; ++j) {
        const int want = amax == 0.0f ? 0 : static_cast<int>(std::round(v[j] / d));
        ASSERT_EQ(q_at(b, at, j), want) << "row " << r << " block " << blk << " value " << j;
      }
    }
  }
}

TEST(GgmlRefQ8_1Rows, CandleSizesAndPadding) {
  for (size_t k : {1, 31, 32, 33, 255, 512, 4097}) {
    const size_t padded = (k + 511) / 512 * 512;  // candle's k_padded
    for (size_t rows : {1, 3}) {
      const auto x = uniform(rows * k, static_cast<uint32_t>(k + rows));
      std::vector<double> sums;
      const auto b = g::quantize_q8_1_rows(x.data(), rows, k, padded, &sums);
      SCOPED_TRACE("k " + std::to_string(k) + " rows " + std::to_string(rows));
      expect_candle_rule(b, x.data(), rows, k, padded);
      ASSERT_EQ(sums.size(), rows * padded / 32);
      for (size_t r = 0; r < rows; ++r) {
        for (size_t blk = 0; blk < padded / 32; ++blk) {
          double exact = 0.0;
          for (size_t c = blk * 32; c < std::min(k, blk * 32 + 32); ++c) exact += x[r * k + c];
          EXPECT_EQ(sums[r * padded / 32 + blk], exact);
          if (blk * 32 >= k) {  // a whole padding block: every byte zero
            for (size_t i = 0; i < 36; ++i) ASSERT_EQ(b[(r * padded / 32 + blk) * 36 + i], 0);
          }
        }
      }
    }
  }
}

TEST(GgmlRefQ8_1Rows, RowSizeHelpers) {
  EXPECT_EQ(g::q8_1_padded(1), 512u);
  EXPECT_EQ(g::q8_1_padded(512), 512u);
  EXPECT_EQ(g::q8_1_padded(4097), 4608u);
  EXPECT_EQ(g::q8_1_padded(14336), 14336u);
  EXPECT_EQ(g::row_bytes(QType::q4_0, 4096), 128u * 18u);
  EXPECT_EQ(g::row_bytes(QType::q6_K, 14336), 56u * 210u);
  EXPECT_EQ(g::row_bytes(QType::q8_1, g::q8_1_padded(33)), 16u * 36u);
  EXPECT_THROW(g::row_bytes(QType::q4_K, 4000), std::invalid_argument);
}

TEST(GgmlRefQ8_1Rows, PartialBlockUsesOnlyTheRealValues) {
  std::vector<float> x(33, 0.25f);
  x[32] = -0.75f;  // the only real value of block 1
  const auto b = g::quantize_q8_1_rows(x.data(), 1, 33, 64);
  EXPECT_EQ(u16(&b[36]), g::float_to_half(0.75f / 127.0f));
  EXPECT_EQ(u16(&b[38]), g::float_to_half(-0.75f));
  EXPECT_EQ(q_at(b, 1, 0), -127);
  for (size_t j = 1; j < 32; ++j) EXPECT_EQ(q_at(b, 1, j), 0) << j;
}

TEST(GgmlRefQ8_1Rows, ZeroAndAllEqualBlocks) {
  std::vector<float> x(32 * 6, 0.0f);
  const float c[5] = {0.3f, -1.7f, 1e-3f, 1000.0f, -6e-5f};
  for (int i = 0; i < 5; ++i) std::fill(x.begin() + 32 * (i + 1), x.begin() + 32 * (i + 2), c[i]);
  const auto b = g::quantize_q8_1_rows(x.data(), 1, x.size(), x.size());
  for (size_t i = 0; i < 36; ++i) EXPECT_EQ(b[i], 0) << i;  // d = 0, s = 0, q = 0
  for (int i = 0; i < 5; ++i) {
    const size_t blk = i + 1;
    float sum = 0.0f;
    for (int j = 0; j < 32; ++j) sum += c[i];
    EXPECT_EQ(u16(&b[blk * 36]), g::float_to_half(std::fabs(c[i]) / 127.0f)) << c[i];
    EXPECT_EQ(u16(&b[blk * 36 + 2]), g::float_to_half(sum)) << c[i];
    for (size_t j = 0; j < 32; ++j) EXPECT_EQ(q_at(b, blk, j), c[i] > 0 ? 127 : -127) << c[i];
  }
}

TEST(GgmlRefQ8_1Rows, RoundsHalfAwayFromZero) {
  // amax 127 gives d = 1 exactly, so x.5 inputs are exact ties of roundf.
  std::vector<float> x(32, 0.0f);
  const float in[8] = {127.0f, 2.5f, -2.5f, 0.5f, -0.5f, 1.5f, -1.5f, -126.5f};
  const int want[8] = {127, 3, -3, 1, -1, 2, -2, -127};
  std::copy(in, in + 8, x.begin());
  const auto b = g::quantize_q8_1_rows(x.data(), 1, 32, 32);
  EXPECT_EQ(u16(b.data()), 0x3C00);
  for (int j = 0; j < 8; ++j) EXPECT_EQ(q_at(b, 0, j), want[j]) << in[j];
}

TEST(GgmlRefQ8_1Rows, DividesByDRatherThanMultiplyingByItsReciprocal) {
  // Find inputs where roundf(x / d) and roundf(x * (1 / d)) differ; candle's kernel divides.
  int found = 0;
  for (float amax : {1.0f, 0.37f, 3.3f, 100.1f, 7e-3f}) {
    const float d = amax / 127.0f, inv = 1.0f / d;
    for (int k = 0; k < 127 && found < 40; ++k) {
      float x = (static_cast<float>(k) + 0.5f) * d;
      for (int step = 0; step < 8; ++step, x = std::nextafter(x, 0.0f)) {
        if (std::round(x / d) == std::round(x * inv)) continue;
        std::vector<float> blk(32, 0.0f);
        blk[0] = amax;
        blk[1] = x;
        blk[2] = -x;
        const auto b = g::quantize_q8_1_rows(blk.data(), 1, 32, 32);
        EXPECT_EQ(q_at(b, 0, 1), std::round(x / d)) << amax << " " << x;
        EXPECT_EQ(q_at(b, 0, 2), std::round(-x / d)) << amax << " " << x;
        ++found;
      }
    }
  }
  EXPECT_GT(found, 0);  // the case exists, so the test tells the two rules apart
}

TEST(GgmlRefQ8_1Rows, SumIsTheFloatSumOfTheInputsAndOverflowsToInfinity) {
  const auto x = uniform(32 * 64, 5, -3.0f, 4.0f);
  std::vector<double> sums;
  const auto b = g::quantize_q8_1_rows(x.data(), 1, x.size(), x.size(), &sums);
  for (size_t blk = 0; blk < 64; ++blk) {
    // Within one half ulp-step of the exact sum (plus the float sum's own rounding).
    const double s = g::half_to_float(u16(&b[blk * 36 + 2]));
    const double ulp = std::ldexp(1.0, std::ilogb(std::max(std::fabs(sums[blk]), 6.1e-5)) - 10);
    EXPECT_LE(std::fabs(s - sums[blk]), ulp) << blk;
  }
  // 32 * 2047 = 65504 is the largest half; 32 * 2048 = 65536 rounds to infinity.
  std::vector<float> big(64, 2047.0f);
  std::fill(big.begin() + 32, big.end(), -2048.0f);
  const auto c = g::quantize_q8_1_rows(big.data(), 1, 64, 64);
  EXPECT_EQ(u16(&c[2]), 0x7BFF);
  EXPECT_EQ(u16(&c[38]), 0xFC00);
  EXPECT_EQ(q_at(c, 0, 5), 127);
  EXPECT_EQ(q_at(c, 1, 5), -127);
}

// Large jobs are split over threads: the result must equal block-by-block calls.
TEST(GgmlRefQ8_1Rows, ThreadedRowsEqualSingleRows) {
  const size_t rows = 40, k = 4000, padded = 4096;  // 5120 blocks: several threads' worth
  const auto x = uniform(rows * k, 77);
  const auto all = g::quantize_q8_1_rows(x.data(), rows, k, padded);
  for (size_t r = 0; r < rows; ++r) {
    const auto one = g::quantize_q8_1_rows(x.data() + r * k, 1, k, padded);
    ASSERT_TRUE(std::equal(one.begin(), one.end(), all.begin() + r * one.size())) << r;
  }
}

TEST(GgmlRefQ8_1Rows, BadArgumentsThrow) {
  std::vector<float> x(64, 1.0f);
  EXPECT_THROW(g::quantize_q8_1_rows(x.data(), 1, 33, 48), std::invalid_argument);
  EXPECT_THROW(g::quantize_q8_1_rows(x.data(), 1, 64, 32), std::invalid_argument);
  x[3] = NAN;
  EXPECT_THROW(g::quantize_q8_1_rows(x.data(), 1, 64, 64), std::invalid_argument);
  EXPECT_TRUE(g::quantize_q8_1_rows(x.data(), 0, 64, 64).empty());
}

// ---- dot_q8_1
// ------------------------------------------------------------------------------------

TEST(GgmlRefDot, HandComputedQ4_0Block) {
  std::vector<uint8_t> w(18), a(36);
  w[0] = 0x00;  // d = 0.5 (0x3800)
  w[1] = 0x38;
  for (int j = 0; j < 16; ++j) w[2 + j] = static_cast<uint8_t>(j | j << 4);  // q_j = j % 16
  a[0] = 0x00;                                                               // d_a = 0.25 (0x3400)
  a[1] = 0x34;
  a[2] = 0x00;  // s_a = 3 (0x4200)
  a[3] = 0x42;
  for (int j = 0; j < 32; ++j) a[4 + j] = static_cast<uint8_t>(j - 16);
  // Σ q qa = Σ_{j<16} j (j - 16) + Σ_{i<16} i^2 = -680 + 1240 = 560;
  // d_w (d_a Σ q qa - 8 s_a) = 0.5 (0.25 * 560 - 24) = 58.
  EXPECT_EQ(g::dot_q8_1(QType::q4_0, w.data(), a.data(), 32), 58.0);
}

bool uses_sum_field(QType t) {
  return t == QType::q4_0 || t == QType::q4_1 || t == QType::q5_0 || t == QType::q5_1;
}

// dot_q8_1 against Σ dequantize(w) * (d_a qa) in double. For q8_0 and the K-quants that is the
// same sum of exact integer products times the same scales, so only double rounding separates
// them (tolerance 1e-12 of Σ|terms|). q4_0 .. q5_1 take their offset term from the stored float
// sum s_a instead of d_a Σ qa: the test adds offset * (s_a - d_a Σ qa) per block, from the fields.
void expect_dot_identity(QType t, const std::vector<uint8_t>& w, const std::vector<uint8_t>& a,
                         size_t k) {
  const auto wd = g::dequantize(t, w.data(), k);
  double sum = 0.0, mag = 0.0;
  for (size_t i = 0; i < k; ++i) {
    const double av = static_cast<int8_t>(a[(i / 32) * 36 + 4 + i % 32]) *
                      static_cast<double>(g::half_to_float(u16(&a[(i / 32) * 36])));
    sum += wd[i] * av;
    mag += std::fabs(wd[i] * av);
  }
  if (uses_sum_field(t)) {
    const size_t bytes = g::info(t).block_bytes;
    for (size_t blk = 0; blk < k / 32; ++blk) {
      const uint8_t* ab = &a[blk * 36];
      double qsum = 0.0;
      for (int j = 0; j < 32; ++j) qsum += static_cast<int8_t>(ab[4 + j]);
      const double gap = g::half_to_float(u16(ab + 2)) - g::half_to_float(u16(ab)) * qsum;
      const double dw = g::half_to_float(u16(&w[blk * bytes]));
      const double mw = g::half_to_float(u16(&w[blk * bytes + 2]));
      const double offset = t == QType::q4_0 ? -8 * dw : (t == QType::q5_0 ? -16 * dw : mw);
      sum += offset * gap;
      mag += std::fabs(offset * gap);
    }
  }
  const double dot = g::dot_q8_1(t, w.data(), a.data(), k);
  EXPECT_NEAR(dot, sum, 1e-12 * mag + 1e-300) << g::info(t).name << " k " << k;
}

const QType kWeightTypes[10] = {QType::q4_0, QType::q4_1, QType::q5_0, QType::q5_1, QType::q8_0,
                                QType::q2_K, QType::q3_K, QType::q4_K, QType::q5_K, QType::q6_K};

TEST(GgmlRefDot, MatchesDequantizedProductsForEveryFormatAndSize) {
  for (QType t : kWeightTypes) {
    const size_t bv = g::info(t).block_values;
    for (size_t k : {bv, 4 * bv, size_t{4096}, size_t{14336}}) {
      const auto xw = uniform(k, 17 + static_cast<uint32_t>(k));
      const auto xa = uniform(k, 91 + static_cast<uint32_t>(k), -2.0f, 3.0f);
      const auto w = g::quantize(t, xw.data(), k);
      const auto a = g::quantize_q8_1_rows(xa.data(), 1, k, (k + 511) / 512 * 512);
      expect_dot_identity(t, w, a, k);
      // And the whole pipeline stays near the unquantized dot product (candle's 0.02 bound on
      // the error relative to Σ|w x|, loosened for 2 and 3 bits).
      double exact = 0.0, mag = 0.0;
      for (size_t i = 0; i < k; ++i) {
        exact += static_cast<double>(xw[i]) * xa[i];
        mag += std::fabs(static_cast<double>(xw[i]) * xa[i]);
      }
      const double bound = t == QType::q2_K ? 0.06 : (t == QType::q3_K ? 0.04 : 0.02);
      EXPECT_LE(std::fabs(g::dot_q8_1(t, w.data(), a.data(), k) - exact), bound * mag)
          << g::info(t).name << " k " << k;
    }
  }
}

TEST(GgmlRefDot, ExtremeScalesAndRawBlocks) {
  // Random block bytes with the scale fields forced to the largest half, a subnormal and zero.
  std::mt19937 rng(23);
  const float scales[3] = {65504.0f, 6e-8f, 0.0f};
  for (QType t : kWeightTypes) {
    const size_t bytes = g::info(t).block_bytes, k = 2 * g::info(t).block_values;
    for (float sc : scales) {
      std::vector<uint8_t> w(2 * bytes);
      for (auto& v : w) v = static_cast<uint8_t>(rng());
      const size_t d_at = t == QType::q2_K   ? 80
                          : t == QType::q3_K ? 108
                          : t == QType::q6_K ? 208
                                             : 0;
      // The min field (q4_1, q5_1, q2_K, q4_K, q5_K) right after d gets a finite value too.
      const bool has_min = t == QType::q4_1 || t == QType::q5_1 || t == QType::q2_K ||
                           t == QType::q4_K || t == QType::q5_K;
      const uint16_t h = g::float_to_half(sc), m = g::float_to_half(-0.75f);
      for (size_t blk = 0; blk < 2; ++blk) {
        uint8_t* f = &w[blk * bytes + d_at];
        f[0] = static_cast<uint8_t>(h & 0xFF);
        f[1] = static_cast<uint8_t>(h >> 8);
        if (has_min) {
          f[2] = static_cast<uint8_t>(m & 0xFF);
          f[3] = static_cast<uint8_t>(m >> 8);
        }
      }
      const auto xa = uniform(k, 3, -5.0f, 5.0f);
      const auto a = g::quantize_q8_1_rows(xa.data(), 1, k, k);
      expect_dot_identity(t, w, a, k);
    }
  }
}

// The MMQ form: the same as MMVQ except that q4_K / q5_K take the min term from s_a, so
// dot_mmq - dot_mmvq = -dmin Σ_g m_g (s_a - d_a Σ qa), with m_g decoded here from the 12 bytes.
TEST(GgmlRefDot, MmqFormDiffersOnlyInTheKQuantMinTerm) {
  const size_t k = 4096;
  const auto xw = uniform(k, 41);
  const auto xa = uniform(k, 42, -1.0f, 2.0f);
  const auto a = g::quantize_q8_1_rows(xa.data(), 1, k, k);
  for (QType t : kWeightTypes) {
    const auto w = g::quantize(t, xw.data(), k);
    const double mmvq = g::dot_q8_1(t, w.data(), a.data(), k);
    const double mmq = g::dot_q8_1_mmq(t, w.data(), a.data(), k);
    if (t != QType::q4_K && t != QType::q5_K) {
      EXPECT_EQ(mmq, mmvq) << g::info(t).name;
      continue;
    }
    const size_t bytes = g::info(t).block_bytes;
    double want = 0.0, mag = std::fabs(mmvq);
    for (size_t blk = 0; blk < k / 256; ++blk) {
      const uint8_t* wb = &w[blk * bytes];
      const double dmin = g::half_to_float(u16(wb + 2));
      const uint8_t* s = wb + 4;
      for (int grp = 0; grp < 8; ++grp) {
        const int m = grp < 4 ? (s[grp + 4] & 63) : ((s[grp + 4] >> 4) | ((s[grp] >> 6) << 4));
        const uint8_t* ab = &a[(blk * 8 + grp) * 36];
        double qsum = 0.0;
        for (int j = 0; j < 32; ++j) qsum += static_cast<int8_t>(ab[4 + j]);
        const double gap = g::half_to_float(u16(ab + 2)) - g::half_to_float(u16(ab)) * qsum;
        want -= dmin * m * gap;
        mag += std::fabs(dmin * m * gap);
      }
    }
    EXPECT_NE(mmq, mmvq) << g::info(t).name;  // the forms are distinguishable on this data
    EXPECT_NEAR(mmq - mmvq, want, 1e-12 * mag) << g::info(t).name;
  }
  std::vector<uint8_t> w8(292);
  EXPECT_THROW(g::dot_q8_1_mmq(QType::q8_K, w8.data(), a.data(), 256), std::invalid_argument);
}

TEST(GgmlRefDot, ZeroActivationsGiveZero) {
  for (QType t : kWeightTypes) {
    const size_t k = g::info(t).block_values * 2;
    const auto w = g::quantize(t, uniform(k, 1).data(), k);
    const std::vector<float> zero(k, 0.0f);
    const auto a = g::quantize_q8_1_rows(zero.data(), 1, k, k);
    EXPECT_EQ(g::dot_q8_1(t, w.data(), a.data(), k), 0.0) << g::info(t).name;
  }
}

TEST(GgmlRefDot, BadArgumentsThrow) {
  std::vector<uint8_t> w(292 * 2), a(36 * 16);
  EXPECT_THROW(g::dot_q8_1(QType::q8_1, w.data(), a.data(), 32), std::invalid_argument);
  EXPECT_THROW(g::dot_q8_1(QType::q8_K, w.data(), a.data(), 256), std::invalid_argument);
  EXPECT_THROW(g::dot_q8_1(QType::q4_K, w.data(), a.data(), 128), std::invalid_argument);
  EXPECT_THROW(g::dot_q8_1(QType::q4_0, w.data(), a.data(), 48), std::invalid_argument);
  EXPECT_EQ(g::dot_q8_1(QType::q4_0, w.data(), a.data(), 0), 0.0);
}

}  // namespace
