// TERNARY (where) throughput under candle's launch geometry (block 1024, grid ceil(n/1024)) on 64M
// elements (an 8192 x 8192 matrix), f32 and bf16 values with a u8 condition: all three inputs
// contiguous (candle passes a real info array), a masked fill (t a row vector [1,8192], f a
// scalar), and a row mask (the condition a row vector [1,8192] over contiguous t and f). A
// broadcast operand counts its distinct elements. Every row runs under candle's geometry and under
// hkb's tuned configuration (hkb_launch_config_tuned).
#include "bench_common.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace {

constexpr size_t kSide = 8192;
constexpr size_t kNumel = kSide * kSide;  // 64M

enum class Shape { kContiguous, kMaskedFill, kRowMask };

template <typename T>
bench::Row where_row(const hkb::Device& dev, const std::string& tag, Shape shape,
                     bench::Geometry g) {
  // info = [dims, cond strides, t strides, f strides]
  std::vector<size_t> info = {kSide, kSide, kSide, 1, kSide, 1, kSide, 1};
  size_t c_len = kNumel, t_len = kNumel, f_len = kNumel;
  const char* label = "64M contiguous";
  if (shape == Shape::kMaskedFill) {
    info = {kSide, kSide, kSide, 1, 0, 1, 0, 0};
    t_len = kSide, f_len = 1, label = "masked fill [1,8192] / scalar";
  } else if (shape == Shape::kRowMask) {
    info = {kSide, kSide, 0, 1, kSide, 1, kSide, 1};
    c_len = kSide, label = "[1,8192] condition";
  }
  // The condition bytes are 1: where selects, never branches, so f is read all the same.
  const std::vector<bench::Operand> inputs = {
      {1, c_len, 0x01}, {sizeof(T), t_len, 0x3C}, {sizeof(T), f_len, 0x3D}};
  const std::string kernel = "where_u8_" + tag;
  return bench::elementwise_row(dev, kernel, label + std::string(bench::geometry_label(g)), kNumel,
                                2, info, inputs, sizeof(T),
                                bench::geometry(dev, kernel, kNumel, g));
}

}  // namespace

int main() {
  return bench::run("hkb_bench_ternary", [](const hkb::Device& dev, bench::Report& report) {
    report.section("TERNARY");
    for (bench::Geometry g : {bench::Geometry::kCandle, bench::Geometry::kTuned}) {
      for (Shape shape : {Shape::kContiguous, Shape::kMaskedFill, Shape::kRowMask}) {
        report.add(where_row<float>(dev, "f32", shape, g));
        report.add(where_row<hkb::bf16>(dev, "bf16", shape, g));
      }
    }
  });
}
