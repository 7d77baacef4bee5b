// UNARY throughput under candle's launch geometry (block 1024, grid ceil(n/1024)) on 64M elements:
// ucopy, neg, exp, gelu and silu for f32 and bf16 over a contiguous input (null info, the
// vectorised path), ucopy/exp over the transpose of an 8192 x 8192 matrix (the strided path) and
// ucopy over the permute(1, 0, 2) view of a 64x1024x1024 tensor (attention's head transpose: the
// strided path with a contiguous inner dim).
// Every row but two also runs with hkb's tuned configuration (hkb_launch_config_tuned), two ucopy
// rows with one thread per 16-byte pack, and one launch of candle's 64M-element grid over no
// elements times what its idle blocks alone cost.
#include "bench_common.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace {

constexpr size_t kSide = 8192;
constexpr size_t kNumel = kSide * kSide;  // 64M

enum class View { kContiguous, kTransposed, kHeads };

template <typename T>
bench::Row unary_row(const hkb::Device& dev, const std::string& op, const std::string& tag,
                     View view, bench::Geometry g = bench::Geometry::kCandle,
                     bool pack_grid = false) {
  // The transpose of a kSide x kSide matrix: dims [kSide, kSide], strides [1, kSide]; the heads
  // view: dims [1024, 64, 1024], strides [1024, 1024 * 1024, 1].
  const std::vector<size_t> info =
      view == View::kTransposed ? std::vector<size_t>{kSide, kSide, 1, kSide}
      : view == View::kHeads    ? std::vector<size_t>{1024, 64, 1024, 1024, 1024 * 1024, 1}
                                : std::vector<size_t>{};
  const std::string kernel = "u" + op + "_" + tag;
  const auto cfg =
      pack_grid ? bench::pack_grid(kNumel * sizeof(T)) : bench::geometry(dev, kernel, kNumel, g);
  const char* names[] = {"64M contiguous", "8192x8192 transposed", "64x1024x1024 permute(1,0,2)"};
  const std::string label = std::string(names[static_cast<int>(view)]) +
                            (pack_grid ? " (thread per 16 B)" : "") + bench::geometry_label(g);
  return bench::elementwise_row(dev, kernel, label, kNumel, view == View::kHeads ? 3 : 2, info,
                                {{sizeof(T), kNumel, 0x3C}}, sizeof(T), cfg);
}

// candle's grid for 64M elements launched over none: every block idle.
bench::Row idle_grid_row(const hkb::Device& dev) {
  auto in = dev.alloc<float>(1);
  auto out = dev.alloc<float>(1);
  const hkb::Function fn = bench::function(dev, "ucopy_f32");
  const auto cfg = bench::candle_grid(kNumel);
  const double s = bench::time_median(dev, [&] {
    hkb::LaunchArgs args;
    args.arg(size_t{0}).arg(size_t{1}).arg(hkb_devptr{0}).arg(in.ptr()).arg(out.ptr());
    fn.launch(cfg, args);
  });
  return {"ucopy_f32 n = 0, candle's grid of 64M (idle)", 0, s};
}

}  // namespace

int main() {
  return bench::run("hkb_bench_unary", [](const hkb::Device& dev, bench::Report& report) {
    report.section("UNARY");
    for (const char* op : {"copy", "neg", "exp", "gelu", "silu"}) {
      for (bench::Geometry g : {bench::Geometry::kCandle, bench::Geometry::kTuned}) {
        report.add(unary_row<float>(dev, op, "f32", View::kContiguous, g));
        report.add(unary_row<hkb::bf16>(dev, op, "bf16", View::kContiguous, g));
      }
    }
    report.add(
        unary_row<float>(dev, "copy", "f32", View::kContiguous, bench::Geometry::kCandle, true));
    report.add(unary_row<hkb::bf16>(dev, "copy", "bf16", View::kContiguous,
                                    bench::Geometry::kCandle, true));
    for (const char* op : {"copy", "exp"}) {
      for (bench::Geometry g : {bench::Geometry::kCandle, bench::Geometry::kTuned}) {
        report.add(unary_row<float>(dev, op, "f32", View::kTransposed, g));
        report.add(unary_row<hkb::bf16>(dev, op, "bf16", View::kTransposed, g));
      }
    }
    for (bench::Geometry g : {bench::Geometry::kCandle, bench::Geometry::kTuned}) {
      report.add(unary_row<float>(dev, "copy", "f32", View::kHeads, g));
      report.add(unary_row<hkb::bf16>(dev, "copy", "bf16", View::kHeads, g));
    }
    report.add(idle_grid_row(dev));
  });
}
