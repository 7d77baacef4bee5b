// What candle's launch geometry costs on an NVIDIA GPU, and which work split recovers copy
// bandwidth inside it. Every kernel runs with block 1024 and grid ceil(n / 1024) (cudarc's
// for_num_elems over n elements), as candle launches its elementwise kernels; only the split of
// the work among those threads differs. Standalone (no hkb), so variants can be compared quickly:
//
//   nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -Ikernels bench/geometry_probe.cu \
//     -o geometry_probe && ./geometry_probe
//
// Prints time and GB/s (bytes read + written) against cudaMemcpy device-to-device.
#include <cuda_runtime.h>

#include "../kernels/common/elementwise.h"
#include "../kernels/unary.hip"
#include "indexing-conv-probe/common.cuh"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

struct alignas(16) V16 {
  uint32_t w[4];
};

// Packs first, first + step, ... below `packs`, U of them loaded before any is stored.
template <int U>
__device__ void copy_packs(uint64_t first, uint64_t step, uint64_t packs, const V16* in, V16* out) {
  for (uint64_t p = first; p < packs; p += step * U) {
    V16 buf[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const uint64_t q = p + u * step;
      if (q < packs) buf[u] = in[q];
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const uint64_t q = p + u * step;
      if (q < packs) out[q] = buf[u];
    }
  }
}

// Idle blocks only: the cost of launching and retiring the grid.
__global__ void __launch_bounds__(1024, 2) k_empty(uint64_t n, const float* in, float* out) {
  if (n == 0) out[0] = in[0];
}

// One element per thread (candle's kernels).
template <typename T>
__global__ void __launch_bounds__(1024, 2) k_scalar(uint64_t n, const T* in, T* out) {
  for (uint64_t i = blockIdx.x * 1024ull + threadIdx.x; i < n; i += gridDim.x * 1024ull) {
    out[i] = in[i];
  }
}

// U 16-byte packs per thread in busy blocks; busy blocks spread evenly over the grid (every
// `spacing`-th block), the others leave at once.
template <int U>
__global__ void __launch_bounds__(1024, 2) k_spread(uint64_t packs, const V16* in, V16* out) {
  const uint64_t per_block = 1024ull * U;
  const uint64_t need = (packs + per_block - 1) / per_block;
  const uint32_t active = need < gridDim.x ? static_cast<uint32_t>(need) : gridDim.x;
  const uint32_t spacing = gridDim.x / active;
  if (blockIdx.x % spacing != 0 || blockIdx.x / spacing >= active) return;
  const uint64_t slot = blockIdx.x / spacing;
  const uint64_t step = static_cast<uint64_t>(active) * 1024;
  copy_packs<U>(slot * 1024 + threadIdx.x, step, packs, in, out);
}

// Busy blocks are the first ones; U packs per thread.
template <int U>
__global__ void __launch_bounds__(1024, 2) k_first(uint64_t packs, const V16* in, V16* out) {
  const uint64_t per_block = 1024ull * U;
  const uint64_t need = (packs + per_block - 1) / per_block;
  if (blockIdx.x >= need) return;
  const uint64_t step = need * 1024;
  copy_packs<U>(blockIdx.x * 1024ull + threadIdx.x, step, packs, in, out);
}

// Every block busy: a block copies its own 1024-element range, 16 bytes per thread, so only the
// first 1024 * esize / 16 threads of each block work and the other warps leave at once.
template <typename T>
__global__ void __launch_bounds__(1024, 2) k_warps(uint64_t n, const T* in, T* out) {
  constexpr uint32_t E = 16 / sizeof(T);
  const uint32_t busy = 1024 / E;
  if (threadIdx.x >= busy) return;
  const uint64_t base = blockIdx.x * 1024ull;
  if (base + 1024 <= n) {
    reinterpret_cast<V16*>(out + base)[threadIdx.x] =
        reinterpret_cast<const V16*>(in + base)[threadIdx.x];
  } else {
    for (uint64_t i = base + threadIdx.x; i < n; i += busy) out[i] = in[i];
  }
}

