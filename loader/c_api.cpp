// Layer 6: the C ABI. Every entry point catches everything (no exception crosses the boundary),
// records failures in a thread-local message and returns a status.
#include "c_api.hpp"

#include "log.hpp"
#include "platforms.hpp"

#include <hkb/hkb.h>

#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <vector>

namespace hkb::detail {

namespace {

thread_local std::string t_last_error;

std::mutex g_mu;
std::atomic<Library*> g_library{nullptr};
// Every library ever created stays allocated until exit, shut down or not, so handles from a
// shut-down library are recognised as dead rather than dereferenced after being freed.
std::vector<std::unique_ptr<Library>>& all_libraries() {
  static auto* v = new std::vector<std::unique_ptr<Library>>();
  return *v;
}

hkb_status fail(Status s) {
  t_last_error = std::move(s.message);
  logger()->debug("hkb: {}", t_last_error);
  return s.code;
}

template <typename F>
hkb_status guarded(F&& f) {
  try {
    Status s = f();
    if (!s.is_ok()) return fail(std::move(s));
    return HKB_SUCCESS;
  } catch (const std::bad_alloc&) {
    return fail(error(HKB_ERROR_OUT_OF_MEMORY, "host out of memory"));
  } catch (const std::exception& e) {
    return fail(error(HKB_ERROR_RUNTIME, std::string("internal error: ") + e.what()));
  } catch (...) {
    return fail(error(HKB_ERROR_RUNTIME, "internal error"));
  }
}

[[gnu::cold, gnu::noinline]] Status no_library(hkb_context ctx) {
  if (ctx == nullptr) return error(HKB_ERROR_INVALID_ARGUMENT, "null context");
  return error(HKB_ERROR_SHUT_DOWN, "the context was shut down (hkb_shutdown)");
}

Status ctx_library(hkb_context ctx, Library** lib) {
  if (ctx == nullptr || !ctx->alive.load(std::memory_order_acquire)) return no_library(ctx);
  *lib = ctx->lib;
  return Status::ok();
}

}  // namespace

Status embedded_manifest(Manifest* out) {
  const std::string_view json(reinterpret_cast<const char*>(kEmbeddedManifest.begin),
                              static_cast<size_t>(kEmbeddedManifest.end - kEmbeddedManifest.begin));
  return parse_manifest(json, "embedded in libhkb", out);
}

Status current_library(Library** out) {
  if (Library* lib = g_library.load(std::memory_order_acquire)) {
    *out = lib;
    return Status::ok();
  }
  std::lock_guard<std::mutex> lock(g_mu);
  if (Library* lib = g_library.load(std::memory_order_acquire)) {
    *out = lib;
    return Status::ok();
  }
  Manifest manifest;
  HKB_RETURN_IF_ERROR(embedded_manifest(&manifest));
  LibraryParts parts;
  HKB_RETURN_IF_ERROR(make_library_parts(&parts));
  auto lib = std::make_unique<Library>(std::move(parts.runtime), std::move(manifest),
                                       std::move(parts.source), Options::from_environment(),
                                       std::move(parts.cpu_source));
  *out = lib.get();
  g_library.store(lib.get(), std::memory_order_release);
  all_libraries().push_back(std::move(lib));
  return Status::ok();
}

void install_library(std::unique_ptr<Library> library) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (Library* old = g_library.exchange(nullptr)) old->shutdown();
  g_library.store(library.get(), std::memory_order_release);
  all_libraries().push_back(std::move(library));
}

}  // namespace hkb::detail

using hkb::detail::error;
using hkb::detail::guarded;
using hkb::detail::Library;
using hkb::detail::Status;

