// BINARY on the device against the CPU reference (tests/reference/binary_ref.hpp): every op of
// every dtype (candle's 96 symbols and hkb's i16/i32 ones), contiguous inputs with and without an
// info array, every layout case (lhs only / rhs only / neither contiguous, broadcast in either
// operand, offset and misaligned views, size-1 and empty dims), sizes 0 .. 2^20+7, special values,
// candle's NaN rules of max/min, fp8 saturation, candle's geometry, grids smaller than the work, a
// misaligned output and offsets past 2^32. Results must be exact: the reference rounds once from
// double, which for one op on values of T equals the kernel's float-then-T rounding.
#include "gpu/gpu_test.hpp"
#include "reference/binary_ref.hpp"

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace {

using gpu_test::GpuTest;
using gpu_test::Layout;
using ref::BinaryOp;

template <typename T>
class BinaryTest : public GpuTest {};

using BinaryTypes = ::testing::Types<float, double, hkb::f16, hkb::bf16, hkb::f8e4m3, uint8_t,
                                     uint32_t, int16_t, int32_t, int64_t>;
TYPED_TEST_SUITE(BinaryTest, BinaryTypes);

template <typename T>
std::string symbol(BinaryOp op) {
  return std::string(ref::binary_op_prefix(op)) + "_" + ref::tag<T>();
}

// A value of T from a double: floats rounded, integers converted through int64 (so -1 is the
// all-ones value of an unsigned type).
template <typename T>
T value_of(double d) {
  if constexpr (ref::is_float_v<T>) {
    return ref::from_double<T>(d);
  } else {
    return static_cast<T>(static_cast<int64_t>(d));
  }
}

// Random operands, a quarter of them from a small pool so that equal operands (comparisons,
// max/min ties, x - x) occur for every dtype.
template <typename T>
std::vector<T> operand_values(std::mt19937_64& rng, size_t n) {
  std::vector<T> v = gpu_test::random_vector<T>(rng, std::max<size_t>(n, 1));
  const double pool[] = {-2.0, -1.0, 0.0, 0.5, 1.0, 3.0};
  for (auto& x : v) {
    if (rng() % 4 == 0) x = value_of<T>(pool[rng() % 6]);
  }
  return v;
}

// Integer division: no zero divisor and no -1 (so no INT_MIN / -1), which the kernel leaves
// unspecified.
template <typename T>
void make_safe_divisors(BinaryOp op, std::vector<T>* v) {
  if constexpr (!ref::is_float_v<T>) {
    if (op != BinaryOp::kDiv) return;
    for (auto& x : *v) {
      if (x == T(0) || (std::is_signed_v<T> && x == T(-1))) x = T(3);
    }
  }
}

// How to launch, beyond candle's defaults (for_num_elems, info array, aligned output).
struct LaunchHow {
  const hkb::LaunchConfig* cfg = nullptr;
  bool null_info = false;
  size_t out_offset = 0;  // elements before the output: misaligns it
};

constexpr size_t kGuard = 16;  // poisoned elements after the output, to catch overruns

template <typename T>
std::string show(T v) {
  std::ostringstream os;
  os << ref::to_double(v);
  return os.str();
}

// Launches one op over views `lhs` and `rhs` (same dims) of two base buffers and checks every
// output element against the reference and every guard element against the poison.
template <typename T, typename TO>
void run_binary(GpuTest& t, BinaryOp op, const Layout& lhs, const Layout& rhs,
                const std::vector<T>& lhs_base, const std::vector<T>& rhs_base,
                const LaunchHow& how) {
  const std::string name = symbol<T>(op);
  SCOPED_TRACE(name + " lhs " + lhs.str() + " rhs " + rhs.str() + ", " + t.seed_note());
  ASSERT_EQ(lhs.dims, rhs.dims);
  const size_t n = lhs.numel();
  auto dl = t.device().upload(lhs_base);
  auto dr = t.device().upload(rhs_base);
  const size_t out_len = how.out_offset + n + kGuard;
  const std::vector<TO> poisoned(out_len, gpu_test::poison<TO>());
  auto out = t.device().upload(poisoned);
  std::vector<size_t> info = lhs.dims;
  info.insert(info.end(), lhs.strides.begin(), lhs.strides.end());
  info.insert(info.end(), rhs.strides.begin(), rhs.strides.end());
  if (info.empty()) info.push_back(0);  // 0-d: num_dims 0, the array is never read
  auto dinfo = t.device().upload(info);
  hkb::LaunchArgs args;
  args.arg(n).arg(lhs.dims.size()).arg(how.null_info ? hkb_devptr{0} : dinfo.ptr());
  args.arg(dl.ptr(lhs.offset)).arg(dr.ptr(rhs.offset)).arg(out.ptr(how.out_offset));
  const std::vector<TO> got = t.launch_elementwise(name, n, args, out, poisoned, how.cfg);
  size_t bad = 0;
  std::ostringstream os;
  for (size_t i = 0; i < out_len; ++i) {
    TO want = gpu_test::poison<TO>();
    T a{}, b{};
    const bool in_view = i >= how.out_offset && i < how.out_offset + n;
    if (in_view) {
      const size_t e = i - how.out_offset;
      a = lhs_base[lhs.index(e)];
      b = rhs_base[rhs.index(e)];
      if constexpr (std::is_same_v<TO, uint8_t> && !std::is_same_v<T, uint8_t>) {
        want = ref::binary_compare(op, a, b);
      } else if constexpr (std::is_same_v<T, uint8_t>) {
        want = ref::is_comparison(op) ? ref::binary_compare(op, a, b) : ref::binary_value(op, a, b);
      } else {
        want = ref::binary_value(op, a, b);
      }
    }
    if (ref::same_value(got[i], want)) continue;
    if (bad < 5) {
      os << "\n  out[" << i << "]";
      if (in_view) os << " = op(" << show(a) << ", " << show(b) << ")";
      os << ": got " << show(got[i]) << " want " << show(want);
    }
    ++bad;
  }
  EXPECT_EQ(bad, 0u) << bad << " wrong of " << out_len << " (" << n << " outputs)" << os.str();
}

template <typename T>
void check_binary(GpuTest& t, BinaryOp op, const Layout& lhs, const Layout& rhs,
                  const std::vector<T>& lhs_base, std::vector<T> rhs_base,
                  const LaunchHow& how = {}) {
  make_safe_divisors(op, &rhs_base);
  if (ref::is_comparison(op)) {
    run_binary<T, uint8_t>(t, op, lhs, rhs, lhs_base, rhs_base, how);
  } else {
    run_binary<T, T>(t, op, lhs, rhs, lhs_base, rhs_base, how);
  }
}

// Random bases for the two views, then check.
template <typename T>
void check_random(GpuTest& t, BinaryOp op, const Layout& lhs, const Layout& rhs,
                  const LaunchHow& how = {}) {
  const auto a = operand_values<T>(t.rng(), lhs.storage_size());
  const auto b = operand_values<T>(t.rng(), rhs.storage_size());
  check_binary<T>(t, op, lhs, rhs, a, b, how);
}

Layout strided(std::vector<size_t> dims, std::vector<size_t> strides, size_t offset = 0) {
  Layout l;
  l.dims = std::move(dims);
  l.strides = std::move(strides);
  l.offset = offset;
  return l;
}

struct LayoutCase {
  const char* what;
  Layout lhs, rhs;
};

// Every layout case of candle's binary kernels (both / lhs only / rhs only / neither contiguous)
// and the shapes hkb's row merging special-cases.
std::vector<LayoutCase> layout_cases() {
  using L = Layout;
  return {
      {"both contiguous, info given", L::contiguous({7, 9, 11}), L::contiguous({7, 9, 11})},
      {"rhs transposed", L::contiguous({33, 31}), strided({33, 31}, {1, 33})},
      {"lhs transposed", strided({33, 31}, {1, 33}), L::contiguous({33, 31})},
      {"both transposed, offset", strided({33, 31}, {1, 33}, 2), strided({33, 31}, {1, 33}, 5)},
      {"3-d permutation", strided({3, 5, 7}, {1, 21, 3}), strided({3, 5, 7}, {35, 7, 1}, 1)},
      {"rhs row broadcast", L::contiguous({19, 67}), strided({19, 67}, {0, 1}, 3)},
      {"rhs column broadcast", L::contiguous({67, 19}), strided({67, 19}, {1, 0})},
      {"lhs row broadcast", strided({19, 67}, {0, 1}), L::contiguous({19, 67})},
      {"lhs column broadcast", strided({67, 19}, {1, 0}, 1), L::contiguous({67, 19})},
      {"rhs scalar broadcast", L::contiguous({13, 29}), strided({13, 29}, {0, 0}, 5)},
      {"outer product", strided({17, 23}, {1, 0}), strided({17, 23}, {0, 1})},
      {"middle dim broadcast", L::contiguous({4, 5, 6}), strided({4, 5, 6}, {6, 0, 1})},
      {"leading dim broadcast", strided({3, 4, 10}, {0, 10, 1}), L::contiguous({3, 4, 10})},
      {"rows shorter than a pack", L::contiguous({50, 3}), strided({50, 3}, {1, 0})},
      {"size-1 dims with odd strides", strided({3, 1, 5}, {5, 999, 1}),
       strided({3, 1, 5}, {0, 7, 1})},
      {"misaligned contiguous views", strided({1027}, {1}, 3), strided({1027}, {1}, 1)},
      {"stepped slices", strided({513}, {2}, 1), strided({513}, {3})},
      {"0-d scalars", strided({}, {}, 2), strided({}, {}, 0)},
      {"empty dim", L::contiguous({4, 0, 3}), strided({4, 0, 3}, {0, 3, 1})},
  };
}

TYPED_TEST(BinaryTest, EveryOpContiguousSizes) {
  using T = TypeParam;
  for (BinaryOp op : ref::kAllBinaryOps) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{31}, size_t{1025}}) {
      LaunchHow how;
      how.null_info = true;  // candle passes null when both inputs are contiguous
      check_random<T>(*this, op, Layout::contiguous({n}), Layout::contiguous({n}), how);
    }
  }
}

