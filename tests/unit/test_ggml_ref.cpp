// Unit tests of the GGML block-format CPU reference (tests/reference/ggml_ref.hpp): the type
// table, the half conversion against the compiler's _Float16, and hand-built blocks of every
// format decoded by walking the bytes in ggml's dequantize_row order. Its quantizers:
// test_ggml_ref_quantize.cpp.
#include "../reference/ggml_ref.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace {

using ref::ggml::QType;
namespace g = ref::ggml;

uint16_t compiler_half(float f) {
  const _Float16 h = static_cast<_Float16>(f);
  uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}

TEST(GgmlRefTypes, InfoTableMatchesTheFormats) {
  const char* names[12] = {"q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q8_1",
                           "q2_K", "q3_K", "q4_K", "q5_K", "q6_K", "q8_K"};
  const size_t bytes[12] = {18, 20, 22, 24, 34, 36, 84, 110, 144, 176, 210, 292};
  for (size_t i = 0; i < 12; ++i) {
    const auto& inf = g::info(g::kAllTypes[i]);
    EXPECT_STREQ(inf.name, names[i]);
    EXPECT_EQ(inf.block_bytes, bytes[i]);
    EXPECT_EQ(inf.block_values, i < 6 ? 32u : 256u);
  }
  EXPECT_THROW(g::info(static_cast<QType>(12)), std::invalid_argument);
}

// ---- half ------------------------------------------------------------------------------------

TEST(GgmlRefHalf, EveryHalfDecodesLikeTheCompilerAndEncodesBack) {
  for (uint32_t h = 0; h < 65536; ++h) {
    _Float16 c;
    const uint16_t bits = static_cast<uint16_t>(h);
    std::memcpy(&c, &bits, 2);
    const float mine = g::half_to_float(bits);
    if (std::isnan(static_cast<float>(c))) {
      EXPECT_TRUE(std::isnan(mine)) << h;
      EXPECT_TRUE(std::isnan(g::half_to_float(g::float_to_half(mine)))) << h;
      continue;
    }
    ASSERT_EQ(mine, static_cast<float>(c)) << h;
    ASSERT_EQ(std::signbit(mine), std::signbit(static_cast<float>(c))) << h;
    ASSERT_EQ(g::float_to_half(mine), bits) << h;
  }
}

TEST(GgmlRefHalf, RoundsToNearestEvenAtTiesSubnormalsAndOverflow) {
  const struct {
    float f;
    uint16_t h;
  } cases[] = {
      {1.0f + std::ldexp(1.0f, -11), 0x3C00},                          // tie, even stays
      {1.0f + 3 * std::ldexp(1.0f, -11), 0x3C02},                      // tie, odd goes up
      {1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20), 0x3C01},  // above the tie
      {65504.0f, 0x7BFF},
      {65519.996f, 0x7BFF},  // just below the tie with 2^16
      {65520.0f, 0x7C00},    // tie with 2^16: even code is inf
      {1e10f, 0x7C00},
      {-1e10f, 0xFC00},
      {std::ldexp(1.0f, -14), 0x0400},                          // smallest normal
      {std::ldexp(1.0f, -14) - std::ldexp(1.0f, -25), 0x0400},  // tie 0x3FF / 0x400: even
      {std::ldexp(1.0f, -24), 0x0001},                          // smallest subnormal
      {std::ldexp(1.0f, -25), 0x0000},                          // tie with 0: even
      {std::ldexp(1.0f, -25) * 1.0000001f, 0x0001},
      {3 * std::ldexp(1.0f, -25), 0x0002},  // tie 1 / 2: even
      {5 * std::ldexp(1.0f, -25), 0x0002},  // tie 2 / 3: even
      {std::ldexp(1.0f, -30), 0x0000},
      {-std::ldexp(1.0f, -30), 0x8000},
      {-0.0f, 0x8000},
      {1e-45f, 0x0000},  // float subnormal
      {-2.5f, 0xC100},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(g::float_to_half(c.f), c.h) << c.f;
    EXPECT_EQ(compiler_half(c.f), c.h) << c.f;  // the table itself agrees with the compiler
  }
  EXPECT_EQ(g::float_to_half(INFINITY), 0x7C00);
  EXPECT_EQ(g::float_to_half(-INFINITY), 0xFC00);
  EXPECT_TRUE(std::isnan(g::half_to_float(g::float_to_half(NAN))));
  EXPECT_EQ(g::float_to_half(NAN) & 0x7C00, 0x7C00);
}

