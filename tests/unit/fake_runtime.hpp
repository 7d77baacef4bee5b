// A fake runtime for the unit tests (no GPU): records loads and launches, serves fixed targets.
#pragma once

#include "library.hpp"
#include "runtime.hpp"

#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <stdexcept>
#include <thread>
#include <vector>

namespace fake {

using hkb::detail::Status;

struct State {
  int devices = 1;
  std::vector<std::string> targets{"gfx90a:sramecc+:xnack-"};
  const char* platform = "amd";  // the code object format its devices load
  std::atomic<int> loads{0};
  std::atomic<int> launches{0};
  std::atomic<int> binds{0};
  std::mutex mu;
  std::vector<std::string> launched_kernels;
  std::vector<int> bound_device_at_load;
  int current = -1;
  uint32_t multiprocessors = 104;  // every fake device's
  size_t global_bytes = 4;         // of each module's hkb_multiprocessors; 0: modules lack it
};

// A loaded fake module: `id` first, read as an int by module_function.
struct Module {
  int id = 0;
  uint32_t multiprocessors = 0;  // the module's hkb_multiprocessors
};

class Runtime final : public hkb::detail::Runtime {
 public:
  explicit Runtime(State* s) : s_(s) {}
  const char* name() const override { return "fake"; }
  const char* platform() const override { return s_->platform; }
  Status device_count(int* count) override {
    *count = s_->devices;
    return Status::ok();
  }
  Status device_target(int ordinal, std::string* target) override {
    *target = s_->targets.at(ordinal);
    return Status::ok();
  }
  Status device_name(int ordinal, std::string* name) override {
    *name = "Fake GPU " + std::to_string(ordinal);
    return Status::ok();
  }
  Status device_multiprocessors(int, uint32_t* count) override {
    *count = s_->multiprocessors;
    return Status::ok();
  }
  Status bind_device(int ordinal) override {
    s_->binds++;
    std::lock_guard<std::mutex> l(s_->mu);
    s_->current = ordinal;
    return Status::ok();
  }
  Status module_load(const void* image, size_t size, void** module, std::string*) override {
    // Widen the window in which racing threads could load twice.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    s_->loads++;
    std::lock_guard<std::mutex> l(s_->mu);
    s_->bound_device_at_load.push_back(s_->current);
    *module = new Module{s_->loads.load()};
    return Status::ok();
  }
  Status module_unload(void* module) override {
    delete static_cast<Module*>(module);
    return Status::ok();
  }

  Status module_global(void* module, const char* name, uint64_t* ptr, size_t* bytes) override {
    const bool known = std::strcmp(name, "hkb_multiprocessors") == 0 && s_->global_bytes != 0;
    *ptr = known ? reinterpret_cast<uint64_t>(&static_cast<Module*>(module)->multiprocessors) : 0;
    *bytes = known ? s_->global_bytes : 0;
    return Status::ok();
  }
  Status module_function(void* module, const char* name, void** function) override {
    // Reads the module as a real runtime would: a module unloaded under us is a use after free.
    if (*static_cast<volatile int*>(module) < 0)
      return hkb::detail::error(HKB_ERROR_RUNTIME, "bad");
    std::lock_guard<std::mutex> l(s_->mu);
    auto [it, fresh] = names_.emplace(name, nullptr);
    if (fresh) it->second = new std::string(name);
    *function = it->second;
    return Status::ok();
  }
  Status launch(void* function, hkb::detail::Dim3, hkb::detail::Dim3, uint32_t, void* stream,
                void**) override {
    // A stream destroyed while the launch uses it is a use after free (ASan) or a race (TSan).
    std::this_thread::yield();
    if (stream != nullptr) ++*static_cast<int*>(stream);
    s_->launches++;
    std::lock_guard<std::mutex> l(s_->mu);
    s_->launched_kernels.push_back(*static_cast<std::string*>(function));
    return Status::ok();
  }
  Status last_launch_error() override { return Status::ok(); }
  Status device_synchronize() override { return Status::ok(); }
  Status stream_create(void** stream) override {
    *stream = new int(0);
    return Status::ok();
  }
  Status stream_destroy(void* stream) override {
    delete static_cast<int*>(stream);
    return Status::ok();
  }
  Status stream_synchronize(void*) override { return Status::ok(); }
  Status mem_alloc(size_t bytes, uint64_t* ptr) override {
    *ptr = reinterpret_cast<uint64_t>(new unsigned char[bytes]);
    return Status::ok();
  }
  Status mem_free(uint64_t ptr) override {
    delete[] reinterpret_cast<unsigned char*>(ptr);
    return Status::ok();
  }
  Status memcpy_htod(uint64_t dst, const void* src, size_t bytes) override {
    std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
    return Status::ok();
  }
  Status memcpy_dtoh(void* dst, uint64_t src, size_t bytes) override {
    std::memcpy(dst, reinterpret_cast<void*>(src), bytes);
    return Status::ok();
  }
  Status memcpy_dtod(uint64_t dst, uint64_t src, size_t bytes) override {
    std::memcpy(reinterpret_cast<void*>(dst), reinterpret_cast<void*>(src), bytes);
    return Status::ok();
  }
  Status memset_d8(uint64_t dst, uint8_t v, size_t bytes) override {
    std::memset(reinterpret_cast<void*>(dst), v, bytes);
    return Status::ok();
  }
  ~Runtime() override {
    for (auto& [k, v] : names_) delete v;
  }