TYPED_TEST(BinaryTest, LargeContiguous) {
  using T = TypeParam;
  const size_t n = gpu_test::size_cap((size_t{1} << 20) + 7);
  LaunchHow how;
  how.null_info = true;
  for (BinaryOp op : {BinaryOp::kAdd, BinaryOp::kMaximum, BinaryOp::kLt}) {
    check_random<T>(*this, op, Layout::contiguous({n}), Layout::contiguous({n}), how);
  }
  // Offset (misaligned) inputs through a null info, as candle passes sliced contiguous tensors.
  Layout a = Layout::contiguous({n}), b = Layout::contiguous({n});
  a.offset = 1;
  b.offset = 5;
  check_random<T>(*this, BinaryOp::kMul, a, b, how);
}

TYPED_TEST(BinaryTest, EveryLayoutCase) {
  using T = TypeParam;
  for (const LayoutCase& c : layout_cases()) {
    SCOPED_TRACE(c.what);
    for (BinaryOp op : ref::kAllBinaryOps) check_random<T>(*this, op, c.lhs, c.rhs);
  }
}

TYPED_TEST(BinaryTest, LargeBroadcasts) {
  using T = TypeParam;
  const std::vector<LayoutCase> cases = {
      {"row vector", Layout::contiguous({1024, 1027}), strided({1024, 1027}, {0, 1})},
      {"column vector", Layout::contiguous({1027, 1024}), strided({1027, 1024}, {1, 0})},
      {"transposed lhs, row vector", strided({1024, 1025}, {1, 1024}),
       strided({1024, 1025}, {0, 1})},
  };
  for (const LayoutCase& c : cases) {
    SCOPED_TRACE(c.what);
    check_random<T>(*this, BinaryOp::kAdd, c.lhs, c.rhs);
    check_random<T>(*this, BinaryOp::kGt, c.lhs, c.rhs);
  }
}

