// kernels/common/indexmath.h on the device, against the hardware's and the host's division: fast
// division by invariants for divisors sampled over [1, 2^31) (every divisor below 5000, powers of
// two and their neighbours, the largest ones, random ones) with numerators at the edges (0, near
// 2^31, multiples of d and their neighbours) and spread over [0, 2^31); divmod and divmod_inline
// on 32- and 64-bit operands. Built with nvcc into hkb_gpu_tests (the nvidia flavour only).
#include "common/indexmath.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace {

constexpr uint32_t kNumerators = 4096;

// Every mismatch of fast_div(n, make_fast_div(d)) against n / d counts once in *bad; the first
// one's divisor and numerator go to first[0..1].
__global__ void check_fast_div(const uint32_t* divisors, uint32_t count, unsigned long long* bad,
                               uint32_t* first) {
  for (uint32_t k = blockIdx.x; k < count; k += gridDim.x) {
    const uint32_t d = divisors[k];
    const hkb::FastDiv f = hkb::make_fast_div(d);
    const uint32_t top = 0x7FFFFFFFu / d * d;  // the largest multiple of d below 2^31
    for (uint32_t i = threadIdx.x; i < kNumerators; i += blockDim.x) {
      const uint32_t m = d * (i % 64);
      const uint32_t cands[8] = {i,           0x7FFFFFFFu - i, (i * 524309u) & 0x7FFFFFFFu,
                                 m,           m - 1,           m + 1,
                                 top - i % 3, top + i % 3};
      for (uint32_t n : cands) {
        if (n >= 0x80000000u) continue;
        if (hkb::fast_div(n, f) != n / d && atomicAdd(bad, 1ull) == 0) {
          first[0] = d;
          first[1] = n;
        }
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
  std::vector<uint32_t> ds;
  for (uint32_t d = 1; d < 5000; ++d) ds.push_back(d);
  for (int b = 12; b < 31; ++b) {  // powers of two and the 16 divisors either side
    for (int e = -16; e <= 16; ++e) ds.push_back(static_cast<uint32_t>((1ll << b) + e));
  }
  for (uint32_t d : {0x7FFFFFFFu, 0x7FFFFFFEu, 0x7FFFFFF0u, 0x40000001u, 0x3FFFFFFFu,
                     3u * 0x15555555u, 0x55555555u, 0x2AAAAAABu}) {
    ds.push_back(d);
  }
  std::mt19937 rng(1);
  std::uniform_int_distribution<uint32_t> any(1, 0x7FFFFFFFu);
  for (int i = 0; i < 20000; ++i) ds.push_back(any(rng));
  // Divisors spread over every magnitude: 2^b + random below 2^b.
  for (int b = 0; b < 31; ++b) {
    std::uniform_int_distribution<uint32_t> low(0, (1u << b) - 1);
    for (int i = 0; i < 200; ++i) ds.push_back((1u << b) + low(rng));
  }
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
  std::mt19937_64 rng(2);
  const uint64_t edges[] = {0,
                            1,
                            2,
                            3,
                            0x7FFFFFFFu,
                            0x80000000u,
                            0xFFFFFFFEu,
                            0xFFFFFFFFu,
                            1ull << 32,
                            (1ull << 32) + 1,
                            0x123456789ull,
                            ~0ull >> 1,
                            ~0ull - 1,
                            ~0ull};
  for (uint64_t a : edges) {
    for (uint64_t b : edges) {
      if (b == 0) continue;
      as.push_back(a);
      bs.push_back(b);
    }
  }
  for (int i = 0; i < 60000; ++i) {
    const int abits = 1 + static_cast<int>(rng() % 64), bbits = 1 + static_cast<int>(rng() % 64);
    uint64_t a = rng() >> (64 - abits), b = rng() >> (64 - bbits);
    if (b == 0) b = 1;
    as.push_back(a);
    bs.push_back(b);
  }
  const uint32_t n = static_cast<uint32_t>(as.size());
  uint64_t* d_a = to_device(as);
  uint64_t* d_b = to_device(bs);
  uint64_t *d_out = nullptr, *d_out2 = nullptr;
  ASSERT_EQ(cudaMalloc(&d_out, 2 * n * sizeof(uint64_t)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_out2, 2 * n * sizeof(uint64_t)), cudaSuccess);
  run_divmod<<<(n + 255) / 256, 256>>>(d_a, d_b, n, d_out, d_out2);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<uint64_t> out = to_host(d_out, 2 * n), out2 = to_host(d_out2, 2 * n);
  int shown = 0;
  for (uint32_t k = 0; k < n && shown < 5; ++k) {
    const uint64_t q = as[k] / bs[k], r = as[k] % bs[k];
    if (out[2 * k] != q || out[2 * k + 1] != r || out2[2 * k] != q || out2[2 * k + 1] != r) {
      ADD_FAILURE() << as[k] << " / " << bs[k] << ": expected " << q << " r " << r << ", divmod "
                    << out[2 * k] << " r " << out[2 * k + 1] << ", divmod_inline " << out2[2 * k]
                    << " r " << out2[2 * k + 1];
      ++shown;
    }
  }
  cudaFree(d_a);
  cudaFree(d_b);
  cudaFree(d_out);
  cudaFree(d_out2);
}

}  // namespace
