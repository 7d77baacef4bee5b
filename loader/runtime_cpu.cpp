// CPU backend (every flavour; platforms.cpp decides when it serves devices): the kernels' AMD
// code path compiled for the host (kernels/common/platform_cpu.h). A module's code object is an ar
// archive with one shared object per wave width, members "cpu-wave64" and "cpu-wave32"; each device
// is one width and loads its member through a memfd and dlopen. Device memory is host memory;
// launches run to completion on the calling thread, so streams and synchronisation have nothing to
// wait for.
//
// Devices: ordinal 0 runs 64-lane waves (CDNA) and 1 runs 32-lane waves (RDNA); HKB_CPU_WAVE=64
// or 32 keeps only that width, as device 0.
#include "cpu_shared.hpp"
#include "platforms.hpp"
#include "runtime.hpp"

#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <vector>

namespace hkb::detail {

namespace {

using LaunchFn = int (*)(void (*)(void**), const uint32_t*, const uint32_t*, uint32_t, void**,
                         char*, size_t);

struct CpuFunction {
  LaunchFn launch;
  void (*invoke)(void**);
  std::string name;
  bool shared_known;       // the module told its static shared memory (cpu_shared.hpp)
  uint64_t static_shared;  // bytes of static __shared__ the kernel reaches
  uint32_t shared_limit;   // AMD's shared memory per block, as the module has it
};

struct CpuModule {
  void* dl = nullptr;
  int fd = -1;  // open while loaded: the dynamic linker knows a library by its path
  LaunchFn launch = nullptr;
  uint32_t shared_limit = 0;  // 0: a module without the static shared memory check
  CpuSharedUsage shared;
  std::mutex mu;
  std::deque<CpuFunction> functions;  // stable addresses: they are the function handles
};

thread_local int t_bound = 0;

// The AMD target each wave width stands for (gfx90a and gfx1030): the compute-unit counts the
// build compiles the modules with (cmake/HkbKernels.cmake).
struct StandIn {
  uint32_t compute_units;
};
StandIn stand_in(uint32_t wave) {
  return wave == 64 ? StandIn{HKB_CPU_CUS_WAVE64} : StandIn{HKB_CPU_CUS_WAVE32};
}

std::string trimmed(const char* p, size_t n) {
  std::string s(p, n);
  while (!s.empty() && (s.back() == ' ' || s.back() == '/')) s.pop_back();
  return s;
}

// Walks an ar archive, calling `visit(name, data, size)` for each member until it returns true;
// false if the archive is malformed.
template <typename Visit>
bool walk_members(const uint8_t* data, size_t size, Visit visit) {
  static const char kMagic[] = "!<arch>\n";
  if (size < 8 || std::memcmp(data, kMagic, 8) != 0) return false;
  size_t pos = 8;
  while (pos + 60 <= size) {
    const char* h = reinterpret_cast<const char*>(data + pos);
    char digits[11] = {};
    std::memcpy(digits, h + 48, 10);
    char* end = nullptr;
    const unsigned long long bytes = std::strtoull(digits, &end, 10);
    if (end == digits || bytes > size - pos - 60) return false;
    if (visit(trimmed(h, 16), data + pos + 60, static_cast<size_t>(bytes))) return true;
    pos += 60 + static_cast<size_t>(bytes) + (bytes & 1);
  }
  return pos == size;
}

// The member named `name` of an ar archive; false if there is none or the archive is malformed.
bool find_member(const uint8_t* data, size_t size, const std::string& name, const uint8_t** out,
                 size_t* out_size) {
  bool found = false;
  walk_members(data, size, [&](const std::string& member, const uint8_t* p, size_t n) {
    if (member != name) return false;
    *out = p;
    *out_size = n;
    found = true;
    return true;
  });
  return found;
}

class CpuRuntime final : public Runtime {
 public:
  CpuRuntime() {
    const char* env = std::getenv("HKB_CPU_WAVE");
    const std::string w = env ? env : "";
    if (w.empty()) {
      waves_ = {64, 32};
    } else if (w == "64" || w == "32") {
      waves_ = {static_cast<uint32_t>(std::atoi(w.c_str()))};
    } else {
      bad_env_ = "HKB_CPU_WAVE must be 64 or 32 (unset: both), not '" + w + "'";
    }
  }
  const char* name() const override { return "cpu"; }
  const char* platform() const override { return "cpu"; }

