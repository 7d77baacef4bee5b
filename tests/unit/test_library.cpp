// The loader's layers 2-6 against the fake runtime: lookups, caching, races, argument checks,
// launch configuration and the C ABI's error paths.
#include "c_api.hpp"
#include "fake_runtime.hpp"

#include <gtest/gtest.h>
#include <hkb/hkb.hpp>

#include <atomic>
#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

namespace {

using hkb::detail::kTunedMaxBlocksLimit;
using hkb::detail::Library;
using hkb::detail::Options;

TEST(LaunchConfig, MatchesCudarcForNumElems) {
  struct Case {
    uint32_t n, grid;
  } cases[] = {{0, 0},
               {1, 1},
               {1023, 1},
               {1024, 1},
               {1025, 2},
               {(1u << 20) + 3, 1025},
               {0xFFFFFFFFu, 4194304}};
  for (const auto& c : cases) {
    const hkb_launch_config cfg = hkb_launch_config_for_num_elems(c.n);
    EXPECT_EQ(cfg.grid[0], c.grid) << c.n;
    EXPECT_EQ(cfg.grid[1], 1u);
    EXPECT_EQ(cfg.grid[2], 1u);
    EXPECT_EQ(cfg.block[0], 1024u);
    EXPECT_EQ(cfg.block[1], 1u);
    EXPECT_EQ(cfg.block[2], 1u);
    EXPECT_EQ(cfg.shared_mem_bytes, 0u);
  }
}

TEST(LaunchArgs, PacksHostCopiesInOrder) {
  hkb::LaunchArgs a;
  a.arg(size_t{7})
      .arg(uint32_t{3})
      .arg(hkb::bf16{0x3F80})
      .arg(hkb::f8e4m3{0x38})
      .arg(2.5)
      .arg(true);
  ASSERT_EQ(a.size(), 6u);
  const size_t expect[] = {8, 4, 2, 1, 8, 1};
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(a.sizes()[i], expect[i]);
  EXPECT_EQ(*static_cast<size_t*>(a.pointers()[0]), 7u);
  EXPECT_EQ(*static_cast<uint16_t*>(a.pointers()[2]), 0x3F80);
  EXPECT_EQ(*static_cast<double*>(a.pointers()[4]), 2.5);
  hkb::LaunchArgs full;
  for (int i = 0; i < 32; ++i) full.arg(i);
  EXPECT_THROW(full.arg(1), hkb::Error);
}

class LibraryTest : public ::testing::Test {
 protected:
  fake::State state;
};

TEST_F(LibraryTest, LookupLoadsModuleOnceAndCaches) {
  auto lib = fake::make_library(&state);
  hkb_context_s* ctx = nullptr;
  ASSERT_TRUE(lib->context(0, &ctx).is_ok());
  hkb_function_s *a = nullptr, *b = nullptr, *c = nullptr;
  ASSERT_TRUE(lib->function(ctx, "affine_f32", &a).is_ok());
  ASSERT_TRUE(lib->function(ctx, "affine_f32", &b).is_ok());
  ASSERT_TRUE(lib->function(ctx, "affine_bf16", &c).is_ok());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(state.loads.load(), 1);  // both kernels live in one module
  ASSERT_TRUE(lib->function(ctx, "fill_u8", &c).is_ok());
  EXPECT_EQ(state.loads.load(), 2);
  ASSERT_EQ(lib->loaded_modules(ctx).size(), 2u);
  EXPECT_EQ(lib->loaded_modules(ctx)[0].target, "gfx90a");
}

TEST_F(LibraryTest, UnknownKernelListsNearestNames) {
  auto lib = fake::make_library(&state);
  hkb_context_s* ctx = nullptr;
  ASSERT_TRUE(lib->context(0, &ctx).is_ok());
  hkb_function_s* f = nullptr;
  const auto s = lib->function(ctx, "affine_f16", &f);
  EXPECT_EQ(s.code, HKB_ERROR_UNKNOWN_KERNEL);
  EXPECT_NE(s.message.find("affine_f32"), std::string::npos) << s.message;
  EXPECT_EQ(state.loads.load(), 0);
}

TEST_F(LibraryTest, ConcurrentFirstLookupsLoadOnce) {
  auto lib = fake::make_library(&state);
  hkb_context_s* ctx = nullptr;
  ASSERT_TRUE(lib->context(0, &ctx).is_ok());
  constexpr int kThreads = 16;
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<hkb_function_s*> got(kThreads, nullptr);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ready++;
      while (!go.load()) std::this_thread::yield();
      const char* name = (t % 2) ? "fill_u8" : "fill_f64";
      ASSERT_TRUE(lib->function(ctx, name, &got[t]).is_ok());
    });
  }
  while (ready.load() < kThreads) std::this_thread::yield();
  go = true;
  for (auto& th : threads) th.join();
  EXPECT_EQ(state.loads.load(), 1);
  for (int t = 2; t < kThreads; ++t) EXPECT_EQ(got[t], got[t % 2]);
}

