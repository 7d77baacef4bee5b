// CAST throughput under candle's launch geometry (block 1024, grid ceil(n/1024)) on 64M elements:
// the model-loading and mixed-precision casts (f32 <-> bf16, f32 <-> f16, f32 -> fp8, u32/i64 ->
// f32) over a contiguous input (null info, the vectorised path), and f32 <-> bf16 over the
// transpose of an 8192 x 8192 matrix (the strided path). Bytes counted: input read plus output
// written.
#include "bench_common.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

constexpr size_t kSide = 8192;
constexpr size_t kNumel = kSide * kSide;  // 64M

template <typename S, typename D>
bench::Row cast_row(const hkb::Device& dev, const std::string& src, const std::string& dst,
                    bool strided) {
  auto in = dev.alloc<S>(kNumel);
  auto out = dev.alloc<D>(kNumel);
  hkb::check(hkb_memset_d8(dev.get(), in.ptr(), 0x3C, kNumel * sizeof(S)));
  auto info = dev.upload(std::vector<size_t>{kSide, kSide, 1, kSide});
  const std::string kernel = "cast_" + src + "_" + dst;
  hkb::LaunchArgs args;
  args.arg(kNumel)
      .arg(size_t{2})
      .arg(strided ? info.ptr() : hkb_devptr{0})
      .arg(in.ptr())
      .arg(out.ptr());
  const hkb::LaunchConfig cfg = hkb::LaunchConfig::for_num_elems(static_cast<uint32_t>(kNumel));
  const hkb::Function fn = dev.function(kernel);
  const double s = bench::time_median(dev, [&] { fn.launch(cfg, args); });
  return {kernel + (strided ? " 8192x8192 transposed" : " 64M contiguous"),
          static_cast<double>(kNumel) * (sizeof(S) + sizeof(D)), s};
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
  rows.push_back(cast_row<float, hkb::bf16>(dev, "f32", "bf16", false));
  rows.push_back(cast_row<hkb::bf16, float>(dev, "bf16", "f32", false));
  rows.push_back(cast_row<float, hkb::f16>(dev, "f32", "f16", false));
  rows.push_back(cast_row<hkb::f16, float>(dev, "f16", "f32", false));
  rows.push_back(cast_row<hkb::bf16, hkb::f16>(dev, "bf16", "f16", false));
  rows.push_back(cast_row<float, hkb::f8e4m3>(dev, "f32", "f8_e4m3", false));
  rows.push_back(cast_row<hkb::f8e4m3, hkb::bf16>(dev, "f8_e4m3", "bf16", false));
  rows.push_back(cast_row<uint32_t, float>(dev, "u32", "f32", false));
  rows.push_back(cast_row<int64_t, float>(dev, "i64", "f32", false));
  rows.push_back(cast_row<float, hkb::bf16>(dev, "f32", "bf16", true));
  rows.push_back(cast_row<hkb::bf16, float>(dev, "bf16", "f32", true));
  bench::print_table("CAST", rows, bench::copy_bandwidth(dev, kNumel * sizeof(float)));
  return 0;
}