// The size at which the tuned grid has every block work and candle's only its first blocks
// (GpuTest::tuned_split_size): contiguous, a row vector broadcast and a transposed lhs.
TYPED_TEST(BinaryTest, TunedAndCandleSplits) {
  using T = TypeParam;
  const size_t n = this->tuned_split_size();
  LaunchHow how;
  how.null_info = true;
  check_random<T>(*this, BinaryOp::kAdd, Layout::contiguous({n}), Layout::contiguous({n}), how);
  const size_t rows = n / 1027 + 1;
  check_random<T>(*this, BinaryOp::kMul, Layout::contiguous({rows, 1027}),
                  strided({rows, 1027}, {0, 1}));
  check_random<T>(*this, BinaryOp::kLt, strided({n / 3, 3}, {1, n / 3}),
                  Layout::contiguous({n / 3, 3}));
}

TYPED_TEST(BinaryTest, GridSmallerThanWork) {
  using T = TypeParam;
  const auto small = hkb::LaunchConfig::make(3, 1, 1, 64, 1, 1);
  const auto odd = hkb::LaunchConfig::make(5, 1, 1, 37, 1, 1);
  const auto single = hkb::LaunchConfig::make(1, 1, 1, 1, 1, 1);
  LaunchHow how;
  how.cfg = &small;
  how.null_info = true;
  check_random<T>(*this, BinaryOp::kAdd, Layout::contiguous({100003}), Layout::contiguous({100003}),
                  how);
  how.null_info = false;
  check_random<T>(*this, BinaryOp::kMaximum, Layout::contiguous({257, 389}),
                  strided({257, 389}, {0, 1}), how);
  how.cfg = &odd;
  check_random<T>(*this, BinaryOp::kSub, strided({301, 7}, {1, 301}), Layout::contiguous({301, 7}),
                  how);
  check_random<T>(*this, BinaryOp::kEq, Layout::contiguous({129, 77}), strided({129, 77}, {1, 0}),
                  how);
  how.cfg = &single;
  check_random<T>(*this, BinaryOp::kMul, Layout::contiguous({31, 33}), strided({31, 33}, {0, 1}),
                  how);
  for (const hkb::LaunchConfig& rows : this->grids_with_rows()) {
    how.cfg = &rows;
    how.null_info = true;
    check_random<T>(*this, BinaryOp::kAdd, Layout::contiguous({100003}),
                    Layout::contiguous({100003}), how);
    how.null_info = false;
    check_random<T>(*this, BinaryOp::kMaximum, Layout::contiguous({257, 389}),
                    strided({257, 389}, {0, 1}), how);
    check_random<T>(*this, BinaryOp::kSub, strided({301, 7}, {1, 301}),
                    Layout::contiguous({301, 7}), how);
  }
}

