// The multiprocessor count the loader writes into every module's hkb_multiprocessors: the device's
// by default, HKB_MULTIPROCESSORS or hkb_context_set_multiprocessors instead, in modules loaded
// before and after a change; bad values refused; a module without the global still loads. Last,
// the same through the platform runtime on a real device where one exists (the CPU platform's
// always does).
#include "c_api.hpp"
#include "code_object.hpp"
#include "fake_runtime.hpp"

#include <gtest/gtest.h>
#include <hkb/hkb.h>

#include <cstdlib>
#include <string>

namespace {

using hkb::detail::kTunedMaxBlocks;
using hkb::detail::kTunedPacks;
using hkb::detail::Library;
using hkb::detail::Options;

class Multiprocessors : public ::testing::Test {
 protected:
  void SetUp() override { lib_ = fake::make_library(&state); }
  hkb_context_s* context() {
    hkb_context_s* ctx = nullptr;
    EXPECT_TRUE(lib_->context(0, &ctx).is_ok());
    return ctx;
  }
  // The count module `name` holds on ctx (loading it).
  uint32_t written(hkb_context_s* ctx, const char* module) {
    void* h = nullptr;
    const auto s = lib_->ensure_module(ctx, lib_->manifest().module_index(module), &h);
    EXPECT_TRUE(s.is_ok()) << s.message;
    return h ? static_cast<fake::Module*>(h)->multiprocessors : 0;
  }
  fake::State state;
  std::unique_ptr<Library> lib_;
};

TEST_F(Multiprocessors, EveryLoadWritesTheDevicesCount) {
  hkb_context_s* ctx = context();
  EXPECT_EQ(written(ctx, "affine"), 104u);
  EXPECT_EQ(written(ctx, "fill"), 104u);
  uint32_t n = 0;
  ASSERT_TRUE(lib_->multiprocessors(ctx, &n).is_ok());
  EXPECT_EQ(n, 104u);
}

TEST_F(Multiprocessors, TheOptionOverridesTheDevice) {
  Options o;
  o.multiprocessors = 7;
  lib_ = fake::make_library(&state, {"gfx90a", "gfx1030"}, o);
  hkb_context_s* ctx = context();
  EXPECT_EQ(written(ctx, "fill"), 7u);
  ASSERT_TRUE(lib_->set_multiprocessors(ctx, 9).is_ok());
  EXPECT_EQ(written(ctx, "fill"), 9u);
  ASSERT_TRUE(lib_->set_multiprocessors(ctx, 0).is_ok());  // back to the option, not the device
  EXPECT_EQ(written(ctx, "fill"), 7u);
}

TEST_F(Multiprocessors, SettingRewritesLoadedModulesAndReachesLaterOnes) {
  hkb_context_s* ctx = context();
  EXPECT_EQ(written(ctx, "affine"), 104u);
  ASSERT_TRUE(lib_->set_multiprocessors(ctx, 3).is_ok());
  EXPECT_EQ(written(ctx, "affine"), 3u);  // loaded before
  EXPECT_EQ(written(ctx, "fill"), 3u);    // loaded after
  ASSERT_TRUE(lib_->set_multiprocessors(ctx, hkb::detail::kMaxMultiprocessors).is_ok());
  EXPECT_EQ(written(ctx, "fill"), 65536u);
  ASSERT_TRUE(lib_->set_multiprocessors(ctx, 0).is_ok());
  EXPECT_EQ(written(ctx, "affine"), 104u);
  EXPECT_EQ(written(ctx, "fill"), 104u);
  EXPECT_EQ(state.loads.load(), 2);
}

TEST_F(Multiprocessors, TooLargeACountIsRefusedAndChangesNothing) {
  hkb_context_s* ctx = context();
  EXPECT_EQ(written(ctx, "fill"), 104u);
  const auto s = lib_->set_multiprocessors(ctx, 65537);
  EXPECT_EQ(s.code, HKB_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(s.message.find("at most 65536"), std::string::npos) << s.message;
  EXPECT_EQ(written(ctx, "fill"), 104u);
  EXPECT_EQ(lib_->set_multiprocessors(nullptr, 3).code, HKB_ERROR_INVALID_ARGUMENT);
}

TEST_F(Multiprocessors, AModuleWithoutTheGlobalStillLoads) {
  state.global_bytes = 0;
  hkb_context_s* ctx = context();
  EXPECT_EQ(written(ctx, "fill"), 0u);  // untouched: its kernels use the compiled count
  EXPECT_TRUE(lib_->set_multiprocessors(ctx, 5).is_ok());
}

TEST_F(Multiprocessors, AGlobalOfTheWrongSizeFailsTheLoad) {
  state.global_bytes = 8;
  hkb_context_s* ctx = context();
  hkb_function_s* fn = nullptr;
  const auto s = lib_->function(ctx, "fill_u8", &fn);
  EXPECT_EQ(s.code, HKB_ERROR_MODULE_LOAD);
  EXPECT_NE(s.message.find("hkb_multiprocessors is 8 bytes, not 4"), std::string::npos)
      << s.message;
  EXPECT_NE(s.message.find("module 'fill'"), std::string::npos) << s.message;
  EXPECT_TRUE(lib_->loaded_modules(ctx).empty());
}

TEST_F(Multiprocessors, AShutDownContextIsRefused) {
  hkb_context_s* ctx = context();
  lib_->shutdown();
  EXPECT_EQ(lib_->set_multiprocessors(ctx, 3).code, HKB_ERROR_SHUT_DOWN);
  uint32_t n = 0;
  EXPECT_EQ(lib_->multiprocessors(ctx, &n).code, HKB_ERROR_SHUT_DOWN);
}

// Sets an environment variable (HKB_MULTIPROCESSORS unless named) for one scope.
class ScopedEnv {
 public:
  explicit ScopedEnv(const char* value, const char* name = "HKB_MULTIPROCESSORS") : name_(name) {
    setenv(name, value, 1);
  }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

// A library made with options `o` refuses to create a context, naming the variable in `expected`.
void expect_refused_at_context(const Options& o, const std::string& expected, const char* bad) {
  fake::State state;
  auto lib = fake::make_library(&state, {"gfx90a"}, o);
  hkb_context_s* ctx = nullptr;
  const auto s = lib->context(0, &ctx);
  EXPECT_EQ(s.code, HKB_ERROR_INVALID_ARGUMENT) << bad;
  EXPECT_NE(s.message.find(expected), std::string::npos) << s.message;
}

TEST(MultiprocessorsEnvironment, ACountIsTakenAndAnythingElseRefusedAtContextCreation) {
  {
    ScopedEnv env("12");
    const Options o = Options::from_environment();
    EXPECT_EQ(o.multiprocessors, 12u);
    EXPECT_TRUE(o.bad_environment.empty());
  }
  {
    ScopedEnv env("");
    EXPECT_EQ(Options::from_environment().multiprocessors, 0u);
  }
  for (const char* bad : {"0", "-3", "+3", "12x", "abc", "65537", "99999999999999999999999"}) {
    ScopedEnv env(bad);
    const Options o = Options::from_environment();
    EXPECT_EQ(o.multiprocessors, 0u) << bad;
    EXPECT_NE(o.bad_environment.find(std::string("not '") + bad + "'"), std::string::npos)
        << o.bad_environment;
    expect_refused_at_context(o, "HKB_MULTIPROCESSORS must be a count from 1 to 65536", bad);
  }
}

TEST(MultiprocessorsCAbi, GetAndSetThroughTheCAbi) {
  fake::State state;
  hkb::detail::install_library(fake::make_library(&state));
  hkb_context ctx = nullptr;
  ASSERT_EQ(hkb_context_get(0, &ctx), HKB_SUCCESS) << hkb_last_error();
  uint32_t n = 0;
  ASSERT_EQ(hkb_context_multiprocessors(ctx, &n), HKB_SUCCESS);
  EXPECT_EQ(n, 104u);
  ASSERT_EQ(hkb_context_set_multiprocessors(ctx, 11), HKB_SUCCESS);
  ASSERT_EQ(hkb_context_multiprocessors(ctx, &n), HKB_SUCCESS);
  EXPECT_EQ(n, 11u);
  EXPECT_EQ(hkb_context_set_multiprocessors(ctx, 1u << 20), HKB_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hkb_last_error()).find("at most 65536"), std::string::npos);
  EXPECT_EQ(hkb_context_multiprocessors(ctx, nullptr), HKB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hkb_context_multiprocessors(nullptr, &n), HKB_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(hkb_shutdown(), HKB_SUCCESS);
  EXPECT_EQ(hkb_context_set_multiprocessors(ctx, 3), HKB_ERROR_SHUT_DOWN);
}

// The real runtime of this build: the value lands in the module's own global, read back from the
// device (CPU platform: the loaded shared object's symbol; CUDA/HIP: the module's device global).
TEST(MultiprocessorsPlatform, TheModulesGlobalHoldsTheCount) {
  hkb::detail::Manifest m;
  ASSERT_TRUE(hkb::detail::embedded_manifest(&m).is_ok());
  Options o;
  o.multiprocessors = 37;
  Library lib(hkb::detail::make_platform_runtime(), std::move(m),
              hkb::detail::make_default_source(), o);
  int devices = 0;
  if (!lib.device_count(&devices).is_ok() || devices == 0) GTEST_SKIP() << "no device";
  hkb_context_s* ctx = nullptr;
  ASSERT_TRUE(lib.context(0, &ctx).is_ok());
  for (uint32_t i = 0; i < lib.manifest().modules.size(); ++i) {
    void* h = nullptr;
    auto s = lib.ensure_module(ctx, i, &h);
    ASSERT_TRUE(s.is_ok()) << s.message;
    auto read = [&] {
      uint64_t ptr = 0;
      size_t bytes = 0;
      uint32_t value = 0;
      s = lib.runtime().bind_device(0);
      if (s.is_ok())
        s = lib.runtime().module_global(h, hkb::detail::kMultiprocessorsSymbol, &ptr, &bytes);
      EXPECT_TRUE(s.is_ok()) << s.message;
      EXPECT_NE(ptr, 0u) << lib.manifest().modules[i] << " has no "
                         << hkb::detail::kMultiprocessorsSymbol;
      EXPECT_EQ(bytes, 4u);
      if (ptr != 0) EXPECT_TRUE(lib.runtime().memcpy_dtoh(&value, ptr, 4).is_ok());
      return value;
    };
    EXPECT_EQ(read(), 37u) << lib.manifest().modules[i];
    ASSERT_TRUE(lib.set_multiprocessors(ctx, 5).is_ok());
    EXPECT_EQ(read(), 5u) << lib.manifest().modules[i];
    ASSERT_TRUE(lib.set_multiprocessors(ctx, 0).is_ok());
    EXPECT_EQ(read(), 37u) << lib.manifest().modules[i];
  }
}

TEST(TunedPacksEnvironment, ACountIsTakenAndAnythingElseRefusedAtContextCreation) {
  EXPECT_EQ(Options::from_environment().tuned_packs, kTunedPacks);
  {
    ScopedEnv env("1", "HKB_TUNED_PACKS");
    EXPECT_EQ(Options::from_environment().tuned_packs, 1u);
  }
  for (const char* bad : {"0", "65", "two"}) {
    ScopedEnv env(bad, "HKB_TUNED_PACKS");
    const Options o = Options::from_environment();
    EXPECT_EQ(o.tuned_packs, kTunedPacks) << bad;
    expect_refused_at_context(
        o,
        std::string("HKB_TUNED_PACKS must be a count from 1 to 64 (unset: 2), not '") + bad + "'",
        bad);
  }
}

TEST(TunedMaxBlocksEnvironment, ACountIsTakenAndAnythingElseRefusedAtContextCreation) {
  EXPECT_EQ(Options::from_environment().tuned_max_blocks, kTunedMaxBlocks);
  {
    ScopedEnv env("4096", "HKB_TUNED_MAX_BLOCKS");
    const Options o = Options::from_environment();
    EXPECT_EQ(o.tuned_max_blocks, 4096u);
    EXPECT_TRUE(o.bad_environment.empty());
  }
  {
    ScopedEnv env("67107840", "HKB_TUNED_MAX_BLOCKS");
    EXPECT_EQ(Options::from_environment().tuned_max_blocks, 67107840u);
  }
  for (const char* bad : {"0", "-3", "+3", "12x", "67107841", "99999999999999999999999"}) {
    ScopedEnv env(bad, "HKB_TUNED_MAX_BLOCKS");
    const Options o = Options::from_environment();
    EXPECT_EQ(o.tuned_max_blocks, kTunedMaxBlocks) << bad;
    expect_refused_at_context(o,
                              std::string("HKB_TUNED_MAX_BLOCKS must be a count from 1 to "
                                          "67107840 (unset: 8192), not '") +
                                  bad + "'",
                              bad);
  }
}

}  // namespace
