// FILL on the device: fill_*, copy2d_* and const_set_* for every dtype against CPU references,
// bit-exact (these ops move bits; NaN payloads and -0.0 must survive).
#include "gpu/gpu_test.hpp"

namespace {

using gpu_test::GpuTest;
using gpu_test::Layout;

template <typename T>
class FillTest : public GpuTest {};

using FillTypes = ::testing::Types<float, double, hkb::f16, hkb::bf16, hkb::f8e4m3, uint8_t,
                                   uint32_t, int16_t, int32_t, int64_t>;
TYPED_TEST_SUITE(FillTest, FillTypes);

template <typename T>
std::string name(const char* op) {
  return std::string(op) + "_" + ref::tag<T>();
}

// Values worth filling with: random, and for floats the special values (NaN, -0.0, ...).
template <typename T>
std::vector<T> fill_values(std::mt19937_64& rng) {
  std::vector<T> v = {gpu_test::random_value<T>(rng)};
  if constexpr (ref::is_float_v<T>) {
    for (double d : gpu_test::special_values<T>()) v.push_back(ref::from_double<T>(d));
  } else {
    v.push_back(std::numeric_limits<T>::max());
    v.push_back(std::numeric_limits<T>::min());
  }
  return v;
}

TYPED_TEST(FillTest, FillWholeBuffer) {
  using T = TypeParam;
  SCOPED_TRACE(this->seed_note());
  for (size_t n : gpu_test::standard_sizes()) {
    for (T value : fill_values<T>(this->rng())) {
      // One element past the end stays poisoned; a misaligned start exercises the scalar path.
      for (size_t start : {size_t{0}, size_t{1}}) {
        const std::vector<T> poisoned(n + start + 1, gpu_test::poison<T>());
        auto buf = this->device().upload(poisoned);
        hkb::LaunchArgs args;
        args.arg(buf.ptr(start)).arg(value).arg(n);
        const auto got = this->launch_elementwise(name<T>("fill"), n, args, buf, poisoned);
        std::vector<T> want = poisoned;
        for (size_t i = 0; i < n; ++i) want[start + i] = value;
        ASSERT_TRUE(gpu_test::same_bits(got, want)) << "n " << n << " start " << start;
      }
    }
  }
}

// The size at which the tuned grid has every block work and candle's only its first blocks
// (GpuTest::tuned_split_size): fill, const_set over a strided view, copy2d.
TYPED_TEST(FillTest, TunedAndCandleSplits) {
  using T = TypeParam;
  const T value = gpu_test::random_value<T>(this->rng());
  const size_t n = this->tuned_split_size();
  const std::vector<T> poisoned(n + 1, gpu_test::poison<T>());
  auto buf = this->device().upload(poisoned);
  {
    hkb::LaunchArgs args;
    args.arg(buf.ptr()).arg(value).arg(n);
    std::vector<T> want(n + 1, value);
    want[n] = poisoned[n];
    EXPECT_TRUE(gpu_test::same_bits(
        this->launch_elementwise(name<T>("fill"), n, args, buf, poisoned), want));
  }
  {
    Layout l;  // every other element, from element 3
    l.dims = {n / 2 - 1};
    l.strides = {2};
    l.offset = 3;
    auto info = this->device().upload(l.info());
    hkb::LaunchArgs args;
    args.arg(l.numel()).arg(l.dims.size()).arg(info.ptr()).arg(value).arg(buf.ptr(l.offset));
    std::vector<T> want = poisoned;
    for (size_t i = 0; i < l.numel(); ++i) want[l.index(i)] = value;
    EXPECT_TRUE(gpu_test::same_bits(
        this->launch_elementwise(name<T>("const_set"), l.numel(), args, buf, poisoned), want));
  }
  {
    const uint32_t d2 = 1027, d1 = static_cast<uint32_t>(n / 1030);  // rows of 1030 hold 1027
    const auto host_src = gpu_test::random_vector<T>(this->rng(), n);
    auto src = this->device().upload(host_src);
    hkb::LaunchArgs args;
    args.arg(src.ptr()).arg(buf.ptr()).arg(d1).arg(d2).arg(uint32_t{1030}).arg(uint32_t{1029});
    std::vector<T> want = poisoned;
    for (size_t r = 0; r < d1; ++r)
      for (size_t k = 0; k < d2; ++k) want[r * 1029 + k] = host_src[r * 1030 + k];
    EXPECT_TRUE(gpu_test::same_bits(
        this->launch_elementwise(name<T>("copy2d"), uint64_t{d1} * d2, args, buf, poisoned), want));
  }
}

TYPED_TEST(FillTest, FillWithSmallGrid) {
  using T = TypeParam;
  const size_t n = 77777;
  const T value = gpu_test::random_value<T>(this->rng());
  auto buf = this->device().upload(std::vector<T>(n, gpu_test::poison<T>()));
  hkb::LaunchArgs args;
  args.arg(buf.ptr()).arg(value).arg(n);
  this->launch(name<T>("fill"), hkb::LaunchConfig::make(2, 1, 1, 96, 1, 1), args);
  EXPECT_TRUE(gpu_test::same_bits(buf.download(), std::vector<T>(n, value)));
  for (const hkb::LaunchConfig& rows : this->grids_with_rows()) {
    buf.upload(std::vector<T>(n, gpu_test::poison<T>()));
    this->launch(name<T>("fill"), rows, args);
    EXPECT_TRUE(gpu_test::same_bits(buf.download(), std::vector<T>(n, value)));
  }
}

TYPED_TEST(FillTest, Copy2d) {
  using T = TypeParam;
  SCOPED_TRACE(this->seed_note());
  struct Case {
    uint32_t d1, d2, src_s, dst_s, src_o, dst_o;
  } cases[] = {{1, 1, 1, 1, 0, 0},
               {3, 5, 5, 5, 0, 0},
               {7, 1025, 1031, 1100, 3, 1},
               {1025, 3, 4, 9, 0, 2},
               {0, 5, 5, 5, 0, 0},
               {4, 0, 3, 3, 0, 0},
               {1024, 1025, 1025, 1030, 0, 0},
               // rows of whole 16-byte packs for every type, and for all but the 1-byte types
               {37, 256, 272, 288, 16, 32},
               {5, 24, 32, 40, 8, 0},
               {3000, 16, 16, 32, 0, 16},
               // packable rows at an unaligned start
               {9, 256, 256, 256, 1, 0}};
  for (const Case& c : cases) {
    const size_t src_n = size_t{c.src_o} + (c.d1 ? (c.d1 - 1) * size_t{c.src_s} : 0) + c.d2 + 1;
    const size_t dst_n = size_t{c.dst_o} + (c.d1 ? (c.d1 - 1) * size_t{c.dst_s} : 0) + c.d2 + 1;
    auto host_src = gpu_test::random_vector<T>(this->rng(), src_n);
    auto src = this->device().upload(host_src);
    const std::vector<T> poisoned(dst_n, gpu_test::poison<T>());
    auto dst = this->device().upload(poisoned);
    hkb::LaunchArgs args;
    args.arg(src.ptr(c.src_o)).arg(dst.ptr(c.dst_o)).arg(c.d1).arg(c.d2).arg(c.src_s).arg(c.dst_s);
    const auto got =
        this->launch_elementwise(name<T>("copy2d"), uint64_t{c.d1} * c.d2, args, dst, poisoned);
    std::vector<T> want = poisoned;
    for (size_t r = 0; r < c.d1; ++r) {
      for (size_t k = 0; k < c.d2; ++k) {
        want[c.dst_o + r * c.dst_s + k] = host_src[c.src_o + r * c.src_s + k];
      }
    }
    ASSERT_TRUE(gpu_test::same_bits(got, want))
        << "d1 " << c.d1 << " d2 " << c.d2 << " src_s " << c.src_s << " dst_s " << c.dst_s;
  }
}

TYPED_TEST(FillTest, Copy2dSmallGrid) {
  using T = TypeParam;
  const uint32_t d1 = 300, d2 = 301, s = 305;
  auto host_src = gpu_test::random_vector<T>(this->rng(), size_t{d1} * s);
  auto src = this->device().upload(host_src);
  auto dst = this->device().upload(std::vector<T>(size_t{d1} * d2, gpu_test::poison<T>()));
  hkb::LaunchArgs args;
  args.arg(src.ptr()).arg(dst.ptr()).arg(d1).arg(d2).arg(s).arg(d2);
  this->launch(name<T>("copy2d"), hkb::LaunchConfig::make(5, 1, 1, 32, 1, 1), args);
  std::vector<T> want(size_t{d1} * d2);
  for (size_t r = 0; r < d1; ++r)
    for (size_t k = 0; k < d2; ++k) want[r * d2 + k] = host_src[r * s + k];
  EXPECT_TRUE(gpu_test::same_bits(dst.download(), want));
  for (const hkb::LaunchConfig& rows : this->grids_with_rows()) {
    dst.upload(std::vector<T>(size_t{d1} * d2, gpu_test::poison<T>()));
    this->launch(name<T>("copy2d"), rows, args);
    EXPECT_TRUE(gpu_test::same_bits(dst.download(), want));
  }
}

TYPED_TEST(FillTest, ConstSet) {
  using T = TypeParam;
  SCOPED_TRACE(this->seed_note());
  std::vector<Layout> layouts;
  for (size_t n : gpu_test::standard_sizes()) layouts.push_back(Layout::contiguous({n}));
  Layout tr = Layout::contiguous({33, 31});
  tr.strides = {1, 33};
  layouts.push_back(tr);
  Layout sliced;
  sliced.dims = {1025};
  sliced.strides = {3};
  sliced.offset = 2;
  layouts.push_back(sliced);
  Layout sub = Layout::contiguous({5, 7, 9});  // a 5x7x4 block of a 5x7x9 tensor
  sub.dims[2] = 4;
  sub.offset = 3;
  layouts.push_back(sub);
  Layout contig_info = Layout::contiguous({6, 1000});
  contig_info.offset = 1;
  layouts.push_back(contig_info);
  Layout middle;  // the densest dim in the middle: offsets 200 i + j + 40 k cover 600 elements
  middle.dims = {3, 40, 5};
  middle.strides = {200, 1, 40};
  layouts.push_back(middle);
  Layout broadcast;  // a stride-0 dim (every element written 4 times) and a transposed pair
  broadcast.dims = {4, 17, 19};
  broadcast.strides = {0, 1, 17};
  broadcast.offset = 5;
  layouts.push_back(broadcast);
  Layout small_grid = Layout::contiguous({100, 1001});
  small_grid.strides = {1001 * 2, 2};
  layouts.push_back(small_grid);
  for (const Layout& l : layouts) {
    SCOPED_TRACE(l.str());
    const T value = fill_values<T>(this->rng())[1 % fill_values<T>(this->rng()).size()];
    const size_t storage = std::max<size_t>(l.storage_size(), 1) + 1;
    const std::vector<T> poisoned(storage, gpu_test::poison<T>());
    auto out = this->device().upload(poisoned);
    auto info = this->device().upload(l.info());
    const bool null_info = l.dims.size() == 1 && l.is_contiguous();
    hkb::LaunchArgs args;
    args.arg(l.numel()).arg(l.dims.size()).arg(null_info ? hkb_devptr{0} : info.ptr());
    args.arg(value).arg(out.ptr(l.offset));
    // The last layout runs on a deliberately small grid.
    const auto small = hkb::LaunchConfig::make(3, 1, 1, 128, 1, 1);
    const auto got = this->launch_elementwise(name<T>("const_set"), l.numel(), args, out, poisoned,
                                              &l == &layouts.back() ? &small : nullptr);
    std::vector<T> want = poisoned;
    for (size_t i = 0; i < l.numel(); ++i) want[l.index(i)] = value;
    ASSERT_TRUE(gpu_test::same_bits(got, want));
    if (&l == &layouts.back() || (l.is_contiguous() && l.numel() >= 1025)) {
      for (const hkb::LaunchConfig& rows : this->grids_with_rows()) {
        ASSERT_TRUE(gpu_test::same_bits(
            this->launch_elementwise(name<T>("const_set"), l.numel(), args, out, poisoned, &rows),
            want));
      }
    }
  }
}

// fp8 fill values keep their bits (0x7F NaN, 0x80 -0.0, 0x7E +448, 0x01 smallest subnormal).
TEST_F(GpuTest, FillF8KeepsBits) {
  for (uint8_t bits : {uint8_t{0x7F}, uint8_t{0x80}, uint8_t{0x7E}, uint8_t{0x01}, uint8_t{0xFE}}) {
    auto buf = device().upload(std::vector<hkb::f8e4m3>(33, hkb::f8e4m3{0}));
    hkb::LaunchArgs args;
    args.arg(buf.ptr()).arg(hkb::f8e4m3{bits}).arg(size_t{33});
    launch("fill_f8_e4m3", hkb::LaunchConfig::for_num_elems(33), args);
    for (auto v : buf.download()) ASSERT_EQ(v.bits, bits);
  }
}

}  // namespace