TEST_F(LibraryTest, EachDeviceLoadsItsOwnModuleWithTheDeviceBound) {
  state.devices = 2;
  state.targets = {"gfx90a:sramecc+:xnack-", "gfx1030"};
  auto lib = fake::make_library(&state);
  hkb_context_s *c0 = nullptr, *c1 = nullptr;
  ASSERT_TRUE(lib->context(0, &c0).is_ok());
  ASSERT_TRUE(lib->context(1, &c1).is_ok());
  hkb_function_s *f0 = nullptr, *f1 = nullptr;
  ASSERT_TRUE(lib->function(c1, "fill_u8", &f1).is_ok());
  ASSERT_TRUE(lib->function(c0, "fill_u8", &f0).is_ok());
  EXPECT_NE(f0, f1);
  EXPECT_EQ(state.loads.load(), 2);
  EXPECT_EQ(state.bound_device_at_load, (std::vector<int>{1, 0}));
  EXPECT_EQ(lib->loaded_modules(c1)[0].target, "gfx1030");
  hkb_context_s* none = nullptr;
  EXPECT_EQ(lib->context(2, &none).code, HKB_ERROR_NO_DEVICE);
}

TEST_F(LibraryTest, DeviceTargetMissingFromBundle) {
  state.targets = {"gfx942:sramecc+:xnack-"};
  auto lib = fake::make_library(&state, {"gfx906", "gfx90a"});
  hkb_context_s* ctx = nullptr;
  ASSERT_TRUE(lib->context(0, &ctx).is_ok());
  hkb_function_s* f = nullptr;
  const auto s = lib->function(ctx, "fill_u8", &f);
  EXPECT_EQ(s.code, HKB_ERROR_TARGET_MISSING);
  EXPECT_NE(s.message.find("gfx942:sramecc+:xnack-"), std::string::npos) << s.message;
  EXPECT_NE(s.message.find("gfx906, gfx90a"), std::string::npos) << s.message;
}

