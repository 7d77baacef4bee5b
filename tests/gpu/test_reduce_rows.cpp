// REDUCE's row kernels on a device, with candle's launch geometry unless a test says otherwise:
// softmax (grid = rows, block (1,32,1)), rmsnorm/layernorm (block 32 below 1024 columns, else
// 1024) and rope (for_num_elems(el / 2)). Results are held to the CPU references of
// tests/reference/reduce_ref.hpp under the contract at the top of kernels/reduce.hip.
#include "gpu/gpu_test.hpp"
#include "reference/reduce_ref.hpp"

#include <algorithm>
#include <cmath>

namespace {

using gpu_test::GpuTest;

using FloatTypes = ::testing::Types<hkb::bf16, hkb::f16, float, double>;

uint32_t candle_norm_block(int n_cols) {
  return n_cols < 1024 ? 32 : 1024;
}

template <typename T>
T from(double v) {
  return ref::from_double<T>(v);
}

// ---------------------------------------------------------------------------------------------
// softmax

template <typename T>
class SoftmaxTest : public GpuTest {
 protected:
  // Runs softmax over `rows` x `cols` and checks every element. `block` defaults to candle's
  // (1, 32, 1). dst_shift: the output starts that many elements into its buffer (a different
  // offset within 16 bytes from the source's).
  void check(const std::vector<T>& x, size_t rows, int cols, hkb::LaunchConfig cfg,
             bool in_place = false, size_t dst_shift = 0) {
    SCOPED_TRACE(seed_note());
    SCOPED_TRACE("rows " + std::to_string(rows) + " cols " + std::to_string(cols) + " block " +
                 std::to_string(cfg.block[0]) + "x" + std::to_string(cfg.block[1]) +
                 (in_place ? " in place" : "") + " dst shift " + std::to_string(dst_shift));
    auto src = device().upload(x);
    auto dst = device().upload(std::vector<T>(x.size() + 1 + dst_shift, gpu_test::poison<T>()));
    const hkb_devptr out = static_cast<hkb_devptr>(dst.ptr() + dst_shift * sizeof(T));
    hkb::LaunchArgs args;
    args.arg(src.ptr()).arg(in_place ? src.ptr() : out).arg(cols);
    launch(std::string("softmax_") + ref::tag<T>(), cfg, args);
    const auto all = in_place ? src.download() : dst.download();
    const auto first = static_cast<std::ptrdiff_t>(in_place ? 0 : dst_shift);
    const std::vector<T> got(all.begin() + first, all.end());
    // Error bound in units of the compute type's eps (first order, u = eps / 2). Each thread folds
    // its share of the row in order, at most k = ceil(cols / threads) + 3 * V elements (16-byte
    // packs of V, a scalar head and tail), then the threads' parts meet in L tree levels (a
    // sequential fold for sizes that are not powers of two). Every element and every level adds
    // one rounding (u) and may rescale the part so far by exp(max_old - max_new): exp's error
    // (at most 2 ulp), one product rounding (u) and the rounded argument, at most W * u relative
    // to the row sum over all of a term's rescales (W: the exp-weighted distance of the entries
    // to the row max); the term's own exp adds 2 ulp + W * u once. The output exp(x - max) / sum
    // adds 2 ulp + |x - max| * u for its exp, u for the reciprocal and u for the product.
    const uint32_t threads = cfg.block[0] * cfg.block[1] * cfg.block[2];
    const double k = std::ceil(static_cast<double>(cols) / threads) + 3 * (16 / sizeof(T));
    const double levels = (threads & (threads - 1)) == 0 ? std::log2(static_cast<double>(threads))
                                                         : static_cast<double>(threads);
    const double e = ref::compute_eps<T>();
    size_t bad = 0;
    for (size_t r = 0; r < rows; ++r) {
      const T* xr = x.data() + r * cols;
      const auto want = ref::softmax_row(xr, cols);
      const double w = ref::softmax_weighted_spread(xr, cols);
      const double sum_rel = (k + levels) * (3 + w / 2) + 2 + w / 2;
      double m = -INFINITY;
      for (int j = 0; j < cols; ++j) m = std::max(m, ref::to_double(xr[j]));
      for (int j = 0; j < cols; ++j) {
        const T g = got[r * cols + j];
        // An infinite distance (a -inf entry) gives exactly 0, which needs no tolerance.
        const double dist = std::fabs(ref::to_double(xr[j]) - m);
        const double d = std::isfinite(dist) ? dist : 0;
        const double tol_rel = (4 + d / 2 + sum_rel) * (1 + 1e-3) * e;
        if (!ref::close_to(g, want[j], tol_rel * std::fabs(want[j])) && bad++ < 5) {
          ADD_FAILURE() << "row " << r << " col " << j << ": got " << ref::to_double(g) << " want "
                        << want[j];
        }
      }
    }
    EXPECT_EQ(bad, 0u);
    if (!in_place) {
      EXPECT_TRUE(ref::same_bits(all[x.size() + dst_shift], gpu_test::poison<T>()));
      for (size_t i = 0; i < dst_shift; ++i) {
        EXPECT_TRUE(ref::same_bits(all[i], gpu_test::poison<T>()));
      }
    }
  }
  static hkb::LaunchConfig candle(size_t rows) {
    return hkb::LaunchConfig::make(static_cast<uint32_t>(rows), 1, 1, 1, 32, 1);
  }
  // SoftmaxTest.SpecialRows at one width.
  void special_rows(int cols) {
    SCOPED_TRACE("cols " + std::to_string(cols));
    const double big = std::is_same_v<T, hkb::f16> ? 60000.0
                       : std::is_same_v<T, double> ? 1e300
                                                   : 3e38;
    std::vector<std::vector<double>> rows;
    std::uniform_real_distribution<double> u(-4, 4);
    auto random_row = [&] {
      std::vector<double> r(cols);
      for (auto& v : r) v = u(rng());
      return r;
    };
    auto r0 = random_row();
    for (int j = 0; j < cols; j += 3) r0[j] = big - j;  // overflow unless shifted
    rows.push_back(r0);
    auto r1 = random_row();
    for (int j = 0; j < cols; j += 3) r1[j] = -big;  // exp underflows to exactly 0
    rows.push_back(r1);
    auto r2 = random_row();
    r2[5] = r2[50] = -INFINITY;
    rows.push_back(r2);
    auto r3 = random_row();
    r3[77] = NAN;
    rows.push_back(r3);
    auto r4 = random_row();
    r4[12] = INFINITY;
    rows.push_back(r4);
    rows.push_back(std::vector<double>(cols, -INFINITY));
    std::vector<double> r6(cols, -INFINITY);
    r6[99] = 3.0;  // a single finite entry: 1 there, 0 elsewhere
    rows.push_back(r6);
    std::vector<T> x;
    for (const auto& r : rows) {
      for (double v : r) x.push_back(from<T>(v));
    }
    check(x, rows.size(), cols, candle(rows.size()));
    check(x, rows.size(), cols, hkb::LaunchConfig::make(rows.size(), 1, 1, 1024, 1, 1));
  }
};
TYPED_TEST_SUITE(SoftmaxTest, FloatTypes);

TYPED_TEST(SoftmaxTest, RowWidths) {
  using T = TypeParam;
  for (int cols : {1, 31, 32, 33, 128, 256, 1023, 1024, 1025, 65537}) {
    const size_t rows = cols > 4096 ? 2 : 5;
    this->check(gpu_test::random_vector<T>(this->rng(), rows * cols), rows, cols,
                this->candle(rows));
  }
}

TYPED_TEST(SoftmaxTest, OtherBlockShapesAndInPlace) {
  using T = TypeParam;
  const size_t rows = 4;
  const int cols = 2000;
  const auto x = gpu_test::random_vector<T>(this->rng(), rows * cols);
  for (uint32_t bx : {1u, 32u, 64u, 256u, 96u, 1024u}) {
    this->check(x, rows, cols, hkb::LaunchConfig::make(rows, 1, 1, bx, 1, 1));
  }
  this->check(x, rows, cols, hkb::LaunchConfig::make(rows, 1, 1, 2, 16, 1));
  this->check(x, rows, cols, this->candle(rows), true);
  // An output whose offset within 16 bytes differs from the input's (the write pass's scalar
  // path), and rows of about 18 KB that start off a 16-byte boundary (rows 1 and 2).
  this->check(x, rows, cols, this->candle(rows), false, 1);
  const int long_cols = 6000 / static_cast<int>(sizeof(T)) * 3 + 5;
  const auto xl = gpu_test::random_vector<T>(this->rng(), 3 * long_cols);
  for (uint32_t bx : {32u, 96u, 1024u}) {
    this->check(xl, 3, long_cols, hkb::LaunchConfig::make(3, 1, 1, bx, 1, 1));
  }
  // In place where each of candle's 32 threads holds its pack in registers.
  this->check(gpu_test::random_vector<T>(this->rng(), rows * 128), rows, 128, this->candle(rows),
              true);
}

// Huge magnitudes (exp would overflow without subtracting the max), -inf entries (exactly 0), and
// rows that must come out NaN: a NaN entry, a +inf entry, only -inf. 128 columns are whole packs
// of every type (the rows a thread holds in registers under candle's 32 threads); 100 are for f32.
TYPED_TEST(SoftmaxTest, SpecialRows) {
  for (const int cols : {100, 128}) this->special_rows(cols);
}

// ---------------------------------------------------------------------------------------------
// rmsnorm / layernorm

template <typename T>
class NormTest : public GpuTest {
 protected:
  // Checks rmsnorm (beta unused) or layernorm over rows x cols with candle's block for the width,
  // or `block` when given. alpha/beta may be absent (null pointers).
  void check(bool layer, size_t rows, int cols, bool with_alpha, bool with_beta,
             uint32_t block = 0) {
    check_rows(gpu_test::random_vector<T>(rng(), rows * cols), layer, rows, cols, with_alpha,
               with_beta, block);
  }
  // The same over the given rows x cols values x.
  void check_rows(const std::vector<T>& x, bool layer, size_t rows, int cols, bool with_alpha,
                  bool with_beta, uint32_t block = 0, bool in_place = false) {
    SCOPED_TRACE(seed_note());
    const uint32_t bs = block ? block : candle_norm_block(cols);
    SCOPED_TRACE(std::string(layer ? "layernorm" : "rmsnorm") + " rows " + std::to_string(rows) +
                 " cols " + std::to_string(cols) + " block " + std::to_string(bs) +
                 (with_alpha ? " alpha" : " no alpha") + (with_beta ? " beta" : " no beta") +
                 (in_place ? " in place" : ""));
    const float eps = 1e-5f;
    const auto alpha = gpu_test::random_vector<T>(rng(), cols);
    const auto beta = gpu_test::random_vector<T>(rng(), cols);
    std::vector<T> padded = x;
    padded.push_back(gpu_test::poison<T>());
    auto src = device().upload(padded);
    auto a = device().upload(alpha);
    auto b = device().upload(beta);
    auto dst = in_place ? device().upload(std::vector<T>(1))
                        : device().upload(std::vector<T>(x.size() + 1, gpu_test::poison<T>()));
    auto& out = in_place ? src : dst;
    const hkb_devptr a_ptr = with_alpha ? a.ptr() : hkb_devptr{0};
    const hkb_devptr b_ptr = with_beta ? b.ptr() : hkb_devptr{0};
    hkb::LaunchArgs args;
    args.arg(src.ptr()).arg(out.ptr()).arg(a_ptr);
    if (layer) args.arg(b_ptr);
    args.arg(cols).arg(static_cast<int>(bs)).arg(eps);
    launch(std::string(layer ? "layernorm_" : "rmsnorm_") + ref::tag<T>(),
           hkb::LaunchConfig::make(static_cast<uint32_t>(rows), 1, 1, bs, 1, 1), args);
    const auto got = out.download();
    const double e = ref::compute_eps<T>();
    size_t bad = 0;
    for (size_t r = 0; r < rows; ++r) {
      const T* xr = x.data() + r * cols;
      const T* ap = with_alpha ? alpha.data() : nullptr;
      std::vector<double> want(cols), mag(cols);
      if (layer) {
        const auto st = ref::layernorm_stats(xr, cols, eps);
        for (int j = 0; j < cols; ++j) {
          const double av = ap ? ref::to_double(ap[j]) : 1.0;
          const double bv = with_beta ? ref::to_double(beta[j]) : 0.0;
          want[j] = (ref::to_double(xr[j]) - st.mean) * st.inv * av + bv;
          // x - mean cancels: the error scales with |x| + |mean| and with the error of the
          // kernel's mean, a sum of the row's |x| (mean_abs), not with the result.
          mag[j] = (std::fabs(ref::to_double(xr[j])) + std::fabs(st.mean) + st.mean_abs) * st.inv *
                       std::fabs(av) +
                   std::fabs(bv);
        }
      } else {
        want = ref::rmsnorm_row(xr, ap, cols, eps);
        for (int j = 0; j < cols; ++j) mag[j] = std::fabs(want[j]);
      }
      // Mean and variance sums: each thread adds its share of the row in order (at most
      // cols / block + 16 terms: whole 16-byte packs), then log2(block) tree levels; then the
      // square root and two products.
      const double k = 8 + std::log2(static_cast<double>(bs)) + std::ceil(double(cols) / bs) + 16;
      for (int j = 0; j < cols; ++j) {
        const T g = got[r * cols + j];
        if (!ref::close_to(g, want[j], k * e * mag[j]) && bad++ < 5) {
          ADD_FAILURE() << "row " << r << " col " << j << ": got " << ref::to_double(g) << " want "
                        << want[j];
        }
      }
    }
    EXPECT_EQ(bad, 0u);
    EXPECT_TRUE(ref::same_bits(got[x.size()], gpu_test::poison<T>()));
  }
};
TYPED_TEST_SUITE(NormTest, FloatTypes);

TYPED_TEST(NormTest, RowWidths) {
  for (int cols : {1, 31, 32, 33, 128, 256, 1023, 1024, 1025, 65537}) {
    const size_t rows = cols > 4096 ? 2 : 5;
    this->check(false, rows, cols, true, false);
    this->check(true, rows, cols, true, true);
  }
}

// Aligned rows longer than the per-thread register cache (at most 4 packs x 1024 threads): the
// tail of the row is read again in the later passes.
TYPED_TEST(NormTest, RowsLongerThanTheRegisterCache) {
  const int cols = 5 * 1024 * static_cast<int>(16 / sizeof(TypeParam));
  this->check(false, 2, cols, true, false);
  this->check(true, 2, cols, true, true);
}

TYPED_TEST(NormTest, NullAlphaAndBeta) {
  for (int cols : {33, 4096}) {
    this->check(false, 3, cols, false, false);
    this->check(true, 3, cols, false, false);
    this->check(true, 3, cols, true, false);
    this->check(true, 3, cols, false, true);
  }
}

// 1000 values: rows of at most 4 KB, which blocks of several whole waves give to their first wave.
TYPED_TEST(NormTest, OtherBlockSizes) {
  for (int cols : {3000, 1000}) {
    for (uint32_t bs : {1u, 64u, 96u, 256u, 1000u}) {
      this->check(false, 3, cols, true, false, bs);
      this->check(true, 3, cols, true, true, bs);
    }
  }
}

// Rows longer than 4 KB with fewer 16-byte packs than the block has threads: only the waves the
// packs fill take the row (the last one partly), the block's other waves leave before its
// barriers. 1100 f32 are 275 packs, 2056 2-byte values 257 (f64: 550 / 1028 packs); 200 values in
// 256 threads take 224 threads, and 4100 values have more packs or values than the block.
TYPED_TEST(NormTest, RowsWithFewerPacksThanTheBlock) {
  const int cols = sizeof(TypeParam) == 2 ? 2056 : 1100;
  for (bool layer : {false, true}) {
    this->check(layer, 4, cols, true, layer);
    this->check(layer, 4, cols, false, false);
    this->check(layer, 3, 200, true, layer, 256);
    this->check(layer, 3, 4100, true, layer);
  }
}

// Rows of at most one 16-byte pack a thread go to candle's blocks by groups (tuning::kNormGroup):
// row counts that fill no group, one, and a last one partly, at the width of one pack a thread of
// the 1024-thread block and at a trimmed one; the value past the last row stays untouched.
TYPED_TEST(NormTest, RowsByGroups) {
  const int full = 1024 * static_cast<int>(16 / sizeof(TypeParam));
  const int trimmed = sizeof(TypeParam) == 2 ? 2056 : 1100;
  for (size_t rows : {1, 2, 3, 7}) {
    for (int cols : {full, trimmed}) {
      this->check(false, rows, cols, true, false);
      this->check(true, rows, cols, true, true);
    }
  }
  this->check(false, 3, full, false, false);
  this->check(true, 3, full, false, false);
  this->check(true, 5, full, true, false);
  this->check(true, 5, full, false, true);
}

// More rows than kResidentBlockBound (1024), the grids a resident split would take over, each at
// most 4 KB (the rows by groups of blocks) or a little more: rows of 4 KB, of candle's 1024 values,
// of a pack and of an odd count of packs; candle's block and 256 threads; alpha / beta absent; in
// place (a block reads its row before it writes it).
TYPED_TEST(NormTest, ManyShortRows) {
  using T = TypeParam;
  const int V = 16 / static_cast<int>(sizeof(T));
  const int four_kb = 4096 / static_cast<int>(sizeof(T));
  const size_t rows = 1025;
  uint32_t bs = 256;
  for (int cols : {four_kb, 1024, V, 37 * V, four_kb + V}) {
    bs = bs == 256 ? 1024 : 256;
    this->check(false, rows, cols, true, false, bs);
    this->check(true, rows, cols, true, true, bs);
  }
  this->check(false, rows, 1024, false, false, 256);
  this->check(true, rows, 1024, false, true, 256);
  this->check(true, rows, 1024, true, false, 256);
  const auto x = gpu_test::random_vector<T>(this->rng(), rows * four_kb);
  this->check_rows(x, false, rows, four_kb, true, false, 1024, true);
  this->check_rows(x, true, rows, four_kb, true, true, 256, true);
}

// No rows (an empty grid) and rows of no values (n_cols 0): nothing is written.
TYPED_TEST(NormTest, EmptyShapes) {
  for (bool layer : {false, true}) {
    this->check(layer, 0, 8192, true, layer);
    this->check(layer, 3, 0, true, layer);
  }
}

// Special rows at widths of every path (candle's 32-thread block, pairs of rows of one pack a
// thread, a row a 1024-thread block), and over 1024 rows of at most 4 KB: a NaN or a +inf entry
// (rmsnorm: 0 for the finite values and NaN at the inf; layernorm: all NaN), magnitudes whose
// squares the f32 sums still hold, all zeros, all equal (layernorm's variance 0).
TYPED_TEST(NormTest, SpecialRows) {
  using T = TypeParam;
  const double big = std::is_same_v<T, hkb::f16> ? 60000.0
                     : std::is_same_v<T, double> ? 1e150
                                                 : 1e17;
  const int full = 1024 * static_cast<int>(16 / sizeof(T));
  std::uniform_real_distribution<double> u(-4, 4);
  const int four_kb = 4096 / static_cast<int>(sizeof(T));
  for (int cols : {100, four_kb, full, 3 * full}) {
    std::vector<T> x;
    auto add_row = [&](auto value) {
      for (int j = 0; j < cols; ++j) x.push_back(from<T>(value(j)));
    };
    add_row([&](int j) { return j == 7 ? NAN : u(this->rng()); });
    add_row([&](int j) { return j == cols - 1 ? INFINITY : u(this->rng()); });
    add_row([&](int j) { return j % 3 == 0 ? big : u(this->rng()); });
    add_row([&](int j) { return j % 2 == 0 ? -big : big; });
    add_row([](int) { return 0.0; });
    add_row([](int) { return 1.5; });
    add_row([&](int) { return u(this->rng()); });
    for (bool layer : {false, true}) this->check_rows(x, layer, 7, cols, true, layer);
    // The same rows 147 times: 1029 rows of at most 4 KB.
    if (cols > four_kb) continue;
    std::vector<T> many;
    for (int rep = 0; rep < 147; ++rep) many.insert(many.end(), x.begin(), x.end());
    for (bool layer : {false, true}) this->check_rows(many, layer, 1029, cols, true, layer, 1024);
  }
}

// ---------------------------------------------------------------------------------------------
// rope

template <typename T>
class RopeTest : public GpuTest {
 protected:
  // variant 0 rope_i, 1 rope, 2 rope_thd, with cos/sin (t, d/2) or (b, t, d/2); `grid` 0 means
  // candle's for_num_elems(el / 2).
  void check(int variant, size_t b, size_t h, size_t t, size_t d, bool per_batch,
             uint32_t grid = 0) {
    check_x(gpu_test::random_vector<T>(rng(), b * h * t * d), variant, b, h, t, d, per_batch, grid);
  }
  // The same over the given b * h * t * d values x.
  void check_x(const std::vector<T>& x, int variant, size_t b, size_t h, size_t t, size_t d,
               bool per_batch, uint32_t grid = 0) {
    SCOPED_TRACE(seed_note());
    static const char* names[] = {"rope_i_", "rope_", "rope_thd_"};
    SCOPED_TRACE(std::string(names[variant]) + " b " + std::to_string(b) + " h " +
                 std::to_string(h) + " t " + std::to_string(t) + " d " + std::to_string(d) +
                 (per_batch ? " 3-D cos/sin" : " 2-D cos/sin") + " grid " + std::to_string(grid));
    const size_t el = b * h * t * d;
    const size_t tab = (per_batch ? b : 1) * t * (d / 2);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<T> cos(tab), sin(tab);
    for (size_t i = 0; i < tab; ++i) cos[i] = from<T>(u(rng())), sin[i] = from<T>(u(rng()));
    auto src = device().upload(x);
    auto c = device().upload(cos);
    auto s = device().upload(sin);
    auto dst = device().upload(std::vector<T>(el + 1, gpu_test::poison<T>()));
    const uint32_t stride_b = per_batch ? static_cast<uint32_t>(h * t * d) : 0;
    hkb::LaunchArgs args;
    args.arg(src.ptr()).arg(c.ptr()).arg(s.ptr()).arg(dst.ptr());
    if (variant == 2) {
      args.arg(static_cast<uint32_t>(b))
          .arg(static_cast<uint32_t>(t))
          .arg(static_cast<uint32_t>(h))
          .arg(static_cast<uint32_t>(d));
    } else {
      args.arg(static_cast<uint32_t>(b * h)).arg(static_cast<uint32_t>(t * d));
      if (variant == 1) args.arg(static_cast<uint32_t>(d));
    }
    args.arg(stride_b);
    const auto cfg = grid ? hkb::LaunchConfig::make(grid, 1, 1, 256, 1, 1)
                          : hkb::LaunchConfig::for_num_elems(static_cast<uint32_t>(el / 2));
    launch(std::string(names[variant]) + ref::tag<T>(), cfg, args);
    const auto got = dst.download();
    const auto want = ref::rope(variant, x, cos, sin, b, h, t, d, per_batch);
    size_t bad = 0;
    for (size_t i = 0; i < el; ++i) {
      if (!ref::close_to(got[i], want.value[i], 4 * ref::compute_eps<T>() * want.magnitude[i]) &&
          bad++ < 5) {
        ADD_FAILURE() << "element " << i << ": got " << ref::to_double(got[i]) << " want "
                      << want.value[i];
      }
    }
    EXPECT_EQ(bad, 0u);
    EXPECT_TRUE(ref::same_bits(got[el], gpu_test::poison<T>()));
  }
};
TYPED_TEST_SUITE(RopeTest, FloatTypes);

TYPED_TEST(RopeTest, TwoAndThreeDimTables) {
  for (int variant = 0; variant < 3; ++variant) {
    for (bool per_batch : {false, true}) {
      this->check(variant, 2, 3, 5, 8, per_batch);
      this->check(variant, 3, 4, 33, 64, per_batch);
      this->check(variant, 1, 2, 7, 6, per_batch);
    }
  }
}

// No pairs (b, h or t 0: an empty grid), and special values: NaN, infinities and values near the
// type's largest in x (cos / sin stay in [-1, 1], so the products overflow only where x is large).
TYPED_TEST(RopeTest, EmptyAndSpecialValues) {
  using T = TypeParam;
  const double big = std::is_same_v<T, hkb::f16> ? 60000.0
                     : std::is_same_v<T, double> ? 1e300
                                                 : 3e38;
  for (int variant = 0; variant < 3; ++variant) {
    this->check(variant, 0, 4, 8, 16, false);
    this->check(variant, 2, 3, 0, 16, true);
    const size_t b = 2, h = 3, t = 5, d = 16;
    std::vector<T> x = gpu_test::random_vector<T>(this->rng(), b * h * t * d);
    const double specials[] = {NAN, INFINITY, -INFINITY, big, -big, 0.0};
    for (size_t i = 0; i < x.size(); i += 7) x[i] = from<T>(specials[(i / 7) % 6]);
    this->check_x(x, variant, b, h, t, d, false);
    this->check_x(x, variant, b, h, t, d, true, 2);
  }
}

TYPED_TEST(RopeTest, SmallGridAndLargeTensor) {
  for (int variant = 0; variant < 3; ++variant) {
    this->check(variant, 2, 8, 64, 128, true, 5);
    this->check(variant, 2, 16, 256, 128, false);  // 2^20 elements
  }
}

}  // namespace
