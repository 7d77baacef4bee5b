// kernels/common/indexmath.h on the device, against the hardware's and the host's division (the
// cases are in indexmath_cases.hpp). Built with nvcc into hkb_gpu_tests in the nvidia flavour;
// the cpu flavour runs the same cases through test_indexmath_cpu.cpp.
#include "indexmath_cases.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace {

using namespace indexmath_cases;

// Every mismatch counts once in *bad; the first one's divisor and numerator go to first[0..1].
__global__ void check_fast_div(const uint32_t* divisors, uint32_t count, unsigned long long* bad,
                               uint32_t* first) {
  for (uint32_t k = blockIdx.x; k < count; k += gridDim.x) {
    const uint32_t d = divisors[k];
    const hkb::FastDiv f = hkb::make_fast_div(d);
    for (uint32_t i = threadIdx.x; i < kNumerators; i += blockDim.x) {
      const uint32_t n = fast_div_mismatch(d, f, i);
      if (n != kNone && atomicAdd(bad, 1ull) == 0) {
        first[0] = d;
        first[1] = n;
      }
    }
  }
}

// out[2k], out[2k+1] = divmod(a[k], b[k]); out2 the same from divmod_inline.
__global__ void run_divmod(const uint64_t* a, const uint64_t* b, uint32_t count, uint64_t* out,
                           uint64_t* out2) {
  const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= count) return;
  const hkb::DivMod x = hkb::divmod(a[k], b[k]);
  const hkb::DivMod y = hkb::divmod_inline(a[k], b[k]);
  out[2 * k] = x.q;
  out[2 * k + 1] = x.r;
  out2[2 * k] = y.q;
  out2[2 * k + 1] = y.r;
}

bool have_device() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

template <typename T>
T* to_device(const std::vector<T>& v) {
  T* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, v.size() * sizeof(T) + 8), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  return p;
}

template <typename T>
std::vector<T> to_host(const T* p, size_t n) {
  std::vector<T> v(n);
  EXPECT_EQ(cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return v;
}

TEST(IndexMathTest, FastDivMatchesDivision) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const std::vector<uint32_t> ds = divisors();
  uint32_t* d_ds = to_device(ds);
  unsigned long long* d_bad = nullptr;
  uint32_t* d_first = nullptr;
  ASSERT_EQ(cudaMalloc(&d_bad, sizeof(unsigned long long)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_first, 2 * sizeof(uint32_t)), cudaSuccess);
  ASSERT_EQ(cudaMemset(d_bad, 0, sizeof(unsigned long long)), cudaSuccess);
  ASSERT_EQ(cudaMemset(d_first, 0, 2 * sizeof(uint32_t)), cudaSuccess);
  check_fast_div<<<1024, 256>>>(d_ds, static_cast<uint32_t>(ds.size()), d_bad, d_first);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const unsigned long long bad = to_host(d_bad, 1)[0];
  const std::vector<uint32_t> first = to_host(d_first, 2);
  EXPECT_EQ(bad, 0u) << "first mismatch: " << first[1] << " / " << first[0] << " over " << ds.size()
                     << " divisors";
  cudaFree(d_ds);
  cudaFree(d_bad);
  cudaFree(d_first);
}

TEST(IndexMathTest, DivModMatchesHost) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  std::vector<uint64_t> as, bs;
  divmod_operands(&as, &bs);
  const uint32_t n = static_cast<uint32_t>(as.size());
  uint64_t* d_a = to_device(as);
  uint64_t* d_b = to_device(bs);
  uint64_t *d_out = nullptr, *d_out2 = nullptr;
  ASSERT_EQ(cudaMalloc(&d_out, 2 * n * sizeof(uint64_t)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_out2, 2 * n * sizeof(uint64_t)), cudaSuccess);
  run_divmod<<<(n + 255) / 256, 256>>>(d_a, d_b, n, d_out, d_out2);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<uint64_t> out = to_host(d_out, 2 * n), out2 = to_host(d_out2, 2 * n);
  expect_divmod(as, bs, out.data(), out2.data());
  cudaFree(d_a);
  cudaFree(d_b);
  cudaFree(d_out);
  cudaFree(d_out2);
}

}  // namespace
