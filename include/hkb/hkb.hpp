// hkb C++ API: a header-only layer over the C ABI (hkb.h), so the shared library exports only
// `hkb_` symbols. Failures throw hkb::Error carrying the status and the library's message.
// Requires C++17 (the CMake target hkb::hkb asks for it).
#pragma once

#if __cplusplus < 201703L
#error "hkb.hpp requires C++17 or later (-std=c++17)"
#endif

#include <hkb/hkb.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace hkb {

// A failed call: the C ABI's status and its message (what() is "HKB_ERROR_...: message").
class Error : public std::runtime_error {
 public:
  // An error with `status` and `message`.
  Error(hkb_status status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  // The status the failing call returned.
  hkb_status status() const noexcept { return status_; }

 private:
  hkb_status status_;
};

// Throws Error with hkb_last_error()'s message unless `status` is HKB_SUCCESS.
inline void check(hkb_status status) {
  if (status != HKB_SUCCESS) {
    throw Error(status, std::string(hkb_status_string(status)) + ": " + hkb_last_error());
  }
}

// Host-side storage of the reduced-precision dtypes, layout-identical to the kernels' arguments
// (candle passes __half/__nv_bfloat16/__nv_fp8_e4m3 by value as 2/2/1 bytes).
// IEEE half precision, as raw bits.
struct f16 {
  uint16_t bits;  // sign, 5 exponent, 10 mantissa bits
};
// bfloat16, as raw bits.
struct bf16 {
  uint16_t bits;  // sign, 8 exponent, 7 mantissa bits
};
// FP8 E4M3 (finite, no infinities), as raw bits.
struct f8e4m3 {
  uint8_t bits;  // sign, 4 exponent, 3 mantissa bits
};

class Function;

// Launch geometry. for_num_elems matches cudarc's LaunchConfig::for_num_elems exactly.
struct LaunchConfig {
  uint32_t grid[3] = {1, 1, 1};   // blocks in x, y, z
  uint32_t block[3] = {1, 1, 1};  // threads per block in x, y, z
  uint32_t shared_mem_bytes = 0;  // dynamic shared memory per block

  // Block (1024,1,1), grid (ceil(n/1024),1,1), as cudarc.
  static LaunchConfig for_num_elems(uint32_t n) {
    return from_raw(hkb_launch_config_for_num_elems(n));
  }
  // hkb's fastest launch of `n` elements of `fn` on its device (hkb_launch_config_tuned: a block
  // per two 16-byte packs a thread for the elementwise kernels, candle's for_num_elems where hkb
  // has no better one). Throws Error (HKB_ERROR_INVALID_ARGUMENT) for kernels candle does not size
  // by an element count.
  static LaunchConfig tuned(const Function& fn, uint64_t n);
  // The C ABI's struct as a LaunchConfig.
  static LaunchConfig from_raw(const hkb_launch_config& c) {
    LaunchConfig cfg;
    std::memcpy(cfg.grid, c.grid, sizeof(cfg.grid));
    std::memcpy(cfg.block, c.block, sizeof(cfg.block));
    cfg.shared_mem_bytes = c.shared_mem_bytes;
    return cfg;
  }
  // Grid (gx,gy,gz), block (bx,by,bz) and `shared` bytes of dynamic shared memory.
  static LaunchConfig make(uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by,
                           uint32_t bz, uint32_t shared = 0) {
    LaunchConfig cfg;
    cfg.grid[0] = gx, cfg.grid[1] = gy, cfg.grid[2] = gz;
    cfg.block[0] = bx, cfg.block[1] = by, cfg.block[2] = bz;
    cfg.shared_mem_bytes = shared;
    return cfg;
  }
  // The C ABI's struct.
  hkb_launch_config raw() const {
    hkb_launch_config c;
    std::memcpy(c.grid, grid, sizeof(grid));
    std::memcpy(c.block, block, sizeof(block));
    c.shared_mem_bytes = shared_mem_bytes;
    return c;
  }
};

// Argument builder in the style of cudarc's `.arg(&x)`: keeps a host copy of each argument in
// inline storage (no allocation) and hands the library a pointer to each copy.
class LaunchArgs {
 public:
  static constexpr size_t kMaxArgs = 32;      // arguments per launch
  static constexpr size_t kMaxArgBytes = 16;  // bytes per argument

