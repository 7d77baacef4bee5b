#include "library.hpp"

#include "code_object.hpp"
#include "log.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace hkb::detail {

namespace {

// Largest workgroup any supported device accepts (HIP's and CUDA's limit alike).
constexpr uint64_t kMaxBlockThreads = 1024;

std::string join_names(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// Whether a launch passes every check on its way to the driver; launch_rejection says why not.
bool launch_acceptable(const KernelInfo& k, const hkb_context_s* ctx, const hkb_launch_config& c,
                       const hkb_stream_s* stream, void* const* args, const size_t* arg_sizes,
                       size_t num_args) {
  if (stream != nullptr && (!stream->alive || stream->ctx != ctx)) return false;
  if (num_args != k.params.size()) return false;
  if (num_args > 0 && (args == nullptr || arg_sizes == nullptr)) return false;
  for (size_t i = 0; i < num_args; ++i) {
    if (args[i] == nullptr || arg_sizes[i] != k.params[i].size) return false;
  }
  const uint64_t threads = uint64_t{c.block[0]} * c.block[1] * c.block[2];
  return threads != 0 && threads <= kMaxBlockThreads;
}

[[gnu::cold, gnu::noinline]] Status launch_rejection(const KernelInfo& k, const hkb_context_s* ctx,
                                                     const hkb_launch_config& c,
                                                     const hkb_stream_s* stream, void* const* args,
                                                     const size_t* arg_sizes, size_t num_args) {
  if (stream != nullptr) {
    if (!stream->alive)
      return error(HKB_ERROR_SHUT_DOWN, "launch of " + k.name + " on a destroyed stream");
    if (stream->ctx != ctx) {
      return error(HKB_ERROR_INVALID_ARGUMENT,
                   "launch of " + k.name + " on device " + std::to_string(ctx->ordinal) +
                       " with a stream of device " + std::to_string(stream->ctx->ordinal));
    }
  }
  if (num_args != k.params.size()) {
    return error(HKB_ERROR_ARGUMENT_MISMATCH, k.name + " takes " + std::to_string(k.params.size()) +
                                                  " arguments, given " + std::to_string(num_args) +
                                                  "; signature: " + signature_string(k));
  }
  if (num_args > 0 && (args == nullptr || arg_sizes == nullptr)) {
    return error(HKB_ERROR_INVALID_ARGUMENT, k.name + ": null argument or size array");
  }
  for (size_t i = 0; i < num_args; ++i) {
    if (args[i] == nullptr) {
      return error(HKB_ERROR_INVALID_ARGUMENT,
                   k.name + ": argument " + std::to_string(i) + " (" + k.params[i].name +
                       ") points to no host copy (args[i] must point to the value)");
    }
    if (arg_sizes[i] != k.params[i].size) {
      return error(HKB_ERROR_ARGUMENT_MISMATCH,
                   k.name + ": argument " + std::to_string(i) + " (" + k.params[i].name + ": " +
                       k.params[i].type + ") is " + std::to_string(k.params[i].size) +
                       " bytes, given " + std::to_string(arg_sizes[i]) +
                       "; signature: " + signature_string(k));
    }
  }
  return error(HKB_ERROR_INVALID_ARGUMENT, k.name + ": block (" + std::to_string(c.block[0]) + "," +
                                               std::to_string(c.block[1]) + "," +
                                               std::to_string(c.block[2]) +
                                               ") must have between 1 and 1024 threads");
}

// A count from 1 to `most` in the environment variable `name`, or `fallback` when it is unset or
// empty; an unusable value leaves its message in *bad (the first one only).
uint32_t env_count(const char* name, uint64_t most, uint32_t fallback, const char* unset_means,
                   std::string* bad) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  const unsigned long long x = std::strtoull(v, &end, 10);
  if (*end != '\0' || errno != 0 || x == 0 || x > most || *v == '-' || *v == '+') {
    if (bad->empty()) {
      *bad = std::string(name) + " must be a count from 1 to " + std::to_string(most) +
             " (unset: " + unset_means + "), not '" + v + "'";
    }
    return fallback;
  }
  return static_cast<uint32_t>(x);
}

}  // namespace

