// CPU platform (included by platform.h under -DHKB_PLATFORM_CPU -DHKB_WAVE_SIZE=64|32): runs the
// kernels' AMD code path on the host, so logic that depends on the wave width executes at 64
// (CDNA) and at 32 (RDNA) on the host (fibers: platform_cpu_fiber.h). Every GPU thread is a fiber;
// a block's fibers run on one host thread, round-robin, until each finishes or waits: at
// __syncthreads all threads of the block meet, at every cross-lane operation all lanes of the wave
// meet (lockstep). Blocks run one after another, so `__shared__` is thread_local storage: one block
// at a time per host thread.
#pragma once

#if !defined(HKB_WAVE_SIZE) || (HKB_WAVE_SIZE != 64 && HKB_WAVE_SIZE != 32)
#error "the CPU platform needs -DHKB_WAVE_SIZE=64 (CDNA) or -DHKB_WAVE_SIZE=32 (RDNA)"
#endif
#if !defined(HKB_MULTIPROCESSORS)
#error "the CPU platform needs -DHKB_MULTIPROCESSORS=<compute units of the target it stands for>"
#endif

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <utility>

#include "platform_cpu_fiber.h"

// CUDA/HIP qualifiers: a host function is all of them. __noinline__ becomes nothing so that the
// C library's own __attribute__((__noinline__)) stays valid (inlining never changes results).
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __shared__ thread_local

struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
};
struct alignas(8) uint2 {
  unsigned x, y;
};
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
struct alignas(16) float4 {
  float x, y, z, w;
};
inline float4 make_float4(float x, float y, float z, float w) {
  return float4{x, y, z, w};
}
inline uint2 make_uint2(unsigned x, unsigned y) {
  return uint2{x, y};
}
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) {
  return uint4{x, y, z, w};
}

// The running fiber's indices; the scheduler sets them before it resumes a fiber.
inline thread_local uint3 threadIdx;
inline thread_local uint3 blockIdx;
inline thread_local dim3 blockDim;
inline thread_local dim3 gridDim;

// Bit casts and integer intrinsics.
inline unsigned __float_as_uint(float f) {
  unsigned u;
  memcpy(&u, &f, 4);
  return u;
}
inline float __uint_as_float(unsigned u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
inline int __float_as_int(float f) {
  return static_cast<int>(__float_as_uint(f));
}
inline float __int_as_float(int i) {
  return __uint_as_float(static_cast<unsigned>(i));
}
inline long long __double_as_longlong(double d) {
  long long u;
  memcpy(&u, &d, 8);
  return u;
}
inline double __longlong_as_double(long long u) {
  double d;
  memcpy(&d, &u, 8);
  return d;
}
inline int __clz(int x) {
  return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x));
}
inline int __clzll(long long x) {
  return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x));
}
inline int __popc(unsigned x) {
  return __builtin_popcount(x);
}
inline int __popcll(unsigned long long x) {
  return __builtin_popcountll(x);
}
inline int __ffs(int x) {
  return __builtin_ffs(x);
}
inline int __ffsll(long long x) {
  return __builtin_ffsll(x);
}
// Byte i of the result is byte (s >> 4i) & 7 of the 8 bytes {y, x} (x the low four).
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const uint64_t both = (static_cast<uint64_t>(y) << 32) | x;
  unsigned r = 0;
  for (int i = 0; i < 4; ++i)
    r |= static_cast<unsigned>((both >> (8 * ((s >> (4 * i)) & 7u))) & 0xFFu) << (8 * i);
  return r;
}
// AMD's v_perm_b32: byte i of the result by byte i of s over the 8 bytes {a, b} (b the low four):
// 0..7 that byte, 8..11 the sign of byte 1, 3, 5 or 7 replicated, 12 zero, 13 and above 0xFF.
inline unsigned __builtin_amdgcn_perm(unsigned a, unsigned b, unsigned s) {
  const uint64_t both = (static_cast<uint64_t>(a) << 32) | b;
  unsigned r = 0;
  for (int i = 0; i < 4; ++i) {
    const unsigned sel = (s >> (8 * i)) & 0xFFu;
    unsigned byte = 0xFFu;
    if (sel < 8) {
      byte = static_cast<unsigned>(both >> (8 * sel)) & 0xFFu;
    } else if (sel < 12) {
      byte = ((both >> (16 * (sel - 8) + 15)) & 1u) ? 0xFFu : 0u;
    } else if (sel == 12) {
      byte = 0;
    }
    r |= byte << (8 * i);
  }
  return r;
}
inline float __fdividef(float a, float b) {
  return a / b;
}
inline float rsqrtf(float x) {
  return 1.0f / std::sqrt(x);
}
inline float __expf(float x) {
  return expf(x);
}

