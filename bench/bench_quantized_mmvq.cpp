// QUANTIZED matrix-vector throughput under candle's launch geometry (quantized/cuda.rs): MMVQ
// (mul_mat_vec_<format>_q8_1_cuda<b>) and DMMV (dequantize_mul_mat_vec_<format>) for the weight
// shapes of a Llama-3-8B layer (14336 x 4096 and 4096 x 14336) and its output projection
// (128256 x 4096). Weights rotate over copies filling at least 256 MB so the H100's 50 MB L2 does
// not serve them from one launch to the next. Bytes = weights + activations + output, each once
// (batch b reads the weights once and does b dot products per row).
#include "bench_common.hpp"

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr size_t kRotateBytes = 256ull << 20;

struct Format {
  const char* name;  // candle's spelling in the MMVQ names
  const char* dmmv;  // the DMMV kernel
  size_t values, bytes;
};
const Format kQ4_0 = {"q4_0", "dequantize_mul_mat_vec_q4_0_cuda", 32, 18};
const Format kQ8_0 = {"q8_0", "dequantize_mul_mat_vec_q8_0_cuda", 32, 34};
const Format kQ4_K = {"q4_K", "dequantize_mul_mat_vec_q4_k", 256, 144};
const Format kQ6_K = {"q6_K", "dequantize_mul_mat_vec_q6_k", 256, 210};
const Format kOthers[] = {{"q4_1", "dequantize_mul_mat_vec_q4_1_cuda", 32, 20},
                          {"q5_0", "dequantize_mul_mat_vec_q5_0_cuda", 32, 22},
                          {"q5_1", "dequantize_mul_mat_vec_q5_1_cuda", 32, 24},
                          {"q2_K", "dequantize_mul_mat_vec_q2_k", 256, 84},
                          {"q3_K", "dequantize_mul_mat_vec_q3_k", 256, 110},
                          {"q5_K", "dequantize_mul_mat_vec_q5_k", 256, 176}};

// Copies of `bytes` bytes that together fill kRotateBytes (at least one). The byte 0x14 makes
// every half field a small finite value (0x1414 ~ 1e-3) in every format.
std::vector<hkb::DeviceBuffer<uint8_t>> rotation(const hkb::Device& dev, size_t bytes) {
  const size_t n = std::max<size_t>(1, (kRotateBytes + bytes - 1) / bytes);
  std::vector<hkb::DeviceBuffer<uint8_t>> v;
  for (size_t i = 0; i < n; ++i) {
    v.push_back(dev.alloc<uint8_t>(bytes));
    hkb::check(hkb_memset_d8(dev.get(), v.back().ptr(), 0x14, bytes));
  }
  return v;
}

// Median seconds of `fn` launched with `cfg`, the weights rotating, the other arguments from
// `rest`.
double time_rotated(const hkb::Device& dev, const std::string& name, const hkb::LaunchConfig& cfg,
                    const std::vector<hkb::DeviceBuffer<uint8_t>>& weights,
                    const std::function<void(hkb::LaunchArgs&)>& rest) {
  const hkb::Function fn = bench::function(dev, name);
  size_t i = 0;
  return bench::time_median(dev, [&] {
    hkb::LaunchArgs args;
    args.arg(weights[i++ % weights.size()].ptr());
    rest(args);
    fn.launch(cfg, args);
  });
}

std::string shape(size_t nrows, size_t k) {
  return std::to_string(nrows) + "x" + std::to_string(k);
}

