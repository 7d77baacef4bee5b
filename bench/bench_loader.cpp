// The loader's own costs on the H100 machine's CPU, each against the raw driver in the same
// process (CUDA driver API or HIP module API, per flavour):
// - a cached hkb_function_get (the same name again and again, and names in rotation);
// - hkb_launch against cuLaunchKernel / hipModuleLaunchKernel of the same kernel, grid and
//   arguments on the same stream, batches of the two alternating;
// - the first load of every module (hkb_function_get of its first kernel after hkb_shutdown)
//   against the driver's load of the same code object plus one function lookup.
// Every figure is the median of many repetitions. Uses only calls that hkb 0.1 already had, so the
// same file times an older library for a before/after comparison.
#include <hkb/hkb.h>

#if defined(HKB_BENCH_CUDA)
#include <cuda.h>
#else
#include <hip/hip_runtime_api.h>
#endif

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

#if defined(HKB_BENCH_CUDA)
using RawModule = CUmodule;
using RawFunction = CUfunction;
void raw_check(int rc, const char* what) {
  if (rc != 0) throw std::runtime_error(std::string(what) + " failed: " + std::to_string(rc));
}
void raw_bind() {
  CUcontext ctx = nullptr;
  raw_check(cuInit(0), "cuInit");
  raw_check(cuDevicePrimaryCtxRetain(&ctx, 0), "cuDevicePrimaryCtxRetain");
  raw_check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
}
RawModule raw_load(const std::vector<char>& image) {
  RawModule m = nullptr;
  raw_check(cuModuleLoadData(&m, image.data()), "cuModuleLoadData");
  return m;
}
RawFunction raw_function(RawModule m, const char* name) {
  RawFunction f = nullptr;
  raw_check(cuModuleGetFunction(&f, m, name), "cuModuleGetFunction");
  return f;
}
void raw_unload(RawModule m) {
  raw_check(cuModuleUnload(m), "cuModuleUnload");
}
int raw_launch(RawFunction f, const hkb_launch_config& c, void** args) {
  return cuLaunchKernel(f, c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1], c.block[2],
                        c.shared_mem_bytes, nullptr, args, nullptr);
}
void raw_sync() {
  raw_check(cuCtxSynchronize(), "cuCtxSynchronize");
}
// Writes `value` into the module's u32 global `name` as hkb's loader does; false if it has none.
bool raw_write_global(RawModule m, const char* name, uint32_t value) {
  CUdeviceptr p = 0;
  size_t bytes = 0;
  if (cuModuleGetGlobal(&p, &bytes, m, name) != CUDA_SUCCESS) return false;
  raw_check(cuMemcpyHtoD(p, &value, sizeof value), "cuMemcpyHtoD");
  return true;
}
const char* const kRawLaunch = "cuLaunchKernel";
const char* const kRawLoad = "cuModuleLoadData + cuModuleGetFunction";
#else
using RawModule = hipModule_t;
using RawFunction = hipFunction_t;
void raw_check(hipError_t rc, const char* what) {
  if (rc != hipSuccess)
    throw std::runtime_error(std::string(what) + " failed: " + hipGetErrorName(rc));
}
void raw_bind() {
  raw_check(hipSetDevice(0), "hipSetDevice");
}
RawModule raw_load(const std::vector<char>& image) {
  RawModule m = nullptr;
  raw_check(hipModuleLoadData(&m, image.data()), "hipModuleLoadData");
  return m;
}
RawFunction raw_function(RawModule m, const char* name) {
  RawFunction f = nullptr;
  raw_check(hipModuleGetFunction(&f, m, name), "hipModuleGetFunction");
  return f;
}
void raw_unload(RawModule m) {
  raw_check(hipModuleUnload(m), "hipModuleUnload");
}
int raw_launch(RawFunction f, const hkb_launch_config& c, void** args) {
  return hipModuleLaunchKernel(f, c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1],
                               c.block[2], c.shared_mem_bytes, nullptr, args, nullptr);
}
void raw_sync() {
  raw_check(hipDeviceSynchronize(), "hipDeviceSynchronize");
}
bool raw_write_global(RawModule m, const char* name, uint32_t value) {
  hipDeviceptr_t p = nullptr;
  size_t bytes = 0;
  if (hipModuleGetGlobal(&p, &bytes, m, name) != hipSuccess) return false;
  raw_check(hipMemcpyHtoD(p, &value, sizeof value), "hipMemcpyHtoD");
  return true;
}
const char* const kRawLaunch = "hipModuleLaunchKernel";
const char* const kRawLoad = "hipModuleLoadData + hipModuleGetFunction";
#endif

void check(hkb_status s, const char* what) {
  if (s != HKB_SUCCESS) throw std::runtime_error(std::string(what) + ": " + hkb_last_error());
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::vector<char> file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  return std::vector<char>(std::istreambuf_iterator<char>(f), {});
}

struct Module {
  std::string name, kernel;  // the module and its first kernel
  std::vector<char> image;
};

