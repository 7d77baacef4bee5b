// UNARY on the device against the long-double reference of tests/reference/unary_ref.hpp: every
// op of every dtype (the names are built from the same op tables, and a test checks that they are
// exactly the module's symbols), contiguous / transposed / sliced-with-offset / broadcast views,
// sizes 0, 1, 31, 1025 and 2^20+7, special values, candle's geometry and a grid smaller than the
// work. Outputs are poisoned before each launch so unwritten elements show.
#include "gpu/gpu_test.hpp"
#include "reference/unary_ref.hpp"

#include <cmath>
#include <cstring>
#include <set>

namespace {

using gpu_test::GpuTest;
using gpu_test::Layout;
using unary_ref::Op;
using unary_ref::OpInfo;

const size_t kLarge = gpu_test::size_cap((size_t{1} << 20) + 7);

// The views every op is checked on (beside plain contiguous ones).
std::vector<Layout> strided_layouts() {
  std::vector<Layout> v;
  Layout tr = Layout::contiguous({33, 31});  // transposed view of a 31x33 matrix
  tr.strides = {1, 33};
  v.push_back(tr);
  Layout sliced;  // every other element, starting at 3
  sliced.dims = {1025};
  sliced.strides = {2};
  sliced.offset = 3;
  v.push_back(sliced);
  Layout bcast;  // one row broadcast over 4 rows
  bcast.dims = {4, 257};
  bcast.strides = {0, 1};
  bcast.offset = 1;
  v.push_back(bcast);
  Layout perm;  // a 3-D permutation
  perm.dims = {3, 5, 7};
  perm.strides = {1, 21, 3};
  v.push_back(perm);
  Layout contig = Layout::contiguous({7, 9, 11});  // contiguous, described by a real info array
  contig.offset = 5;
  v.push_back(contig);
  for (const Layout& l : gpu_test::run_layouts()) v.push_back(l);
  for (const Layout& l : gpu_test::transpose_layouts()) v.push_back(l);
  return v;
}

Layout transposed(size_t rows, size_t cols) {  // the transpose of a rows x cols matrix
  Layout l = Layout::contiguous({cols, rows});
  l.strides = {1, cols};
  return l;
}

// Launches `name` over `layout` of `base` and returns the whole (poisoned) output buffer, which
// holds max(n, 1) elements. 1-D contiguous views pass a null info pointer (candle's contiguous
// case); every other view passes [dims, strides].
template <typename T>
std::vector<T> launch_unary(GpuTest& t, const std::string& name, const Layout& layout,
                            const std::vector<T>& base, const T* param,
                            const hkb::LaunchConfig* cfg_override) {
  const size_t n = layout.numel();
  auto in = t.device().upload(base.empty() ? std::vector<T>(1) : base);
  const std::vector<T> poisoned(std::max<size_t>(n, 1), gpu_test::poison<T>());
  auto out = t.device().upload(poisoned);
  auto info = t.device().upload(layout.info());
  const bool null_info = layout.is_contiguous() && layout.dims.size() == 1;
  hkb::LaunchArgs args;
  args.arg(n).arg(layout.dims.size()).arg(null_info ? hkb_devptr{0} : info.ptr());
  if (param != nullptr) args.arg(*param);
  args.arg(in.ptr(layout.offset)).arg(out.ptr());
  return t.launch_elementwise(name, n, args, out, poisoned, cfg_override);
}

// ---------------------------------------------------------------------------------------------
// Float ops: f32, f64, f16, bf16, fp8.

template <typename T>
class UnaryFloatTest : public GpuTest {};
using FloatTypes = ::testing::Types<float, double, hkb::f16, hkb::bf16, hkb::f8e4m3>;
TYPED_TEST_SUITE(UnaryFloatTest, FloatTypes);

template <typename T>
std::string float_symbol(const OpInfo& oi) {
  return std::string("u") + oi.name + "_" + unary_ref::op_tag<T>();
}

// The scalar of elu (alpha) and powf (exponents with and without an integer value, so negative
// bases are both NaN and defined).
template <typename T>
std::vector<T> params_of(const OpInfo& oi) {
  if (oi.op == Op::Elu) return {ref::from_double<T>(0.5)};
  if (oi.op == Op::Powf) return {ref::from_double<T>(2.5), ref::from_double<T>(3.0)};
  return {T{}};
}

// Random inputs in [-4, 4]; made non-negative where negative ones would only give NaN.
template <typename T>
std::vector<T> op_inputs(GpuTest& t, const OpInfo& oi, size_t n, T param) {
  auto v = gpu_test::random_vector<T>(t.rng(), n);
  const bool nonneg =
      oi.op == Op::Log || oi.op == Op::Sqrt || (oi.op == Op::Powf && ref::to_double(param) != 3.0);
  if (nonneg) {
    for (auto& x : v) x = ref::from_double<T>(std::fabs(ref::to_double(x)));
  }
  return v;
}

template <typename T>
void check_float_op(GpuTest& t, const OpInfo& oi, const Layout& layout, const std::vector<T>& base,
                    T param, const hkb::LaunchConfig* cfg = nullptr) {
  const std::string name = float_symbol<T>(oi);
  SCOPED_TRACE(name + " " + layout.str() +
               (oi.has_param ? " param " + std::to_string(ref::to_double(param)) : "") + ", " +
               t.seed_note());
  const std::vector<T> got =
      launch_unary<T>(t, name, layout, base, oi.has_param ? &param : nullptr, cfg);
  const size_t n = layout.numel();
  std::vector<T> want(got.size(), gpu_test::poison<T>());
  for (size_t i = 0; i < n; ++i) want[i] = unary_ref::float_op(oi.op, base[layout.index(i)], param);
  if (n == 0) {
    EXPECT_TRUE(gpu_test::same_bits(got, want)) << "an empty launch wrote memory";
    return;
  }
  EXPECT_TRUE(gpu_test::near_ulps(got, want, unary_ref::tolerance_ulps<T>(oi.op)));
}

TYPED_TEST(UnaryFloatTest, ContiguousSizes) {
  using T = TypeParam;
  for (const OpInfo& oi : unary_ref::float_ops()) {
    for (T p : params_of<T>(oi)) {
      for (size_t n : {size_t{0}, size_t{1}, size_t{31}, size_t{1025}}) {
        check_float_op<T>(*this, oi, Layout::contiguous({n}), op_inputs<T>(*this, oi, n, p), p);
      }
    }
  }
}

// 2^20+7 elements: every op for f32 and bf16 (the vectorised path of a 4- and a 2-byte type
// with a tail), a few ops for the other dtypes; and one large transposed view.
TYPED_TEST(UnaryFloatTest, LargeContiguousAndTransposed) {
  using T = TypeParam;
  const bool all_ops = std::is_same_v<T, float> || std::is_same_v<T, hkb::bf16>;
  for (const OpInfo& oi : unary_ref::float_ops()) {
    if (!all_ops && oi.op != Op::Neg && oi.op != Op::Exp && oi.op != Op::Gelu) continue;
    const T p = params_of<T>(oi).front();
    check_float_op<T>(*this, oi, Layout::contiguous({kLarge}), op_inputs<T>(*this, oi, kLarge, p),
                      p);
    if (oi.op == Op::Exp) {
      for (const Layout& tr : {transposed(1024, 1025), transposed(1026, 1024)}) {  // odd, even
        check_float_op<T>(*this, oi, tr, op_inputs<T>(*this, oi, tr.storage_size(), p), p);
      }
    }
  }
}

TYPED_TEST(UnaryFloatTest, StridedBroadcastAndOffsetViews) {
  using T = TypeParam;
  for (const OpInfo& oi : unary_ref::float_ops()) {
    const T p = params_of<T>(oi).back();
    for (const Layout& l : strided_layouts()) {
      check_float_op<T>(*this, oi, l, op_inputs<T>(*this, oi, l.storage_size(), p), p);
    }
  }
}

// The size at which the tuned grid has every block work and candle's only its first blocks
// (GpuTest::tuned_split_size): a few ops through every view of standard_layouts.
TYPED_TEST(UnaryFloatTest, TunedAndCandleSplits) {
  using T = TypeParam;
  for (const OpInfo& oi : unary_ref::float_ops()) {
    if (oi.op != Op::Neg && oi.op != Op::Exp && oi.op != Op::Gelu) continue;
    const T p = params_of<T>(oi).front();
    const size_t n = this->tuned_split_size();
    for (const Layout& l : gpu_test::standard_layouts(n)) {
      check_float_op<T>(*this, oi, l, op_inputs<T>(*this, oi, l.storage_size(), p), p);
    }
  }
}

TYPED_TEST(UnaryFloatTest, GridSmallerThanWork) {
  using T = TypeParam;
  const auto cfg = hkb::LaunchConfig::make(3, 1, 1, 64, 1, 1);
  for (const OpInfo& oi : unary_ref::float_ops()) {
    const T p = params_of<T>(oi).front();
    const size_t n = 100003;
    check_float_op<T>(*this, oi, Layout::contiguous({n}), op_inputs<T>(*this, oi, n, p), p, &cfg);
    for (size_t rows : {7, 37}) {  // element by element, and by tiles in small blocks
      const Layout tr = transposed(rows, 301);
      check_float_op<T>(*this, oi, tr, op_inputs<T>(*this, oi, tr.storage_size(), p), p, &cfg);
    }
    for (const hkb::LaunchConfig& rows : this->grids_with_rows()) {
      check_float_op<T>(*this, oi, Layout::contiguous({n}), op_inputs<T>(*this, oi, n, p), p,
                        &rows);
      const Layout tr = transposed(37, 301);
      check_float_op<T>(*this, oi, tr, op_inputs<T>(*this, oi, tr.storage_size(), p), p, &rows);
    }
  }
}

// NaN, +-inf, -0.0, +0.0, subnormals, the largest finite values and (fp8) values that saturate,
// with a few ordinary ones, through every op.
TYPED_TEST(UnaryFloatTest, SpecialValues) {
  using T = TypeParam;
  std::vector<T> base;
  for (double v : gpu_test::special_values<T>()) base.push_back(ref::from_double<T>(v));
  for (double v : {0.5, -0.5, 2.5, -2.5, 3.0, -3.75}) base.push_back(ref::from_double<T>(v));
  for (const OpInfo& oi : unary_ref::float_ops()) {
    for (T p : params_of<T>(oi)) {
      check_float_op<T>(*this, oi, Layout::contiguous({base.size()}), base, p);
    }
  }
}

// exp and the logistic ops over the whole range where exp's result goes from 0 through the
// subnormals to overflow: 40001 evenly spaced inputs in [-110, 90] (every value of bf16 and f16
// where exp's result is subnormal in them): for f16/bf16/fp8 the path through the approximate
// exp2 (hkb::fast_exp in kernels/common/platform.h).
TYPED_TEST(UnaryFloatTest, ExpRangeSweep) {
  using T = TypeParam;
  std::vector<T> base;
  for (int i = 0; i <= 40000; ++i) base.push_back(ref::from_double<T>(-110.0 + i * 0.005));
  // f32 / f64 compute the logistic ops in their own precision, where subnormal intermediates
  // (exp(-90) in f32) and gelu's condition number (|2u| up to ~110 here) exceed their tolerances
  // outside [-4, 4]; their exp is checked.
  constexpr bool kReduced = !std::is_same_v<T, float> && !std::is_same_v<T, double>;
  for (Op op : {Op::Exp, Op::Sigmoid, Op::Silu, Op::Gelu}) {
    if (!kReduced && op != Op::Exp) continue;
    for (const OpInfo& oi : unary_ref::float_ops()) {
      if (oi.op == op) check_float_op<T>(*this, oi, Layout::contiguous({base.size()}), base, T{});
    }
  }
}

// relu's NaN rule, stated directly: f16/bf16 keep NaN (candle's __hmax_nan), f32/f64/fp8 give 0
// (candle's fmax, for fp8 through float).
TYPED_TEST(UnaryFloatTest, ReluNanRule) {
  using T = TypeParam;
  const std::vector<T> base = {ref::from_double<T>(std::nan("")), ref::from_double<T>(-1.0),
                               ref::from_double<T>(2.0)};
  const std::vector<T> got = launch_unary<T>(*this, "urelu_" + unary_ref::op_tag<T>(),
                                             Layout::contiguous({3}), base, nullptr, nullptr);
  if constexpr (std::is_same_v<T, hkb::f16> || std::is_same_v<T, hkb::bf16>) {
    EXPECT_TRUE(std::isnan(ref::to_double(got[0]))) << "relu(NaN) must stay NaN for f16/bf16";
  } else {
    EXPECT_EQ(ref::to_double(got[0]), 0.0) << "relu(NaN) must be 0 for f32/f64/fp8";
  }
  EXPECT_EQ(ref::to_double(got[1]), 0.0);
  EXPECT_EQ(ref::to_double(got[2]), 2.0);
}

// fp8 results saturate: exp(8) = 2981 and sqr(-448) = 200704 both store +448, recip(-0) stores
// -448.
TEST_F(GpuTest, Fp8ResultsSaturate) {
  using T = hkb::f8e4m3;
  const std::vector<T> base = {ref::from_double<T>(8.0), ref::from_double<T>(-448.0),
                               ref::from_double<T>(-0.0)};
  auto exp_out =
      launch_unary<T>(*this, "uexp_fp8_e4m3", Layout::contiguous({3}), base, nullptr, nullptr);
  EXPECT_EQ(exp_out[0].bits, 0x7E);
  auto sqr_out =
      launch_unary<T>(*this, "usqr_fp8_e4m3", Layout::contiguous({3}), base, nullptr, nullptr);
  EXPECT_EQ(sqr_out[1].bits, 0x7E);
  auto recip_out =
      launch_unary<T>(*this, "urecip_fp8_e4m3", Layout::contiguous({3}), base, nullptr, nullptr);
  EXPECT_EQ(recip_out[2].bits, 0xFE);
}

// ---------------------------------------------------------------------------------------------
// Integer ops hkb adds beyond candle.

template <typename T>
class UnaryIntTest : public GpuTest {};
using IntTypes = ::testing::Types<uint8_t, uint32_t, int16_t, int32_t, int64_t>;
TYPED_TEST_SUITE(UnaryIntTest, IntTypes);

template <typename T>
std::vector<OpInfo> int_ops_of() {
  std::vector<OpInfo> v;
  for (const OpInfo& oi : unary_ref::int_ops()) {
    if (oi.op == Op::Neg && !std::is_signed_v<T>) continue;
    v.push_back(oi);
  }
  return v;
}

template <typename T>
void check_int_op(GpuTest& t, const OpInfo& oi, const Layout& layout, const std::vector<T>& base,
                  const hkb::LaunchConfig* cfg = nullptr) {
  const std::string name = std::string("u") + oi.name + "_" + ref::tag<T>();
  SCOPED_TRACE(name + " " + layout.str() + ", " + t.seed_note());
  const std::vector<T> got = launch_unary<T>(t, name, layout, base, nullptr, cfg);
  std::vector<T> want(got.size(), gpu_test::poison<T>());
  for (size_t i = 0; i < layout.numel(); ++i) {
    want[i] = unary_ref::int_op(oi.op, base[layout.index(i)]);
  }
  EXPECT_TRUE(gpu_test::same_bits(got, want));
}

// Full-range random integers (the generator's window for wide types is +-100000; widen it so
// wrap-around of sqr and the sign of large values are exercised).
template <typename T>
std::vector<T> int_inputs(GpuTest& t, size_t n) {
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(t.rng()());
  return v;
}

TYPED_TEST(UnaryIntTest, SizesViewsAndGrids) {
  using T = TypeParam;
  const auto small_grid = hkb::LaunchConfig::make(3, 1, 1, 64, 1, 1);
  for (const OpInfo& oi : int_ops_of<T>()) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{31}, size_t{1025}}) {
      check_int_op<T>(*this, oi, Layout::contiguous({n}), int_inputs<T>(*this, n));
    }
    for (const Layout& l : strided_layouts()) {
      check_int_op<T>(*this, oi, l, int_inputs<T>(*this, l.storage_size()));
    }
    check_int_op<T>(*this, oi, Layout::contiguous({100003}), int_inputs<T>(*this, 100003),
                    &small_grid);
    if (oi.op == Op::Sqr) {
      check_int_op<T>(*this, oi, Layout::contiguous({kLarge}), int_inputs<T>(*this, kLarge));
    }
  }
}

