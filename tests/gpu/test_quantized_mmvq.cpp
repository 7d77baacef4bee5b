// QUANTIZED family, part 2, on a device: mul_mat_vec_<format>_q8_1_cuda<1..8> (MMVQ) and
// dequantize_mul_mat_vec_<format> (DMMV) under candle's launch geometry, against the CPU reference
// of tests/reference/ggml_ref.hpp. MMVQ's integer sums are exact, so it must match the reference's
// dot_q8_1 to a few float roundings of the magnitudes involved; DMMV must match the exact product
// of the dequantized weights with y within a tolerance growing with k. Every output sits before
// poisoned guard floats (and, where asked, between poisoned padding rows), so a write past the
// output, e.g. one row past an odd nrows in the two-row kernels, is caught.
#include "gpu/gpu_test.hpp"
#include "gpu/quantized_dot.hpp"
#include "reference/ggml_ref.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace {

using gpu_test::GpuTest;
namespace gg = ref::ggml;
using gg::QType;

using quantized_dot::half_at;
using quantized_dot::kEps;
using quantized_dot::kFormats;
using quantized_dot::kGuard;

// Where a block keeps its half fields: the scale d, an optional min (m or dmin), and the largest
// |level| the min multiplies (q4_0 / q5_0: their offsets 8 and 16 multiply d instead).
struct Fields {
  int d, min;  // byte offsets, -1: none
  double offset, min_levels;
};
Fields fields(QType t) {
  switch (t) {
    case QType::q4_0:
      return {0, -1, 8, 0};
    case QType::q5_0:
      return {0, -1, 16, 0};
    case QType::q4_1:
    case QType::q5_1:
      return {0, 2, 0, 1};
    case QType::q8_0:
      return {0, -1, 0, 0};
    case QType::q2_K:
      return {80, 82, 0, 15};
    case QType::q3_K:
      return {108, -1, 0, 0};
    case QType::q4_K:
    case QType::q5_K:
      return {0, 2, 0, 63};
    default:
      return {208, -1, 0, 0};  // q6_K
  }
}
void set_half(uint8_t* p, double v) {
  const uint16_t h = gg::float_to_half(static_cast<float>(v));
  std::memcpy(p, &h, 2);
}

bool is_super(QType t) {
  return gg::info(t).block_values == 256;
}

enum class Scales { normal, extreme };

class MmvqTest : public GpuTest {
 public:
  // rows x k weights: even rows from ggml's quantizer (values of a random scale per row), odd rows
  // random bytes with finite half fields. Scales::extreme sets the half fields to tiny, subnormal
  // and +-65504 values and zeroes every fifth block.
  std::vector<uint8_t> weights(QType t, size_t rows, size_t k, Scales scales) {
    const gg::QTypeInfo& in = gg::info(t);
    const size_t bpr = k / in.block_values, row_bytes = bpr * in.block_bytes;
    std::vector<uint8_t> out(rows * row_bytes);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_real_distribution<double> mag(-10.0, 4.0);
    std::vector<float> x(k);
    for (size_t r = 0; r < rows; ++r) {
      uint8_t* row = out.data() + r * row_bytes;
      if (r % 2 == 0) {
        const float s = static_cast<float>(std::exp2(mag(rng())));
        for (float& v : x) v = s * normal(rng());
        const std::vector<uint8_t> q = gg::quantize(t, x.data(), k);
        std::memcpy(row, q.data(), row_bytes);
      } else {
        for (size_t i = 0; i < row_bytes; ++i) row[i] = static_cast<uint8_t>(rng()());
        const Fields f = fields(t);
        for (size_t b = 0; b < bpr; ++b) {
          uint8_t* blk = row + b * in.block_bytes;
          for (int off : {f.d, f.min}) {
            if (off >= 0) set_half(blk + off, ((rng()() & 1) ? -1 : 1) * std::exp2(mag(rng())));
          }
        }
      }
      if (scales == Scales::extreme) {
        const double pick[] = {65504.0, -65504.0, 6.0e-8, -6.0e-5, 1.0};
        const Fields f = fields(t);
        for (size_t b = 0; b < bpr; ++b) {
          uint8_t* blk = row + b * in.block_bytes;
          if ((b + r) % 5 == 4) {
            std::memset(blk, 0, in.block_bytes);
            continue;
          }
          for (int off : {f.d, f.min}) {
            if (off >= 0) set_half(blk + off, pick[rng()() % 5]);
          }
        }
      }
    }
    return out;
  }

