// Which devices a library serves (loader/platforms.hpp): HKB_PLATFORM's values, the GPUs first and
// then the CPU devices, each device's modules from its own source; and the CPU runtime's static
// shared memory check against the tests' own CPU module (tests/cpu/shared_kernels.cpp).
#include <gtest/gtest.h>

#include "bundle_source.hpp"
#include "fake_runtime.hpp"
#include "library.hpp"
#include "platforms.hpp"

#include <fstream>
#include <iterator>

namespace {

using hkb::detail::DeviceKinds;
using hkb::detail::LibraryParts;
using hkb::detail::Status;

TEST(DeviceKinds, ParsesTheThreeChoicesAndRefusesTheRest) {
  DeviceKinds k = DeviceKinds::kCpuOnly;
  ASSERT_TRUE(hkb::detail::parse_device_kinds(nullptr, &k).is_ok());
  EXPECT_EQ(k, DeviceKinds::kAll);
  ASSERT_TRUE(hkb::detail::parse_device_kinds("", &k).is_ok());
  EXPECT_EQ(k, DeviceKinds::kAll);
  ASSERT_TRUE(hkb::detail::parse_device_kinds("gpu", &k).is_ok());
  EXPECT_EQ(k, DeviceKinds::kGpuOnly);
  ASSERT_TRUE(hkb::detail::parse_device_kinds("cpu", &k).is_ok());
  EXPECT_EQ(k, DeviceKinds::kCpuOnly);
  for (const char* bad : {"CPU", "amd", "both", "cpu "}) {
    const Status s = hkb::detail::parse_device_kinds(bad, &k);
    EXPECT_EQ(s.code, HKB_ERROR_INVALID_ARGUMENT) << bad;
    EXPECT_NE(s.message.find(std::string("not '") + bad + "'"), std::string::npos) << s.message;
  }
}

// A source whose images name it, so a test can tell which source a module came from.
class NamedSource final : public hkb::detail::BundleSource {
 public:
  NamedSource(std::string name, std::vector<uint8_t> bytes)
      : name_(std::move(name)), bytes_(std::move(bytes)) {}
  Status read(std::string_view module, hkb::detail::ModuleImage* out) override {
    out->data = bytes_.data();
    out->size = bytes_.size();
    out->origin = name_ + " " + std::string(module);
    return Status::ok();
  }
  std::string describe() const override { return name_; }

