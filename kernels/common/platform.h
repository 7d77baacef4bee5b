// Vendor layer: the only file that knows whether kernels compile for AMD (hipcc/clang) or for
// NVIDIA (nvcc, the test vehicle). Everything a kernel needs that differs between the two lives
// here: headers, wave width, cross-lane shuffles with an explicit width, atomics.
#pragma once

#include <stddef.h>
#include <stdint.h>

#if defined(HKB_PLATFORM_CPU)
// The host runs the AMD code path (platform_cpu.h): every AMD branch below applies to it too.
#define HKB_PLATFORM_AMD 1
#include "platform_cpu.h"
#elif defined(__HIP__) || defined(__HIPCC__)
#define HKB_PLATFORM_AMD 1
#include <hip/hip_runtime.h>
// AMD's device library (ockl): the dispatch's work-group size as launched (HIP's header declares
// __ockl_get_global_size, the work items, but not this one).
extern "C" __device__ __attribute__((const)) size_t __ockl_get_enqueued_local_size(uint32_t);
#elif defined(__CUDACC__)
#define HKB_PLATFORM_NVIDIA 1
// CUDA's own headers: Debian's HIP-on-NVIDIA headers do not compile with CUDA 13.
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#else
#error \
    "kernels/common/platform.h: compile with hipcc/clang (-x hip), nvcc (-x cu) or -DHKB_PLATFORM_CPU"
#endif

#include "tuning.h"

#define HKB_DEVICE __device__ __forceinline__
#define HKB_GLOBAL extern "C" __global__
// A device function whose registers are allocated apart from its caller's other paths: on NVIDIA
// a call (under a tight register cap, two inlined paths of one kernel spill each other); inlined
// on AMD, where a call would need a scratch stack.
#if defined(HKB_PLATFORM_NVIDIA)
#define HKB_DEVICE_APART __device__ __noinline__
#else
#define HKB_DEVICE_APART HKB_DEVICE
#endif

// Occupancy bound for a kernel, written between HKB_GLOBAL's `void` and the name: blocks of at
// most `max_threads`, and on NVIDIA a register cap so `min_blocks` such blocks stay resident per
// multiprocessor (64K registers / (1024 * 2) = 32 per thread). HIP's second launch-bounds argument
// means something else, so AMD gets the block-size bound only.
#if defined(HKB_PLATFORM_AMD)
#define HKB_OCCUPANCY(max_threads, min_blocks) __launch_bounds__(max_threads)
#else
#define HKB_OCCUPANCY(max_threads, min_blocks) __launch_bounds__(max_threads, min_blocks)
#endif

// Hardware wave width of the code being compiled. AMD CDNA (gfx9xx) runs 64-lane wavefronts and
// RDNA (gfx10xx+) 32 by default; clang defines __AMDGCN_WAVEFRONT_SIZE per target in device code.
// The CPU platform takes it from its build (-DHKB_WAVE_SIZE=64 or 32).
#if defined(HKB_PLATFORM_CPU)
#elif defined(HKB_PLATFORM_AMD)
#if defined(__AMDGCN_WAVEFRONT_SIZE)
#define HKB_WAVE_SIZE __AMDGCN_WAVEFRONT_SIZE
#else
#define HKB_WAVE_SIZE 64
#endif
#else
#define HKB_WAVE_SIZE 32
#endif

// The device's multiprocessor count: hkb's loader writes it into every module right after loading
// it (loader/library.cpp; `hkb check` requires the symbol); 0 in a code object loaded some other
// way. A module is one translation unit, so this header defines it once per module.
#if defined(HKB_PLATFORM_CPU)
#define HKB_MODULE_GLOBAL __attribute__((visibility("default"), used))
#else
#define HKB_MODULE_GLOBAL __constant__
#endif
extern "C" {
HKB_MODULE_GLOBAL uint32_t hkb_multiprocessors = 0;
}