  // Appends a copy of `value`; throws Error past kMaxArgs arguments.
  template <typename T>
  LaunchArgs& arg(const T& value) {
    static_assert(std::is_trivially_copyable<T>::value, "kernel arguments are copied bytewise");
    static_assert(sizeof(T) <= kMaxArgBytes, "kernel argument too large");
    if (count_ == kMaxArgs) throw Error(HKB_ERROR_ARGUMENT_MISMATCH, "more than 32 arguments");
    std::memcpy(storage_[count_].bytes, &value, sizeof(T));
    sizes_[count_] = sizeof(T);
    ptrs_[count_] = storage_[count_].bytes;
    ++count_;
    return *this;
  }
  // Number of arguments added.
  size_t size() const noexcept { return count_; }
  // Pointers to the host copies, for hkb_launch's `args`.
  void* const* pointers() const noexcept { return ptrs_; }
  // Byte sizes of the arguments, for hkb_launch's `arg_sizes`.
  const size_t* sizes() const noexcept { return sizes_; }

  // No arguments yet. Copying would leave pointers into the source's storage, so it is deleted.
  LaunchArgs() = default;
  LaunchArgs(const LaunchArgs&) = delete;
  LaunchArgs& operator=(const LaunchArgs&) = delete;

 private:
  struct alignas(16) Slot {
    unsigned char bytes[kMaxArgBytes];
  };
  Slot storage_[kMaxArgs];
  void* ptrs_[kMaxArgs] = {};
  size_t sizes_[kMaxArgs] = {};
  size_t count_ = 0;
};

// An owned stream (destroyed with the object), or the default stream.
class Stream {
 public:
  Stream() = default;  // the default stream
  // A new stream on the context's device.
  explicit Stream(hkb_context ctx) { check(hkb_stream_create(ctx, &s_)); }
  ~Stream() {
    if (s_ != nullptr) hkb_stream_destroy(s_);
  }
  Stream(Stream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  Stream& operator=(Stream&& o) noexcept {
    std::swap(s_, o.s_);
    return *this;
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  // Waits for the stream's work.
  void synchronize() const { check(hkb_stream_synchronize(s_)); }
  // The C handle (nullptr: the default stream).
  hkb_stream get() const noexcept { return s_; }

 private:
  hkb_stream s_ = nullptr;
};

// A kernel on one device (a handle owned by the library; copying is free).
class Function {
 public:
  Function() = default;
  // Wraps a handle from hkb_function_get.
  explicit Function(hkb_function fn) : fn_(fn) {}
  // Launches with `args` checked against the kernel's signature; on `stream` or the default one.
  void launch(const LaunchConfig& cfg, const LaunchArgs& args, hkb_stream stream = nullptr) const {
    const hkb_launch_config c = cfg.raw();
    check(hkb_launch(fn_, &c, stream, args.pointers(), args.sizes(), args.size()));
  }
  // The kernel's name.
  std::string name() const { return hkb_function_name(fn_); }
  // Number of parameters in its signature.
  size_t num_params() const { return hkb_function_num_params(fn_); }
  // The C handle.
  hkb_function get() const noexcept { return fn_; }

 private:
  hkb_function fn_ = nullptr;
};

inline LaunchConfig LaunchConfig::tuned(const Function& fn, uint64_t n) {
  hkb_launch_config c;
  check(hkb_launch_config_tuned(fn.get(), n, &c));
  return from_raw(c);
}

// Owning device allocation of `n` elements of T.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;  // empty, address 0
  // Allocates `n` elements on the context's device.
  DeviceBuffer(hkb_context ctx, size_t n) : ctx_(ctx), n_(n) {
    check(hkb_malloc(ctx, n * sizeof(T), &ptr_));
  }
  ~DeviceBuffer() {
    if (ptr_ != 0) hkb_free(ctx_, ptr_);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ctx_(o.ctx_), ptr_(std::exchange(o.ptr_, 0)), n_(std::exchange(o.n_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ctx_, o.ctx_);
    std::swap(ptr_, o.ptr_);
    std::swap(n_, o.n_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // Copies `host` (exactly size() elements) to the device.
  void upload(const std::vector<T>& host) {
    if (host.size() != n_) throw Error(HKB_ERROR_INVALID_ARGUMENT, "upload: size mismatch");
    check(hkb_memcpy_htod(ctx_, ptr_, host.data(), n_ * sizeof(T)));
  }
  // Copies the buffer back to the host.
  std::vector<T> download() const {
    std::vector<T> host(n_);
    check(hkb_memcpy_dtoh(ctx_, host.data(), ptr_, n_ * sizeof(T)));
    return host;
  }
  // Device address of element `i` (candle passes views as base pointer plus start offset).
  hkb_devptr ptr(size_t i = 0) const noexcept { return ptr_ + i * sizeof(T); }
  // Number of elements.
  size_t size() const noexcept { return n_; }

 private:
  hkb_context ctx_ = nullptr;
  hkb_devptr ptr_ = 0;
  size_t n_ = 0;
};

// A GPU: its context (owned by the library), kernels, memory and streams.
class Device {
 public:
  // Number of GPUs present (0 without one).
  static int count() {
    int n = 0;
    check(hkb_device_count(&n));
    return n;
  }
  // The device `ordinal`; throws Error (HKB_ERROR_NO_DEVICE) if there is none.
  explicit Device(int ordinal = 0) { check(hkb_context_get(ordinal, &ctx_)); }

  // Full target ID ("gfx90a:sramecc+:xnack-", "sm_90").
  std::string target() const {
    char buf[256];
    check(hkb_context_target(ctx_, buf, sizeof(buf)));
    return buf;
  }
  // The device ordinal.
  int ordinal() const {
    int o = -1;
    check(hkb_context_ordinal(ctx_, &o));
    return o;
  }
  // The kernel `name`; loads its module on first use. Throws with the nearest names if unknown.
  Function function(const char* name) const {
    hkb_function fn = nullptr;
    check(hkb_function_get(ctx_, name, &fn));
    return Function(fn);
  }
  // As function(const char*).
  Function function(const std::string& name) const { return function(name.c_str()); }
  // An uninitialised buffer of `n` elements.
  template <typename T>
  DeviceBuffer<T> alloc(size_t n) const {
    return DeviceBuffer<T>(ctx_, n);
  }
  // A buffer holding a copy of `host`.
  template <typename T>
  DeviceBuffer<T> upload(const std::vector<T>& host) const {
    DeviceBuffer<T> buf(ctx_, host.size());
    buf.upload(host);
    return buf;
  }
  // A new stream on this device.
  Stream create_stream() const { return Stream(ctx_); }
  // Waits for all work on this device.
  void synchronize() const { check(hkb_context_synchronize(ctx_)); }
  // Multiprocessors the kernels split their work over (hkb_context_multiprocessors).
  uint32_t multiprocessors() const {
    uint32_t n = 0;
    check(hkb_context_multiprocessors(ctx_, &n));
    return n;
  }
  // Sets that count; 0 restores the default (hkb_context_set_multiprocessors).
  void set_multiprocessors(uint32_t count) const {
    check(hkb_context_set_multiprocessors(ctx_, count));
  }
  // The C handle.
  hkb_context get() const noexcept { return ctx_; }

 private:
  hkb_context ctx_ = nullptr;
};

}  // namespace hkb
