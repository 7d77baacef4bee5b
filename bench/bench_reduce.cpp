// REDUCE throughput with candle's launch geometry on 8192 x 8192 tensors (and a few other row
// widths): fast_* over the last dim (grid = rows, block = next power of two of the row up to
// 1024), softmax (grid = rows, block (1,32,1)), rmsnorm/layernorm (block 1024, 32 under 1024
// columns), softmax over 65536 rows of 128 (attention scores), and rope_i / rope / rope_thd over
// b*h = 1024, t = 512, d = 128 (candle's for_num_elems of half the elements). Bytes counted: the
// input read once plus the output written once (alpha/beta, cos/sin and the info array are noise
// at this size).
#include "bench_common.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace {

struct Buffers {
  hkb::DeviceBuffer<uint8_t> src, dst;
};

// Sources of 0x3E bytes: 0.19 in f32 and in bf16, so sums, softmax and norms stay finite.
std::vector<Buffers> reduce_sets(const hkb::Device& dev, size_t src_bytes, size_t dst_bytes) {
  return bench::make_sets<Buffers>(static_cast<double>(src_bytes + dst_bytes), [&] {
    Buffers b{dev.alloc<uint8_t>(src_bytes), dev.alloc<uint8_t>(dst_bytes)};
    bench::fill(dev, b.src, 0x3E);
    return b;
  });
}

std::string shape(size_t rows, size_t cols) {
  return " " + std::to_string(rows) + "x" + std::to_string(cols);
}

uint32_t fast_block(size_t cols) {
  uint32_t b = 1;
  while (b < cols && b < 1024) b <<= 1;
  return b;
}

// fast_<op>_<tag> over rows x cols, reducing the last dim; `out_bytes`: one result's size.
template <typename T>
bench::Row fast_case(const hkb::Device& dev, const std::string& name, size_t rows, size_t cols,
                     size_t out_bytes = sizeof(T)) {
  const size_t numel = rows * cols;
  const auto sets = reduce_sets(dev, numel * sizeof(T), rows * out_bytes);
  auto info = dev.upload(std::vector<size_t>{rows, cols, cols, 1});
  const hkb::Function fn = bench::function(dev, name);
  const auto cfg =
      hkb::LaunchConfig::make(static_cast<uint32_t>(rows), 1, 1, fast_block(cols), 1, 1);
  const double s = bench::time_sets(dev, sets.size(), [&](size_t i) {
    hkb::LaunchArgs args;
    args.arg(numel).arg(cols).arg(size_t{2}).arg(info.ptr());
    args.arg(sets[i].src.ptr()).arg(sets[i].dst.ptr());
    fn.launch(cfg, args);
  });
  return {name + shape(rows, cols), static_cast<double>(numel * sizeof(T) + rows * out_bytes), s};
}

template <typename T>
bench::Row softmax_case(const hkb::Device& dev, const std::string& tag, size_t rows, int cols) {
  const size_t bytes = rows * cols * sizeof(T);
  const auto sets = reduce_sets(dev, bytes, bytes);
  const hkb::Function fn = bench::function(dev, "softmax_" + tag);
  const auto cfg = hkb::LaunchConfig::make(static_cast<uint32_t>(rows), 1, 1, 1, 32, 1);
  const double s = bench::time_sets(dev, sets.size(), [&](size_t i) {
    hkb::LaunchArgs args;
    args.arg(sets[i].src.ptr()).arg(sets[i].dst.ptr()).arg(cols);
    fn.launch(cfg, args);
  });
  return {"softmax_" + tag + shape(rows, cols), 2.0 * bytes, s};
}

template <typename T>
bench::Row norm_case(const hkb::Device& dev, bool layer, const std::string& tag, size_t rows,
                     int cols) {
  const size_t bytes = rows * cols * sizeof(T);
  const auto sets = reduce_sets(dev, bytes, bytes);
  auto alpha = dev.alloc<T>(cols);
  auto beta = dev.alloc<T>(cols);
  bench::fill(dev, alpha, 0x3F);
  bench::fill(dev, beta, 0x3E);
  const std::string name = (layer ? "layernorm_" : "rmsnorm_") + tag;
  const hkb::Function fn = bench::function(dev, name);
  const int bs = cols < 1024 ? 32 : 1024;
  const auto cfg = hkb::LaunchConfig::make(static_cast<uint32_t>(rows), 1, 1, bs, 1, 1);
  const double s = bench::time_sets(dev, sets.size(), [&](size_t i) {
    hkb::LaunchArgs args;
    args.arg(sets[i].src.ptr()).arg(sets[i].dst.ptr()).arg(alpha.ptr());
    if (layer) args.arg(beta.ptr());
    args.arg(cols).arg(bs).arg(1e-5f);
    fn.launch(cfg, args);
  });
  return {name + shape(rows, cols), 2.0 * bytes, s};
}