  // cols x k activations of random magnitude per column; `zero_col` / `huge_col` (if < cols) are
  // all zeros / values up to 2000 (whose 32-value sums still fit a half).
  std::vector<float> activations(size_t cols, size_t k, size_t zero_col, size_t huge_col) {
    std::vector<float> x(cols * k);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_real_distribution<double> mag(-6.0, 3.0);
    std::uniform_real_distribution<float> big(-2000.0f, 2000.0f);
    for (size_t c = 0; c < cols; ++c) {
      const float s = static_cast<float>(std::exp2(mag(rng())));
      for (size_t i = 0; i < k; ++i) {
        float& v = x[c * k + i];
        v = c == zero_col ? 0.0f : c == huge_col ? big(rng()) : s * normal(rng());
      }
    }
    return x;
  }
};

// A bound on the magnitudes a block's float scaling rounds: (max |w| + |offset or min term|) times
// the q8_1 blocks' d_a sum |qa| + |s_a|.
double block_magnitude(QType t, const uint8_t* w, const uint8_t* a) {
  const gg::QTypeInfo& in = gg::info(t);
  const std::vector<double> v = gg::dequantize(t, w, in.block_values);
  double wmax = 0.0;
  for (double x : v) wmax = std::max(wmax, std::fabs(x));
  const Fields f = fields(t);
  wmax += f.offset * std::fabs(half_at(w + f.d)) +
          (f.min >= 0 ? f.min_levels * std::fabs(half_at(w + f.min)) : 0.0);
  return wmax * quantized_dot::q8_1_magnitude(a, in.block_values);
}

// `data` after `offset` copies of `fill`: an upload whose data starts `offset` elements in.
template <typename T>
std::vector<T> placed_after(size_t offset, T fill, const std::vector<T>& data) {
  std::vector<T> v(offset, fill);
  v.insert(v.end(), data.begin(), data.end());
  return v;
}

std::string mmvq_name(QType t, int b) {
  return std::string("mul_mat_vec_") + gg::info(t).name + "_q8_1_cuda" + std::to_string(b);
}

// Beyond candle's launch: the weights `w_offset` bytes past an allocation's start, blocks of
// `threads` threads (0: candle's), a grid of `grid` blocks (0: candle's), the q8_1 columns
// `y_offset` bytes past an allocation's start.
struct Launch {
  size_t w_offset = 0;
  uint32_t threads = 0, grid = 0;
  size_t y_offset = 0;
};

