// Unit tests of the GGML reference's quantizers (tests/reference/ggml_ref.hpp): quantized bytes of
// known inputs, candle's own q4_0 .. q5_1 vectors, and round trips within candle's error bounds.
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

// ---- quantized bytes of known inputs --------------------------------------------------------

TEST(GgmlRefQuantize, Q4_0FieldsOfASimpleRamp) {
  std::vector<float> x(32, 0.0f);
  for (int j = 0; j < 16; ++j) x[j] = static_cast<float>(j - 8);  // extreme -8 at j = 0
  const auto b = g::quantize(QType::q4_0, x.data(), 32);
  ASSERT_EQ(b.size(), 18u);
  EXPECT_EQ(b[0] | b[1] << 8, 0x3C00);  // d = -8 / -8 = 1
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(b[2 + j] & 0xF, j) << j;  // q = trunc(x + 8.5) = j
    EXPECT_EQ(b[2 + j] >> 4, 8) << j;   // zeros sit at q = 8
  }
}

TEST(GgmlRefQuantize, Q8_0FieldsAndRoundingHalfAwayFromZero) {
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(j - 16);
  const auto b = g::quantize(QType::q8_0, x.data(), 32);
  EXPECT_EQ(b[0] | b[1] << 8, g::float_to_half(16.0f / 127.0f));
  for (int j = 0; j < 32; ++j)
    EXPECT_EQ(static_cast<int8_t>(b[2 + j]), std::lround((j - 16) * 127.0 / 16.0)) << j;
  // amax 127 gives d = 1 and id = 1 exactly, so x.5 hits roundf's ties: away from zero.
  std::vector<float> t(32, 0.0f);
  t[0] = 127.0f;
  t[1] = 2.5f;
  t[2] = -2.5f;
  t[3] = 0.5f;
  t[4] = -0.5f;
  const auto c = g::quantize(QType::q8_0, t.data(), 32);
  EXPECT_EQ(c[0] | c[1] << 8, 0x3C00);
  const int want[5] = {127, 3, -3, 1, -1};
  for (int j = 0; j < 5; ++j) EXPECT_EQ(static_cast<int8_t>(c[2 + j]), want[j]) << j;
}

TEST(GgmlRefQuantize, Q8_KRoundsHalfToEvenAndSumsGroups) {
  std::vector<float> x(256);
  for (int v = 0; v < 256; ++v) x[v] = static_cast<float>(v - 128);  // extreme -128 at v = 0
  const auto b = g::quantize(QType::q8_K, x.data(), 256);
  float d;
  std::memcpy(&d, b.data(), 4);
  EXPECT_EQ(d, 1.0f / (-127.0f / -128.0f));
  int8_t q[256];
  std::memcpy(q, b.data() + 4, 256);
  for (int v = 0; v < 256; ++v) {
    // x * 127 / 128 is exact in float; ties (x = +-64 -> +-63.5) go to the even level 64.
    EXPECT_EQ(q[v], static_cast<int>(std::nearbyint((v - 128) * 127.0 / 128.0))) << v;
  }
  EXPECT_EQ(q[64], -64);
  EXPECT_EQ(q[192], 64);
  for (int grp = 0; grp < 16; ++grp) {
    int sum = 0;
    for (int i = 0; i < 16; ++i) sum += q[16 * grp + i];
    EXPECT_EQ(static_cast<int16_t>(b[260 + 2 * grp] | b[261 + 2 * grp] << 8), sum) << grp;
  }
}

TEST(GgmlRefQuantize, Q8_1OfGgmlStoresTheSumOfLevelsTimesD) {
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) x[j] = 0.3f * static_cast<float>(j) - 2.0f;
  const auto b = g::quantize(QType::q8_1, x.data(), 32);
  const float d = g::half_to_float(static_cast<uint16_t>(b[0] | b[1] << 8));
  EXPECT_EQ(b[0] | b[1] << 8, g::float_to_half(7.3f / 127.0f));
  int sum = 0;
  for (int j = 0; j < 32; ++j) sum += static_cast<int8_t>(b[4 + j]);
  EXPECT_EQ(b[2] | b[3] << 8, g::float_to_half(static_cast<float>(sum) * (7.3f / 127.0f)));
  (void)d;
}

