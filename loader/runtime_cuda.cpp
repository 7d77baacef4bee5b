// CUDA driver API backend (nvidia flavour, the test vehicle). Uses each device's primary context;
// cuModuleLoadDataEx collects the JIT/loader log for load failures.
#include "runtime.hpp"

#include <cuda.h>

#include <atomic>
#include <memory>
#include <mutex>

namespace hkb::detail {

namespace {

Status cu_status(CUresult r, const char* call, hkb_status code = HKB_ERROR_RUNTIME) {
  if (r == CUDA_SUCCESS) return Status::ok();
  const char* name = "CUDA_ERROR_UNKNOWN";
  const char* text = "unknown error";
  cuGetErrorName(r, &name);
  cuGetErrorString(r, &text);
  if (r == CUDA_ERROR_OUT_OF_MEMORY) code = HKB_ERROR_OUT_OF_MEMORY;
  if (r == CUDA_ERROR_NO_DEVICE || r == CUDA_ERROR_INVALID_DEVICE) code = HKB_ERROR_NO_DEVICE;
  return error(code, std::string(call) + " failed: " + name + " (" + text + ")");
}

class CudaRuntime final : public Runtime {
 public:
  ~CudaRuntime() override {
    for (int i = 0; i < device_count_; ++i) {
      if (contexts_[i].load() != nullptr) cuDevicePrimaryCtxRelease(static_cast<CUdevice>(i));
    }
  }
  const char* name() const override { return "cuda"; }
  const char* platform() const override { return "nvidia"; }

