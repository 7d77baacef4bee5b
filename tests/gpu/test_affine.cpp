// AFFINE on the device against a CPU reference: every dtype, contiguous / strided / broadcast /
// offset views, sizes 0 .. 2^20+3, special values, in-place (null input), candle's geometry and a
// grid smaller than the work, through the C++ API and the C ABI.
#include "gpu/gpu_test.hpp"

#include <cmath>

namespace {

using gpu_test::GpuTest;
using gpu_test::Layout;

template <typename T>
class AffineTest : public GpuTest {};

using AffineTypes = ::testing::Types<float, double, hkb::f16, hkb::bf16, hkb::f8e4m3, uint8_t,
                                     uint32_t, int16_t, int32_t, int64_t>;
TYPED_TEST_SUITE(AffineTest, AffineTypes);

// y = x * mul + add as the kernel defines it: floats exactly in double then rounded to T once;
// integers with C's wrap-around.
template <typename T>
T affine_ref(T x, T mul, T add) {
  if constexpr (ref::is_float_v<T>) {
    return ref::from_double<T>(ref::to_double(x) * ref::to_double(mul) + ref::to_double(add));
  } else {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(
        static_cast<U>(static_cast<U>(x) * static_cast<U>(mul) + static_cast<U>(add)));
  }
}

// Floats: one ulp of T at the larger of |y| and |x*mul|: the kernel may round x*mul before the
// add (f32/f64 when not fused), which shows as error relative to a cancelled result.
template <typename T>
::testing::AssertionResult affine_close(const std::vector<T>& got, const std::vector<T>& want,
                                        const std::vector<T>& x, T mul) {
  if constexpr (!ref::is_float_v<T>) {
    return gpu_test::same_bits(got, want);
  } else {
    for (size_t i = 0; i < got.size(); ++i) {
      if (ref::ulp_distance(got[i], want[i]) == 0) continue;
      const double g = ref::to_double(got[i]), w = ref::to_double(want[i]);
      const double prod = std::fabs(ref::to_double(x[i]) * ref::to_double(mul));
      const double tol = ref::ulp_at<T>(std::max(std::fabs(w), prod));
      if (std::isfinite(g) && std::isfinite(w) && std::fabs(g - w) <= tol) continue;
      return ::testing::AssertionFailure()
             << "[" << i << "] x " << ref::to_double(x[i]) << " got " << g << " want " << w;
    }
    return ::testing::AssertionSuccess();
  }
}

template <typename T>
void mul_add(T* mul, T* add) {
  if constexpr (ref::is_float_v<T>) {
    *mul = ref::from_double<T>(1.5);
    *add = ref::from_double<T>(-0.25);
  } else {
    *mul = static_cast<T>(3);
    *add = static_cast<T>(7);
  }
}

// Runs one affine launch over `layout` of a base buffer and checks every output element.
template <typename T>
void check_affine(GpuTest& t, const Layout& layout, const std::vector<T>& base,
                  const hkb::LaunchConfig* cfg_override = nullptr) {
  SCOPED_TRACE(layout.str() + ", " + t.seed_note());
  const size_t n = layout.numel();
  T mul, add;
  mul_add(&mul, &add);
  auto in = t.device().upload(base);
  const std::vector<T> poisoned(std::max<size_t>(n, 1), gpu_test::poison<T>());
  auto out = t.device().upload(poisoned);
  const bool contiguous_null = layout.is_contiguous() && layout.dims.size() == 1;
  auto info = t.device().upload(layout.info());
  hkb::LaunchArgs args;
  args.arg(n).arg(layout.dims.size()).arg(contiguous_null ? hkb_devptr{0} : info.ptr());
  args.arg(in.ptr(layout.offset)).arg(out.ptr()).arg(mul).arg(add);
  const std::string name = std::string("affine_") + ref::tag<T>();
  const std::vector<T> got = t.launch_elementwise(name, n, args, out, poisoned, cfg_override);
  std::vector<T> want(got.size(), gpu_test::poison<T>()), xs(got.size());
  for (size_t i = 0; i < n; ++i) {
    xs[i] = base[layout.index(i)];
    want[i] = affine_ref(xs[i], mul, add);
  }
  if (n == 0) {
    EXPECT_TRUE(gpu_test::same_bits(got, want)) << "an empty launch wrote memory";
    return;
  }
  EXPECT_TRUE(affine_close(got, want, xs, mul));
}

TYPED_TEST(AffineTest, ContiguousSizes) {
  using T = TypeParam;
  for (size_t n : gpu_test::standard_sizes()) {
    auto base = gpu_test::random_vector<T>(this->rng(), std::max<size_t>(n, 1));
    check_affine<T>(*this, Layout::contiguous({n}), base);
  }
}

TYPED_TEST(AffineTest, StridedBroadcastAndOffsetViews) {
  using T = TypeParam;
  std::vector<Layout> layouts;
  Layout tr = Layout::contiguous({33, 31});  // transposed view of a 31x33 matrix
  tr.strides = {1, 33};
  layouts.push_back(tr);
  Layout sliced;  // every other element, starting at 3
  sliced.dims = {1025};
  sliced.strides = {2};
  sliced.offset = 3;
  layouts.push_back(sliced);
  Layout bcast;  // a row broadcast over 4 rows
  bcast.dims = {4, 257};
  bcast.strides = {0, 1};
  bcast.offset = 1;
  layouts.push_back(bcast);
  Layout perm;  // a 3-D permutation
  perm.dims = {3, 5, 7};
  perm.strides = {1, 21, 3};
  layouts.push_back(perm);
  Layout contig_info = Layout::contiguous({7, 9, 11});  // contiguous, described by a real info
  contig_info.offset = 5;
  layouts.push_back(contig_info);
  for (const Layout& l : gpu_test::run_layouts()) layouts.push_back(l);
  for (const Layout& l : gpu_test::transpose_layouts()) layouts.push_back(l);
  for (const Layout& l : layouts) {
    check_affine<T>(*this, l, gpu_test::random_vector<T>(this->rng(), l.storage_size()));
  }
}

TYPED_TEST(AffineTest, LargeTransposedView) {
  using T = TypeParam;
  if (sizeof(T) < 2) GTEST_SKIP() << "the same tiles as the 4-byte types";
  const size_t rows = sizeof(T) == 2 ? 1026 : 1025;  // 2-byte values: by pairs (even dims)
  Layout tr = Layout::contiguous({rows, 1024});
  tr.strides = {1, rows};
  check_affine<T>(*this, tr, gpu_test::random_vector<T>(this->rng(), tr.storage_size()));
}

// The size at which the tuned grid has every block work and candle's only its first blocks
// (GpuTest::tuned_split_size), through every view of gpu_test::standard_layouts.
TYPED_TEST(AffineTest, TunedAndCandleSplits) {
  using T = TypeParam;
  const size_t n = this->tuned_split_size();
  for (const Layout& l : gpu_test::standard_layouts(n)) {
    check_affine<T>(*this, l, gpu_test::random_vector<T>(this->rng(), l.storage_size()));
  }
}

TYPED_TEST(AffineTest, GridSmallerThanWork) {
  using T = TypeParam;
  const size_t n = 100003;
  const auto cfg = hkb::LaunchConfig::make(3, 1, 1, 64, 1, 1);
  check_affine<T>(*this, Layout::contiguous({n}), gpu_test::random_vector<T>(this->rng(), n), &cfg);
  for (size_t rows : {7, 37}) {  // element by element, and by tiles in blocks under 1024 threads
    Layout tr = Layout::contiguous({301, rows});
    tr.strides = {1, 301};
    check_affine<T>(*this, tr, gpu_test::random_vector<T>(this->rng(), tr.storage_size()), &cfg);
  }
  for (const hkb::LaunchConfig& rows : this->grids_with_rows()) {
    check_affine<T>(*this, Layout::contiguous({n}), gpu_test::random_vector<T>(this->rng(), n),
                    &rows);
    Layout tr = Layout::contiguous({301, 37});
    tr.strides = {1, 301};
    check_affine<T>(*this, tr, gpu_test::random_vector<T>(this->rng(), tr.storage_size()), &rows);
  }
}

TYPED_TEST(AffineTest, SpecialValues) {
  using T = TypeParam;
  if constexpr (ref::is_float_v<T>) {
    std::vector<T> base;
    for (double v : gpu_test::special_values<T>()) base.push_back(ref::from_double<T>(v));
    check_affine<T>(*this, Layout::contiguous({base.size()}), base);
  } else {
    std::vector<T> base = {std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), T(0),
                           T(1)};
    check_affine<T>(*this, Layout::contiguous({base.size()}), base);
  }
}

