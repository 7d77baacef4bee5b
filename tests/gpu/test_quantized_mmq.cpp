// QUANTIZED family, part 3, on a device: mul_mat_<format> (MMQ) under candle's grid and per-format
// tiles, and indexed_moe_forward_<format>_q8_1 under its grid (n, batch, topk), against the CPU
// reference of tests/reference/ggml_ref.hpp. The integer sums are exact, so every output must match
// the reference's q8_1 product to a few float roundings of the magnitudes involved. hkb's MMQ takes
// the q4_K / q5_K min term as MMVQ does (quantized/mmq.h), so both kernels are checked against
// dot_q8_1, and against each other. Outputs sit between poisoned padding rows and before poisoned
// guard floats, so a write out of bounds is caught.
#include "gpu/gpu_test.hpp"
#include "gpu/quantized_dot.hpp"
#include "reference/ggml_ref.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

namespace {

using gpu_test::GpuTest;
namespace gg = ref::ggml;
using gg::QType;

using quantized_dot::kEps;
using quantized_dot::kFormats;
using quantized_dot::kGuard;

// candle's MMQ tiles (mmq_x columns, mmq_y rows per GPU block) and the k of one of its k-tiles.
struct Tile {
  uint32_t x, y;
  size_t k;
};
Tile tile(QType t) {
  switch (t) {
    case QType::q4_0:
    case QType::q4_1:
      return {64, 128, 256};
    case QType::q5_0:
    case QType::q5_1:
      return {128, 64, 256};
    case QType::q8_0:
      return {128, 64, 128};
    case QType::q2_K:
      return {64, 128, 512};
    case QType::q3_K:
      return {128, 128, 512};
    case QType::q4_K:
    case QType::q5_K:
      return {64, 128, 256};
    default:
      return {64, 64, 256};  // q6_K
  }
}

class MmqTest : public GpuTest {
 public:
  // rows x k normal values, each row scaled by 2^u, u uniform in [lo, hi).
  std::vector<float> values(size_t rows, size_t k, double lo, double hi) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_real_distribution<double> mag(lo, hi);
    std::vector<float> x(rows * k);
    for (size_t r = 0; r < rows; ++r) {
      const float s = static_cast<float>(std::exp2(mag(rng())));
      for (size_t i = 0; i < k; ++i) x[r * k + i] = s * normal(rng());
    }
    return x;
  }
  // rows x k weights from ggml's quantizer.
  std::vector<uint8_t> weights(QType t, size_t rows, size_t k) {
    return gg::quantize(t, values(rows, k, -8.0, 4.0).data(), rows * k);
  }
  // cols q8_1 rows of k values, k_padded apart.
  std::vector<uint8_t> activations(size_t cols, size_t k) {
    return gg::quantize_q8_1_rows(values(cols, k, -6.0, 3.0).data(), cols, k, gg::q8_1_padded(k));
  }
};

// A bound on what the float scaling of a row . column product rounds: per weight block, twice its
// largest |value| (covering the offset or min term of quantizer-made blocks) times the q8_1 blocks'
// d_a sum |qa| + |s_a|. The tolerance is 64 half-ulps of it (as for MMVQ).
double tolerance(QType t, const uint8_t* w, const uint8_t* a, size_t k) {
  const gg::QTypeInfo& in = gg::info(t);
  const std::vector<double> v = gg::dequantize(t, w, k);
  double mag = 0.0;
  for (size_t b = 0; b < k / in.block_values; ++b) {
    double wmax = 0.0;
    for (size_t j = 0; j < in.block_values; ++j)
      wmax = std::max(wmax, std::fabs(v[b * in.block_values + j]));
    mag += 2.0 * wmax *
           quantized_dot::q8_1_magnitude(a + 36 * (b * in.block_values / 32), in.block_values);
  }
  return 64 * kEps * mag + 1e-30;
}

