// BINARY throughput under candle's launch geometry (block 1024, grid ceil(n/1024)) on 64M elements
// (an 8192 x 8192 matrix), f32 and bf16: badd / bmul over contiguous inputs (null info, the dense
// path), badd with a row vector ([8192,8192] + [1,8192]) and a column vector ([8192,8192] +
// [8192,1]) broadcast, lt (u8 output) over contiguous inputs, and badd over a transposed lhs (the
// general strided path). A broadcast operand counts its 8192 distinct elements. Every row runs
// again with hkb's tuned configuration (hkb_launch_config_tuned). bmaximum (f32, bf16) and bdiv
// (f32, and f64 over 32M elements) time the ops with NaN rules and a division.
#include "bench_common.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace {

constexpr size_t kSide = 8192;
constexpr size_t kNumel = kSide * kSide;  // 64M

enum class Shape { kContiguous, kRowVector, kColumnVector, kTransposedLhs };

template <typename T, typename TO = T>
bench::Row binary_row(const hkb::Device& dev, const std::string& op, const std::string& tag,
                      Shape shape, bench::Geometry g = bench::Geometry::kCandle,
                      size_t numel = kNumel) {
  // info = [dims, lhs strides, rhs strides]; empty: null info.
  std::vector<size_t> info;
  std::string label =
      numel == kNumel ? "64M contiguous" : std::to_string(numel >> 20) + "M contiguous";
  if (shape == Shape::kRowVector)
    info = {kSide, kSide, kSide, 1, 0, 1}, label = "[8192,8192] + [1,8192]";
  if (shape == Shape::kColumnVector)
    info = {kSide, kSide, kSide, 1, 1, 0}, label = "[8192,8192] + [8192,1]";
  if (shape == Shape::kTransposedLhs)
    info = {kSide, kSide, 1, kSide, kSide, 1}, label = "[8192,8192]^T + [8192,8192]";
  const bool broadcast = shape == Shape::kRowVector || shape == Shape::kColumnVector;
  // Small positives.
  const std::vector<bench::Operand> inputs = {{sizeof(T), numel, 0x3C},
                                              {sizeof(T), broadcast ? kSide : numel, 0x3D}};
  const std::string kernel = op + "_" + tag;
  return bench::elementwise_row(dev, kernel, label + bench::geometry_label(g), numel, 2, info,
                                inputs, sizeof(TO), bench::geometry(dev, kernel, numel, g));
}

}  // namespace

int main() {
  return bench::run("hkb_bench_binary", [](const hkb::Device& dev, bench::Report& report) {
    report.section("BINARY");
    for (bench::Geometry g : {bench::Geometry::kCandle, bench::Geometry::kTuned}) {
      for (const char* op : {"badd", "bmul"}) {
        report.add(binary_row<float>(dev, op, "f32", Shape::kContiguous, g));
        report.add(binary_row<hkb::bf16>(dev, op, "bf16", Shape::kContiguous, g));
      }
      for (Shape shape : {Shape::kRowVector, Shape::kColumnVector, Shape::kTransposedLhs}) {
        report.add(binary_row<float>(dev, "badd", "f32", shape, g));
        report.add(binary_row<hkb::bf16>(dev, "badd", "bf16", shape, g));
      }
      report.add(binary_row<float, uint8_t>(dev, "lt", "f32", Shape::kContiguous, g));
      report.add(binary_row<hkb::bf16, uint8_t>(dev, "lt", "bf16", Shape::kContiguous, g));
      report.add(binary_row<float>(dev, "bmaximum", "f32", Shape::kContiguous, g));
      report.add(binary_row<hkb::bf16>(dev, "bmaximum", "bf16", Shape::kContiguous, g));
      report.add(binary_row<float>(dev, "bdiv", "f32", Shape::kContiguous, g));
      report.add(binary_row<double>(dev, "bdiv", "f64", Shape::kContiguous, g, kNumel / 2));
    }
  });
}
