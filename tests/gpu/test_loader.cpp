// The loader on a real device: name lookup, argument checking before launch, zero-sized launches,
// streams, module loading under a thread race, and the handles' life after shutdown. Kernels from
// the foundation modules (affine, fill) serve as the test subjects.
#include "gpu/gpu_test.hpp"

#include <atomic>
#include <thread>

namespace {

using gpu_test::GpuTest;

class LoaderTest : public GpuTest {};

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
  args.arg(host.size())
      .arg(size_t{1})
      .arg(hkb_devptr{0})
      .arg(in.ptr())
      .arg(out.ptr())
      .arg(2.0f)
      .arg(-1.0f);
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