// Busy blocks run `busy` threads, each moving one 16-byte pack per step; kSpread: the busy blocks
// are every k-th block (k = 1024 / busy-packs ratio), else the first ones.
template <bool kSpread>
__global__ void __launch_bounds__(1024, 2)
    k_busy(uint64_t packs, uint32_t busy, const V16* in, V16* out) {
  if (threadIdx.x >= busy) return;
  const uint64_t need = (packs + busy - 1) / busy;
  const uint32_t active = need < gridDim.x ? static_cast<uint32_t>(need) : gridDim.x;
  uint32_t slot = blockIdx.x;
  if (kSpread) {
    const uint32_t spacing = gridDim.x / active;
    if (blockIdx.x % spacing != 0) return;
    slot = blockIdx.x / spacing;
  }
  if (slot >= active) return;
  for (uint64_t p = static_cast<uint64_t>(slot) * busy + threadIdx.x; p < packs;
       p += static_cast<uint64_t>(active) * busy) {
    out[p] = in[p];
  }
}

// Persistent busy blocks: the first `busy_blocks` blocks (launched first, so resident together
// while the rest of the grid streams through the remaining slots and leaves at once) move the whole
// range, U packs a thread in flight per step.
template <int U>
__global__ void __launch_bounds__(1024, 2)
    k_persist(uint64_t packs, uint32_t busy_blocks, const V16* in, V16* out) {
  if (blockIdx.x >= busy_blocks) return;
  const uint64_t step = static_cast<uint64_t>(busy_blocks) * 1024;
  copy_packs<U>(blockIdx.x * 1024ull + threadIdx.x, step, packs, in, out);
}

// hkb's resident split (kernels/common/elementwise.h) around a plain copy, one pack a step.
__global__ void __launch_bounds__(1024, 2) k_units(uint64_t packs, const V16* in, V16* out) {
  const hkb::UnitRange r = hkb::resident_range();
  if (r.begin == hkb::kIdle) return;
  for (uint64_t p = r.begin; p < packs; p += r.step) out[p] = in[p];
}

// hkb's own contiguous driver (kernels/common/elementwise.h) under the same harness.
struct CopyF32 {
  __device__ float operator()(float x) const { return x; }
};
__global__ void __launch_bounds__(1024, 2)
    k_hkb_contiguous(uint64_t n, const float* in, float* out) {
  hkb::map_contiguous(n, in, out, CopyF32{});
}
__global__ void __launch_bounds__(1024, 2)
    k_hkb_layout(uint64_t n, uint64_t nd, const size_t* info, const float* in, float* out) {
  hkb::map_unary_layout(n, nd, info, in, out, CopyF32{});
}

// Median over 15 batches of the mean time of 10 back-to-back launches, in milliseconds.
template <typename F>
double time_ms(F f) {
  return time_us(f, 10, 15) * 1e-3;
}

