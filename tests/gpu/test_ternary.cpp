// TERNARY (where) on the device against the CPU reference (tests/reference/ternary_ref.hpp): every
// value dtype with every condition dtype (candle's 26 symbols and hkb's other 24), an info array as
// candle always passes one and a null info, every layout case (broadcast, strided and offset views
// in each of cond / t / f, size-1, 0-d and empty dims), sizes 0 .. 2^20+7, conditions that are
// non-zero only in their high bits, bit-exact copies of special values, candle's geometry, grids
// smaller than the work, a misaligned output and offsets past 2^32.
#include "gpu/gpu_test.hpp"
#include "reference/ternary_ref.hpp"

#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace {

using gpu_test::GpuTest;
using gpu_test::Layout;

template <typename T>
class WhereTest : public GpuTest {};

using WhereValueTypes = ::testing::Types<float, double, hkb::f16, hkb::bf16, hkb::f8e4m3, uint8_t,
                                         uint32_t, int16_t, int32_t, int64_t>;
TYPED_TEST_SUITE(WhereTest, WhereValueTypes);

// Calls f(C{}) for every condition dtype.
template <typename F>
void for_each_cond(F&& f) {
  f(uint8_t{});
  f(uint32_t{});
  f(int16_t{});
  f(int32_t{});
  f(int64_t{});
}

// Conditions: zero, one, all ones, and values that are non-zero only in their top bit or second
// byte (a kernel that tested only the low byte would read those as false).
template <typename C>
std::vector<C> cond_values(std::mt19937_64& rng, size_t n) {
  using U = std::make_unsigned_t<C>;
  const U top = static_cast<U>(U{1} << (sizeof(C) * 8 - 1));
  const U second_byte = sizeof(C) > 1 ? static_cast<U>(0x100u) : U{1};
  const C pool[] = {
      C(0), C(0), C(1), static_cast<C>(top), static_cast<C>(second_byte), static_cast<C>(~U{0})};
  std::vector<C> v(std::max<size_t>(n, 1));
  for (auto& x : v) x = pool[rng() % 6];
  return v;
}

struct LaunchHow {
  const hkb::LaunchConfig* cfg = nullptr;
  bool null_info = false;
  size_t out_offset = 0;  // elements before the output: misaligns it
};

constexpr size_t kGuard = 16;  // poisoned elements after the output, to catch overruns

Layout strided(std::vector<size_t> dims, std::vector<size_t> strides, size_t offset = 0) {
  Layout l;
  l.dims = std::move(dims);
  l.strides = std::move(strides);
  l.offset = offset;
  return l;
}

