// Checks kernels/common/fastdiv.h on an NVIDIA GPU against the hardware division: every divisor
// below 5000, powers of two and their neighbours, the largest divisors and 20000 random ones, each
// with edge numerators (0, 2^31 - 1, multiples of d and their neighbours) and a spread pattern.
//   nvcc -O3 -std=c++17 -arch=sm_90 -Ikernels bench/indexing-conv-probe/fastdiv_check.cu \
//     -o fastdiv_check && ./fastdiv_check        (exit status 1 on a mismatch)
#include "common/fastdiv.h"

#include <cuda_runtime.h>
#include <cstdio>
#include <vector>
#include <cstdlib>
__global__ void k(const uint32_t* ds, int nd, unsigned long long* bad) {
  const uint32_t d = ds[blockIdx.x % nd];
  const hkb::FastDiv f = hkb::make_fast_div(d);
  // numerators: edges and a stride pattern
  for (uint32_t i = threadIdx.x; i < 4096; i += blockDim.x) {
    uint32_t cands[6] = {i,
                         0x7FFFFFFFu - i,
                         (uint32_t)(i * 524309u) & 0x7FFFFFFFu,
                         d * (i % 64),
                         d * (i % 64) - 1,
                         d * (i % 64) + 1};
    for (int c = 0; c < 6; ++c) {
      uint32_t n = cands[c];
      if (n >= 0x80000000u) continue;
      if (hkb::fast_div(n, f) != n / d) atomicAdd(bad, 1ull);
    }
    uint64_t big = 0x7FFFFFFFull / d * d;  // largest multiple
    uint32_t n = (uint32_t)(big - (i % 3));
    if (hkb::fast_div(n, f) != n / d) atomicAdd(bad, 1ull);
  }
}
int main() {
  std::vector<uint32_t> h;
  for (uint32_t d = 1; d < 5000; ++d) h.push_back(d);
  for (int b = 1; b < 31; ++b) {
    h.push_back(1u << b);
    h.push_back((1u << b) - 1);
    h.push_back((1u << b) + 1);
  }
  h.push_back(0x7FFFFFFFu);
  h.push_back(0x7FFFFFFEu);
  h.push_back(0x40000001u);
  h.push_back(3u * 0x15555555u);
  srand(1);
  for (int i = 0; i < 20000; ++i) h.push_back(1 + ((uint32_t)rand() * 2654435761u) % 0x7FFFFFFEu);
  uint32_t* dd;
  unsigned long long* bad;
  cudaMalloc(&dd, h.size() * 4);
  cudaMalloc(&bad, 8);
  cudaMemset(bad, 0, 8);
  cudaMemcpy(dd, h.data(), h.size() * 4, cudaMemcpyHostToDevice);
  k<<<h.size(), 256>>>(dd, h.size(), bad);
  unsigned long long b;
  cudaMemcpy(&b, bad, 8, cudaMemcpyDeviceToHost);
  printf("fastdiv: %zu divisors, %llu mismatches, %s\n", h.size(), b,
         cudaGetErrorString(cudaGetLastError()));
  return b != 0;
}
