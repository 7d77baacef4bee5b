// Host emulation of the vendor layer: kernels compile as plain C++ and a launcher runs every
// (block, thread) of a grid one after another (valid for kernels without barriers or shared
// memory).
#pragma once
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <type_traits>
#define HKB_PLATFORM_EMU 1
#define __device__
#define __global__
#define __forceinline__ inline
#define __restrict__ __restrict
#define HKB_DEVICE inline
#define HKB_GLOBAL extern "C"
#define HKB_OCCUPANCY(a, b)
#define HKB_WAVE_SIZE 32
struct emu_dim3 {
  unsigned x, y, z;
};
extern emu_dim3 threadIdx, blockIdx, blockDim, gridDim;
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
struct alignas(8) uint2 {
  unsigned x, y;
};
inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) {
  return {a, b, c, d};
}
inline uint2 make_uint2(unsigned a, unsigned b) {
  return {a, b};
}
namespace hkb {
inline uint64_t global_thread_index() {
  return (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
}
inline uint64_t grid_stride() {
  return (uint64_t)gridDim.x * blockDim.x;
}
// The multiprocessor count the resident split sees: $EMU_SMS, else 132 (an H100).
inline uint32_t multiprocessors() {
  static const uint32_t n = [] {
    const char* e = getenv("EMU_SMS");
    return e != nullptr ? static_cast<uint32_t>(strtoul(e, nullptr, 10)) : 132u;
  }();
  return n;
}
inline double mul_rn(double a, double b) {
  volatile double r = a * b;
  return r;
}
inline void block_sync() {}
inline uint64_t udiv64(uint64_t a, uint64_t d) {
  return a / d;
}
// The bits of one value as another type of the same size.
template <typename To, typename From>
inline To bit_copy(From v) {
  static_assert(sizeof(To) == sizeof(From), "bit_copy needs equal sizes");
  To r;
  memcpy(&r, &v, sizeof(r));
  return r;
}
inline uint32_t float_bits(float f) {
  return bit_copy<uint32_t>(f);
}
inline float bits_float(uint32_t u) {
  return bit_copy<float>(u);
}
inline uint64_t double_bits(double d) {
  return bit_copy<uint64_t>(d);
}
inline double bits_double(uint64_t u) {
  return bit_copy<double>(u);
}
inline float half_bits_to_float(uint16_t h) {
  return (float)bit_copy<_Float16>(h);
}
inline uint16_t float_to_half_bits(float v) {
  return bit_copy<uint16_t>((_Float16)v);
}
}  // namespace hkb
