// CAST throughput under candle's launch geometry (block 1024, grid ceil(n/1024)) on 64M elements:
// the model-loading and mixed-precision casts (f32 <-> bf16, f32 <-> f16, f32 -> fp8, u32/i64 ->
// f32) over a contiguous input (null info, the vectorised path), and f32 <-> bf16 over the
// transpose of an 8192 x 8192 matrix (the strided path); each under candle's geometry and under
// hkb's tuned configuration (hkb_launch_config_tuned).
#include "bench_common.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace {

constexpr size_t kSide = 8192;
constexpr size_t kNumel = kSide * kSide;  // 64M

template <typename S, typename D>
bench::Row cast_row(const hkb::Device& dev, const std::string& src, const std::string& dst,
                    bool strided, bench::Geometry g) {
  const std::vector<size_t> info =
      strided ? std::vector<size_t>{kSide, kSide, 1, kSide} : std::vector<size_t>{};
  const std::string kernel = "cast_" + src + "_" + dst;
  return bench::elementwise_row(
      dev, kernel,
      std::string(strided ? "8192x8192 transposed" : "64M contiguous") + bench::geometry_label(g),
      kNumel, 2, info, {{sizeof(S), kNumel, 0x3C}}, sizeof(D),
      bench::geometry(dev, kernel, kNumel, g));
}

}  // namespace

int main() {
  return bench::run("hkb_bench_cast", [](const hkb::Device& dev, bench::Report& report) {
    report.section("CAST");
    for (bench::Geometry g : {bench::Geometry::kCandle, bench::Geometry::kTuned}) {
      report.add(cast_row<float, hkb::bf16>(dev, "f32", "bf16", false, g));
      report.add(cast_row<hkb::bf16, float>(dev, "bf16", "f32", false, g));
      report.add(cast_row<float, hkb::f16>(dev, "f32", "f16", false, g));
      report.add(cast_row<hkb::f16, float>(dev, "f16", "f32", false, g));
      report.add(cast_row<hkb::bf16, hkb::f16>(dev, "bf16", "f16", false, g));
      report.add(cast_row<float, hkb::f8e4m3>(dev, "f32", "f8_e4m3", false, g));
      report.add(cast_row<hkb::f8e4m3, hkb::bf16>(dev, "f8_e4m3", "bf16", false, g));
      report.add(cast_row<uint32_t, float>(dev, "u32", "f32", false, g));
      report.add(cast_row<int64_t, float>(dev, "i64", "f32", false, g));
      report.add(cast_row<float, hkb::bf16>(dev, "f32", "bf16", true, g));
      report.add(cast_row<hkb::bf16, float>(dev, "bf16", "f32", true, g));
    }
  });
}