// Launches where over views `cl`, `tl`, `fl` (same dims) of three base buffers and checks every
// output element bit for bit, and the guard elements for the poison.
template <typename C, typename T>
void run_where(GpuTest& t, const Layout& cl, const Layout& tl, const Layout& fl,
               const std::vector<C>& cb, const std::vector<T>& tb, const std::vector<T>& fb,
               const LaunchHow& how = {}) {
  const std::string name = ref::where_symbol<C, T>();
  SCOPED_TRACE(name + " cond " + cl.str() + " t " + tl.str() + " f " + fl.str() + ", " +
               t.seed_note());
  ASSERT_EQ(cl.dims, tl.dims);
  ASSERT_EQ(cl.dims, fl.dims);
  const size_t n = cl.numel();
  auto dc = t.device().upload(cb);
  auto dt = t.device().upload(tb);
  auto df = t.device().upload(fb);
  const size_t out_len = how.out_offset + n + kGuard;
  const std::vector<T> poisoned(out_len, gpu_test::poison<T>());
  auto out = t.device().upload(poisoned);
  std::vector<size_t> info = cl.dims;
  for (const Layout* l : {&cl, &tl, &fl})
    info.insert(info.end(), l->strides.begin(), l->strides.end());
  if (info.empty()) info.push_back(0);  // 0-d: num_dims 0, the array is never read
  auto dinfo = t.device().upload(info);
  hkb::LaunchArgs args;
  args.arg(n).arg(cl.dims.size()).arg(how.null_info ? hkb_devptr{0} : dinfo.ptr());
  args.arg(dc.ptr(cl.offset)).arg(dt.ptr(tl.offset)).arg(df.ptr(fl.offset));
  args.arg(out.ptr(how.out_offset));
  const std::vector<T> got = t.launch_elementwise(name, n, args, out, poisoned, how.cfg);
  size_t bad = 0;
  std::ostringstream os;
  for (size_t i = 0; i < out_len; ++i) {
    T want = gpu_test::poison<T>();
    const bool in_view = i >= how.out_offset && i < how.out_offset + n;
    int64_t c = 0;
    if (in_view) {
      const size_t e = i - how.out_offset;
      c = static_cast<int64_t>(cb[cl.index(e)]);
      want = ref::where_value(cb[cl.index(e)], tb[tl.index(e)], fb[fl.index(e)]);
    }
    if (ref::same_bits(got[i], want)) continue;
    if (bad < 5) {
      os << "\n  out[" << i << "]";
      if (in_view) os << " (cond " << c << ")";
      os << ": got " << ref::to_double(got[i]) << " want " << ref::to_double(want);
    }
    ++bad;
  }
  EXPECT_EQ(bad, 0u) << bad << " wrong of " << out_len << " (" << n << " outputs)" << os.str();
}

template <typename C, typename T>
void check_random(GpuTest& t, const Layout& cl, const Layout& tl, const Layout& fl,
                  const LaunchHow& how = {}) {
  const auto cb = cond_values<C>(t.rng(), cl.storage_size());
  const auto tb = gpu_test::random_vector<T>(t.rng(), std::max<size_t>(tl.storage_size(), 1));
  const auto fb = gpu_test::random_vector<T>(t.rng(), std::max<size_t>(fl.storage_size(), 1));
  run_where<C, T>(t, cl, tl, fl, cb, tb, fb, how);
}

struct WhereCase {
  const char* what;
  Layout cond, t, f;
};

std::vector<WhereCase> where_cases() {
  using L = Layout;
  return {
      {"all contiguous", L::contiguous({7, 9, 11}), L::contiguous({7, 9, 11}),
       L::contiguous({7, 9, 11})},
      {"cond row broadcast", strided({19, 67}, {0, 1}, 1), L::contiguous({19, 67}),
       L::contiguous({19, 67})},
      {"cond column broadcast", strided({67, 19}, {1, 0}), L::contiguous({67, 19}),
       L::contiguous({67, 19})},
      {"t scalar", L::contiguous({13, 29}), strided({13, 29}, {0, 0}, 2), L::contiguous({13, 29})},
      {"f scalar, t transposed", L::contiguous({67, 19}), strided({67, 19}, {1, 67}),
       strided({67, 19}, {0, 0}, 4)},
      {"all transposed, offset", strided({33, 31}, {1, 33}, 1), strided({33, 31}, {1, 33}, 2),
       strided({33, 31}, {1, 33}, 3)},
      {"middle dim broadcast", strided({4, 5, 6}, {6, 0, 1}), L::contiguous({4, 5, 6}),
       strided({4, 5, 6}, {0, 0, 1})},
      {"rows shorter than a pack", L::contiguous({50, 3}), strided({50, 3}, {1, 0}),
       strided({50, 3}, {0, 1})},
      {"misaligned contiguous views", strided({1027}, {1}, 1), strided({1027}, {1}, 3),
       strided({1027}, {1}, 5)},
      {"size-1 dims with odd strides", strided({3, 1, 5}, {5, 999, 1}),
       strided({3, 1, 5}, {0, 7, 1}), strided({3, 1, 5}, {5, 5, 1})},
      {"stepped slices", strided({513}, {2}), strided({513}, {3}, 1), strided({513}, {1})},
      {"0-d scalars", strided({}, {}, 1), strided({}, {}, 0), strided({}, {}, 2)},
      {"empty dim", L::contiguous({4, 0, 3}), L::contiguous({4, 0, 3}),
       strided({4, 0, 3}, {0, 3, 1})},
  };
}

