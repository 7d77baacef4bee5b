// HIP backend (amd flavour). Wraps hipModule* and friends; each failure names the call and HIP's
// error name and string.
#include "runtime.hpp"

#include <hip/hip_runtime_api.h>

namespace hkb::detail {

namespace {

Status hip_status(hipError_t e, const char* call, hkb_status code = HKB_ERROR_RUNTIME) {
  if (e == hipSuccess) return Status::ok();
  if (e == hipErrorOutOfMemory) code = HKB_ERROR_OUT_OF_MEMORY;
  if (e == hipErrorNoDevice || e == hipErrorInvalidDevice) code = HKB_ERROR_NO_DEVICE;
  return error(code, std::string(call) + " failed: " + hipGetErrorName(e) + " (" +
                         hipGetErrorString(e) + ")");
}

class HipRuntime final : public Runtime {
 public:
  const char* name() const override { return "hip"; }
  const char* platform() const override { return "amd"; }

  Status device_count(int* count) override {
    int n = 0;
    const hipError_t e = hipGetDeviceCount(&n);
    if (e == hipErrorNoDevice || e == hipErrorInvalidDevice) {
      *count = 0;
      return Status::ok();
    }
    *count = n;
    return hip_status(e, "hipGetDeviceCount");
  }
  Status device_target(int ordinal, std::string* target) override {
    hipDeviceProp_t prop;
    HKB_RETURN_IF_ERROR(
        hip_status(hipGetDeviceProperties(&prop, ordinal), "hipGetDeviceProperties"));
    *target = prop.gcnArchName;
    return Status::ok();
  }
  Status device_name(int ordinal, std::string* name) override {
    hipDeviceProp_t prop;
    HKB_RETURN_IF_ERROR(
        hip_status(hipGetDeviceProperties(&prop, ordinal), "hipGetDeviceProperties"));
    *name = prop.name;
    return Status::ok();
  }
  Status device_multiprocessors(int ordinal, uint32_t* count) override {
    int n = 0;
    HKB_RETURN_IF_ERROR(
        hip_status(hipDeviceGetAttribute(&n, hipDeviceAttributeMultiprocessorCount, ordinal),
                   "hipDeviceGetAttribute(MultiprocessorCount)"));
    *count = static_cast<uint32_t>(n);
    return Status::ok();
  }
  Status bind_device(int ordinal) override {
    int current = -1;
    if (hipGetDevice(&current) == hipSuccess && current == ordinal) return Status::ok();
    return hip_status(hipSetDevice(ordinal), "hipSetDevice");
  }

  Status module_load(const void* image, size_t, void** module, std::string* log) override {
    hipModule_t m = nullptr;
    const hipError_t e = hipModuleLoadData(&m, image);
    if (e != hipSuccess) {
      *log = "(HIP gives no load log; run with AMD_LOG_LEVEL=4 for the runtime's)";
      return hip_status(e, "hipModuleLoadData", HKB_ERROR_MODULE_LOAD);
    }
    *module = m;
    return Status::ok();
  }
  Status module_unload(void* module) override {
    return hip_status(hipModuleUnload(static_cast<hipModule_t>(module)), "hipModuleUnload");
  }
  Status module_function(void* module, const char* name, void** function) override {
    hipFunction_t f = nullptr;
    HKB_RETURN_IF_ERROR(hip_status(hipModuleGetFunction(&f, static_cast<hipModule_t>(module), name),
                                   "hipModuleGetFunction", HKB_ERROR_MODULE_LOAD));
    *function = f;
    return Status::ok();
  }
  Status module_global(void* module, const char* name, uint64_t* ptr, size_t* bytes) override {
    hipDeviceptr_t p = nullptr;
    size_t n = 0;
    const hipError_t e = hipModuleGetGlobal(&p, &n, static_cast<hipModule_t>(module), name);
    if (e == hipErrorNotFound) {
      *ptr = 0;
      *bytes = 0;
      return Status::ok();
    }
    HKB_RETURN_IF_ERROR(hip_status(e, "hipModuleGetGlobal", HKB_ERROR_MODULE_LOAD));
    *ptr = reinterpret_cast<uint64_t>(p);
    *bytes = n;
    return Status::ok();
  }
  Status launch(void* function, Dim3 g, Dim3 b, uint32_t shared, void* stream,
                void** params) override {
    return hip_status(
        hipModuleLaunchKernel(static_cast<hipFunction_t>(function), g.x, g.y, g.z, b.x, b.y, b.z,
                              shared, static_cast<hipStream_t>(stream), params, nullptr),
        "hipModuleLaunchKernel", HKB_ERROR_LAUNCH);
  }
  Status last_launch_error() override {
    return hip_status(hipGetLastError(), "kernel execution", HKB_ERROR_LAUNCH);
  }
  Status device_synchronize() override {
    return hip_status(hipDeviceSynchronize(), "hipDeviceSynchronize", HKB_ERROR_LAUNCH);
  }
  Status stream_create(void** stream) override {
    hipStream_t s = nullptr;
    HKB_RETURN_IF_ERROR(
        hip_status(hipStreamCreateWithFlags(&s, hipStreamNonBlocking), "hipStreamCreate"));
    *stream = s;
    return Status::ok();
  }
  Status stream_destroy(void* stream) override {
    return hip_status(hipStreamDestroy(static_cast<hipStream_t>(stream)), "hipStreamDestroy");
  }
  Status stream_synchronize(void* stream) override {
    return hip_status(hipStreamSynchronize(static_cast<hipStream_t>(stream)),
                      "hipStreamSynchronize", HKB_ERROR_LAUNCH);
  }
  Status mem_alloc(size_t bytes, uint64_t* ptr) override {
    void* p = nullptr;
    HKB_RETURN_IF_ERROR(hip_status(hipMalloc(&p, bytes), "hipMalloc"));
    *ptr = reinterpret_cast<uint64_t>(p);
    return Status::ok();
  }
  Status mem_free(uint64_t ptr) override {
    return hip_status(hipFree(reinterpret_cast<void*>(ptr)), "hipFree");
  }
  Status memcpy_htod(uint64_t dst, const void* src, size_t bytes) override {
    return hip_status(
        hipMemcpyHtoD(reinterpret_cast<hipDeviceptr_t>(dst), const_cast<void*>(src), bytes),
        "hipMemcpyHtoD");
  }
  Status memcpy_dtoh(void* dst, uint64_t src, size_t bytes) override {
    return hip_status(hipMemcpyDtoH(dst, reinterpret_cast<hipDeviceptr_t>(src), bytes),
                      "hipMemcpyDtoH");
  }
  Status memcpy_dtod(uint64_t dst, uint64_t src, size_t bytes) override {
    return hip_status(hipMemcpyDtoD(reinterpret_cast<hipDeviceptr_t>(dst),
                                    reinterpret_cast<hipDeviceptr_t>(src), bytes),
                      "hipMemcpyDtoD");
  }
  Status memset_d8(uint64_t dst, uint8_t value, size_t bytes) override {
    return hip_status(hipMemsetD8(reinterpret_cast<hipDeviceptr_t>(dst), value, bytes),
                      "hipMemsetD8");
  }
};

}  // namespace

std::unique_ptr<Runtime> make_platform_runtime() {
  return std::make_unique<HipRuntime>();
}

}  // namespace hkb::detail