TYPED_TEST(AffineTest, NullInputIsInPlace) {
  using T = TypeParam;
  const size_t n = 1029;
  auto host = gpu_test::random_vector<T>(this->rng(), n);
  auto buf = this->device().upload(host);
  T mul, add;
  mul_add(&mul, &add);
  hkb::LaunchArgs args;
  args.arg(n).arg(size_t{1}).arg(hkb_devptr{0}).arg(hkb_devptr{0}).arg(buf.ptr()).arg(mul).arg(add);
  this->launch(std::string("affine_") + ref::tag<T>(),
               hkb::LaunchConfig::for_num_elems(static_cast<uint32_t>(n)), args);
  std::vector<T> want(n);
  for (size_t i = 0; i < n; ++i) want[i] = affine_ref(host[i], mul, add);
  EXPECT_TRUE(affine_close(buf.download(), want, host, mul));
  // Every element exactly once on grids of rows too (an element taken twice is transformed twice).
  for (const hkb::LaunchConfig& rows : this->grids_with_rows()) {
    buf.upload(host);
    this->launch(std::string("affine_") + ref::tag<T>(), rows, args);
    EXPECT_TRUE(affine_close(buf.download(), want, host, mul))
        << rows.grid[0] << "x" << rows.grid[1];
  }
}

