// QUANTIZED throughput under candle's launch geometry (quantized/cuda.rs): dequantize_block_*_f32
// of a 14336 x 4096 weight matrix for every format, get_rows of 4096 ids from a 32000 x 4096
// table, and quantize_q8_1 of 4096 activation rows of 4096. Inputs rotate over copies filling at
// least 256 MB, so the 50 MB L2 of an H100 does not serve them from one launch to the next.
// Bytes = bytes read + bytes written. The "busy grid" row launches q4_0 with only the blocks that
// work (16 blocks of 32 threads a multiprocessor), to show what the idle blocks of candle's grid
// cost (the K-quant dequantizers take their count from the grid, so they have no such row).
#include "bench_common.hpp"

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr size_t kRotateBytes = 256ull << 20;

struct Format {
  const char* name;
  size_t values, bytes;
  uint32_t k_block;  // candle's block size for the K-quant dequantizer (0: counted format)
};
const Format kFormats[] = {{"q4_0", 32, 18, 0},    {"q4_1", 32, 20, 0},    {"q5_0", 32, 22, 0},
                           {"q5_1", 32, 24, 0},    {"q8_0", 32, 34, 0},    {"q2_K", 256, 84, 64},
                           {"q3_K", 256, 110, 64}, {"q4_K", 256, 144, 32}, {"q5_K", 256, 176, 64},
                           {"q6_K", 256, 210, 64}, {"q8_K", 256, 292, 32}};

// Copies of `bytes` bytes (at least one) that together fill kRotateBytes, filled with `fill`.
std::vector<hkb::DeviceBuffer<uint8_t>> rotation(const hkb::Device& dev, size_t bytes,
                                                 uint8_t fill) {
  const size_t n = std::max<size_t>(1, (kRotateBytes + bytes - 1) / bytes);
  std::vector<hkb::DeviceBuffer<uint8_t>> v;
  for (size_t i = 0; i < n; ++i) {
    v.push_back(dev.alloc<uint8_t>(bytes));
    hkb::check(hkb_memset_d8(dev.get(), v.back().ptr(), fill, bytes));
  }
  return v;
}

// Quantized blocks whose scale fields are small halves (0x1400 ~ 1e-3), quants arbitrary: the
// byte 0x14 everywhere gives finite values in every format.
bench::Row dequantize_row(const hkb::Device& dev, const Format& f, bool busy_grid) {
  constexpr size_t kRows = 14336, kCols = 4096, kValues = kRows * kCols;
  const size_t in_bytes = kValues / f.values * f.bytes;
  auto weights = rotation(dev, in_bytes, 0x14);
  auto out = dev.alloc<float>(kValues);
  const bool five = f.name[1] == '5' && f.k_block == 0;
  uint32_t grid = static_cast<uint32_t>(kValues / 256), block = f.k_block ? f.k_block : 32;
  if (five) grid = static_cast<uint32_t>(kValues / 512), block = 256;
  const int k = static_cast<int>(five ? kValues : kValues / 32);
  if (busy_grid) grid = 132 * 16;
  const hkb::LaunchConfig cfg = hkb::LaunchConfig::make(grid, 1, 1, block, 1, 1);
  const hkb::Function fn = bench::function(dev, std::string("dequantize_block_") + f.name + "_f32");
  size_t i = 0;
  const double s = bench::time_median(dev, [&] {
    hkb::LaunchArgs args;
    args.arg(weights[i++ % weights.size()].ptr()).arg(out.ptr());
    if (f.k_block == 0) args.arg(k);
    fn.launch(cfg, args);
  });
  return {std::string("dequantize_block_") + f.name + "_f32 14336x4096" +
              (busy_grid ? " (busy grid)" : ""),
          static_cast<double>(in_bytes + kValues * 4), s};
}

bench::Row get_rows_row(const hkb::Device& dev, const std::string& tag, size_t values, size_t bytes,
                        const hkb::LaunchConfig& cfg, const std::vector<uint32_t>& ids_host,
                        const char* note = "") {
  constexpr size_t kVocab = 32000, kHidden = 4096;
  const size_t row_bytes = kHidden / values * bytes;
  auto tables = rotation(dev, kVocab * row_bytes, tag == "f16" ? 0x00 : 0x14);
  auto ids = dev.upload(ids_host);
  auto out = dev.alloc<float>(ids_host.size() * kHidden);
  const hkb::Function fn = bench::function(dev, "get_rows_" + tag);
  size_t i = 0;
  const double s = bench::time_median(dev, [&] {
    hkb::LaunchArgs args;
    args.arg(tables[i++ % tables.size()].ptr())
        .arg(ids.ptr())
        .arg(out.ptr())
        .arg(static_cast<int64_t>(kHidden))
        .arg(row_bytes);
    fn.launch(cfg, args);
  });
  const double moved = static_cast<double>(ids_host.size()) * (row_bytes + kHidden * 4);
  return {"get_rows_" + tag + " 32000x4096, 4096 ids" + note, moved, s};
}

bench::Row quantize_row(const hkb::Device& dev) {
  constexpr size_t kRows = 4096, kCols = 4096;
  auto inputs = rotation(dev, kRows * kCols * 4, 0x3C);
  const size_t out_bytes = kRows * kCols / 32 * 36;
  auto out = dev.alloc<uint8_t>(out_bytes);
  const hkb::LaunchConfig cfg = hkb::LaunchConfig::make(kCols / 256, kRows, 1, 256, 1, 1);
  const hkb::Function fn = bench::function(dev, "quantize_q8_1");
  size_t i = 0;
  const double s = bench::time_median(dev, [&] {
    hkb::LaunchArgs args;
    args.arg(inputs[i++ % inputs.size()].ptr())
        .arg(out.ptr())
        .arg(static_cast<int>(kCols))
        .arg(static_cast<int>(kCols));
    fn.launch(cfg, args);
  });
  return {"quantize_q8_1 4096 rows x 4096", static_cast<double>(kRows * kCols * 4 + out_bytes), s};
}

}  // namespace

int main() {
  return bench::run("hkb_bench_quantized", [](const hkb::Device& dev, bench::Report& report) {
    report.section("QUANTIZED");
    for (const Format& f : kFormats) report.add(dequantize_row(dev, f, false));
    report.add(dequantize_row(dev, kFormats[0], true));

    std::mt19937_64 rng(42);
    std::vector<uint32_t> ids(4096);
    for (auto& id : ids) id = static_cast<uint32_t>(rng() % 32000);
    const auto legacy = hkb::LaunchConfig::make(4096, 4096 / 512, 1, 256, 1, 1);
    const auto plain = hkb::LaunchConfig::make(4096, 4096 / 256, 1, 256, 1, 1);
    report.add(get_rows_row(dev, "q4_0", 32, 18, legacy, ids));
    report.add(get_rows_row(dev, "q8_0", 32, 34, legacy, ids));
    report.add(
        get_rows_row(dev, "q4_K", 256, 144, hkb::LaunchConfig::make(4096, 16, 1, 32, 1, 1), ids));
    report.add(
        get_rows_row(dev, "q6_K", 256, 210, hkb::LaunchConfig::make(4096, 16, 1, 64, 1, 1), ids));
    report.add(get_rows_row(dev, "f16", 1, 2, plain, ids));
    // One block a row (grid y 1, an eighth of candle's blocks): what the work costs without most of
    // candle's idle blocks.
    report.add(get_rows_row(dev, "q4_0", 32, 18, hkb::LaunchConfig::make(4096, 1, 1, 256, 1, 1),
                            ids, " (grid 4096 x 256)"));
    report.add(quantize_row(dev));
  });
}
