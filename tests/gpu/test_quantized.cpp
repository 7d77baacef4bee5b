// QUANTIZED family, part 1, on a device: dequantize_block_*, get_rows_* and quantize_q8_1 against
// the CPU reference of tests/reference/ggml_ref.hpp, under candle's launch geometry and under grids
// far smaller and larger than the work. Blocks come from ggml's reference quantizer (realistic
// data) and from random bytes with sane scale fields (every bit pattern of the quants and packed
// scales). Outputs sit before a poisoned guard region, so a write past the output is caught.
// f32 results must equal the exact values rounded to f32 (every format's arithmetic is exact up to
// one final rounding: kernels/quantized/blocks.h); f16 results are within 1 ulp of the exact value.
#include "gpu/gpu_test.hpp"
#include "reference/ggml_ref.hpp"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace {

using gpu_test::GpuTest;
namespace gg = ref::ggml;
using gg::QType;

constexpr size_t kGuard = 64;  // poisoned elements after every output

const QType kWeightTypes[] = {QType::q4_0, QType::q4_1, QType::q5_0, QType::q5_1,
                              QType::q8_0, QType::q2_K, QType::q3_K, QType::q4_K,
                              QType::q5_K, QType::q6_K, QType::q8_K};

bool is_super(QType t) {
  return gg::info(t).block_values == 256;
}
std::string tname(QType t) {
  return gg::info(t).name;
}

// Byte offsets of a block's half scale fields (q8_K: a float at 0).
std::vector<size_t> half_fields(QType t) {
  switch (t) {
    case QType::q4_0:
    case QType::q5_0:
    case QType::q8_0:
      return {0};
    case QType::q4_1:
    case QType::q5_1:
    case QType::q4_K:
    case QType::q5_K:
      return {0, 2};
    case QType::q2_K:
      return {80, 82};
    case QType::q3_K:
      return {108};
    case QType::q6_K:
      return {208};
    default:
      return {};
  }
}

class QuantizedTest : public GpuTest {
 public:  // the free helpers below take the fixture
  // `blocks` blocks of t: the first half from ggml's quantizer over random values of varied
  // scale, the rest random bytes whose scale fields are finite halves of either sign.
  std::vector<uint8_t> random_blocks(QType t, size_t blocks) {
    const gg::QTypeInfo& in = gg::info(t);
    const size_t quantized = (blocks + 1) / 2;
    std::vector<float> x(quantized * in.block_values);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_real_distribution<float> scale(-3.0f, 3.0f);
    for (size_t b = 0; b < quantized; ++b) {
      const float s = std::exp2(scale(rng()));
      for (size_t i = 0; i < in.block_values; ++i) x[b * in.block_values + i] = s * normal(rng());
    }
    std::vector<uint8_t> out = gg::quantize(t, x.data(), x.size());
    out.resize(blocks * in.block_bytes);
    std::uniform_real_distribution<float> mag(-12.0f, 3.0f);
    for (size_t b = quantized; b < blocks; ++b) {
      uint8_t* p = out.data() + b * in.block_bytes;
      for (size_t i = 0; i < in.block_bytes; ++i) p[i] = static_cast<uint8_t>(rng()());
      const float sign = (rng()() & 1) ? -1.0f : 1.0f;
      for (size_t f : half_fields(t)) {
        const uint16_t h = gg::float_to_half(sign * std::exp2(mag(rng())));
        std::memcpy(p + f, &h, 2);
      }
      if (t == QType::q8_K) {
        const float d = sign * std::exp2(mag(rng()));
        std::memcpy(p, &d, 4);
      }
    }
    return out;
  }

  template <typename T>
  std::vector<T> poisoned(size_t n) {
    return std::vector<T>(n + kGuard, gpu_test::poison<T>());
  }
};