// The same launch through the plain C ABI, as a C host program would write it.
TEST_F(GpuTest, AffineThroughTheCAbi) {
  hkb_context ctx = device().get();
  hkb_function fn = nullptr;
  ASSERT_EQ(hkb_function_get(ctx, "affine_f32", &fn), HKB_SUCCESS) << hkb_last_error();
  const size_t n = 3000;
  std::vector<float> x(n), y(n, -1.0f);
  for (size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i) * 0.5f;
  hkb_devptr din = 0, dout = 0;
  ASSERT_EQ(hkb_malloc(ctx, n * 4, &din), HKB_SUCCESS);
  ASSERT_EQ(hkb_malloc(ctx, n * 4, &dout), HKB_SUCCESS);
  ASSERT_EQ(hkb_memcpy_htod(ctx, din, x.data(), n * 4), HKB_SUCCESS);
  size_t numel = n, ndims = 1;
  hkb_devptr info = 0;
  float mul = 2.0f, add = 1.0f;
  void* args[] = {&numel, &ndims, &info, &din, &dout, &mul, &add};
  const size_t sizes[] = {8, 8, 8, 8, 8, 4, 4};
  const hkb_launch_config cfg = hkb_launch_config_for_num_elems(static_cast<uint32_t>(n));
  ASSERT_EQ(hkb_launch(fn, &cfg, nullptr, args, sizes, 7), HKB_SUCCESS) << hkb_last_error();
  ASSERT_EQ(hkb_memcpy_dtoh(ctx, y.data(), dout, n * 4), HKB_SUCCESS);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(y[i], x[i] * 2.0f + 1.0f) << i;
  EXPECT_EQ(hkb_free(ctx, din), HKB_SUCCESS);
  EXPECT_EQ(hkb_free(ctx, dout), HKB_SUCCESS);
}

}  // namespace