// mul_mat_vec_<f>_q8_1_cuda<b> over an nrows x k weight matrix, candle's grid and block.
bench::Row mmvq_row(const hkb::Device& dev, const Format& f, int b, size_t nrows, size_t k) {
  const size_t kp = (k + 511) / 512 * 512;
  const size_t w_bytes = nrows * (k / f.values) * f.bytes, y_bytes = b * kp / 32 * 36;
  auto weights = rotation(dev, w_bytes);
  auto y = dev.alloc<uint8_t>(y_bytes);
  hkb::check(hkb_memset_d8(dev.get(), y.ptr(), 0x14, y_bytes));
  auto dst = dev.alloc<float>(b * nrows);
  const uint32_t grid = static_cast<uint32_t>(b == 1 ? nrows : (nrows + 1) / 2);
  const hkb::LaunchConfig cfg = hkb::LaunchConfig::make(grid, 1, 1, 32, b <= 4 ? 4 : 2, 1);
  const std::string name = std::string("mul_mat_vec_") + f.name + "_q8_1_cuda" + std::to_string(b);
  const double s = time_rotated(dev, name, cfg, weights, [&](hkb::LaunchArgs& args) {
    args.arg(y.ptr())
        .arg(dst.ptr())
        .arg(static_cast<int>(k))
        .arg(static_cast<int>(nrows))
        .arg(static_cast<int>(kp))
        .arg(static_cast<int>(nrows));
  });
  return {name + " " + shape(nrows, k), static_cast<double>(w_bytes + y_bytes + b * nrows * 4), s};
}

// dequantize_mul_mat_vec_<f>: grid (nrows), block (32, 1), f32 activations.
bench::Row dmmv_row(const hkb::Device& dev, const Format& f, size_t nrows, size_t k) {
  const size_t w_bytes = nrows * (k / f.values) * f.bytes;
  auto weights = rotation(dev, w_bytes);
  auto y = dev.alloc<float>(k);
  hkb::check(hkb_memset_d8(dev.get(), y.ptr(), 0x14, k * 4));
  auto dst = dev.alloc<float>(nrows);
  const hkb::LaunchConfig cfg =
      hkb::LaunchConfig::make(static_cast<uint32_t>(nrows), 1, 1, 32, 1, 1);
  const double s = time_rotated(dev, f.dmmv, cfg, weights, [&](hkb::LaunchArgs& args) {
    args.arg(y.ptr()).arg(dst.ptr()).arg(static_cast<int>(k));
    // candle's q5_k takes no nrows
    if (std::string(f.dmmv) != "dequantize_mul_mat_vec_q5_k") args.arg(static_cast<int>(nrows));
  });
  return {std::string(f.dmmv) + " " + shape(nrows, k),
          static_cast<double>(w_bytes + k * 4 + nrows * 4), s};
}

}  // namespace

int main() {
  return bench::run("hkb_bench_quantized_mmvq", [](const hkb::Device& dev, bench::Report& report) {
    report.section("QUANTIZED matrix-vector (MMVQ, DMMV)");
    const size_t kShapes[][2] = {{14336, 4096}, {4096, 14336}, {128256, 4096}};
    for (const Format* f : {&kQ4_0, &kQ8_0, &kQ4_K, &kQ6_K}) {
      for (const auto& s : kShapes) report.add(mmvq_row(dev, *f, 1, s[0], s[1]));
    }
    for (const Format* f : {&kQ4_0, &kQ4_K}) {
      for (int b : {2, 4, 8}) {
        for (const auto& s : kShapes) report.add(mmvq_row(dev, *f, b, s[0], s[1]));
      }
    }
    for (const Format& f : kOthers) report.add(mmvq_row(dev, f, 1, 14336, 4096));
    // The batches between, where mmvq_store's butterfly (up to 8 sums) gives way to shuffles.
    for (const Format* f : {&kQ4_0, &kQ4_K}) {
      for (int b : {3, 5, 6, 7}) report.add(mmvq_row(dev, *f, b, 14336, 4096));
    }
    // Every other format at batches 4 and 8 (q2_K / q3_K take vecdot.h's items there).
    for (const Format* f : {&kQ8_0, &kQ6_K}) {
      for (int b : {4, 8}) report.add(mmvq_row(dev, *f, b, 14336, 4096));
    }
    for (const Format& f : kOthers) {
      for (int b : {4, 8}) report.add(mmvq_row(dev, f, b, 14336, 4096));
    }
    for (const Format* f : {&kQ4_0, &kQ4_K, &kQ8_0, &kQ6_K}) {
      for (const auto& s : kShapes) report.add(dmmv_row(dev, *f, s[0], s[1]));
    }
    for (const Format& f : kOthers) report.add(dmmv_row(dev, f, 14336, 4096));
  });
}