// got[i] against the exact values: f32 equal to the exact value rounded to f32; f16 within 1 ulp.
// Elements from want.size() on must still hold the poison.
template <typename T>
::testing::AssertionResult matches_exact(const std::vector<T>& got,
                                         const std::vector<double>& want) {
  size_t bad = 0;
  std::ostringstream os;
  for (size_t i = 0; i < got.size(); ++i) {
    bool ok;
    if (i >= want.size()) {
      ok = ref::same_bits(got[i], gpu_test::poison<T>());
    } else if constexpr (std::is_same_v<T, float>) {
      ok = got[i] == static_cast<float>(want[i]);  // as values: the sign of a zero may differ
    } else {
      const double g = ref::to_double(got[i]), w = want[i];
      ok = g == w || std::fabs(g - w) <= ref::ulp_at<T>(std::max(std::fabs(g), std::fabs(w)));
    }
    if (!ok) {
      if (bad < 5) {
        os << "\n  [" << i << "] got " << ref::to_double(got[i]) << " want "
           << (i < want.size() ? want[i] : NAN) << (i >= want.size() ? " (guard)" : "");
      }
      ++bad;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " of " << got.size() << " elements wrong" << os.str();
}

// ---- dequantize ---------------------------------------------------------------------------------

// candle's launch of dequantize_block_<t>_<out> for `values` values (dequantize_f32/f16).
struct DequantLaunch {
  hkb::LaunchConfig cfg;
  bool has_k;
  int k;
};
DequantLaunch candle_dequant(QType t, size_t values) {
  const uint32_t nb = static_cast<uint32_t>((values + 255) / 256);
  switch (t) {
    case QType::q4_0:
    case QType::q4_1:
    case QType::q8_0:
      return {hkb::LaunchConfig::make(nb, 1, 1, 32, 1, 1), true, static_cast<int>(values / 32)};
    case QType::q5_0:
    case QType::q5_1:
      return {hkb::LaunchConfig::make(static_cast<uint32_t>((values + 511) / 512), 1, 1, 256, 1, 1),
              true, static_cast<int>(values)};
    case QType::q4_K:
    case QType::q8_K:
      return {hkb::LaunchConfig::make(nb, 1, 1, 32, 1, 1), false, 0};
    default:
      return {hkb::LaunchConfig::make(nb, 1, 1, 64, 1, 1), false, 0};
  }
}

template <typename T>
void run_dequantize(QuantizedTest& t, QType type, size_t blocks, size_t values,
                    const hkb::LaunchConfig* grid) {
  const std::vector<uint8_t> host = t.random_blocks(type, blocks);
  std::vector<double> want =
      gg::dequantize(type, host.data(), blocks * gg::info(type).block_values);
  want.resize(values);
  DequantLaunch l = candle_dequant(type, values);
  if (grid != nullptr) l.cfg = *grid;
  auto src = t.device().upload(host);
  auto out = t.device().upload(t.poisoned<T>(values));
  hkb::LaunchArgs args;
  args.arg(src.ptr()).arg(out.ptr());
  if (l.has_k) args.arg(l.k);
  const std::string name = "dequantize_block_" + tname(type) + "_" + ref::tag<T>();
  t.launch(name, l.cfg, args);
  EXPECT_TRUE(matches_exact(out.download(), want))
      << name << " " << values << " values, grid " << l.cfg.grid[0] << " x " << l.cfg.block[0]
      << ", " << t.seed_note();
}

TEST_F(QuantizedTest, DequantizeEveryFormatUnderCandlesGrid) {
  for (QType type : kWeightTypes) {
    const size_t qk = gg::info(type).block_values;
    for (size_t blocks : {size_t{1}, size_t{3}, size_t{8}, size_t{37}, size_t{1200}}) {
      run_dequantize<float>(*this, type, blocks, blocks * qk, nullptr);
      run_dequantize<hkb::f16>(*this, type, blocks, blocks * qk, nullptr);
    }
  }
}

// Any grid covers the counted formats: one block of 32 threads, three times candle's grid, and
// blocks of 48 threads (waves cut apart).
TEST_F(QuantizedTest, DequantizeAnyGridForCountedFormats) {
  for (QType type : {QType::q4_0, QType::q4_1, QType::q5_0, QType::q5_1, QType::q8_0}) {
    const hkb::LaunchConfig tiny = hkb::LaunchConfig::make(1, 1, 1, 32, 1, 1);
    const hkb::LaunchConfig big = hkb::LaunchConfig::make(3 * 400, 1, 1, 256, 1, 1);
    const hkb::LaunchConfig odd = hkb::LaunchConfig::make(7, 1, 1, 48, 1, 1);  // waves cut apart
    run_dequantize<float>(*this, type, 3000, 3000 * 32, &tiny);
    run_dequantize<hkb::f16>(*this, type, 3000, 3000 * 32, &big);
    run_dequantize<float>(*this, type, 3000, 3000 * 32, &odd);
  }
}

// q5_0/q5_1 count values: exactly k are written, also when k is not a multiple of 32.
TEST_F(QuantizedTest, DequantizeQ5CountsValues) {
  for (QType type : {QType::q5_0, QType::q5_1}) {
    // 40 and 56: the last block's second unit (values 8..15 and 24..31) holds none or half.
    for (size_t k : {size_t{1}, size_t{7}, size_t{31}, size_t{33}, size_t{40}, size_t{56},
                     size_t{100}, size_t{4097}}) {
      run_dequantize<float>(*this, type, (k + 31) / 32, k, nullptr);
      run_dequantize<hkb::f16>(*this, type, (k + 31) / 32, k, nullptr);
    }
  }
}

// k = 0 (and an empty grid for the K-quants) writes nothing.
TEST_F(QuantizedTest, DequantizeNothingToDo) {
  for (QType type : {QType::q4_0, QType::q5_1, QType::q8_0}) {
    run_dequantize<float>(*this, type, 1, 0, nullptr);
    const hkb::LaunchConfig one = hkb::LaunchConfig::make(4, 1, 1, 32, 1, 1);
    run_dequantize<float>(*this, type, 1, 0, &one);
  }
  run_dequantize<float>(*this, QType::q6_K, 1, 0, nullptr);  // grid 0: nothing launched
}

// A table at an odd address (blocks off their alignment) reads byte by byte: same values.
TEST_F(QuantizedTest, DequantizeUnalignedBlocks) {
  for (QType type : kWeightTypes) {
    const size_t blocks = 40, values = blocks * gg::info(type).block_values;
    std::vector<uint8_t> host = random_blocks(type, blocks);
    std::vector<double> want = gg::dequantize(type, host.data(), values);
    std::vector<uint8_t> shifted(host.size() + 1);
    std::memcpy(shifted.data() + 1, host.data(), host.size());
    auto src = device().upload(shifted);
    auto out = device().upload(poisoned<float>(values));
    DequantLaunch l = candle_dequant(type, values);
    hkb::LaunchArgs args;
    args.arg(static_cast<hkb_devptr>(src.ptr() + 1)).arg(out.ptr());
    if (l.has_k) args.arg(l.k);
    launch("dequantize_block_" + tname(type) + "_f32", l.cfg, args);
    EXPECT_TRUE(matches_exact(out.download(), want)) << tname(type) << ", " << seed_note();
  }
}

// ---- get_rows -----------------------------------------------------------------------------------

// candle's grid for get_rows_<t> over n_ids ids of `hidden` values (at least one block in y, for
// the hidden sizes hkb accepts beyond candle's).
hkb::LaunchConfig candle_get_rows(QType type, bool plain, size_t n_ids, size_t hidden) {
  const auto ids = static_cast<uint32_t>(n_ids);
  if (plain)
    return hkb::LaunchConfig::make(ids, std::max<uint32_t>(1, (hidden + 255) / 256), 1, 256, 1, 1);
  if (!is_super(type)) {
    return hkb::LaunchConfig::make(ids, std::max<uint32_t>(1, (hidden + 511) / 512), 1, 256, 1, 1);
  }
  const uint32_t block = type == QType::q4_K ? 32 : 64;
  return hkb::LaunchConfig::make(ids, std::max<uint32_t>(1, hidden / 256), 1, block, 1, 1);
}

// Ids: both ends of the table, repeats, random rows and (with_sentinel) 0xFFFFFFFF.
std::vector<uint32_t> test_ids(std::mt19937_64& rng, size_t n, uint32_t rows, bool with_sentinel) {
  std::vector<uint32_t> ids(n);
  for (size_t i = 0; i < n; ++i) {
    switch (i % 6) {
      case 0:
        ids[i] = 0;
        break;
      case 1:
        ids[i] = rows - 1;
        break;
      case 2:
        ids[i] = i > 2 ? ids[i - 3] : 0;
        break;
      case 5:
        ids[i] = with_sentinel ? 0xFFFFFFFFu : static_cast<uint32_t>(rng() % rows);
        break;
      default:
        ids[i] = static_cast<uint32_t>(rng() % rows);
    }
  }
  return ids;
}

// get_rows `name` over a table of `rows` rows of row_bytes bytes whose exact values are
// exact[r * stride + c], with test_ids (the sentinel included), against the exact rows.
void check_get_rows(QuantizedTest& t, const std::string& name, const std::vector<uint8_t>& table,
                    const std::vector<double>& exact, size_t stride, size_t rows, size_t hidden,
                    size_t row_bytes, size_t n_ids, const hkb::LaunchConfig& cfg) {
  const std::vector<uint32_t> ids = test_ids(t.rng(), n_ids, static_cast<uint32_t>(rows), true);
  std::vector<double> want(n_ids * hidden);
  for (size_t i = 0; i < n_ids; ++i) {
    for (size_t c = 0; c < hidden; ++c) {
      want[i * hidden + c] = ids[i] == 0xFFFFFFFFu ? 0.0 : exact[ids[i] * stride + c];
    }
  }
  auto src = t.device().upload(table.empty() ? std::vector<uint8_t>{0} : table);
  auto dids = t.device().upload(ids.empty() ? std::vector<uint32_t>{0} : ids);
  auto out = t.device().upload(t.poisoned<float>(n_ids * hidden));
  hkb::LaunchArgs args;
  args.arg(src.ptr())
      .arg(dids.ptr())
      .arg(out.ptr())
      .arg(static_cast<int64_t>(hidden))
      .arg(row_bytes);
  t.launch(name, cfg, args);
  EXPECT_TRUE(matches_exact(out.download(), want))
      << name << " table " << rows << " x " << hidden << ", " << n_ids << " ids, grid "
      << cfg.grid[0] << " x " << cfg.grid[1] << " x " << cfg.block[0] << ", " << t.seed_note();
}

void run_get_rows_q(QuantizedTest& t, QType type, size_t rows, size_t hidden, size_t n_ids,
                    const hkb::LaunchConfig* grid) {
  const gg::QTypeInfo& in = gg::info(type);
  const size_t per_row = (hidden + in.block_values - 1) / in.block_values;
  const std::vector<uint8_t> table = t.random_blocks(type, rows * per_row);
  const std::vector<double> exact =
      gg::dequantize(type, table.data(), rows * per_row * in.block_values);
  check_get_rows(t, "get_rows_" + tname(type), table, exact, per_row * in.block_values, rows,
                 hidden, per_row * in.block_bytes, n_ids,
                 grid ? *grid : candle_get_rows(type, false, n_ids, hidden));
}

TEST_F(QuantizedTest, GetRowsEveryFormat) {
  for (QType type : kWeightTypes) {
    if (type == QType::q8_K) continue;  // candle has no get_rows_q8_K
    const std::vector<size_t> hidden =
        is_super(type) ? std::vector<size_t>{256, 768, 1024, 4352}
                       : std::vector<size_t>{32, 256, 480, 512, 1056, 4096 + 32};
    for (size_t h : hidden) run_get_rows_q(*this, type, 50, h, 37, nullptr);
  }
}

// hkb writes exactly ne00 values per row when ne00 is not a multiple of the block.
TEST_F(QuantizedTest, GetRowsPartialBlocks) {
  for (QType type : {QType::q4_0, QType::q4_1, QType::q5_0, QType::q5_1, QType::q8_0, QType::q3_K,
                     QType::q6_K}) {
    for (size_t h : {size_t{1}, size_t{40}, size_t{56}, size_t{100}, size_t{300}})
      run_get_rows_q(*this, type, 9, h, 13, nullptr);
  }
}

// Grids unlike candle's: one block of 32 threads, and y far beyond the row.
TEST_F(QuantizedTest, GetRowsAnyGrid) {
  for (QType type : {QType::q4_1, QType::q5_0, QType::q4_K, QType::q5_K}) {
    const hkb::LaunchConfig tiny = hkb::LaunchConfig::make(21, 1, 1, 32, 1, 1);
    const hkb::LaunchConfig tall = hkb::LaunchConfig::make(21, 40, 1, 64, 1, 1);
    run_get_rows_q(*this, type, 30, 1024, 21, &tiny);
    run_get_rows_q(*this, type, 30, 1024, 21, &tall);
  }
}

// No ids (grid x = 0: nothing launched) and ne00 = 0: nothing written.
TEST_F(QuantizedTest, GetRowsNothingToDo) {
  run_get_rows_q(*this, QType::q4_0, 4, 512, 0, nullptr);
  const hkb::LaunchConfig some = hkb::LaunchConfig::make(5, 1, 1, 256, 1, 1);
  run_get_rows_q(*this, QType::q8_0, 4, 0, 5, &some);
}

template <typename T>
void run_get_rows_plain(QuantizedTest& t, size_t rows, size_t hidden, size_t n_ids,
                        const hkb::LaunchConfig* grid = nullptr) {
  std::vector<T> table(rows * hidden);
  std::vector<double> exact(rows * hidden);
  std::normal_distribution<double> normal(0, 100);
  for (size_t i = 0; i < table.size(); ++i) {
    table[i] = ref::from_double<T>(normal(t.rng()));
    exact[i] = ref::to_double(table[i]);
  }
  std::vector<uint8_t> bytes(table.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), table.data(), bytes.size());
  check_get_rows(t, std::string("get_rows_") + ref::tag<T>(), bytes, exact, hidden, rows, hidden,
                 hidden * sizeof(T), n_ids,
                 grid ? *grid : candle_get_rows(QType::q4_0, true, n_ids, hidden));
}

TEST_F(QuantizedTest, GetRowsFloatTables) {
  for (size_t h : {size_t{1}, size_t{7}, size_t{256}, size_t{1000}, size_t{4096}}) {
    run_get_rows_plain<float>(*this, 40, h, 29);
    run_get_rows_plain<hkb::f16>(*this, 40, h, 29);
    run_get_rows_plain<hkb::bf16>(*this, 40, h, 29);
  }
}

// One block of 32 threads: many rounds a thread over plain tables, sentinel ids among them
// (GetRowsAnyGrid does the same for quantized tables, whose ids are loaded a round ahead).
TEST_F(QuantizedTest, GetRowsFloatTablesTinyGrid) {
  const hkb::LaunchConfig tiny = hkb::LaunchConfig::make(21, 1, 1, 32, 1, 1);
  run_get_rows_plain<hkb::f16>(*this, 30, 1000, 21, &tiny);
  run_get_rows_plain<float>(*this, 30, 4096, 21, &tiny);
  run_get_rows_plain<hkb::bf16>(*this, 30, 7, 21, &tiny);
}

// ---- quantize_q8_1 ------------------------------------------------------------------------------

// Rows of kx values: random of varied scale, with zero blocks, all-equal blocks and blocks of
// the largest magnitude whose 32-value sum fits a half (|x| <= 2047).
std::vector<float> q8_input(std::mt19937_64& rng, size_t rows, size_t kx) {
  std::vector<float> x(rows * kx);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t block = i / 32;
    switch (block % 7) {
      case 1:
        x[i] = 0.0f;
        break;
      case 3:
        x[i] = -1.25f * static_cast<float>(block % 5 + 1);
        break;
      case 5:
        x[i] = std::uniform_real_distribution<float>(-2047.0f, 2047.0f)(rng);
        break;
      case 6:
        x[i] = (i % 2 ? 2047.0f : 2000.0f);
        break;
      default:
        x[i] = std::exp2(static_cast<float>(block % 9) - 4.0f) * normal(rng);
    }
  }
  return x;
}

