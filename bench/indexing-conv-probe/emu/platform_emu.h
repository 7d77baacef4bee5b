// Host emulation of the vendor layer: kernels compile as plain C++ and a launcher runs every
// (block, thread) of a grid one after another (valid for kernels without barriers or shared
// memory).
#pragma once
#include <math.h>
#include <stddef.h>
#include <stdint.h>
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
inline double mul_rn(double a, double b) {
  volatile double r = a * b;
  return r;
}
inline void block_sync() {}
inline uint64_t udiv64(uint64_t a, uint64_t d) {
  return a / d;
}
inline uint32_t float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
inline uint64_t double_bits(double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  return u;
}
inline double bits_double(uint64_t u) {
  double d;
  memcpy(&d, &u, 8);
  return d;
}
inline float half_bits_to_float(uint16_t h) {
  _Float16 f;
  memcpy(&f, &h, 2);
  return (float)f;
}
inline uint16_t float_to_half_bits(float v) {
  _Float16 f = (_Float16)v;
  uint16_t h;
  memcpy(&h, &f, 2);
  return h;
}
}  // namespace hkb
