// The transposed convolutions' GPU checks shared by test_conv.cpp's tests: the cases of the
// direct path, and check_conv_transpose1d / 2d against the float64 reference under candle's grid
// or another one, optionally with NaN and infinities sprinkled into the input.
#pragma once

#include "gpu/conv_test.hpp"

#include <string>
#include <vector>

namespace {

std::string grid_note(const hkb::LaunchConfig* cfg) {
  if (cfg == nullptr) return " candle grid";
  return " grid " + std::to_string(cfg->grid[0]) + "x" + std::to_string(cfg->block[0]);
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

// Every 37th input value NaN, +inf or -inf in turn (floats only): outputs that sum one are inf or
// NaN as the reference's, whatever the summation order.
template <typename T>
void sprinkle_specials(std::vector<T>& v) {
  const double specials[] = {std::numeric_limits<double>::quiet_NaN(), HUGE_VAL, -HUGE_VAL};
  for (size_t i = 5, k = 0; i < v.size(); i += 37, ++k) v[i] = ref::from_double<T>(specials[k % 3]);
}

template <typename T>
void check_conv_transpose1d(GpuTest& t, const ConvT1dCase& p, Kind kind,
                            bool kernel_permuted = false, const hkb::LaunchConfig* cfg = nullptr,
                            bool specials = false) {
  SCOPED_TRACE(std::string("conv_transpose1d ") + kind_name(kind) + (specials ? " specials" : "") +
               (kernel_permuted ? " k-perm" : "") + " b" + std::to_string(p.b) + " cin" +
               std::to_string(p.c_in) + " cout" + std::to_string(p.c_out) + " l" +
               std::to_string(p.l_in) + " k" + std::to_string(p.k) + " s" +
               std::to_string(p.stride) + " p" + std::to_string(p.padding) + " op" +
               std::to_string(p.out_padding) + " d" + std::to_string(p.dilation) + grid_note(cfg) +
               ", " + t.seed_note());
  const size_t l_out =
      (p.l_in - 1) * p.stride - 2 * p.padding + p.dilation * (p.k - 1) + p.out_padding + 1;
  const Layout sl = make_layout({p.b, p.c_in, p.l_in}, kind);
  Layout kl = Layout::contiguous({p.c_in, p.c_out, p.k});
  if (kernel_permuted) kl = make_layout({p.c_in, p.c_out, p.k}, Kind::ChannelsLast);
  auto src = random_values<T>(t.rng(), sl.storage_size());
  if (specials) sprinkle_specials(src);
  const auto ker = random_values<T>(t.rng(), kl.storage_size());
  const auto want = ref::conv_transpose2d(view4(src, sl, 2), view4(ker, kl, 2), 1, l_out, p.stride,
                                          p.padding, p.dilation, false);
  auto d_src = t.device().upload(src);
  auto d_ker = t.device().upload(ker);
  auto d_info = t.device().upload(concat(sl.info(), kl.info()));
  const size_t n = p.b * p.c_out * l_out;
  const auto got =
      run<T>(t, "conv_transpose1d", n, n, cfg, [&](hkb::LaunchArgs& a, hkb_devptr out) {
        a.arg(sl.numel()).arg(l_out).arg(p.stride).arg(p.padding).arg(p.out_padding);
        a.arg(p.dilation).arg(d_info.ptr()).arg(d_src.ptr(sl.offset)).arg(d_ker.ptr()).arg(out);
      });
  expect_close(got, want, false);
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
                            const hkb::LaunchConfig* cfg = nullptr, bool specials = false) {
  SCOPED_TRACE(std::string("conv_transpose2d ") + kind_name(kind) + (specials ? " specials" : "") +
               (kernel_permuted ? " k-perm" : "") + " b" + std::to_string(p.b) + " cin" +
               std::to_string(p.c_in) + " cout" + std::to_string(p.c_out) + " " +
               std::to_string(p.h) + "x" + std::to_string(p.w) + " k" + std::to_string(p.hk) + "x" +
               std::to_string(p.wk) + " s" + std::to_string(p.stride) + " p" +
               std::to_string(p.padding) + " op" + std::to_string(p.out_padding) + " d" +
               std::to_string(p.dilation) + grid_note(cfg) + ", " + t.seed_note());
  const size_t h_out =
      (p.h - 1) * p.stride - 2 * p.padding + p.dilation * (p.hk - 1) + p.out_padding + 1;
  const size_t w_out =
      (p.w - 1) * p.stride - 2 * p.padding + p.dilation * (p.wk - 1) + p.out_padding + 1;
  const Layout sl = make_layout({p.b, p.c_in, p.h, p.w}, kind);
  Layout kl = Layout::contiguous({p.c_in, p.c_out, p.hk, p.wk});
  if (kernel_permuted) kl = make_layout({p.c_in, p.c_out, p.hk, p.wk}, Kind::ChannelsLast);
  auto src = random_values<T>(t.rng(), sl.storage_size());
  if (specials) sprinkle_specials(src);
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

}  // namespace