// Checks out[c * stride + r] for r < rows, c < cols against row r . column c, and that every other
// float of out is still the poison. Large outputs are checked on a sample that keeps every edge.
void check_products(MmqTest& t, QType type, const std::vector<float>& out, size_t stride,
                    size_t rows, size_t cols, const uint8_t* w, size_t w_row_bytes,
                    const std::vector<const uint8_t*>& col_ptrs, size_t k) {
  const float poison = gpu_test::poison<float>();
  const size_t step = std::max<size_t>(1, rows * cols / 6000);
  size_t bad = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    const size_t c = i / stride, r = i % stride;
    if (c >= cols || r >= rows) {
      if (!ref::same_bits(out[i], poison) && ++bad <= 5)
        ADD_FAILURE() << "wrote out of bounds at " << i;
      continue;
    }
    const bool edge = r + 2 >= rows || c + 2 >= cols || r < 2 || c < 2;
    if (!edge && (r * 7 + c * 13) % step != 0) continue;
    const uint8_t* wr = w + r * w_row_bytes;
    const double want = gg::dot_q8_1(type, wr, col_ptrs[c], k);
    const double tol = tolerance(type, wr, col_ptrs[c], k);
    if (!(std::fabs(out[i] - want) <= tol) && ++bad <= 5) {
      ADD_FAILURE() << "row " << r << " col " << c << ": got " << out[i] << " want " << want
                    << " (tolerance " << tol << ")";
    }
  }
  EXPECT_EQ(bad, 0u) << t.seed_note();
}

std::string mmq_name(QType t) {
  return std::string("mul_mat_") + gg::info(t).name;
}

// One launch of mul_mat_<t> with candle's grid and block, output columns nrows_dst floats apart,
// q8_1 columns nrows_y values apart (0: candle's k_padded). Returns the output.
std::vector<float> run_mmq(MmqTest& t, QType type, const std::vector<uint8_t>& w,
                           const std::vector<uint8_t>& y, size_t k, size_t nrows, size_t ncols,
                           size_t nrows_dst, size_t nrows_y = 0) {
  const Tile tl = tile(type);
  auto dw = t.device().upload(w);
  auto dy = t.device().upload(y);
  auto dd =
      t.device().upload(std::vector<float>(ncols * nrows_dst + kGuard, gpu_test::poison<float>()));
  hkb::LaunchArgs args;
  args.arg(dw.ptr())
      .arg(dy.ptr())
      .arg(dd.ptr())
      .arg(static_cast<int>(k))
      .arg(static_cast<int>(nrows))
      .arg(static_cast<int>(ncols))
      .arg(static_cast<int>(nrows_y != 0 ? nrows_y : gg::q8_1_padded(k)))
      .arg(static_cast<int>(nrows_dst));
  const uint32_t gx = static_cast<uint32_t>((nrows + tl.y - 1) / tl.y);
  const uint32_t gy = static_cast<uint32_t>((ncols + tl.x - 1) / tl.x);
  t.launch(mmq_name(type), hkb::LaunchConfig::make(gx, gy, 1, 32, 4, 1), args);
  return dd.download();
}

std::vector<const uint8_t*> columns(const std::vector<uint8_t>& y, size_t cols, size_t k,
                                    size_t nrows_y = 0) {
  std::vector<const uint8_t*> p(cols);
  const size_t stride = nrows_y != 0 ? nrows_y : gg::q8_1_padded(k);
  for (size_t c = 0; c < cols; ++c) p[c] = y.data() + c * stride / 32 * 36;
  return p;
}

void check_mmq(MmqTest& t, QType type, size_t k, size_t nrows, size_t ncols) {
  SCOPED_TRACE(mmq_name(type) + " k " + std::to_string(k) + " nrows " + std::to_string(nrows) +
               " ncols " + std::to_string(ncols) + ", " + t.seed_note());
  const std::vector<uint8_t> w = t.weights(type, nrows, k);
  const std::vector<uint8_t> y = t.activations(ncols, k);
  const size_t stride = nrows + 3;
  const std::vector<float> out = run_mmq(t, type, w, y, k, nrows, ncols, stride);
  check_products(t, type, out, stride, nrows, ncols, w.data(), gg::row_bytes(type, k),
                 columns(y, ncols, k), k);
}

const size_t kRowCounts[] = {1, 127, 128, 4096};
const size_t kColCounts[] = {9, 64, 65, 512};