TYPED_TEST(UnaryIntTest, ExtremeValues) {
  using T = TypeParam;
  const std::vector<T> base = {std::numeric_limits<T>::min(),
                               std::numeric_limits<T>::max(),
                               T(0),
                               T(1),
                               static_cast<T>(-1),
                               static_cast<T>(-2),
                               T(3)};
  for (const OpInfo& oi : int_ops_of<T>()) {
    check_int_op<T>(*this, oi, Layout::contiguous({base.size()}), base);
  }
}

// ---------------------------------------------------------------------------------------------
// ucopy: the strided copy, bitwise, for every dtype.

template <typename T>
class UcopyTest : public GpuTest {};
using AllTypes = ::testing::Types<float, double, hkb::f16, hkb::bf16, hkb::f8e4m3, uint8_t,
                                  uint32_t, int16_t, int32_t, int64_t>;
TYPED_TEST_SUITE(UcopyTest, AllTypes);

// Random bytes: for float dtypes these include NaNs with payloads, -0.0 and subnormals.
template <typename T>
std::vector<T> random_bits(GpuTest& t, size_t n) {
  std::vector<T> v(n);
  for (auto& x : v) {
    const uint64_t r = t.rng()();
    std::memcpy(&x, &r, sizeof(T));
  }
  return v;
}