  Status device_count(int* count) override {
    if (!bad_env_.empty()) return error(HKB_ERROR_INVALID_ARGUMENT, bad_env_);
    *count = static_cast<int>(waves_.size());
    return Status::ok();
  }
  Status device_target(int ordinal, std::string* target) override {
    HKB_RETURN_IF_ERROR(check_ordinal(ordinal));
    *target = "cpu-wave" + std::to_string(waves_[ordinal]);
    return Status::ok();
  }
  Status device_name(int ordinal, std::string* name) override {
    HKB_RETURN_IF_ERROR(check_ordinal(ordinal));
    *name = waves_[ordinal] == 64 ? "host CPU running 64-lane waves (the AMD CDNA code path)"
                                  : "host CPU running 32-lane waves (the AMD RDNA code path)";
    return Status::ok();
  }
  Status device_multiprocessors(int ordinal, uint32_t* count) override {
    HKB_RETURN_IF_ERROR(check_ordinal(ordinal));
    *count = stand_in(waves_[ordinal]).compute_units;
    return Status::ok();
  }
  Status bind_device(int ordinal) override {
    HKB_RETURN_IF_ERROR(check_ordinal(ordinal));
    t_bound = ordinal;
    return Status::ok();
  }

  Status module_load(const void* image, size_t size, void** module, std::string* log) override {
    const std::string member = "cpu-wave" + std::to_string(waves_[t_bound]);
    const uint8_t* so = nullptr;
    size_t so_size = 0;
    if (!find_member(static_cast<const uint8_t*>(image), size, member, &so, &so_size)) {
      return error(HKB_ERROR_MODULE_LOAD,
                   "not a CPU module archive, or it has no member '" + member + "'");
    }
    // dlopen reads files only: the member goes to an anonymous in-memory file.
    const int fd = memfd_create(member.c_str(), MFD_CLOEXEC);
    if (fd < 0)
      return error(HKB_ERROR_MODULE_LOAD, std::string("memfd_create: ") + strerror(errno));
    size_t done = 0;
    while (done < so_size) {
      const ssize_t n = write(fd, so + done, so_size - done);
      if (n <= 0) {
        close(fd);
        return error(HKB_ERROR_MODULE_LOAD, std::string("writing the module: ") + strerror(errno));
      }
      done += static_cast<size_t>(n);
    }
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    void* dl = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (dl == nullptr) {
      close(fd);
      *log = dlerror();
      return error(HKB_ERROR_MODULE_LOAD, "dlopen of the " + member + " module failed");
    }
    auto* m = new CpuModule;
    m->dl = dl;
    m->fd = fd;
    m->launch = reinterpret_cast<LaunchFn>(dlsym(dl, "hkb_cpu_launch"));
    auto wave = reinterpret_cast<uint32_t (*)()>(dlsym(dl, "hkb_cpu_wave_size"));
    if (m->launch == nullptr || wave == nullptr || wave() != waves_[t_bound]) {
      dlclose(dl);
      close(fd);
      delete m;
      return error(HKB_ERROR_MODULE_LOAD,
                   "member '" + member + "' is not a CPU module of that wave width");
    }
    auto limit = reinterpret_cast<uint32_t (*)()>(dlsym(dl, "hkb_cpu_shared_limit"));
    auto dynamic = static_cast<const char*>(dlsym(dl, "hkb_cpu_dynamic_shared"));
    if (limit != nullptr && dynamic != nullptr) {
      const Status s = CpuSharedUsage::read(so, so_size, dynamic, &m->shared);
      if (!s.is_ok()) {
        module_unload(m);
        return s;
      }
      if (m->shared.known()) m->shared_limit = limit();
    }
    *module = m;
    return Status::ok();
  }
  Status module_unload(void* module) override {
    auto* m = static_cast<CpuModule*>(module);
    dlclose(m->dl);
    close(m->fd);
    delete m;
    return Status::ok();
  }
  Status module_function(void* module, const char* name, void** function) override {
    auto* m = static_cast<CpuModule*>(module);
    const std::string symbol = std::string("hkb_cpu_entry_") + name;
    auto invoke = reinterpret_cast<void (*)(void**)>(dlsym(m->dl, symbol.c_str()));
    if (invoke == nullptr) return error(HKB_ERROR_MODULE_LOAD, "no entry " + symbol);
    uint64_t static_shared = 0;
    const bool known = m->shared_limit > 0 && m->shared.static_bytes(symbol, &static_shared);
    std::lock_guard<std::mutex> lock(m->mu);
    m->functions.push_back(
        CpuFunction{m->launch, invoke, name, known, static_shared, m->shared_limit});
    *function = &m->functions.back();
    return Status::ok();
  }
  Status module_global(void* module, const char* name, uint64_t* ptr, size_t* bytes) override {
    auto* m = static_cast<CpuModule*>(module);
    void* p = dlsym(m->dl, name);  // host memory is device memory here
    *ptr = reinterpret_cast<uint64_t>(p);
    *bytes = 0;
    if (p == nullptr) return Status::ok();
    Dl_info info;
    ElfW(Sym)* sym = nullptr;
    if (dladdr1(p, &info, reinterpret_cast<void**>(&sym), RTLD_DL_SYMENT) == 0 || sym == nullptr)
      return error(HKB_ERROR_MODULE_LOAD, std::string("dladdr1 found no symbol entry for ") + name);
    *bytes = sym->st_size;
    return Status::ok();
  }
  Status launch(void* function, Dim3 g, Dim3 b, uint32_t shared, void*, void** params) override {
    const auto* f = static_cast<const CpuFunction*>(function);
    if (f->shared_known && f->static_shared + shared > f->shared_limit) {
      return error(HKB_ERROR_LAUNCH, f->name + " uses " + std::to_string(f->static_shared) +
                                         " bytes of static __shared__ memory and " +
                                         std::to_string(shared) + " of dynamic, more than AMD's " +
                                         std::to_string(f->shared_limit) + " per block");
    }
    const uint32_t grid[3] = {g.x, g.y, g.z}, block[3] = {b.x, b.y, b.z};
    char err[512] = {};
    if (f->launch(f->invoke, grid, block, shared, params, err, sizeof(err)) != 0)
      return error(HKB_ERROR_LAUNCH, err);
    return Status::ok();
  }
  Status last_launch_error() override { return Status::ok(); }  // launches report at once
  Status device_synchronize() override { return Status::ok(); }
  Status stream_create(void** stream) override {
    *stream = new char;  // a distinct handle; work on it is done when its launch returns
    return Status::ok();
  }
  Status stream_destroy(void* stream) override {
    delete static_cast<char*>(stream);
    return Status::ok();
  }
  Status stream_synchronize(void*) override { return Status::ok(); }
  Status mem_alloc(size_t bytes, uint64_t* ptr) override {
    void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
    if (p == nullptr) {
      return error(HKB_ERROR_OUT_OF_MEMORY,
                   "out of host memory for " + std::to_string(bytes) + " bytes");
    }
    *ptr = reinterpret_cast<uint64_t>(p);
    return Status::ok();
  }
  Status mem_free(uint64_t ptr) override {
    std::free(reinterpret_cast<void*>(ptr));
    return Status::ok();
  }
  Status memcpy_htod(uint64_t dst, const void* src, size_t bytes) override {
    std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
    return Status::ok();
  }
  Status memcpy_dtoh(void* dst, uint64_t src, size_t bytes) override {
    std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
    return Status::ok();
  }
  Status memcpy_dtod(uint64_t dst, uint64_t src, size_t bytes) override {
    std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
    return Status::ok();
  }
  Status memset_d8(uint64_t dst, uint8_t value, size_t bytes) override {
    std::memset(reinterpret_cast<void*>(dst), value, bytes);
    return Status::ok();
  }