// One launch of mul_mat_vec_<t>_q8_1_cuda<b> with candle's grid and block; dst rows nrows_dst
// apart (candle: nrows), padding rows and the guard poisoned.
void check_mmvq(MmvqTest& t, QType type, int b, size_t k, size_t nrows, Scales scales,
                size_t nrows_dst, size_t zero_col, size_t huge_col, Launch launch = {}) {
  SCOPED_TRACE(mmvq_name(type, b) + " k " + std::to_string(k) + " nrows " + std::to_string(nrows) +
               " nrows_dst " + std::to_string(nrows_dst) + " offset " +
               std::to_string(launch.w_offset) + " threads " + std::to_string(launch.threads) +
               " grid " + std::to_string(launch.grid) + " y offset " +
               std::to_string(launch.y_offset) + ", " + t.seed_note());
  const gg::QTypeInfo& in = gg::info(type);
  const size_t kp = gg::q8_1_padded(k), row_bytes = gg::row_bytes(type, k);
  const size_t col_bytes = kp / 32 * 36;
  const std::vector<uint8_t> w = t.weights(type, nrows, k, scales);
  const std::vector<float> x = t.activations(static_cast<size_t>(b), k, zero_col, huge_col);
  const std::vector<uint8_t> y = gg::quantize_q8_1_rows(x.data(), static_cast<size_t>(b), k, kp);
  const float poison = gpu_test::poison<float>();
  auto dw = t.device().upload(placed_after<uint8_t>(launch.w_offset, 0xEE, w));
  auto dy = t.device().upload(placed_after<uint8_t>(launch.y_offset, 0xEE, y));
  auto dd = t.device().upload(std::vector<float>(b * nrows_dst + kGuard, poison));
  uint32_t grid = b == 1 ? static_cast<uint32_t>(nrows) : static_cast<uint32_t>((nrows + 1) / 2);
  uint32_t by = b <= 4 ? 4 : 2;
  if (launch.grid != 0) grid = launch.grid;
  if (launch.threads != 0) by = launch.threads / 32;
  hkb::LaunchArgs args;
  args.arg(dw.ptr(launch.w_offset))
      .arg(dy.ptr(launch.y_offset))
      .arg(dd.ptr())
      .arg(static_cast<int>(k))
      .arg(static_cast<int>(nrows))
      .arg(static_cast<int>(kp))
      .arg(static_cast<int>(nrows_dst));
  t.launch(mmvq_name(type, b), hkb::LaunchConfig::make(grid, 1, 1, 32, by, 1), args);
  const std::vector<float> got = dd.download();
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const size_t c = i / nrows_dst, r = i % nrows_dst;
    if (c >= static_cast<size_t>(b) || r >= nrows) {
      if (!ref::same_bits(got[i], poison) && ++bad <= 5)
        ADD_FAILURE() << "wrote past the output at " << i;
      continue;
    }
    const uint8_t* wr = w.data() + r * row_bytes;
    const uint8_t* yc = y.data() + c * col_bytes;
    const double want = gg::dot_q8_1(type, wr, yc, k);
    double mag = 0.0;
    for (size_t blk = 0; blk < k / in.block_values; ++blk) {
      mag +=
          block_magnitude(type, wr + blk * in.block_bytes, yc + blk * (in.block_values / 32) * 36);
    }
    const double tol = 64 * kEps * mag + 1e-30;
    if (!(std::fabs(got[i] - want) <= tol) && ++bad <= 5) {
      ADD_FAILURE() << "row " << r << " col " << c << ": got " << got[i] << " want " << want
                    << " (tolerance " << tol << ")";
    }
  }
  EXPECT_EQ(bad, 0u);
}

// The k values of a format: 256, 512, 4096 and 14336, and for the 32-value formats 96 and 4160
// (multiples of 32 and 64 that are not of 256).
std::vector<size_t> k_values(QType t) {
  std::vector<size_t> v = {256, 512, 4096, 14336};
  if (!is_super(t)) v.insert(v.end(), {96, 4160});
  return v;
}
const size_t kRowCounts[] = {1, 3, 65, 4096};

// Each format and batch takes one (k, nrows) pair; over the 8 batches of a format every k and
// every row count appears (4096 rows only with at most 4096 values, to keep the CPU reference
// fast).
TEST_F(MmvqTest, MmvqEveryFormatBatchShape) {
  for (QType type : kFormats) {
    const std::vector<size_t> ks = k_values(type);
    for (int b = 1; b <= 8; ++b) {
      const size_t k = ks[(b - 1) % ks.size()];
      size_t nrows = kRowCounts[(b - 1 + (b - 1) / 4) % 4];
      if (nrows == 4096 && k > 4096) nrows = 65;
      check_mmvq(*this, type, b, k, nrows, Scales::normal, nrows, b > 1 ? 1 : 9, b > 2 ? 2 : 9);
    }
    // Batch 1 over an odd count of rows at the longest k: the formats whose working blocks take
    // two rows (tuning::mmvq_rows1) end on a block with one.
    check_mmvq(*this, type, 1, ks.back(), 65, Scales::normal, 65, 9, 9);
  }
}

