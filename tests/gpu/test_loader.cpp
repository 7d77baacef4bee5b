// The loader on a real device: name lookup, argument checking before launch, zero-sized launches,
// streams, module loading under a thread race, and the handles' life after shutdown. Kernels from
// the foundation modules (affine, fill) serve as the test subjects.
#include "gpu/gpu_test.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

namespace {

using gpu_test::GpuTest;

class LoaderTest : public GpuTest {};

// affine_f32's arguments for out = 2 * in - 1 over n contiguous elements (LaunchArgs points into
// itself, so it is filled in place).
void contiguous_affine(hkb::LaunchArgs* args, size_t n, hkb_devptr in, hkb_devptr out) {
  args->arg(n).arg(size_t{1}).arg(hkb_devptr{0}).arg(in).arg(out).arg(2.0f).arg(-1.0f);
}

TEST_F(LoaderTest, UnknownNameListsNearestNames) {
  hkb_function fn = nullptr;
  EXPECT_EQ(hkb_function_get(device().get(), "affine_f33", &fn), HKB_ERROR_UNKNOWN_KERNEL);
  EXPECT_NE(std::string(hkb_last_error()).find("affine_f32"), std::string::npos)
      << hkb_last_error();
}

TEST_F(LoaderTest, WrongArgumentCountAndSizeAreRefusedBeforeLaunch) {
  hkb_function fn = nullptr;
  ASSERT_EQ(hkb_function_get(device().get(), "affine_f32", &fn), HKB_SUCCESS) << hkb_last_error();
  size_t n = 4;
  size_t nd = 1;
  hkb_devptr null_ptr = 0;
  float mul = 1, add = 0;
  void* args[] = {&n, &nd, &null_ptr, &null_ptr, &null_ptr, &mul, &add};
  size_t sizes[] = {8, 8, 8, 8, 8, 4, 4};
  const hkb_launch_config cfg = hkb_launch_config_for_num_elems(4);
  EXPECT_EQ(hkb_launch(fn, &cfg, nullptr, args, sizes, 6), HKB_ERROR_ARGUMENT_MISMATCH);
  EXPECT_NE(std::string(hkb_last_error()).find("takes 7 arguments, given 6"), std::string::npos)
      << hkb_last_error();
  double wide_mul = 1;
  args[5] = &wide_mul;
  sizes[5] = 8;
  EXPECT_EQ(hkb_launch(fn, &cfg, nullptr, args, sizes, 7), HKB_ERROR_ARGUMENT_MISMATCH);
  EXPECT_NE(std::string(hkb_last_error()).find("is 4 bytes, given 8"), std::string::npos)
      << hkb_last_error();
}

TEST_F(LoaderTest, ZeroSizedLaunchIsANoOp) {
  auto out = device().upload(std::vector<float>{7.0f});
  hkb::LaunchArgs args;
  args.arg(size_t{0})
      .arg(size_t{1})
      .arg(hkb_devptr{0})
      .arg(out.ptr())
      .arg(out.ptr())
      .arg(2.0f)
      .arg(1.0f);
  launch("affine_f32", hkb::LaunchConfig::for_num_elems(0), args);
  EXPECT_EQ(out.download()[0], 7.0f);
}

TEST_F(LoaderTest, LaunchOnAStream) {
  hkb::Stream stream = device().create_stream();
  std::vector<float> host(5000);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i);
  auto in = device().upload(host);
  auto out = device().alloc<float>(host.size());
  hkb::LaunchArgs args;
  contiguous_affine(&args, host.size(), in.ptr(), out.ptr());
  device()
      .function("affine_f32")
      .launch(hkb::LaunchConfig::for_num_elems(static_cast<uint32_t>(host.size())), args,
              stream.get());
  stream.synchronize();
  const auto got = out.download();
  for (size_t i = 0; i < host.size(); ++i) ASSERT_EQ(got[i], 2.0f * i - 1.0f) << i;
}

TEST_F(LoaderTest, ConcurrentFirstLookupsLoadTheModuleOnce) {
  // Threads released together all ask for kernels of a module not loaded yet; each must get the
  // same handle per kernel.
  const char* names[] = {"fill_u8", "fill_f32", "copy2d_f64", "const_set_bf16"};
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  std::vector<hkb_function> got(32, nullptr);
  std::vector<hkb_status> status(32, HKB_SUCCESS);
  for (int t = 0; t < 32; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load()) {
      }
      status[t] = hkb_function_get(device().get(), names[t % 4], &got[t]);
    });
  }
  while (ready.load() < 32) {
  }
  go.store(true);
  for (auto& th : threads) th.join();
  for (int t = 0; t < 32; ++t) {
    ASSERT_EQ(status[t], HKB_SUCCESS);
    EXPECT_EQ(got[t], got[t % 4]);
  }
}