// Each format takes four (k, nrows, ncols) triples: k = one block, one of candle's k-tiles, that
// plus one block (where candle reads the next row) and 4096; the row and column counts rotate with
// the format so that every pairing appears over the formats, and every value for each format.
TEST_F(MmqTest, MmqEveryFormatShape) {
  size_t f = 0;
  for (QType type : kFormats) {
    const size_t bv = gg::info(type).block_values, kt = tile(type).k;
    const size_t ks[] = {bv, kt, kt + bv, 4096};
    for (size_t j = 0; j < 4; ++j) {
      size_t nrows = kRowCounts[(j + f) % 4], ncols = kColCounts[(j + 2 * f + f / 4) % 4];
      if (nrows == 4096 && ncols == 512 && j != 3) ncols = 65;  // the big product once per format
      check_mmq(*this, type, ks[j], nrows, ncols);
    }
    ++f;
  }
}

// q8_1 columns further apart than k_padded (the kernel reads only the first k values of each),
// k a few blocks past a multiple of MMQ's k-chunk, rows and columns that fill no tile.
TEST_F(MmqTest, MmqColumnStride) {
  for (QType type : kFormats) {
    const size_t bv = gg::info(type).block_values;
    const size_t k = bv == 32 ? 4 * 128 + 3 * 32 : 3 * 256, nrows = 77, ncols = 70;
    const size_t nrows_y = gg::q8_1_padded(k) + 512;
    SCOPED_TRACE(mmq_name(type) + " k " + std::to_string(k) + " nrows_y " +
                 std::to_string(nrows_y) + ", " + seed_note());
    const std::vector<uint8_t> w = weights(type, nrows, k);
    const std::vector<uint8_t> y =
        gg::quantize_q8_1_rows(values(ncols, k, -6.0, 3.0).data(), ncols, k, nrows_y);
    const std::vector<float> out = run_mmq(*this, type, w, y, k, nrows, ncols, nrows + 1, nrows_y);
    check_products(*this, type, out, nrows + 1, nrows, ncols, w.data(), gg::row_bytes(type, k),
                   columns(y, ncols, k, nrows_y), k);
  }
}

// MMQ on 9 columns against MMVQ's batch-8 kernel on the first 8 of them: the same integer sums, so
// they agree to the same tolerance as each does with the reference.
TEST_F(MmqTest, MmqAgreesWithMmvq) {
  for (QType type : kFormats) {
    SCOPED_TRACE(mmq_name(type) + ", " + seed_note());
    const size_t k = 1024, nrows = 131, cols = 9;
    const std::vector<uint8_t> w = weights(type, nrows, k);
    const std::vector<uint8_t> y = activations(cols, k);
    const std::vector<float> mmq = run_mmq(*this, type, w, y, k, nrows, cols, nrows);
    auto dw = device().upload(w);
    auto dy = device().upload(y);
    auto dd = device().upload(std::vector<float>(8 * nrows, 0.0f));
    hkb::LaunchArgs args;
    args.arg(dw.ptr())
        .arg(dy.ptr())
        .arg(dd.ptr())
        .arg(static_cast<int>(k))
        .arg(static_cast<int>(nrows))
        .arg(static_cast<int>(gg::q8_1_padded(k)))
        .arg(static_cast<int>(nrows));
    launch(std::string("mul_mat_vec_") + gg::info(type).name + "_q8_1_cuda8",
           hkb::LaunchConfig::make(static_cast<uint32_t>((nrows + 1) / 2), 1, 1, 32, 2, 1), args);
    const std::vector<float> mmvq = dd.download();
    const std::vector<const uint8_t*> cp = columns(y, cols, k);
    size_t bad = 0;
    for (size_t c = 0; c < 8; ++c) {
      for (size_t r = 0; r < nrows; ++r) {
        const float a = mmq[c * nrows + r], b = mmvq[c * nrows + r];
        const double tol = tolerance(type, w.data() + r * gg::row_bytes(type, k), cp[c], k);
        if (!(std::fabs(a - b) <= tol) && ++bad <= 5)
          ADD_FAILURE() << "row " << r << " col " << c << ": mmq " << a << " mmvq " << b;
      }
    }
    EXPECT_EQ(bad, 0u);
  }
}

