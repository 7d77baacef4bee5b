// BINARY throughput under candle's launch geometry (block 1024, grid ceil(n/1024)) on 64M elements
// (an 8192 x 8192 matrix), f32 and bf16: badd / bmul over contiguous inputs (null info, the dense
// path), badd with a row vector ([8192,8192] + [1,8192]) and a column vector ([8192,8192] +
// [8192,1]) broadcast, lt (u8 output) over contiguous inputs, and badd over a transposed lhs (the
// general strided path). Bytes counted: every distinct input element read once (a broadcast
// operand is 8192 elements) plus every output element written once.
#include "bench_common.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

constexpr size_t kSide = 8192;
constexpr size_t kNumel = kSide * kSide;  // 64M

enum class Shape { kContiguous, kRowVector, kColumnVector, kTransposedLhs };

const char* shape_name(Shape s) {
  switch (s) {
    case Shape::kContiguous:
      return "64M contiguous";
    case Shape::kRowVector:
      return "[8192,8192] + [1,8192]";
    case Shape::kColumnVector:
      return "[8192,8192] + [8192,1]";
    case Shape::kTransposedLhs:
      return "[8192,8192]^T + [8192,8192]";
  }
  return "?";
}

template <typename T, typename TO = T>
bench::Row binary_row(const hkb::Device& dev, const std::string& op, const std::string& tag,
                      Shape shape) {
  const bool broadcast = shape == Shape::kRowVector || shape == Shape::kColumnVector;
  const size_t rhs_len = broadcast ? kSide : kNumel;
  auto lhs = dev.alloc<T>(kNumel);
  auto rhs = dev.alloc<T>(rhs_len);
  auto out = dev.alloc<TO>(kNumel);
  hkb::check(hkb_memset_d8(dev.get(), lhs.ptr(), 0x3C, kNumel * sizeof(T)));  // small positives
  hkb::check(hkb_memset_d8(dev.get(), rhs.ptr(), 0x3D, rhs_len * sizeof(T)));
  // info = [dims, lhs strides, rhs strides]
  std::vector<size_t> info = {kSide, kSide, kSide, 1, kSide, 1};
  if (shape == Shape::kRowVector) info = {kSide, kSide, kSide, 1, 0, 1};
  if (shape == Shape::kColumnVector) info = {kSide, kSide, kSide, 1, 1, 0};
  if (shape == Shape::kTransposedLhs) info = {kSide, kSide, 1, kSide, kSide, 1};
  auto dinfo = dev.upload(info);
  const std::string kernel = op + "_" + tag;
  hkb::LaunchArgs args;
  args.arg(kNumel)
      .arg(size_t{2})
      .arg(shape == Shape::kContiguous ? hkb_devptr{0} : dinfo.ptr())
      .arg(lhs.ptr())
      .arg(rhs.ptr())
      .arg(out.ptr());
  const hkb::LaunchConfig cfg = hkb::LaunchConfig::for_num_elems(static_cast<uint32_t>(kNumel));
  const hkb::Function fn = dev.function(kernel);
  const double s = bench::time_median(dev, [&] { fn.launch(cfg, args); });
  const double bytes =
      static_cast<double>(kNumel * sizeof(T) + rhs_len * sizeof(T) + kNumel * sizeof(TO));
  return {kernel + " " + shape_name(shape), bytes, s};
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
  for (const char* op : {"badd", "bmul"}) {
    rows.push_back(binary_row<float>(dev, op, "f32", Shape::kContiguous));
    rows.push_back(binary_row<hkb::bf16>(dev, op, "bf16", Shape::kContiguous));
  }
  for (Shape shape : {Shape::kRowVector, Shape::kColumnVector, Shape::kTransposedLhs}) {
    rows.push_back(binary_row<float>(dev, "badd", "f32", shape));
    rows.push_back(binary_row<hkb::bf16>(dev, "badd", "bf16", shape));
  }
  rows.push_back(binary_row<float, uint8_t>(dev, "lt", "f32", Shape::kContiguous));
  rows.push_back(binary_row<hkb::bf16, uint8_t>(dev, "lt", "bf16", Shape::kContiguous));
  bench::print_table("BINARY", rows, bench::copy_bandwidth(dev, kNumel * sizeof(float)));
  return 0;
}
