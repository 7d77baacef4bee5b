#include "platforms.hpp"

#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>

namespace hkb::detail {

namespace {

class CombinedRuntime final : public Runtime {
 public:
  CombinedRuntime(std::unique_ptr<Runtime> gpu, std::unique_ptr<Runtime> cpu)
      : gpu_(std::move(gpu)),
        cpu_(std::move(cpu)),
        name_(std::string(gpu_->name()) + "+" + cpu_->name()) {}

  const char* name() const override { return name_.c_str(); }
  const char* platform() const override { return gpu_->platform(); }
  const char* device_platform(int ordinal) const override {
    Route r;
    return route(ordinal, &r).is_ok() ? r.runtime->device_platform(r.ordinal) : platform();
  }

  Status device_count(int* count) override {
    int gpus = 0, cpus = 0;
    HKB_RETURN_IF_ERROR(gpu_count(&gpus));
    HKB_RETURN_IF_ERROR(cpu_->device_count(&cpus));
    *count = gpus + cpus;
    return Status::ok();
  }
  Status device_target(int ordinal, std::string* target) override {
    Route r;
    HKB_RETURN_IF_ERROR(route(ordinal, &r));
    return r.runtime->device_target(r.ordinal, target);
  }
  Status device_name(int ordinal, std::string* name) override {
    Route r;
    HKB_RETURN_IF_ERROR(route(ordinal, &r));
    return r.runtime->device_name(r.ordinal, name);
  }
  Status device_multiprocessors(int ordinal, uint32_t* count) override {
    Route r;
    HKB_RETURN_IF_ERROR(route(ordinal, &r));
    return r.runtime->device_multiprocessors(r.ordinal, count);
  }
  Status bind_device(int ordinal) override {
    Route r;
    HKB_RETURN_IF_ERROR(route(ordinal, &r));
    HKB_RETURN_IF_ERROR(r.runtime->bind_device(r.ordinal));
    t_bound = Bound{this, r.runtime};
    return Status::ok();
  }

  Status module_load(const void* image, size_t size, void** module, std::string* log) override {
    Runtime* rt = nullptr;
    HKB_RETURN_IF_ERROR(bound(&rt));
    void* native = nullptr;
    HKB_RETURN_IF_ERROR(rt->module_load(image, size, &native, log));
    *module = new Handle{rt, native};
    return Status::ok();
  }
  Status module_unload(void* module) override {
    auto* m = static_cast<Handle*>(module);
    const Status s = m->runtime->module_unload(m->native);
    delete m;
    return s;
  }
  Status module_function(void* module, const char* name, void** function) override {
    auto* m = static_cast<Handle*>(module);
    void* native = nullptr;
    HKB_RETURN_IF_ERROR(m->runtime->module_function(m->native, name, &native));
    std::lock_guard<std::mutex> lock(functions_mu_);
    functions_.push_back(Handle{m->runtime, native});
    *function = &functions_.back();
    return Status::ok();
  }
  Status module_global(void* module, const char* name, uint64_t* ptr, size_t* bytes) override {
    auto* m = static_cast<Handle*>(module);
    return m->runtime->module_global(m->native, name, ptr, bytes);
  }
  Status launch(void* function, Dim3 grid, Dim3 block, uint32_t shared, void* stream,
                void** params) override {
    auto* f = static_cast<Handle*>(function);
    return f->runtime->launch(f->native, grid, block, shared, stream, params);
  }

  Status last_launch_error() override { return on_bound(&Runtime::last_launch_error); }
  Status device_synchronize() override { return on_bound(&Runtime::device_synchronize); }
  Status stream_create(void** stream) override { return on_bound(&Runtime::stream_create, stream); }
  Status stream_destroy(void* stream) override {
    return on_bound(&Runtime::stream_destroy, stream);
  }
  Status stream_synchronize(void* stream) override {
    return on_bound(&Runtime::stream_synchronize, stream);
  }
  Status mem_alloc(size_t bytes, uint64_t* ptr) override {
    return on_bound(&Runtime::mem_alloc, bytes, ptr);
  }
  Status mem_free(uint64_t ptr) override { return on_bound(&Runtime::mem_free, ptr); }
  Status memcpy_htod(uint64_t dst, const void* src, size_t bytes) override {
    return on_bound(&Runtime::memcpy_htod, dst, src, bytes);
  }
  Status memcpy_dtoh(void* dst, uint64_t src, size_t bytes) override {
    return on_bound(&Runtime::memcpy_dtoh, dst, src, bytes);
  }
  Status memcpy_dtod(uint64_t dst, uint64_t src, size_t bytes) override {
    return on_bound(&Runtime::memcpy_dtod, dst, src, bytes);
  }
  Status memset_d8(uint64_t dst, uint8_t value, size_t bytes) override {
    return on_bound(&Runtime::memset_d8, dst, value, bytes);
  }

 private:
  struct Route {
    Runtime* runtime;
    int ordinal;
  };
  struct Handle {
    Runtime* runtime;
    void* native;
  };
  struct Bound {
    const CombinedRuntime* owner;
    Runtime* runtime;
  };
  static inline thread_local Bound t_bound{nullptr, nullptr};