namespace hkb {

// Global linear thread index and grid stride as 64-bit values: grids of 2^32 threads or more and
// element counts of 2^32 or more stay correct.
HKB_DEVICE uint64_t global_thread_index() {
  return static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
HKB_DEVICE uint64_t grid_stride() {
  return static_cast<uint64_t>(gridDim.x) * blockDim.x;
}

// A grid of one or several rows of blocks (the tuned launch's, loader/tuned_config.cpp)
// of one row of threads each, numbered row by row. On AMD gridDim and blockDim are divisions or
// clamps of the dispatch's work-item counts, so these read the counts themselves.
#if defined(HKB_PLATFORM_AMD)
// One row or several of at most `most` blocks each, blocks one row of threads (blockDim.y == 1).
HKB_DEVICE bool grid_row_of_at_most(uint32_t most) {
  return __ockl_get_enqueued_local_size(1) == 1 &&
         __ockl_get_global_size(0) <= static_cast<size_t>(most) * __ockl_get_enqueued_local_size(0);
}
// More than one row of blocks.
HKB_DEVICE bool grid_rows() {
  return __ockl_get_global_size(1) > 1;
}
// On such a grid: a thread's rank over the whole grid, and the grid's threads.
HKB_DEVICE uint64_t grid_thread_rank() {
  return static_cast<uint64_t>(blockIdx.y) * __ockl_get_global_size(0) +
         static_cast<uint64_t>(blockIdx.x) * __ockl_get_enqueued_local_size(0) + threadIdx.x;
}
HKB_DEVICE uint64_t grid_threads() {
  return static_cast<uint64_t>(__ockl_get_global_size(0)) * __ockl_get_global_size(1);
}
#else
HKB_DEVICE bool grid_row_of_at_most(uint32_t most) {
  return blockDim.y == 1 && gridDim.x <= most;
}
HKB_DEVICE bool grid_rows() {
  return gridDim.y > 1;
}
HKB_DEVICE uint64_t grid_thread_rank() {
  return (static_cast<uint64_t>(blockIdx.y) * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;
}
HKB_DEVICE uint64_t grid_threads() {
  return static_cast<uint64_t>(gridDim.x) * gridDim.y * blockDim.x;
}
#endif

// Multiprocessors of the device: the count the loader wrote, the same global on both vendors so
// that the H100 tests the AMD path (a constant-bank operand on NVIDIA, a scalar load on AMD).
// Unwritten: NVIDIA's %nsmid (SM identifiers, at least the SM count), AMD tuning.h's per-target
// guess. Only work splits use it, never correctness.
HKB_DEVICE uint32_t multiprocessors() {
  const uint32_t written = hkb_multiprocessors;
  if (written != 0) return written;
#if defined(HKB_PLATFORM_NVIDIA) && !defined(HKB_MULTIPROCESSORS)
  uint32_t n;
  asm("mov.u32 %0, %%nsmid;" : "=r"(n));
  return n;
#else
  return tuning::kAmdComputeUnits;
#endif
}

// Lane index within the hardware wave.
HKB_DEVICE int lane_id() {
#if defined(HKB_PLATFORM_AMD)
  return static_cast<int>(__lane_id());
#else
  return static_cast<int>(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31;
#endif
}

// Cross-lane shuffles. `width` is the size of the lane group that exchanges values: a power of two,
// at most HKB_WAVE_SIZE. Every lane of the hardware wave must call these together (converged).
template <typename T>
HKB_DEVICE T shfl_xor(T v, int lane_mask, int width) {
#if defined(HKB_PLATFORM_AMD)
  return __shfl_xor(v, lane_mask, width);
#else
  return __shfl_xor_sync(0xffffffffu, v, lane_mask, width);
#endif
}
template <typename T>
HKB_DEVICE T shfl_down(T v, unsigned delta, int width) {
#if defined(HKB_PLATFORM_AMD)
  return __shfl_down(v, delta, width);
#else
  return __shfl_down_sync(0xffffffffu, v, delta, width);
#endif
}
template <typename T>
HKB_DEVICE T shfl_up(T v, unsigned delta, int width) {
#if defined(HKB_PLATFORM_AMD)
  return __shfl_up(v, delta, width);
#else
  return __shfl_up_sync(0xffffffffu, v, delta, width);
#endif
}
template <typename T>
HKB_DEVICE T shfl_idx(T v, int src_lane, int width) {
#if defined(HKB_PLATFORM_AMD)
  return __shfl(v, src_lane, width);
#else
  return __shfl_sync(0xffffffffu, v, src_lane, width);
#endif
}
// shfl_xor for a block smaller than a wave: only lanes [0, width) of the wave exist (e.g. a
// 32-thread block on a 64-lane CDNA wave, or a 16-thread block on NVIDIA). `width` is a power of
// two <= HKB_WAVE_SIZE; NVIDIA needs the member mask to name exactly the lanes that exist.
template <typename T>
HKB_DEVICE T shfl_xor_first(T v, int lane_mask, int width) {
#if defined(HKB_PLATFORM_AMD)
  return __shfl_xor(v, lane_mask, width);
#else
  const unsigned members = width >= 32 ? 0xffffffffu : ((1u << width) - 1u);
  return __shfl_xor_sync(members, v, lane_mask, width);
#endif
}

// Atomics on global or shared memory. Native on both vendors for these types.
HKB_DEVICE float atomic_add(float* p, float v) {
  return atomicAdd(p, v);
}
HKB_DEVICE double atomic_add(double* p, double v) {
  return atomicAdd(p, v);
}
HKB_DEVICE uint32_t atomic_add(uint32_t* p, uint32_t v) {
  return atomicAdd(p, v);
}
HKB_DEVICE int32_t atomic_add(int32_t* p, int32_t v) {
  return atomicAdd(p, v);
}
HKB_DEVICE uint64_t atomic_add(uint64_t* p, uint64_t v) {
  return atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}
HKB_DEVICE int64_t atomic_add(int64_t* p, int64_t v) {
  return static_cast<int64_t>(
      atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v)));
}
HKB_DEVICE uint32_t atomic_cas(uint32_t* p, uint32_t expected, uint32_t desired) {
  return atomicCAS(p, expected, desired);
}
HKB_DEVICE uint64_t atomic_cas(uint64_t* p, uint64_t expected, uint64_t desired) {
  return atomicCAS(reinterpret_cast<unsigned long long*>(p), expected, desired);
}

// a * b rounded once and never fused with a neighbouring add into an FMA, for results that must
// equal a reference evaluated without contraction (both front ends contract by default).
HKB_DEVICE double mul_rn(double a, double b) {
#if defined(HKB_PLATFORM_AMD)
#pragma clang fp contract(off)
  return a * b;
#else
  return __dmul_rn(a, b);
#endif
}

// a / d for 64-bit unsigned values, d != 0. AMD: clang expands the division inline. NVIDIA: nvcc
// emits a call to a division routine, and the call's register spills land on every thread of
// any path that shares a kernel with it (seen in the 32-bit strided paths under a 32-register
// cap), so restoring long division instead: slower, and used only for 64-bit operands.
HKB_DEVICE uint64_t udiv64(uint64_t a, uint64_t d) {
#if defined(HKB_PLATFORM_AMD)
  return a / d;
#else
  uint64_t q = 0, rem = 0;
  for (int bit = 63; bit >= 0; --bit) {
    rem = (rem << 1) | ((a >> bit) & 1u);
    q <<= 1;
    if (rem >= d) {
      rem -= d;
      q |= 1u;
    }
  }
  return q;
#endif
}

// Lane-wise max / min of the two 16-bit halves of 32-bit words, signed (s16x2) or unsigned
// (u16x2): one instruction on sm_90 (max.s16x2) and on gfx9 / gfx10 (v_pk_max_i16).
template <typename H, bool kMax>
HKB_DEVICE uint32_t lanes16(uint32_t a, uint32_t b) {
#if defined(HKB_PLATFORM_CPU)
  uint32_t r = 0;
  for (int s = 0; s < 32; s += 16) {
    const H x = static_cast<H>(a >> s), y = static_cast<H>(b >> s);
    r |= static_cast<uint32_t>(static_cast<uint16_t>(kMax ? (y > x ? y : x) : (y < x ? y : x)))
         << s;
  }
  return r;
#elif defined(HKB_PLATFORM_AMD)
  typedef H H2 __attribute__((ext_vector_type(2)));
  const H2 x = __builtin_bit_cast(H2, a), y = __builtin_bit_cast(H2, b);
  return __builtin_bit_cast(
      uint32_t, kMax ? __builtin_elementwise_max(x, y) : __builtin_elementwise_min(x, y));
#else
  if constexpr (static_cast<H>(-1) < 0) {
    return kMax ? __vmaxs2(a, b) : __vmins2(a, b);
  } else {
    return kMax ? __vmaxu2(a, b) : __vminu2(a, b);
  }
#endif
}
HKB_DEVICE uint32_t max_s16x2(uint32_t a, uint32_t b) {
  return lanes16<int16_t, true>(a, b);
}
HKB_DEVICE uint32_t min_s16x2(uint32_t a, uint32_t b) {
  return lanes16<int16_t, false>(a, b);
}
HKB_DEVICE uint32_t max_u16x2(uint32_t a, uint32_t b) {
  return lanes16<uint16_t, true>(a, b);
}

// Each 16-bit half of w filled with its sign bit: one byte permute with sign replication on sm_90
// (prmt) and gfx8 / gfx9 / gfx10 (v_perm_b32), where the shifts, mask and multiply take three.
HKB_DEVICE uint32_t sign_fill16x2(uint32_t w) {
#if defined(HKB_PLATFORM_CPU)
  return ((w >> 15) & 0x00010001u) * 0xFFFFu;
#elif defined(HKB_PLATFORM_AMD)
  return __builtin_amdgcn_perm(0u, w, 0x09090808u);  // selectors 8 / 9: the signs of bytes 1 / 3
#else
  uint32_t r;
  asm("prmt.b32 %0, %1, 0, 0xBB99;" : "=r"(r) : "r"(w));  // nibbles 9 / B: signs of bytes 1 / 3
  return r;
#endif
}

// Block-wide barrier (same spelling on both vendors; named here so kernels never spell a vendor).
HKB_DEVICE void block_sync() {
  __syncthreads();
}

// Bit casts that both front ends accept in device code.
HKB_DEVICE uint32_t float_bits(float f) {
  return __float_as_uint(f);
}
HKB_DEVICE float bits_float(uint32_t u) {
  return __uint_as_float(u);
}
HKB_DEVICE uint64_t double_bits(double d) {
  return static_cast<uint64_t>(__double_as_longlong(d));
}
HKB_DEVICE double bits_double(uint64_t u) {
  return __longlong_as_double(static_cast<long long>(u));
}

// f16 <-> f32 with the hardware's conversions (round to nearest even).
HKB_DEVICE float half_bits_to_float(uint16_t h) {
#if defined(HKB_PLATFORM_AMD)
  _Float16 f;
  __builtin_memcpy(&f, &h, 2);
  return static_cast<float>(f);
#else
  return __half2float(__ushort_as_half(h));
#endif
}
HKB_DEVICE uint16_t float_to_half_bits(float v) {
#if defined(HKB_PLATFORM_AMD)
  _Float16 f = static_cast<_Float16>(v);
  uint16_t h;
  __builtin_memcpy(&h, &f, 2);
  return h;
#else
  return __half_as_ushort(__float2half_rn(v));
#endif
}

// c + the dot product of the four signed bytes of a with those of b (the MMVQ kernels' integer
// step). NVIDIA: __dp4a. AMD targets with the dot1 instructions: v_dot4(c)_i32_i8; others
// (gfx803, gfx900, gfx1010, ...) multiply byte by byte.
#if defined(HKB_PLATFORM_AMD) &&                                                                   \
    (defined(__gfx906__) || defined(__gfx908__) || defined(__gfx90a__) || defined(__gfx940__) ||   \
     defined(__gfx941__) || defined(__gfx942__) || defined(__gfx1011__) || defined(__gfx1012__) || \
     defined(__gfx1030__) || defined(__gfx1031__) || defined(__gfx1032__) ||                       \
     defined(__gfx1034__) || defined(__gfx1035__))
#define HKB_DOT4_NATIVE 1
#endif
HKB_DEVICE int dot4_i8(int a, int b, int c) {
#if defined(HKB_PLATFORM_NVIDIA)
  return __dp4a(a, b, c);
#elif defined(HKB_DOT4_NATIVE)
  return __builtin_amdgcn_sdot4(a, b, c, false);
#else
#pragma unroll
  for (int i = 0; i < 32; i += 8) {
    c += static_cast<int>(static_cast<int8_t>(a >> i)) *
         static_cast<int>(static_cast<int8_t>(b >> i));
  }
  return c;
#endif
}

// Byte k (0..3) of w, a value below 2^kBits (kBits 7 or 8), as the float kBase + byte * kStep of
// ByteFloat<kBits>: 0.5 + byte / 256 (7 bits) or 0.5 + byte / 65536 (8 bits), exactly. One byte
// permute puts the byte into the mantissa of 0.5f (bits 16..22, or 8..15): NVIDIA converts
// integers at a fraction of the float rate, and AMD's byte conversion needs the byte shifted down
// first. A multiply-add by 1 / kStep and -kBase / kStep (powers of two) makes it the integer again.
// Selectors: NVIDIA's PRMT takes a nibble a result byte (4: the 0x3F operand, 5: a zero byte),
// AMD's v_perm_b32 a byte (4: the 0x3F operand, 0x0C: zero).
template <int kBits>
struct ByteFloat {
  static_assert(kBits == 7 || kBits == 8, "byte_float: 7- or 8-bit values");
  static constexpr float kBase = 0.5f, kStep = kBits == 7 ? 1.0f / 256 : 1.0f / 65536;
};
constexpr uint32_t byte_float_prmt(int bits, int k) {
  return bits == 7 ? 0x4055u | (static_cast<uint32_t>(k) << 8)
                   : 0x4505u | (static_cast<uint32_t>(k) << 4);
}
constexpr uint32_t byte_float_vperm(int bits, int k) {
  return bits == 7 ? 0x04000C0Cu | (static_cast<uint32_t>(k) << 16)
                   : 0x040C000Cu | (static_cast<uint32_t>(k) << 8);
}
template <int kBits>
HKB_DEVICE float byte_float(uint32_t w, int k) {
  static_assert(kBits == 7 || kBits == 8, "byte_float: 7- or 8-bit values");
#if defined(HKB_PLATFORM_AMD)
  return __uint_as_float(__builtin_amdgcn_perm(0x3Fu, w, byte_float_vperm(kBits, k)));
#else
  return __uint_as_float(__byte_perm(w, 0x3Fu, byte_float_prmt(kBits, k)));
#endif
}

// exp(x) for results rounded to at most 11 significant bits (f16, bf16, fp8). NVIDIA: 2^(x log2 e)
// with the hardware's approximate exp2 (relative error about 2^-22, subnormals kept), a multiply
// and one MUFU where expf takes ten instructions; x log2 e rounded to float moves the result by
// about 2^-17 relatively, far below half an f16 ulp, so it stays within 1 ulp. Elsewhere expf.
HKB_DEVICE float fast_exp(float x) {
#if defined(HKB_PLATFORM_NVIDIA)
  float r;
  asm("ex2.approx.f32 %0, %1;" : "=f"(r) : "f"(x * 1.4426950408889634f));
  return r;
#else
  return expf(x);
#endif
}

// The bf16 bits of v, rounded to nearest even. NVIDIA sm_80+: the hardware conversion (NaN becomes
// 0x7FFF). Elsewhere integer rounding (NaN keeps its sign and high payload bits, made quiet),
// without a branch: a branch per element keeps the compiler from interleaving a pack's elements.
HKB_DEVICE uint16_t float_to_bf16_bits(float v) {
#if defined(HKB_PLATFORM_NVIDIA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  uint16_t h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(v));
  return h;
#else
  const uint32_t u = float_bits(v);
  const uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
  const uint32_t quiet = (u >> 16) | 0x0040u;
  return static_cast<uint16_t>((u & 0x7FFFFFFFu) > 0x7F800000u ? quiet : rounded);
#endif
}

// A load of data read once (streamed quantized weights), so that it does not displace what the
// other threads read again from L1 (the activations): NVIDIA ld.global.cs (evict first). AMD and
// the CPU platform: a plain load (the hint is measured on NVIDIA only).
template <typename T>
HKB_DEVICE T load_streamed(const T* p) {
#if defined(HKB_PLATFORM_NVIDIA)
  return __ldcs(p);
#else
  return *p;
#endif
}

// Asynchronous copies of single values from global to shared memory, for tiles that fill while
// the block works on the previous one. async_copy_to_shared(to, from, valid) stores *from (or a
// zero when !valid, reading nothing) to `to`, complete for this thread after async_copy_commit<T>()
// and async_copy_wait<T>() (a block barrier makes it visible to the others). NVIDIA sm_80+ issues
// cp.async for 4- and 8-byte values; elsewhere it is a plain load and store and commit/wait are
// empty.
#if defined(HKB_PLATFORM_NVIDIA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
template <typename T>
constexpr bool kAsyncCopies = sizeof(T) == 4 || sizeof(T) == 8;
#else
template <typename T>
constexpr bool kAsyncCopies = false;
#endif
template <typename T>
HKB_DEVICE void async_copy_to_shared(T* to, const T* from, bool valid) {
#if defined(HKB_PLATFORM_NVIDIA)
  if constexpr (kAsyncCopies<T>) {
    const uint32_t sa = static_cast<uint32_t>(__cvta_generic_to_shared(to));
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"(sa), "l"(from),
                 "n"(sizeof(T)), "r"(valid ? static_cast<uint32_t>(sizeof(T)) : 0u)
                 : "memory");
    return;
  }
#endif
  *to = valid ? *from : T{};
}
template <typename T>
HKB_DEVICE void async_copy_commit() {
#if defined(HKB_PLATFORM_NVIDIA)
  if constexpr (kAsyncCopies<T>) asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
template <typename T>
HKB_DEVICE void async_copy_wait() {
#if defined(HKB_PLATFORM_NVIDIA)
  if constexpr (kAsyncCopies<T>) asm volatile("cp.async.wait_group 0;" ::: "memory");
#endif
}

}  // namespace hkb