// Tiny, subnormal and +-65504 scales, zero blocks, a zero and a huge activation column.
TEST_F(MmvqTest, MmvqExtremeScales) {
  for (QType type : kFormats) {
    for (int b : {1, 3, 8}) check_mmvq(*this, type, b, 512, 33, Scales::extreme, 33, 0, b - 1);
  }
}

// Beyond candle's launch: more blocks than row groups (the extra ones leave), blocks of 32, 64
// and 128 threads (batch 8: twice candle's), weights or q8_1 columns 4 bytes past 16-byte
// alignment, and a k whose last round of items holds fewer blocks, with the columns aligned and 4
// bytes past.
TEST_F(MmvqTest, MmvqLargerGridsOtherBlocksAndAlignment) {
  for (QType type : {QType::q4_0, QType::q5_1, QType::q8_0, QType::q2_K, QType::q3_K, QType::q4_K,
                     QType::q5_K, QType::q6_K}) {
    for (int b : {1, 2, 4, 8}) {
      check_mmvq(*this, type, b, 4096, 33, Scales::normal, 33, 9, 9, {0, 0, 40});
      check_mmvq(*this, type, b, 4096, 33, Scales::normal, 33, 9, 9, {0, 32, 0});
      check_mmvq(*this, type, b, 4096, 33, Scales::normal, 33, 9, 9, {0, 64, 0});
      check_mmvq(*this, type, b, 4096, 33, Scales::normal, 33, 9, 9, {4, 0, 0});
      const size_t k_tail = is_super(type) ? 4352 : 4160;  // a last round of fewer blocks
      check_mmvq(*this, type, b, k_tail, 33, Scales::normal, 33, 9, 9);
      check_mmvq(*this, type, b, k_tail, 33, Scales::normal, 33, 9, 9, {0, 0, 0, 4});
    }
    check_mmvq(*this, type, 8, 4096, 33, Scales::normal, 33, 9, 9, {0, 128, 0});
  }
}

// Row counts that end a working block early, with padding rows between the columns: 5 (a two-row
// block with one row, a four-row block with one) and 6 (a four-row block with two); the missing
// rows are never written (candle writes one float past an odd count).
TEST_F(MmvqTest, MmvqOddRowsWriteNothingPast) {
  for (QType type : kFormats) {
    for (int b = 1; b <= 8; ++b) {
      for (size_t nrows : {5, 6}) check_mmvq(*this, type, b, 256, nrows, Scales::normal, 7, 9, 9);
    }
  }
}

// ---- DMMV
// ----------------------------------------------------------------------------------------

std::string dmmv_name(QType t) {
  std::string n = gg::info(t).name;
  if (is_super(t)) {
    n.back() = 'k';  // candle spells the K-quant DMMV kernels q4_k ...
    return "dequantize_mul_mat_vec_" + n;
  }
  return "dequantize_mul_mat_vec_" + n + "_cuda";
}

// Beyond candle's launch: y `y_offset` floats past an allocation's start (so not 16-byte aligned
// unless a multiple of 4), blocks of bx x by threads.
struct DmmvLaunch {
  size_t y_offset = 0;
  uint32_t bx = 32, by = 1;
};