TEST(GgmlRefHalf, RandomFloatsRoundLikeTheCompiler) {
  std::mt19937 rng(7);
  for (int i = 0; i < 2000000; ++i) {
    uint32_t u = rng();
    // Concentrate on the exponents that matter to half: 2^-26 .. 2^17.
    u = (u & 0x807FFFFFu) | ((100u + (u >> 23) % 44u) << 23);
    float f;
    std::memcpy(&f, &u, 4);
    ASSERT_EQ(g::float_to_half(f), compiler_half(f)) << std::hexfloat << f;
  }
}

// ---- hand-built blocks, decoded by walking bytes in ggml's dequantize_row order -------------

std::vector<uint8_t> pattern(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> b(n);
  for (auto& v : b) v = static_cast<uint8_t>(rng());
  return b;
}
void put_half(std::vector<uint8_t>& b, size_t at, float v) {
  const uint16_t h = g::float_to_half(v);
  b[at] = static_cast<uint8_t>(h & 0xFF);
  b[at + 1] = static_cast<uint8_t>(h >> 8);
}
void expect_values(QType t, const std::vector<uint8_t>& b, const std::vector<double>& want) {
  const auto got = g::dequantize(t, b.data(), want.size());
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_EQ(got[i], want[i]) << g::info(t).name << " value " << i;
}

