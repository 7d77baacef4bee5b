// CONV throughput under candle's launch geometry (for_num_elems over the outputs).
// - upsample_nearest2d: 8 x 64 x 128 x 128 -> 256 x 256 (x2 on both axes, scales 0.5 as candle's
//   host computes them), and f32 4 x 64 x 96 x 96 -> 288 x 288 (x3: scales that are no power of
//   two take the kernel's f64 path). Bytes: the output written plus the input read once.
// - im2col: the conv2d default path for a 3x3 kernel, stride 1, padding 1 over 8 x 64 x 64 x 64
//   (dst 8 x 64 x 64 x 64 x 3 x 3). Bytes: the output written plus the input read once.
// Both against a device-to-device copy timed in the same run.
#include "bench_common.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

template <typename T>
void fill_bytes(const hkb::Device& dev, const hkb::DeviceBuffer<T>& buf, uint8_t v) {
  hkb::check(hkb_memset_d8(dev.get(), buf.ptr(), v, buf.size() * sizeof(T)));
}

template <typename T>
bench::Row upsample_nearest_row(const hkb::Device& dev, const std::string& tag, size_t b = 8,
                                size_t c = 64, size_t h = 128, size_t w = 128, size_t factor = 2) {
  const size_t ho = h * factor, wo = w * factor;
  auto src = dev.alloc<T>(b * c * h * w);
  fill_bytes(dev, src, 0x3C);
  const size_t n = b * c * ho * wo;
  auto dst = dev.alloc<T>(n);
  auto info = dev.upload(std::vector<size_t>{b, c, h, w, c * h * w, h * w, w, 1});
  const double w_scale = static_cast<double>(h) / static_cast<double>(ho);  // dims[2] / target
  const double h_scale = static_cast<double>(w) / static_cast<double>(wo);  // dims[3] / target
  hkb::LaunchArgs args;
  args.arg(ho).arg(wo).arg(w_scale).arg(h_scale).arg(info.ptr()).arg(src.ptr()).arg(dst.ptr());
  const auto cfg = hkb::LaunchConfig::for_num_elems(static_cast<uint32_t>(n));
  const hkb::Function fn = dev.function("upsample_nearest2d_" + tag);
  const double s = bench::time_median(dev, [&] { fn.launch(cfg, args); });
  const std::string shape = std::to_string(b) + "x" + std::to_string(c) + "x" + std::to_string(h) +
                            "x" + std::to_string(w) + " x" + std::to_string(factor);
  return {"upsample_nearest2d_" + tag + " " + shape, 1.0 * (n + src.size()) * sizeof(T), s};
}

template <typename T>
bench::Row im2col_row(const hkb::Device& dev, const std::string& tag) {
  const size_t b = 8, c = 64, h = 64, w = 64, k = 3, stride = 1, padding = 1, dilation = 1;
  const size_t ho = (h + 2 * padding - dilation * (k - 1) - 1) / stride + 1;
  const size_t wo = (w + 2 * padding - dilation * (k - 1) - 1) / stride + 1;
  auto src = dev.alloc<T>(b * c * h * w);
  fill_bytes(dev, src, 0x3C);
  const size_t n = b * ho * wo * c * k * k;
  auto dst = dev.alloc<T>(n);
  auto info = dev.upload(std::vector<size_t>{b, c, h, w, c * h * w, h * w, w, 1});
  hkb::LaunchArgs args;
  args.arg(n).arg(ho).arg(wo).arg(k).arg(k).arg(stride).arg(padding).arg(dilation);
  args.arg(info.ptr()).arg(src.ptr()).arg(dst.ptr());
  const auto cfg = hkb::LaunchConfig::for_num_elems(static_cast<uint32_t>(n));
  const hkb::Function fn = dev.function("im2col_" + tag);
  const double s = bench::time_median(dev, [&] { fn.launch(cfg, args); });
  return {"im2col_" + tag + " 8x64x64x64 k3 s1 p1", 1.0 * (n + src.size()) * sizeof(T), s};
}

}  // namespace

int main() {
  int count = 0;
  if (hkb_device_count(&count) != HKB_SUCCESS || count == 0) {
    std::printf("no GPU device: %s\n", hkb_last_error());
    return 0;
  }
  const hkb::Device dev(0);
  std::vector<bench::Row> rows;
  rows.push_back(upsample_nearest_row<float>(dev, "f32"));
  rows.push_back(upsample_nearest_row<hkb::bf16>(dev, "bf16"));
  rows.push_back(upsample_nearest_row<float>(dev, "f32", 4, 64, 96, 96, 3));
  rows.push_back(im2col_row<float>(dev, "f32"));
  rows.push_back(im2col_row<hkb::bf16>(dev, "bf16"));
  bench::print_table("CONV", rows, bench::copy_bandwidth(dev, 8 * 64 * 256 * 256 * sizeof(float)));
  return 0;
}