Options Options::from_environment() {
  Options o;
  const char* s = std::getenv("HKB_DEBUG_SYNC");
  o.debug_sync = s != nullptr && *s != '\0' && std::strcmp(s, "0") != 0;
  o.multiprocessors =
      env_count("HKB_MULTIPROCESSORS", kMaxMultiprocessors, 0, "the device's", &o.bad_environment);
  o.tuned_max_blocks = env_count("HKB_TUNED_MAX_BLOCKS", kTunedMaxBlocksLimit, kTunedMaxBlocks,
                                 std::to_string(kTunedMaxBlocks).c_str(), &o.bad_environment);
  o.tuned_packs = env_count("HKB_TUNED_PACKS", kTunedPacksLimit, kTunedPacks,
                            std::to_string(kTunedPacks).c_str(), &o.bad_environment);
  return o;
}

std::string signature_string(const KernelInfo& k) {
  std::string s = k.name + "(";
  for (size_t i = 0; i < k.params.size(); ++i) {
    s += (i ? ", " : "") + k.params[i].name + ": " + k.params[i].type;
  }
  return s + ")";
}

Library::Library(std::unique_ptr<Runtime> runtime, Manifest manifest,
                 std::unique_ptr<BundleSource> source, Options options,
                 std::unique_ptr<BundleSource> cpu_source)
    : runtime_(std::move(runtime)),
      manifest_(std::move(manifest)),
      names_(manifest_.kernels),
      source_(std::move(source)),
      cpu_source_(std::move(cpu_source)),
      options_(options) {
  logger()->debug("hkb: {} runtime, {} kernels in {} modules, code objects {}{}", runtime_->name(),
                  manifest_.kernels.size(), manifest_.modules.size(), source_->describe(),
                  cpu_source_ ? ", CPU modules " + cpu_source_->describe() : "");
}

Library::~Library() {
  shutdown();
}

Status Library::device_count(int* count) {
  if (shut_down_.load()) return error(HKB_ERROR_SHUT_DOWN, "the library was shut down");
  return runtime_->device_count(count);
}

Status Library::context(int ordinal, hkb_context_s** out) {
  if (shut_down_.load()) return error(HKB_ERROR_SHUT_DOWN, "the library was shut down");
  if (!options_.bad_environment.empty())
    return error(HKB_ERROR_INVALID_ARGUMENT, options_.bad_environment);
  int count = 0;
  HKB_RETURN_IF_ERROR(runtime_->device_count(&count));
  if (ordinal < 0 || ordinal >= count) {
    return error(HKB_ERROR_NO_DEVICE, "device " + std::to_string(ordinal) + " does not exist (" +
                                          std::to_string(count) + " " + runtime_->name() +
                                          " device(s) present)");
  }
  std::lock_guard<std::mutex> lock(contexts_mu_);
  // Checked again under the lock shutdown holds: a context made after it would never die.
  if (shut_down_.load()) return error(HKB_ERROR_SHUT_DOWN, "the library was shut down");
  if (contexts_.size() <= static_cast<size_t>(ordinal)) contexts_.resize(ordinal + 1);
  if (!contexts_[ordinal]) {
    auto ctx = std::make_unique<hkb_context_s>();
    ctx->lib = this;
    ctx->ordinal = ordinal;
    HKB_RETURN_IF_ERROR(runtime_->device_target(ordinal, &ctx->target));
    HKB_RETURN_IF_ERROR(runtime_->device_name(ordinal, &ctx->device_name));
    HKB_RETURN_IF_ERROR(runtime_->device_multiprocessors(ordinal, &ctx->device_multiprocessors));
    ctx->multiprocessors.store(default_multiprocessors(*ctx), std::memory_order_relaxed);
    ctx->modules = std::make_unique<ModuleSlot[]>(manifest_.modules.size());
    ctx->functions = std::make_unique<hkb_function_s[]>(manifest_.kernels.size());
    for (size_t i = 0; i < manifest_.kernels.size(); ++i) {
      ctx->functions[i].info = &manifest_.kernels[i];
      ctx->functions[i].ctx = ctx.get();
    }
    logger()->info("hkb: device {} is {} ({})", ordinal, ctx->device_name, ctx->target);
    contexts_[ordinal] = std::move(ctx);
  }
  *out = contexts_[ordinal].get();
  return Status::ok();
}