// K-quants on inputs that sit exactly on a level grid: the fits find the grid, so every field
// follows by hand. (Derivations in the comments; half(v) is v rounded to binary16.)
TEST(GgmlRefQuantize, KQuantFieldsOfInputsOnALevelGrid) {
  std::vector<float> x(256);
  // q2_K: x = 0.5 (v % 4). Each group fits scale 0.5, min 0 -> scale code nearest(15 / 0.5 *
  // 0.5) = 15, d = half(0.5 / 15), dmin = 0; requantized levels stay v % 4.
  for (int v = 0; v < 256; ++v) x[v] = 0.5f * static_cast<float>(v % 4);
  auto b = g::quantize(QType::q2_K, x.data(), 256);
  for (int grp = 0; grp < 16; ++grp) EXPECT_EQ(b[grp], 0x0F) << grp;
  EXPECT_EQ(u16(&b[80]), g::float_to_half(0.5f / 15.0f));
  EXPECT_EQ(u16(&b[82]), 0);
  // Byte l holds values l, l + 32, l + 64, l + 96 of its half: all four have level l % 4.
  for (int i = 0; i < 64; ++i) EXPECT_EQ(b[16 + i], (i % 4) * 0x55) << i;
  // q3_K: x = 0.5 (v % 8 - 4). Each group fits 0.5 with levels v % 8 - 4; the block scale is
  // 1 / (-32 / 0.5) = -2^-6 and every 6-bit code is -32 + 32 = 0.
  for (int v = 0; v < 256; ++v) x[v] = 0.5f * static_cast<float>(v % 8 - 4);
  b = g::quantize(QType::q3_K, x.data(), 256);
  EXPECT_EQ(u16(&b[108]), 0xA400);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(b[96 + i], 0) << i;
  for (int v = 0; v < 256; ++v) {
    const int level = v % 8;  // stored level, q + 4
    EXPECT_EQ((b[v % 32] >> (v / 32)) & 1, level > 3 ? 1 : 0) << v;
    EXPECT_EQ((b[32 + (v / 128) * 32 + v % 32] >> (2 * ((v / 32) % 4))) & 3, level & 3) << v;
  }
  auto y = g::dequantize(QType::q3_K, b.data(), 256);
  for (int v = 0; v < 256; ++v) EXPECT_EQ(y[v], x[v]) << v;
  // q4_K: x = 0.5 (v % 16). Scale 0.5, min 0 in every group -> 6-bit scale 63, min 0,
  // d = half(0.5 / 63), dmin = 0; scale bytes 0..3 = 63 | (63 >> 4) << 6, 4..7 = 0, 8..11 = 0x0F.
  for (int v = 0; v < 256; ++v) x[v] = 0.5f * static_cast<float>(v % 16);
  b = g::quantize(QType::q4_K, x.data(), 256);
  EXPECT_EQ(u16(&b[0]), g::float_to_half(0.5f / 63.0f));
  EXPECT_EQ(u16(&b[2]), 0);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(b[4 + i], i < 4 ? 0xFF : (i < 8 ? 0x00 : 0x0F)) << i;
  for (int i = 0; i < 128; ++i) EXPECT_EQ(b[16 + i], (i % 16) * 0x11) << i;
  // q5_K: x = 0.5 (v % 32), same scales; levels 16..31 set their group's bit in qh.
  for (int v = 0; v < 256; ++v) x[v] = 0.5f * static_cast<float>(v % 32);
  b = g::quantize(QType::q5_K, x.data(), 256);
  EXPECT_EQ(u16(&b[0]), g::float_to_half(0.5f / 63.0f));
  for (int l = 0; l < 32; ++l) {
    EXPECT_EQ(b[16 + l], l >= 16 ? 0xFF : 0x00) << l;  // every group's fifth bit
    for (int c = 0; c < 4; ++c) EXPECT_EQ(b[48 + 32 * c + l], (l % 16) * 0x11) << l;
  }
  // q6_K: x = 0.25 (v % 16) - 2. Each group fits 1/16 (levels 16 x), the block scale is
  // 1 / (-128 / (1/16)) = -2^-11, every group scale -128, and the round trip is exact.
  for (int v = 0; v < 256; ++v) x[v] = 0.25f * static_cast<float>(v % 16) - 2.0f;
  b = g::quantize(QType::q6_K, x.data(), 256);
  EXPECT_EQ(u16(&b[208]), 0x9000);
  for (int grp = 0; grp < 16; ++grp) EXPECT_EQ(static_cast<int8_t>(b[192 + grp]), -128) << grp;
  y = g::dequantize(QType::q6_K, b.data(), 256);
  for (int v = 0; v < 256; ++v) EXPECT_EQ(y[v], x[v]) << v;
}