// CUDA's global min/max overloads.
#define HKB_CPU_MINMAX(T)  \
  inline T min(T a, T b) { \
    return b < a ? b : a;  \
  }                        \
  inline T max(T a, T b) { \
    return a < b ? b : a;  \
  }
HKB_CPU_MINMAX(int)
HKB_CPU_MINMAX(unsigned)
HKB_CPU_MINMAX(long)
HKB_CPU_MINMAX(unsigned long)
HKB_CPU_MINMAX(long long)
HKB_CPU_MINMAX(unsigned long long)
#undef HKB_CPU_MINMAX
inline float min(float a, float b) {
  return fminf(a, b);
}
inline float max(float a, float b) {
  return fmaxf(a, b);
}
inline double min(double a, double b) {
  return fmin(a, b);
}
inline double max(double a, double b) {
  return fmax(a, b);
}

// Atomics: every fiber of a launch runs on one host thread, but launches on other host threads
// may run at the same time, so these are real atomic operations.
template <typename T>
inline T hkb_cpu_atomic_float_add(T* p, T v) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  U* w = reinterpret_cast<U*>(p);
  U seen = __atomic_load_n(w, __ATOMIC_RELAXED);
  for (;;) {
    T cur;
    memcpy(&cur, &seen, sizeof(T));
    const T next = cur + v;
    U desired;
    memcpy(&desired, &next, sizeof(T));
    if (__atomic_compare_exchange_n(w, &seen, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
      return cur;
  }
}
inline float atomicAdd(float* p, float v) {
  return hkb_cpu_atomic_float_add(p, v);
}
inline double atomicAdd(double* p, double v) {
  return hkb_cpu_atomic_float_add(p, v);
}
// Integer forms: the value arguments take the pointer's type (CUDA's fixed overloads convert).
template <typename T>
using hkb_cpu_int_t = std::enable_if_t<std::is_integral_v<T>, T>;
template <typename T>
inline T atomicAdd(T* p, hkb_cpu_int_t<T> v) {
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
template <typename T>
inline T atomicCAS(T* p, hkb_cpu_int_t<T> expected, hkb_cpu_int_t<T> desired) {
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return expected;
}

namespace hkb_cpu {

constexpr uint32_t kWave = HKB_WAVE_SIZE;
constexpr uint32_t kMaxThreads = 1024;
constexpr uint32_t kSharedLimit = 64u * 1024u;  // AMD's LDS per workgroup
constexpr size_t kStackBytes = 256u * 1024u;
constexpr size_t kGuardBytes = 4096;

struct Fiber {
  FiberContext ctx;
  uint3 tid;
  bool done;
};

// Where a lane of a wave is: running, at a cross-lane operation, at __syncthreads, exited, or
// absent (past the block's last thread).
enum LaneState : uint8_t { kRunning, kAtOp, kAtBarrier, kExited, kAbsent };

// A cross-lane operation completes once every live lane of the wave waits (at an operation or at
// the barrier): lanes at the same call site form a group, and a group whose lanes read only its own
// lanes proceeds; a read of any other lane is an error (on AMD such a lane is inactive).
struct Wave {
  uint32_t live, at_op, at_barrier;
  uint8_t state[kWave];
  int32_t src[kWave];       // the lane each waiting lane reads
  const void* site[kWave];  // the operation's call site: converged lanes share it
  uint64_t value[kWave];    // what each waiting lane offers
  uint64_t result[kWave];   // what each released lane read
};

// One block in flight on this host thread.
struct Block {
  Fiber fibers[kMaxThreads];
  Wave waves[kMaxThreads / kWave];
  uint32_t threads, live, arrived, gen;
  uint64_t progress;  // arrivals and exits; a round with none is a deadlock
  FiberContext sched;
  Fiber* current;
  void (*invoke)(void**);
  void** params;
  const char* error;
  char message[256];  // a failure's text, formatted where it is found
};

inline thread_local Block* t_block = nullptr;
inline thread_local char* t_stacks = nullptr;

inline void yield() {
  Block& b = *t_block;
  fiber_switch(&b.current->ctx, &b.sched);
}

// Stops the launch with a message (a broken platform contract); this fiber never resumes.
[[noreturn]] inline void fail(const char* message) {
  t_block->error = message;
  yield();
  __builtin_trap();
}

inline uint32_t linear_tid() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

inline const char* lane_state_words(uint8_t state) {
  switch (state) {
    case kExited:
      return "has exited";
    case kAtBarrier:
      return "waits at __syncthreads";
    case kAbsent:
      return "does not exist (past the block's last thread)";
    default:
      return "waits at another cross-lane operation (divergent lanes)";
  }
}

// Runs once every live lane of `w` waits (see Wave); releases the groups that read only their own
// lanes, or fails the launch if none does.
inline void wave_resolve(Wave& w, uint32_t wave) {
  if (w.at_op == 0 || w.at_op + w.at_barrier != w.live) return;
  const void* bad_sites[kWave];
  uint32_t bad = 0, first_bad = kWave;
  for (uint32_t l = 0; l < kWave; ++l) {
    if (w.state[l] != kAtOp) continue;
    const uint32_t s = static_cast<uint32_t>(w.src[l]) % kWave;
    if (s == l || (w.state[s] == kAtOp && w.site[s] == w.site[l])) continue;
    if (first_bad == kWave) first_bad = l;
    bad_sites[bad++] = w.site[l];
  }
  bool released = false;
  for (uint32_t l = 0; l < kWave; ++l) {
    if (w.state[l] != kAtOp || std::find(bad_sites, bad_sites + bad, w.site[l]) != bad_sites + bad)
      continue;
    w.result[l] = w.value[static_cast<uint32_t>(w.src[l]) % kWave];
    released = true;
  }
  if (!released) {
    Block& b = *t_block;
    const uint32_t s = static_cast<uint32_t>(w.src[first_bad]) % kWave;
    snprintf(b.message, sizeof b.message,
             "wave %u: lane %u reads lane %u at a cross-lane operation, but lane %u %s; every "
             "lane it reads must take part (platform.h)",
             wave, first_bad, s, s, lane_state_words(w.state[s]));
    fail(b.message);
  }
  for (uint32_t l = 0; l < kWave; ++l) {
    if (w.state[l] != kAtOp || std::find(bad_sites, bad_sites + bad, w.site[l]) != bad_sites + bad)
      continue;
    w.state[l] = kRunning;
    --w.at_op;
  }
}

// Every live thread of the block has arrived at __syncthreads: all go on.
inline void release_barrier(Block& b) {
  b.arrived = 0;
  ++b.gen;
  for (uint32_t w = 0; w * kWave < b.threads; ++w) {
    Wave& wave = b.waves[w];
    wave.at_barrier = 0;
    for (uint32_t l = 0; l < kWave; ++l)
      if (wave.state[l] == kAtBarrier) wave.state[l] = kRunning;
  }
}

inline void block_barrier() {
  Block& b = *t_block;
  const uint32_t tid = linear_tid();
  const uint32_t gen = b.gen;
  ++b.progress;
  if (++b.arrived == b.live) {
    release_barrier(b);
    return;
  }
  Wave& w = b.waves[tid / kWave];
  w.state[tid % kWave] = kAtBarrier;
  ++w.at_barrier;
  wave_resolve(w, tid / kWave);  // lanes at an operation may have waited for this one
  while (b.gen == gen) yield();
}

// The caller's lane offers `bits` and reads lane `src` (mod the wave size) once the lanes of its
// group have met. Not inlined: its return address names the call site (converged lanes share it).
__attribute__((noinline)) inline uint64_t wave_exchange(uint64_t bits, int src) {
  Block& b = *t_block;
  const uint32_t tid = linear_tid();
  const uint32_t lane = tid % kWave;
  Wave& w = b.waves[tid / kWave];
  w.value[lane] = bits;
  w.src[lane] = src;
  w.site[lane] = __builtin_return_address(0);
  w.state[lane] = kAtOp;
  ++w.at_op;
  ++b.progress;
  wave_resolve(w, tid / kWave);
  while (w.state[lane] == kAtOp) yield();
  return w.result[lane];
}

extern "C" [[noreturn]] __attribute__((used, visibility("hidden"))) inline void
hkb_cpu_fiber_main() {
  Block& b = *t_block;
  b.invoke(b.params);
  // An exited thread no longer holds back the barriers its block and wave wait at.
  Fiber& f = *b.current;
  f.done = true;
  ++b.progress;
  const uint32_t tid = linear_tid();
  Wave& w = b.waves[tid / kWave];
  w.state[tid % kWave] = kExited;
  --w.live;
  wave_resolve(w, tid / kWave);
  --b.live;
  if (b.arrived > 0 && b.arrived == b.live) release_barrier(b);
  yield();
  __builtin_trap();
}

template <typename T>
__attribute__((always_inline)) inline T exchange_read(T v, int src) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>, "lanes exchange <= 8 bytes");
  uint64_t bits = 0;
  memcpy(&bits, &v, sizeof(T));
  bits = wave_exchange(bits, src);
  T r;
  memcpy(&r, &bits, sizeof(T));
  return r;
}

inline void check_width(int width) {
  if (width <= 0 || width > static_cast<int>(kWave) || (width & (width - 1)) != 0)
    fail("a cross-lane operation's width is not a power of two <= the wave size");
}

inline char* stack_top(uint32_t i) {
  return t_stacks + (i + 1) * (kStackBytes + kGuardBytes);
}

// Stacks of this host thread: one per thread of a block, each above a guard page.
inline bool ensure_stacks() {
  if (t_stacks != nullptr) return true;
  const size_t bytes = kMaxThreads * (kStackBytes + kGuardBytes);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  char* base = static_cast<char*>(p);
  for (uint32_t i = 0; i < kMaxThreads; ++i)
    mprotect(base + i * (kStackBytes + kGuardBytes), kGuardBytes, PROT_NONE);
  t_stacks = base;
  return true;
}

// Runs every thread of the current block; nullptr or the reason it failed.
inline const char* run_block(Block& b, dim3 block) {
  b.live = b.threads;
  b.arrived = 0;
  b.error = nullptr;
  for (uint32_t w = 0; w * kWave < b.threads; ++w) {
    Wave& wave = b.waves[w];
    wave.live = std::min(kWave, b.threads - w * kWave);
    wave.at_op = wave.at_barrier = 0;
    for (uint32_t l = 0; l < kWave; ++l) wave.state[l] = l < wave.live ? kRunning : kAbsent;
  }
  uint32_t i = 0;
  for (uint32_t z = 0; z < block.z; ++z)
    for (uint32_t y = 0; y < block.y; ++y)
      for (uint32_t x = 0; x < block.x; ++x, ++i) {
        Fiber& f = b.fibers[i];
        f.tid = uint3{x, y, z};
        f.done = false;
        fiber_make(&f.ctx, stack_top(i) - kStackBytes, kStackBytes, &hkb_cpu_fiber_main);
      }
  for (;;) {
    const uint64_t before = b.progress;
    bool pending = false;
    for (uint32_t t = 0; t < b.threads; ++t) {
      Fiber& f = b.fibers[t];
      if (f.done) continue;
      b.current = &f;
      threadIdx = f.tid;
      fiber_switch(&b.sched, &f.ctx);
      if (b.error != nullptr) return b.error;
      pending |= !f.done;
    }
    if (!pending) return nullptr;
    if (b.progress == before) {
      return "deadlock: threads of a block wait at different barriers or cross-lane operations "
             "(or at one that some threads of the block or wave never reach)";
    }
  }
}

// A host thread's block state, kept between launches in thread-local storage: nothing on the heap
// to leak, and no thread-exit destructor, which would keep the module loaded past its dlclose.
static_assert(std::is_trivially_destructible_v<Block>);
inline thread_local Block t_block_storage;

// Launches `invoke` (a kernel's parameter unpacker) over the grid. 0, or -1 with `err` filled.
inline int launch(void (*invoke)(void**), const uint32_t* grid, const uint32_t* block,
                  uint32_t shared, void** params, char* err, size_t err_size) {
  const uint64_t threads = uint64_t{block[0]} * block[1] * block[2];
  if (threads == 0 || threads > kMaxThreads) {
    snprintf(err, err_size, "block of %llu threads (1 to %u)",
             static_cast<unsigned long long>(threads), kMaxThreads);
    return -1;
  }
  if (shared > kSharedLimit) {
    snprintf(err, err_size, "%u bytes of dynamic shared memory exceed AMD's %u per block", shared,
             kSharedLimit);
    return -1;
  }
  if (!ensure_stacks()) {
    snprintf(err, err_size, "cannot map fiber stacks");
    return -1;
  }
  Block& b = t_block_storage;
  Block* outer = t_block;
  t_block = &b;
  b.threads = static_cast<uint32_t>(threads);
  b.invoke = invoke;
  b.params = params;
  blockDim = dim3{block[0], block[1], block[2]};
  gridDim = dim3{grid[0], grid[1], grid[2]};
  int rc = 0;
  for (uint32_t z = 0; z < grid[2] && rc == 0; ++z)
    for (uint32_t y = 0; y < grid[1] && rc == 0; ++y)
      for (uint32_t x = 0; x < grid[0] && rc == 0; ++x) {
        blockIdx = uint3{x, y, z};
        if (const char* e = run_block(b, blockDim)) {
          snprintf(err, err_size, "block (%u,%u,%u): %s", x, y, z, e);
          rc = -1;
        }
      }
  t_block = outer;
  return rc;
}

// Calls a kernel with its arguments unpacked from kernelParams (pointers to host copies).
template <typename... A, size_t... I>
inline void call_with(void (*kernel)(A...), void** p, std::index_sequence<I...>) {
  kernel(*static_cast<std::remove_cv_t<std::remove_reference_t<A>>*>(p[I])...);
}
template <typename... A>
inline void call(void (*kernel)(A...), void** p) {
  call_with(kernel, p, std::index_sequence_for<A...>{});
}

}  // namespace hkb_cpu