int main() {
  const uint64_t bytes = 256ull << 20;  // 64M f32 or 128M bf16... per element size below
  char *in, *out;
  CK(cudaMalloc(&in, bytes));
  CK(cudaMalloc(&out, bytes));
  CK(cudaMemset(in, 0x3C, bytes));
  const double copy =
      time_ms([&] { CK(cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice)); });
  const double copy_bw = 2.0 * bytes / copy / 1e6;
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::printf("%d multiprocessors\n", sms);
  std::printf("copy %.1f us, %.1f GB/s\n", copy * 1e3, copy_bw);
  auto row = [&](const char* name, uint64_t moved, double ms) {
    const double bw = moved / ms / 1e6;
    std::printf("%-40s %9.1f us %8.1f GB/s %5.0f%%\n", name, ms * 1e3, bw, 100 * bw / copy_bw);
  };
  for (int esize : {4, 2, 1}) {
    const uint64_t n = (esize == 4 ? 64ull : 64ull) << 20;  // 64M elements as in the hkb benches
    const uint64_t moved = 2 * n * esize;
    const uint32_t grid = static_cast<uint32_t>((n + 1023) / 1024);
    const uint64_t packs = n * esize / 16;
    std::printf("\n%d-byte elements, n = %llu, grid %u x 1024\n", esize, (unsigned long long)n,
                grid);
    const V16* pi = (const V16*)in;
    V16* po = (V16*)out;
    row("empty (launch + retire only)", moved,
        time_ms([&] { k_empty<<<grid, 1024>>>(n, (const float*)in, (float*)out); }));
    if (esize == 4) {
      row("hkb map_contiguous", moved,
          time_ms([&] { k_hkb_contiguous<<<grid, 1024>>>(n, (const float*)in, (float*)out); }));
      row("hkb map_unary_layout, null info", moved, time_ms([&] {
            k_hkb_layout<<<grid, 1024>>>(n, 1, nullptr, (const float*)in, (float*)out);
          }));
      row("scalar, thread per element", moved,
          time_ms([&] { k_scalar<float><<<grid, 1024>>>(n, (const float*)in, (float*)out); }));
      row("every block, 256 threads x 16 B", moved,
          time_ms([&] { k_warps<float><<<grid, 1024>>>(n, (const float*)in, (float*)out); }));
      row("hkb resident_range, plain copy", moved,
          time_ms([&] { k_units<<<grid, 1024>>>(packs, pi, po); }));
      row("unary.hip ucopy_f32, null info", moved, time_ms([&] {
            ucopy_f32<<<grid, 1024>>>(n, 1, nullptr, (const float*)in, (float*)out);
          }));
    } else if (esize == 1) {
      row("scalar, thread per element", moved, time_ms([&] {
            k_scalar<uint8_t><<<grid, 1024>>>(n, (const uint8_t*)in, (uint8_t*)out);
          }));
    } else {
      row("scalar, thread per element", moved, time_ms([&] {
            k_scalar<uint16_t><<<grid, 1024>>>(n, (const uint16_t*)in, (uint16_t*)out);
          }));
      row("every block, 128 threads x 16 B", moved, time_ms([&] {
            k_warps<uint16_t><<<grid, 1024>>>(n, (const uint16_t*)in, (uint16_t*)out);
          }));
    }
    for (uint32_t busy : {128u, 256u, 512u, 1024u}) {
      char name[64];
      std::snprintf(name, sizeof name, "first blocks, %u threads x 16 B", busy);
      row(name, moved, time_ms([&] { k_busy<false><<<grid, 1024>>>(packs, busy, pi, po); }));
      std::snprintf(name, sizeof name, "spread blocks, %u threads x 16 B", busy);
      row(name, moved, time_ms([&] { k_busy<true><<<grid, 1024>>>(packs, busy, pi, po); }));
    }
    for (uint32_t quarters : {1u, 2u, 4u, 6u, 8u}) {  // busy blocks per multiprocessor x 4
      const uint32_t b = sms * quarters / 4;
      char name[64];
      std::snprintf(name, sizeof name, "persistent %u blocks, 1 pack", b);
      row(name, moved, time_ms([&] { k_persist<1><<<grid, 1024>>>(packs, b, pi, po); }));
      std::snprintf(name, sizeof name, "persistent %u blocks, 2 packs", b);
      row(name, moved, time_ms([&] { k_persist<2><<<grid, 1024>>>(packs, b, pi, po); }));
      std::snprintf(name, sizeof name, "persistent %u blocks, 4 packs", b);
      row(name, moved, time_ms([&] { k_persist<4><<<grid, 1024>>>(packs, b, pi, po); }));
    }
    row("spread, 1 pack", moved, time_ms([&] { k_spread<1><<<grid, 1024>>>(packs, pi, po); }));
    row("spread, 2 packs", moved, time_ms([&] { k_spread<2><<<grid, 1024>>>(packs, pi, po); }));
    row("spread, 4 packs", moved, time_ms([&] { k_spread<4><<<grid, 1024>>>(packs, pi, po); }));
    row("first blocks, 1 pack", moved, time_ms([&] { k_first<1><<<grid, 1024>>>(packs, pi, po); }));
    row("first blocks, 4 packs", moved,
        time_ms([&] { k_first<4><<<grid, 1024>>>(packs, pi, po); }));
    row("first blocks, 16 packs", moved,
        time_ms([&] { k_first<16><<<grid, 1024>>>(packs, pi, po); }));
  }
  // Reduction-shaped grids: 8192 and 65536 blocks of 1024 that leave at once.
  row("empty grid 8192 x 1024 (vs 64M f32)", 512ull << 20,
      time_ms([&] { k_empty<<<8192, 1024>>>(1, (const float*)in, (float*)out); }));
  row("empty grid 65536 x 256", 512ull << 20,
      time_ms([&] { k_empty<<<65536, 256>>>(1, (const float*)in, (float*)out); }));
  return 0;
}
