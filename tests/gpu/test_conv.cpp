// CONV on the device against the float64 references of tests/reference/conv_ref.hpp, for every
// dtype of the module (bf16 f16 f32 f64 u8 u32): direct and transposed convolutions, im2col,
// im2col1d, col2im1d, pooling and upsampling with odd shapes (1x1 kernels, stride above the
// kernel, padding at least the kernel, dilation, non-square, batch and channels above 1),
// channels-last, offset and batch-broadcast input views, non-contiguous conv kernels, NaN and
// -inf in max pooling, candle's launch geometry, a grid smaller than the work, empty launches and
// ~2^20-output cases. Outputs are poisoned with guard elements past the end that must survive.
#include "gpu/gpu_test.hpp"
#include "reference/conv_ref.hpp"

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace {

using gpu_test::GpuTest;
using gpu_test::Layout;

constexpr size_t kGuard = 8;

template <typename T>
class ConvTest : public GpuTest {};

using ConvTypes = ::testing::Types<float, double, hkb::f16, hkb::bf16, uint8_t, uint32_t>;
TYPED_TEST_SUITE(ConvTest, ConvTypes);

// Random inputs: floats in [-4, 4), u8 over its range, u32 below 2^20 (window sums and averages
// stay exact in float and double; conv products still wrap past 2^32).
template <typename T>
std::vector<T> random_values(std::mt19937_64& rng, size_t n) {
  std::vector<T> v(std::max<size_t>(n, 1));  // an empty tensor still gets a (never read) buffer
  for (auto& x : v) {
    if constexpr (ref::is_float_v<T>) {
      x = ref::from_double<T>(std::uniform_real_distribution<double>(-4.0, 4.0)(rng));
    } else if constexpr (sizeof(T) == 1) {
      x = static_cast<T>(rng());
    } else {
      x = static_cast<T>(rng() & 0xFFFFFu);
    }
  }
  return v;
}

// How an input tensor is laid out in its buffer.
enum class Kind { Contiguous, ChannelsLast, OffsetBroadcast };
const char* kind_name(Kind k) {
  return k == Kind::Contiguous     ? "contiguous"
         : k == Kind::ChannelsLast ? "channels-last"
                                   : "offset+broadcast";
}

// A 3- or 4-D view (dims[0] batch, dims[1] channels) of the given kind. ChannelsLast stores the
// channel dim innermost; OffsetBroadcast starts at element 5 and repeats batch 0 (stride 0).
Layout make_layout(std::vector<size_t> dims, Kind kind) {
  Layout l = Layout::contiguous(dims);
  const size_t nd = dims.size();
  if (kind == Kind::ChannelsLast) {
    // memory order: dims[0], dims[2..], dims[1]
    size_t s = 1;
    l.strides[1] = s;
    s *= dims[1];
    for (size_t d = nd; d-- > 2;) {
      l.strides[d] = s;
      s *= dims[d];
    }
    l.strides[0] = s;
  } else if (kind == Kind::OffsetBroadcast) {
    l.strides[0] = 0;
    l.offset = 5;
  }
  return l;
}

// 4-D reference view of a layout; 3-D layouts get a leading unit dim (`unit_at` 0) or a unit dim
// at position 2 (`unit_at` 2, the h of a 1-D transposed conv).
template <typename T>
ref::View4<T> view4(const std::vector<T>& base, const Layout& l, int unit_at = 0) {
  ref::View4<T> v;
  v.base = base.data() + l.offset;
  if (l.dims.size() == 4) {
    for (int d = 0; d < 4; ++d) v.dims[d] = l.dims[d], v.strides[d] = l.strides[d];
  } else if (unit_at == 0) {
    v.dims[0] = 1, v.strides[0] = 0;
    for (int d = 0; d < 3; ++d) v.dims[d + 1] = l.dims[d], v.strides[d + 1] = l.strides[d];
  } else {
    v.dims[0] = l.dims[0], v.strides[0] = l.strides[0];
    v.dims[1] = l.dims[1], v.strides[1] = l.strides[1];
    v.dims[2] = 1, v.strides[2] = 0;
    v.dims[3] = l.dims[2], v.strides[3] = l.strides[2];
  }
  return v;
}

std::vector<size_t> concat(std::vector<size_t> a, const std::vector<size_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

template <typename T>
double acc_eps() {
  return std::is_same_v<T, double> ? std::ldexp(1.0, -52) : std::ldexp(1.0, -23);
}

// Compares the first e.value.size() outputs with the reference and checks the guard elements
// behind them are still poison. Floats: within one ulp of T plus the accumulation error bound
// (terms * eps of the accumulator * sum of |terms|), or exactly (sign of zero included) for
// copies; NaN and infinities must match. Integers: within int_tol.
template <typename T>
void expect_close(const std::vector<T>& got, const ref::Expect& e, bool exact, double int_tol = 0) {
  const size_t n = e.value.size();
  ASSERT_EQ(got.size(), n + kGuard);
  size_t bad = 0;
  std::ostringstream os;
  for (size_t i = 0; i < n; ++i) {
    const double g = ref::to_double(got[i]), w = e.value[i];
    bool ok;
    if constexpr (ref::is_float_v<T>) {
      if (std::isnan(w) || std::isnan(g)) {
        ok = std::isnan(w) && std::isnan(g);
      } else if (exact || std::isinf(w)) {
        ok = g == w && std::signbit(g) == std::signbit(w);
      } else {
        const double tol = ref::ulp_at<T>(std::fabs(w)) + 2.0 * e.terms * acc_eps<T>() * e.mag[i];
        ok = std::isfinite(g) && std::fabs(g - w) <= tol;
      }
    } else {
      ok = std::fabs(g - w) <= int_tol;
    }
    if (!ok) {
      if (bad < 5) os << "\n  [" << i << "] got " << g << " want " << w;
      ++bad;
    }
  }
  EXPECT_EQ(bad, 0u) << bad << " of " << n << " outputs wrong" << os.str();
  for (size_t i = n; i < got.size(); ++i) {
    ASSERT_TRUE(ref::same_bits(got[i], gpu_test::poison<T>())) << "wrote past the end at " << i;
  }
}

// Launches `op`_<dtype> over a poisoned output of n elements (+ guard) with `args` built by
// `build(args, out_ptr)`, with candle's geometry over `grid_elems` unless `cfg` is given.
template <typename T>
std::vector<T> run(GpuTest& t, const std::string& op, size_t n, size_t grid_elems,
                   const hkb::LaunchConfig* cfg,
                   const std::function<void(hkb::LaunchArgs&, hkb_devptr)>& build) {
  auto out = t.device().upload(std::vector<T>(n + kGuard, gpu_test::poison<T>()));
  hkb::LaunchArgs args;
  build(args, out.ptr());
  const hkb::LaunchConfig c = cfg ? *cfg
                                  : hkb::LaunchConfig::for_num_elems(
                                        static_cast<uint32_t>(std::max<size_t>(grid_elems, 1)));
  t.launch(op + "_" + ref::tag<T>(), c, args);
  return out.download();
}

// ---------------------------------------------------------------------------------------------
// Direct convolutions.

struct Conv1dCase {
  size_t b, c_in, l_in, c_out, k, stride, padding, dilation;
};
const std::vector<Conv1dCase> kConv1dCases = {
    {2, 3, 11, 4, 3, 1, 0, 1},  // plain
    {2, 5, 7, 3, 1, 1, 0, 1},   // 1x1 kernel
    {2, 3, 13, 2, 2, 3, 0, 1},  // stride above the kernel
    {1, 2, 9, 3, 2, 1, 3, 1},   // padding above the kernel
    {2, 3, 17, 4, 3, 2, 1, 2},  // dilation 2 with stride and padding
    {1, 4, 20, 2, 3, 1, 2, 3},  // dilation 3
};

template <typename T>
void check_conv1d(GpuTest& t, const Conv1dCase& p, Kind kind, bool kernel_permuted,
                  const hkb::LaunchConfig* cfg = nullptr) {
  SCOPED_TRACE(std::string("conv1d ") + kind_name(kind) + (kernel_permuted ? " k-perm " : " ") +
               "b" + std::to_string(p.b) + " cin" + std::to_string(p.c_in) + " l" +
               std::to_string(p.l_in) + " k" + std::to_string(p.k) + " s" +
               std::to_string(p.stride) + " p" + std::to_string(p.padding) + " d" +
               std::to_string(p.dilation) + ", " + t.seed_note());
  const Layout sl = make_layout({p.b, p.c_in, p.l_in}, kind);
  // The kernel (c_out, c_in, k), optionally stored as (c_in, k, c_out): candle only calls conv1d
  // for a non-contiguous kernel.
  Layout kl = Layout::contiguous({p.c_out, p.c_in, p.k});
  if (kernel_permuted) kl.strides = {1, p.k * p.c_out, p.c_out};
  const auto src = random_values<T>(t.rng(), sl.storage_size());
  const auto ker = random_values<T>(t.rng(), kl.storage_size());
  const size_t l_out = (p.l_in + 2 * p.padding - p.dilation * (p.k - 1) - 1) / p.stride + 1;
  const auto want =
      ref::conv1d(view4(src, sl), view4(ker, kl), l_out, p.stride, p.padding, p.dilation);
  auto d_src = t.device().upload(src);
  auto d_ker = t.device().upload(ker);
  auto d_info = t.device().upload(concat(sl.info(), kl.info()));
  const size_t n = p.b * p.c_out * l_out;
  const auto got = run<T>(t, "conv1d", n, n, cfg, [&](hkb::LaunchArgs& a, hkb_devptr out) {
    a.arg(sl.numel()).arg(l_out).arg(p.stride).arg(p.padding).arg(p.dilation);
    a.arg(d_info.ptr()).arg(d_src.ptr(sl.offset)).arg(d_ker.ptr()).arg(out);
  });
  expect_close(got, want, false);
}

TYPED_TEST(ConvTest, Conv1d) {
  for (const auto& p : kConv1dCases) {
    for (Kind kind : {Kind::Contiguous, Kind::ChannelsLast, Kind::OffsetBroadcast}) {
      check_conv1d<TypeParam>(*this, p, kind, kind == Kind::ChannelsLast);
    }
  }
}

struct Conv2dCase {
  size_t b, c_in, h, w, c_out, hk, wk, stride, padding, dilation;
};
const std::vector<Conv2dCase> kConv2dCases = {
    {2, 3, 7, 9, 4, 3, 3, 1, 0, 1},    // non-square input
    {2, 4, 5, 6, 3, 1, 1, 1, 0, 1},    // 1x1 kernel
    {1, 2, 11, 9, 3, 2, 2, 3, 0, 1},   // stride above the kernel
    {2, 2, 5, 4, 2, 2, 3, 1, 3, 1},    // padding at least the kernel, non-square kernel
    {1, 3, 12, 10, 2, 3, 2, 2, 1, 2},  // dilation 2
};

template <typename T>
void check_conv2d(GpuTest& t, const Conv2dCase& p, Kind kind, bool kernel_permuted,
                  const hkb::LaunchConfig* cfg = nullptr) {
  SCOPED_TRACE(std::string("conv2d ") + kind_name(kind) + " b" + std::to_string(p.b) + " cin" +
               std::to_string(p.c_in) + " " + std::to_string(p.h) + "x" + std::to_string(p.w) +
               " k" + std::to_string(p.hk) + "x" + std::to_string(p.wk) + " s" +
               std::to_string(p.stride) + " p" + std::to_string(p.padding) + " d" +
               std::to_string(p.dilation) + ", " + t.seed_note());
  const Layout sl = make_layout({p.b, p.c_in, p.h, p.w}, kind);
  Layout kl = Layout::contiguous({p.c_out, p.c_in, p.hk, p.wk});
  if (kernel_permuted) kl = make_layout({p.c_out, p.c_in, p.hk, p.wk}, Kind::ChannelsLast);
  const auto src = random_values<T>(t.rng(), sl.storage_size());
  const auto ker = random_values<T>(t.rng(), kl.storage_size());
  const size_t h_out = (p.h + 2 * p.padding - p.dilation * (p.hk - 1) - 1) / p.stride + 1;
  const size_t w_out = (p.w + 2 * p.padding - p.dilation * (p.wk - 1) - 1) / p.stride + 1;
  const auto want =
      ref::conv2d(view4(src, sl), view4(ker, kl), h_out, w_out, p.stride, p.padding, p.dilation);
  auto d_src = t.device().upload(src);
  auto d_ker = t.device().upload(ker);
  auto d_info = t.device().upload(concat(sl.info(), kl.info()));
  const size_t n = p.b * p.c_out * h_out * w_out;
  const auto got = run<T>(t, "conv2d", n, n, cfg, [&](hkb::LaunchArgs& a, hkb_devptr out) {
    a.arg(sl.numel()).arg(w_out).arg(h_out).arg(p.stride).arg(p.padding).arg(p.dilation);
    a.arg(d_info.ptr()).arg(d_src.ptr(sl.offset)).arg(d_ker.ptr()).arg(out);
  });
  expect_close(got, want, false);
}

TYPED_TEST(ConvTest, Conv2d) {
  for (const auto& p : kConv2dCases) {
    for (Kind kind : {Kind::Contiguous, Kind::ChannelsLast, Kind::OffsetBroadcast}) {
      check_conv2d<TypeParam>(*this, p, kind, kind != Kind::Contiguous);
    }
  }
}

struct ConvT1dCase {
  size_t b, c_in, l_in, c_out, k, stride, padding, out_padding, dilation;
};
const std::vector<ConvT1dCase> kConvT1dCases = {
    {2, 3, 7, 4, 3, 1, 0, 0, 1},  // plain
    {2, 2, 5, 3, 3, 2, 1, 1, 1},  // stride, padding, output padding
    {1, 4, 6, 2, 2, 3, 0, 0, 1},  // stride above the kernel: gaps
    {1, 2, 8, 3, 3, 2, 2, 0, 2},  // dilation 2
    {2, 3, 5, 2, 1, 1, 0, 0, 1},  // 1x1 kernel
    {1, 2, 4, 2, 2, 1, 2, 0, 1},  // padding at least the kernel
};

template <typename T>
void check_conv_transpose1d(GpuTest& t, const ConvT1dCase& p, Kind kind) {
  SCOPED_TRACE(std::string("conv_transpose1d ") + kind_name(kind) + " l" + std::to_string(p.l_in) +
               " k" + std::to_string(p.k) + " s" + std::to_string(p.stride) + " p" +
               std::to_string(p.padding) + " op" + std::to_string(p.out_padding) + " d" +
               std::to_string(p.dilation) + ", " + t.seed_note());
  const size_t l_out =
      (p.l_in - 1) * p.stride - 2 * p.padding + p.dilation * (p.k - 1) + p.out_padding + 1;
  const Layout sl = make_layout({p.b, p.c_in, p.l_in}, kind);
  const Layout kl = Layout::contiguous({p.c_in, p.c_out, p.k});
  const auto src = random_values<T>(t.rng(), sl.storage_size());
  const auto ker = random_values<T>(t.rng(), kl.storage_size());
  const auto want = ref::conv_transpose2d(view4(src, sl, 2), view4(ker, kl, 2), 1, l_out, p.stride,
                                          p.padding, p.dilation, false);
  auto d_src = t.device().upload(src);
  auto d_ker = t.device().upload(ker);
  auto d_info = t.device().upload(concat(sl.info(), kl.info()));
  const size_t n = p.b * p.c_out * l_out;
  const auto got =
      run<T>(t, "conv_transpose1d", n, n, nullptr, [&](hkb::LaunchArgs& a, hkb_devptr out) {
        a.arg(sl.numel()).arg(l_out).arg(p.stride).arg(p.padding).arg(p.out_padding);
        a.arg(p.dilation).arg(d_info.ptr()).arg(d_src.ptr(sl.offset)).arg(d_ker.ptr()).arg(out);
      });
  expect_close(got, want, false);
}

TYPED_TEST(ConvTest, ConvTranspose1d) {
  for (const auto& p : kConvT1dCases) {
    for (Kind kind : {Kind::Contiguous, Kind::ChannelsLast, Kind::OffsetBroadcast}) {
      check_conv_transpose1d<TypeParam>(*this, p, kind);
    }
  }
}

struct ConvT2dCase {
  size_t b, c_in, h, w, c_out, hk, wk, stride, padding, out_padding, dilation;
};
const std::vector<ConvT2dCase> kConvT2dCases = {
    {2, 3, 4, 5, 2, 3, 3, 1, 0, 0, 1},  // plain, non-square
    {1, 2, 5, 3, 3, 3, 2, 2, 1, 1, 1},  // stride, padding, output padding, non-square kernel
    {2, 2, 3, 4, 2, 2, 2, 3, 0, 0, 1},  // stride above the kernel
    {1, 3, 4, 4, 2, 3, 3, 2, 2, 0, 2},  // dilation 2
    {1, 2, 3, 3, 2, 1, 1, 1, 0, 0, 1},  // 1x1 kernel
};

template <typename T>
void check_conv_transpose2d(GpuTest& t, const ConvT2dCase& p, Kind kind, bool kernel_permuted,
                            const hkb::LaunchConfig* cfg = nullptr) {
  SCOPED_TRACE(std::string("conv_transpose2d ") + kind_name(kind) + " " + std::to_string(p.h) +
               "x" + std::to_string(p.w) + " k" + std::to_string(p.hk) + "x" +
               std::to_string(p.wk) + " s" + std::to_string(p.stride) + " p" +
               std::to_string(p.padding) + " d" + std::to_string(p.dilation) + ", " +
               t.seed_note());
  const size_t h_out =
      (p.h - 1) * p.stride - 2 * p.padding + p.dilation * (p.hk - 1) + p.out_padding + 1;
  const size_t w_out =
      (p.w - 1) * p.stride - 2 * p.padding + p.dilation * (p.wk - 1) + p.out_padding + 1;
  const Layout sl = make_layout({p.b, p.c_in, p.h, p.w}, kind);
  Layout kl = Layout::contiguous({p.c_in, p.c_out, p.hk, p.wk});
  if (kernel_permuted) kl = make_layout({p.c_in, p.c_out, p.hk, p.wk}, Kind::ChannelsLast);
  const auto src = random_values<T>(t.rng(), sl.storage_size());
  const auto ker = random_values<T>(t.rng(), kl.storage_size());
  const auto want = ref::conv_transpose2d(view4(src, sl), view4(ker, kl), h_out, w_out, p.stride,
                                          p.padding, p.dilation);
  auto d_src = t.device().upload(src);
  auto d_ker = t.device().upload(ker);
  auto d_info = t.device().upload(concat(sl.info(), kl.info()));
  const size_t n = p.b * p.c_out * h_out * w_out;
  const auto got =
      run<T>(t, "conv_transpose2d", n, n, cfg, [&](hkb::LaunchArgs& a, hkb_devptr out) {
        a.arg(sl.numel()).arg(w_out).arg(h_out).arg(p.stride).arg(p.padding).arg(p.out_padding);
        a.arg(p.dilation).arg(d_info.ptr()).arg(d_src.ptr(sl.offset)).arg(d_ker.ptr()).arg(out);
      });
  expect_close(got, want, false);
}

TYPED_TEST(ConvTest, ConvTranspose2d) {
  for (const auto& p : kConvT2dCases) {
    for (Kind kind : {Kind::Contiguous, Kind::ChannelsLast, Kind::OffsetBroadcast}) {
      check_conv_transpose2d<TypeParam>(*this, p, kind, kind == Kind::OffsetBroadcast);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// im2col / col2im.

struct Im2colCase {
  size_t b, c, h, w, hk, wk, stride, padding, dilation;
};
const std::vector<Im2colCase> kIm2colCases = {
    {2, 3, 7, 9, 3, 3, 1, 0, 1},    // non-square
    {1, 5, 4, 6, 1, 1, 1, 0, 1},    // 1x1 kernel
    {2, 2, 11, 9, 2, 2, 3, 0, 1},   // stride above the kernel
    {1, 3, 5, 4, 2, 3, 1, 3, 1},    // padding at least the kernel
    {2, 3, 12, 10, 3, 2, 2, 1, 2},  // dilation 2
    {1, 1, 3, 3, 3, 3, 1, 1, 1},    // one channel, same padding: 81 outputs (not a multiple of 16)
    {3, 4, 9, 7, 3, 3, 1, 1, 1},    // c_in * 9 = 36 outputs a position: whole packs of 4 values
};

template <typename T>
void check_im2col(GpuTest& t, const Im2colCase& p, Kind kind,
                  const hkb::LaunchConfig* cfg = nullptr) {
  SCOPED_TRACE(std::string("im2col ") + kind_name(kind) + " b" + std::to_string(p.b) + " c" +
               std::to_string(p.c) + " " + std::to_string(p.h) + "x" + std::to_string(p.w) + " k" +
               std::to_string(p.hk) + "x" + std::to_string(p.wk) + " s" + std::to_string(p.stride) +
               " p" + std::to_string(p.padding) + " d" + std::to_string(p.dilation) + ", " +
               t.seed_note());
  const Layout sl = make_layout({p.b, p.c, p.h, p.w}, kind);
  const auto src = random_values<T>(t.rng(), sl.storage_size());
  const size_t h_out = (p.h + 2 * p.padding - p.dilation * (p.hk - 1) - 1) / p.stride + 1;
  const size_t w_out = (p.w + 2 * p.padding - p.dilation * (p.wk - 1) - 1) / p.stride + 1;
  const auto want =
      ref::im2col(view4(src, sl), h_out, w_out, p.hk, p.wk, p.stride, p.padding, p.dilation);
  auto d_src = t.device().upload(src);
  auto d_info = t.device().upload(sl.info());
  const size_t n = p.b * h_out * w_out * p.c * p.hk * p.wk;
  ASSERT_EQ(n, want.value.size());
  const auto got = run<T>(t, "im2col", n, n, cfg, [&](hkb::LaunchArgs& a, hkb_devptr out) {
    a.arg(n).arg(h_out).arg(w_out).arg(p.hk).arg(p.wk).arg(p.stride).arg(p.padding);
    a.arg(p.dilation).arg(d_info.ptr()).arg(d_src.ptr(sl.offset)).arg(out);
  });
  expect_close(got, want, true);
}

TYPED_TEST(ConvTest, Im2col) {
  for (const auto& p : kIm2colCases) {
    for (Kind kind : {Kind::Contiguous, Kind::ChannelsLast, Kind::OffsetBroadcast}) {
      check_im2col<TypeParam>(*this, p, kind);
    }
  }
}

// ~2^20 outputs (2 x 40 x 40 x 32 x 3 x 3 = 921600) through the 16-byte stores.
TYPED_TEST(ConvTest, Im2colLarge) {
  if (sizeof(TypeParam) != 4) GTEST_SKIP() << "covered by the 4-byte types";
  check_im2col<TypeParam>(*this, {2, 32, 40, 40, 3, 3, 1, 1, 1}, Kind::Contiguous);
  check_im2col<TypeParam>(*this, {2, 32, 40, 40, 3, 3, 1, 1, 1}, Kind::ChannelsLast);
}

// The row tiles (kernels/conv.hip, im2col_rows): launches with at least 16384 outputs a busy block,
// here under grids of one, two and three blocks (so every block takes several units, and the last
// units are partial: fewer rows than R, fewer channels than C). Runs of 4-output stores (c_in *
// h_k * w_k a multiple of 4) and of single outputs (odd), 1x1 and non-square kernels, stride 2
// and 3, dilation 2, padding above the kernel, channels-last and offset sources.
const std::vector<Im2colCase> kIm2colRowCases = {
    {2, 16, 33, 35, 3, 3, 1, 1, 1},  // 144 taps a position: 4-output stores
    {3, 7, 20, 23, 3, 3, 1, 1, 1},   // 63 taps a position: single outputs
    {2, 12, 40, 31, 3, 2, 2, 3, 2},  // non-square kernel, stride 2, dilation 2, padding 3
    {1, 40, 24, 24, 1, 1, 1, 0, 1},  // 1x1 kernel
    {2, 5, 30, 28, 5, 5, 3, 5, 1},   // stride 3, padding 5: 125 taps a position
    {1, 3, 64, 64, 7, 7, 2, 3, 1},   // a stem: 7x7 stride 2 on 3 channels
};

TYPED_TEST(ConvTest, Im2colRowTiles) {
  using T = TypeParam;
  for (const auto& grid :
       {hkb::LaunchConfig::make(1, 1, 1, 1024, 1, 1), hkb::LaunchConfig::make(2, 1, 1, 256, 1, 1),
        hkb::LaunchConfig::make(3, 1, 1, 1024, 1, 1)}) {
    for (const auto& p : kIm2colRowCases) {
      for (Kind kind : {Kind::Contiguous, Kind::ChannelsLast, Kind::OffsetBroadcast}) {
        check_im2col<T>(*this, p, kind, &grid);
      }
    }
  }
}

// The row tiles under candle's grid: 4.7M outputs, at least 16384 for each busy block (two a
// multiprocessor) of any GPU up to 144 multiprocessors (the H100 has 132).
TYPED_TEST(ConvTest, Im2colRowTilesLarge) {
  if (sizeof(TypeParam) != 4 && sizeof(TypeParam) != 2) {
    GTEST_SKIP() << "covered by the 2- and 4-byte types";
  }
  check_im2col<TypeParam>(*this, {4, 32, 64, 64, 3, 3, 1, 1, 1}, Kind::Contiguous);
  check_im2col<TypeParam>(*this, {4, 33, 62, 66, 3, 3, 1, 1, 1}, Kind::ChannelsLast);
}

// Past the tap table (kernels/conv.hip, im2col_taps: launches too small for the row tiles), output
// by output instead:
// 33 x 33 = 1089 taps, and a tap row offset of 70000 (at least 2^16).
TYPED_TEST(ConvTest, Im2colPastTheTapTable) {
  check_im2col<TypeParam>(*this, {1, 2, 40, 40, 33, 33, 1, 2, 1}, Kind::Contiguous);
  check_im2col<TypeParam>(*this, {1, 1, 1, 3, 2, 1, 1, 35000, 70000}, Kind::Contiguous);
}

struct Im2col1dCase {
  size_t b, c, l, k, stride, padding, dilation;
};
const std::vector<Im2col1dCase> kIm2col1dCases = {
    {2, 3, 11, 3, 1, 0, 1},
    {1, 4, 7, 1, 1, 0, 1},
    {2, 2, 13, 2, 3, 0, 1},
    {1, 3, 5, 2, 1, 3, 1},
    {2, 3, 17, 3, 2, 1, 2},
    // tiles of 32 positions x 32 channels (kernels/conv/col1d.h): partial tiles in both dims,
    // stride and dilation, one channel, five taps, and a window past the tile's (row by row)
    {2, 37, 70, 3, 1, 1, 1},
    {1, 64, 100, 4, 2, 1, 1},
    {3, 1, 300, 3, 1, 1, 2},
    {1, 33, 40, 5, 1, 2, 1},
    {1, 3, 300, 3, 5, 1, 1},
};

TYPED_TEST(ConvTest, Im2col1d) {
  using T = TypeParam;
  for (const auto& p : kIm2col1dCases) {
    for (Kind kind : {Kind::Contiguous, Kind::ChannelsLast, Kind::OffsetBroadcast}) {
      SCOPED_TRACE(std::string("im2col1d ") + kind_name(kind) + " l" + std::to_string(p.l) + " k" +
                   std::to_string(p.k) + " s" + std::to_string(p.stride) + " p" +
                   std::to_string(p.padding) + " d" + std::to_string(p.dilation) + ", " +
                   this->seed_note());
      const Layout sl = make_layout({p.b, p.c, p.l}, kind);
      const auto src = random_values<T>(this->rng(), sl.storage_size());
      const size_t l_out = (p.l + 2 * p.padding - p.dilation * (p.k - 1) - 1) / p.stride + 1;
      const auto want = ref::im2col1d(view4(src, sl), l_out, p.k, p.stride, p.padding, p.dilation);
      auto d_src = this->device().upload(src);
      auto d_info = this->device().upload(sl.info());
      const size_t rows = p.b * l_out * p.c;  // candle passes (and launches over) the row count
      const auto small = hkb::LaunchConfig::make(2, 1, 1, 96, 1, 1);  // blocks loop over tiles
      for (const hkb::LaunchConfig* cfg :
           {static_cast<const hkb::LaunchConfig*>(nullptr), &small}) {
        const auto got = run<T>(
            *this, "im2col1d", rows * p.k, rows, cfg, [&](hkb::LaunchArgs& a, hkb_devptr out) {
              a.arg(rows).arg(l_out).arg(p.k).arg(p.stride).arg(p.padding).arg(p.dilation);
              a.arg(d_info.ptr()).arg(d_src.ptr(sl.offset)).arg(out);
            });
        expect_close(got, want, true);
      }
    }
  }
}

struct Col2imCase {
  size_t b, l_in, c_out, k, stride;
};

TYPED_TEST(ConvTest, Col2im1d) {
  using T = TypeParam;
  const std::vector<Col2imCase> cases = {
      {2, 5, 3, 3, 1},  // overlapping taps
      {1, 7, 2, 4, 2},  // stride below the kernel
      {2, 4, 3, 2, 3},  // stride above the kernel: gaps stay 0
      {1, 6, 1, 1, 1},  // 1-tap kernel: a transpose
      {3, 9, 4, 5, 2},
  };
  for (const auto& p : cases) {
    SCOPED_TRACE("col2im1d b" + std::to_string(p.b) + " l_in" + std::to_string(p.l_in) + " c" +
                 std::to_string(p.c_out) + " k" + std::to_string(p.k) + " s" +
                 std::to_string(p.stride) + ", " + this->seed_note());
    const size_t l_out = (p.l_in - 1) * p.stride + p.k;
    const auto col = random_values<T>(this->rng(), p.b * p.l_in * p.c_out * p.k);
    const auto want = ref::col2im1d(col, p.b, p.l_in, p.c_out, p.k, p.stride);
    auto d_col = this->device().upload(col);
    const size_t n = p.b * p.c_out * l_out;
    const auto got = run<
        T>(*this, "col2im1d", n, n, nullptr, [&](hkb::LaunchArgs& a, hkb_devptr out) {
      a.arg(n).arg(l_out).arg(p.l_in).arg(p.c_out).arg(p.k).arg(p.stride).arg(d_col.ptr()).arg(out);
    });
    expect_close(got, want, false);
  }
}

// ---------------------------------------------------------------------------------------------
// Pooling. wk/ws pool dims[2], hk/hs dims[3].

struct PoolCase {
  size_t b, c, d2, d3, wk, hk, ws, hs;
};
const std::vector<PoolCase> kPoolCases = {
    {2, 3, 7, 9, 2, 2, 2, 2},   // non-square input, odd sizes (last row/col dropped)
    {1, 2, 8, 5, 3, 2, 1, 2},   // overlapping windows along dims[2], non-square window
    {2, 2, 9, 11, 2, 3, 3, 4},  // stride above the kernel
    {1, 1, 5, 5, 1, 1, 1, 1},   // 1x1: a copy
    {1, 3, 6, 4, 6, 4, 1, 1},   // the whole plane
};

template <typename T>
void check_pool(GpuTest& t, bool max, const PoolCase& p, Kind kind, const std::vector<T>* values,
                const hkb::LaunchConfig* cfg = nullptr) {
  SCOPED_TRACE(std::string(max ? "max_pool2d " : "avg_pool2d ") + kind_name(kind) + " " +
               std::to_string(p.d2) + "x" + std::to_string(p.d3) + " k" + std::to_string(p.wk) +
               "x" + std::to_string(p.hk) + " s" + std::to_string(p.ws) + "x" +
               std::to_string(p.hs) + ", " + t.seed_note());
  const Layout sl = make_layout({p.b, p.c, p.d2, p.d3}, kind);
  const auto src = values ? *values : random_values<T>(t.rng(), sl.storage_size());
  ASSERT_GE(src.size(), sl.storage_size());
  const auto want = max ? ref::max_pool2d(view4(src, sl), p.wk, p.hk, p.ws, p.hs)
                        : ref::avg_pool2d(view4(src, sl), p.wk, p.hk, p.ws, p.hs);
  auto d_src = t.device().upload(src);
  auto d_info = t.device().upload(sl.info());
  const size_t n = want.value.size();
  const auto got = run<T>(t, max ? "max_pool2d" : "avg_pool2d", n, n, cfg,
                          [&](hkb::LaunchArgs& a, hkb_devptr out) {
                            a.arg(sl.numel()).arg(p.wk).arg(p.hk).arg(p.ws).arg(p.hs);
                            a.arg(d_info.ptr()).arg(d_src.ptr(sl.offset)).arg(out);
                          });
  expect_close(got, want, max);
}

TYPED_TEST(ConvTest, AvgPool2d) {
  for (const auto& p : kPoolCases) {
    for (Kind kind : {Kind::Contiguous, Kind::ChannelsLast, Kind::OffsetBroadcast}) {
      check_pool<TypeParam>(*this, false, p, kind, nullptr);
    }
  }
}

TYPED_TEST(ConvTest, MaxPool2d) {
  for (const auto& p : kPoolCases) {
    for (Kind kind : {Kind::Contiguous, Kind::ChannelsLast, Kind::OffsetBroadcast}) {
      check_pool<TypeParam>(*this, true, p, kind, nullptr);
    }
  }
}

// 2x2 windows of a 4x4 plane: all NaN; NaN with numbers; all -inf; -inf with numbers. f32/f64
// skip NaN, f16/bf16 propagate it (the reference encodes both). Plus +inf, -0.0 and the extremes
// through the overlapping 3x3 windows of a second run.
TYPED_TEST(ConvTest, MaxPool2dSpecialValues) {
  using T = TypeParam;
  if constexpr (!ref::is_float_v<T>) {
    const T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    const std::vector<T> v = {lo, lo, hi, 1, lo, lo, 0, 2, 7, hi, lo, lo, 3, 5, lo, 1};
    check_pool<T>(*this, true, {1, 1, 4, 4, 2, 2, 2, 2}, Kind::Contiguous, &v);
  } else {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    // clang-format off
    const std::vector<double> d = {
        nan,  nan,  nan, 1.5,
        nan,  nan,  nan, -3.0,
        -inf, -inf, -inf, -2.0,
        -inf, -inf, -inf, -inf};
    // clang-format on
    std::vector<T> v;
    for (double x : d) v.push_back(ref::from_double<T>(x));
    check_pool<T>(*this, true, {1, 1, 4, 4, 2, 2, 2, 2}, Kind::Contiguous, &v);
    std::vector<T> w;
    const auto specials = gpu_test::special_values<T>();
    for (size_t i = 0; i < 25; ++i) w.push_back(ref::from_double<T>(specials[i % specials.size()]));
    check_pool<T>(*this, true, {1, 1, 5, 5, 3, 3, 1, 1}, Kind::Contiguous, &w);
    check_pool<T>(*this, false, {1, 1, 4, 4, 2, 2, 2, 2}, Kind::Contiguous, &v);
  }
}

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

TYPED_TEST(ConvTest, UpsampleNearest2d) {
  for (const auto& p : kNearestCases) {
    for (Kind kind : {Kind::Contiguous, Kind::ChannelsLast, Kind::OffsetBroadcast}) {
      check_nearest<TypeParam>(*this, p, kind);
    }
  }
}

TYPED_TEST(ConvTest, UpsampleNearest2dSpecialValuesAreCopied) {
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

// 2^20 outputs (4 x 16 x 128 x 128) from 64 x 64 planes.
TYPED_TEST(ConvTest, UpsampleNearest2dLarge) {
  if (sizeof(TypeParam) != 4 && sizeof(TypeParam) != 2) GTEST_SKIP() << "covered by f32/u32/f16";
  if (std::is_same_v<TypeParam, hkb::bf16>) GTEST_SKIP() << "covered by f16";
  check_nearest<TypeParam>(*this, {4, 16, 64, 64, 128, 128}, Kind::Contiguous);
  // x2 with 3 * 5 * 100 rows of 8: the last group of blocks ends inside its threads' units.
  check_nearest<TypeParam>(*this, {3, 5, 50, 4, 100, 8}, Kind::Contiguous);
  check_nearest<TypeParam>(*this, {3, 5, 50, 4, 100, 8}, Kind::ChannelsLast);
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
};

template <typename T>
void check_bilinear(GpuTest& t, const BilinearCase& p, Kind kind,
                    const hkb::LaunchConfig* cfg = nullptr) {
  SCOPED_TRACE(std::string("upsample_bilinear2d ") + kind_name(kind) + " " + std::to_string(p.h) +
               "x" + std::to_string(p.w) + " -> " + std::to_string(p.h_out) + "x" +
               std::to_string(p.w_out) + (p.align_corners ? " align" : "") + " factors " +
               std::to_string(p.scale_h) + "," + std::to_string(p.scale_w) + ", " + t.seed_note());
  const Layout sl = make_layout({p.b, p.c, p.h, p.w}, kind);
  const auto src = random_values<T>(t.rng(), sl.storage_size());
  const auto want = ref::upsample_bilinear2d(view4(src, sl), p.h_out, p.w_out, p.align_corners,
                                             p.scale_h, p.scale_w);
  auto d_src = t.device().upload(src);
  auto d_info = t.device().upload(sl.info());
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

TYPED_TEST(ConvTest, UpsampleBilinear2d) {
  for (const auto& p : kBilinearCases) {
    for (Kind kind : {Kind::Contiguous, Kind::ChannelsLast, Kind::OffsetBroadcast}) {
      check_bilinear<TypeParam>(*this, p, kind);
    }
  }
}

// Hand-checked values, independent of the reference code: a 1x1x2x2 plane [[0, 4], [8, 12]]
// upsampled to 3x3, with and without align_corners. Every weight is 0, 0.5 or 1, so every dtype
// must match exactly.
TYPED_TEST(ConvTest, UpsampleBilinear2dKnownValues) {
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
// Geometry: a grid much smaller than the work (grid-stride loops), and empty launches.

TYPED_TEST(ConvTest, GridSmallerThanWork) {
  using T = TypeParam;
  const auto cfg = hkb::LaunchConfig::make(3, 1, 1, 64, 1, 1);
  check_conv1d<T>(*this, kConv1dCases[4], Kind::ChannelsLast, true, &cfg);
  check_conv2d<T>(*this, kConv2dCases[0], Kind::ChannelsLast, true, &cfg);
  check_conv_transpose2d<T>(*this, kConvT2dCases[1], Kind::Contiguous, false, &cfg);
  check_im2col<T>(*this, {2, 8, 17, 19, 3, 3, 1, 1, 1}, Kind::Contiguous, &cfg);
  check_pool<T>(*this, false, {2, 3, 17, 19, 2, 3, 2, 1}, Kind::Contiguous, nullptr, &cfg);
  check_pool<T>(*this, true, {2, 3, 17, 19, 2, 3, 2, 1}, Kind::ChannelsLast, nullptr, &cfg);
  check_nearest<T>(*this, {2, 3, 16, 16, 32, 32}, Kind::Contiguous, &cfg);
  check_nearest<T>(*this, {2, 3, 5, 7, 9, 13}, Kind::ChannelsLast, &cfg);
  check_bilinear<T>(*this, {2, 3, 9, 7, 20, 15, false, 0, 0}, Kind::Contiguous, &cfg);
}

// Grids that cover the outputs with blocks other than candle's 1024 threads (90: block ranges that
// end inside a 16-byte unit; 30: less than a wave; 256 with spare blocks), for the kernels that
// give each block its own range of outputs.
TYPED_TEST(ConvTest, CoveringGrids) {
  using T = TypeParam;
  for (const uint32_t block : {90u, 30u, 256u}) {
    const uint32_t extra = block == 256 ? 5 : 0;
    auto cover = [&](size_t n) {
      return hkb::LaunchConfig::make(static_cast<uint32_t>((n + block - 1) / block) + extra, 1, 1,
                                     block, 1, 1);
    };
    const auto a = cover(2 * 8 * 17 * 19 * 9);
    check_im2col<T>(*this, {2, 8, 17, 19, 3, 3, 1, 1, 1}, Kind::Contiguous, &a);
    const auto b = cover(2 * 3 * 7 * 9 * 9);  // c_in * 3 * 3 = 27: units span two positions
    check_im2col<T>(*this, {2, 3, 7, 9, 3, 3, 1, 0, 1}, Kind::ChannelsLast, &b);
    const auto c = cover(2 * 3 * 32 * 32);
    check_nearest<T>(*this, {2, 3, 16, 16, 32, 32}, Kind::Contiguous, &c);
    const auto d = cover(2 * 3 * 9 * 13);
    check_nearest<T>(*this, {2, 3, 5, 7, 9, 13}, Kind::OffsetBroadcast, &d);
  }
}

// An empty batch writes nothing (the guard stays poison) under a one-block grid.
TYPED_TEST(ConvTest, EmptyBatchWritesNothing) {
  using T = TypeParam;
  const auto cfg = hkb::LaunchConfig::make(1, 1, 1, 256, 1, 1);
  check_im2col<T>(*this, {0, 3, 5, 5, 3, 3, 1, 1, 1}, Kind::Contiguous, &cfg);
  check_nearest<T>(*this, {0, 3, 4, 4, 8, 8}, Kind::Contiguous, &cfg);
  check_pool<T>(*this, false, {0, 2, 4, 4, 2, 2, 2, 2}, Kind::Contiguous, nullptr, &cfg);
  check_conv2d<T>(*this, {0, 2, 5, 5, 2, 3, 3, 1, 0, 1}, Kind::Contiguous, false, &cfg);
}

}  // namespace
