// FILL throughput on 64M elements, f32 and bf16 (bytes written only): fill over a whole buffer,
// const_set over a contiguous view (null info) and over the transposed view of an 8192x8192 buffer,
// and copy2d of 8192 rows of 8192 elements between buffers with row strides of 8192 + 64 (bytes
// read and written), each under candle's launch geometry (block 1024, grid ceil(n/1024)) and hkb's
// tuned configuration (hkb_launch_config_tuned).
#include "bench_common.hpp"

#include <cstring>
#include <string>

namespace {

constexpr size_t kSide = 8192;
constexpr size_t kNumel = kSide * kSide;  // 64M
constexpr uint32_t kPitch = kSide + 64;   // copy2d's row stride

enum class Op { kFill, kConstSet, kConstSetT, kCopy2d };

template <typename T>
bench::Row fill_row(const hkb::Device& dev, const std::string& tag, Op op, bench::Geometry g) {
  const char* names[] = {"fill_", "const_set_", "const_set_", "copy2d_"};
  const std::string kernel = names[static_cast<int>(op)] + tag;
  const size_t len = op == Op::kCopy2d ? kSide * kPitch : kNumel;
  const double bytes = (op == Op::kCopy2d ? 2.0 : 1.0) * kNumel * sizeof(T);
  struct Set {
    hkb::DeviceBuffer<T> a, b;
  };
  const auto sets = bench::make_sets<Set>(bytes, [&] {
    Set s{dev.alloc<T>(len), op == Op::kCopy2d ? dev.alloc<T>(len) : hkb::DeviceBuffer<T>()};
    bench::fill(dev, s.a, 0x3C);
    return s;
  });
  const auto info = op == Op::kConstSetT  // the transposed view
                        ? dev.upload(std::vector<size_t>{kSide, kSide, 1, kSide})
                        : hkb::DeviceBuffer<size_t>();
  const auto cfg = bench::geometry(dev, kernel, kNumel, g);
  const hkb::Function fn = bench::function(dev, kernel);
  T value;
  std::memset(&value, 0x3F, sizeof value);
  const double s = bench::time_sets(dev, sets.size(), [&](size_t i) {
    hkb::LaunchArgs args;
    if (op == Op::kFill) {
      args.arg(sets[i].a.ptr()).arg(value).arg(kNumel);
    } else if (op == Op::kConstSet) {
      args.arg(kNumel).arg(size_t{1}).arg(hkb_devptr{0}).arg(value).arg(sets[i].a.ptr());
    } else if (op == Op::kConstSetT) {
      args.arg(kNumel).arg(size_t{2}).arg(info.ptr()).arg(value).arg(sets[i].a.ptr());
    } else {
      const uint32_t side = kSide;
      args.arg(sets[i].a.ptr()).arg(sets[i].b.ptr()).arg(side).arg(side).arg(kPitch).arg(kPitch);
    }
    fn.launch(cfg, args);
  });
  const char* label = op == Op::kCopy2d      ? " 8192 rows of 8192"
                      : op == Op::kConstSetT ? " 8192x8192 transposed"
                                             : " 64M";
  return {kernel + label + bench::geometry_label(g), bytes, s};
}

}  // namespace

int main() {
  return bench::run("hkb_bench_fill", [](const hkb::Device& dev, bench::Report& report) {
    report.section("FILL");
    for (Op op : {Op::kFill, Op::kConstSet, Op::kConstSetT, Op::kCopy2d}) {
      for (bench::Geometry g : {bench::Geometry::kCandle, bench::Geometry::kTuned}) {
        report.add(fill_row<float>(dev, "f32", op, g));
        report.add(fill_row<hkb::bf16>(dev, "bf16", op, g));
      }
    }
  });
}