namespace {

[[gnu::cold, gnu::noinline]] Status dead_context(const hkb_context_s* ctx) {
  if (ctx == nullptr) return error(HKB_ERROR_INVALID_ARGUMENT, "null context");
  return error(HKB_ERROR_SHUT_DOWN, "the context of device " + std::to_string(ctx->ordinal) +
                                        " was shut down (hkb_shutdown); get a new one");
}

}  // namespace

Status Library::check_alive(hkb_context_s* ctx) const {
  if (ctx != nullptr && ctx->alive.load(std::memory_order_acquire)) return Status::ok();
  return dead_context(ctx);
}

Status Library::enter(hkb_context_s* ctx, LiveLock* lock) const {
  if (ctx == nullptr) return dead_context(ctx);
  *lock = LiveLock(ctx->life);
  return check_alive(ctx);
}

Status Library::bind(hkb_context_s* ctx, LiveLock* lock) {
  HKB_RETURN_IF_ERROR(enter(ctx, lock));
  return runtime_->bind_device(ctx->ordinal);
}

Status Library::ensure_module(hkb_context_s* ctx, uint32_t index, void** handle) {
  LiveLock live;
  HKB_RETURN_IF_ERROR(enter(ctx, &live));
  return ensure_module_locked(ctx, index, handle);
}

Status Library::ensure_module_locked(hkb_context_s* ctx, uint32_t index, void** handle) {
  ModuleSlot& slot = ctx->modules[index];
  if (void* h = slot.handle.load(std::memory_order_acquire)) {
    *handle = h;
    return Status::ok();
  }
  std::lock_guard<std::mutex> lock(slot.mu);
  if (void* h = slot.handle.load(std::memory_order_acquire)) {  // another thread won the race
    *handle = h;
    return Status::ok();
  }
  HKB_RETURN_IF_ERROR(check_alive(ctx));
  const std::string& module = manifest_.modules[index];
  const char* platform = runtime_->device_platform(ctx->ordinal);
  const bool cpu = std::strcmp(platform, "cpu") == 0;
  ModuleImage image;
  HKB_RETURN_IF_ERROR((cpu && cpu_source_ ? *cpu_source_ : *source_).read(module, &image));
  SelectedImage selected;
  if (std::strcmp(platform, "amd") == 0) {
    HKB_RETURN_IF_ERROR(
        select_amd_image(image.data, image.size, ctx->target, image.origin, &selected));
  } else if (cpu) {
    selected = SelectedImage{image.data, image.size, ctx->target};  // the runtime picks the width
  } else {
    HKB_RETURN_IF_ERROR(check_nvidia_image(image.data, image.size, image.origin));
    selected = SelectedImage{image.data, image.size, ctx->target};
  }
  HKB_RETURN_IF_ERROR(runtime_->bind_device(ctx->ordinal));
  void* h = nullptr;
  std::string log;
  Status s = runtime_->module_load(selected.data, selected.size, &h, &log);
  if (!s.is_ok()) {
    s.message = "loading module '" + module + "' from " + image.origin + " on device " +
                std::to_string(ctx->ordinal) + " (" + ctx->target + "): " + s.message +
                (log.empty() ? "" : "\nload log:\n" + log);
    if (s.code == HKB_ERROR_RUNTIME) s.code = HKB_ERROR_MODULE_LOAD;
    return s;
  }
  s = write_multiprocessors(ctx, index, h);
  if (!s.is_ok()) {
    runtime_->module_unload(h);
    return s;
  }
  slot.target = selected.target.empty() ? ctx->target : selected.target;
  slot.origin = image.origin;
  logger()->info("hkb: loaded module {} on device {} ({}) from {}", module, ctx->ordinal,
                 slot.target, image.origin);
  slot.handle.store(h, std::memory_order_release);
  *handle = h;
  return Status::ok();
}

