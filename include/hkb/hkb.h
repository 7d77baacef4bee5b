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

/* Marks an exported function: default visibility while the library is built, nothing for users. */
#if defined(HKB_BUILDING_LIBRARY)
#define HKB_API __attribute__((visibility("default")))
#else
#define HKB_API
#endif

/* Version of this header (semantic versioning; see docs/abi-policy.md). */
#define HKB_VERSION_MAJOR 0
/* Minor version of this header: new functions or kernels, compatible with older callers. */
#define HKB_VERSION_MINOR 2
/* Patch version of this header: fixes only. */
#define HKB_VERSION_PATCH 0
/* Version of the binary interface declared here: bumped, together with the library's SONAME,
 * when a function is removed or its signature, a struct's layout or an enum value changes
 * (docs/abi-policy.md). Compare with the `abi` hkb_version() reports. */
#define HKB_ABI_VERSION 1

/* Result of every call that can fail; details in hkb_last_error(). Values are stable. */
typedef enum hkb_status {
  HKB_SUCCESS = 0,                 /* the call did what was asked */
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
  HKB_ERROR_OUT_OF_MEMORY = 11,    /* host or device memory ran out */
  HKB_ERROR_SHUT_DOWN = 12,        /* the library or the handle's context was shut down */
  HKB_ERROR_IO = 13                /* a file in HKB_BUNDLE_DIR is missing, unreadable, not a regular
                                      file or larger than 1 GiB */
} hkb_status;

typedef struct hkb_context_s* hkb_context;   /* one per device, owned by the library */
typedef struct hkb_function_s* hkb_function; /* a kernel on one device, owned by its context */
typedef struct hkb_stream_s* hkb_stream;     /* NULL means the device's default stream */
typedef uint64_t hkb_devptr;                 /* a device address, as cudarc's CUdeviceptr */

/* Launch geometry, as cudarc's LaunchConfig. */
typedef struct hkb_launch_config {
  uint32_t grid[3];          /* blocks in x, y, z; any zero launches nothing */
  uint32_t block[3];         /* threads per block in x, y, z; 1 to 1024 in total */
  uint32_t shared_mem_bytes; /* dynamic shared memory (LDS) per block */
} hkb_launch_config;

/* Version of the library actually loaded (compare with HKB_VERSION_* and HKB_ABI_VERSION). */
HKB_API void hkb_version(int* major, int* minor, int* patch, int* abi);
/* "amd", "nvidia" or "cpu": which flavour this library was built as. A device of the CPU platform
 * (HKB_PLATFORM, README) has a target ID starting with "cpu-" in any flavour. */
HKB_API const char* hkb_platform(void);
/* The enumerator's name ("HKB_ERROR_IO"); "HKB_ERROR_UNKNOWN_STATUS" for any other value. */
HKB_API const char* hkb_status_string(hkb_status status);
/* Message of the last failing call on this thread ("" if none). Valid until the thread's next call.
 */
HKB_API const char* hkb_last_error(void);

/* Explicit start-up is optional: every call initialises on first use. hkb_shutdown synchronises
 * each device, unloads its modules and invalidates every handle; a later call starts afresh. */
HKB_API hkb_status hkb_init(void);
HKB_API hkb_status hkb_shutdown(void);

/* Number of devices: the GPUs the runtime sees (0 and HKB_SUCCESS on a machine without one), then
 * the CPU platform's devices where the library has CPU modules (HKB_PLATFORM selects). */
HKB_API hkb_status hkb_device_count(int* count);
/* The library-owned context of a device; the same handle for the same ordinal until shutdown. */
HKB_API hkb_status hkb_context_get(int ordinal, hkb_context* ctx);
/* The device ordinal `ctx` was obtained for. */
HKB_API hkb_status hkb_context_ordinal(hkb_context ctx, int* ordinal);
/* Target ID, e.g. "gfx90a:sramecc+:xnack-" or "sm_90". Writes at most `len` bytes including NUL. */
HKB_API hkb_status hkb_context_target(hkb_context ctx, char* buf, size_t len);
/* Waits for all work on the context's device. */
HKB_API hkb_status hkb_context_synchronize(hkb_context ctx);
/* Multiprocessors (SMs, compute units) the context's kernels split their work over: hkb writes
 * the count into every module it loads; by default the device's own, or HKB_MULTIPROCESSORS. */
HKB_API hkb_status hkb_context_multiprocessors(hkb_context ctx, uint32_t* count);
/* Sets that count (1 to 65536; 0 restores the default) for every module of the context, loaded or
 * not, e.g. for a process that runs on part of the GPU. Waits for the device's work first, and
 * the context's other calls wait for it. Results never depend on the count, only speed. */
HKB_API hkb_status hkb_context_set_multiprocessors(hkb_context ctx, uint32_t count);

