// Which devices a library serves (loader/platforms.hpp): HKB_PLATFORM's values, the GPUs first and
// then the CPU devices, each device's modules from its own source; and the CPU runtime's static
// shared memory check against the tests' own CPU module (tests/cpu/shared_kernels.cpp).
#include <gtest/gtest.h>

#include "bundle_source.hpp"
#include "cpu_shared.hpp"
#include "fake_runtime.hpp"
#include "library.hpp"
#include "platforms.hpp"

#include <cstring>
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

// The ELF reader of a CPU module refuses what would step outside the file: entry sizes other than
// ELF64's 24 (fuzz_cpu_module found a relocation entry size that wrapped the offset) and a string
// table that has no bytes in the file.
class CpuModuleElf : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ifstream f(HKB_TEST_CPU_MODULE, std::ios::binary);
    const std::vector<uint8_t> archive{std::istreambuf_iterator<char>(f), {}};
    std::vector<hkb::detail::CpuModuleMember> members;
    ASSERT_TRUE(
        hkb::detail::cpu_module_members(archive.data(), archive.size(), "test", &members).is_ok());
    ASSERT_FALSE(members.empty());
    elf.assign(members[0].data, members[0].data + members[0].size);
  }
  template <typename T>
  T at(uint64_t offset) const {
    T v;
    std::memcpy(&v, elf.data() + offset, sizeof v);
    return v;
  }
  // Byte `at` of section header `section`.
  uint64_t header(int section, int at_byte) const {
    return at<uint64_t>(40) + uint64_t{at<uint16_t>(58)} * section + at_byte;
  }
  template <typename T>
  T field(int section, int at_byte) const {
    return at<T>(header(section, at_byte));
  }
  template <typename T>
  void set(int section, int at_byte, T v) {
    std::memcpy(elf.data() + header(section, at_byte), &v, sizeof v);
  }
  int count() const { return at<uint16_t>(60); }
  int find(uint32_t type) const {
    for (int i = 0; i < count(); ++i)
      if (field<uint32_t>(i, 4) == type) return i;
    return -1;
  }
  // The relocations kept for code (.rela.text): against the symbol table, of an executable section.
  int code_relocations() const {
    const int symtab = find(2 /* SHT_SYMTAB */);
    for (int i = 0; i < count(); ++i)
      if (field<uint32_t>(i, 4) == 4 /* SHT_RELA */ && field<uint32_t>(i, 40) == uint32_t(symtab) &&
          (field<uint64_t>(field<uint32_t>(i, 44), 8) & 4 /* SHF_EXECINSTR */))
        return i;
    return -1;
  }
  Status read() { return hkb::detail::CpuSharedUsage::read(elf.data(), elf.size(), "", &usage); }
  std::vector<uint8_t> elf;
  hkb::detail::CpuSharedUsage usage;
};

TEST_F(CpuModuleElf, TheBuiltModuleReads) {
  const Status s = read();
  ASSERT_TRUE(s.is_ok()) << s.message;
  EXPECT_TRUE(usage.known());
}

TEST_F(CpuModuleElf, RelocationEntriesOtherThan24BytesAreCorrupt) {
  const int rela = code_relocations();
  ASSERT_GE(rela, 0);
  for (uint64_t entsize : {uint64_t{0}, uint64_t{23}, uint64_t{25}, ~uint64_t{0}}) {
    set<uint64_t>(rela, 56, entsize);
    const Status s = read();
    EXPECT_EQ(s.code, HKB_ERROR_CORRUPT_BUNDLE) << entsize;
    EXPECT_NE(s.message.find("relocation section with entries of"), std::string::npos) << s.message;
  }
}

TEST_F(CpuModuleElf, ASymbolTableWithoutItsStringsIsCorrupt) {
  const int symtab = find(2 /* SHT_SYMTAB */);
  ASSERT_GE(symtab, 0);
  const uint32_t strtab = field<uint32_t>(symtab, 40);
  const uint64_t offset = field<uint64_t>(strtab, 24);
  set<uint32_t>(strtab, 4, 8 /* SHT_NOBITS */);
  set<uint64_t>(strtab, 24, ~uint64_t{0} - 7);  // an offset that no bounds check looked at
  Status s = read();
  EXPECT_EQ(s.code, HKB_ERROR_CORRUPT_BUNDLE);
  EXPECT_NE(s.message.find("bad entry size or string table"), std::string::npos) << s.message;
  set<uint32_t>(strtab, 4, 3 /* SHT_STRTAB */);
  set<uint64_t>(strtab, 24, offset);
  ASSERT_TRUE(read().is_ok());
  set<uint64_t>(symtab, 56, 16);
  s = read();
  EXPECT_EQ(s.code, HKB_ERROR_CORRUPT_BUNDLE);
  EXPECT_NE(s.message.find("bad entry size or string table"), std::string::npos) << s.message;
}

}  // namespace