// rope_i (variant 0), rope (1) or rope_thd (2) of b = 1, h = 1024, t = 512, d = 128 with 2-D
// cos/sin tables.
template <typename T>
bench::Row rope_case(const hkb::Device& dev, int variant, const std::string& tag) {
  constexpr uint32_t kB = 1, kH = 1024, kT = 512, kD = 128;
  const size_t numel = size_t{kB} * kH * kT * kD;
  const size_t bytes = numel * sizeof(T);
  const auto sets = reduce_sets(dev, bytes, bytes);
  auto cos = dev.alloc<T>(kT * kD / 2);
  auto sin = dev.alloc<T>(kT * kD / 2);
  bench::fill(dev, cos, 0x3E);
  bench::fill(dev, sin, 0x3D);
  static const char* names[] = {"rope_i_", "rope_", "rope_thd_"};
  const std::string name = names[variant] + tag;
  const hkb::Function fn = bench::function(dev, name);
  const auto cfg = hkb::LaunchConfig::for_num_elems(static_cast<uint32_t>(numel / 2));
  const double s = bench::time_sets(dev, sets.size(), [&](size_t i) {
    hkb::LaunchArgs args;
    args.arg(sets[i].src.ptr()).arg(cos.ptr()).arg(sin.ptr()).arg(sets[i].dst.ptr());
    if (variant == 2) {
      args.arg(kB).arg(kT).arg(kH).arg(kD);
    } else {
      args.arg(kB * kH).arg(kT * kD);
      if (variant == 1) args.arg(kD);
    }
    args.arg(uint32_t{0});
    fn.launch(cfg, args);
  });
  return {name + " bh 1024 t 512 d 128", 2.0 * bytes, s};
}

}  // namespace

int main() {
  return bench::run("hkb_bench_reduce", [](const hkb::Device& dev, bench::Report& report) {
    const size_t rows = 8192, cols = 8192, n = rows * cols;
    const int icols = static_cast<int>(cols);
    report.section("REDUCE f32 (candle geometry)");
    report.add(fast_case<float>(dev, "fast_sum_f32", rows, cols));
    report.add(fast_case<float>(dev, "fast_max_f32", rows, cols));
    report.add(fast_case<float>(dev, "fast_argmax_f32", rows, cols, sizeof(uint32_t)));
    // Rows that are not whole 16-byte packs (the element-wise path), and rows of 64 KiB.
    report.add(fast_case<float>(dev, "fast_sum_f32", rows, cols - 2));
    report.add(fast_case<float>(dev, "fast_sum_f32", rows / 2, cols * 2));
    report.add(softmax_case<float>(dev, "f32", rows, icols));
    report.add(norm_case<float>(dev, false, "f32", rows, icols));
    report.add(norm_case<float>(dev, true, "f32", rows, icols));
    // Other widths at the same element count.
    for (size_t w : {size_t{1024}, size_t{2048}, size_t{4096}}) {
      report.add(fast_case<float>(dev, "fast_max_f32", n / w, w));
      report.add(fast_case<float>(dev, "fast_argmax_f32", n / w, w, sizeof(uint32_t)));
    }
    for (size_t w : {size_t{1024}, size_t{65536}}) {
      report.add(fast_case<float>(dev, "fast_sum_f32", n / w, w));
      report.add(softmax_case<float>(dev, "f32", n / w, static_cast<int>(w)));
      report.add(norm_case<float>(dev, false, "f32", n / w, static_cast<int>(w)));
    }
    // #21's short rows: 65536 rows of 32 to 256 values, candle's block the row's width.
    for (size_t w : {size_t{32}, size_t{64}, size_t{128}, size_t{256}}) {
      report.add(fast_case<float>(dev, "fast_sum_f32", 65536, w));
    }
    // Hidden sizes of small models: a 1024-thread block a row of 1024 to 4096 values.
    for (size_t w : {size_t{1024}, size_t{2048}, size_t{4096}}) {
      if (w != 1024) report.add(norm_case<float>(dev, false, "f32", n / w, static_cast<int>(w)));
      report.add(norm_case<float>(dev, true, "f32", n / w, static_cast<int>(w)));
    }
    report.section("REDUCE bf16 (candle geometry)");
    report.add(fast_case<hkb::bf16>(dev, "fast_sum_bf16", rows, cols));
    report.add(fast_case<hkb::bf16>(dev, "fast_max_bf16", rows, cols));
    report.add(fast_case<hkb::bf16>(dev, "fast_min_bf16", rows, cols));
    report.add(fast_case<hkb::bf16>(dev, "fast_argmax_bf16", rows, cols, sizeof(uint32_t)));
    // Rows that are not whole packs: the element-wise path.
    report.add(fast_case<hkb::bf16>(dev, "fast_argmax_bf16", rows, cols - 2, sizeof(uint32_t)));
    // Other widths at the same element count (1024-thread blocks from 1024 values on).
    for (size_t w : {size_t{1024}, size_t{65536}}) {
      report.add(fast_case<hkb::bf16>(dev, "fast_sum_bf16", n / w, w));
      report.add(fast_case<hkb::bf16>(dev, "fast_argmax_bf16", n / w, w, sizeof(uint32_t)));
    }
    report.add(softmax_case<hkb::bf16>(dev, "bf16", rows, icols));
    // Shorter and longer rows (4 KB and 32 KB).
    for (size_t w : {size_t{2048}, size_t{16384}}) {
      report.add(softmax_case<hkb::bf16>(dev, "bf16", n / w, static_cast<int>(w)));
    }
    report.add(softmax_case<float>(dev, "f32", 65536, 128));
    report.add(softmax_case<hkb::bf16>(dev, "bf16", 65536, 128));
    report.add(norm_case<hkb::bf16>(dev, false, "bf16", rows, icols));
    report.add(norm_case<hkb::bf16>(dev, true, "bf16", rows, icols));
    for (size_t w : {size_t{1024}, size_t{2048}, size_t{4096}}) {
      report.add(norm_case<hkb::bf16>(dev, false, "bf16", n / w, static_cast<int>(w)));
      report.add(norm_case<hkb::bf16>(dev, true, "bf16", n / w, static_cast<int>(w)));
    }
    report.add(norm_case<hkb::bf16>(dev, false, "bf16", n / 16384, 16384));
    for (int variant = 0; variant < 3; ++variant) {
      report.add(rope_case<float>(dev, variant, "f32"));
      report.add(rope_case<hkb::bf16>(dev, variant, "bf16"));
    }
  });
}