Status Library::write_multiprocessors(hkb_context_s* ctx, uint32_t index, void* module) {
  const std::string& name = manifest_.modules[index];
  uint64_t ptr = 0;
  size_t bytes = 0;
  Status s = runtime_->module_global(module, kMultiprocessorsSymbol, &ptr, &bytes);
  if (s.is_ok() && ptr == 0) {
    // Kernels stay correct: they split work by the compiled default instead (`hkb check` fails).
    logger()->warn(
        "hkb: module {} has no {} global (built before hkb wrote it?): its kernels "
        "split work by their compiled multiprocessor count",
        name, kMultiprocessorsSymbol);
    return Status::ok();
  }
  if (s.is_ok() && bytes != sizeof(uint32_t)) {
    s = error(HKB_ERROR_MODULE_LOAD, std::string(kMultiprocessorsSymbol) + " is " +
                                         std::to_string(bytes) + " bytes, not 4");
  }
  if (s.is_ok()) {
    const uint32_t count = ctx->multiprocessors.load(std::memory_order_relaxed);
    s = runtime_->memcpy_htod(ptr, &count, sizeof(uint32_t));
  }
  if (!s.is_ok()) {
    s.message = "writing the multiprocessor count into module '" + name + "' on device " +
                std::to_string(ctx->ordinal) + ": " + s.message;
  }
  return s;
}

uint32_t Library::default_multiprocessors(const hkb_context_s& ctx) const {
  return options_.multiprocessors != 0 ? options_.multiprocessors : ctx.device_multiprocessors;
}

Status Library::multiprocessors(hkb_context_s* ctx, uint32_t* count) {
  LiveLock live;
  HKB_RETURN_IF_ERROR(enter(ctx, &live));
  *count = ctx->multiprocessors.load(std::memory_order_relaxed);
  return Status::ok();
}

Status Library::set_multiprocessors(hkb_context_s* ctx, uint32_t count) {
  if (ctx == nullptr) return error(HKB_ERROR_INVALID_ARGUMENT, "null context");
  if (count > kMaxMultiprocessors) {
    return error(HKB_ERROR_INVALID_ARGUMENT, "a multiprocessor count is at most " +
                                                 std::to_string(kMaxMultiprocessors) + ", not " +
                                                 std::to_string(count));
  }
  // Exclusive: no launch or load of this context runs while the modules change.
  std::unique_lock<LifeGate> life(ctx->life);
  HKB_RETURN_IF_ERROR(check_alive(ctx));
  HKB_RETURN_IF_ERROR(runtime_->bind_device(ctx->ordinal));
  HKB_RETURN_IF_ERROR(runtime_->device_synchronize());  // no kernel reads the count meanwhile
  const uint32_t previous = ctx->multiprocessors.load(std::memory_order_relaxed);
  ctx->multiprocessors.store(count != 0 ? count : default_multiprocessors(*ctx),
                             std::memory_order_relaxed);
  for (uint32_t i = 0; i < manifest_.modules.size(); ++i) {
    std::lock_guard<std::mutex> lock(ctx->modules[i].mu);
    if (void* h = ctx->modules[i].handle.load(std::memory_order_acquire)) {
      Status s = write_multiprocessors(ctx, i, h);
      if (!s.is_ok()) {
        // Modules already rewritten go back to the old count, so all agree.
        ctx->multiprocessors.store(previous, std::memory_order_relaxed);
        for (uint32_t j = 0; j < i; ++j) {
          if (void* hj = ctx->modules[j].handle.load(std::memory_order_acquire))
            write_multiprocessors(ctx, j, hj);
        }
        return s;
      }
    }
  }
  logger()->info("hkb: device {} kernels split work over {} multiprocessors", ctx->ordinal,
                 ctx->multiprocessors);
  return Status::ok();
}

Status Library::function(hkb_context_s* ctx, const char* name, hkb_function_s** out) {
  HKB_RETURN_IF_ERROR(check_alive(ctx));
  if (name == nullptr) return error(HKB_ERROR_INVALID_ARGUMENT, "null kernel name");
  const int64_t index = names_.find(name);
  if (index < 0) {
    return error(HKB_ERROR_UNKNOWN_KERNEL,
                 std::string("no kernel named '") + name +
                     "'; nearest names: " + join_names(manifest_.nearest(name)));
  }
  hkb_function_s* fn = &ctx->functions[index];
  if (fn->handle.load(std::memory_order_acquire) != nullptr) {
    *out = fn;
    return Status::ok();
  }
  LiveLock live;
  HKB_RETURN_IF_ERROR(enter(ctx, &live));
  void* module = nullptr;
  HKB_RETURN_IF_ERROR(ensure_module_locked(ctx, fn->info->module, &module));
  void* handle = nullptr;
  HKB_RETURN_IF_ERROR(runtime_->bind_device(ctx->ordinal));
  Status s = runtime_->module_function(module, name, &handle);
  if (!s.is_ok()) {
    s.message = "kernel '" + std::string(name) + "' is in the manifest but not in module '" +
                manifest_.modules[fn->info->module] + "' on " + ctx->target + ": " + s.message;
    return s;
  }
  fn->handle.store(handle, std::memory_order_release);  // same value if two threads race here
  *out = fn;
  return Status::ok();
}