// Every module of the build's manifest with its code object file.
std::vector<Module> modules() {
  const char* env = std::getenv("HKB_BUNDLE_DIR");
  const std::string dir = env != nullptr && *env != '\0' ? env : HKB_BENCH_BUNDLE_DIR;
  std::ifstream f(HKB_BENCH_MANIFEST);
  const nlohmann::json doc = nlohmann::json::parse(f);
  std::vector<Module> out;
  for (const auto& m : doc.at("modules")) {
    Module mod{
        m.at("module").get<std::string>(), m.at("kernels").at(0).at("name").get<std::string>(), {}};
    mod.image = file_bytes(dir + "/" + mod.name + HKB_BENCH_BUNDLE_SUFFIX);
    out.push_back(std::move(mod));
  }
  return out;
}

hkb_context fresh_context() {
  check(hkb_shutdown(), "hkb_shutdown");
  hkb_context ctx = nullptr;
  check(hkb_context_get(0, &ctx), "hkb_context_get");
  return ctx;
}

// Median nanoseconds of one hkb_function_get over `names`, in rounds of `calls` calls.
double function_get_ns(hkb_context ctx, const std::vector<const char*>& names) {
  constexpr int kCalls = 1 << 20, kRounds = 21;
  std::vector<double> t;
  volatile uintptr_t sink = 0;
  for (int r = 0; r < kRounds; ++r) {
    const auto t0 = Clock::now();
    size_t k = 0;
    for (int i = 0; i < kCalls; ++i) {
      hkb_function fn = nullptr;
      if (hkb_function_get(ctx, names[k], &fn) != HKB_SUCCESS)
        throw std::runtime_error(hkb_last_error());
      sink = sink + reinterpret_cast<uintptr_t>(fn);
      k = k + 1 == names.size() ? 0 : k + 1;
    }
    t.push_back(seconds_since(t0) * 1e9 / kCalls);
  }
  return median(t);
}