  // The GPU count, asked once: bind_device runs before every launch and must not ask again.
  Status gpu_count(int* count) const {
    std::call_once(gpu_once_, [this] { gpu_status_ = gpu_->device_count(&gpus_); });
    *count = gpus_;
    return gpu_status_;
  }
  Status route(int ordinal, Route* out) const {
    int gpus = 0, cpus = 0;
    HKB_RETURN_IF_ERROR(gpu_count(&gpus));
    HKB_RETURN_IF_ERROR(cpu_->device_count(&cpus));
    if (ordinal < 0 || ordinal >= gpus + cpus) {
      return error(HKB_ERROR_NO_DEVICE, "device " + std::to_string(ordinal) + " does not exist (" +
                                            std::to_string(gpus) + " GPU(s), then " +
                                            std::to_string(cpus) + " CPU device(s))");
    }
    *out = ordinal < gpus ? Route{gpu_.get(), ordinal} : Route{cpu_.get(), ordinal - gpus};
    return Status::ok();
  }
  Status bound(Runtime** rt) const {
    if (t_bound.owner != this || t_bound.runtime == nullptr)
      return error(HKB_ERROR_RUNTIME, "internal: no device bound on this thread");
    *rt = t_bound.runtime;
    return Status::ok();
  }
  template <typename... P, typename... A>
  Status on_bound(Status (Runtime::*call)(P...), A&&... args) {
    Runtime* rt = nullptr;
    HKB_RETURN_IF_ERROR(bound(&rt));
    return (rt->*call)(std::forward<A>(args)...);
  }

  std::unique_ptr<Runtime> gpu_, cpu_;
  std::string name_;
  mutable std::once_flag gpu_once_;
  mutable Status gpu_status_;
  mutable int gpus_ = 0;
  std::mutex functions_mu_;
  std::deque<Handle> functions_;  // stable addresses: they are the function handles
};

}  // namespace

Status parse_device_kinds(const char* value, DeviceKinds* out) {
  const std::string v = value ? value : "";
  if (v.empty()) {
    *out = DeviceKinds::kAll;
  } else if (v == "gpu") {
    *out = DeviceKinds::kGpuOnly;
  } else if (v == "cpu") {
    *out = DeviceKinds::kCpuOnly;
  } else {
    return error(HKB_ERROR_INVALID_ARGUMENT,
                 "HKB_PLATFORM must be 'gpu' (the GPUs only), 'cpu' (the CPU platform only) or "
                 "unset (GPUs, then CPU devices where CPU modules exist), not '" +
                     v + "'");
  }
  return Status::ok();
}

std::unique_ptr<Runtime> make_combined_runtime(std::unique_ptr<Runtime> gpu,
                                               std::unique_ptr<Runtime> cpu) {
  return std::make_unique<CombinedRuntime>(std::move(gpu), std::move(cpu));
}

Status assemble_library_parts(DeviceKinds kinds, const char* flavour, std::unique_ptr<Runtime> gpu,
                              std::unique_ptr<Runtime> cpu, std::unique_ptr<BundleSource> source,
                              std::unique_ptr<BundleSource> cpu_source, LibraryParts* out) {
  out->source = std::move(source);
  if (gpu == nullptr) {  // the cpu flavour: its own code objects are CPU modules
    if (kinds == DeviceKinds::kGpuOnly) {
      return error(HKB_ERROR_NO_DEVICE,
                   std::string("HKB_PLATFORM=gpu, but this library is the ") + flavour +
                       " flavour, which has no GPU backend (build the amd or nvidia flavour)");
    }
    out->runtime = std::move(cpu);
    return Status::ok();
  }
  switch (kinds) {
    case DeviceKinds::kGpuOnly:
      out->runtime = std::move(gpu);
      return Status::ok();
    case DeviceKinds::kCpuOnly:
      if (cpu_source == nullptr) {
        return error(HKB_ERROR_NO_DEVICE,
                     std::string("HKB_PLATFORM=cpu, but this ") + flavour +
                         " build has no CPU modules: configure it with -DHKB_CPU_MODULES=ON, or "
                         "set HKB_CPU_BUNDLE_DIR to a cpu build's bundle directory");
      }
      out->runtime = std::move(cpu);
      out->cpu_source = std::move(cpu_source);
      return Status::ok();
    case DeviceKinds::kAll:
      break;
  }
  if (cpu_source == nullptr) {  // exactly the GPU flavour of old
    out->runtime = std::move(gpu);
    return Status::ok();
  }
  out->runtime = make_combined_runtime(std::move(gpu), std::move(cpu));
  out->cpu_source = std::move(cpu_source);
  return Status::ok();
}

Status make_library_parts(LibraryParts* out) {
  DeviceKinds kinds = DeviceKinds::kAll;
  HKB_RETURN_IF_ERROR(parse_device_kinds(std::getenv("HKB_PLATFORM"), &kinds));
  const char* cpu_dir = std::getenv("HKB_CPU_BUNDLE_DIR");
  const bool cpu_dir_set = cpu_dir != nullptr && *cpu_dir != '\0';
#if defined(HKB_HAS_GPU_RUNTIME)
  std::unique_ptr<BundleSource> cpu_source;
  if (cpu_dir_set) {
    cpu_source = make_directory_source(cpu_dir, kCpuBundleSuffix);
  } else if (kCpuModulesBuilt) {
    cpu_source = make_default_cpu_source();
  }
  return assemble_library_parts(kinds, HKB_PLATFORM_NAME, make_platform_runtime(),
                                make_cpu_runtime(), make_default_source(), std::move(cpu_source),
                                out);
#else
  std::unique_ptr<BundleSource> source =
      cpu_dir_set ? make_directory_source(cpu_dir, kCpuBundleSuffix) : make_default_source();
  return assemble_library_parts(kinds, HKB_PLATFORM_NAME, nullptr, make_cpu_runtime(),
                                std::move(source), nullptr, out);
#endif
}

}  // namespace hkb::detail