TYPED_TEST(WhereTest, EveryCondContiguousSizes) {
  using T = TypeParam;
  for_each_cond([&](auto c) {
    using C = decltype(c);
    for (size_t n : {size_t{0}, size_t{1}, size_t{31}, size_t{1025}}) {
      const Layout l = Layout::contiguous({n});
      check_random<C, T>(*this, l, l, l);  // candle: a real info array, even when contiguous
    }
    LaunchHow how;
    how.null_info = true;
    const Layout l = Layout::contiguous({1025});
    check_random<C, T>(*this, l, l, l, how);
  });
}

TYPED_TEST(WhereTest, LargeContiguous) {
  using T = TypeParam;
  const Layout l = Layout::contiguous({gpu_test::size_cap((size_t{1} << 20) + 7)});
  check_random<uint8_t, T>(*this, l, l, l);
  check_random<int64_t, T>(*this, l, l, l);
}

TYPED_TEST(WhereTest, EveryLayoutCase) {
  using T = TypeParam;
  for (const WhereCase& w : where_cases()) {
    SCOPED_TRACE(w.what);
    for_each_cond([&](auto c) {
      using C = decltype(c);
      check_random<C, T>(*this, w.cond, w.t, w.f);
    });
  }
}

TYPED_TEST(WhereTest, LargeBroadcasts) {
  using T = TypeParam;
  // A mask over rows and columns picking a row vector or a scalar (masked_fill).
  check_random<uint8_t, T>(*this, Layout::contiguous({1024, 1027}), strided({1024, 1027}, {0, 1}),
                           strided({1024, 1027}, {0, 0}));
  // A column mask.
  check_random<uint32_t, T>(*this, strided({1027, 1024}, {1, 0}), Layout::contiguous({1027, 1024}),
                            Layout::contiguous({1027, 1024}));
}

// The size at which the tuned grid has every block work and candle's only its first blocks
// (GpuTest::tuned_split_size): contiguous, a broadcast mask and a transposed operand.
TYPED_TEST(WhereTest, TunedAndCandleSplits) {
  using T = TypeParam;
  const size_t n = this->tuned_split_size();
  const Layout l = Layout::contiguous({n});
  check_random<uint8_t, T>(*this, l, l, l);
  const size_t rows = n / 1027 + 1;
  check_random<uint8_t, T>(*this, strided({rows, 1027}, {0, 1}), Layout::contiguous({rows, 1027}),
                           strided({rows, 1027}, {0, 0}));
  check_random<int64_t, T>(*this, Layout::contiguous({n / 3, 3}), strided({n / 3, 3}, {1, n / 3}),
                           Layout::contiguous({n / 3, 3}));
}

TYPED_TEST(WhereTest, GridSmallerThanWork) {
  using T = TypeParam;
  const auto small = hkb::LaunchConfig::make(3, 1, 1, 64, 1, 1);
  const auto odd = hkb::LaunchConfig::make(5, 1, 1, 37, 1, 1);
  const auto single = hkb::LaunchConfig::make(1, 1, 1, 1, 1, 1);
  LaunchHow how;
  how.cfg = &small;
  const Layout big = Layout::contiguous({100003});
  check_random<uint8_t, T>(*this, big, big, big, how);
  how.cfg = &odd;
  check_random<int32_t, T>(*this, strided({257, 389}, {0, 1}), Layout::contiguous({257, 389}),
                           strided({257, 389}, {1, 0}), how);
  how.cfg = &single;
  check_random<int64_t, T>(*this, strided({31, 33}, {1, 31}), Layout::contiguous({31, 33}),
                           strided({31, 33}, {0, 1}), how);
  for (const hkb::LaunchConfig& rows : this->grids_with_rows()) {
    how.cfg = &rows;
    check_random<uint8_t, T>(*this, big, big, big, how);
    check_random<int32_t, T>(*this, strided({257, 389}, {0, 1}), Layout::contiguous({257, 389}),
                             strided({257, 389}, {1, 0}), how);
  }
}

