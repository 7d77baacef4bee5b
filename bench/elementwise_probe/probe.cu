// Work-split variants of the elementwise drivers (kernels/common/elementwise.h, binary_layout.h)
// under candle's geometry, timed side by side on one GPU and checked against the host. One binary
// per (module, variant): run.sh compiles this file with -DPROBE_<MODULE> and the variant's macros.
#include "../../bench/indexing-conv-probe/common.cuh"

#if defined(PROBE_BINARY)
#include "../../kernels/binary.hip"
#elif defined(PROBE_UNARY)
#include "../../kernels/unary.hip"
#elif defined(PROBE_CAST)
#include "../../kernels/cast.hip"
#elif defined(PROBE_TERNARY)
#include "../../kernels/ternary.hip"
#endif

#include <cmath>
#include <cstring>
#include <string>

namespace {

const uint64_t kN = 64ull << 20;
double g_copy = 0;
std::string g_variant;

// Host conversions (the module's are device functions). Small integers are exact in bf16.
template <typename T>
T from_int(int v) {
  const float f = static_cast<float>(v);
  if constexpr (std::is_same<T, float>::value) {
    return f;
  } else {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return T{static_cast<uint16_t>(u >> 16)};
  }
}
template <typename T>
float as_float(T v) {
  if constexpr (std::is_same<T, float>::value) {
    return v;
  } else {
    const uint32_t u = static_cast<uint32_t>(v.bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
}

template <typename T>
T* upload(const std::vector<T>& h) {
  T* d = nullptr;
  CK(cudaMalloc(&d, std::max<size_t>(h.size(), 1) * sizeof(T)));
  CK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}
template <typename T>
std::vector<T> download(const T* d, size_t n) {
  std::vector<T> h(n);
  CK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

void report(const std::string& name, double bytes, double us, bool ok) {
  const double bw = bytes / us * 1e-3;
  std::printf("%-10s %-44s %8.1f us %7.1f GB/s %4.0f%% %s\n", g_variant.c_str(), name.c_str(), us,
              bw, 100.0 * bw / g_copy, ok ? "ok" : "WRONG");
}

#if defined(PROBE_BINARY)
// out = lhs + rhs over [rows, cols]; rhs of shape [rhs_rows, rhs_cols] broadcast (1 = broadcast).
template <typename T>
void binary_case(const char* name, void (*k)(size_t, size_t, const size_t*, const T*, const T*, T*),
                 uint64_t rows, uint64_t cols, uint64_t rhs_rows, uint64_t rhs_cols) {
  const uint64_t n = rows * cols;
  std::vector<T> l(n), r(rhs_rows * rhs_cols);
  for (uint64_t i = 0; i < n; ++i) l[i] = from_int<T>(static_cast<int>(i % 61));
  for (uint64_t i = 0; i < r.size(); ++i) r[i] = from_int<T>(static_cast<int>(i % 37));
  T *dl = upload(l), *dr = upload(r), *dout = nullptr;
  CK(cudaMalloc(&dout, n * sizeof(T)));
  size_t* dinfo = nullptr;
  const bool bcast = rhs_rows != rows || rhs_cols != cols;
  if (bcast) {
    std::vector<size_t> info = {
        rows, cols, cols, 1, rhs_rows == 1 ? 0 : rhs_cols, rhs_cols == 1 ? size_t{0} : size_t{1}};
    dinfo = upload(info);
  }
  auto launch = [&] { k<<<cgrid(n), 1024>>>(n, 2, dinfo, dl, dr, dout); };
  const double us = time_us(launch);
  const std::vector<T> out = download(dout, n);
  bool ok = true;
  for (uint64_t i = 0; i < n && ok; ++i) {
    const uint64_t row = i / cols, col = i % cols;
    const uint64_t ri = (rhs_rows == 1 ? 0 : row) * rhs_cols + (rhs_cols == 1 ? 0 : col);
    ok = as_float(out[i]) == as_float(l[i]) + as_float(r[ri]);
  }
  const double bytes = (2.0 + (bcast ? 0.0 : 1.0)) * n * sizeof(T);
  report(name, bytes, us, ok);
  cudaFree(dl);
  cudaFree(dr);
  cudaFree(dout);
  cudaFree(dinfo);
}
void run_all() {
  binary_case<float>("badd_f32 64M contiguous", badd_f32, 8192, 8192, 8192, 8192);
  binary_case<hkb::bf16>("badd_bf16 64M contiguous", badd_bf16, 8192, 8192, 8192, 8192);
  binary_case<float>("badd_f32 [8192,8192]+[1,8192]", badd_f32, 8192, 8192, 1, 8192);
  binary_case<float>("badd_f32 [8192,8192]+[8192,1]", badd_f32, 8192, 8192, 8192, 1);
  binary_case<hkb::bf16>("badd_bf16 [8192,8192]+[1,8192]", badd_bf16, 8192, 8192, 1, 8192);
  binary_case<hkb::bf16>("badd_bf16 [8192,8192]+[8192,1]", badd_bf16, 8192, 8192, 8192, 1);
}
#elif defined(PROBE_UNARY) || defined(PROBE_CAST)
// ref: the exact result; rel: the relative error allowed (0: exact; transcendental ops round
// differently on the device).
template <typename TI, typename TO>
void map_case(const char* name, void (*k)(size_t, size_t, const size_t*, const TI*, TO*),
              float (*ref)(float), float rel = 0) {
  const uint64_t n = kN;
  std::vector<TI> in(n);
  for (uint64_t i = 0; i < n; ++i) in[i] = from_int<TI>(static_cast<int>(i % 61) - 30);
  TI* din = upload(in);
  TO* dout = nullptr;
  CK(cudaMalloc(&dout, n * sizeof(TO)));
  const double us = time_us([&] { k<<<cgrid(n), 1024>>>(n, 1, nullptr, din, dout); });
  const std::vector<TO> out = download(dout, n);
  bool ok = true;
  for (uint64_t i = 0; i < n && ok; ++i) {
    const float want = ref(as_float(in[i]));
    ok = as_float(out[i]) == want || std::fabs(as_float(out[i]) - want) <= rel * std::fabs(want);
  }
  report(name, static_cast<double>(n) * (sizeof(TI) + sizeof(TO)), us, ok);
  cudaFree(din);
  cudaFree(dout);
}
float same(float x) {
  return x;
}
float neg(float x) {
  return -x;
}
float expf_ref(float x) {
  return std::exp(x);
}
float silu_ref(float x) {
  return static_cast<float>(x / (1.0 + std::exp(-static_cast<double>(x))));
}
// The tanh form as x * sigmoid(2u): 1 + tanh(u) cancels for negative x.
float gelu_ref(float x) {
  const double u = 0.7978845608028654 * (x + 0.044715 * static_cast<double>(x) * x * x);
  return static_cast<float>(x / (1.0 + std::exp(-2.0 * u)));
}
void run_all() {
#if defined(PROBE_UNARY)
  map_case<float, float>("ucopy_f32 64M", ucopy_f32, same);
  map_case<hkb::bf16, hkb::bf16>("ucopy_bf16 64M", ucopy_bf16, same);
  map_case<float, float>("uneg_f32 64M", uneg_f32, neg);
  map_case<hkb::bf16, hkb::bf16>("uneg_bf16 64M", uneg_bf16, neg);
  map_case<float, float>("uexp_f32 64M", uexp_f32, expf_ref, 1e-6f);
  map_case<hkb::bf16, hkb::bf16>("uexp_bf16 64M", uexp_bf16, expf_ref, 1e-2f);
  map_case<hkb::bf16, hkb::bf16>("usilu_bf16 64M", usilu_bf16, silu_ref, 1e-2f);
  map_case<hkb::bf16, hkb::bf16>("ugelu_bf16 64M", ugelu_bf16, gelu_ref, 2e-2f);
#else
  map_case<float, hkb::bf16>("cast_f32_bf16 64M", cast_f32_bf16, same);
  map_case<hkb::bf16, float>("cast_bf16_f32 64M", cast_bf16_f32, same);
#endif
}
#elif defined(PROBE_TERNARY)
// kN elements as [8192, kN / 8192]; `row_mask`: the condition is one row broadcast over the
// rows (a [1, cols] mask, info given), else all three operands contiguous (null info).
template <typename T>
void where_case(const char* name,
                void (*k)(size_t, size_t, const size_t*, const uint8_t*, const T*, const T*, T*),
                bool row_mask = false) {
  const uint64_t n = kN, rows = 8192, cols = kN / 8192;
  std::vector<uint8_t> c(row_mask ? cols : n);
  std::vector<T> a(n), b(n);
  for (uint64_t i = 0; i < c.size(); ++i) c[i] = static_cast<uint8_t>((i * 7) % 3 == 0);
  for (uint64_t i = 0; i < n; ++i) {
    a[i] = from_int<T>(static_cast<int>(i % 13));
    b[i] = from_int<T>(-static_cast<int>(i % 11));
  }
  uint8_t* dc = upload(c);
  T *da = upload(a), *db = upload(b), *dout = nullptr;
  CK(cudaMalloc(&dout, n * sizeof(T)));
  size_t* dinfo = nullptr;
  if (row_mask) dinfo = upload(std::vector<size_t>{rows, cols, 0, 1, cols, 1, cols, 1});
  const double us = time_us([&] { k<<<cgrid(n), 1024>>>(n, 2, dinfo, dc, da, db, dout); });
  const std::vector<T> out = download(dout, n);
  bool ok = true;
  for (uint64_t i = 0; i < n && ok; ++i) {
    const uint8_t ci = c[row_mask ? i % cols : i];
    ok = as_float(out[i]) == as_float(ci ? a[i] : b[i]);
  }
  report(name, static_cast<double>(c.size()) + 3.0 * n * sizeof(T), us, ok);
  cudaFree(dc);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dout);
  cudaFree(dinfo);
}
void run_all() {
  where_case<float>("where_u8_f32 64M", where_u8_f32);
  where_case<hkb::bf16>("where_u8_bf16 64M", where_u8_bf16);
  where_case<float>("where_u8_f32 [8192,8192], [1,8192] mask", where_u8_f32, true);
  where_case<hkb::bf16>("where_u8_bf16 [8192,8192], [1,8192] mask", where_u8_bf16, true);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  g_variant = argc > 1 ? argv[1] : "default";
  g_copy = copy_bw(256ull << 20);
  run_all();
  return 0;
}