TYPED_TEST(BinaryTest, MisalignedOutput) {
  using T = TypeParam;
  LaunchHow how;
  how.out_offset = 1;
  how.null_info = true;
  check_random<T>(*this, BinaryOp::kAdd, Layout::contiguous({1025}), Layout::contiguous({1025}),
                  how);
  how.null_info = false;
  check_random<T>(*this, BinaryOp::kAdd, Layout::contiguous({33, 65}), strided({33, 65}, {0, 1}),
                  how);
  how.out_offset = 3;
  check_random<T>(*this, BinaryOp::kNe, strided({33, 65}, {1, 33}), strided({33, 65}, {1, 0}), how);
}

// Every pair of special values (floats: NaN, +-inf, -0.0, subnormals, the largest finite, values
// past fp8's range; integers: the extremes) under every op.
TYPED_TEST(BinaryTest, SpecialValuePairs) {
  using T = TypeParam;
  std::vector<T> pool;
  if constexpr (ref::is_float_v<T>) {
    for (double v : gpu_test::special_values<T>()) pool.push_back(ref::from_double<T>(v));
  } else {
    pool = {std::numeric_limits<T>::min(),
            std::numeric_limits<T>::max(),
            T(0),
            T(1),
            T(2),
            static_cast<T>(std::numeric_limits<T>::max() - 1),
            static_cast<T>(-1)};
  }
  const size_t m = pool.size();
  std::vector<T> lhs(m * m), rhs(m * m);
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < m; ++j) {
      lhs[i * m + j] = pool[i];
      rhs[i * m + j] = pool[j];
    }
  }
  LaunchHow how;
  how.null_info = true;
  for (BinaryOp op : ref::kAllBinaryOps) {
    check_binary<T>(*this, op, Layout::contiguous({m * m}), Layout::contiguous({m * m}), lhs, rhs,
                    how);
  }
}