// Seconds of affine_f32 over `in` into `out` under candle's geometry (its contiguous path splits
// the work over the busy blocks that the multiprocessor count sets), the median of 5 runs; the
// outputs must be exact every time.
double timed_affine(const hkb::Device& dev, const hkb::DeviceBuffer<float>& in,
                    const hkb::DeviceBuffer<float>& out, const std::vector<float>& host) {
  hkb::LaunchArgs args;
  contiguous_affine(&args, host.size(), in.ptr(), out.ptr());
  const hkb::Function fn = dev.function("affine_f32");
  const auto cfg = hkb::LaunchConfig::for_num_elems(static_cast<uint32_t>(host.size()));
  std::vector<double> t;
  for (int r = 0; r < 5; ++r) {
    hkb::check(hkb_memset_d8(dev.get(), out.ptr(), 0, host.size() * sizeof(float)));
    dev.synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    fn.launch(cfg, args);
    dev.synchronize();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    const auto got = out.download();
    for (size_t i = 0; i < host.size(); ++i) {
      if (got[i] != 2.0f * host[i] - 1.0f) {
        ADD_FAILURE() << "element " << i << ": " << got[i] << " with " << dev.multiprocessors()
                      << " multiprocessors";
        return 0;
      }
    }
  }
  std::sort(t.begin(), t.end());
  return t[2];
}

TEST_F(LoaderTest, MultiprocessorCountSetsTheWorkSplitNotTheResults) {
  const uint32_t own = device().multiprocessors();
  ASSERT_GT(own, 0u);
  struct Restore {  // later tests get the device's own count whatever fails here
    hkb_context ctx;
    ~Restore() { hkb_context_set_multiprocessors(ctx, 0); }
  } restore{device().get()};
  const bool cpu = gpu_test::on_cpu_platform();  // the device, not the build: HKB_PLATFORM=cpu
  // GPU: 64 MiB each way, so one busy block is far slower than a full device.
  const size_t n = cpu ? 300001 : (size_t{1} << 24) + 3;
  std::vector<float> host(n);
  for (size_t i = 0; i < n; ++i) host[i] = static_cast<float>(i % 4096);
  const auto in = device().upload(host);
  const auto out = device().alloc<float>(n);
  const double full = timed_affine(device(), in, out, host);
  double one = 0;
  for (const uint32_t count : {1u, 3u, own * 4, 65536u}) {
    device().set_multiprocessors(count);
    EXPECT_EQ(device().multiprocessors(), count);
    const double t = timed_affine(device(), in, out, host);
    if (count == 1) one = t;
  }
  device().set_multiprocessors(0);
  EXPECT_EQ(device().multiprocessors(), own);
  EXPECT_EQ(hkb_context_set_multiprocessors(device().get(), 65537), HKB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(device().multiprocessors(), own);
  std::printf("affine_f32, %zu elements: %.1f us over %u multiprocessors, %.1f us over 1\n", n,
              full * 1e6, own, one * 1e6);
  // On a GPU the kernel read the count: one busy block (count 1) leaves the device mostly idle.
  if (!cpu) EXPECT_GT(one, 4 * full) << "the work split did not follow the count";
}

TEST_F(LoaderTest, TargetIsReported) {
  const std::string target = device().target();
  EXPECT_FALSE(target.empty());
  if (gpu_test::on_cpu_platform()) {
    EXPECT_EQ(target.rfind("cpu-wave", 0), 0u) << target;
  } else {
    if (std::string(hkb_platform()) == "nvidia") EXPECT_EQ(target.rfind("sm_", 0), 0u) << target;
    if (std::string(hkb_platform()) == "amd") EXPECT_EQ(target.rfind("gfx", 0), 0u) << target;
  }
}

// Last: shuts the library down, then checks that old handles are refused and that a later call
// starts afresh.
TEST_F(LoaderTest, HandlesAreDeadAfterShutdownAndTheLibraryRestarts) {
  hkb_context ctx = device().get();
  hkb_function fn = nullptr;
  ASSERT_EQ(hkb_function_get(ctx, "fill_f32", &fn), HKB_SUCCESS) << hkb_last_error();
  ASSERT_EQ(hkb_shutdown(), HKB_SUCCESS);
  hkb_function again = nullptr;
  EXPECT_EQ(hkb_function_get(ctx, "fill_f32", &again), HKB_ERROR_SHUT_DOWN);
  const hkb_launch_config cfg = hkb_launch_config_for_num_elems(1);
  EXPECT_EQ(hkb_launch(fn, &cfg, nullptr, nullptr, nullptr, 0), HKB_ERROR_SHUT_DOWN);
  hkb_devptr p = 0;
  EXPECT_EQ(hkb_malloc(ctx, 16, &p), HKB_ERROR_SHUT_DOWN);
  hkb_context fresh = nullptr;
  ASSERT_EQ(hkb_context_get(0, &fresh), HKB_SUCCESS) << hkb_last_error();
  EXPECT_NE(fresh, ctx);
  EXPECT_EQ(hkb_function_get(fresh, "fill_f32", &again), HKB_SUCCESS) << hkb_last_error();
}

}  // namespace