// ---- indexed_moe_forward
// ------------------------------------------------------------------------

const QType kMoeFormats[] = {QType::q2_K, QType::q3_K, QType::q4_K,
                             QType::q5_K, QType::q6_K, QType::q8_0};

std::string moe_name(QType t) {
  if (t == QType::q8_0) return "indexed_moe_forward_q8_0_q8_1";
  std::string n = gg::info(t).name;  // q4_K -> q4k
  n.erase(n.size() - 2, 1);
  n.back() = 'k';
  return "indexed_moe_forward_" + n + "_q8_1";
}

// experts experts of n x k weights; per token topk distinct experts (duplicates across tokens);
// inputs one per token (input_dim1 1) or one per slot (input_dim1 topk).
void check_moe(MmqTest& t, QType type, size_t k, size_t n, size_t experts, size_t batch,
               size_t topk, size_t input_dim1) {
  SCOPED_TRACE(moe_name(type) + " k " + std::to_string(k) + " n " + std::to_string(n) + " batch " +
               std::to_string(batch) + " topk " + std::to_string(topk) + " input_dim1 " +
               std::to_string(input_dim1) + ", " + t.seed_note());
  const std::vector<uint8_t> w = t.weights(type, experts * n, k);
  const size_t inputs = batch * input_dim1;
  const std::vector<uint8_t> y = t.activations(inputs, k);
  std::vector<uint32_t> ids(batch * topk);
  std::vector<uint32_t> perm(experts);
  for (size_t b = 0; b < batch; ++b) {
    std::iota(perm.begin(), perm.end(), 0u);
    std::shuffle(perm.begin(), perm.end(), t.rng());
    if (b == 0) std::reverse(perm.begin(), perm.end());  // the last expert at least once
    for (size_t s = 0; s < topk; ++s) ids[b * topk + s] = perm[s];
  }
  const size_t slots = batch * topk;
  auto dw = t.device().upload(w);
  auto dy = t.device().upload(y);
  auto di = t.device().upload(ids);
  auto dd = t.device().upload(std::vector<float>(slots * n + kGuard, gpu_test::poison<float>()));
  hkb::LaunchArgs args;
  args.arg(dw.ptr())
      .arg(dy.ptr())
      .arg(di.ptr())
      .arg(dd.ptr())
      .arg(static_cast<int>(n))
      .arg(static_cast<int>(k))
      .arg(static_cast<int>(batch))
      .arg(static_cast<int>(topk))
      .arg(static_cast<int>(gg::q8_1_padded(k)))
      .arg(static_cast<int>(input_dim1));
  t.launch(moe_name(type),
           hkb::LaunchConfig::make(static_cast<uint32_t>(n), static_cast<uint32_t>(batch),
                                   static_cast<uint32_t>(topk), 32, 4, 1),
           args);
  const std::vector<float> out = dd.download();
  const std::vector<const uint8_t*> cp = columns(y, inputs, k);
  const size_t rb = gg::row_bytes(type, k);
  // Slot o reads expert ids[o]'s rows and input o (or its token's): as a product of n rows by one
  // column each, laid out as columns of `out`.
  for (size_t o = 0; o < slots; ++o) {
    const std::vector<float> col(out.begin() + o * n,
                                 o + 1 == slots ? out.end() : out.begin() + (o + 1) * n);
    const uint8_t* in = cp[input_dim1 == 1 ? o / topk : o];
    check_products(t, type, col, n, n, 1, w.data() + ids[o] * n * rb, rb, {in}, k);
  }
}

// Every format, experts past the first (the q8_0 stride candle gets wrong), topk 1, 2 and 8,
// batch 1 and 37, inputs per token and per slot.
TEST_F(MmqTest, MoeEveryFormat) {
  for (QType type : kMoeFormats) {
    const size_t k = type == QType::q8_0 ? 96 : 512;
    check_moe(*this, type, k, 67, 9, 1, 1, 1);
    check_moe(*this, type, k, 67, 9, 37, 2, 2);
    check_moe(*this, type, k, 67, 9, 37, 8, 1);
    check_moe(*this, type, k, 67, 9, 1, 8, 8);
  }
}

}  // namespace
