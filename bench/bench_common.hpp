// Shared timing helpers of the benchmarks. Each benchmark launches through the public API with
// candle's geometry, times a batch of launches between two device synchronisations (the sizes are
// large enough that launch overhead is noise), takes the median of several batches, and reports
// GB/s (bytes read + bytes written) against a device-to-device copy timed in the same run.
#pragma once

#include <hkb/hkb.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace bench {

// Median seconds per call of `fn` over `batches` batches of `reps` calls, after a warm-up.
inline double time_median(const hkb::Device& dev, const std::function<void()>& fn, int reps = 20,
                          int batches = 7) {
  fn();
  dev.synchronize();
  std::vector<double> t;
  for (int b = 0; b < batches; ++b) {
    const auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) fn();
    dev.synchronize();
    const auto end = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double>(end - start).count() / reps);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Copy bandwidth (read + write bytes per second) of hkb_memcpy_dtod over `bytes`.
inline double copy_bandwidth(const hkb::Device& dev, size_t bytes) {
  auto a = dev.alloc<unsigned char>(bytes);
  auto b = dev.alloc<unsigned char>(bytes);
  hkb::check(hkb_memset_d8(dev.get(), a.ptr(), 1, bytes));
  const double s =
      time_median(dev, [&] { hkb::check(hkb_memcpy_dtod(dev.get(), b.ptr(), a.ptr(), bytes)); });
  return 2.0 * bytes / s;
}

struct Row {
  std::string name;
  double bytes;
  double seconds;
};

inline void print_table(const char* title, const std::vector<Row>& rows, double copy_bw) {
  std::printf("\n%s (device-to-device copy: %.1f GB/s)\n", title, copy_bw / 1e9);
  std::printf("%-44s %10s %10s %8s\n", "kernel / case", "time us", "GB/s", "of copy");
  for (const Row& r : rows) {
    const double bw = r.bytes / r.seconds;
    std::printf("%-44s %10.1f %10.1f %7.0f%%\n", r.name.c_str(), r.seconds * 1e6, bw / 1e9,
                100.0 * bw / copy_bw);
  }
}

}  // namespace bench