int body() {
  int count = 0;
  if (hkb_device_count(&count) != HKB_SUCCESS || count == 0) {
    std::printf("hkb_bench_loader: no GPU device: %s\n", hkb_last_error());
    return 0;
  }
  int major = 0, minor = 0, patch = 0, abi = 0;
  hkb_version(&major, &minor, &patch, &abi);
  std::vector<Module> mods = modules();
  hkb_context ctx = fresh_context();
  char target[64] = {};
  check(hkb_context_target(ctx, target, sizeof target), "hkb_context_target");
  std::printf("hkb_bench_loader: libhkb %d.%d.%d (%s), device 0 (%s), %zu modules\n", major, minor,
              patch, hkb_platform(), target, mods.size());
  raw_bind();

  // First loads: hkb after a shutdown (a new library, nothing loaded); the raw driver's load and
  // lookup; the same plus the write of the multiprocessor count that hkb does after a load
  // (where the module has the global). The order rotates between rounds.
  constexpr int kLoadRounds = 9;
  std::vector<std::vector<double>> hkb_load(mods.size()), raw_load_s(mods.size()),
      raw_global_s(mods.size());
  for (int r = 0; r < kLoadRounds; ++r) {
    ctx = fresh_context();
    for (size_t m = 0; m < mods.size(); ++m) {
      for (int step = 0; step < 3; ++step) {
        const int what = (step + r) % 3;
        const auto t0 = Clock::now();
        if (what == 0) {
          hkb_function fn = nullptr;
          check(hkb_function_get(ctx, mods[m].kernel.c_str(), &fn), "hkb_function_get (first)");
          hkb_load[m].push_back(seconds_since(t0));
          continue;
        }
        RawModule rm = raw_load(mods[m].image);
        raw_function(rm, mods[m].kernel.c_str());
        if (what == 1) {
          raw_load_s[m].push_back(seconds_since(t0));
        } else if (raw_write_global(rm, "hkb_multiprocessors", 132)) {
          raw_global_s[m].push_back(seconds_since(t0));
        }
        raw_unload(rm);
      }
    }
  }

  // Cached lookups: every module is loaded now.
  std::vector<const char*> all;
  for (const auto& m : mods) all.push_back(m.kernel.c_str());
  const char* one = "affine_f32";
  hkb_function probe = nullptr;
  if (hkb_function_get(ctx, one, &probe) != HKB_SUCCESS) one = all[0];
  const double get_one = function_get_ns(ctx, {one});
  const double get_all = function_get_ns(ctx, all);

  // Launches: affine_f32 over 1024 contiguous elements, hkb and raw batches alternating.
  double launch_hkb = 0, launch_raw = 0, launch_empty = 0, launch_pair = 0;
  hkb_function affine = nullptr;
  const auto affine_module =
      std::find_if(mods.begin(), mods.end(), [](const Module& m) { return m.name == "affine"; });
  if (affine_module != mods.end() && hkb_function_get(ctx, "affine_f32", &affine) == HKB_SUCCESS) {
    const size_t n = 1024;
    hkb_devptr in = 0, out = 0;
    check(hkb_malloc(ctx, n * 4, &in), "hkb_malloc");
    check(hkb_malloc(ctx, n * 4, &out), "hkb_malloc");
    check(hkb_memset_d8(ctx, in, 0, n * 4), "hkb_memset_d8");
    size_t numel = n, dims = 1;
    hkb_devptr info = 0;
    float mul = 2, add = 1;
    void* args[] = {&numel, &dims, &info, &in, &out, &mul, &add};
    const size_t sizes[] = {8, 8, 8, 8, 8, 4, 4};
    const hkb_launch_config cfg = hkb_launch_config_for_num_elems(static_cast<uint32_t>(n));
    RawModule rm = raw_load(affine_module->image);
    RawFunction rf = raw_function(rm, "affine_f32");
    constexpr int kBatch = 64, kRounds = 601;
    std::vector<double> th, tr, te, pair;  // pair: hkb / raw of the same round
    auto hkb_batch = [&] {
      raw_sync();
      const auto t0 = Clock::now();
      for (int i = 0; i < kBatch; ++i)
        check(hkb_launch(affine, &cfg, nullptr, args, sizes, 7), "hkb_launch");
      return seconds_since(t0) / kBatch;
    };
    auto raw_batch = [&] {
      raw_sync();
      const auto t0 = Clock::now();
      for (int i = 0; i < kBatch; ++i)
        if (raw_launch(rf, cfg, args) != 0) throw std::runtime_error(kRawLaunch);
      return seconds_since(t0) / kBatch;
    };
    for (int r = -20; r < kRounds; ++r) {  // the first 20 rounds warm up; the order alternates
      double h = 0, w = 0;
      if (r % 2 == 0) {
        h = hkb_batch();
        w = raw_batch();
      } else {
        w = raw_batch();
        h = hkb_batch();
      }
      if (r >= 0) th.push_back(h), tr.push_back(w), pair.push_back(h / w);
    }
    // hkb's own work per launch: its checks and locks, without the driver (an empty grid).
    const hkb_launch_config empty = hkb_launch_config_for_num_elems(0);
    for (int r = 0; r < 101; ++r) {
      const auto t0 = Clock::now();
      for (int i = 0; i < 4096; ++i)
        check(hkb_launch(affine, &empty, nullptr, args, sizes, 7), "hkb_launch (empty)");
      te.push_back(seconds_since(t0) / 4096);
    }
    launch_empty = median(te);
    launch_pair = median(pair);
    raw_sync();
    raw_unload(rm);
    check(hkb_free(ctx, in), "hkb_free");
    check(hkb_free(ctx, out), "hkb_free");
    launch_hkb = median(th);
    launch_raw = median(tr);
  }

  std::printf("\n%-44s %12s\n", "cached lookup", "ns per call");
  std::printf("%-44s %12.1f\n", (std::string("hkb_function_get, one name (") + one + ")").c_str(),
              get_one);
  std::printf("%-44s %12.1f\n",
              ("hkb_function_get, " + std::to_string(all.size()) + " names in turn").c_str(),
              get_all);
  if (launch_raw > 0) {
    std::printf("\n%-44s %12s %12s %8s\n", "launch (affine_f32, 1024 elements)", "hkb us", "raw us",
                "ratio");
    std::printf("%-44s %12.3f %12.3f %8.3f\n", (std::string("hkb_launch vs ") + kRawLaunch).c_str(),
                launch_hkb * 1e6, launch_raw * 1e6, launch_hkb / launch_raw);
    std::printf("%-44s %12s %12s %8.3f\n", "the same, ratio of adjacent batches", "", "",
                launch_pair);
    std::printf("%-44s %12.3f\n", "hkb_launch, empty grid (hkb's checks alone)",
                launch_empty * 1e6);
  } else {
    std::printf("\nlaunch: no affine module in this build, not timed\n");
  }
  std::printf("\n%-12s %-24s %9s %9s %7s %14s\n", "first load", "kernel looked up", "hkb ms",
              "raw ms", "ratio", "raw+count ms");
  for (size_t m = 0; m < mods.size(); ++m) {
    const double h = median(hkb_load[m]), w = median(raw_load_s[m]);
    const std::string g =
        raw_global_s[m].empty() ? "-" : std::to_string(median(raw_global_s[m]) * 1e3).substr(0, 5);
    std::printf("%-12s %-24s %9.3f %9.3f %7.2f %14s\n", mods[m].name.c_str(),
                mods[m].kernel.c_str(), h * 1e3, w * 1e3, h / w, g.c_str());
  }
  std::printf(
      "(raw: %s of the same code object file; raw+count: and the write of\n"
      "hkb_multiprocessors, where the module has it; medians of %d rounds)\n",
      kRawLoad, kLoadRounds);
  return 0;
}

}  // namespace

int main() {
  try {
    return body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hkb_bench_loader: %s\n", e.what());
    return 1;
  }
}
