// fast_* timing and result check under candle's geometry (grid = rows, block =
// next_pow2(min(1024, cols))) for one build variant of kernels/reduce.hip (the HKB_FAST_* macros
// given on the command line). Prints one line per case: time, % of a device-to-device copy of the
// same bytes, and whether every output matched a CPU reference.
#include "reduce_trimmed.hip"
#include "../indexing-conv-probe/common.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#ifndef VARIANT
#define VARIANT "default"
#endif

namespace probe {

// Bytes per microsecond of a device-to-device copy (read + write counted).
double copy_rate(const void* src, size_t bytes) {
  void* dst = nullptr;
  CK(cudaMalloc(&dst, bytes));
  const double us =
      time_us([&] { CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice)); }, 10, 5);
  CK(cudaFree(dst));
  return 2.0 * static_cast<double>(bytes) / us;
}

uint32_t candle_block(size_t cols) {
  uint32_t b = 1;
  while (b < cols && b < 1024) b <<= 1;
  return b;
}

float bf16_to_float(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
double to_double(float x) {
  return x;
}
double to_double(hkb::bf16 x) {
  return bf16_to_float(x.bits);
}

enum class Op { sum, max, argmax };
const char* op_name(Op op) {
  return op == Op::sum ? "sum" : op == Op::max ? "max" : "argmax";
}

// Launches the kernel once under candle's geometry, checks every output, then times it.
template <typename T>
void run_case(Op op, const char* tag, const T* dev_src, const std::vector<T>& host, size_t rows,
              size_t cols, double copy) {
  using Kernel = void (*)(size_t, size_t, size_t, const size_t*, const T*, void*);
  Kernel k = nullptr;
  if constexpr (std::is_same<T, float>::value) {
    k = op == Op::sum   ? reinterpret_cast<Kernel>(fast_sum_f32)
        : op == Op::max ? reinterpret_cast<Kernel>(fast_max_f32)
                        : reinterpret_cast<Kernel>(fast_argmax_f32);
  } else {
    k = op == Op::sum   ? reinterpret_cast<Kernel>(fast_sum_bf16)
        : op == Op::max ? reinterpret_cast<Kernel>(fast_max_bf16)
                        : reinterpret_cast<Kernel>(fast_argmax_bf16);
  }
  const size_t numel = rows * cols;
  const size_t info_host[4] = {rows, cols, cols, 1};
  size_t* info = nullptr;
  void* out = nullptr;
  CK(cudaMalloc(&info, sizeof(info_host)));
  CK(cudaMemcpy(info, info_host, sizeof(info_host), cudaMemcpyHostToDevice));
  const size_t out_bytes = rows * 4 + 16;
  CK(cudaMalloc(&out, out_bytes));
  CK(cudaMemset(out, 0xA5, out_bytes));
  const uint32_t block = candle_block(cols);
  auto launch = [&] {
    k<<<static_cast<unsigned>(rows), block>>>(numel, cols, 2, info, dev_src, out);
  };
  launch();
  CK(cudaDeviceSynchronize());
  std::vector<unsigned char> got(out_bytes);
  CK(cudaMemcpy(got.data(), out, out_bytes, cudaMemcpyDeviceToHost));
  size_t bad = 0;
  const size_t out_size = op == Op::argmax ? 4 : sizeof(T);
  for (size_t r = 0; r < rows; ++r) {
    const T* x = host.data() + r * cols;
    double sum = 0, sum_abs = 0, best = -INFINITY;
    uint32_t arg = 0;
    for (size_t j = 0; j < cols; ++j) {
      const double v = to_double(x[j]);
      sum += v;
      sum_abs += std::fabs(v);
      if (v > best) best = v, arg = static_cast<uint32_t>(j);
    }
    bool ok;
    if (op == Op::argmax) {
      uint32_t g;
      std::memcpy(&g, got.data() + r * 4, 4);
      ok = g == arg;
    } else {
      T g;
      std::memcpy(&g, got.data() + r * sizeof(T), sizeof(T));
      const double gv = to_double(g);
      if (op == Op::max) {
        ok = gv == best;
      } else {
        // tests/gpu/test_reduce.cpp's bound plus one rounding to T.
        const double ulp = std::is_same<T, float>::value ? 0x1p-23 : 0x1p-7;
        const double tol =
            (std::log2(static_cast<double>(block)) + 4) * 0x1p-23 * sum_abs + ulp * std::fabs(sum);
        ok = std::fabs(gv - sum) <= tol;
      }
    }
    if (!ok) ++bad;
  }
  // Nothing past the outputs.
  for (size_t b = rows * out_size; b < out_bytes; ++b) {
    if (got[b] != 0xA5) ++bad;
  }
  const double us = time_us(launch, 10, 5);
  const double bytes = static_cast<double>(numel * sizeof(T) + rows * out_size);
  std::printf("%-12s fast_%s_%s %6zux%-6zu %9.1f us %6.1f%% of copy  %s (%zu bad)\n", VARIANT,
              op_name(op), tag, rows, cols, us, 100.0 * bytes / us / copy, bad ? "WRONG" : "ok",
              bad);
  CK(cudaFree(info));
  CK(cudaFree(out));
}

}  // namespace probe

int main() {
  using namespace probe;
  const size_t n = size_t{8192} * 8192;
  // Values k/1024 for k in [-1024, 1024): many ties for argmax's first-index rule.
  std::vector<float> xf(n);
  uint64_t s = 0x9E3779B97F4A7C15ull;
  for (auto& v : xf) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    v = static_cast<float>(static_cast<int>((s >> 33) % 2048) - 1024) / 1024.0f;
  }
  std::vector<hkb::bf16> xb(n);
  for (size_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, &xf[i], 4);
    xb[i].bits = static_cast<uint16_t>(u >> 16);  // exact: k/1024 has at most 11 bits
  }
  float* df = nullptr;
  hkb::bf16* db = nullptr;
  CK(cudaMalloc(&df, n * 4));
  CK(cudaMalloc(&db, n * 2));
  CK(cudaMemcpy(df, xf.data(), n * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(db, xb.data(), n * 2, cudaMemcpyHostToDevice));
  const double copy_f = copy_rate(df, n * 4);
  const double copy_b = copy_rate(db, n * 2);
  std::printf("%-12s memcpy d2d %.1f GB/s (256 MiB), %.1f GB/s (128 MiB)\n", VARIANT, copy_f * 1e-3,
              copy_b * 1e-3);
  for (Op op : {Op::sum, Op::max, Op::argmax}) {
    run_case<float>(op, "f32", df, xf, 8192, 8192, copy_f);
    run_case<float>(op, "f32", df, xf, 8192, 8190, copy_f);
  }
  run_case<hkb::bf16>(Op::sum, "bf16", db, xb, 8192, 8192, copy_b);
  run_case<float>(Op::sum, "f32", df, xf, 65536, 1024, copy_f);
  run_case<float>(Op::sum, "f32", df, xf, 1024, 65536, copy_f);
  run_case<float>(Op::sum, "f32", df, xf, 4096, 16384, copy_f);
  return 0;
}