// candle's CPU port of the K-quants (candle-core quantized/utils.rs) predates ggml's current
// fits for q2_K, q4_K, q5_K and q6_K (make_qkx1_quants, round-half-away nearest_int), so only
// its q3_K and q8_K spot values are ggml's too: candle's quantize_q3k / quantize_q8k vectors.
TEST(GgmlRefQuantize, CandleKQuantSpotValues) {
  std::vector<float> x(1024);
  for (int v = 0; v < 1024; ++v) x[v] = (static_cast<float>(v) - 512.0f) * 0.5f / 512.0f;
  const int at[6] = {0, 128, 256, 512, 800, 1023};
  const double q3[6] = {-0.493, -0.37, -0.243, -0.0, 0.292, 0.492};
  const double q8[6] = {-0.5, -0.374, -0.25, -0.0, 0.283, 0.499};
  const auto y3 = g::dequantize(QType::q3_K, g::quantize(QType::q3_K, x.data(), 1024).data(), 1024);
  const auto y8 = g::dequantize(QType::q8_K, g::quantize(QType::q8_K, x.data(), 1024).data(), 1024);
  for (int i = 0; i < 6; ++i) {
    EXPECT_NEAR(std::round(static_cast<float>(y3[at[i]]) * 1000.0f) / 1000.0, q3[i], 1e-9) << at[i];
    EXPECT_NEAR(std::round(static_cast<float>(y8[at[i]]) * 1000.0f) / 1000.0, q8[i], 1e-9) << at[i];
  }
}