template <typename T>
void check_copy(GpuTest& t, const Layout& layout, const hkb::LaunchConfig* cfg = nullptr) {
  const std::string name = std::string("ucopy_") + ref::tag<T>();
  SCOPED_TRACE(name + " " + layout.str() + ", " + t.seed_note());
  const std::vector<T> base = random_bits<T>(t, std::max<size_t>(layout.storage_size(), 1));
  const std::vector<T> got = launch_unary<T>(t, name, layout, base, nullptr, cfg);
  std::vector<T> want(got.size(), gpu_test::poison<T>());
  for (size_t i = 0; i < layout.numel(); ++i) want[i] = base[layout.index(i)];
  EXPECT_TRUE(gpu_test::same_bits(got, want));
}

TYPED_TEST(UcopyTest, SizesViewsAndGrids) {
  using T = TypeParam;
  for (size_t n : {size_t{0}, size_t{1}, size_t{31}, size_t{1025}, kLarge}) {
    check_copy<T>(*this, Layout::contiguous({n}));
  }
  for (const Layout& l : strided_layouts()) check_copy<T>(*this, l);
  check_copy<T>(*this, transposed(1024, 1025));
  check_copy<T>(*this, transposed(1026, 1024));  // 2-byte values by pairs
  const auto small_grid = hkb::LaunchConfig::make(3, 1, 1, 64, 1, 1);
  check_copy<T>(*this, Layout::contiguous({100003}), &small_grid);
  check_copy<T>(*this, transposed(7, 301), &small_grid);
  for (const hkb::LaunchConfig& rows : this->grids_with_rows()) {
    check_copy<T>(*this, Layout::contiguous({100003}), &rows);
    check_copy<T>(*this, transposed(37, 301), &rows);
  }
  // Tiles in blocks under 1024 threads: 64 (four elements a thread of a tile), 96 (not a warp
  // multiple) and 512 (two passes of a tile's elements).
  for (uint32_t threads : {64u, 96u, 512u}) {
    const auto cfg = hkb::LaunchConfig::make(2, 1, 1, threads, 1, 1);
    check_copy<T>(*this, transposed(37, 301), &cfg);
    check_copy<T>(*this, gpu_test::transpose_layouts()[1], &cfg);
  }
}