void check_dmmv(MmvqTest& t, QType type, size_t k, size_t nrows, Scales scales, bool zero_y,
                DmmvLaunch launch = {}) {
  SCOPED_TRACE(dmmv_name(type) + " k " + std::to_string(k) + " nrows " + std::to_string(nrows) +
               " y offset " + std::to_string(launch.y_offset) + " block " +
               std::to_string(launch.bx) + "x" + std::to_string(launch.by) + ", " + t.seed_note());
  const gg::QTypeInfo& in = gg::info(type);
  const size_t row_bytes = gg::row_bytes(type, k);
  const std::vector<uint8_t> w = t.weights(type, nrows, k, scales);
  const std::vector<float> y = t.activations(1, k, zero_y ? 0 : 9, 9);
  const float poison = gpu_test::poison<float>();
  auto dw = t.device().upload(w);
  auto dy = t.device().upload(placed_after(launch.y_offset, poison, y));
  auto dd = t.device().upload(std::vector<float>(nrows + kGuard, poison));
  hkb::LaunchArgs args;
  args.arg(dw.ptr()).arg(dy.ptr(launch.y_offset)).arg(dd.ptr()).arg(static_cast<int>(k));
  if (type != QType::q5_K) args.arg(static_cast<int>(nrows));  // candle's q5_k takes no nrows
  t.launch(dmmv_name(type),
           hkb::LaunchConfig::make(static_cast<uint32_t>(nrows), 1, 1, launch.bx, launch.by, 1),
           args);
  const std::vector<float> got = dd.download();
  size_t bad = 0;
  for (size_t r = 0; r < got.size(); ++r) {
    if (r >= nrows) {
      if (!ref::same_bits(got[r], poison) && ++bad <= 5)
        ADD_FAILURE() << "wrote past the output at " << r;
      continue;
    }
    const std::vector<double> v = gg::dequantize(type, w.data() + r * row_bytes, k);
    double want = 0.0, mag = 0.0;
    for (size_t j = 0; j < k; ++j) {
      want += v[j] * y[j];
      mag += std::fabs(v[j] * y[j]);
    }
    // Each product rounds once and a thread's chain adds k / 32 of them, then 5 shuffle steps.
    const double tol = (static_cast<double>(k) / 32 + 16) * 2 * kEps * mag + 1e-30;
    if (!(std::fabs(got[r] - want) <= tol) && ++bad <= 5) {
      ADD_FAILURE() << "row " << r << ": got " << got[r] << " want " << want << " (tolerance "
                    << tol << ")";
    }
  }
  EXPECT_EQ(bad, 0u);
}

TEST_F(MmvqTest, DmmvEveryFormatShape) {
  for (QType type : kFormats) {
    const std::vector<size_t> ks = k_values(type);
    for (size_t i = 0; i < ks.size(); ++i) {
      const size_t nrows = kRowCounts[i % 4];
      check_dmmv(*this, type, ks[i], nrows == 4096 && ks[i] > 4096 ? 65 : nrows, Scales::normal,
                 false);
    }
    check_dmmv(*this, type, 4096, 4096, Scales::normal, false);
  }
}

// y at addresses that are not 16-byte aligned (read float by float), and blocks other than
// candle's 32 threads: 64 (a second row of 32 threads), fewer threads than lanes (each taking
// several), odd counts and two- and three-row blocks; k leaves the lanes uneven shares.
TEST_F(MmvqTest, DmmvUnalignedYAndOtherBlocks) {
  const uint32_t blocks[][2] = {{64, 1}, {20, 1}, {1, 1}, {16, 2}, {7, 3}};
  for (QType type : kFormats) {
    const size_t k = is_super(type) ? 2304 : 4160;
    for (size_t offset : {1, 2, 3}) check_dmmv(*this, type, k, 5, Scales::normal, false, {offset});
    for (const auto& b : blocks) {
      check_dmmv(*this, type, k, 3, Scales::normal, false, {4, b[0], b[1]});
    }
  }
}

TEST_F(MmvqTest, DmmvExtremeScalesAndZeroInput) {
  for (QType type : kFormats) {
    check_dmmv(*this, type, 512, 33, Scales::extreme, false);
    check_dmmv(*this, type, 512, 3, Scales::normal, true);
  }
}

}  // namespace
