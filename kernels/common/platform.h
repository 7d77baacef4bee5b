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
#elif defined(__CUDACC__)
#define HKB_PLATFORM_NVIDIA 1
// CUDA's own headers: Debian's HIP-on-NVIDIA headers do not compile with CUDA 13.
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#else
#error \
    "kernels/common/platform.h: compile with hipcc/clang (-x hip), nvcc (-x cu) or -DHKB_PLATFORM_CPU"
#endif

#define HKB_DEVICE __device__ __forceinline__
#define HKB_GLOBAL extern "C" __global__

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

namespace hkb {

// Global linear thread index and grid stride as 64-bit values: grids of 2^32 threads or more and
// element counts of 2^32 or more stay correct.
HKB_DEVICE uint64_t global_thread_index() {
  return static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
HKB_DEVICE uint64_t grid_stride() {
  return static_cast<uint64_t>(gridDim.x) * blockDim.x;
}

// Multiprocessors of the device as the kernel can tell them: NVIDIA's %nsmid (SM identifiers,
// at least the SM count); AMD code cannot read its compute-unit count, so each target takes the
// count of its largest common part (a guess: no AMD GPU measured it). Only work splits use it
// (elementwise.h: resident_range), never correctness. HKB_MULTIPROCESSORS=N overrides it.
#if defined(HKB_MULTIPROCESSORS)
#define HKB_AMD_CUS HKB_MULTIPROCESSORS
#elif defined(__gfx908__)
#define HKB_AMD_CUS 120  // MI100
#elif defined(__gfx90a__)
#define HKB_AMD_CUS 110  // MI250X, one die
#elif defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
#define HKB_AMD_CUS 304  // MI300X
#elif defined(__gfx90c__)
#define HKB_AMD_CUS 8  // Renoir/Cezanne APUs
#elif defined(__gfx1010__) || defined(__gfx1031__)
#define HKB_AMD_CUS 40  // RX 5700 XT, RX 6700 XT
#elif defined(__gfx1030__)
#define HKB_AMD_CUS 80  // RX 6900 XT
#elif defined(__gfx1100__)
#define HKB_AMD_CUS 96  // RX 7900 XTX
#else
#define HKB_AMD_CUS 64  // gfx803 / gfx900 / gfx906 (Fury, Vega 64, MI50/60) and unknown targets
#endif
HKB_DEVICE uint32_t multiprocessors() {
#if defined(HKB_PLATFORM_NVIDIA) && !defined(HKB_MULTIPROCESSORS)
  uint32_t n;
  asm("mov.u32 %0, %%nsmid;" : "=r"(n));
  return n;
#else
  return HKB_AMD_CUS;
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

}  // namespace hkb
