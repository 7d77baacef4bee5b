// SORT: argsort of each row, `asort_asc_<dtype>` and `asort_desc_<dtype>`, with candle's
// parameters and launch geometry: grid (nrows), block (min(ncols_pad, 1024)), dynamic shared
// memory ncols_pad * 4 bytes; x is contiguous with rows of ncols, dst gets nrows * ncols u32
// column indices; ncols_pad is the next power of two >= ncols.
//
// Contract:
// - Order: a bitonic network over ncols_pad slots in shared memory, the padding slots sorting
//   after every real column. Keys compare as a strict total order: by value (ascending or
//   descending), then by column index ascending. The result is therefore the stable argsort in
//   both directions: equal keys keep their column order (candle's kernel is not stable and gives
//   no order among equal keys; any stable order is one of candle's possible orders).
// - NaN: every NaN (any sign or payload) is greater than +inf and equal to every other NaN, so
//   NaNs come last in ascending and first in descending order, among themselves by column. -0.0
//   and +0.0 are equal keys.
// - Any block size is correct (each thread walks slots in steps of blockDim.x); one block per row.
// - Width limit: ncols_pad <= 16384 (64 KiB of shared memory, AMD's LDS per workgroup). Above it,
//   candle's geometry asks for more shared memory than the device has and the launch itself is
//   refused (the loader returns an error status, nothing runs). A launch that does run with
//   ncols_pad above the limit, not a power of two, or below ncols writes 0xFFFFFFFF (never a valid
//   index) to every dst entry of its row and touches no shared memory. The caller must provide
//   the ncols_pad * 4 bytes of dynamic shared memory candle's geometry gives.
// - ncols <= 0: nothing is written.
#include "common/dtypes.h"

namespace {

constexpr int kSortMaxColsPad = 16384;

HKB_DEVICE bool is_nan_key(float v) {
  return v != v;
}
HKB_DEVICE bool is_nan_key(double v) {
  return v != v;
}
template <typename K>
HKB_DEVICE bool is_nan_key(K) {
  return false;
}

// Key of a column in a type with a native `<`: reduced floats widen to float (exact).
template <typename T>
HKB_DEVICE hkb::compute_t<T> key_of(T v) {
  return hkb::widen(v);
}

// a < b with NaN greater than everything and equal to NaN.
template <typename K>
HKB_DEVICE bool key_less(K a, K b) {
  if (is_nan_key(a)) return false;
  if (is_nan_key(b)) return true;
  return a < b;
}

// Whether column a goes before column b in the final order; padding slots (>= ncols) last.
template <bool Ascending, typename T>
HKB_DEVICE bool goes_before(const T* row, uint32_t ncols, uint32_t a, uint32_t b) {
  if (a >= ncols || b >= ncols) {
    if (a < ncols) return true;
    if (b < ncols) return false;
    return a < b;
  }
  const auto ka = key_of(row[a]);
  const auto kb = key_of(row[b]);
  if (Ascending ? key_less(ka, kb) : key_less(kb, ka)) return true;
  if (Ascending ? key_less(kb, ka) : key_less(ka, kb)) return false;
  return a < b;
}

template <bool Ascending, typename T>
__device__ void argsort(const T* x, uint32_t* dst, int ncols_arg, int ncols_pad_arg) {
  extern __shared__ uint32_t sort_slots[];
  if (ncols_arg <= 0) return;
  const uint32_t ncols = static_cast<uint32_t>(ncols_arg);
  const uint64_t row_start = static_cast<uint64_t>(blockIdx.x) * ncols;
  uint32_t* out = dst + row_start;
  const uint32_t tid = threadIdx.x;
  const uint32_t nthreads = blockDim.x;
  if (ncols_pad_arg < ncols_arg || ncols_pad_arg > kSortMaxColsPad ||
      (ncols_pad_arg & (ncols_pad_arg - 1)) != 0) {
    for (uint32_t i = tid; i < ncols; i += nthreads) out[i] = 0xFFFFFFFFu;
    return;
  }
  const uint32_t pad = static_cast<uint32_t>(ncols_pad_arg);
  const T* row = x + row_start;
  for (uint32_t i = tid; i < pad; i += nthreads) sort_slots[i] = i;
  hkb::block_sync();
  // Stage (k, j) compares slots i and i | j for every i with bit j clear; the pair sorts toward
  // "before" order when bit k of i is clear, against it otherwise (k == pad: all toward).
  for (uint32_t k = 2; k <= pad; k <<= 1) {
    for (uint32_t j = k >> 1; j > 0; j >>= 1) {
      for (uint32_t p = tid; p < pad / 2; p += nthreads) {
        const uint32_t lo = ((p & ~(j - 1)) << 1) | (p & (j - 1));
        const uint32_t hi = lo | j;
        const uint32_t a = sort_slots[lo];
        const uint32_t b = sort_slots[hi];
        const bool toward = (lo & k) == 0;
        const bool swap = toward ? goes_before<Ascending>(row, ncols, b, a)
                                 : goes_before<Ascending>(row, ncols, a, b);
        if (swap) {
          sort_slots[lo] = b;
          sort_slots[hi] = a;
        }
      }
      hkb::block_sync();
    }
  }
  for (uint32_t i = tid; i < ncols; i += nthreads) out[i] = sort_slots[i];
}

}  // namespace

#define HKB_ARGSORT(TAG, T)                                                                     \
  HKB_GLOBAL void asort_asc_##TAG(const T* x, uint32_t* dst, const int ncols, int ncols_pad) {  \
    argsort<true, T>(x, dst, ncols, ncols_pad);                                                 \
  }                                                                                             \
  HKB_GLOBAL void asort_desc_##TAG(const T* x, uint32_t* dst, const int ncols, int ncols_pad) { \
    argsort<false, T>(x, dst, ncols, ncols_pad);                                                \
  }
HKB_ARGSORT(bf16, hkb::bf16)
HKB_ARGSORT(f16, hkb::f16)
HKB_ARGSORT(f32, float)
HKB_ARGSORT(f64, double)
HKB_ARGSORT(u8, uint8_t)
HKB_ARGSORT(u32, uint32_t)
HKB_ARGSORT(i64, int64_t)