// The size at which the tuned grid has every block work and candle's only its first blocks
// (GpuTest::tuned_split_size), through every view of standard_layouts.
TYPED_TEST(UcopyTest, TunedAndCandleSplits) {
  using T = TypeParam;
  const size_t n = this->tuned_split_size();
  for (const Layout& l : gpu_test::standard_layouts(n)) check_copy<T>(*this, l);
}

// candle's copy_strided_src writes into a destination view at an element offset: the elements
// before and after it must stay untouched.
TYPED_TEST(UcopyTest, DestinationOffset) {
  using T = TypeParam;
  for (const Layout& src : {transposed(5, 13), transposed(37, 45)}) {  // elements, tiles
    const size_t n = src.numel(), dst_offset = 3;
    const std::vector<T> base = random_bits<T>(*this, src.storage_size());
    std::vector<T> init(n + 2 * dst_offset, gpu_test::poison<T>());
    auto in = this->device().upload(base);
    auto out = this->device().upload(init);
    auto info = this->device().upload(src.info());
    hkb::LaunchArgs args;
    args.arg(n).arg(src.dims.size()).arg(info.ptr()).arg(in.ptr()).arg(out.ptr(dst_offset));
    this->launch(std::string("ucopy_") + ref::tag<T>(),
                 hkb::LaunchConfig::for_num_elems(static_cast<uint32_t>(n)), args);
    std::vector<T> want = init;
    for (size_t i = 0; i < n; ++i) want[dst_offset + i] = base[src.index(i)];
    EXPECT_TRUE(gpu_test::same_bits(out.download(), want)) << this->seed_note();
  }
}