 private:
  Status check_ordinal(int ordinal) const {
    if (!bad_env_.empty()) return error(HKB_ERROR_INVALID_ARGUMENT, bad_env_);
    if (ordinal < 0 || static_cast<size_t>(ordinal) >= waves_.size())
      return error(HKB_ERROR_NO_DEVICE,
                   "CPU device " + std::to_string(ordinal) + " does not exist");
    return Status::ok();
  }
  std::vector<uint32_t> waves_;
  std::string bad_env_;
};

}  // namespace

Status cpu_module_members(const uint8_t* data, size_t size, std::string_view origin,
                          std::vector<CpuModuleMember>* members) {
  members->clear();
  const bool ok =
      walk_members(data, size, [&](const std::string& name, const uint8_t* p, size_t n) {
        members->push_back(CpuModuleMember{name, p, n});
        return false;
      });
  if (!ok || members->empty()) {
    return error(HKB_ERROR_CORRUPT_BUNDLE,
                 std::string(origin) +
                     ": not a CPU module archive (an ar archive of cpu-wave64 "
                     "and/or cpu-wave32 shared objects)");
  }
  return Status::ok();
}

std::unique_ptr<Runtime> make_cpu_runtime() {
  return std::make_unique<CpuRuntime>();
}

#if !defined(HKB_HAS_GPU_RUNTIME)
// The cpu flavour's own platform is the CPU.
std::unique_ptr<Runtime> make_platform_runtime() {
  return make_cpu_runtime();
}
#endif

}  // namespace hkb::detail
