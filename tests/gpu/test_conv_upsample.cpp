// CONV's upsampling on the device against the float64 references of tests/reference/conv_ref.hpp,
// for every dtype of the module: upsample_nearest2d (integer and fractional scales, the x2 path)
// and upsample_bilinear2d (align_corners, scale factors, outputs past the kernel's tap tables,
// the 64-bit index path), over contiguous, channels-last and offset+broadcast views, special
// values, grids smaller than the work and covering grids of other block sizes, empty batches.
#include "gpu/conv_test.hpp"

namespace {

template <typename T>
class UpsampleTest : public GpuTest {};
TYPED_TEST_SUITE(UpsampleTest, ConvTypes);

// ---------------------------------------------------------------------------------------------
// Upsampling.

struct NearestCase {
  size_t b, c, d2, d3, out2, out3;
};
const std::vector<NearestCase> kNearestCases = {
    {2, 3, 4, 5, 8, 12},    // x2 along dims[2], x2.4 along dims[3]
    {1, 2, 5, 7, 7, 9},     // non-integer ratios, odd row length (scalar stores)
    {2, 2, 6, 8, 4, 3},     // downsampling
    {1, 1, 3, 3, 3, 3},     // identity
    {1, 2, 5, 4, 9, 16},    // rows of 16: packed stores for every dtype
    {3, 1, 2, 3, 11, 32},   // batch 3, one channel
    {1, 3, 8, 4, 32, 16},   // x4 on both axes: power-of-two scales take integer shifts
    {2, 3, 8, 8, 4, 4},     // downsampling by 2: scale 2 is no shift
    {2, 2, 3, 5, 6, 40},    // x2 / x8
    {2, 3, 8, 16, 16, 32},  // x2 on both axes, rows of 16
    {1, 2, 4, 24, 8, 48},   // x2 on both axes, rows of 24
    {1, 2, 3, 6, 6, 12},    // x2 on both axes, rows of 6
};

template <typename T>
void check_nearest(GpuTest& t, const NearestCase& p, Kind kind,
                   const hkb::LaunchConfig* cfg = nullptr, const std::vector<T>* values = nullptr) {
  SCOPED_TRACE(std::string("upsample_nearest2d ") + kind_name(kind) + " " + std::to_string(p.d2) +
               "x" + std::to_string(p.d3) + " -> " + std::to_string(p.out2) + "x" +
               std::to_string(p.out3) + ", " + t.seed_note());
  const Layout sl = make_layout({p.b, p.c, p.d2, p.d3}, kind);
  const auto src = values ? *values : random_values<T>(t.rng(), sl.storage_size());
  // candle's host: w_out = target for dims[2], scale = dims[2] / target as f64.
  const double w_scale = static_cast<double>(p.d2) / static_cast<double>(p.out2);
  const double h_scale = static_cast<double>(p.d3) / static_cast<double>(p.out3);
  const auto want = ref::upsample_nearest2d(view4(src, sl), p.out2, p.out3, w_scale, h_scale);
  auto d_src = t.device().upload(src);
  auto d_info = t.device().upload(sl.info());
  const size_t n = p.b * p.c * p.out2 * p.out3;
  const auto got =
      run<T>(t, "upsample_nearest2d", n, n, cfg, [&](hkb::LaunchArgs& a, hkb_devptr out) {
        a.arg(p.out2).arg(p.out3).arg(w_scale).arg(h_scale);
        a.arg(d_info.ptr()).arg(d_src.ptr(sl.offset)).arg(out);
      });
  expect_close(got, want, true);
}

TYPED_TEST(UpsampleTest, UpsampleNearest2d) {
  for (const auto& p : kNearestCases) {
    for (Kind kind : {Kind::Contiguous, Kind::ChannelsLast, Kind::OffsetBroadcast}) {
      check_nearest<TypeParam>(*this, p, kind);
    }
  }
}

TYPED_TEST(UpsampleTest, UpsampleNearest2dSpecialValuesAreCopied) {
  using T = TypeParam;
  if constexpr (ref::is_float_v<T>) {
    std::vector<T> v;
    const auto specials = gpu_test::special_values<T>();
    for (size_t i = 0; i < 2 * 3 * 5; ++i) {
      v.push_back(ref::from_double<T>(specials[i % specials.size()]));
    }
    check_nearest<T>(*this, {2, 1, 3, 5, 6, 10}, Kind::Contiguous, nullptr, &v);
  } else {
    GTEST_SKIP() << "integers have no special values";
  }
}

// 2^20 outputs (4 x 16 x 128 x 128) from 64 x 64 planes, and for every type (the x2 path takes
// several units a thread whatever the type) x2 with 3 * 5 * 100 rows of 8: the last group of
// blocks ends inside its threads' units.
TYPED_TEST(UpsampleTest, UpsampleNearest2dLarge) {
  check_nearest<TypeParam>(*this, {3, 5, 50, 4, 100, 8}, Kind::Contiguous);
  check_nearest<TypeParam>(*this, {3, 5, 50, 4, 100, 8}, Kind::ChannelsLast);
  // The 2^20 outputs: f32, u32 and f16 cover the general paths' index math.
  if (sizeof(TypeParam) == 4 || std::is_same_v<TypeParam, hkb::f16>) {
    check_nearest<TypeParam>(*this, {4, 16, 64, 64, 128, 128}, Kind::Contiguous);
  }
}

struct BilinearCase {
  size_t b, c, h, w, h_out, w_out;
  bool align_corners;
  double scale_h, scale_w;  // 0: none given
};
const std::vector<BilinearCase> kBilinearCases = {
    {2, 3, 4, 5, 8, 10, false, 0, 0},       // x2
    {1, 2, 5, 7, 3, 4, false, 0, 0},        // downsampling
    {1, 2, 4, 4, 7, 9, true, 0, 0},         // align_corners
    {2, 1, 6, 5, 4, 3, true, 0, 0},         // align_corners, downsampling
    {1, 1, 6, 5, 12, 10, false, 2.0, 2.0},  // factors equal to the size ratio
    {1, 2, 5, 3, 11, 7, false, 2.25, 2.5},  // factors that differ from out / in: 1 / factor wins
    {1, 2, 5, 3, 11, 7, true, 2.25, 2.5},   // align_corners ignores the factors
    {1, 1, 1, 1, 3, 3, false, 0, 0},        // a single pixel
    {1, 1, 4, 4, 1, 1, true, 0, 0},         // one output with align_corners: scale 0
    {1, 3, 7, 3, 7, 3, false, 0, 0},        // identity
    {1, 2, 3, 300, 5, 1100, false, 0, 0},   // w_out past the tap tables: taps per output
    {1, 1, 600, 2, 1030, 3, true, 0, 0},    // h_out past the tap tables, align_corners
    {2, 3, 13, 9, 37, 18, false, 0, 0},     // x2.85: strips of rows end inside a plane
    {1, 2, 20, 24, 40, 47, false, 0, 0},    // x2 rows, many strips, odd width
    {1, 2, 45, 6, 17, 5, true, 0, 0},       // downsampling by more than 2: rows skipped
};

// values: the source's elements (else random); wide: a batch of 1 whose stride is 2^40 (never
// applied), which takes the kernel's 64-bit index path.
template <typename T>
void check_bilinear(GpuTest& t, const BilinearCase& p, Kind kind,
                    const hkb::LaunchConfig* cfg = nullptr, const std::vector<T>* values = nullptr,
                    bool wide = false) {
  SCOPED_TRACE(std::string("upsample_bilinear2d ") + kind_name(kind) + " " + std::to_string(p.h) +
               "x" + std::to_string(p.w) + " -> " + std::to_string(p.h_out) + "x" +
               std::to_string(p.w_out) + (p.align_corners ? " align" : "") + " factors " +
               std::to_string(p.scale_h) + "," + std::to_string(p.scale_w) + ", " + t.seed_note());
  const Layout sl = make_layout({p.b, p.c, p.h, p.w}, kind);
  const auto src = values ? *values : random_values<T>(t.rng(), sl.storage_size());
  const auto want = ref::upsample_bilinear2d(view4(src, sl), p.h_out, p.w_out, p.align_corners,
                                             p.scale_h, p.scale_w);
  auto d_src = t.device().upload(src);
  std::vector<size_t> info = sl.info();
  if (wide) {
    ASSERT_EQ(p.b, 1u);
    info[4] = size_t{1} << 40;
  }
  auto d_info = t.device().upload(info);
  const size_t n = p.b * p.c * p.h_out * p.w_out;
  const auto got =
      run<T>(t, "upsample_bilinear2d", n, n, cfg, [&](hkb::LaunchArgs& a, hkb_devptr out) {
        a.arg(p.w_out).arg(p.h_out).arg(p.align_corners);
        a.arg(p.scale_h > 0).arg(p.scale_h > 0 ? p.scale_h : 0.0);
        a.arg(p.scale_w > 0).arg(p.scale_w > 0 ? p.scale_w : 0.0);
        a.arg(d_info.ptr()).arg(d_src.ptr(sl.offset)).arg(out);
      });
  // Integers truncate an f64 value the reference computes in another (equivalent) order.
  expect_close(got, want, false, 1.0);
}

TYPED_TEST(UpsampleTest, UpsampleBilinear2d) {
  for (const auto& p : kBilinearCases) {
    for (Kind kind : {Kind::Contiguous, Kind::ChannelsLast, Kind::OffsetBroadcast}) {
      check_bilinear<TypeParam>(*this, p, kind);
    }
  }
}

// Every case again through the 64-bit index path (a batch of 1 with a stride past 2^31).
TYPED_TEST(UpsampleTest, UpsampleBilinear2dWideIndexPath) {
  for (const auto& p : kBilinearCases) {
    if (p.b != 1) continue;
    for (Kind kind : {Kind::Contiguous, Kind::ChannelsLast}) {
      check_bilinear<TypeParam>(*this, p, kind, nullptr, nullptr, true);
    }
  }
}

// NaN and the infinities spread to every output that reads them (a weight of 0 times an infinity
// is NaN, as in the reference's f64 formula); the extremes stay finite.
TYPED_TEST(UpsampleTest, UpsampleBilinear2dSpecialValues) {
  using T = TypeParam;
  if constexpr (ref::is_float_v<T>) {
    const auto specials = gpu_test::special_values<T>();
    std::vector<T> v;
    for (size_t i = 0; i < 2 * 3 * 5; ++i) {
      v.push_back(ref::from_double<T>(specials[i % specials.size()]));
    }
    check_bilinear<T>(*this, {2, 1, 3, 5, 6, 10, false, 0, 0}, Kind::Contiguous, nullptr, &v);
    check_bilinear<T>(*this, {2, 1, 3, 5, 7, 9, true, 0, 0}, Kind::Contiguous, nullptr, &v);
  } else {
    GTEST_SKIP() << "integers have no special values";
  }
}

// Hand-checked values, independent of the reference code: a 1x1x2x2 plane [[0, 4], [8, 12]]
// upsampled to 3x3, with and without align_corners. Every weight is 0, 0.5 or 1, so every dtype
// must match exactly.
TYPED_TEST(UpsampleTest, UpsampleBilinear2dKnownValues) {
  using T = TypeParam;
  const std::vector<T> src = {ref::from_double<T>(0), ref::from_double<T>(4),
                              ref::from_double<T>(8), ref::from_double<T>(12)};
  auto d_src = this->device().upload(src);
  auto d_info = this->device().upload(std::vector<size_t>{1, 1, 2, 2, 4, 4, 2, 1});
  const auto launch = [&](bool align) {
    return run<T>(*this, "upsample_bilinear2d", 9, 9, nullptr,
                  [&](hkb::LaunchArgs& a, hkb_devptr out) {
                    a.arg(size_t{3}).arg(size_t{3}).arg(align).arg(false).arg(0.0).arg(false);
                    a.arg(0.0).arg(d_info.ptr()).arg(d_src.ptr()).arg(out);
                  });
  };
  // align_corners: scale 1/2, sources 0, 0.5, 1 on both axes.
  ref::Expect aligned;
  for (double v : {0.0, 2.0, 4.0, 4.0, 6.0, 8.0, 8.0, 10.0, 12.0}) aligned.push(v, 12);
  expect_close(launch(true), aligned, false, 0.0);
  // Half-pixel: scale 2/3, sources max(2/3 * (o + 0.5) - 0.5, 0) = 0, 0.5, 7/6 -> taps (0, 1)
  // with weights 0, 0.5, and (1, 1) for the last (clamped to the edge). Row r, column c gives
  // 8 * y(r) + 4 * x(c) with y, x in {0, 0.5, 1}.
  ref::Expect half;
  for (double y : {0.0, 0.5, 1.0}) {
    for (double x : {0.0, 0.5, 1.0}) half.push(8 * y + 4 * x, 12);
  }
  expect_close(launch(false), half, false, 0.0);
}

// ---------------------------------------------------------------------------------------------
// Geometry: a grid much smaller than the work (grid-stride loops), grids that cover the outputs
// with other block sizes, and empty launches.

TYPED_TEST(UpsampleTest, GridSmallerThanWork) {
  using T = TypeParam;
  const auto cfg = hkb::LaunchConfig::make(3, 1, 1, 64, 1, 1);
  check_nearest<T>(*this, {2, 3, 16, 16, 32, 32}, Kind::Contiguous, &cfg);
  check_nearest<T>(*this, {2, 3, 5, 7, 9, 13}, Kind::ChannelsLast, &cfg);
  check_bilinear<T>(*this, {2, 3, 9, 7, 20, 15, false, 0, 0}, Kind::Contiguous, &cfg);
  // Tap tables longer than the block: each thread fills several entries.
  check_bilinear<T>(*this, {1, 2, 9, 50, 20, 100, false, 0, 0}, Kind::ChannelsLast, &cfg);
}

TYPED_TEST(UpsampleTest, CoveringGrids) {
  using T = TypeParam;
  for (const uint32_t block : {90u, 30u, 256u}) {
    const uint32_t extra = block == 256 ? 5 : 0;
    auto cover = [&](size_t n) {
      return hkb::LaunchConfig::make(static_cast<uint32_t>((n + block - 1) / block) + extra, 1, 1,
                                     block, 1, 1);
    };
    const auto c = cover(2 * 3 * 32 * 32);
    check_nearest<T>(*this, {2, 3, 16, 16, 32, 32}, Kind::Contiguous, &c);
    const auto d = cover(2 * 3 * 9 * 13);
    check_nearest<T>(*this, {2, 3, 5, 7, 9, 13}, Kind::OffsetBroadcast, &d);
    const auto e = cover(2 * 3 * 11 * 7);
    check_bilinear<T>(*this, {2, 3, 5, 3, 11, 7, false, 0, 0}, Kind::OffsetBroadcast, &e);
  }
}

// An empty batch writes nothing (the guard stays poison) under a one-block grid.
TYPED_TEST(UpsampleTest, EmptyBatchWritesNothing) {
  using T = TypeParam;
  const auto cfg = hkb::LaunchConfig::make(1, 1, 1, 256, 1, 1);
  check_nearest<T>(*this, {0, 3, 4, 4, 8, 8}, Kind::Contiguous, &cfg);
  check_bilinear<T>(*this, {0, 3, 4, 4, 8, 8, false, 0, 0}, Kind::Contiguous, &cfg);
}

}  // namespace