// candle's NaN rules of max/min, spelled out: f32, f64 and f8_e4m3 ignore a NaN operand (fmax);
// f16 and bf16 return NaN (__hmax_nan). Zeros order as -0.0 < +0.0.
TYPED_TEST(BinaryTest, MaxMinNanRules) {
  using T = TypeParam;
  if constexpr (!ref::is_float_v<T>) {
    GTEST_SKIP() << "integers have no NaN";
  } else {
    const bool propagates = std::is_same_v<T, hkb::f16> || std::is_same_v<T, hkb::bf16>;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const std::vector<double> a = {nan, 1.0, nan, -0.0, 0.0, 2.0, -0.0};
    const std::vector<double> b = {1.0, nan, nan, 0.0, -0.0, -3.0, -0.0};
    const std::vector<double> want_max =
        propagates ? std::vector<double>{nan, nan, nan, 0.0, 0.0, 2.0, -0.0}
                   : std::vector<double>{1.0, 1.0, nan, 0.0, 0.0, 2.0, -0.0};
    const std::vector<double> want_min =
        propagates ? std::vector<double>{nan, nan, nan, -0.0, -0.0, -3.0, -0.0}
                   : std::vector<double>{1.0, 1.0, nan, -0.0, -0.0, -3.0, -0.0};
    std::vector<T> ta, tb;
    for (size_t i = 0; i < a.size(); ++i) {
      ta.push_back(ref::from_double<T>(a[i]));
      tb.push_back(ref::from_double<T>(b[i]));
    }
    auto da = this->device().upload(ta);
    auto db = this->device().upload(tb);
    for (bool is_max : {true, false}) {
      const BinaryOp op = is_max ? BinaryOp::kMaximum : BinaryOp::kMinimum;
      auto out = this->device().upload(std::vector<T>(a.size(), gpu_test::poison<T>()));
      hkb::LaunchArgs args;
      args.arg(a.size())
          .arg(size_t{1})
          .arg(hkb_devptr{0})
          .arg(da.ptr())
          .arg(db.ptr())
          .arg(out.ptr());
      this->launch(symbol<T>(op), hkb::LaunchConfig::for_num_elems(static_cast<uint32_t>(a.size())),
                   args);
      const std::vector<T> got = out.download();
      const std::vector<double>& want = is_max ? want_max : want_min;
      for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_TRUE(ref::same_value(got[i], ref::from_double<T>(want[i])))
            << symbol<T>(op) << "(" << a[i] << ", " << b[i] << ") = " << show(got[i]) << " (sign "
            << std::signbit(ref::to_double(got[i])) << "), want " << want[i];
      }
    }
  }
}

