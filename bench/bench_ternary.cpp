// TERNARY (where) throughput under candle's launch geometry (block 1024, grid ceil(n/1024)) on 64M
// elements (an 8192 x 8192 matrix), f32 and bf16 values with a u8 condition: all three inputs
// contiguous (candle passes a real info array), and a masked fill (t a row vector [1,8192], f a
// scalar). Bytes counted: every distinct input element read once plus every output element
// written once.
#include "bench_common.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

constexpr size_t kSide = 8192;
constexpr size_t kNumel = kSide * kSide;  // 64M

template <typename T>
bench::Row where_row(const hkb::Device& dev, const std::string& tag, bool masked_fill) {
  const size_t t_len = masked_fill ? kSide : kNumel;
  const size_t f_len = masked_fill ? 1 : kNumel;
  auto cond = dev.alloc<uint8_t>(kNumel);
  auto t = dev.alloc<T>(t_len);
  auto f = dev.alloc<T>(f_len);
  auto out = dev.alloc<T>(kNumel);
  // The condition selects t everywhere; f is read all the same (where selects, never branches).
  hkb::check(hkb_memset_d8(dev.get(), cond.ptr(), 0x01, kNumel));
  hkb::check(hkb_memset_d8(dev.get(), t.ptr(), 0x3C, t_len * sizeof(T)));
  hkb::check(hkb_memset_d8(dev.get(), f.ptr(), 0x3D, f_len * sizeof(T)));
  // info = [dims, cond strides, t strides, f strides]
  std::vector<size_t> info = {kSide, kSide, kSide, 1, kSide, 1, kSide, 1};
  if (masked_fill) info = {kSide, kSide, kSide, 1, 0, 1, 0, 0};
  auto dinfo = dev.upload(info);
  const std::string kernel = "where_u8_" + tag;
  hkb::LaunchArgs args;
  args.arg(kNumel)
      .arg(size_t{2})
      .arg(dinfo.ptr())
      .arg(cond.ptr())
      .arg(t.ptr())
      .arg(f.ptr())
      .arg(out.ptr());
  const hkb::LaunchConfig cfg = hkb::LaunchConfig::for_num_elems(static_cast<uint32_t>(kNumel));
  const hkb::Function fn = dev.function(kernel);
  const double s = bench::time_median(dev, [&] { fn.launch(cfg, args); });
  const double bytes = static_cast<double>(kNumel * (1 + sizeof(T)) + (t_len + f_len) * sizeof(T));
  return {kernel + (masked_fill ? " masked fill [1,8192] / scalar" : " 64M contiguous"), bytes, s};
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
  for (bool masked_fill : {false, true}) {
    rows.push_back(where_row<float>(dev, "f32", masked_fill));
    rows.push_back(where_row<hkb::bf16>(dev, "bf16", masked_fill));
  }
  bench::print_table("TERNARY", rows, bench::copy_bandwidth(dev, kNumel * sizeof(float)));
  return 0;
}