 private:
  State* s_;
  std::map<std::string, std::string*> names_;
};

// Builds a clang offload bundle in memory: a host entry plus one tiny "ELF" per AMD target.
inline std::vector<uint8_t> make_bundle(const std::vector<std::string>& targets,
                                        bool with_host = true) {
  std::vector<std::string> ids;
  if (with_host) ids.push_back("host-x86_64-unknown-linux-gnu");
  for (const auto& t : targets) ids.push_back("hipv4-amdgcn-amd-amdhsa--" + t);
  const std::string magic = "__CLANG_OFFLOAD_BUNDLE__";
  size_t header = magic.size() + 8;
  for (const auto& id : ids) header += 24 + id.size();
  std::vector<uint8_t> out(magic.begin(), magic.end());
  auto put64 = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  };
  put64(ids.size());
  const uint64_t payload = 16;
  uint64_t offset = header;
  for (const auto& id : ids) {
    const bool host = id.rfind("host", 0) == 0;
    put64(offset);
    put64(host ? 0 : payload);
    put64(id.size());
    out.insert(out.end(), id.begin(), id.end());
    if (!host) offset += payload;
  }
  for (const auto& id : ids) {
    if (id.rfind("host", 0) == 0) continue;
    const uint8_t elf[16] = {0x7F, 'E', 'L', 'F', 2, 1, 1, 0x40};
    out.insert(out.end(), elf, elf + 16);
  }
  return out;
}

// Serves the same synthetic bundle for every module.
class Source final : public hkb::detail::BundleSource {
 public:
  explicit Source(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {}
  Status read(std::string_view module, hkb::detail::ModuleImage* out) override {
    out->data = bytes_.data();
    out->size = bytes_.size();
    out->origin = "fake " + std::string(module) + ".hsaco";
    return Status::ok();
  }
  std::string describe() const override { return "fake"; }

 private:
  std::vector<uint8_t> bytes_;
};

inline const char* kManifest = R"({"format": 1, "modules": [
 {"module": "affine", "launch": "resident", "kernels": [
  {"name": "affine_f32", "params": [["numel", "usize"], ["num_dims", "usize"], ["info", "const usize*"], ["inp", "const f32*"], ["out", "f32*"], ["mul", "f32"], ["add", "f32"]]},
  {"name": "affine_bf16", "params": [["numel", "usize"], ["num_dims", "usize"], ["info", "const usize*"], ["inp", "const bf16*"], ["out", "bf16*"], ["mul", "bf16"], ["add", "bf16"]]}
 ]},
 {"module": "fill", "kernels": [
  {"name": "fill_u8", "launch": "for_num_elems", "params": [["buf", "u8*"], ["value", "u8"], ["numel", "usize"]]},
  {"name": "fill_f64", "params": [["buf", "f64*"], ["value", "f64"], ["numel", "usize"]]}
 ]}
]})";

inline std::unique_ptr<hkb::detail::Library> make_library(
    State* state, std::vector<std::string> bundle_targets = {"gfx90a", "gfx1030"},
    hkb::detail::Options options = {}) {
  hkb::detail::Manifest m;
  Status s = hkb::detail::parse_manifest(kManifest, "fake", &m);
  if (!s) throw std::runtime_error(s.message);
  return std::make_unique<hkb::detail::Library>(
      std::make_unique<Runtime>(state), std::move(m),
      std::make_unique<Source>(make_bundle(bundle_targets)), options);
}

}  // namespace fake