TEST_F(LibraryTest, LaunchChecksArgumentsBeforeLaunching) {
  auto lib = fake::make_library(&state);
  hkb_context_s* ctx = nullptr;
  ASSERT_TRUE(lib->context(0, &ctx).is_ok());
  hkb_function_s* f = nullptr;
  ASSERT_TRUE(lib->function(ctx, "fill_u8", &f).is_ok());
  uint64_t buf = 0;
  uint8_t v = 1;
  size_t n = 10;
  void* args[] = {&buf, &v, &n};
  size_t sizes[] = {8, 1, 8};
  const hkb_launch_config cfg = hkb_launch_config_for_num_elems(10);
  EXPECT_TRUE(lib->launch(f, cfg, nullptr, args, sizes, 3).is_ok());
  EXPECT_EQ(state.launches.load(), 1);

  auto s = lib->launch(f, cfg, nullptr, args, sizes, 2);
  EXPECT_EQ(s.code, HKB_ERROR_ARGUMENT_MISMATCH);
  EXPECT_NE(s.message.find("fill_u8 takes 3 arguments, given 2"), std::string::npos) << s.message;
  size_t wrong[] = {8, 4, 8};
  s = lib->launch(f, cfg, nullptr, args, wrong, 3);
  EXPECT_EQ(s.code, HKB_ERROR_ARGUMENT_MISMATCH);
  EXPECT_NE(s.message.find("argument 1 (value: u8) is 1 bytes, given 4"), std::string::npos)
      << s.message;
  void* null_arg[] = {&buf, nullptr, &n};
  EXPECT_EQ(lib->launch(f, cfg, nullptr, null_arg, sizes, 3).code, HKB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lib->launch(f, cfg, nullptr, nullptr, sizes, 3).code, HKB_ERROR_INVALID_ARGUMENT);
  hkb_launch_config big = cfg;
  big.block[0] = 2048;
  EXPECT_EQ(lib->launch(f, big, nullptr, args, sizes, 3).code, HKB_ERROR_INVALID_ARGUMENT);
  hkb_launch_config empty_block = cfg;
  empty_block.block[1] = 0;
  EXPECT_EQ(lib->launch(f, empty_block, nullptr, args, sizes, 3).code, HKB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(state.launches.load(), 1);  // nothing above reached the runtime

  // A zero-sized grid is no error and no launch.
  EXPECT_TRUE(lib->launch(f, hkb_launch_config_for_num_elems(0), nullptr, args, sizes, 3).is_ok());
  EXPECT_EQ(state.launches.load(), 1);
}

// The manifest's launch rules: affine resident (module), fill_u8 candle's (kernel), fill_f64 none.
// Resident kernels get a 1024-thread block per two 16-byte packs of their widest element a thread
// (8192 f32 or 16384 bf16 elements), at most Options::tuned_max_blocks (8192) blocks, past 1024 as
// rows of at most 1024 (the kernels' tuning::kResidentBlockBound).
TEST_F(LibraryTest, TunedConfigFollowsTheManifestRule) {
  auto lib = fake::make_library(&state);
  hkb_context_s* ctx = nullptr;
  ASSERT_TRUE(lib->context(0, &ctx).is_ok());
  hkb_function_s *affine = nullptr, *affine_bf16 = nullptr, *fill_u8 = nullptr, *fill_f64 = nullptr;
  ASSERT_TRUE(lib->function(ctx, "affine_f32", &affine).is_ok());
  ASSERT_TRUE(lib->function(ctx, "affine_bf16", &affine_bf16).is_ok());
  ASSERT_TRUE(lib->function(ctx, "fill_u8", &fill_u8).is_ok());
  ASSERT_TRUE(lib->function(ctx, "fill_f64", &fill_f64).is_ok());
  struct Grid {
    uint32_t x, y;
  };
  struct Case {
    uint64_t n;
    Grid f32, bf16;
    uint32_t candle;
  } cases[] = {{0, {0, 1}, {0, 1}, 0},
               {1, {1, 1}, {1, 1}, 1},
               {1024, {1, 1}, {1, 1}, 1},
               {1025, {1, 1}, {1, 1}, 2},
               {8193, {2, 1}, {1, 1}, 9},
               {16385, {3, 1}, {2, 1}, 17},
               {100 * 8192, {100, 1}, {50, 1}, 800},
               {1024 * 8192 - 1, {1024, 1}, {512, 1}, 8192},
               {1024 * 8192 + 1, {513, 2}, {513, 1}, 8193},
               {3 * 1024 * 8192 + 5, {769, 4}, {769, 2}, 24577},
               {uint64_t{1} << 26, {1024, 8}, {1024, 4}, 65536},
               {uint64_t{1} << 32, {1024, 8}, {1024, 8}, 4194304},
               {uint64_t{1} << 40, {1024, 8}, {1024, 8}, 1073741824}};
  for (const Case& c : cases) {
    hkb_launch_config got{};
    ASSERT_TRUE(lib->tuned_config(affine, c.n, &got).is_ok()) << c.n;
    EXPECT_EQ(got.grid[0], c.f32.x) << c.n;
    EXPECT_EQ(got.grid[1], c.f32.y) << c.n;
    EXPECT_EQ(got.block[0], 1024u);
    EXPECT_EQ(got.grid[2] * got.block[1] * got.block[2], 1u);
    EXPECT_EQ(got.shared_mem_bytes, 0u);
    ASSERT_TRUE(lib->tuned_config(affine_bf16, c.n, &got).is_ok()) << c.n;
    EXPECT_EQ(got.grid[0], c.bf16.x) << c.n;
    EXPECT_EQ(got.grid[1], c.bf16.y) << c.n;
    ASSERT_TRUE(lib->tuned_config(fill_u8, c.n, &got).is_ok()) << c.n;
    EXPECT_EQ(got.grid[0], c.candle) << c.n;
    EXPECT_EQ(got.block[0], 1024u);
    if (c.n <= 0xFFFFFFFFu) {
      const hkb_launch_config cudarc = hkb_launch_config_for_num_elems(static_cast<uint32_t>(c.n));
      EXPECT_EQ(std::memcmp(&got, &cudarc, sizeof got), 0) << c.n;
    }
  }
  hkb_launch_config got{};
  ASSERT_TRUE(lib->tuned_config(affine, ~uint64_t{0}, &got).is_ok());  // the threads loop
  EXPECT_EQ(got.grid[0], 1024u);
  EXPECT_EQ(got.grid[1], 8u);
  auto s = lib->tuned_config(fill_u8, uint64_t{1} << 41, &got);
  EXPECT_EQ(s.code, HKB_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(s.message.find("more than a grid holds"), std::string::npos) << s.message;
  s = lib->tuned_config(fill_f64, 10, &got);
  EXPECT_EQ(s.code, HKB_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(s.message.find("fill_f64 has no launch from an element count"), std::string::npos)
      << s.message;
  EXPECT_EQ(lib->tuned_config(affine, 10, nullptr).code, HKB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lib->tuned_config(nullptr, 10, &got).code, HKB_ERROR_INVALID_ARGUMENT);
  lib->shutdown();
  EXPECT_EQ(lib->tuned_config(affine, 10, &got).code, HKB_ERROR_SHUT_DOWN);
}

// affine_f32's tuned launches of each n, from a library with options o.
std::vector<hkb_launch_config> tuned_affine(fake::State* state, const Options& o,
                                            std::vector<uint64_t> ns) {
  auto lib = fake::make_library(state, {"gfx90a"}, o);
  hkb_context_s* ctx = nullptr;
  hkb_function_s* affine = nullptr;
  std::vector<hkb_launch_config> got(ns.size());
  EXPECT_TRUE(lib->context(0, &ctx).is_ok());
  EXPECT_TRUE(lib->function(ctx, "affine_f32", &affine).is_ok());
  for (size_t i = 0; i < ns.size(); ++i)
    EXPECT_TRUE(lib->tuned_config(affine, ns[i], &got[i]).is_ok());
  return got;
}

// Options::tuned_max_blocks (HKB_TUNED_MAX_BLOCKS) bounds the grid; rows stay at most 1024 wide.
TEST_F(LibraryTest, TunedConfigTakesTheBlockBound) {
  struct Case {
    uint32_t most;
    uint32_t x, y;
  } cases[] = {{1, 1, 1},
               {1024, 1024, 1},
               {1025, 513, 2},
               {3000, 1000, 3},
               {static_cast<uint32_t>(kTunedMaxBlocksLimit), 1024, 65535}};
  for (const Case& c : cases) {
    Options o;
    o.tuned_max_blocks = c.most;
    // All the work there is, and two blocks' work.
    const auto got = tuned_affine(&state, o, {uint64_t{1} << 40, 8192 * 2});
    EXPECT_EQ(got[0].grid[0], c.x) << c.most;
    EXPECT_EQ(got[0].grid[1], c.y) << c.most;
    EXPECT_EQ(got[1].grid[0], std::min<uint32_t>(c.most, 2)) << c.most;
    EXPECT_EQ(got[1].grid[1], 1u) << c.most;
  }
}

// Options::tuned_packs (HKB_TUNED_PACKS): a block per 1024 x packs 16-byte packs.
TEST_F(LibraryTest, TunedConfigTakesThePacksAThread) {
  struct Case {
    uint32_t packs;
    uint64_t n;
    uint32_t x, y;
  } cases[] = {{1, 8193, 3, 1},
               {1, 4096 * 1024 + 1, 513, 2},
               {4, 8193, 1, 1},
               {4, 16384 * 1024 + 1, 513, 2},
               {64, uint64_t{1} << 40, 1024, 8}};
  for (const Case& c : cases) {
    Options o;
    o.tuned_packs = c.packs;
    const hkb_launch_config got = tuned_affine(&state, o, {c.n})[0];
    EXPECT_EQ(got.grid[0], c.x) << c.packs << " " << c.n;
    EXPECT_EQ(got.grid[1], c.y) << c.packs << " " << c.n;
  }
}

TEST_F(LibraryTest, ShutdownKillsHandles) {
  auto lib = fake::make_library(&state);
  hkb_context_s* ctx = nullptr;
  ASSERT_TRUE(lib->context(0, &ctx).is_ok());
  hkb_function_s* f = nullptr;
  ASSERT_TRUE(lib->function(ctx, "fill_u8", &f).is_ok());
  hkb_stream_s* stream = nullptr;
  ASSERT_TRUE(lib->stream_create(ctx, &stream).is_ok());
  lib->shutdown();
  EXPECT_EQ(lib->function(ctx, "fill_u8", &f).code, HKB_ERROR_SHUT_DOWN);
  EXPECT_EQ(lib->launch(f, hkb_launch_config_for_num_elems(1), nullptr, nullptr, nullptr, 0).code,
            HKB_ERROR_SHUT_DOWN);
  EXPECT_EQ(lib->stream_synchronize(stream).code, HKB_ERROR_SHUT_DOWN);
  EXPECT_TRUE(lib->stream_destroy(stream).is_ok());
  hkb_context_s* again = nullptr;
  EXPECT_EQ(lib->context(0, &again).code, HKB_ERROR_SHUT_DOWN);
}

// The C ABI over an installed fake library.
class CApiTest : public ::testing::Test {
 protected:
  void SetUp() override { hkb::detail::install_library(fake::make_library(&state)); }
  void TearDown() override { hkb_shutdown(); }
  fake::State state;
};

TEST_F(CApiTest, ErrorPathsReturnStatusAndMessage) {
  EXPECT_EQ(hkb_device_count(nullptr), HKB_ERROR_INVALID_ARGUMENT);
  EXPECT_STRNE(hkb_last_error(), "");
  int n = -1;
  ASSERT_EQ(hkb_device_count(&n), HKB_SUCCESS);
  EXPECT_EQ(n, 1);
  hkb_context ctx = nullptr;
  EXPECT_EQ(hkb_context_get(5, &ctx), HKB_ERROR_NO_DEVICE);
  EXPECT_NE(std::string(hkb_last_error()).find("device 5 does not exist"), std::string::npos);
  ASSERT_EQ(hkb_context_get(0, &ctx), HKB_SUCCESS);
  char small[4];
  EXPECT_EQ(hkb_context_target(ctx, small, sizeof(small)), HKB_ERROR_INVALID_ARGUMENT);
  char buf[64];
  ASSERT_EQ(hkb_context_target(ctx, buf, sizeof(buf)), HKB_SUCCESS);
  EXPECT_STREQ(buf, "gfx90a:sramecc+:xnack-");
  hkb_function fn = nullptr;
  EXPECT_EQ(hkb_function_get(ctx, "nope", &fn), HKB_ERROR_UNKNOWN_KERNEL);
  EXPECT_EQ(hkb_function_get(ctx, nullptr, &fn), HKB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hkb_function_get(nullptr, "fill_u8", &fn), HKB_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(hkb_function_get(ctx, "fill_f64", &fn), HKB_SUCCESS);
  EXPECT_STREQ(hkb_function_name(fn), "fill_f64");
  EXPECT_EQ(hkb_function_num_params(fn), 3u);
  EXPECT_EQ(hkb_function_param_size(fn, 1), 8u);
  EXPECT_EQ(hkb_function_param_size(fn, 3), 0u);
  EXPECT_EQ(hkb_launch(fn, nullptr, nullptr, nullptr, nullptr, 0), HKB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hkb_launch(nullptr, nullptr, nullptr, nullptr, nullptr, 0), HKB_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(hkb_status_string(HKB_ERROR_TARGET_MISSING), "HKB_ERROR_TARGET_MISSING");
  EXPECT_STREQ(hkb_status_string(static_cast<hkb_status>(999)), "HKB_ERROR_UNKNOWN_STATUS");
}

TEST_F(CApiTest, CppApiThrowsWithMessage) {
  hkb::Device dev(0);
  try {
    dev.function("fill_u9");
    FAIL() << "expected an exception";
  } catch (const hkb::Error& e) {
    EXPECT_EQ(e.status(), HKB_ERROR_UNKNOWN_KERNEL);
    EXPECT_NE(std::string(e.what()).find("fill_u8"), std::string::npos) << e.what();
  }
  // Memory round trip through the fake.
  auto buf = dev.upload(std::vector<float>{1, 2, 3});
  EXPECT_EQ(buf.download(), (std::vector<float>{1, 2, 3}));
}

TEST_F(CApiTest, UseAfterShutdownIsRefused) {
  hkb_context ctx = nullptr;
  ASSERT_EQ(hkb_context_get(0, &ctx), HKB_SUCCESS);
  hkb_function fn = nullptr;
  ASSERT_EQ(hkb_function_get(ctx, "fill_u8", &fn), HKB_SUCCESS);
  ASSERT_EQ(hkb_shutdown(), HKB_SUCCESS);
  EXPECT_EQ(hkb_function_get(ctx, "fill_u8", &fn), HKB_ERROR_SHUT_DOWN);
  hkb_devptr p;
  EXPECT_EQ(hkb_malloc(ctx, 8, &p), HKB_ERROR_SHUT_DOWN);
  EXPECT_EQ(hkb_context_synchronize(ctx), HKB_ERROR_SHUT_DOWN);
  EXPECT_EQ(hkb_shutdown(), HKB_SUCCESS);  // idempotent
}

TEST(CApiVersion, ReportsHeaderVersion) {
  int major = -1, minor = -1, patch = -1, abi = -1;
  hkb_version(&major, &minor, &patch, &abi);
  EXPECT_EQ(major, HKB_VERSION_MAJOR);
  EXPECT_EQ(minor, HKB_VERSION_MINOR);
  EXPECT_EQ(abi, HKB_ABI_VERSION);
  EXPECT_STREQ(hkb_platform(), HKB_TEST_PLATFORM);  // the build's flavour
}

}  // namespace