// ---------------------------------------------------------------------------------------------
// The names the tests above launch are exactly the module's symbols: candle's 123 and hkb's 40
// (integer ops, ucopy_i16, ucopy_i32). Each must resolve on the device.

template <typename... Ts>
void add_float_symbols(std::set<std::string>& s) {
  (
      [&] {
        for (const OpInfo& oi : unary_ref::float_ops()) s.insert(float_symbol<Ts>(oi));
      }(),
      ...);
}
template <typename... Ts>
void add_int_symbols(std::set<std::string>& s) {
  (
      [&] {
        for (const OpInfo& oi : int_ops_of<Ts>()) {
          s.insert(std::string("u") + oi.name + "_" + ref::tag<Ts>());
        }
      }(),
      ...);
}
template <typename... Ts>
void add_copy_symbols(std::set<std::string>& s) {
  (s.insert(std::string("ucopy_") + ref::tag<Ts>()), ...);
}

TEST_F(GpuTest, UnarySymbolsAreTheTestedOnes) {
  std::set<std::string> names;
  add_float_symbols<float, double, hkb::f16, hkb::bf16, hkb::f8e4m3>(names);
  add_int_symbols<uint8_t, uint32_t, int16_t, int32_t, int64_t>(names);
  add_copy_symbols<float, double, hkb::f16, hkb::bf16, hkb::f8e4m3, uint8_t, uint32_t, int16_t,
                   int32_t, int64_t>(names);
  EXPECT_EQ(names.size(), 163u) << "manifests/unary.json lists 163 kernels";
  for (const std::string& name : names) {
    hkb_function fn = nullptr;
    EXPECT_EQ(hkb_function_get(device().get(), name.c_str(), &fn), HKB_SUCCESS)
        << name << ": " << hkb_last_error();
  }
}

}  // namespace