Status Library::launch(hkb_function_s* fn, const hkb_launch_config& c, hkb_stream_s* stream,
                       void* const* args, const size_t* arg_sizes, size_t num_args) {
  if (fn == nullptr) return error(HKB_ERROR_INVALID_ARGUMENT, "null function");
  LiveLock live;
  HKB_RETURN_IF_ERROR(enter(fn->ctx, &live));
  const KernelInfo& k = *fn->info;
  // Every check as one branch; the messages are built out of line (the hot path stays small).
  if (!launch_acceptable(k, fn->ctx, c, stream, args, arg_sizes, num_args)) {
    return launch_rejection(k, fn->ctx, c, stream, args, arg_sizes, num_args);
  }
  if (c.grid[0] == 0 || c.grid[1] == 0 || c.grid[2] == 0) {
    logger()->trace("hkb: {} empty grid, nothing launched", k.name);
    return Status::ok();
  }
  void* handle = fn->handle.load(std::memory_order_acquire);
  if (handle == nullptr) {  // a handle from hkb_function_get always has one; be defensive
    return error(HKB_ERROR_INVALID_ARGUMENT, k.name + ": function handle was never loaded");
  }
  HKB_RETURN_IF_ERROR(runtime_->bind_device(fn->ctx->ordinal));
  void* native_stream = stream ? stream->native : nullptr;
  Status s = runtime_->launch(handle, Dim3{c.grid[0], c.grid[1], c.grid[2]},
                              Dim3{c.block[0], c.block[1], c.block[2]}, c.shared_mem_bytes,
                              native_stream, const_cast<void**>(args));
  if (!s.is_ok()) {
    s.message = "launch of " + k.name + ": " + s.message;
    return s;
  }
  if (options_.debug_sync) {
    s = native_stream ? runtime_->stream_synchronize(native_stream)
                      : runtime_->device_synchronize();
    if (s.is_ok()) s = runtime_->last_launch_error();
    if (!s.is_ok()) {
      s.code = HKB_ERROR_LAUNCH;
      s.message = "HKB_DEBUG_SYNC: kernel " + k.name + " failed: " + s.message;
      return s;
    }
  }
  return Status::ok();
}

Status Library::stream_create(hkb_context_s* ctx, hkb_stream_s** out) {
  LiveLock live;
  HKB_RETURN_IF_ERROR(bind(ctx, &live));
  void* native = nullptr;
  HKB_RETURN_IF_ERROR(runtime_->stream_create(&native));
  auto* s = new hkb_stream_s;
  s->ctx = ctx;
  s->native = native;
  std::lock_guard<std::mutex> lock(ctx->streams_mu);
  ctx->streams.insert(s);
  *out = s;
  return Status::ok();
}

Status Library::stream_destroy(hkb_stream_s* stream) {
  hkb_context_s* ctx = stream->ctx;
  LiveLock live(ctx->life);  // a dead stream is still freed, so no alive check here
  {
    std::lock_guard<std::mutex> lock(ctx->streams_mu);
    ctx->streams.erase(stream);
  }
  Status s;
  if (stream->alive && ctx->alive.load()) {
    s = runtime_->bind_device(ctx->ordinal);
    if (s.is_ok()) s = runtime_->stream_destroy(stream->native);
  }
  delete stream;
  return s;
}

Status Library::stream_synchronize(hkb_stream_s* stream) {
  LiveLock live;
  HKB_RETURN_IF_ERROR(bind(stream->ctx, &live));
  if (!stream->alive) return error(HKB_ERROR_SHUT_DOWN, "the stream's context was shut down");
  return runtime_->stream_synchronize(stream->native);
}

Status Library::synchronize(hkb_context_s* ctx) {
  LiveLock live;
  HKB_RETURN_IF_ERROR(bind(ctx, &live));
  return runtime_->device_synchronize();
}

