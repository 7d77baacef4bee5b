// QUANTIZED matrix-matrix and mixture-of-experts throughput under candle's launch geometry:
// mul_mat_<format> (MMQ, 14336 x 4096 weights times 512 q8_1 columns, reported in TOP/s =
// 2 * n * k * columns / time, the form of issue 20's candle column) and
// indexed_moe_forward_q4k_q8_1 (8 experts of 14336 x 4096, topk 2, batch 1 and 16; bytes = the
// distinct experts' weights + inputs + outputs, each once, as % of a device-to-device copy).
#include "bench_common.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

struct Format {
  const char* name;
  size_t values, bytes;
  uint32_t mmq_x, mmq_y;  // candle's tile: columns and rows per GPU block
};
const Format kFormats[] = {{"q4_0", 32, 18, 64, 128},    {"q4_1", 32, 20, 64, 128},
                           {"q5_0", 32, 22, 128, 64},    {"q5_1", 32, 24, 128, 64},
                           {"q8_0", 32, 34, 128, 64},    {"q2_K", 256, 84, 64, 128},
                           {"q3_K", 256, 110, 128, 128}, {"q4_K", 256, 144, 64, 128},
                           {"q5_K", 256, 176, 64, 128},  {"q6_K", 256, 210, 64, 64}};

// Device bytes filled with 0x14: every half field a small finite value in every format.
hkb::DeviceBuffer<uint8_t> filled(const hkb::Device& dev, size_t bytes) {
  auto b = dev.alloc<uint8_t>(bytes);
  hkb::check(hkb_memset_d8(dev.get(), b.ptr(), 0x14, bytes));
  return b;
}

// Seconds of mul_mat_<f> for nrows x k weights and cols columns, candle's grid and block.
double mmq_seconds(const hkb::Device& dev, const Format& f, size_t nrows, size_t k, size_t cols) {
  const size_t kp = (k + 511) / 512 * 512;
  auto w = filled(dev, nrows * (k / f.values) * f.bytes);
  auto y = filled(dev, cols * kp / 32 * 36);
  auto dst = dev.alloc<float>(cols * nrows);
  const hkb::Function fn = bench::function(dev, std::string("mul_mat_") + f.name);
  const hkb::LaunchConfig cfg =
      hkb::LaunchConfig::make(static_cast<uint32_t>((nrows + f.mmq_y - 1) / f.mmq_y),
                              static_cast<uint32_t>((cols + f.mmq_x - 1) / f.mmq_x), 1, 32, 4, 1);
  return bench::time_median(dev, [&] {
    hkb::LaunchArgs args;
    args.arg(w.ptr())
        .arg(y.ptr())
        .arg(dst.ptr())
        .arg(static_cast<int>(k))
        .arg(static_cast<int>(nrows))
        .arg(static_cast<int>(cols))
        .arg(static_cast<int>(kp))
        .arg(static_cast<int>(nrows));
    fn.launch(cfg, args);
  });
}

// indexed_moe_forward_q4k_q8_1: token b takes experts b % 8 and (b + 3) % 8.
bench::Row moe_row(const hkb::Device& dev, size_t batch) {
  const size_t n = 14336, k = 4096, experts = 8, topk = 2, kp = 4096;
  const size_t expert_bytes = n * (k / 256) * 144, y_bytes = batch * kp / 32 * 36;
  auto w = filled(dev, experts * expert_bytes);
  auto y = filled(dev, y_bytes);
  std::vector<uint32_t> ids(batch * topk);
  std::vector<bool> used(experts, false);
  for (size_t b = 0; b < batch; ++b) {
    ids[b * topk] = static_cast<uint32_t>(b % experts);
    ids[b * topk + 1] = static_cast<uint32_t>((b + 3) % experts);
    used[b % experts] = used[(b + 3) % experts] = true;
  }
  size_t distinct = 0;
  for (bool u : used) distinct += u;
  auto di = dev.upload(ids);
  auto dst = dev.alloc<float>(batch * topk * n);
  const hkb::Function fn = bench::function(dev, "indexed_moe_forward_q4k_q8_1");
  const hkb::LaunchConfig cfg =
      hkb::LaunchConfig::make(static_cast<uint32_t>(n), static_cast<uint32_t>(batch),
                              static_cast<uint32_t>(topk), 32, 4, 1);
  const double s = bench::time_median(dev, [&] {
    hkb::LaunchArgs args;
    args.arg(w.ptr())
        .arg(y.ptr())
        .arg(di.ptr())
        .arg(dst.ptr())
        .arg(static_cast<int>(n))
        .arg(static_cast<int>(k))
        .arg(static_cast<int>(batch))
        .arg(static_cast<int>(topk))
        .arg(static_cast<int>(kp))
        .arg(1);
    fn.launch(cfg, args);
  });
  return {"indexed_moe_forward_q4k_q8_1 8x14336x4096 top2 b" + std::to_string(batch),
          static_cast<double>(distinct * expert_bytes + y_bytes + batch * topk * n * 4), s};
}

}  // namespace

int main() {
  return bench::run("hkb_bench_quantized_mmq", [](const hkb::Device& dev, bench::Report& report) {
    const size_t n = 14336, k = 4096, cols = 512;
    std::printf("\nQUANTIZED matrix-matrix (MMQ), %zux%zu weights x %zu columns\n", n, k, cols);
    std::printf("%-44s %10s %10s\n", "kernel / case", "time us", "TOP/s");
    for (const Format& f : kFormats) {
      const double s = mmq_seconds(dev, f, n, k, cols);
      std::printf("%-44s %10.1f %10.1f\n", (std::string("mul_mat_") + f.name).c_str(), s * 1e6,
                  2.0 * n * k * cols / s / 1e12);
    }
    report.section("QUANTIZED indexed mixture of experts");
    report.add(moe_row(dev, 1));
    report.add(moe_row(dev, 16));
  });
}