// candle's quantized_tests.rs: 0 .. 127 quantized and dequantized (an independent port of ggml).
TEST(GgmlRefQuantize, CandleRampVectors) {
  std::vector<float> x(128);
  for (int i = 0; i < 128; ++i) x[i] = static_cast<float>(i);
  const double q4_0[128] = {
      -0.0,    -0.0,    3.875,   3.875,   3.875,   3.875,   7.75,    7.75,    7.75,    7.75,
      11.625,  11.625,  11.625,  11.625,  15.5,    15.5,    15.5,    15.5,    19.375,  19.375,
      19.375,  19.375,  23.25,   23.25,   23.25,   23.25,   27.125,  27.125,  27.125,  27.125,
      31.0,    31.0,    31.5,    31.5,    31.5,    31.5,    39.375,  39.375,  39.375,  39.375,
      39.375,  39.375,  39.375,  39.375,  47.25,   47.25,   47.25,   47.25,   47.25,   47.25,
      47.25,   47.25,   55.125,  55.125,  55.125,  55.125,  55.125,  55.125,  55.125,  55.125,
      63.0,    63.0,    63.0,    63.0,    59.375,  59.375,  71.25,   71.25,   71.25,   71.25,
      71.25,   71.25,   71.25,   71.25,   71.25,   71.25,   71.25,   71.25,   83.125,  83.125,
      83.125,  83.125,  83.125,  83.125,  83.125,  83.125,  83.125,  83.125,  83.125,  83.125,
      95.0,    95.0,    95.0,    95.0,    95.0,    95.0,    95.25,   95.25,   95.25,   95.25,
      95.25,   95.25,   95.25,   95.25,   111.125, 111.125, 111.125, 111.125, 111.125, 111.125,
      111.125, 111.125, 111.125, 111.125, 111.125, 111.125, 111.125, 111.125, 111.125, 111.125,
      127.0,   127.0,   127.0,   127.0,   127.0,   127.0,   127.0,   127.0};
  const auto y0 = g::dequantize(QType::q4_0, g::quantize(QType::q4_0, x.data(), 128).data(), 128);
  for (int i = 0; i < 128; ++i) EXPECT_EQ(y0[i], q4_0[i]) << i;
  EXPECT_TRUE(std::signbit(y0[0]));  // (8 - 8) * -3.875 is -0
  // q5_1 reproduces every integer exactly (d = 31/31 = 1 per block).
  const auto y51 = g::dequantize(QType::q5_1, g::quantize(QType::q5_1, x.data(), 128).data(), 128);
  for (int i = 0; i < 128; ++i) EXPECT_EQ(y51[i], i) << i;
  // candle compares q4_1 / q5_0 rounded to 3 decimals (half away from zero): its full lists.
  const double q4_1[128] = {
      0.0,     0.0,     2.066,   2.066,   4.133,   4.133,   6.199,   6.199,   8.266,   8.266,
      10.332,  10.332,  12.398,  12.398,  14.465,  14.465,  16.531,  16.531,  18.598,  18.598,
      20.664,  20.664,  22.73,   22.73,   24.797,  24.797,  26.863,  26.863,  28.93,   28.93,
      30.996,  30.996,  32.0,    32.0,    34.066,  34.066,  36.133,  36.133,  38.199,  38.199,
      40.266,  40.266,  42.332,  42.332,  44.398,  44.398,  46.465,  46.465,  48.531,  48.531,
      50.598,  50.598,  52.664,  52.664,  54.73,   54.73,   56.797,  56.797,  58.863,  58.863,
      60.93,   60.93,   62.996,  62.996,  64.0,    64.0,    66.066,  66.066,  68.133,  68.133,
      70.199,  70.199,  72.266,  72.266,  74.332,  74.332,  76.398,  76.398,  78.465,  78.465,
      80.531,  80.531,  82.598,  82.598,  84.664,  84.664,  86.73,   86.73,   88.797,  88.797,
      90.863,  90.863,  92.93,   92.93,   94.996,  94.996,  96.0,    96.0,    98.066,  98.066,
      100.133, 100.133, 102.199, 102.199, 104.266, 104.266, 106.332, 106.332, 108.398, 108.398,
      110.465, 110.465, 112.531, 112.531, 114.598, 114.598, 116.664, 116.664, 118.73,  118.73,
      120.797, 120.797, 122.863, 122.863, 124.93,  124.93,  126.996, 126.996};
  const double q5_0[128] = {
      -0.0,    1.938,   1.938,   3.875,   3.875,   5.813,   5.813,   7.75,    7.75,    9.688,
      9.688,   11.625,  11.625,  13.563,  13.563,  15.5,    15.5,    17.438,  17.438,  19.375,
      19.375,  21.313,  21.313,  23.25,   23.25,   25.188,  25.188,  27.125,  27.125,  29.063,
      29.063,  31.0,    31.5,    31.5,    35.438,  35.438,  35.438,  35.438,  39.375,  39.375,
      39.375,  39.375,  43.313,  43.313,  43.313,  43.313,  47.25,   47.25,   47.25,   47.25,
      51.188,  51.188,  51.188,  51.188,  55.125,  55.125,  55.125,  55.125,  59.063,  59.063,
      59.063,  59.063,  63.0,    63.0,    65.313,  65.313,  65.313,  65.313,  65.313,  71.25,
      71.25,   71.25,   71.25,   71.25,   71.25,   77.188,  77.188,  77.188,  77.188,  77.188,
      77.188,  83.125,  83.125,  83.125,  83.125,  83.125,  83.125,  89.063,  89.063,  89.063,
      89.063,  89.063,  89.063,  95.0,    95.0,    95.0,    95.25,   95.25,   95.25,   95.25,
      103.188, 103.188, 103.188, 103.188, 103.188, 103.188, 103.188, 103.188, 111.125, 111.125,
      111.125, 111.125, 111.125, 111.125, 111.125, 111.125, 119.063, 119.063, 119.063, 119.063,
      119.063, 119.063, 119.063, 119.063, 127.0,   127.0,   127.0,   127.0};
  const auto y41 = g::dequantize(QType::q4_1, g::quantize(QType::q4_1, x.data(), 128).data(), 128);
  const auto y50 = g::dequantize(QType::q5_0, g::quantize(QType::q5_0, x.data(), 128).data(), 128);
  auto round3 = [](double v) { return std::round(static_cast<float>(v) * 1000.0f) / 1000.0; };
  for (int i = 0; i < 128; ++i) {
    EXPECT_NEAR(round3(y41[i]), q4_1[i], 1e-9) << i;
    EXPECT_NEAR(round3(y50[i]), q5_0[i], 1e-9) << i;
  }
}

TEST(GgmlRefQuantize, ZeroInputGivesZeroValuesAndZeroKQuantBytes) {
  const std::vector<float> x(512, 0.0f);
  for (QType t : g::kAllTypes) {
    const auto b = g::quantize(t, x.data(), x.size());
    const auto y = g::dequantize(t, b.data(), x.size());
    for (double v : y) ASSERT_EQ(v, 0.0) << g::info(t).name;
    if (g::info(t).block_values == 256) {
      for (uint8_t v : b) ASSERT_EQ(v, 0) << g::info(t).name;
    }
  }
}

