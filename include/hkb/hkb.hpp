// hkb C++ API: a header-only layer over the C ABI (hkb.h), so the shared library exports only
// `hkb_` symbols. Failures throw hkb::Error carrying the status and the library's message.
#pragma once

#include <hkb/hkb.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace hkb {

class Error : public std::runtime_error {
 public:
  Error(hkb_status status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  hkb_status status() const noexcept { return status_; }

 private:
  hkb_status status_;
};

inline void check(hkb_status status) {
  if (status != HKB_SUCCESS) {
    throw Error(status, std::string(hkb_status_string(status)) + ": " + hkb_last_error());
  }
}

// Host-side storage of the reduced-precision dtypes, layout-identical to the kernels' arguments
// (candle passes __half/__nv_bfloat16/__nv_fp8_e4m3 by value as 2/2/1 bytes).
struct f16 {
  uint16_t bits;
};
struct bf16 {
  uint16_t bits;
};
struct f8e4m3 {
  uint8_t bits;
};

// Launch geometry. for_num_elems matches cudarc's LaunchConfig::for_num_elems exactly.
struct LaunchConfig {
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t shared_mem_bytes = 0;

  static LaunchConfig for_num_elems(uint32_t n) {
    const hkb_launch_config c = hkb_launch_config_for_num_elems(n);
    LaunchConfig cfg;
    std::memcpy(cfg.grid, c.grid, sizeof(cfg.grid));
    std::memcpy(cfg.block, c.block, sizeof(cfg.block));
    cfg.shared_mem_bytes = c.shared_mem_bytes;
    return cfg;
  }
  static LaunchConfig make(uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by,
                           uint32_t bz, uint32_t shared = 0) {
    LaunchConfig cfg;
    cfg.grid[0] = gx, cfg.grid[1] = gy, cfg.grid[2] = gz;
    cfg.block[0] = bx, cfg.block[1] = by, cfg.block[2] = bz;
    cfg.shared_mem_bytes = shared;
    return cfg;
  }
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
  static constexpr size_t kMaxArgs = 32;
  static constexpr size_t kMaxArgBytes = 16;

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
  size_t size() const noexcept { return count_; }
  void* const* pointers() const noexcept { return ptrs_; }
  const size_t* sizes() const noexcept { return sizes_; }

  // Copying would leave pointers into the source's storage.
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

class Stream {
 public:
  Stream() = default;  // the default stream
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
  void synchronize() const { check(hkb_stream_synchronize(s_)); }
  hkb_stream get() const noexcept { return s_; }

 private:
  hkb_stream s_ = nullptr;
};

class Function {
 public:
  Function() = default;
  explicit Function(hkb_function fn) : fn_(fn) {}
  void launch(const LaunchConfig& cfg, const LaunchArgs& args, hkb_stream stream = nullptr) const {
    const hkb_launch_config c = cfg.raw();
    check(hkb_launch(fn_, &c, stream, args.pointers(), args.sizes(), args.size()));
  }
  std::string name() const { return hkb_function_name(fn_); }
  size_t num_params() const { return hkb_function_num_params(fn_); }
  hkb_function get() const noexcept { return fn_; }

 private:
  hkb_function fn_ = nullptr;
};

// Owning device allocation of `n` elements of T.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
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

  void upload(const std::vector<T>& host) {
    if (host.size() != n_) throw Error(HKB_ERROR_INVALID_ARGUMENT, "upload: size mismatch");
    check(hkb_memcpy_htod(ctx_, ptr_, host.data(), n_ * sizeof(T)));
  }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    check(hkb_memcpy_dtoh(ctx_, host.data(), ptr_, n_ * sizeof(T)));
    return host;
  }
  // Device address of element `i` (candle passes views as base pointer plus start offset).
  hkb_devptr ptr(size_t i = 0) const noexcept { return ptr_ + i * sizeof(T); }
  size_t size() const noexcept { return n_; }

 private:
  hkb_context ctx_ = nullptr;
  hkb_devptr ptr_ = 0;
  size_t n_ = 0;
};

class Device {
 public:
  static int count() {
    int n = 0;
    check(hkb_device_count(&n));
    return n;
  }
  explicit Device(int ordinal = 0) { check(hkb_context_get(ordinal, &ctx_)); }

  std::string target() const {
    char buf[256];
    check(hkb_context_target(ctx_, buf, sizeof(buf)));
    return buf;
  }
  int ordinal() const {
    int o = -1;
    check(hkb_context_ordinal(ctx_, &o));
    return o;
  }
  Function function(const char* name) const {
    hkb_function fn = nullptr;
    check(hkb_function_get(ctx_, name, &fn));
    return Function(fn);
  }
  Function function(const std::string& name) const { return function(name.c_str()); }
  template <typename T>
  DeviceBuffer<T> alloc(size_t n) const {
    return DeviceBuffer<T>(ctx_, n);
  }
  template <typename T>
  DeviceBuffer<T> upload(const std::vector<T>& host) const {
    DeviceBuffer<T> buf(ctx_, host.size());
    buf.upload(host);
    return buf;
  }
  Stream create_stream() const { return Stream(ctx_); }
  void synchronize() const { check(hkb_context_synchronize(ctx_)); }
  hkb_context get() const noexcept { return ctx_; }

 private:
  hkb_context ctx_ = nullptr;
};

}  // namespace hkb