/* Look a kernel up by name; loads its module on this device on first use (once, thread-safe).
 * A repeated lookup takes no lock and allocates nothing. */
HKB_API hkb_status hkb_function_get(hkb_context ctx, const char* name, hkb_function* fn);
/* The kernel's name ("" for NULL); valid as long as the handle. */
HKB_API const char* hkb_function_name(hkb_function fn);
/* Number of parameters of the kernel's signature (0 for NULL). */
HKB_API size_t hkb_function_num_params(hkb_function fn);
/* Byte size of parameter `index`; 0 if out of range. */
HKB_API size_t hkb_function_param_size(hkb_function fn, size_t index);

/* cudarc's LaunchConfig::for_num_elems: block (1024,1,1), grid (ceil(n/1024),1,1), no shared
 * memory. n == 0 gives grid 0, which hkb_launch accepts as an empty launch. */
HKB_API hkb_launch_config hkb_launch_config_for_num_elems(uint32_t n);

/* The launch of `n` elements with which hkb's kernel `fn` is fastest on its device; in *config.
 * The rule comes from the kernel's manifest entry ("launch", manifests/README.md):
 * - elementwise kernels (affine, binary, cast, fill, const_set, copy2d, ternary where, unary;
 *   "resident"): block (1024,1,1) and b = min(ceil(n / (1024 * e)), M) blocks, e the elements of
 *   two 16-byte packs of the kernel's widest element (8 for f32, 16 for bf16, 32 for u8), M 8192
 *   (the environment's HKB_TUNED_PACKS and HKB_TUNED_MAX_BLOCKS change the two and the 8192, for
 *   tuning sweeps); grid (b, 1, 1) up to 1024 blocks, past it rows of at most 1024:
 *   (ceil(b / y), y, 1), y = ceil(b / 1024). Every block works on contiguous data (a layout given
 *   by info is the first row's); these kernels loop over the work (grid-stride), so the result is
 *   exact for
 *   every n and any grid, and on large tensors faster than candle's one-thread-per-element grid
 *   (README, "The tuned launch configuration");
 * - kernels for which hkb has no better launch (conv, indexing, rope; "for_num_elems"): candle's
 *   own configuration, hkb_launch_config_for_num_elems(n) for 64-bit n;
 * - every other kernel (reductions, softmax, norms, sort, quantized) is launched with a geometry
 *   candle derives from the op's shape, not from an element count: HKB_ERROR_INVALID_ARGUMENT.
 * n == 0 gives grid 0 (an empty launch). No call asks the runtime or takes a lock. */
HKB_API hkb_status hkb_launch_config_tuned(hkb_function fn, uint64_t n, hkb_launch_config* config);

/* Launch `fn` with `num_args` arguments: args[i] points to a host copy of argument i, of
 * arg_sizes[i] bytes. Count and sizes are checked against the signature before anything runs.
 * A grid with a zero dimension launches nothing and succeeds. */
HKB_API hkb_status hkb_launch(hkb_function fn, const hkb_launch_config* config, hkb_stream stream,
                              void* const* args, const size_t* arg_sizes, size_t num_args);

/* Creates a stream on the context's device; destroy it with hkb_stream_destroy. */
HKB_API hkb_status hkb_stream_create(hkb_context ctx, hkb_stream* stream);
/* Destroys a stream and frees its handle, also after hkb_shutdown (then it only frees). */
HKB_API hkb_status hkb_stream_destroy(hkb_stream stream);
/* Waits for all work queued on the stream. */
HKB_API hkb_status hkb_stream_synchronize(hkb_stream stream);

/* Device memory, so host programs and tests need no HIP/CUDA headers. Zero bytes gives address 0.
 */
/* Allocates `bytes` of device memory on the context's device. */
HKB_API hkb_status hkb_malloc(hkb_context ctx, size_t bytes, hkb_devptr* ptr);
/* Frees memory from hkb_malloc; address 0 is accepted and does nothing. */
HKB_API hkb_status hkb_free(hkb_context ctx, hkb_devptr ptr);
/* Copies `bytes` from host memory to the device (synchronous). */
HKB_API hkb_status hkb_memcpy_htod(hkb_context ctx, hkb_devptr dst, const void* src, size_t bytes);
/* Copies `bytes` from the device to host memory (synchronous). */
HKB_API hkb_status hkb_memcpy_dtoh(hkb_context ctx, void* dst, hkb_devptr src, size_t bytes);
/* Copies `bytes` between two device buffers of the context's device. */
HKB_API hkb_status hkb_memcpy_dtod(hkb_context ctx, hkb_devptr dst, hkb_devptr src, size_t bytes);
/* Sets `bytes` bytes of device memory to `value`. */
HKB_API hkb_status hkb_memset_d8(hkb_context ctx, hkb_devptr dst, uint8_t value, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* HKB_H */
