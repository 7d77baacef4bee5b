// A CPU module of test kernels for the static shared memory check (loader/cpu_shared.hpp), built
// like a module of the bundle (tests/CMakeLists.txt) and loaded by tests/unit/test_cpu_runtime.cpp.
#include "common/platform.h"

namespace {

// Defined as a module's build defines a kernel file's `extern __shared__` array.
alignas(16) thread_local float dynamic_floats[hkb_cpu::kSharedLimit / sizeof(float)];

// A helper's own static array: the kernels that call it use it too.
template <int N>
__device__ float staged_sum(const float* in) {
  __shared__ float stage[N];
  for (int i = threadIdx.x; i < N; i += blockDim.x) stage[i] = in[i % 4];
  __syncthreads();
  float s = 0.0f;
  for (int i = 0; i < N; ++i) s += stage[i];
  return s;
}

}  // namespace

// 40 KiB of static shared memory, through the helper.
__global__ void static_40k(const float* in, float* out) {
  out[threadIdx.x] = staged_sum<10240>(in);
}

// 16 KiB of its own plus the 40 KiB of the helper.
__global__ void static_56k(const float* in, float* out) {
  __shared__ float own[4096];
  own[threadIdx.x] = in[threadIdx.x % 4];
  __syncthreads();
  out[threadIdx.x] = own[(threadIdx.x + 1) % blockDim.x] + staged_sum<10240>(in);
}

// Dynamic shared memory only: its limit is all of the 64 KiB.
__global__ void dynamic_only(const float* in, float* out) {
  dynamic_floats[threadIdx.x] = in[threadIdx.x % 4];
  __syncthreads();
  out[threadIdx.x] = dynamic_floats[(threadIdx.x + 1) % blockDim.x];
}

HKB_CPU_EXPORT const char hkb_cpu_dynamic_shared[] = " dynamic_floats";
HKB_CPU_MODULE
HKB_CPU_KERNEL(static_40k)
HKB_CPU_KERNEL(static_56k)
HKB_CPU_KERNEL(dynamic_only)
