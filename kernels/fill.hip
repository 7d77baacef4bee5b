// FILL: fill (a whole buffer with one value), copy2d (rows of a 2-D strided block), const_set (one
// value into a possibly strided view). candle has these for u8/u32/i64/f16/bf16/f32/f64/f8_e4m3;
// hkb also exports i16 and i32, which candle's Rust side asks for and candle lacks.
#include "common/dtype_lists.h"
#include "common/elementwise.h"

namespace {

// 16-byte stores by the busy threads of the resident split (elementwise.h): under candle's grid
// (a thread an element) only the first blocks work and the rest leave at once.
template <typename T>
__device__ void fill(T* buf, T value, size_t numel, bool whole_grid = true) {
  constexpr int V = 16 / sizeof(T);
  if (hkb::past_resident_bound()) return;
  const hkb::UnitRange r = hkb::resident_range(whole_grid);
  if (r.begin == hkb::kIdle) return;
  uint64_t done = 0;
  if (V > 1 && hkb::is_aligned(buf, sizeof(T) * V)) {
    hkb::Pack<T, V> pack;
#pragma unroll
    for (int k = 0; k < V; ++k) pack.v[k] = value;
    const uint64_t packs = numel / V;
    hkb::Pack<T, V>* p = reinterpret_cast<hkb::Pack<T, V>*>(buf);
    for (uint64_t i = r.begin; i < packs; i += r.step) p[i] = pack;
    done = packs * V;
  }
  for (uint64_t i = done + r.begin; i < numel; i += r.step) buf[i] = value;
}

// Units u of width U (an element, or a 16-byte pack of them), w a row: row u / w, column u % w.
// kTwo: two units of a thread are loaded before either is stored.
template <bool kTwo, typename U>
HKB_DEVICE void copy2d_units(const U* src, U* dst, uint32_t w, uint64_t src_s, uint64_t dst_s,
                             uint64_t units, hkb::UnitRange r) {
  for (uint64_t u = r.begin; u < units; u += (kTwo ? 2 : 1) * r.step) {
    const uint64_t u2 = u + r.step;
    const bool two = kTwo && u2 < units;
    const hkb::DivMod a = hkb::divmod(u, w);
    hkb::DivMod b = a;
    if (two) b = hkb::divmod(u2, w);
    const U x = src[a.q * src_s + a.r];
    U y;
    if (two) y = src[b.q * src_s + b.r];
    dst[a.q * dst_s + a.r] = x;
    if (two) dst[b.q * dst_s + b.r] = y;
  }
}

// dst[r * dst_s + c] = src[r * src_s + c] for r < d1, c < d2, by the busy threads of the resident
// split; rows of whole 16-byte packs at 16-byte-aligned addresses move as packs, two a thread in
// flight (one for 1-byte values: two spill under the 32-register cap), other rows element by
// element. Offsets are
// 64-bit: d1 * stride can pass 2^32 even though each argument is 32-bit.
template <typename T>
__device__ void copy2d(const T* src, T* dst, uint32_t d1, uint32_t d2, uint32_t src_s,
                       uint32_t dst_s) {
  constexpr uint32_t V = 16 / sizeof(T);
  if (hkb::past_resident_bound()) return;
  const hkb::UnitRange r = hkb::resident_range(true);
  if (r.begin == hkb::kIdle || d2 == 0) return;
  using P = hkb::Pack<T, V>;
  if (V > 1 && d2 % V == 0 && src_s % V == 0 && dst_s % V == 0 && hkb::is_aligned(src, 16) &&
      hkb::is_aligned(dst, 16)) {
    copy2d_units<(sizeof(T) > 1)>(reinterpret_cast<const P*>(src), reinterpret_cast<P*>(dst),
                                  d2 / V, src_s / V, dst_s / V,
                                  static_cast<uint64_t>(d1) * (d2 / V), r);
  } else {
    copy2d_units<false>(src, dst, d2, src_s, dst_s, static_cast<uint64_t>(d1) * d2, r);
  }
}

// Every element of the view gets the same value, so the order does not matter: the view is taken
// as rows along its densest dim (strided.h), and a thread writes V consecutive elements of a row,
// as one 16-byte store where the row is contiguous and aligned there, so a transposed view is
// written as densely as a contiguous one.
// The threads of the resident grid loop (elementwise.h): the rest of candle's grid leaves before
// it reads the layout.
template <typename T>
__device__ void const_set(size_t numel, size_t num_dims, const size_t* info, T value, T* out) {
  if (hkb::past_resident_bound()) return;
  // A grid of rows: a layout given by info is the first row's (elementwise.h, map_unary_layout).
  if (info != nullptr && hkb::past_first_row()) return;
  if (info == nullptr || hkb::is_contiguous(num_dims, info, info + num_dims)) {
    fill(out, value, numel, info == nullptr);
    return;
  }
  const hkb::UnitRange r = hkb::resident_grid_range();
  if (r.begin == hkb::kIdle) return;
  constexpr uint32_t V = sizeof(T) < 8 ? 16 / sizeof(T) : 1;
  const size_t* dims = info;
  const size_t* strides = info + num_dims;
  const uint64_t inner = hkb::densest_dim(num_dims, dims, strides);
  const uint64_t len = dims[inner], step = strides[inner];
  // 8-byte values, an element a thread: the rows' loop spills under the 32-register cap, and so
  // does the reordered loop alone (sm_90), so a view already densest last keeps the plain loop.
  if constexpr (V == 1) {
    if (inner == num_dims - 1) {
      for (uint64_t i = r.begin; i < numel; i += r.step) {
        out[hkb::strided_offset(i, num_dims, dims, strides)] = value;
      }
      return;
    }
    for (uint64_t i = r.begin; i < numel; i += r.step) {
      const hkb::DivMod qr = hkb::divmod(i, len);
      out[qr.r * step + hkb::strided_offset<true>(qr.q, num_dims, dims, strides, inner)] = value;
    }
    return;
  }
  const uint64_t per_row = (len + V - 1) / V;
  const uint64_t units = numel == 0 ? 0 : numel / len * per_row;
  hkb::Pack<T, V> pack;
#pragma unroll
  for (uint32_t k = 0; k < V; ++k) pack.v[k] = value;
  for (uint64_t u = r.begin; u < units; u += r.step) {
    const hkb::DivMod qr = hkb::divmod(u, per_row);
    const uint64_t c0 = qr.r * V;
    T* p = out + hkb::strided_offset<true>(qr.q, num_dims, dims, strides, inner) + c0 * step;
    if (step == 1 && c0 + V <= len && hkb::is_aligned(p, 16)) {
      *reinterpret_cast<hkb::Pack<T, V>*>(p) = pack;
      continue;
    }
    for (uint32_t j = 0; j < V && c0 + j < len; ++j) p[j * step] = value;
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
