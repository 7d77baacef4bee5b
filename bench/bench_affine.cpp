// AFFINE (y = x * mul + add) throughput on 64M elements, f32 and bf16, over a contiguous input
// (null info, the vectorised path) and the transpose of an 8192 x 8192 matrix (the strided path),
// each under candle's launch geometry (block 1024, grid ceil(n/1024)) and hkb's tuned
// configuration (hkb_launch_config_tuned); two tuned rows with the output shifted in memory.
#include "bench_common.hpp"

#include <string>
#include <vector>

namespace {

constexpr size_t kSide = 8192;
constexpr size_t kNumel = kSide * kSide;  // 64M

template <typename T>
bench::Row affine_row(const hkb::Device& dev, const std::string& tag, T mul, T add, bool strided,
                      bench::Geometry g, size_t out_shift = 0) {
  const std::vector<size_t> info =
      strided ? std::vector<size_t>{kSide, kSide, 1, kSide} : std::vector<size_t>{};
  const std::string kernel = "affine_" + tag;
  const auto cfg = bench::geometry(dev, kernel, kNumel, g);
  const double bytes = 2.0 * kNumel * sizeof(T);
  struct Set {
    hkb::DeviceBuffer<T> in, out;
  };
  const auto sets = bench::make_sets<Set>(bytes, [&] {
    Set s{dev.alloc<T>(kNumel), dev.alloc<T>(kNumel + out_shift)};
    bench::fill(dev, s.in, 0x3C);
    return s;
  });
  hkb::DeviceBuffer<size_t> dinfo;
  if (!info.empty()) dinfo = dev.upload(info);
  const hkb::Function fn = bench::function(dev, kernel);
  const double s = bench::time_sets(dev, sets.size(), [&](size_t i) {
    hkb::LaunchArgs args;
    args.arg(kNumel).arg(size_t{2}).arg(info.empty() ? hkb_devptr{0} : dinfo.ptr());
    args.arg(sets[i].in.ptr()).arg(sets[i].out.ptr(out_shift)).arg(mul).arg(add);
    fn.launch(cfg, args);
  });
  return {kernel + " " + (strided ? "8192x8192 transposed" : "64M contiguous") +
              bench::geometry_label(g) +
              (out_shift ? ", out +" + std::to_string(out_shift * sizeof(T)) + " B" : ""),
          bytes, s};
}

}  // namespace

int main() {
  return bench::run("hkb_bench_affine", [](const hkb::Device& dev, bench::Report& report) {
    report.section("AFFINE");
    for (bool strided : {false, true}) {
      for (bench::Geometry g : {bench::Geometry::kCandle, bench::Geometry::kTuned}) {
        report.add(affine_row<float>(dev, "f32", 1.5f, 0.25f, strided, g));
        report.add(
            affine_row<hkb::bf16>(dev, "bf16", hkb::bf16{0x3FC0}, hkb::bf16{0x3E80}, strided, g));
      }
    }
    // The output moved off the power-of-two distance from the input that back-to-back
    // allocations give (by 1 MiB + 4.5 KiB): whether DRAM placement holds the 1:1 read/write
    // maps below copy bandwidth.
    const size_t shift = (size_t{1} << 20) + 4608;
    report.add(
        affine_row<float>(dev, "f32", 1.5f, 0.25f, false, bench::Geometry::kTuned, shift / 4));
    report.add(affine_row<hkb::bf16>(dev, "bf16", hkb::bf16{0x3FC0}, hkb::bf16{0x3E80}, false,
                                     bench::Geometry::kTuned, shift / 2));
  });
}