 private:
  std::string name_;
  std::vector<uint8_t> bytes_;
};

class Platforms : public ::testing::Test {
 protected:
  Platforms() {
    gpus.devices = 2;
    gpus.targets = {"gfx90a", "gfx1030"};
    cpus.devices = 2;
    cpus.targets = {"cpu-wave64", "cpu-wave32"};
    cpus.platform = "cpu";
  }
  Status assemble(DeviceKinds kinds, bool gpu_flavour, bool cpu_modules) {
    return hkb::detail::assemble_library_parts(
        kinds, gpu_flavour ? "amd" : "cpu",
        gpu_flavour ? std::make_unique<fake::Runtime>(&gpus) : nullptr,
        std::make_unique<fake::Runtime>(&cpus),
        std::make_unique<NamedSource>("gpu-source", fake::make_bundle({"gfx90a", "gfx1030"})),
        cpu_modules ? std::make_unique<NamedSource>("cpu-source", std::vector<uint8_t>{1, 2, 3})
                    : nullptr,
        &parts);
  }
  int count() {
    int n = -1;
    EXPECT_TRUE(parts.runtime->device_count(&n).is_ok());
    return n;
  }
  fake::State gpus, cpus;
  LibraryParts parts;
};

TEST_F(Platforms, AGpuBuildWithoutCpuModulesIsItsGpuRuntimeAlone) {
  ASSERT_TRUE(assemble(DeviceKinds::kAll, true, false).is_ok());
  EXPECT_EQ(count(), 2);
  EXPECT_EQ(parts.cpu_source, nullptr);
  EXPECT_STREQ(parts.runtime->name(), "fake");
}

TEST_F(Platforms, CpuDevicesFollowTheGpus) {
  ASSERT_TRUE(assemble(DeviceKinds::kAll, true, true).is_ok());
  ASSERT_EQ(count(), 4);
  hkb::detail::Runtime& rt = *parts.runtime;
  std::string target;
  const char* want[] = {"gfx90a", "gfx1030", "cpu-wave64", "cpu-wave32"};
  for (int d = 0; d < 4; ++d) {
    ASSERT_TRUE(rt.device_target(d, &target).is_ok());
    EXPECT_EQ(target, want[d]);
    EXPECT_STREQ(rt.device_platform(d), d < 2 ? "amd" : "cpu");
  }
  ASSERT_TRUE(rt.bind_device(3).is_ok());
  EXPECT_EQ(cpus.current, 1);  // the CPU runtime's own ordinal
  ASSERT_TRUE(rt.bind_device(1).is_ok());
  EXPECT_EQ(gpus.current, 1);
  const Status s = rt.device_target(4, &target);
  EXPECT_EQ(s.code, HKB_ERROR_NO_DEVICE);
  EXPECT_NE(s.message.find("2 GPU(s), then 2 CPU device(s)"), std::string::npos) << s.message;
  // Memory goes to the runtime of the device bound on this thread.
  uint64_t p = 0;
  ASSERT_TRUE(rt.bind_device(2).is_ok());
  ASSERT_TRUE(rt.mem_alloc(16, &p).is_ok());
  ASSERT_TRUE(rt.mem_free(p).is_ok());
}

TEST_F(Platforms, EachDeviceLoadsItsModulesFromItsOwnSource) {
  ASSERT_TRUE(assemble(DeviceKinds::kAll, true, true).is_ok());
  hkb::detail::Manifest m;
  ASSERT_TRUE(hkb::detail::parse_manifest(fake::kManifest, "fake", &m).is_ok());
  hkb::detail::Library lib(std::move(parts.runtime), std::move(m), std::move(parts.source), {},
                           std::move(parts.cpu_source));
  for (int d : {0, 2}) {
    hkb_context_s* ctx = nullptr;
    ASSERT_TRUE(lib.context(d, &ctx).is_ok());
    hkb_function_s* fn = nullptr;
    const Status s = lib.function(ctx, "affine_f32", &fn);
    ASSERT_TRUE(s.is_ok()) << s.message;
    const auto loaded = lib.loaded_modules(ctx);
    ASSERT_EQ(loaded.size(), 1u);
    EXPECT_EQ(loaded[0].origin, d == 0 ? "gpu-source affine" : "cpu-source affine");
  }
  EXPECT_EQ(gpus.loads.load(), 1);
  EXPECT_EQ(cpus.loads.load(), 1);
}

TEST_F(Platforms, CpuOnlyKeepsTheCpuDevicesOrSaysWhereCpuModulesComeFrom) {
  ASSERT_TRUE(assemble(DeviceKinds::kCpuOnly, true, true).is_ok());
  EXPECT_EQ(count(), 2);
  EXPECT_STREQ(parts.runtime->device_platform(0), "cpu");
  ASSERT_NE(parts.cpu_source, nullptr);
  const Status s = assemble(DeviceKinds::kCpuOnly, true, false);
  EXPECT_EQ(s.code, HKB_ERROR_NO_DEVICE);
  EXPECT_NE(s.message.find("HKB_CPU_MODULES=ON"), std::string::npos) << s.message;
  EXPECT_NE(s.message.find("HKB_CPU_BUNDLE_DIR"), std::string::npos) << s.message;
}

TEST_F(Platforms, GpuOnlyDropsTheCpuDevices) {
  ASSERT_TRUE(assemble(DeviceKinds::kGpuOnly, true, true).is_ok());
  EXPECT_EQ(count(), 2);
  EXPECT_EQ(parts.cpu_source, nullptr);
}

TEST_F(Platforms, TheCpuFlavourHasNoGpus) {
  ASSERT_TRUE(assemble(DeviceKinds::kAll, false, false).is_ok());
  EXPECT_EQ(count(), 2);
  EXPECT_STREQ(parts.runtime->device_platform(1), "cpu");
  const Status s = assemble(DeviceKinds::kGpuOnly, false, false);
  EXPECT_EQ(s.code, HKB_ERROR_NO_DEVICE);
  EXPECT_NE(s.message.find("no GPU backend"), std::string::npos) << s.message;
}

// The CPU runtime refuses a launch whose static and dynamic shared memory pass AMD's 64 KiB,
// counting the static arrays of the helpers a kernel calls.
class CpuSharedMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ifstream f(HKB_TEST_CPU_MODULE, std::ios::binary);
    image.assign(std::istreambuf_iterator<char>(f), {});
    ASSERT_FALSE(image.empty()) << HKB_TEST_CPU_MODULE;
    ASSERT_TRUE(rt->bind_device(0).is_ok());  // wave 64, the width the module is built for
    std::string log;
    const Status s = rt->module_load(image.data(), image.size(), &module, &log);
    ASSERT_TRUE(s.is_ok()) << s.message << log;
  }
  void TearDown() override {
    if (module != nullptr) rt->module_unload(module);
  }
  Status launch(const char* kernel, uint32_t dynamic) {
    void* fn = nullptr;
    HKB_RETURN_IF_ERROR(rt->module_function(module, kernel, &fn));
    const float* in_ptr = in.data();
    float* out_ptr = out.data();
    void* params[] = {&in_ptr, &out_ptr};
    return rt->launch(fn, {1, 1, 1}, {64, 1, 1}, dynamic, nullptr, params);
  }
  std::unique_ptr<hkb::detail::Runtime> rt = hkb::detail::make_cpu_runtime();
  std::vector<uint8_t> image;
  void* module = nullptr;
  std::vector<float> in = {1, 2, 3, 4}, out = std::vector<float>(64);
};

TEST_F(CpuSharedMemory, StaticArraysOfCalledHelpersCount) {
  EXPECT_TRUE(launch("static_40k", 65536 - 40960).is_ok());
  EXPECT_EQ(out[0], 2560.0f * 10);  // 10240 staged values, 1 + 2 + 3 + 4 per 4
  const Status s = launch("static_40k", 65536 - 40960 + 4);
  EXPECT_EQ(s.code, HKB_ERROR_LAUNCH);
  EXPECT_NE(s.message.find("static_40k uses 40960 bytes of static __shared__ memory and 24580 of "
                           "dynamic, more than AMD's 65536"),
            std::string::npos)
      << s.message;
}

TEST_F(CpuSharedMemory, AKernelsOwnAndItsHelpersArraysAddUp) {
  EXPECT_TRUE(launch("static_56k", 65536 - 57344).is_ok());
  const Status s = launch("static_56k", 65536 - 57344 + 4);
  EXPECT_EQ(s.code, HKB_ERROR_LAUNCH);
  EXPECT_NE(s.message.find("static_56k uses 57344 bytes"), std::string::npos) << s.message;
}

TEST_F(CpuSharedMemory, DynamicArraysAreNotStatic) {
  const Status s = launch("dynamic_only", 65536);
  EXPECT_TRUE(s.is_ok()) << s.message;
  EXPECT_EQ(out[63], 1.0f);  // thread 63 reads thread 0's value
}

}  // namespace