// fp8 comparisons (computed from an order key of the bits, not through float) against the
// reference's comparison of the values, for every pair of the 256 codes: both NaN codes, both
// zeros, the subnormals and +-448 included.
TEST_F(GpuTest, Fp8ComparisonsOfEveryPairOfCodes) {
  std::vector<hkb::f8e4m3> lhs, rhs;
  for (uint32_t a = 0; a < 256; ++a) {
    for (uint32_t b = 0; b < 256; ++b) {
      lhs.push_back(hkb::f8e4m3{static_cast<uint8_t>(a)});
      rhs.push_back(hkb::f8e4m3{static_cast<uint8_t>(b)});
    }
  }
  const Layout all = Layout::contiguous({lhs.size()});
  const Layout transposed = strided({256, 256}, {1, 256});  // the strided path, every pair too
  for (BinaryOp op :
       {BinaryOp::kEq, BinaryOp::kNe, BinaryOp::kLt, BinaryOp::kLe, BinaryOp::kGt, BinaryOp::kGe}) {
    LaunchHow how;
    how.null_info = true;
    check_binary<hkb::f8e4m3>(*this, op, all, all, lhs, rhs, how);
    check_binary<hkb::f8e4m3>(*this, op, transposed, transposed, lhs, rhs);
  }
}

// fp8 results saturate to +-448 (overflow and infinities), NaN gives 0x7F, and values below the
// smallest subnormal round to nearest even. Expected codes are written out by hand.
TEST_F(GpuTest, Fp8SaturationAndRounding) {
  struct Case {
    BinaryOp op;
    uint8_t a, b, want;
  };
  // Codes (sign, 4 exponent bits with bias 7, 3 mantissa bits): 0x7E = 448, 0xFE = -448,
  // 0x7F / 0xFF = NaN, 0x38 = 1.0, 0x30 = 0.5, subnormals 0x01 = 2^-9, 0x02 = 2^-8,
  // 0x03 = 3 * 2^-9, 0x81 = -2^-9, and 0x00 = +0.0, 0x80 = -0.0.
  const std::vector<Case> cases = {
      {BinaryOp::kAdd, 0x7E, 0x7E, 0x7E},      // 448 + 448 = 896 -> 448
      {BinaryOp::kAdd, 0xFE, 0xFE, 0xFE},      // -448 + -448 -> -448
      {BinaryOp::kMul, 0x7E, 0x38, 0x7E},      // 448 * 1 = 448 exactly
      {BinaryOp::kDiv, 0x38, 0x00, 0x7E},      // 1 / +0 = +inf -> 448
      {BinaryOp::kDiv, 0x38, 0x80, 0xFE},      // 1 / -0 = -inf -> -448
      {BinaryOp::kSub, 0x7E, 0xFE, 0x7E},      // 448 - (-448) -> 448
      {BinaryOp::kAdd, 0x7F, 0x38, 0x7F},      // NaN + 1 = NaN
      {BinaryOp::kDiv, 0x00, 0x00, 0x7F},      // 0 / 0 = NaN
      {BinaryOp::kMul, 0x01, 0x30, 0x00},      // 2^-10: a tie between 0 and 2^-9 -> even (0)
      {BinaryOp::kMul, 0x03, 0x30, 0x02},      // 1.5 * 2^-9: a tie between codes 1 and 2 -> 2
      {BinaryOp::kMul, 0x81, 0x30, 0x80},      // -2^-10 -> -0.0
      {BinaryOp::kMaximum, 0xFF, 0x38, 0x38},  // the other NaN code is NaN too: ignored by max
      {BinaryOp::kMinimum, 0x7F, 0xFF, 0x7F},  // both NaN -> NaN
  };
  std::vector<hkb::f8e4m3> a, b;
  for (const Case& c : cases) {
    a.push_back(hkb::f8e4m3{c.a});
    b.push_back(hkb::f8e4m3{c.b});
  }
  auto da = device().upload(a);
  auto db = device().upload(b);
  for (size_t i = 0; i < cases.size(); ++i) {
    auto out = device().upload(std::vector<hkb::f8e4m3>(1, gpu_test::poison<hkb::f8e4m3>()));
    hkb::LaunchArgs args;
    args.arg(size_t{1})
        .arg(size_t{1})
        .arg(hkb_devptr{0})
        .arg(da.ptr(i))
        .arg(db.ptr(i))
        .arg(out.ptr());
    const std::string name = symbol<hkb::f8e4m3>(cases[i].op);
    launch(name, hkb::LaunchConfig::for_num_elems(1), args);
    const hkb::f8e4m3 got = out.download()[0];
    const bool both_nan = (got.bits & 0x7F) == 0x7F && (cases[i].want & 0x7F) == 0x7F;
    EXPECT_TRUE(got.bits == cases[i].want || both_nan)
        << name << "(0x" << std::hex << int(cases[i].a) << ", 0x" << int(cases[i].b) << ") = 0x"
        << int(got.bits) << ", want 0x" << int(cases[i].want);
  }
  // Comparisons see the values: NaN is unequal to itself, -0.0 equals +0.0.
  auto out = device().upload(std::vector<uint8_t>(2, 0xA5));
  const std::vector<hkb::f8e4m3> x = {hkb::f8e4m3{0xFF}, hkb::f8e4m3{0x80}};
  const std::vector<hkb::f8e4m3> y = {hkb::f8e4m3{0xFF}, hkb::f8e4m3{0x00}};
  auto dx = device().upload(x);
  auto dy = device().upload(y);
  hkb::LaunchArgs args;
  args.arg(size_t{2}).arg(size_t{1}).arg(hkb_devptr{0}).arg(dx.ptr()).arg(dy.ptr()).arg(out.ptr());
  launch("eq_f8_e4m3", hkb::LaunchConfig::for_num_elems(2), args);
  EXPECT_EQ(out.download(), (std::vector<uint8_t>{0, 1}));
}