TYPED_TEST(WhereTest, MisalignedOutput) {
  using T = TypeParam;
  LaunchHow how;
  how.out_offset = 1;
  const Layout l = Layout::contiguous({1025});
  check_random<uint8_t, T>(*this, l, l, l, how);
  how.out_offset = 3;
  check_random<uint32_t, T>(*this, strided({33, 65}, {0, 1}), Layout::contiguous({33, 65}),
                            strided({33, 65}, {1, 33}), how);
}

// The picked element is copied bit for bit: NaN payloads, -0.0, infinities, subnormals.
TYPED_TEST(WhereTest, SpecialValuesCopiedExactly) {
  using T = TypeParam;
  std::vector<T> pool;
  if constexpr (ref::is_float_v<T>) {
    for (double v : gpu_test::special_values<T>()) pool.push_back(ref::from_double<T>(v));
    T payload_nan;  // a NaN with a non-default payload and the sign bit set
    std::memset(&payload_nan, 0xFF, sizeof(T));
    pool.push_back(payload_nan);
  } else {
    pool = {std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), T(0), T(1)};
  }
  const size_t m = pool.size();
  std::vector<T> tv(2 * m), fv(2 * m);
  std::vector<uint8_t> cv(2 * m);
  for (size_t i = 0; i < m; ++i) {
    tv[i] = pool[i], fv[i] = pool[m - 1 - i], cv[i] = 1;
    tv[m + i] = pool[m - 1 - i], fv[m + i] = pool[i], cv[m + i] = 0;
  }
  const Layout l = Layout::contiguous({2 * m});
  run_where<uint8_t, T>(*this, l, l, l, cv, tv, fv);
}

// Offsets past 2^32 elements: candle's 32-bit index math would wrap here. Only the touched bytes
// of the 4 GiB t buffer are written.
TEST_F(GpuTest, WhereOffsetsPast32Bits) {
  const size_t row_stride = (size_t{1} << 32) + 3;
  auto tbuf = device().alloc<uint8_t>(row_stride + 5);
  const std::vector<uint8_t> row0 = {1, 2, 3, 4, 5}, row1 = {10, 20, 30, 40, 50};
  hkb::check(hkb_memcpy_htod(device().get(), tbuf.ptr(0), row0.data(), 5));
  hkb::check(hkb_memcpy_htod(device().get(), tbuf.ptr(row_stride), row1.data(), 5));
  auto cond = device().upload(std::vector<uint8_t>{1, 0, 1, 0, 1});  // a row mask, broadcast
  auto fbuf = device().upload(std::vector<uint8_t>{200});            // a scalar, broadcast
  auto out = device().upload(std::vector<uint8_t>(10 + kGuard, 0xA5));
  // info = [dims (2, 5), cond strides (0, 1), t strides (row_stride, 1), f strides (0, 0)]
  auto info = device().upload(std::vector<size_t>{2, 5, 0, 1, row_stride, 1, 0, 0});
  hkb::LaunchArgs args;
  args.arg(size_t{10}).arg(size_t{2}).arg(info.ptr()).arg(cond.ptr()).arg(tbuf.ptr());
  args.arg(fbuf.ptr()).arg(out.ptr());
  launch("where_u8_u8", hkb::LaunchConfig::for_num_elems(10), args);
  std::vector<uint8_t> want = {1, 200, 3, 200, 5, 10, 200, 30, 200, 50};
  want.resize(10 + kGuard, 0xA5);
  EXPECT_EQ(out.download(), want);
}

}  // namespace
