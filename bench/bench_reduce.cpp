// REDUCE throughput with candle's launch geometry on 8192 x 8192 tensors (and a few other row
// widths): fast_* over the last dim (grid = rows, block = 1024), softmax (grid = rows, block
// (1,32,1)), rmsnorm/layernorm (block 1024). Bytes counted: the input read once plus the output
// written once (alpha/beta and the info array are noise at this size).
#include "bench_common.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

template <typename T>
std::vector<T> filled(size_t n, T v) {
  return std::vector<T>(n, v);
}

uint32_t fast_block(size_t group) {
  uint32_t b = 1;
  while (b < group && b < 1024) b <<= 1;
  return b;
}

// fast_<op>_<tag> over rows x cols, reducing the last dim.
template <typename T, typename Out>
bench::Row fast_case(const hkb::Device& dev, const std::string& name, size_t rows, size_t cols,
                     const hkb::DeviceBuffer<T>& src) {
  auto dst = dev.alloc<Out>(rows);
  auto info = dev.upload(std::vector<size_t>{rows, cols, cols, 1});
  const hkb::Function fn = dev.function(name);
  const size_t numel = rows * cols;
  const auto cfg =
      hkb::LaunchConfig::make(static_cast<uint32_t>(rows), 1, 1, fast_block(cols), 1, 1);
  const double s = bench::time_median(dev, [&] {
    hkb::LaunchArgs args;
    args.arg(numel).arg(cols).arg(size_t{2}).arg(info.ptr()).arg(src.ptr()).arg(dst.ptr());
    fn.launch(cfg, args);
  });
  return {name + " " + std::to_string(rows) + "x" + std::to_string(cols),
          static_cast<double>(numel * sizeof(T) + rows * sizeof(Out)), s};
}

template <typename T>
bench::Row softmax_case(const hkb::Device& dev, const std::string& tag, size_t rows, int cols,
                        const hkb::DeviceBuffer<T>& src, hkb::DeviceBuffer<T>& dst) {
  const hkb::Function fn = dev.function("softmax_" + tag);
  const auto cfg = hkb::LaunchConfig::make(static_cast<uint32_t>(rows), 1, 1, 1, 32, 1);
  const double s = bench::time_median(dev, [&] {
    hkb::LaunchArgs args;
    args.arg(src.ptr()).arg(dst.ptr()).arg(cols);
    fn.launch(cfg, args);
  });
  return {"softmax_" + tag + " " + std::to_string(rows) + "x" + std::to_string(cols),
          2.0 * rows * cols * sizeof(T), s};
}

template <typename T>
bench::Row norm_case(const hkb::Device& dev, bool layer, const std::string& tag, size_t rows,
                     int cols, const hkb::DeviceBuffer<T>& src, hkb::DeviceBuffer<T>& dst,
                     const hkb::DeviceBuffer<T>& alpha, const hkb::DeviceBuffer<T>& beta) {
  const std::string name = (layer ? "layernorm_" : "rmsnorm_") + tag;
  const hkb::Function fn = dev.function(name);
  const int bs = cols < 1024 ? 32 : 1024;
  const auto cfg = hkb::LaunchConfig::make(static_cast<uint32_t>(rows), 1, 1, bs, 1, 1);
  const double s = bench::time_median(dev, [&] {
    hkb::LaunchArgs args;
    args.arg(src.ptr()).arg(dst.ptr()).arg(alpha.ptr());
    if (layer) args.arg(beta.ptr());
    args.arg(cols).arg(bs).arg(1e-5f);
    fn.launch(cfg, args);
  });
  return {name + " " + std::to_string(rows) + "x" + std::to_string(cols),
          2.0 * rows * cols * sizeof(T), s};
}

}  // namespace

int main() {
  try {
    const hkb::Device dev(0);
    const size_t rows = 8192, cols = 8192, n = rows * cols;
    const double copy_bw = bench::copy_bandwidth(dev, n * sizeof(float));

    auto x = dev.upload(filled<float>(n, 0.25f));
    auto y = dev.alloc<float>(n);
    auto alpha = dev.upload(filled<float>(cols, 1.5f));
    auto beta = dev.upload(filled<float>(cols, 0.5f));
    std::vector<bench::Row> rows_f32;
    rows_f32.push_back(fast_case<float, float>(dev, "fast_sum_f32", rows, cols, x));
    rows_f32.push_back(fast_case<float, float>(dev, "fast_max_f32", rows, cols, x));
    rows_f32.push_back(fast_case<float, uint32_t>(dev, "fast_argmax_f32", rows, cols, x));
    // Rows that are not whole 16-byte packs (the element-wise path), and rows of 64 KiB.
    rows_f32.push_back(fast_case<float, float>(dev, "fast_sum_f32", rows, cols - 2, x));
    rows_f32.push_back(fast_case<float, float>(dev, "fast_sum_f32", rows / 2, cols * 2, x));
    rows_f32.push_back(softmax_case<float>(dev, "f32", rows, static_cast<int>(cols), x, y));
    rows_f32.push_back(
        norm_case<float>(dev, false, "f32", rows, static_cast<int>(cols), x, y, alpha, beta));
    rows_f32.push_back(
        norm_case<float>(dev, true, "f32", rows, static_cast<int>(cols), x, y, alpha, beta));
    // Other widths at the same element count.
    for (size_t w : {size_t{1024}, size_t{65536}}) {
      const size_t r = n / w;
      rows_f32.push_back(fast_case<float, float>(dev, "fast_sum_f32", r, w, x));
      rows_f32.push_back(softmax_case<float>(dev, "f32", r, static_cast<int>(w), x, y));
      rows_f32.push_back(
          norm_case<float>(dev, false, "f32", r, static_cast<int>(w), x, y, alpha, beta));
    }
    bench::print_table("REDUCE f32 (candle geometry)", rows_f32, copy_bw);

    auto xb = dev.upload(filled<hkb::bf16>(n, hkb::bf16{0x3E80}));  // 0.25
    auto yb = dev.alloc<hkb::bf16>(n);
    auto ab = dev.upload(filled<hkb::bf16>(cols, hkb::bf16{0x3FC0}));  // 1.5
    auto bb = dev.upload(filled<hkb::bf16>(cols, hkb::bf16{0x3F00}));  // 0.5
    std::vector<bench::Row> rows_bf16;
    rows_bf16.push_back(fast_case<hkb::bf16, hkb::bf16>(dev, "fast_sum_bf16", rows, cols, xb));
    rows_bf16.push_back(fast_case<hkb::bf16, hkb::bf16>(dev, "fast_max_bf16", rows, cols, xb));
    rows_bf16.push_back(fast_case<hkb::bf16, uint32_t>(dev, "fast_argmax_bf16", rows, cols, xb));
    rows_bf16.push_back(softmax_case<hkb::bf16>(dev, "bf16", rows, static_cast<int>(cols), xb, yb));
    rows_bf16.push_back(
        norm_case<hkb::bf16>(dev, false, "bf16", rows, static_cast<int>(cols), xb, yb, ab, bb));
    bench::print_table("REDUCE bf16 (candle geometry)", rows_bf16,
                       bench::copy_bandwidth(dev, n * sizeof(hkb::bf16)));
  } catch (const hkb::Error& e) {
    std::fprintf(stderr, "bench_reduce: %s\n", e.what());
    return 1;
  }
  return 0;
}
