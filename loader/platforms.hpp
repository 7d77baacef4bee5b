// Which devices a library serves: its flavour's GPUs first, then the CPU platform's devices (wave
// 64, wave 32) when CPU modules are available. HKB_PLATFORM=gpu or cpu keeps one kind; a device
// ordinal past the GPUs is a CPU device. Without CPU modules a GPU flavour is its GPU runtime
// alone.
#pragma once

#include "bundle_source.hpp"
#include "runtime.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hkb::detail {

enum class DeviceKinds { kAll, kGpuOnly, kCpuOnly };

// HKB_PLATFORM's value: unset or empty for all, "gpu", "cpu"; anything else is an error.
Status parse_device_kinds(const char* value, DeviceKinds* out);

// One runtime over two: the GPU runtime's devices as ordinals [0, n), the CPU runtime's as n, n+1,
// ... Modules and functions remember their runtime; the other calls go to the runtime of the
// device bound on the calling thread (the library binds before every call).
std::unique_ptr<Runtime> make_combined_runtime(std::unique_ptr<Runtime> gpu,
                                               std::unique_ptr<Runtime> cpu);

struct LibraryParts {
  std::unique_ptr<Runtime> runtime;
  std::unique_ptr<BundleSource> source;      // the flavour's code objects
  std::unique_ptr<BundleSource> cpu_source;  // CPU modules of a GPU flavour; null if none
};

// Puts the parts together for `kinds`. `gpu` is the flavour's GPU runtime (null in the cpu
// flavour, whose `source` holds CPU modules); `cpu_source` is where a GPU flavour finds CPU
// modules, or null; `cpu` is the CPU runtime, used only where CPU devices are served.
Status assemble_library_parts(DeviceKinds kinds, const char* flavour, std::unique_ptr<Runtime> gpu,
                              std::unique_ptr<Runtime> cpu, std::unique_ptr<BundleSource> source,
                              std::unique_ptr<BundleSource> cpu_source, LibraryParts* out);

// The parts for this build and environment: HKB_PLATFORM, and the CPU modules from
// HKB_CPU_BUNDLE_DIR (a cpu build's bundle directory), else the ones built in
// (-DHKB_CPU_MODULES=ON).
Status make_library_parts(LibraryParts* out);

// The members of a CPU module archive ("cpu-wave64", "cpu-wave32": shared objects), for
// `hkb doctor` and the fuzzer.
struct CpuModuleMember {
  std::string name;
  const uint8_t* data;
  size_t size;
};
Status cpu_module_members(const uint8_t* data, size_t size, std::string_view origin,
                          std::vector<CpuModuleMember>* members);

}  // namespace hkb::detail
