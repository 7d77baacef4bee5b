// Standalone timing driver: includes a (possibly sed-modified) kernel module and times its
// entry points with candle's geometry.
#pragma once
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#define CK(x)                                                                \
  do {                                                                       \
    cudaError_t e_ = (x);                                                    \
    if (e_ != cudaSuccess) {                                                 \
      std::printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                          \
    }                                                                        \
  } while (0)
// Median over `batches` of the mean time of `reps` back-to-back launches, in microseconds.
template <typename F>
double time_us(F f, int reps = 20, int batches = 7) {
  f();
  CK(cudaDeviceSynchronize());
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<double> t;
  for (int i = 0; i < batches; ++i) {
    cudaEventRecord(a);
    for (int r = 0; r < reps; ++r) f();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms * 1000.0 / reps);
  }
  CK(cudaGetLastError());
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
inline double copy_bw(size_t bytes) {
  void *a, *b;
  CK(cudaMalloc(&a, bytes));
  CK(cudaMalloc(&b, bytes));
  cudaMemset(a, 1, bytes);
  double us = time_us([&] { cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice); });
  cudaFree(a);
  cudaFree(b);
  return 2.0 * bytes / us * 1e-3;  // GB/s
}
inline void row(const char* name, double bytes, double us, double cbw) {
  const double bw = bytes / us * 1e-3;
  std::printf("%-40s %9.1f us %8.1f GB/s %5.0f%%\n", name, us, bw, 100.0 * bw / cbw);
}
inline dim3 cgrid(size_t n) {
  return dim3((unsigned)((n + 1023) / 1024));
}