void run_quantize_q8_1(QuantizedTest& t, size_t rows, size_t kx, const hkb::LaunchConfig* grid) {
  const size_t kx_padded = (kx + 511) / 512 * 512;
  const std::vector<float> x = q8_input(t.rng(), rows, kx);
  std::vector<double> sums;
  const std::vector<uint8_t> want = gg::quantize_q8_1_rows(x.data(), rows, kx, kx_padded, &sums);
  auto dx = t.device().upload(x.empty() ? std::vector<float>{0.0f} : x);
  auto out = t.device().upload(std::vector<uint8_t>(want.size() + kGuard, 0xA5));
  hkb::LaunchArgs args;
  args.arg(dx.ptr()).arg(out.ptr()).arg(static_cast<int>(kx)).arg(static_cast<int>(kx_padded));
  const hkb::LaunchConfig cfg =
      grid ? *grid
           : hkb::LaunchConfig::make(static_cast<uint32_t>((kx_padded + 255) / 256),
                                     static_cast<uint32_t>(rows), 1, 256, 1, 1);
  t.launch("quantize_q8_1", cfg, args);
  const std::vector<uint8_t> got = out.download();
  const std::string where = "quantize_q8_1 " + std::to_string(rows) + " x " + std::to_string(kx) +
                            ", grid " + std::to_string(cfg.grid[0]) + ", " + t.seed_note();
  size_t bad = 0;
  for (size_t b = 0; b < sums.size() && bad < 5; ++b) {
    const uint8_t* g = got.data() + 36 * b;
    const uint8_t* w = want.data() + 36 * b;
    uint16_t s;
    std::memcpy(&s, g + 2, 2);
    const double gs = gg::half_to_float(s), ws = sums[b];
    const bool s_ok = gs == ws || std::fabs(gs - ws) <=
                                      ref::ulp_at<hkb::f16>(std::max(std::fabs(gs), std::fabs(ws)));
    if (std::memcmp(g, w, 2) != 0 || std::memcmp(g + 4, w + 4, 32) != 0 || !s_ok) {
      ADD_FAILURE() << where << ": block " << b << " (row " << b / (kx_padded / 32) << ") d "
                    << gg::half_to_float(static_cast<uint16_t>(g[0] | g[1] << 8)) << " want "
                    << gg::half_to_float(static_cast<uint16_t>(w[0] | w[1] << 8)) << ", s " << gs
                    << " want " << ws << ", qs "
                    << (std::memcmp(g + 4, w + 4, 32) ? "differ" : "equal");
      ++bad;
    }
  }
  for (size_t i = want.size(); i < got.size(); ++i) {
    ASSERT_EQ(got[i], 0xA5) << where << ": byte " << i << " past the output was written";
  }
}