inline void __syncthreads() {
  hkb_cpu::block_barrier();
}
inline unsigned __lane_id() {
  return hkb_cpu::linear_tid() % hkb_cpu::kWave;
}
// The dispatch's work items and work-group size per dimension, as AMD's device library reads them.
inline size_t __ockl_get_global_size(unsigned d) {
  return d == 0 ? gridDim.x * blockDim.x : d == 1 ? gridDim.y * blockDim.y : gridDim.z * blockDim.z;
}
inline size_t __ockl_get_enqueued_local_size(unsigned d) {
  return d == 0 ? blockDim.x : d == 1 ? blockDim.y : blockDim.z;
}

// HIP's cross-lane operations (the AMD code path of platform.h calls them), with HIP's rules for
// lanes outside the caller's group of `width`.
template <typename T>
__attribute__((always_inline)) inline T __shfl_xor(T v, int lane_mask, int width = hkb_cpu::kWave) {
  hkb_cpu::check_width(width);
  const int self = static_cast<int>(__lane_id());
  int src = self ^ lane_mask;
  if (src >= ((self + width) & ~(width - 1))) src = self;
  return hkb_cpu::exchange_read(v, src);
}
template <typename T>
__attribute__((always_inline)) inline T __shfl_down(T v, unsigned delta,
                                                    int width = hkb_cpu::kWave) {
  hkb_cpu::check_width(width);
  const int self = static_cast<int>(__lane_id());
  const int src = (self & (width - 1)) + static_cast<int>(delta) >= width
                      ? self
                      : self + static_cast<int>(delta);
  return hkb_cpu::exchange_read(v, src);
}
template <typename T>
__attribute__((always_inline)) inline T __shfl_up(T v, unsigned delta, int width = hkb_cpu::kWave) {
  hkb_cpu::check_width(width);
  const int self = static_cast<int>(__lane_id());
  const int src = self - static_cast<int>(delta) < (self & ~(width - 1))
                      ? self
                      : self - static_cast<int>(delta);
  return hkb_cpu::exchange_read(v, src);
}
template <typename T>
__attribute__((always_inline)) inline T __shfl(T v, int src_lane, int width = hkb_cpu::kWave) {
  hkb_cpu::check_width(width);
  const int self = static_cast<int>(__lane_id());
  return hkb_cpu::exchange_read(v, src_lane + (self & ~(width - 1)));
}

// The module's launch entry and one parameter unpacker per kernel, named from the manifest by the
// build (cmake/HkbKernels.cmake): HKB_CPU_KERNEL(affine_f32) ...
#define HKB_CPU_EXPORT extern "C" __attribute__((visibility("default")))
#define HKB_CPU_MODULE                                                                     \
  HKB_CPU_EXPORT int hkb_cpu_launch(void (*invoke)(void**), const uint32_t* grid,          \
                                    const uint32_t* block, uint32_t shared, void** params, \
                                    char* err, size_t err_size) {                          \
    return hkb_cpu::launch(invoke, grid, block, shared, params, err, err_size);            \
  }                                                                                        \
  HKB_CPU_EXPORT uint32_t hkb_cpu_wave_size() {                                            \
    return HKB_WAVE_SIZE;                                                                  \
  }                                                                                        \
  HKB_CPU_EXPORT uint32_t hkb_cpu_shared_limit() {                                         \
    return hkb_cpu::kSharedLimit;                                                          \
  }
#define HKB_CPU_KERNEL(name)                           \
  HKB_CPU_EXPORT void hkb_cpu_entry_##name(void** p) { \
    hkb_cpu::call(&name, p);                           \
  }
