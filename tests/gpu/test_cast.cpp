// CAST on the device against the long-double reference of tests/reference/cast_ref.hpp: all 100
// pairs of the 10 dtypes (candle's 58 and hkb's 42), contiguous / transposed / sliced-with-offset
// / broadcast views, sizes 0, 1, 31, 1025 and 2^20+7, special values (NaN, +-inf, -0.0,
// subnormals, fp8 saturation, integer range edges, double-rounding traps), candle's geometry and
// a grid smaller than the work. Every result must be exact: the correctly rounded value, or NaN
// where the reference is NaN.
#include "gpu/gpu_test.hpp"
#include "reference/cast_ref.hpp"

#include <cmath>
#include <set>

namespace {

using gpu_test::GpuTest;
using gpu_test::Layout;

const size_t kLarge = gpu_test::size_cap((size_t{1} << 20) + 7);

template <typename T>
struct Tag {
  using type = T;
};
// Calls f(Tag<D>{}) for every destination dtype.
template <typename F>
void for_each_dtype(F&& f) {
  f(Tag<float>{}), f(Tag<double>{}), f(Tag<hkb::f16>{}), f(Tag<hkb::bf16>{}), f(Tag<hkb::f8e4m3>{}),
      f(Tag<uint8_t>{}), f(Tag<uint32_t>{}), f(Tag<int16_t>{}), f(Tag<int32_t>{}),
      f(Tag<int64_t>{});
}

template <typename S, typename D>
std::string cast_symbol() {
  return std::string("cast_") + ref::tag<S>() + "_" + ref::tag<D>();
}

Layout transposed(size_t rows, size_t cols) {
  Layout l = Layout::contiguous({cols, rows});
  l.strides = {1, cols};
  return l;
}

std::vector<Layout> strided_layouts() {
  std::vector<Layout> v;
  v.push_back(transposed(31, 33));
  Layout sliced;
  sliced.dims = {1025};
  sliced.strides = {2};
  sliced.offset = 3;
  v.push_back(sliced);
  Layout bcast;
  bcast.dims = {4, 257};
  bcast.strides = {0, 1};
  bcast.offset = 1;
  v.push_back(bcast);
  Layout perm;
  perm.dims = {3, 5, 7};
  perm.strides = {1, 21, 3};
  v.push_back(perm);
  Layout contig = Layout::contiguous({7, 9, 11});
  contig.offset = 5;
  v.push_back(contig);
  for (const Layout& l : gpu_test::run_layouts()) v.push_back(l);
  for (const Layout& l : gpu_test::transpose_layouts()) v.push_back(l);
  return v;
}

// Inputs that exercise every conversion: for float sources small values, integers with fractions
// (truncation, the u8/i16 ranges), a log-uniform spread of magnitudes 2^-150 .. 2^150 (subnormal
// results, overflow, saturation); for integer sources full-range bits and log-uniform magnitudes
// (rounding of wide integers to narrow floats).
template <typename S>
std::vector<S> cast_inputs(GpuTest& t, size_t n) {
  std::vector<S> v(n);
  auto& rng = t.rng();
  for (auto& x : v) {
    const uint64_t r = rng();
    const int cls = static_cast<int>(r % 4);
    if constexpr (ref::is_float_v<S>) {
      double d;
      if (cls == 0) {
        d = std::uniform_real_distribution<double>(-4.0, 4.0)(rng);
      } else if (cls == 1) {
        d = std::uniform_int_distribution<int>(-300, 70000)(rng) + 0.25 * ((r >> 8) % 4);
      } else if (cls == 2) {
        d = std::ldexp(std::uniform_real_distribution<double>(1.0, 2.0)(rng),
                       std::uniform_int_distribution<int>(-150, 150)(rng));
      } else {
        d = std::ldexp(std::uniform_real_distribution<double>(1.0, 2.0)(rng),
                       std::uniform_int_distribution<int>(0, 66)(rng));
      }
      if ((r >> 16) & 1) d = -d;
      x = ref::from_double<S>(d);
    } else {
      uint64_t bits = rng();
      if (cls == 1) bits >>= (r >> 8) % 64;                 // log-uniform magnitude
      if (cls == 2) bits = (r >> 8) % 600;                  // small
      if (cls == 3) bits = uint64_t{0} - ((r >> 8) % 600);  // small negative
      x = static_cast<S>(bits);
    }
  }
  return v;
}

// Edge values of a source dtype.
template <typename S>
std::vector<S> cast_specials() {
  std::vector<S> v;
  if constexpr (ref::is_float_v<S>) {
    std::vector<double> d = gpu_test::special_values<S>();
    const double eps = std::ldexp(1.0, -40);
    // Just above a rounding midpoint of bf16, f16 and fp8 (rounding to float first would land
    // on the midpoint and round to even, the wrong way); exact midpoints (ties to even).
    for (double m : {1.0 + std::ldexp(1.0, -8), 1.0 + std::ldexp(1.0, -11),
                     1.0 + std::ldexp(1.0, -4), 1.0 + 3 * std::ldexp(1.0, -8)}) {
      d.insert(d.end(), {m, -m, m + eps, -(m + eps)});
    }
    // Integer range edges: truncation and saturation.
    d.insert(d.end(), {0.5,
                       -0.5,
                       -0.99,
                       -1.0,
                       255.5,
                       256.0,
                       300.0,
                       32767.5,
                       32768.0,
                       -32768.75,
                       -32769.0,
                       65504.0,
                       65519.0,
                       65520.0,
                       448.0,
                       464.0,
                       480.0,
                       2147483647.0,
                       2147483648.0,
                       -2147483648.0,
                       -2147483904.0,
                       4294967295.0,
                       4294967296.0,
                       9.2233720368547758e18,
                       -9.2233720368547758e18,
                       1e19,
                       -1e19,
                       1e30});
    for (double x : d) v.push_back(ref::from_double<S>(x));
  } else {
    v = {std::numeric_limits<S>::min(),
         std::numeric_limits<S>::max(),
         S(0),
         S(1),
         static_cast<S>(-1),
         S(255),
         static_cast<S>(256),
         S(127),
         static_cast<S>(448),
         static_cast<S>(449),
         static_cast<S>(464),
         static_cast<S>(2049),
         static_cast<S>(65519),
         static_cast<S>(65520),
         static_cast<S>(32768),
         static_cast<S>(-32769)};
    if constexpr (sizeof(S) >= 4) {
      // 2^24 + 2^16 + 1: just above the bf16 midpoint 2^24 (1 + 2^-8).
      v.push_back(static_cast<S>(16842753));
      v.push_back(static_cast<S>(16777217));  // 2^24 + 1: float's first inexact integer
      v.push_back(static_cast<S>(4294967295u));
    }
    if constexpr (sizeof(S) == 8) {
      v.push_back(static_cast<S>((int64_t{1} << 53) + 1));
      v.push_back(static_cast<S>((int64_t{1} << 62) + (int64_t{1} << 38) + 1));
      v.push_back(static_cast<S>(-((int64_t{1} << 40) + (int64_t{1} << 32) + 1)));
    }
  }
  return v;
}

template <typename S, typename D>
void check_cast(GpuTest& t, const Layout& layout, const std::vector<S>& base,
                const hkb::LaunchConfig* cfg_override = nullptr) {
  const std::string name = cast_symbol<S, D>();
  SCOPED_TRACE(name + " " + layout.str() + ", " + t.seed_note());
  const size_t n = layout.numel();
  auto in = t.device().upload(base.empty() ? std::vector<S>(1) : base);
  const std::vector<D> poisoned(std::max<size_t>(n, 1), gpu_test::poison<D>());
  auto out = t.device().upload(poisoned);
  auto info = t.device().upload(layout.info());
  const bool null_info = layout.is_contiguous() && layout.dims.size() == 1;
  hkb::LaunchArgs args;
  args.arg(n).arg(layout.dims.size()).arg(null_info ? hkb_devptr{0} : info.ptr());
  args.arg(in.ptr(layout.offset)).arg(out.ptr());
  const std::vector<D> got = t.launch_elementwise(name, n, args, out, poisoned, cfg_override);
  if (n == 0) {
    EXPECT_TRUE(ref::same_bits(got[0], gpu_test::poison<D>())) << "an empty launch wrote memory";
    return;
  }
  size_t bad = 0;
  std::ostringstream os;
  for (size_t i = 0; i < n; ++i) {
    const S x = base[layout.index(i)];
    const D want = cast_ref::cast<S, D>(x);
    if (!cast_ref::same_value(got[i], want)) {
      if (bad < 5) {
        os << "\n  [" << i << "] in " << ref::to_double(x) << " got " << ref::to_double(got[i])
           << " want " << ref::to_double(want);
      }
      ++bad;
    }
  }
  EXPECT_EQ(bad, 0u) << bad << " of " << n << " elements differ" << os.str();
}

template <typename S>
class CastTest : public GpuTest {};
using AllTypes = ::testing::Types<float, double, hkb::f16, hkb::bf16, hkb::f8e4m3, uint8_t,
                                  uint32_t, int16_t, int32_t, int64_t>;
TYPED_TEST_SUITE(CastTest, AllTypes);

TYPED_TEST(CastTest, ContiguousSizes) {
  using S = TypeParam;
  for_each_dtype([&](auto tag) {
    using D = typename decltype(tag)::type;
    for (size_t n : {size_t{0}, size_t{1}, size_t{31}, size_t{1025}}) {
      check_cast<S, D>(*this, Layout::contiguous({n}), cast_inputs<S>(*this, n));
    }
  });
}

// 2^20+7 elements: every destination from f32 and bf16, and f32/bf16 from every source.
TYPED_TEST(CastTest, Large) {
  using S = TypeParam;
  const bool all = std::is_same_v<S, float> || std::is_same_v<S, hkb::bf16>;
  for_each_dtype([&](auto tag) {
    using D = typename decltype(tag)::type;
    if (!all && !std::is_same_v<D, float> && !std::is_same_v<D, hkb::bf16>) return;
    check_cast<S, D>(*this, Layout::contiguous({kLarge}), cast_inputs<S>(*this, kLarge));
  });
}

TYPED_TEST(CastTest, StridedBroadcastAndOffsetViews) {
  using S = TypeParam;
  for_each_dtype([&](auto tag) {
    using D = typename decltype(tag)::type;
    for (const Layout& l : strided_layouts()) {
      check_cast<S, D>(*this, l, cast_inputs<S>(*this, l.storage_size()));
    }
  });
}

// The size at which the tuned grid has every block work and candle's only its first blocks
// (GpuTest::tuned_split_size): to f32 and bf16, through every view of standard_layouts.
TYPED_TEST(CastTest, TunedAndCandleSplits) {
  using S = TypeParam;
  for_each_dtype([&](auto tag) {
    using D = typename decltype(tag)::type;
    if (!std::is_same_v<D, float> && !std::is_same_v<D, hkb::bf16>) return;
    const size_t n = this->tuned_split_size();
    for (const Layout& l : gpu_test::standard_layouts(n)) {
      check_cast<S, D>(*this, l, cast_inputs<S>(*this, l.storage_size()));
    }
  });
}

TYPED_TEST(CastTest, GridSmallerThanWork) {
  using S = TypeParam;
  const auto cfg = hkb::LaunchConfig::make(3, 1, 1, 64, 1, 1);
  for_each_dtype([&](auto tag) {
    using D = typename decltype(tag)::type;
    check_cast<S, D>(*this, Layout::contiguous({20011}), cast_inputs<S>(*this, 20011), &cfg);
    for (size_t rows : {7, 37}) {  // element by element, and by tiles in small blocks
      const Layout tr = transposed(rows, 301);
      check_cast<S, D>(*this, tr, cast_inputs<S>(*this, tr.storage_size()), &cfg);
    }
    for (const hkb::LaunchConfig& rows : this->grids_with_rows()) {
      check_cast<S, D>(*this, Layout::contiguous({20011}), cast_inputs<S>(*this, 20011), &rows);
      const Layout tr = transposed(37, 301);
      check_cast<S, D>(*this, tr, cast_inputs<S>(*this, tr.storage_size()), &rows);
    }
  });
}

TYPED_TEST(CastTest, SpecialValues) {
  using S = TypeParam;
  const std::vector<S> base = cast_specials<S>();
  for_each_dtype([&](auto tag) {
    using D = typename decltype(tag)::type;
    check_cast<S, D>(*this, Layout::contiguous({base.size()}), base);
  });
}

// The fp8 rules stated directly: beyond +-448 (and +-inf) saturates, NaN is 0x7F.
TEST_F(GpuTest, CastToFp8Saturates) {
  const std::vector<float> x = {500.0f, -1000.0f, INFINITY, -INFINITY, NAN, 464.0f, 448.0f};
  auto in = device().upload(x);
  auto out = device().upload(std::vector<hkb::f8e4m3>(x.size(), hkb::f8e4m3{0x11}));
  hkb::LaunchArgs args;
  args.arg(x.size()).arg(size_t{1}).arg(hkb_devptr{0}).arg(in.ptr()).arg(out.ptr());
  launch("cast_f32_f8_e4m3", hkb::LaunchConfig::for_num_elems(static_cast<uint32_t>(x.size())),
         args);
  const auto got = out.download();
  const uint8_t want[] = {0x7E, 0xFE, 0x7E, 0xFE, 0x7F, 0x7E, 0x7E};
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(got[i].bits, want[i]) << "input " << x[i];
}

// Single rounding from wide sources: f64 1 + 2^-8 + 2^-40 and i64 2^24 + 2^16 + 1 lie just
// above a bf16 midpoint and must round up (to 1 + 2^-7, bits 0x3F81; 2^24 (1 + 2^-7), 0x4B81).
TEST_F(GpuTest, CastWideSourcesRoundOnce) {
  auto run = [&](const std::string& name, auto value) {
    auto in = device().upload(std::vector<decltype(value)>{value});
    auto out = device().upload(std::vector<hkb::bf16>{hkb::bf16{0}});
    hkb::LaunchArgs args;
    args.arg(size_t{1}).arg(size_t{1}).arg(hkb_devptr{0}).arg(in.ptr()).arg(out.ptr());
    launch(name, hkb::LaunchConfig::for_num_elems(1), args);
    return out.download()[0].bits;
  };
  EXPECT_EQ(run("cast_f64_bf16", 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40)), 0x3F81);
  EXPECT_EQ(run("cast_i64_bf16", int64_t{16842753}), 0x4B81);
  EXPECT_EQ(run("cast_u32_bf16", uint32_t{16842753}), 0x4B81);
  EXPECT_EQ(run("cast_i32_bf16", int32_t{-16842753}), 0xCB81);
}

// The names the tests launch are exactly the module's 100 symbols, and each resolves.
TEST_F(GpuTest, CastSymbolsAreTheTestedOnes) {
  std::set<std::string> names;
  for_each_dtype([&](auto stag) {
    using S = typename decltype(stag)::type;
    for_each_dtype([&](auto dtag) {
      using D = typename decltype(dtag)::type;
      names.insert(cast_symbol<S, D>());
    });
  });
  EXPECT_EQ(names.size(), 100u) << "manifests/cast.json lists 100 kernels";
  for (const std::string& name : names) {
    hkb_function fn = nullptr;
    EXPECT_EQ(hkb_function_get(device().get(), name.c_str(), &fn), HKB_SUCCESS)
        << name << ": " << hkb_last_error();
  }
}

}  // namespace