  Status device_count(int* count) override {
    Status s = init();
    if (s.code == HKB_ERROR_NO_DEVICE) {
      *count = 0;
      return Status::ok();
    }
    HKB_RETURN_IF_ERROR(std::move(s));
    int n = 0;
    HKB_RETURN_IF_ERROR(cu_status(cuDeviceGetCount(&n), "cuDeviceGetCount"));
    *count = n;
    return Status::ok();
  }
  Status device_target(int ordinal, std::string* target) override {
    HKB_RETURN_IF_ERROR(init());
    int major = 0, minor = 0;
    HKB_RETURN_IF_ERROR(cu_status(
        cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, ordinal),
        "cuDeviceGetAttribute"));
    HKB_RETURN_IF_ERROR(cu_status(
        cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, ordinal),
        "cuDeviceGetAttribute"));
    *target = "sm_" + std::to_string(major) + std::to_string(minor);
    return Status::ok();
  }
  Status device_name(int ordinal, std::string* name) override {
    HKB_RETURN_IF_ERROR(init());
    char buf[256] = {};
    HKB_RETURN_IF_ERROR(cu_status(cuDeviceGetName(buf, sizeof(buf), ordinal), "cuDeviceGetName"));
    *name = buf;
    return Status::ok();
  }
  // Every launch binds: after the first retain this is two atomic loads and cuCtxGetCurrent.
  Status bind_device(int ordinal) override {
    HKB_RETURN_IF_ERROR(init());
    if (ordinal < 0 || ordinal >= device_count_) {
      return error(HKB_ERROR_NO_DEVICE, "CUDA device " + std::to_string(ordinal) +
                                            " does not exist (" + std::to_string(device_count_) +
                                            " present)");
    }
    CUcontext ctx = contexts_[ordinal].load(std::memory_order_acquire);
    if (ctx == nullptr) {
      std::lock_guard<std::mutex> lock(mu_);
      ctx = contexts_[ordinal].load(std::memory_order_relaxed);
      if (ctx == nullptr) {
        HKB_RETURN_IF_ERROR(
            cu_status(cuDevicePrimaryCtxRetain(&ctx, ordinal), "cuDevicePrimaryCtxRetain"));
        contexts_[ordinal].store(ctx, std::memory_order_release);
      }
    }
    CUcontext current = nullptr;
    if (cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == ctx) return Status::ok();
    return cu_status(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  }
  Status device_multiprocessors(int ordinal, uint32_t* count) override {
    HKB_RETURN_IF_ERROR(init());
    int n = 0;
    HKB_RETURN_IF_ERROR(
        cu_status(cuDeviceGetAttribute(&n, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, ordinal),
                  "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)"));
    *count = static_cast<uint32_t>(n);
    return Status::ok();
  }
  Status module_load(const void* image, size_t, void** module, std::string* log) override {
    char info[4096] = {}, err[4096] = {};
    CUjit_option opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                           CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* vals[] = {info, reinterpret_cast<void*>(sizeof(info)), err,
                    reinterpret_cast<void*>(sizeof(err))};
    CUmodule m = nullptr;
    const CUresult r = cuModuleLoadDataEx(&m, image, 4, opts, vals);
    *log = std::string(err) + (err[0] && info[0] ? "\n" : "") + info;
    if (r != CUDA_SUCCESS) return cu_status(r, "cuModuleLoadDataEx", HKB_ERROR_MODULE_LOAD);
    *module = m;
    return Status::ok();
  }
  Status module_unload(void* module) override {
    return cu_status(cuModuleUnload(static_cast<CUmodule>(module)), "cuModuleUnload");
  }
  Status module_function(void* module, const char* name, void** function) override {
    CUfunction f = nullptr;
    HKB_RETURN_IF_ERROR(cu_status(cuModuleGetFunction(&f, static_cast<CUmodule>(module), name),
                                  "cuModuleGetFunction", HKB_ERROR_MODULE_LOAD));
    *function = f;
    return Status::ok();
  }
  Status module_global(void* module, const char* name, uint64_t* ptr, size_t* bytes) override {
    CUdeviceptr p = 0;
    size_t n = 0;
    const CUresult r = cuModuleGetGlobal(&p, &n, static_cast<CUmodule>(module), name);
    if (r == CUDA_ERROR_NOT_FOUND) {
      *ptr = 0;
      *bytes = 0;
      return Status::ok();
    }
    HKB_RETURN_IF_ERROR(cu_status(r, "cuModuleGetGlobal", HKB_ERROR_MODULE_LOAD));
    *ptr = p;
    *bytes = n;
    return Status::ok();
  }
  Status launch(void* function, Dim3 g, Dim3 b, uint32_t shared, void* stream,
                void** params) override {
    CUfunction f = static_cast<CUfunction>(function);
    // CUDA gives a kernel more than 48 KiB of dynamic shared memory only after an opt-in per
    // function (AMD's LDS needs none). Raise the limit to what this launch asks for, up to the
    // device's opt-in maximum; above that the launch itself reports the error.
    if (shared > 48u * 1024u) {
      int have = 0;
      HKB_RETURN_IF_ERROR(
          cu_status(cuFuncGetAttribute(&have, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f),
                    "cuFuncGetAttribute", HKB_ERROR_LAUNCH));
      if (static_cast<uint32_t>(have) < shared) {
        int static_bytes = 0, optin = 0;
        CUdevice dev = 0;
        HKB_RETURN_IF_ERROR(cu_status(cuCtxGetDevice(&dev), "cuCtxGetDevice", HKB_ERROR_LAUNCH));
        HKB_RETURN_IF_ERROR(
            cu_status(cuDeviceGetAttribute(
                          &optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev),
                      "cuDeviceGetAttribute", HKB_ERROR_LAUNCH));
        HKB_RETURN_IF_ERROR(
            cu_status(cuFuncGetAttribute(&static_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f),
                      "cuFuncGetAttribute", HKB_ERROR_LAUNCH));
        if (static_cast<uint64_t>(shared) + static_cast<uint64_t>(static_bytes) <=
            static_cast<uint64_t>(optin)) {
          HKB_RETURN_IF_ERROR(
              cu_status(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                           static_cast<int>(shared)),
                        "cuFuncSetAttribute", HKB_ERROR_LAUNCH));
        }
      }
    }
    return cu_status(cuLaunchKernel(f, g.x, g.y, g.z, b.x, b.y, b.z, shared,
                                    static_cast<CUstream>(stream), params, nullptr),
                     "cuLaunchKernel", HKB_ERROR_LAUNCH);
  }
  Status last_launch_error() override { return Status::ok(); }  // driver API reports at sync
  Status device_synchronize() override {
    return cu_status(cuCtxSynchronize(), "cuCtxSynchronize", HKB_ERROR_LAUNCH);
  }
  Status stream_create(void** stream) override {
    CUstream s = nullptr;
    HKB_RETURN_IF_ERROR(cu_status(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate"));
    *stream = s;
    return Status::ok();
  }
  Status stream_destroy(void* stream) override {
    return cu_status(cuStreamDestroy(static_cast<CUstream>(stream)), "cuStreamDestroy");
  }
  Status stream_synchronize(void* stream) override {
    return cu_status(cuStreamSynchronize(static_cast<CUstream>(stream)), "cuStreamSynchronize",
                     HKB_ERROR_LAUNCH);
  }
  Status mem_alloc(size_t bytes, uint64_t* ptr) override {
    CUdeviceptr p = 0;
    HKB_RETURN_IF_ERROR(cu_status(cuMemAlloc(&p, bytes), "cuMemAlloc"));
    *ptr = p;
    return Status::ok();
  }
  Status mem_free(uint64_t ptr) override { return cu_status(cuMemFree(ptr), "cuMemFree"); }
  Status memcpy_htod(uint64_t dst, const void* src, size_t bytes) override {
    return cu_status(cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
  }
  Status memcpy_dtoh(void* dst, uint64_t src, size_t bytes) override {
    return cu_status(cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH");
  }
  Status memcpy_dtod(uint64_t dst, uint64_t src, size_t bytes) override {
    return cu_status(cuMemcpyDtoD(dst, src, bytes), "cuMemcpyDtoD");
  }
  Status memset_d8(uint64_t dst, uint8_t value, size_t bytes) override {
    return cu_status(cuMemsetD8(dst, value, bytes), "cuMemsetD8");
  }

 private:
  Status init() {
    // Every launch binds and so inits: after the first, one acquire load (call_once's TLS
    // bookkeeping cost more than the rest of the bind).
    if (ready_.load(std::memory_order_acquire)) return Status::ok();
    std::call_once(init_once_, [this] {
      init_result_ = cuInit(0);
      if (init_result_ == CUDA_SUCCESS) {
        init_call_ = "cuDeviceGetCount";
        init_result_ = cuDeviceGetCount(&device_count_);
      }
      if (init_result_ == CUDA_SUCCESS)
        contexts_ = std::make_unique<std::atomic<CUcontext>[]>(device_count_);
    });
    if (init_result_ == CUDA_ERROR_NO_DEVICE) {
      return error(HKB_ERROR_NO_DEVICE, "cuInit: no CUDA device");
    }
    if (init_result_ == CUDA_SUCCESS) ready_.store(true, std::memory_order_release);
    return cu_status(init_result_, init_call_);
  }
  std::atomic<bool> ready_{false};  // init succeeded
  std::once_flag init_once_;
  CUresult init_result_ = CUDA_SUCCESS;
  const char* init_call_ = "cuInit";  // the call init_result_ came from
  int device_count_ = 0;
  std::mutex mu_;  // serialises the first retain of a device's primary context
  std::unique_ptr<std::atomic<CUcontext>[]> contexts_;  // one per device, null until retained
};

}  // namespace

std::unique_ptr<Runtime> make_platform_runtime() {
  return std::make_unique<CudaRuntime>();
}

}  // namespace hkb::detail
