// The one setup every benchmark shares (bench/bench_<module>.cpp). A benchmark launches kernels
// through the public API with candle's geometry (elementwise rows also with hkb's tuned one,
// Geometry) and reports GB/s (bytes read + bytes written)
// against a device-to-device copy of kCopyBytes timed in the same run:
// - timing: device events around batches of back-to-back launches on the default stream (where
//   hkb launches), the median batch after a warm-up;
// - rotation: a case whose buffers are smaller than kRotateBytes gets several copies of them and
//   the launches cycle through the copies, so that the L2 cache does not serve one launch the
//   data the previous launch left in it;
// - output: bench::run prints the device, where the code objects came from (HKB_BUNDLE_DIR, which
//   bench/tune.sh sets to time a tuning variant) and one line per case as it is measured.
#pragma once

#include <hkb/hkb.hpp>

#if defined(HKB_BENCH_CUDA)
#include <cuda.h>
#elif defined(HKB_BENCH_HIP)
#include <hip/hip_runtime_api.h>
#else
#error "bench/CMakeLists.txt defines HKB_BENCH_CUDA or HKB_BENCH_HIP"
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace bench {

// The copy every table is measured against: large enough that no cache serves it.
constexpr size_t kCopyBytes = size_t{256} << 20;
// Launches of one case touch at least this many bytes before they touch the same buffer again:
// five times the H100's 50 MiB L2.
constexpr double kRotateBytes = 256.0 * (1 << 20);
constexpr size_t kMaxSets = 32;

// Device events of the platform runtime; only this class calls it directly.
class Events {
 public:
  Events() {
    vendor(create(&start_), "event create");
    vendor(create(&stop_), "event create");
  }
  ~Events() {
    destroy(start_);
    destroy(stop_);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;

  void start() { vendor(record(start_), "event record"); }
  void stop() { vendor(record(stop_), "event record"); }
  // Waits for the stop event; seconds between the two.
  double seconds() {
    float ms = 0;
#if defined(HKB_BENCH_CUDA)
    vendor(cuEventSynchronize(stop_), "cuEventSynchronize");
    vendor(cuEventElapsedTime(&ms, start_, stop_), "cuEventElapsedTime");
#else
    vendor(hipEventSynchronize(stop_), "hipEventSynchronize");
    vendor(hipEventElapsedTime(&ms, start_, stop_), "hipEventElapsedTime");
#endif
    return ms * 1e-3;
  }

 private:
#if defined(HKB_BENCH_CUDA)
  using Event = CUevent;
  static int create(Event* e) {
    return cuEventCreate(e, CU_EVENT_DEFAULT);
  }
  static int record(Event e) {
    return cuEventRecord(e, nullptr);
  }
  static void destroy(Event e) {
    static_cast<void>(cuEventDestroy(e));
  }
#else
  using Event = hipEvent_t;
  static int create(Event* e) {
    return hipEventCreate(e);
  }
  static int record(Event e) {
    return hipEventRecord(e, nullptr);
  }
  static void destroy(Event e) {
    static_cast<void>(hipEventDestroy(e));
  }
#endif
  static void vendor(int rc, const char* what) {
    if (rc != 0)
      throw hkb::Error(HKB_ERROR_RUNTIME, std::string(what) + " failed: " + std::to_string(rc));
  }
  Event start_ = nullptr, stop_ = nullptr;
};

// HKB_BENCH_FILTER (comma-separated substrings) limits a run to the cases whose kernel name holds
// one of them: a case's kernel is the last one bench::function looked up, and time_sets returns NaN
// for an unwanted one, which Report::add leaves out.
inline std::string& current_kernel() {
  static std::string kernel;
  return kernel;
}
inline bool wanted(const std::string& kernel) {
  const char* filter = std::getenv("HKB_BENCH_FILTER");
  if (filter == nullptr || *filter == '\0' || kernel.empty()) return true;
  const std::string f(filter);
  for (size_t begin = 0; begin <= f.size();) {
    size_t end = f.find(',', begin);
    if (end == std::string::npos) end = f.size();
    if (end > begin && kernel.find(f.substr(begin, end - begin)) != std::string::npos) return true;
    begin = end + 1;
  }
  return false;
}
inline hkb::Function function(const hkb::Device& dev, const std::string& kernel) {
  current_kernel() = kernel;
  return dev.function(kernel);
}

// Median seconds per call of launch(set) over `batches` batches of `reps` calls, the calls cycling
// through sets 0 .. sets - 1; a warm-up call per set first (it also loads the module). NaN without
// a launch when HKB_BENCH_FILTER leaves the case out.
inline double time_sets(const hkb::Device& dev, size_t sets,
                        const std::function<void(size_t)>& launch, int reps = 20, int batches = 7) {
  const bool skip = !wanted(current_kernel());
  current_kernel().clear();
  if (skip) return std::nan("");
  for (size_t s = 0; s < sets; ++s) launch(s);
  dev.synchronize();  // binds the device's context for the events
  Events events;
  std::vector<double> t;
  size_t call = 0;
  for (int b = 0; b < batches; ++b) {
    events.start();
    for (int r = 0; r < reps; ++r) launch(call++ % sets);
    events.stop();
    t.push_back(events.seconds() / reps);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// One set of buffers: time_sets with a single set.
inline double time_median(const hkb::Device& dev, const std::function<void()>& fn, int reps = 20,
                          int batches = 7) {
  return time_sets(
      dev, 1, [&](size_t) { fn(); }, reps, batches);
}

// How many copies of a case's buffers (`footprint` bytes: everything one launch touches) the
// launches rotate through.
inline size_t rotation_sets(double footprint) {
  if (footprint >= kRotateBytes) return 1;
  return std::min(kMaxSets, static_cast<size_t>(std::ceil(kRotateBytes / footprint)));
}

// rotation_sets(footprint) results of make(): a case's buffers, one struct per set.
template <typename Set, typename Make>
std::vector<Set> make_sets(double footprint, Make make) {
  std::vector<Set> sets;
  const size_t n = rotation_sets(footprint);
  sets.reserve(n);
  for (size_t i = 0; i < n; ++i) sets.push_back(make());
  return sets;
}

template <typename T>
void fill(const hkb::Device& dev, const hkb::DeviceBuffer<T>& buf, uint8_t byte) {
  hkb::check(hkb_memset_d8(dev.get(), buf.ptr(), byte, buf.size() * sizeof(T)));
}

// One 1024-thread block per 1024 16-byte packs of `bytes`: a grid without candle's idle threads,
// beside candle's for comparison.
inline hkb::LaunchConfig pack_grid(size_t bytes) {
  const size_t packs = bytes / 16;
  return hkb::LaunchConfig::make(static_cast<uint32_t>((packs + 1023) / 1024), 1, 1, 1024, 1, 1);
}

inline hkb::LaunchConfig candle_grid(size_t n) {
  return hkb::LaunchConfig::for_num_elems(static_cast<uint32_t>(n));
}

// The two launches of an elementwise row: candle's geometry (one thread per element) and hkb's
// tuned configuration (hkb_launch_config_tuned: the blocks the device holds at once).
enum class Geometry { kCandle, kTuned };
inline hkb::LaunchConfig geometry(const hkb::Device& dev, const std::string& kernel, size_t n,
                                  Geometry g) {
  return g == Geometry::kTuned ? hkb::LaunchConfig::tuned(dev.function(kernel), n) : candle_grid(n);
}
// What a row's name adds for its geometry.
inline const char* geometry_label(Geometry g) {
  return g == Geometry::kTuned ? " (tuned)" : "";
}

// Copy bandwidth (read + write bytes per second) of hkb_memcpy_dtod over `bytes`.
inline double copy_bandwidth(const hkb::Device& dev, size_t bytes = kCopyBytes) {
  auto a = dev.alloc<unsigned char>(bytes);
  auto b = dev.alloc<unsigned char>(bytes);
  fill(dev, a, 1);
  const double s =
      time_median(dev, [&] { hkb::check(hkb_memcpy_dtod(dev.get(), b.ptr(), a.ptr(), bytes)); });
  return 2.0 * bytes / s;
}

// A measured case. bytes == 0: a launch that moves nothing (only its time is shown).
struct Row {
  std::string name;
  double bytes;
  double seconds;
};

// hkb_memcpy_dtod moving `bytes` (read + written), its buffers rotated like a case of that size:
// what a copy as short as a kernel reaches (the launch and the ramp weigh on both), a nearer
// ceiling for a short kernel than the large copy. Timed and filtered with `kernel`'s cases.
inline Row copy_row(const hkb::Device& dev, const std::string& kernel, double bytes) {
  const size_t half = static_cast<size_t>(bytes / 2);
  struct Set {
    hkb::DeviceBuffer<uint8_t> from, to;
  };
  const auto sets = make_sets<Set>(bytes, [&] {
    Set s{dev.alloc<uint8_t>(half), dev.alloc<uint8_t>(half)};
    fill(dev, s.from, 1);
    return s;
  });
  current_kernel() = kernel;
  const double s = time_sets(dev, sets.size(), [&](size_t i) {
    hkb::check(hkb_memcpy_dtod(dev.get(), sets[i].to.ptr(), sets[i].from.ptr(), half));
  });
  const std::string mib = std::to_string(static_cast<long long>(std::lround(bytes / (1 << 20))));
  return {"copy moving " + mib + " MiB (" + kernel + "'s bytes)", 2.0 * half, s};
}

// An input of an elementwise case: `count` elements of `elem_bytes`, every byte `fill`.
struct Operand {
  size_t elem_bytes;
  size_t count;
  uint8_t fill;
};

// A kernel of candle's elementwise ABI, (numel, num_dims, info, inputs..., out), over `numel`
// outputs of `out_bytes` each; empty `info`: null info (contiguous operands). Bytes counted: every
// input element read once, every output written once.
inline Row elementwise_row(const hkb::Device& dev, const std::string& kernel,
                           const std::string& label, size_t numel, size_t num_dims,
                           const std::vector<size_t>& info, const std::vector<Operand>& inputs,
                           size_t out_bytes, const hkb::LaunchConfig& cfg) {
  double bytes = static_cast<double>(numel * out_bytes);
  for (const Operand& in : inputs) bytes += static_cast<double>(in.count * in.elem_bytes);
  struct Set {
    std::vector<hkb::DeviceBuffer<uint8_t>> in;
    hkb::DeviceBuffer<uint8_t> out;
  };
  const auto sets = make_sets<Set>(bytes, [&] {
    Set s{{}, dev.alloc<uint8_t>(numel * out_bytes)};
    for (const Operand& in : inputs) {
      s.in.push_back(dev.alloc<uint8_t>(in.count * in.elem_bytes));
      fill(dev, s.in.back(), in.fill);
    }
    return s;
  });
  hkb::DeviceBuffer<size_t> dinfo;
  if (!info.empty()) dinfo = dev.upload(info);
  const hkb::Function fn = function(dev, kernel);
  const double s = time_sets(dev, sets.size(), [&](size_t i) {
    hkb::LaunchArgs args;
    args.arg(numel).arg(num_dims).arg(info.empty() ? hkb_devptr{0} : dinfo.ptr());
    for (const auto& in : sets[i].in) args.arg(in.ptr());
    args.arg(sets[i].out.ptr());
    fn.launch(cfg, args);
  });
  return {kernel + " " + label, bytes, s};
}

inline void print_header(const char* title, double copy_bw) {
  std::printf("\n%s (device-to-device copy: %.1f GB/s)\n", title, copy_bw / 1e9);
  std::printf("%-48s %10s %10s %8s\n", "kernel / case", "time us", "GB/s", "of copy");
}

inline void print_row(const Row& r, double copy_bw) {
  if (r.bytes == 0) {
    std::printf("%-48s %10.1f %10s %8s\n", r.name.c_str(), r.seconds * 1e6, "-", "-");
  } else {
    const double bw = r.bytes / r.seconds;
    std::printf("%-48s %10.1f %10.1f %7.0f%%\n", r.name.c_str(), r.seconds * 1e6, bw / 1e9,
                100.0 * bw / copy_bw);
  }
  std::fflush(stdout);
}

inline void print_table(const char* title, const std::vector<Row>& rows, double copy_bw) {
  print_header(title, copy_bw);
  for (const Row& r : rows) print_row(r, copy_bw);
}

// Collects a benchmark's rows and prints each as it comes, under section titles.
class Report {
 public:
  explicit Report(double copy_bw) : copy_bw_(copy_bw) {}
  void section(const std::string& title) { print_header(title.c_str(), copy_bw_); }
  void add(const Row& row) {
    if (std::isnan(row.seconds)) return;  // left out by HKB_BENCH_FILTER
    print_row(row, copy_bw_);
    rows_.push_back(row);
  }
  double copy_bw() const { return copy_bw_; }
  const std::vector<Row>& rows() const { return rows_; }

 private:
  double copy_bw_;
  std::vector<Row> rows_;
};

// main() of a benchmark: device 0, the copy baseline, then body. No device: a message and exit 0
// (CI builds and starts nothing); a library error: its message and exit 1.
inline int run(const char* program, const std::function<void(const hkb::Device&, Report&)>& body) {
  int count = 0;
  if (hkb_device_count(&count) != HKB_SUCCESS || count == 0) {
    std::printf("%s: no GPU device: %s\n", program, hkb_last_error());
    return 0;
  }
  try {
    const hkb::Device dev(0);
    const char* dir = std::getenv("HKB_BUNDLE_DIR");
    const std::string source =
        dir != nullptr && *dir != '\0' ? std::string("from ") + dir : "embedded in the library";
    std::printf("%s on %s, code objects %s\n", program, dev.target().c_str(), source.c_str());
    Report report(copy_bandwidth(dev));
    body(dev, report);
  } catch (const hkb::Error& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 1;
  }
  return 0;
}

}  // namespace bench
