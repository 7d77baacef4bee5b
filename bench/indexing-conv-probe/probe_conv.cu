#define HKB_CONV_PROBE  // only the dtypes timed here
#include "conv_variant.hip"
HKB_CONV(f32, float)
HKB_CONV(bf16, hkb::bf16)
#include "common.cuh"
// Device buffers of one timed case: a contiguous (b, c, h, w) source of ns values filled with
// 0x3C bytes, n outputs and candle's info array ([dims, strides]) for the source.
template <typename T>
struct ConvCase {
  T *src = nullptr, *dst = nullptr;
  size_t* info = nullptr;
  ConvCase(size_t n, size_t ns, size_t b, size_t c, size_t h, size_t w) {
    CK(cudaMalloc(&src, ns * sizeof(T)));
    CK(cudaMalloc(&dst, n * sizeof(T)));
    cudaMemset(src, 0x3C, ns * sizeof(T));
    size_t hi[8] = {b, c, h, w, c * h * w, h * w, w, 1};
    CK(cudaMalloc(&info, 64));
    CK(cudaMemcpy(info, hi, 64, cudaMemcpyHostToDevice));
  }
  ConvCase(const ConvCase&) = delete;
  ConvCase& operator=(const ConvCase&) = delete;
  ~ConvCase() {
    cudaFree(src);
    cudaFree(dst);
    cudaFree(info);
  }
};
// (b, c, h, w) -> (b, c, ho, wo); candle's host passes dims[2] / target as the scale.
template <typename T>
void upsample(const char* name, double cbw, size_t b = 8, size_t c = 64, size_t h = 128,
              size_t w = 128, size_t ho = 256, size_t wo = 256) {
  const size_t n = b * c * ho * wo, ns = b * c * h * w;
  const ConvCase<T> m(n, ns, b, c, h, w);
  void (*k)(size_t, size_t, double, double, const size_t*, const T*, T*);
  if constexpr (sizeof(T) == 4)
    k = upsample_nearest2d_f32;
  else
    k = upsample_nearest2d_bf16;
  const double ws = double(h) / double(ho), hs = double(w) / double(wo);
  double us = time_us([&] { k<<<cgrid(n), 1024>>>(ho, wo, ws, hs, m.info, m.src, m.dst); });
  row(name, 1.0 * (n + ns) * sizeof(T), us, cbw);
}
__global__ void __launch_bounds__(1024, 2) empty_blocks() {}
template <typename T>
void im2col(const char* name, double cbw) {
  const size_t b = 8, c = 64, h = 64, w = 64, k = 3, ho = 64, wo = 64, n = b * ho * wo * c * k * k,
               ns = b * c * h * w;
  const ConvCase<T> m(n, ns, b, c, h, w);
  void (*kf)(size_t, size_t, size_t, size_t, size_t, size_t, size_t, size_t, const size_t*,
             const T*, T*);
  if constexpr (sizeof(T) == 4)
    kf = im2col_f32;
  else
    kf = im2col_bf16;
  double us =
      time_us([&] { kf<<<cgrid(n), 1024>>>(n, ho, wo, k, k, 1, 1, 1, m.info, m.src, m.dst); });
  row(name, 1.0 * (n + ns) * sizeof(T), us, cbw);
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  for (int per : {1, 2}) {  // the busy blocks alone (no idle blocks), as a bound
    us = time_us([&] { kf<<<sms * per, 1024>>>(n, ho, wo, k, k, 1, 1, 1, m.info, m.src, m.dst); });
    char label[64];
    std::snprintf(label, sizeof label, "%s grid %d", name, sms * per);
    row(label, 1.0 * (n + ns) * sizeof(T), us, cbw);
  }
  us = time_us([&] { empty_blocks<<<cgrid(n), 1024>>>(); });
  std::printf("%-40s %9.1f us (a grid of %u blocks that return at once)\n", "empty", us,
              cgrid(n).x);
}
int main() {
  const double cbw = copy_bw(8ull * 64 * 256 * 256 * 4);
  upsample<float>("upsample_nearest2d_f32", cbw);
  upsample<hkb::bf16>("upsample_nearest2d_bf16", cbw);
  upsample<float>("upsample_nearest2d_f32_x3", cbw, 4, 64, 96, 96, 288, 288);
  im2col<float>("im2col_f32", cbw);
  im2col<hkb::bf16>("im2col_bf16", cbw);
  return 0;
}