TEST(GgmlRefQuantize, BadInputThrows) {
  std::vector<float> x(256, 1.0f);
  EXPECT_THROW(g::quantize(QType::q4_0, x.data(), 33), std::invalid_argument);
  EXPECT_THROW(g::quantize(QType::q4_K, x.data(), 128), std::invalid_argument);
  EXPECT_THROW(g::dequantize(QType::q6_K, std::vector<uint8_t>(210).data(), 255),
               std::invalid_argument);
  x[17] = NAN;
  EXPECT_THROW(g::quantize(QType::q8_0, x.data(), 256), std::invalid_argument);
  x[17] = INFINITY;
  EXPECT_THROW(g::quantize(QType::q2_K, x.data(), 256), std::invalid_argument);
  EXPECT_TRUE(g::quantize(QType::q4_0, x.data(), 0).empty());
}

// ---- round trips -------------------------------------------------------------------------------

// candle's (and ggml's) "total error": sqrt(sum of squared errors) / n, on 0.1 + 2 cos(i + offset)
// over 4096 values, with the dequantized values rounded to f32 as candle's dequantize returns them.
double candle_total_error(QType t, const std::vector<float>& x) {
  const auto y = g::dequantize(t, g::quantize(t, x.data(), x.size()).data(), x.size());
  double sum = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double e = static_cast<double>(static_cast<float>(y[i])) - x[i];
    sum += e * e;
  }
  return std::sqrt(sum) / static_cast<double>(x.size());
}
double candle_bound(QType t) {
  return t == QType::q2_K ? 0.0075 : (t == QType::q3_K ? 0.004 : 0.002);
}

TEST(GgmlRefRoundTrip, CandleCosineVectorWithinCandleBounds) {
  for (float offset : {0.0f, 0.5f, 3.0f}) {
    std::vector<float> x(4096);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = 0.1f + 2.0f * std::cos(static_cast<float>(i) + offset);
    for (QType t : g::kAllTypes) {
      const double err = candle_total_error(t, x);
      EXPECT_LE(err, candle_bound(t)) << g::info(t).name << " offset " << offset;
    }
  }
}

// A true root-mean-square error for uniform values in [-1, 1] at one block, several blocks and
// k = 4096. Rounding to levels of step s alone gives s / sqrt(12) (q4_0: 0.036, q8_0: 0.0023);
// the bounds are about 1.2x the worst block-sized RMSE measured, so a wrong level or scale shows.
TEST(GgmlRefRoundTrip, UniformDataRmsErrorPerFormat) {
  const struct {
    QType t;
    double bound;
  } cases[] = {{QType::q4_0, 0.055}, {QType::q4_1, 0.050},  {QType::q5_0, 0.028},
               {QType::q5_1, 0.025}, {QType::q8_0, 0.0030}, {QType::q8_1, 0.0030},
               {QType::q2_K, 0.175}, {QType::q3_K, 0.095},  {QType::q4_K, 0.042},
               {QType::q5_K, 0.021}, {QType::q6_K, 0.0097}, {QType::q8_K, 0.0030}};
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (const auto& c : cases) {
    const size_t bv = g::info(c.t).block_values;
    for (size_t n : {bv, 5 * bv, size_t{4096}}) {
      std::vector<float> x(n);
      for (auto& v : x) v = dist(rng);
      const auto b = g::quantize(c.t, x.data(), n);
      ASSERT_EQ(b.size(), n / bv * g::info(c.t).block_bytes);
      const auto y = g::dequantize(c.t, b.data(), n);
      double sum = 0.0;
      for (size_t i = 0; i < n; ++i) sum += (y[i] - x[i]) * (y[i] - x[i]);
      EXPECT_LE(std::sqrt(sum / n), c.bound) << g::info(c.t).name << " n " << n;
    }
  }
}

// Large jobs are split over threads: the result must equal one call per block.
TEST(GgmlRefRoundTrip, ThreadedQuantizeAndDequantizeEqualBlockByBlock) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  std::vector<float> x(1 << 17);  // two threads' worth for every format
  for (auto& v : x) v = dist(rng);
  for (QType t : g::kAllTypes) {
    const size_t bv = g::info(t).block_values, bb = g::info(t).block_bytes;
    const auto all = g::quantize(t, x.data(), x.size());
    const auto y = g::dequantize(t, all.data(), x.size());
    for (size_t blk = 0; blk < x.size() / bv; blk += 7) {
      const auto one = g::quantize(t, x.data() + blk * bv, bv);
      ASSERT_TRUE(std::equal(one.begin(), one.end(), all.begin() + blk * bb)) << g::info(t).name;
      const auto z = g::dequantize(t, one.data(), bv);
      ASSERT_TRUE(std::equal(z.begin(), z.end(), y.begin() + blk * bv)) << g::info(t).name;
    }
  }
}

}  // namespace
