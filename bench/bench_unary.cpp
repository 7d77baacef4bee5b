// UNARY throughput under candle's launch geometry (block 1024, grid ceil(n/1024)) on 64M elements:
// ucopy, neg, exp, gelu and silu for f32 and bf16 over a contiguous input (null info, the
// vectorised path) and ucopy/exp over the transpose of an 8192 x 8192 matrix (the strided path).
// Two ucopy rows also run with one thread per 16-byte pack, beside candle's grid, for comparison.
// Bytes counted: every input element read once plus every output element written once.
#include "bench_common.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

constexpr size_t kSide = 8192;
constexpr size_t kNumel = kSide * kSide;  // 64M

// `pack_grid`: one thread per 16-byte pack instead of candle's one per element, to show what the
// idle three quarters (f32) or seven eighths (bf16) of candle's grid cost.
template <typename T>
bench::Row unary_row(const hkb::Device& dev, const std::string& op, const std::string& tag,
                     bool strided, bool pack_grid = false) {
  auto in = dev.alloc<T>(kNumel);
  auto out = dev.alloc<T>(kNumel);
  hkb::check(hkb_memset_d8(dev.get(), in.ptr(), 0x3C, kNumel * sizeof(T)));  // small positives
  // The transpose of a kSide x kSide matrix: dims [kSide, kSide], strides [1, kSide].
  auto info = dev.upload(std::vector<size_t>{kSide, kSide, 1, kSide});
  const std::string kernel = "u" + op + "_" + tag;
  hkb::LaunchArgs args;
  args.arg(kNumel)
      .arg(size_t{2})
      .arg(strided ? info.ptr() : hkb_devptr{0})
      .arg(in.ptr())
      .arg(out.ptr());
  hkb::LaunchConfig cfg = hkb::LaunchConfig::for_num_elems(static_cast<uint32_t>(kNumel));
  if (pack_grid) {
    const size_t packs = kNumel * sizeof(T) / 16;
    cfg = hkb::LaunchConfig::make(static_cast<uint32_t>((packs + 1023) / 1024), 1, 1, 1024, 1, 1);
  }
  const hkb::Function fn = dev.function(kernel);
  const double s = bench::time_median(dev, [&] { fn.launch(cfg, args); });
  return {kernel + (strided ? " 8192x8192 transposed" : " 64M contiguous") +
              (pack_grid ? " (thread per 16 B)" : ""),
          2.0 * kNumel * sizeof(T), s};
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
  for (const char* op : {"copy", "neg", "exp", "gelu", "silu"}) {
    rows.push_back(unary_row<float>(dev, op, "f32", false));
    rows.push_back(unary_row<hkb::bf16>(dev, op, "bf16", false));
  }
  rows.push_back(unary_row<float>(dev, "copy", "f32", false, true));
  rows.push_back(unary_row<hkb::bf16>(dev, "copy", "bf16", false, true));
  for (const char* op : {"copy", "exp"}) {
    rows.push_back(unary_row<float>(dev, op, "f32", true));
    rows.push_back(unary_row<hkb::bf16>(dev, op, "bf16", true));
  }
  bench::print_table("UNARY", rows, bench::copy_bandwidth(dev, kNumel * sizeof(float)));
  return 0;
}
