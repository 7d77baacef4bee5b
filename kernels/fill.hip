// FILL: fill (a whole buffer with one value), copy2d (rows of a 2-D strided block), const_set (one
// value into a possibly strided view). candle has these for u8/u32/i64/f16/bf16/f32/f64/f8_e4m3;
// hkb also exports i16 and i32, which candle's Rust side asks for and candle lacks.
#include "common/dtype_lists.h"
#include "common/elementwise.h"

namespace {

// 16-byte stores over all threads of the grid, the split map_contiguous (elementwise.h) uses.
template <typename T>
__device__ void fill(T* buf, T value, size_t numel) {
  constexpr int V = 16 / sizeof(T);
  const uint64_t tid = hkb::global_thread_index();
  const uint64_t stride = hkb::grid_stride();
  uint64_t done = 0;
  if (V > 1 && hkb::is_aligned(buf, sizeof(T) * V)) {
    hkb::Pack<T, V> pack;
#pragma unroll
    for (int k = 0; k < V; ++k) pack.v[k] = value;
    const uint64_t packs = numel / V;
    hkb::Pack<T, V>* p = reinterpret_cast<hkb::Pack<T, V>*>(buf);
    for (uint64_t i = tid; i < packs; i += stride) p[i] = pack;
    done = packs * V;
  }
  for (uint64_t i = done + tid; i < numel; i += stride) buf[i] = value;
}

// dst[r * dst_s + c] = src[r * src_s + c] for r < d1, c < d2. Offsets are 64-bit: d1 * stride can
// pass 2^32 even though each argument is 32-bit.
template <typename T>
__device__ void copy2d(const T* src, T* dst, uint32_t d1, uint32_t d2, uint32_t src_s,
                       uint32_t dst_s) {
  const uint64_t n = static_cast<uint64_t>(d1) * d2;
  const uint64_t stride = hkb::grid_stride();
  for (uint64_t i = hkb::global_thread_index(); i < n; i += stride) {
    uint64_t r, c;
    if (i <= 0xFFFFFFFFull) {
      const uint32_t i32 = static_cast<uint32_t>(i);
      r = i32 / d2;
      c = i32 - static_cast<uint32_t>(r) * d2;
    } else {
      r = i / d2;
      c = i - r * d2;
    }
    dst[r * dst_s + c] = src[r * src_s + c];
  }
}

template <typename T>
__device__ void const_set(size_t numel, size_t num_dims, const size_t* info, T value, T* out) {
  if (info == nullptr || hkb::is_contiguous(num_dims, info, info + num_dims)) {
    fill(out, value, numel);
    return;
  }
  const size_t* dims = info;
  const size_t* strides = info + num_dims;
  const uint64_t stride = hkb::grid_stride();
  for (uint64_t i = hkb::global_thread_index(); i < numel; i += stride) {
    out[hkb::strided_offset(i, num_dims, dims, strides)] = value;
  }
}

}  // namespace

#define HKB_FILL(TAG, T)                                                                    \
  HKB_GLOBAL void HKB_OCCUPANCY(1024, 2) fill_##TAG(T* buf, T value, const size_t numel) {  \
    fill<T>(buf, value, numel);                                                             \
  }                                                                                         \
  HKB_GLOBAL void HKB_OCCUPANCY(1024, 2) copy2d_##TAG(                                      \
      const T* src, T* dst, uint32_t d1, uint32_t d2, uint32_t src_s, uint32_t dst_s) {     \
    copy2d<T>(src, dst, d1, d2, src_s, dst_s);                                              \
  }                                                                                         \
  HKB_GLOBAL void HKB_OCCUPANCY(1024, 2) const_set_##TAG(                                   \
      const size_t numel, const size_t num_dims, const size_t* info, const T inp, T* out) { \
    const_set<T>(numel, num_dims, info, inp, out);                                          \
  }
HKB_DTYPES_ALL(HKB_FILL)
