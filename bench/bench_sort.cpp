// SORT with candle's launch geometry: asort_<dir>_<dtype> over rows x cols (grid = rows, block =
// min(ncols_pad, 1024), ncols_pad * 4 bytes of dynamic shared memory), for rows of 1024 to 16384
// columns (issue #21: argsort at least as fast as PyTorch's there; bench/torch_baseline.py times
// torch.argsort on the same shapes). Keys are uniform random values, so ties are rare in f32 and
// common in bf16. A sort is compute-bound: the time column is the measure; bytes counted (the keys
// read once, the u32 indices written once) only place it beside the copy.
#include "bench_common.hpp"

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace {

uint32_t next_pow2(uint32_t n) {
  uint32_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

template <typename T>
T random_key(std::mt19937& gen) {
  const float v = std::uniform_real_distribution<float>(-1.0f, 1.0f)(gen);
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    return hkb::bf16{static_cast<uint16_t>(bits >> 16)};
  }
}

template <typename T>
bench::Row sort_case(const hkb::Device& dev, const std::string& name, uint32_t rows,
                     uint32_t cols) {
  struct Set {
    hkb::DeviceBuffer<T> x;
    hkb::DeviceBuffer<uint32_t> dst;
  };
  const size_t n = size_t{rows} * cols;
  const double bytes = static_cast<double>(n * (sizeof(T) + sizeof(uint32_t)));
  std::mt19937 gen(21);
  std::vector<T> host(n);
  for (auto& v : host) v = random_key<T>(gen);
  const auto sets = bench::make_sets<Set>(bytes, [&] {
    return Set{dev.upload(host), dev.alloc<uint32_t>(n)};
  });
  const hkb::Function fn = bench::function(dev, name);
  const uint32_t pad = next_pow2(cols);
  const auto cfg = hkb::LaunchConfig::make(rows, 1, 1, pad < 1024 ? pad : 1024, 1, 1, pad * 4);
  const double s = bench::time_sets(dev, sets.size(), [&](size_t i) {
    hkb::LaunchArgs args;
    args.arg(sets[i].x.ptr()).arg(sets[i].dst.ptr());
    args.arg(static_cast<int32_t>(cols)).arg(static_cast<int32_t>(pad));
    fn.launch(cfg, args);
  });
  return {name + " " + std::to_string(rows) + "x" + std::to_string(cols), bytes, s};
}

}  // namespace

int main() {
  return bench::run("hkb_bench_sort", [](const hkb::Device& dev, bench::Report& report) {
    report.section("SORT (candle geometry)");
    report.add(sort_case<float>(dev, "asort_asc_f32", 1024, 1024));
    report.add(sort_case<float>(dev, "asort_asc_f32", 2048, 2048));
    report.add(sort_case<float>(dev, "asort_asc_f32", 4096, 4096));
    report.add(sort_case<float>(dev, "asort_asc_f32", 1024, 8192));
    report.add(sort_case<float>(dev, "asort_asc_f32", 512, 16384));
    report.add(sort_case<float>(dev, "asort_desc_f32", 4096, 4096));
    report.add(sort_case<hkb::bf16>(dev, "asort_asc_bf16", 4096, 4096));
  });
}
