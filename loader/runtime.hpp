// Layer 1: thin, status-returning wrappers over a GPU runtime (HIP, the CUDA driver API, or a fake
// in the unit tests). No caching and no policy here: the context layer above decides what to load
// and when. Every method binds nothing implicitly except where it says so.
#pragma once

#include "status.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace hkb::detail {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
};

class Runtime {
 public:
  virtual ~Runtime() = default;

  virtual const char* name() const = 0;  // "hip", "cuda", "fake"
  // "amd", "nvidia" or "cpu": which code object format this runtime loads.
  virtual const char* platform() const = 0;
  // The format device `ordinal` loads: platform(), unless the runtime combines a GPU runtime and
  // the CPU platform (platforms.hpp).
  virtual const char* device_platform(int ordinal) const { return platform(); }

  virtual Status device_count(int* count) = 0;
  // Full target ID ("gfx90a:sramecc+:xnack-", "sm_90") and marketing name of a device.
  virtual Status device_target(int ordinal, std::string* target) = 0;
  virtual Status device_name(int ordinal, std::string* name) = 0;
  // Multiprocessors of a device: NVIDIA's SMs, AMD's compute units.
  virtual Status device_multiprocessors(int ordinal, uint32_t* count) = 0;
  // Makes `ordinal` current on the calling thread (HIP: hipSetDevice; CUDA: its primary context).
  virtual Status bind_device(int ordinal) = 0;

  // Loads a code object on the bound device. `log` receives any loader diagnostics.
  virtual Status module_load(const void* image, size_t size, void** module, std::string* log) = 0;
  virtual Status module_unload(void* module) = 0;
  virtual Status module_function(void* module, const char* name, void** function) = 0;
  // Device address and size of the global variable `name` of a loaded module; *ptr = 0 when the
  // module has no such global (not an error).
  virtual Status module_global(void* module, const char* name, uint64_t* ptr, size_t* bytes) = 0;

  virtual Status launch(void* function, Dim3 grid, Dim3 block, uint32_t shared_mem, void* stream,
                        void** params) = 0;
  // Error left by the last launch on this thread, if any (checked with HKB_DEBUG_SYNC).
  virtual Status last_launch_error() = 0;

  virtual Status device_synchronize() = 0;
  virtual Status stream_create(void** stream) = 0;
  virtual Status stream_destroy(void* stream) = 0;
  virtual Status stream_synchronize(void* stream) = 0;

  virtual Status mem_alloc(size_t bytes, uint64_t* ptr) = 0;
  virtual Status mem_free(uint64_t ptr) = 0;
  virtual Status memcpy_htod(uint64_t dst, const void* src, size_t bytes) = 0;
  virtual Status memcpy_dtoh(void* dst, uint64_t src, size_t bytes) = 0;
  virtual Status memcpy_dtod(uint64_t dst, uint64_t src, size_t bytes) = 0;
  virtual Status memset_d8(uint64_t dst, uint8_t value, size_t bytes) = 0;
};

// The backend of the platform this library was built for: HIP (amd), the CUDA driver API
// (nvidia), the CPU platform (cpu).
std::unique_ptr<Runtime> make_platform_runtime();
// The CPU platform's backend (runtime_cpu.cpp), compiled into every flavour.
std::unique_ptr<Runtime> make_cpu_runtime();

}  // namespace hkb::detail