Status Library::malloc(hkb_context_s* ctx, size_t bytes, uint64_t* ptr) {
  LiveLock live;
  HKB_RETURN_IF_ERROR(bind(ctx, &live));
  if (bytes == 0) {
    *ptr = 0;
    return Status::ok();
  }
  Status s = runtime_->mem_alloc(bytes, ptr);
  if (!s.is_ok()) s.message = "allocating " + std::to_string(bytes) + " bytes: " + s.message;
  return s;
}

Status Library::free(hkb_context_s* ctx, uint64_t ptr) {
  LiveLock live;
  HKB_RETURN_IF_ERROR(bind(ctx, &live));
  return ptr == 0 ? Status::ok() : runtime_->mem_free(ptr);
}

Status Library::memcpy_htod(hkb_context_s* ctx, uint64_t dst, const void* src, size_t bytes) {
  LiveLock live;
  HKB_RETURN_IF_ERROR(bind(ctx, &live));
  if (bytes == 0) return Status::ok();
  if (src == nullptr || dst == 0)
    return error(HKB_ERROR_INVALID_ARGUMENT, "memcpy_htod: null pointer");
  return runtime_->memcpy_htod(dst, src, bytes);
}

Status Library::memcpy_dtoh(hkb_context_s* ctx, void* dst, uint64_t src, size_t bytes) {
  LiveLock live;
  HKB_RETURN_IF_ERROR(bind(ctx, &live));
  if (bytes == 0) return Status::ok();
  if (dst == nullptr || src == 0)
    return error(HKB_ERROR_INVALID_ARGUMENT, "memcpy_dtoh: null pointer");
  return runtime_->memcpy_dtoh(dst, src, bytes);
}

Status Library::memcpy_dtod(hkb_context_s* ctx, uint64_t dst, uint64_t src, size_t bytes) {
  LiveLock live;
  HKB_RETURN_IF_ERROR(bind(ctx, &live));
  if (bytes == 0) return Status::ok();
  if (dst == 0 || src == 0) return error(HKB_ERROR_INVALID_ARGUMENT, "memcpy_dtod: null pointer");
  return runtime_->memcpy_dtod(dst, src, bytes);
}

Status Library::memset_d8(hkb_context_s* ctx, uint64_t dst, uint8_t value, size_t bytes) {
  LiveLock live;
  HKB_RETURN_IF_ERROR(bind(ctx, &live));
  if (bytes == 0) return Status::ok();
  if (dst == 0) return error(HKB_ERROR_INVALID_ARGUMENT, "memset_d8: null pointer");
  return runtime_->memset_d8(dst, value, bytes);
}

std::vector<LoadedModule> Library::loaded_modules(hkb_context_s* ctx) {
  std::vector<LoadedModule> out;
  for (size_t i = 0; i < manifest_.modules.size(); ++i) {
    ModuleSlot& slot = ctx->modules[i];
    std::lock_guard<std::mutex> lock(slot.mu);
    if (slot.handle.load() != nullptr)
      out.push_back({manifest_.modules[i], slot.target, slot.origin});
  }
  return out;
}

void Library::shutdown() {
  if (shut_down_.exchange(true)) return;
  std::lock_guard<std::mutex> lock(contexts_mu_);
  for (auto& ctx : contexts_) {
    if (!ctx) continue;
    // Waits for operations in flight on this context; later ones see it dead.
    std::unique_lock<LifeGate> life(ctx->life);
    ctx->alive.store(false, std::memory_order_release);
    // Synchronise before unloading: kernels still running must not lose their code.
    if (runtime_->bind_device(ctx->ordinal).is_ok()) {
      Status s = runtime_->device_synchronize();
      if (!s.is_ok()) logger()->warn("hkb: shutdown of device {}: {}", ctx->ordinal, s.message);
      std::lock_guard<std::mutex> slock(ctx->streams_mu);
      for (hkb_stream_s* st : ctx->streams) {
        runtime_->stream_destroy(st->native);
        st->alive = false;
      }
      for (size_t i = 0; i < manifest_.modules.size(); ++i) {
        std::lock_guard<std::mutex> mlock(ctx->modules[i].mu);
        if (void* h = ctx->modules[i].handle.exchange(nullptr)) runtime_->module_unload(h);
      }
    }
  }
}

}  // namespace hkb::detail