extern "C" {

void hkb_version(int* major, int* minor, int* patch, int* abi) {
  if (major) *major = HKB_VERSION_MAJOR;
  if (minor) *minor = HKB_VERSION_MINOR;
  if (patch) *patch = HKB_VERSION_PATCH;
  if (abi) *abi = HKB_ABI_VERSION;
}

const char* hkb_platform(void) {
  return HKB_PLATFORM_NAME;
}

const char* hkb_status_string(hkb_status status) {
  // A C caller may pass any int; in C++ loading an out-of-range enum value is undefined, so the
  // value is read as the int it is.
  int code = 0;
  std::memcpy(&code, &status, sizeof code);
  switch (code) {
    case HKB_SUCCESS:
      return "HKB_SUCCESS";
    case HKB_ERROR_INVALID_ARGUMENT:
      return "HKB_ERROR_INVALID_ARGUMENT";
    case HKB_ERROR_NO_DEVICE:
      return "HKB_ERROR_NO_DEVICE";
    case HKB_ERROR_UNKNOWN_KERNEL:
      return "HKB_ERROR_UNKNOWN_KERNEL";
    case HKB_ERROR_ARGUMENT_MISMATCH:
      return "HKB_ERROR_ARGUMENT_MISMATCH";
    case HKB_ERROR_TARGET_MISSING:
      return "HKB_ERROR_TARGET_MISSING";
    case HKB_ERROR_CORRUPT_BUNDLE:
      return "HKB_ERROR_CORRUPT_BUNDLE";
    case HKB_ERROR_CORRUPT_MANIFEST:
      return "HKB_ERROR_CORRUPT_MANIFEST";
    case HKB_ERROR_MODULE_LOAD:
      return "HKB_ERROR_MODULE_LOAD";
    case HKB_ERROR_RUNTIME:
      return "HKB_ERROR_RUNTIME";
    case HKB_ERROR_LAUNCH:
      return "HKB_ERROR_LAUNCH";
    case HKB_ERROR_OUT_OF_MEMORY:
      return "HKB_ERROR_OUT_OF_MEMORY";
    case HKB_ERROR_SHUT_DOWN:
      return "HKB_ERROR_SHUT_DOWN";
    case HKB_ERROR_IO:
      return "HKB_ERROR_IO";
  }
  return "HKB_ERROR_UNKNOWN_STATUS";
}

const char* hkb_last_error(void) {
  return hkb::detail::t_last_error.c_str();
}

hkb_status hkb_init(void) {
  return guarded([] {
    Library* lib = nullptr;
    return hkb::detail::current_library(&lib);
  });
}

hkb_status hkb_shutdown(void) {
  return guarded([] {
    std::lock_guard<std::mutex> lock(hkb::detail::g_mu);
    if (Library* lib = hkb::detail::g_library.exchange(nullptr)) lib->shutdown();
    return Status::ok();
  });
}

hkb_status hkb_device_count(int* count) {
  return guarded([&] {
    if (count == nullptr) return error(HKB_ERROR_INVALID_ARGUMENT, "null count");
    Library* lib = nullptr;
    HKB_RETURN_IF_ERROR(hkb::detail::current_library(&lib));
    return lib->device_count(count);
  });
}

hkb_status hkb_context_get(int ordinal, hkb_context* ctx) {
  return guarded([&] {
    if (ctx == nullptr) return error(HKB_ERROR_INVALID_ARGUMENT, "null context output");
    Library* lib = nullptr;
    HKB_RETURN_IF_ERROR(hkb::detail::current_library(&lib));
    return lib->context(ordinal, ctx);
  });
}

hkb_status hkb_context_ordinal(hkb_context ctx, int* ordinal) {
  return guarded([&] {
    Library* lib = nullptr;
    HKB_RETURN_IF_ERROR(hkb::detail::ctx_library(ctx, &lib));
    if (ordinal == nullptr) return error(HKB_ERROR_INVALID_ARGUMENT, "null ordinal output");
    *ordinal = ctx->ordinal;
    return Status::ok();
  });
}

hkb_status hkb_context_target(hkb_context ctx, char* buf, size_t len) {
  return guarded([&] {
    Library* lib = nullptr;
    HKB_RETURN_IF_ERROR(hkb::detail::ctx_library(ctx, &lib));
    if (buf == nullptr || len <= ctx->target.size()) {
      return error(HKB_ERROR_INVALID_ARGUMENT,
                   "target buffer needs " + std::to_string(ctx->target.size() + 1) + " bytes");
    }
    std::memcpy(buf, ctx->target.c_str(), ctx->target.size() + 1);
    return Status::ok();
  });
}

hkb_status hkb_context_synchronize(hkb_context ctx) {
  return guarded([&] {
    Library* lib = nullptr;
    HKB_RETURN_IF_ERROR(hkb::detail::ctx_library(ctx, &lib));
    return lib->synchronize(ctx);
  });
}

hkb_status hkb_context_multiprocessors(hkb_context ctx, uint32_t* count) {
  return guarded([&] {
    Library* lib = nullptr;
    HKB_RETURN_IF_ERROR(hkb::detail::ctx_library(ctx, &lib));
    if (count == nullptr) return error(HKB_ERROR_INVALID_ARGUMENT, "null count output");
    return lib->multiprocessors(ctx, count);
  });
}

hkb_status hkb_context_set_multiprocessors(hkb_context ctx, uint32_t count) {
  return guarded([&] {
    Library* lib = nullptr;
    HKB_RETURN_IF_ERROR(hkb::detail::ctx_library(ctx, &lib));
    return lib->set_multiprocessors(ctx, count);
  });
}

hkb_status hkb_function_get(hkb_context ctx, const char* name, hkb_function* fn) {
  // A cached kernel of a live context: no Status, no exception frame, nothing else.
  if (ctx != nullptr && name != nullptr && fn != nullptr) {
    if (hkb_function found = Library::cached(ctx, name)) {
      *fn = found;
      return HKB_SUCCESS;
    }
  }
  return guarded([&] {
    Library* lib = nullptr;
    HKB_RETURN_IF_ERROR(hkb::detail::ctx_library(ctx, &lib));
    if (fn == nullptr) return error(HKB_ERROR_INVALID_ARGUMENT, "null function output");
    return lib->function(ctx, name, fn);
  });
}

const char* hkb_function_name(hkb_function fn) {
  return fn != nullptr ? fn->info->name.c_str() : "";
}

size_t hkb_function_num_params(hkb_function fn) {
  return fn != nullptr ? fn->info->params.size() : 0;
}

size_t hkb_function_param_size(hkb_function fn, size_t index) {
  if (fn == nullptr || index >= fn->info->params.size()) return 0;
  return fn->info->params[index].size;
}

hkb_launch_config hkb_launch_config_for_num_elems(uint32_t n) {
  // cudarc: const NUM_THREADS: u32 = 1024; num_blocks = (n + NUM_THREADS - 1) / NUM_THREADS,
  // computed without overflow for n close to u32::MAX.
  const uint32_t threads = 1024;
  const uint32_t blocks = n / threads + (n % threads != 0 ? 1 : 0);
  hkb_launch_config c;
  c.grid[0] = blocks, c.grid[1] = 1, c.grid[2] = 1;
  c.block[0] = threads, c.block[1] = 1, c.block[2] = 1;
  c.shared_mem_bytes = 0;
  return c;
}

hkb_status hkb_launch_config_tuned(hkb_function fn, uint64_t n, hkb_launch_config* config) {
  return guarded([&] {
    if (fn == nullptr) return error(HKB_ERROR_INVALID_ARGUMENT, "null function");
    Library* lib = nullptr;
    HKB_RETURN_IF_ERROR(hkb::detail::ctx_library(fn->ctx, &lib));
    return lib->tuned_config(fn, n, config);
  });
}

hkb_status hkb_launch(hkb_function fn, const hkb_launch_config* config, hkb_stream stream,
                      void* const* args, const size_t* arg_sizes, size_t num_args) {
  return guarded([&] {
    if (fn == nullptr) return error(HKB_ERROR_INVALID_ARGUMENT, "null function");
    if (config == nullptr) return error(HKB_ERROR_INVALID_ARGUMENT, "null launch config");
    Library* lib = nullptr;
    HKB_RETURN_IF_ERROR(hkb::detail::ctx_library(fn->ctx, &lib));
    return lib->launch(fn, *config, stream, args, arg_sizes, num_args);
  });
}

hkb_status hkb_stream_create(hkb_context ctx, hkb_stream* stream) {
  return guarded([&] {
    Library* lib = nullptr;
    HKB_RETURN_IF_ERROR(hkb::detail::ctx_library(ctx, &lib));
    if (stream == nullptr) return error(HKB_ERROR_INVALID_ARGUMENT, "null stream output");
    return lib->stream_create(ctx, stream);
  });
}

hkb_status hkb_stream_destroy(hkb_stream stream) {
  return guarded([&] {
    if (stream == nullptr) return error(HKB_ERROR_INVALID_ARGUMENT, "null stream");
    return stream->ctx->lib->stream_destroy(stream);
  });
}

hkb_status hkb_stream_synchronize(hkb_stream stream) {
  return guarded([&] {
    if (stream == nullptr) return error(HKB_ERROR_INVALID_ARGUMENT, "null stream");
    return stream->ctx->lib->stream_synchronize(stream);
  });
}

hkb_status hkb_malloc(hkb_context ctx, size_t bytes, hkb_devptr* ptr) {
  return guarded([&] {
    Library* lib = nullptr;
    HKB_RETURN_IF_ERROR(hkb::detail::ctx_library(ctx, &lib));
    if (ptr == nullptr) return error(HKB_ERROR_INVALID_ARGUMENT, "null pointer output");
    return lib->malloc(ctx, bytes, ptr);
  });
}

hkb_status hkb_free(hkb_context ctx, hkb_devptr ptr) {
  return guarded([&] {
    Library* lib = nullptr;
    HKB_RETURN_IF_ERROR(hkb::detail::ctx_library(ctx, &lib));
    return lib->free(ctx, ptr);
  });
}

hkb_status hkb_memcpy_htod(hkb_context ctx, hkb_devptr dst, const void* src, size_t bytes) {
  return guarded([&] {
    Library* lib = nullptr;
    HKB_RETURN_IF_ERROR(hkb::detail::ctx_library(ctx, &lib));
    return lib->memcpy_htod(ctx, dst, src, bytes);
  });
}

hkb_status hkb_memcpy_dtoh(hkb_context ctx, void* dst, hkb_devptr src, size_t bytes) {
  return guarded([&] {
    Library* lib = nullptr;
    HKB_RETURN_IF_ERROR(hkb::detail::ctx_library(ctx, &lib));
    return lib->memcpy_dtoh(ctx, dst, src, bytes);
  });
}

hkb_status hkb_memcpy_dtod(hkb_context ctx, hkb_devptr dst, hkb_devptr src, size_t bytes) {
  return guarded([&] {
    Library* lib = nullptr;
    HKB_RETURN_IF_ERROR(hkb::detail::ctx_library(ctx, &lib));
    return lib->memcpy_dtod(ctx, dst, src, bytes);
  });
}

hkb_status hkb_memset_d8(hkb_context ctx, hkb_devptr dst, uint8_t value, size_t bytes) {
  return guarded([&] {
    Library* lib = nullptr;
    HKB_RETURN_IF_ERROR(hkb::detail::ctx_library(ctx, &lib));
    return lib->memset_d8(ctx, dst, value, bytes);
  });
}

}  // extern "C"