TEST(GgmlRefKnown, Q4_0LiteralBlock) {
  std::vector<uint8_t> b(18);
  put_half(b, 0, 0.5f);
  for (int j = 0; j < 16; ++j) b[2 + j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  std::vector<double> want(32);
  for (int j = 0; j < 16; ++j) {
    want[j] = (j - 8) * 0.5;       // low nibbles: -4 .. 3.5
    want[16 + j] = (7 - j) * 0.5;  // high nibbles: 3.5 .. -4
  }
  expect_values(QType::q4_0, b, want);
}

TEST(GgmlRefKnown, LegacyBlocksWalkedByteByByte) {
  for (int blocks : {1, 3}) {
    // q4_1, q5_0, q5_1 with scales 0.25, mins -1.5, fifth bits from the raw qh word.
    for (QType t : {QType::q4_0, QType::q4_1, QType::q5_0, QType::q5_1, QType::q8_0, QType::q8_1}) {
      const size_t bytes = g::info(t).block_bytes;
      auto b = pattern(bytes * blocks, 11 + blocks);
      std::vector<double> want;
      for (int i = 0; i < blocks; ++i) {
        const size_t o = i * bytes;
        const float d = 0.25f * (i + 1), m = -1.5f + i;
        put_half(b, o, d);
        if (t == QType::q4_1 || t == QType::q5_1 || t == QType::q8_1) put_half(b, o + 2, m);
        std::vector<double> y(32);
        if (t == QType::q8_0 || t == QType::q8_1) {
          const size_t q0 = o + (t == QType::q8_0 ? 2 : 4);
          for (int j = 0; j < 32; ++j)
            y[j] = static_cast<int8_t>(b[q0 + j]) * static_cast<double>(d);
        } else {
          const bool five = t == QType::q5_0 || t == QType::q5_1;
          const bool has_min = t == QType::q4_1 || t == QType::q5_1;
          const size_t qh_at = o + (has_min ? 4 : 2);
          const size_t qs_at = qh_at + (five ? 4 : 0);
          const uint32_t qh = five ? (b[qh_at] | b[qh_at + 1] << 8 | b[qh_at + 2] << 16 |
                                      static_cast<uint32_t>(b[qh_at + 3]) << 24)
                                   : 0;
          for (int j = 0; j < 16; ++j) {
            int x0 = b[qs_at + j] & 0x0F, x1 = b[qs_at + j] >> 4;
            if (five) {
              x0 |= ((qh >> j) << 4) & 0x10;
              x1 |= (qh >> (j + 12)) & 0x10;
            }
            const int off = has_min ? 0 : (five ? 16 : 8);
            y[j] = (x0 - off) * static_cast<double>(d) + (has_min ? m : 0.0);
            y[j + 16] = (x1 - off) * static_cast<double>(d) + (has_min ? m : 0.0);
          }
        }
        want.insert(want.end(), y.begin(), y.end());
      }
      SCOPED_TRACE(g::info(t).name);
      expect_values(t, b, want);
    }
  }
}

// K-quants: expected values follow ggml's dequantize_row_* loops (output pointer walking
// through 128- or 64-value chunks), independent of the reference's per-value index formulas.
std::vector<double> walk_q2_K(const uint8_t* x) {
  std::vector<double> y;
  const double d = g::half_to_float(x[80] | x[81] << 8),
               dmin = g::half_to_float(x[82] | x[83] << 8);
  const uint8_t* q = x + 16;
  int is = 0;
  for (int n = 0; n < 256; n += 128, q += 32) {
    for (int shift = 0; shift < 8; shift += 2) {
      for (int half = 0; half < 2; ++half) {
        const uint8_t sc = x[is++];
        for (int l = 0; l < 16; ++l)
          y.push_back(d * (sc & 0xF) * ((q[l + 16 * half] >> shift) & 3) - dmin * (sc >> 4));
      }
    }
  }
  return y;
}
std::vector<double> walk_q3_K(const uint8_t* x) {
  std::vector<double> y;
  const double d = g::half_to_float(x[108] | x[109] << 8);
  const uint8_t* sb = x + 96;
  int sc[16];
  for (int j = 0; j < 16; ++j) {
    const int low = j < 8 ? sb[j] & 0xF : sb[j - 8] >> 4;
    sc[j] = (low | (((sb[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32;
  }
  const uint8_t* q = x + 32;
  uint8_t m = 1;
  int is = 0;
  for (int n = 0; n < 256; n += 128, q += 32) {
    for (int shift = 0; shift < 8; shift += 2, m = static_cast<uint8_t>(m << 1)) {
      for (int half = 0; half < 2; ++half) {
        const double dl = d * sc[is++];
        for (int l = 0; l < 16; ++l) {
          const int k = l + 16 * half;
          y.push_back(dl * (((q[k] >> shift) & 3) - ((x[k] & m) ? 0 : 4)));
        }
      }
    }
  }
  return y;
}
void scale_min_k4(int j, const uint8_t* q, int& d, int& m) {
  if (j < 4) {
    d = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    d = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}
std::vector<double> walk_q45_K(const uint8_t* x, bool five) {
  std::vector<double> y;
  const double d = g::half_to_float(x[0] | x[1] << 8), dmin = g::half_to_float(x[2] | x[3] << 8);
  const uint8_t* qh = x + 16;
  const uint8_t* ql = x + (five ? 48 : 16);
  int is = 0;
  uint8_t u1 = 1, u2 = 2;
  for (int j = 0; j < 256; j += 64, ql += 32, is += 2) {
    int sc1, m1, sc2, m2;
    scale_min_k4(is, x + 4, sc1, m1);
    scale_min_k4(is + 1, x + 4, sc2, m2);
    for (int l = 0; l < 32; ++l)
      y.push_back(d * sc1 * ((ql[l] & 0xF) + (five && (qh[l] & u1) ? 16 : 0)) - dmin * m1);
    for (int l = 0; l < 32; ++l)
      y.push_back(d * sc2 * ((ql[l] >> 4) + (five && (qh[l] & u2) ? 16 : 0)) - dmin * m2);
    u1 = static_cast<uint8_t>(u1 << 2);
    u2 = static_cast<uint8_t>(u2 << 2);
  }
  return y;
}
std::vector<double> walk_q6_K(const uint8_t* x) {
  std::vector<double> y(256);
  const double d = g::half_to_float(x[208] | x[209] << 8);
  const uint8_t* ql = x;
  const uint8_t* qh = x + 128;
  const int8_t* sc = reinterpret_cast<const int8_t*>(x + 192);
  for (int n = 0; n < 256; n += 128, ql += 64, qh += 32, sc += 8) {
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      y[n + l] = d * sc[is] * (((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32);
      y[n + l + 32] = d * sc[is + 2] * (((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32);
      y[n + l + 64] = d * sc[is + 4] * (((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
      y[n + l + 96] = d * sc[is + 6] * (((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
    }
  }
  return y;
}

TEST(GgmlRefKnown, KQuantBlocksWalkedInGgmlOrder) {
  for (int blocks : {1, 2}) {
    for (QType t : {QType::q2_K, QType::q3_K, QType::q4_K, QType::q5_K, QType::q6_K, QType::q8_K}) {
      const size_t bytes = g::info(t).block_bytes;
      auto b = pattern(bytes * blocks, 100 + static_cast<uint32_t>(t) + blocks);
      std::vector<double> want;
      for (int i = 0; i < blocks; ++i) {
        uint8_t* x = b.data() + i * bytes;
        std::vector<double> y;
        switch (t) {
          case QType::q2_K:
            put_half(b, i * bytes + 80, 0.125f * (i + 1));
            put_half(b, i * bytes + 82, -0.75f);
            y = walk_q2_K(x);
            break;
          case QType::q3_K:
            put_half(b, i * bytes + 108, 0.0625f * (i + 1));
            y = walk_q3_K(x);
            break;
          case QType::q4_K:
          case QType::q5_K:
            put_half(b, i * bytes, 0.03125f * (i + 1));
            put_half(b, i * bytes + 2, 0.5f);
            y = walk_q45_K(x, t == QType::q5_K);
            break;
          case QType::q6_K:
            put_half(b, i * bytes + 208, -0.0078125f * (i + 1));
            y = walk_q6_K(x);
            break;
          default: {  // q8_K: float d, then 256 signed bytes
            const float d = 0.001f * (i + 1);
            std::memcpy(x, &d, 4);
            for (int v = 0; v < 256; ++v)
              y.push_back(static_cast<int8_t>(x[4 + v]) * static_cast<double>(d));
          }
        }
        ASSERT_EQ(y.size(), 256u);
        want.insert(want.end(), y.begin(), y.end());
      }
      SCOPED_TRACE(g::info(t).name);
      expect_values(t, b, want);
    }
  }
}

TEST(GgmlRefKnown, Q6_KLiteralValues) {
  std::vector<uint8_t> b(210, 0);
  put_half(b, 208, 2.0f);
  b[192] = static_cast<uint8_t>(-3);  // scale of values 0..15
  b[192 + 5] = 7;                     // scale of values 80..95
  b[0] = 0x5F;                        // value 0: low nibble F; value 64: low nibble 5
  b[128] = 0xE3;                      // value 0: high bits 3; value 32: 0; value 64: 2; value 96: 3
  b[32 + 16] = 0x01;                  // value 48 (r = 1, l = 16): low nibble 1
  const auto y = g::dequantize(QType::q6_K, b.data(), 256);
  EXPECT_EQ(y[0], 2.0 * -3 * ((0xF | 3 << 4) - 32));  // 63 - 32 = 31
  EXPECT_EQ(y[32], 2.0 * 0);                          // scale of group 2 is 0
  EXPECT_EQ(y[64], 2.0 * b[192 + 4] * ((5 | 2 << 4) - 32));
  EXPECT_EQ(y[96], 0.0);                 // group 6 scale 0
  EXPECT_EQ(y[80], 2.0 * 7 * (0 - 32));  // nothing set: q = -32
  EXPECT_EQ(y[48], 0.0);                 // group 3 scale 0
}

}  // namespace
