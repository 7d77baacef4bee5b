// Layers 2-5 of the loader: per-device contexts with a lazily loaded module per family (exactly
// once under concurrency), cached function handles (a cache hit takes no lock and allocates
// nothing), and argument checking against the manifest before launch.
#pragma once

#include "bundle_source.hpp"
#include "life_gate.hpp"
#include "manifest.hpp"
#include "name_index.hpp"
#include "runtime.hpp"
#include "status.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

struct hkb_context_s;
struct hkb_function_s;
struct hkb_stream_s;

namespace hkb::detail {

class Library;
class Context;

// hkb_launch_config_tuned's grids for grid-stride kernels (tuned_config.cpp): rows of at most
// kTunedRowBlocks blocks (the kernels' tuning::kResidentBlockBound: past it in x a block is idle),
// at most 65535 rows, kTunedMaxBlocks blocks unless HKB_TUNED_MAX_BLOCKS says otherwise.
inline constexpr uint32_t kTunedRowBlocks = 1024;
inline constexpr uint32_t kTunedMaxRows = 65535;
inline constexpr uint64_t kTunedMaxBlocksLimit = uint64_t{kTunedRowBlocks} * kTunedMaxRows;
inline constexpr uint32_t kTunedMaxBlocks = 8192;
// 16-byte packs of the widest element a thread of the tuned grid takes (the kernels load two
// before the first store), unless HKB_TUNED_PACKS says otherwise (1 to kTunedPacksLimit).
inline constexpr uint32_t kTunedPacks = 2;
inline constexpr uint32_t kTunedPacksLimit = 64;

struct Options {
  bool debug_sync = false;  // HKB_DEBUG_SYNC: synchronise and check after every launch
  // HKB_MULTIPROCESSORS: the count written into every module instead of the device's (0: the
  // device's).
  uint32_t multiprocessors = 0;
  // HKB_TUNED_MAX_BLOCKS: the most blocks hkb_launch_config_tuned gives a grid-stride kernel
  // (tuned_config.cpp; a sweep's knob).
  uint32_t tuned_max_blocks = kTunedMaxBlocks;
  uint32_t tuned_packs = kTunedPacks;  // HKB_TUNED_PACKS: its packs a thread (the same)
  // The first unusable variable's message, reported by context().
  std::string bad_environment;
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
  bool alive = true;  // guarded by ctx->life (written only under its exclusive lock)
};

struct hkb_context_s {
  hkb::detail::Library* lib = nullptr;
  int ordinal = -1;
  std::string target;
  std::string device_name;
  uint32_t device_multiprocessors = 0;
  // The count written into this context's modules (device_multiprocessors unless overridden);
  // changed only under life held exclusively; atomic so that hkb_launch_config_tuned reads it
  // without a lock.
  std::atomic<uint32_t> multiprocessors{0};
  std::atomic<bool> alive{true};
  // Held shared by every operation that uses the runtime for this context (loads, launches,
  // streams, memory) and exclusively by shutdown, so shutdown never unloads a module or destroys
  // a stream that a launch on another thread is using.
  hkb::detail::LifeGate life;
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

  // Kernel by name on a context. Hit: cached() below. Miss: loads the module under its lock
  // (double-checked), or names the nearest kernels when there is no such kernel.
  Status function(hkb_context_s* ctx, const char* name, hkb_function_s** out);
  // The function `name` of a live context if its handle is already loaded, else null (then
  // function() says why or loads it): one probe of the name index and two atomic loads.
  static hkb_function_s* cached(hkb_context_s* ctx, const char* name) noexcept {
    if (!ctx->alive.load(std::memory_order_acquire)) return nullptr;
    const int64_t index = ctx->lib->names_.find(name);
    if (index < 0) return nullptr;
    hkb_function_s* fn = &ctx->functions[index];
    return fn->handle.load(std::memory_order_acquire) != nullptr ? fn : nullptr;
  }
  Status launch(hkb_function_s* fn, const hkb_launch_config& config, hkb_stream_s* stream,
                void* const* args, const size_t* arg_sizes, size_t num_args);
  // hkb_launch_config_tuned: the launch of `n` elements the kernel's manifest rule gives
  // (tuned_config.cpp).
  Status tuned_config(hkb_function_s* fn, uint64_t n, hkb_launch_config* out);

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

  // The multiprocessor count the context's modules hold, and setting it in every module loaded
  // and to be loaded (0: back to HKB_MULTIPROCESSORS, else the device's), after the device
  // finishes its work, since kernels read it while they run; the context's other operations wait.
  Status multiprocessors(hkb_context_s* ctx, uint32_t* count);
  Status set_multiprocessors(hkb_context_s* ctx, uint32_t count);

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
  using LiveLock = std::shared_lock<LifeGate>;
  Status check_alive(hkb_context_s* ctx) const;
  // Takes ctx->life shared, then checks that the context is alive.
  Status enter(hkb_context_s* ctx, LiveLock* lock) const;
  // enter() plus binding the context's device on this thread.
  Status bind(hkb_context_s* ctx, LiveLock* lock);
  Status ensure_module_locked(hkb_context_s* ctx, uint32_t index, void** handle);
  uint32_t default_multiprocessors(const hkb_context_s& ctx) const;
  // Writes ctx->multiprocessors into module `index` (handle `module`) of ctx, device bound.
  Status write_multiprocessors(hkb_context_s* ctx, uint32_t index, void* module);

  std::unique_ptr<Runtime> runtime_;
  Manifest manifest_;
  NameIndex names_;  // of manifest_.kernels
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