// Offsets past 2^32 elements: candle's 32-bit index math would wrap here. Only the touched bytes
// of the 4 GiB lhs buffer are written.
TEST_F(GpuTest, BinaryOffsetsPast32Bits) {
  const size_t row_stride = (size_t{1} << 32) + 3;
  const std::vector<size_t> dims = {2, 5};
  auto lhs = device().alloc<uint8_t>(row_stride + 5);
  const std::vector<uint8_t> row0 = {1, 2, 3, 4, 5}, row1 = {10, 20, 30, 40, 50};
  hkb::check(hkb_memcpy_htod(device().get(), lhs.ptr(0), row0.data(), 5));
  hkb::check(hkb_memcpy_htod(device().get(), lhs.ptr(row_stride), row1.data(), 5));
  auto rhs = device().upload(std::vector<uint8_t>{100, 101, 102, 103, 104});
  auto out = device().upload(std::vector<uint8_t>(10 + kGuard, 0xA5));
  // info = [dims, lhs strides (row_stride, 1), rhs strides (0, 1): a row broadcast]
  auto info = device().upload(std::vector<size_t>{2, 5, row_stride, 1, 0, 1});
  hkb::LaunchArgs args;
  args.arg(size_t{10})
      .arg(dims.size())
      .arg(info.ptr())
      .arg(lhs.ptr())
      .arg(rhs.ptr())
      .arg(out.ptr());
  launch("badd_u8", hkb::LaunchConfig::for_num_elems(10), args);
  std::vector<uint8_t> want = {101, 103, 105, 107, 109, 110, 121, 132, 143, 154};
  want.resize(10 + kGuard, 0xA5);
  EXPECT_EQ(out.download(), want);
}

}  // namespace
