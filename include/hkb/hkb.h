/* hkb: HIP kernel bundle. Stable C ABI.
 *
 * Kernels are looked up by candle's names and launched like candle's CUDA path: an array of
 * pointers to host copies of the arguments (cudarc's kernelParams), checked against the kernel's
 * signature from the compiled-in manifest before launch. Every function returns an hkb_status;
 * on failure hkb_last_error() returns a message for the calling thread naming what was asked for
 * and what was found. No function aborts or throws.
 *
 * Thread safety: every function may be called from any thread. Handles stay valid until
 * hkb_shutdown(); after it every call on an old handle returns HKB_ERROR_SHUT_DOWN.
 */
#ifndef HKB_H
#define HKB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(HKB_BUILDING_LIBRARY)
#define HKB_API __attribute__((visibility("default")))
#else
#define HKB_API
#endif

#define HKB_VERSION_MAJOR 0
#define HKB_VERSION_MINOR 1
#define HKB_VERSION_PATCH 0
/* Bumped when a function's signature or a struct's layout changes. */
#define HKB_ABI_VERSION 1

typedef enum hkb_status {
  HKB_SUCCESS = 0,
  HKB_ERROR_INVALID_ARGUMENT = 1,  /* null pointer, bad handle, bad launch geometry */
  HKB_ERROR_NO_DEVICE = 2,         /* no GPU, or the ordinal is out of range */
  HKB_ERROR_UNKNOWN_KERNEL = 3,    /* name not in the manifest (message lists near names) */
  HKB_ERROR_ARGUMENT_MISMATCH = 4, /* wrong argument count or size for the kernel's signature */
  HKB_ERROR_TARGET_MISSING = 5,    /* the code object has no entry for the device's target */
  HKB_ERROR_CORRUPT_BUNDLE = 6,    /* a code object is truncated or malformed */
  HKB_ERROR_CORRUPT_MANIFEST = 7,  /* the manifest is malformed */
  HKB_ERROR_MODULE_LOAD = 8,       /* the runtime refused to load a module (message has the log) */
  HKB_ERROR_RUNTIME = 9,           /* a HIP/CUDA call failed (message names the call and error) */
  HKB_ERROR_LAUNCH = 10,           /* a launch failed, or failed at HKB_DEBUG_SYNC's check */
  HKB_ERROR_OUT_OF_MEMORY = 11,
  HKB_ERROR_SHUT_DOWN = 12, /* the library or the handle's context was shut down */
  HKB_ERROR_IO = 13         /* a file in HKB_BUNDLE_DIR could not be read */
} hkb_status;

typedef struct hkb_context_s* hkb_context;   /* one per device, owned by the library */
typedef struct hkb_function_s* hkb_function; /* a kernel on one device, owned by its context */
typedef struct hkb_stream_s* hkb_stream;     /* NULL means the device's default stream */
typedef uint64_t hkb_devptr;                 /* a device address, as cudarc's CUdeviceptr */

typedef struct hkb_launch_config {
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t shared_mem_bytes;
} hkb_launch_config;

/* Version of the library actually loaded (compare with HKB_VERSION_* and HKB_ABI_VERSION). */
HKB_API void hkb_version(int* major, int* minor, int* patch, int* abi);
/* "amd" or "nvidia": which flavour this library was built as. */
HKB_API const char* hkb_platform(void);
HKB_API const char* hkb_status_string(hkb_status status);
/* Message of the last failing call on this thread ("" if none). Valid until the thread's next call.
 */
HKB_API const char* hkb_last_error(void);

/* Explicit start-up is optional: every call initialises on first use. hkb_shutdown synchronises
 * each device, unloads its modules and invalidates every handle; a later call starts afresh. */
HKB_API hkb_status hkb_init(void);
HKB_API hkb_status hkb_shutdown(void);

HKB_API hkb_status hkb_device_count(int* count);
/* The library-owned context of a device; the same handle for the same ordinal until shutdown. */
HKB_API hkb_status hkb_context_get(int ordinal, hkb_context* ctx);
HKB_API hkb_status hkb_context_ordinal(hkb_context ctx, int* ordinal);
/* Target ID, e.g. "gfx90a:sramecc+:xnack-" or "sm_90". Writes at most `len` bytes including NUL. */
HKB_API hkb_status hkb_context_target(hkb_context ctx, char* buf, size_t len);
HKB_API hkb_status hkb_context_synchronize(hkb_context ctx);

/* Look a kernel up by name; loads its module on this device on first use (once, thread-safe).
 * A repeated lookup takes no lock and allocates nothing. */
HKB_API hkb_status hkb_function_get(hkb_context ctx, const char* name, hkb_function* fn);
HKB_API const char* hkb_function_name(hkb_function fn);
HKB_API size_t hkb_function_num_params(hkb_function fn);
/* Byte size of parameter `index`; 0 if out of range. */
HKB_API size_t hkb_function_param_size(hkb_function fn, size_t index);

/* cudarc's LaunchConfig::for_num_elems: block (1024,1,1), grid (ceil(n/1024),1,1), no shared
 * memory. n == 0 gives grid 0, which hkb_launch accepts as an empty launch. */
HKB_API hkb_launch_config hkb_launch_config_for_num_elems(uint32_t n);

/* Launch `fn` with `num_args` arguments: args[i] points to a host copy of argument i, of
 * arg_sizes[i] bytes. Count and sizes are checked against the signature before anything runs.
 * A grid with a zero dimension launches nothing and succeeds. */
HKB_API hkb_status hkb_launch(hkb_function fn, const hkb_launch_config* config, hkb_stream stream,
                              void* const* args, const size_t* arg_sizes, size_t num_args);

HKB_API hkb_status hkb_stream_create(hkb_context ctx, hkb_stream* stream);
HKB_API hkb_status hkb_stream_destroy(hkb_stream stream);
HKB_API hkb_status hkb_stream_synchronize(hkb_stream stream);

/* Device memory, so host programs and tests need no HIP/CUDA headers. Zero bytes gives address 0.
 */
HKB_API hkb_status hkb_malloc(hkb_context ctx, size_t bytes, hkb_devptr* ptr);
HKB_API hkb_status hkb_free(hkb_context ctx, hkb_devptr ptr);
HKB_API hkb_status hkb_memcpy_htod(hkb_context ctx, hkb_devptr dst, const void* src, size_t bytes);
HKB_API hkb_status hkb_memcpy_dtoh(hkb_context ctx, void* dst, hkb_devptr src, size_t bytes);
HKB_API hkb_status hkb_memcpy_dtod(hkb_context ctx, hkb_devptr dst, hkb_devptr src, size_t bytes);
HKB_API hkb_status hkb_memset_d8(hkb_context ctx, hkb_devptr dst, uint8_t value, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* HKB_H */
