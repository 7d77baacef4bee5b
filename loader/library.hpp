// Layers 2-5 of the loader: per-device contexts with a lazily loaded module per family (exactly
// once under concurrency), cached function handles (a cache hit takes no lock and allocates
// nothing), and argument checking against the manifest before launch.
#pragma once

#include "bundle_source.hpp"
#include "manifest.hpp"
#include "runtime.hpp"
#include "status.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <vector>

struct hkb_context_s;
struct hkb_function_s;
struct hkb_stream_s;

namespace hkb::detail {

class Library;
class Context;

struct Options {
  bool debug_sync = false;  // HKB_DEBUG_SYNC: synchronise and check after every launch
  static Options from_environment();
};

struct ModuleSlot {
  std::mutex mu;
  std::atomic<void*> handle{nullptr};
  std::string target;  // the bundle entry that was loaded
  std::string origin;
};

struct LoadedModule {
  std::string name, target, origin;
};

}  // namespace hkb::detail

// The C ABI's opaque handles are these structs: their addresses stay valid after shutdown (dead
// contexts are kept), so a stale handle is detected instead of dereferencing freed memory.
struct hkb_function_s {
  std::atomic<void*> handle{nullptr};
  const hkb::detail::KernelInfo* info = nullptr;
  hkb_context_s* ctx = nullptr;
};

struct hkb_stream_s {
  hkb_context_s* ctx = nullptr;
  void* native = nullptr;
  bool alive = true;  // guarded by ctx->life_mu (written only under its exclusive lock)
};

struct hkb_context_s {
  hkb::detail::Library* lib = nullptr;
  int ordinal = -1;
  std::string target;
  std::string device_name;
  std::atomic<bool> alive{true};
  // Held shared by every operation that uses the runtime for this context (loads, launches,
  // streams, memory) and exclusively by shutdown, so shutdown never unloads a module or destroys
  // a stream that a launch on another thread is using.
  std::shared_mutex life_mu;
  std::unique_ptr<hkb::detail::ModuleSlot[]> modules;
  std::unique_ptr<hkb_function_s[]> functions;
  std::mutex streams_mu;
  std::set<hkb_stream_s*> streams;
};

namespace hkb::detail {

class Library {
 public:
  // `cpu_source`: a GPU flavour's CPU modules, read for devices whose platform is "cpu"
  // (platforms.hpp); null where `source` serves every device.
  Library(std::unique_ptr<Runtime> runtime, Manifest manifest, std::unique_ptr<BundleSource> source,
          Options options, std::unique_ptr<BundleSource> cpu_source = nullptr);
  ~Library();

  Status device_count(int* count);
  Status context(int ordinal, hkb_context_s** out);

  // Kernel by name on a context. Hit: one binary search over the sorted names plus an atomic
  // load; no lock, no allocation. Miss: loads the module under its lock (double-checked).
  Status function(hkb_context_s* ctx, const char* name, hkb_function_s** out);
  Status launch(hkb_function_s* fn, const hkb_launch_config& config, hkb_stream_s* stream,
                void* const* args, const size_t* arg_sizes, size_t num_args);

  Status stream_create(hkb_context_s* ctx, hkb_stream_s** out);
  Status stream_destroy(hkb_stream_s* stream);
  Status stream_synchronize(hkb_stream_s* stream);
  Status synchronize(hkb_context_s* ctx);

  Status malloc(hkb_context_s* ctx, size_t bytes, uint64_t* ptr);
  Status free(hkb_context_s* ctx, uint64_t ptr);
  Status memcpy_htod(hkb_context_s* ctx, uint64_t dst, const void* src, size_t bytes);
  Status memcpy_dtoh(hkb_context_s* ctx, void* dst, uint64_t src, size_t bytes);
  Status memcpy_dtod(hkb_context_s* ctx, uint64_t dst, uint64_t src, size_t bytes);
  Status memset_d8(hkb_context_s* ctx, uint64_t dst, uint8_t value, size_t bytes);

  // Loads module `index` on `ctx` if needed (used by lookups, and by `hkb doctor` for all).
  Status ensure_module(hkb_context_s* ctx, uint32_t index, void** handle);
  std::vector<LoadedModule> loaded_modules(hkb_context_s* ctx);

  // Synchronises every device, unloads every module, marks every handle dead. Idempotent.
  void shutdown();

  const Manifest& manifest() const { return manifest_; }
  Runtime& runtime() { return *runtime_; }
  BundleSource& source() { return *source_; }
  BundleSource* cpu_source() { return cpu_source_.get(); }
  const Options& options() const { return options_; }

 private:
  using LiveLock = std::shared_lock<std::shared_mutex>;
  Status check_alive(hkb_context_s* ctx) const;
  // Takes ctx->life_mu shared, then checks that the context is alive.
  Status enter(hkb_context_s* ctx, LiveLock* lock) const;
  // enter() plus binding the context's device on this thread.
  Status bind(hkb_context_s* ctx, LiveLock* lock);
  Status ensure_module_locked(hkb_context_s* ctx, uint32_t index, void** handle);

  std::unique_ptr<Runtime> runtime_;
  Manifest manifest_;
  std::unique_ptr<BundleSource> source_;
  std::unique_ptr<BundleSource> cpu_source_;
  Options options_;
  std::mutex contexts_mu_;
  std::vector<std::unique_ptr<hkb_context_s>> contexts_;  // index = ordinal; never shrinks
  std::atomic<bool> shut_down_{false};
};

// Human-readable signature "affine_f32(numel: usize, ...)" for messages and `hkb list`.
std::string signature_string(const KernelInfo& k);

}  // namespace hkb::detail