TEST_F(QuantizedTest, QuantizeQ8_1MatchesTheReference) {
  for (size_t kx :
       {size_t{1}, size_t{31}, size_t{32}, size_t{33}, size_t{255}, size_t{512}, size_t{4097}}) {
    for (size_t rows : {size_t{1}, size_t{3}, size_t{70}})
      run_quantize_q8_1(*this, rows, kx, nullptr);
  }
}

TEST_F(QuantizedTest, QuantizeQ8_1AnyGrid) {
  const hkb::LaunchConfig one = hkb::LaunchConfig::make(1, 5, 1, 32, 1, 1);
  const hkb::LaunchConfig wide = hkb::LaunchConfig::make(50, 5, 1, 96, 1, 1);
  run_quantize_q8_1(*this, 5, 4097, &one);
  run_quantize_q8_1(*this, 5, 4097, &wide);
}

// kx = 0 with kx_padded = 0 writes nothing; so does a block size that is not a multiple of 32.
TEST_F(QuantizedTest, QuantizeQ8_1NothingToDo) {
  auto x = device().upload(std::vector<float>(64, 1.0f));
  auto out = device().upload(std::vector<uint8_t>(256, 0xA5));
  hkb::LaunchArgs args;
  args.arg(x.ptr()).arg(out.ptr()).arg(0).arg(0);
  launch("quantize_q8_1", hkb::LaunchConfig::make(1, 1, 1, 256, 1, 1), args);
  hkb::LaunchArgs odd;
  odd.arg(x.ptr()).arg(out.ptr()).arg(64).arg(512);
  launch("quantize_q8_1", hkb::LaunchConfig::make(1, 1, 1, 48, 1, 1), odd);
  for (uint8_t b : out.download()) ASSERT_EQ(b, 0xA5);
}

}  // namespace
