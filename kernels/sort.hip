// SORT: argsort of each row, `asort_asc_<dtype>` and `asort_desc_<dtype>`, with candle's
// parameters and launch geometry: grid (nrows), block (min(ncols_pad, 1024)), dynamic shared
// memory ncols_pad * 4 bytes; x is contiguous with rows of ncols, dst gets nrows * ncols u32
// column indices; ncols_pad is the next power of two >= ncols.
//
// Contract:
// - Order: a bitonic network over ncols_pad slots, the padding slots sorting after every real
//   column. Keys compare as a strict total order: by value (ascending or descending), then by
//   column index ascending. The result is therefore the stable argsort in both directions: equal
//   keys keep their column order (candle's kernel is not stable and gives no order among equal
//   keys; any stable order is one of candle's possible orders).
// - NaN: every NaN (any sign or payload) is greater than +inf and equal to every other NaN, so
//   NaNs come last in ascending and first in descending order, among themselves by column. -0.0
//   and +0.0 are equal keys.
// - Grid: one block per row as candle launches it; the row count is gridDim.x. A block whose row
//   needs at most half its threads sorts two rows at once where its shared memory allows (block b
//   rows 2b and 2b + 1). Rows that take few registers are sorted by the first blocks only, each
//   going on to the rows a busy-block count further, while the other blocks leave at once
//   (sort/network.h, sort_rows).
// - Any block size is correct. The block's largest power of two of threads (at most 1024) holds
//   the row in registers, at most 8 slots a thread, or 16 for dtypes of at most
//   4 bytes in rows of more than 16 waves' lanes (ncols_pad above 16 * wave size); see
//   sort/network.h. A block too small for that sorts column indices in shared memory, re-reading
//   the keys at every compare; under candle's geometry only f64 and i64 rows of ncols_pad 16384
//   do.
// - Width limit: ncols_pad <= 16384 (64 KiB of shared memory, AMD's LDS per workgroup). Above it,
//   candle's geometry asks for more shared memory than the device has and the launch itself is
//   refused (the loader returns an error status, nothing runs). A launch that does run with
//   ncols_pad above the limit, not a power of two, or below ncols writes 0xFFFFFFFF (never a valid
//   index) to every dst entry of its row and touches no shared memory. The caller must provide
//   the ncols_pad * 4 bytes of dynamic shared memory candle's geometry gives.
// - ncols <= 0: nothing is written.
#include "sort/network.h"

namespace {

constexpr uint32_t kSortMaxColsPad = 16384;

// The shared-memory network for blocks too small for the registers: slots hold column indices,
// keys are re-read from the row at every compare.
template <bool Ascending, typename T>
HKB_DEVICE bool goes_before(const T* row, uint32_t ncols, uint32_t a, uint32_t b) {
  if (a >= ncols || b >= ncols) {
    if (a < ncols) return true;
    if (b < ncols) return false;
    return a < b;
  }
  const auto ka = sort_key(row[a]);
  const auto kb = sort_key(row[b]);
  if (ka != kb) return Ascending ? ka < kb : kb < ka;
  return a < b;
}

template <bool Ascending, typename T>
HKB_DEVICE void sort_row_in_shared(const T* x, uint32_t* dst, uint32_t ncols, uint32_t pad,
                                   uint32_t* slots) {
  const T* row = x + sort_row_start(blockIdx.x, ncols);
  uint32_t* out = dst + sort_row_start(blockIdx.x, ncols);
  const uint32_t tid = threadIdx.x;
  const uint32_t nthreads = blockDim.x;
  for (uint32_t i = tid; i < pad; i += nthreads) slots[i] = i;
  hkb::block_sync();
  // Stage (k, j) compares slots i and i | j for every i with bit j clear; the pair sorts toward
  // "before" order when bit k of i is clear, against it otherwise (k == pad: all toward).
  for (uint32_t k = 2; k <= pad; k <<= 1) {
    for (uint32_t j = k >> 1; j > 0; j >>= 1) {
      for (uint32_t p = tid; p < pad / 2; p += nthreads) {
        const uint32_t lo = ((p & ~(j - 1)) << 1) | (p & (j - 1));
        const uint32_t hi = lo | j;
        const uint32_t a = slots[lo];
        const uint32_t b = slots[hi];
        const bool toward = (lo & k) == 0;
        const bool swap = toward ? goes_before<Ascending>(row, ncols, b, a)
                                 : goes_before<Ascending>(row, ncols, a, b);
        if (swap) {
          slots[lo] = b;
          slots[hi] = a;
        }
      }
      hkb::block_sync();
    }
  }
  for (uint32_t i = tid; i < ncols; i += nthreads) out[i] = slots[i];
}

template <bool Ascending, typename T>
__device__ void argsort(const T* x, uint32_t* dst, int ncols_arg, int ncols_pad_arg) {
  extern __shared__ uint32_t sort_slots[];
  if (ncols_arg <= 0) return;
  const uint32_t ncols = static_cast<uint32_t>(ncols_arg);
  if (ncols_pad_arg < ncols_arg || ncols_pad_arg > static_cast<int>(kSortMaxColsPad) ||
      (ncols_pad_arg & (ncols_pad_arg - 1)) != 0) {
    uint32_t* out = dst + sort_row_start(blockIdx.x, ncols);
    for (uint32_t i = threadIdx.x; i < ncols; i += blockDim.x) out[i] = 0xFFFFFFFFu;
    return;
  }
  const uint32_t pad = static_cast<uint32_t>(ncols_pad_arg);
  // Workers: the largest power of two of threads the block has (at most 1024).
  uint32_t threads = 1;
  while (threads * 2 <= blockDim.x && threads < 1024) threads *= 2;
  // Registers hold at most 16 slots a thread (8 of the 8-byte dtypes' 12-byte slots, 8 in a row of
  // one wave); a block with fewer threads sorts in shared memory.
  constexpr uint32_t kMaxItems = sizeof(T) == 8 ? 8 : 16;
  uint32_t items = pad < hkb::tuning::kSortMinItems ? pad : hkb::tuning::kSortMinItems;
  if (pad / threads > items) items = pad / threads;
  const uint32_t few_workers = pad / hkb::tuning::kSortMaxWorkers;
  const uint32_t capped = few_workers < kMaxItems ? few_workers : kMaxItems;
  if (capped > items) items = capped;
  const bool in_registers =
      items <= kMaxItems && (items <= kSortMaxWaveItems || pad / items > HKB_WAVE_SIZE);
  switch (in_registers ? items : 0) {
    case 1:
      sort_rows_in_registers<Ascending, 1>(x, dst, ncols, pad, threads, sort_slots);
      break;
    case 2:
      sort_rows_in_registers<Ascending, 2>(x, dst, ncols, pad, threads, sort_slots);
      break;
    case 4:
      sort_rows_in_registers<Ascending, 4>(x, dst, ncols, pad, threads, sort_slots);
      break;
    case 8:
      sort_rows_in_registers<Ascending, 8>(x, dst, ncols, pad, threads, sort_slots);
      break;
    case 16:
      if constexpr (kMaxItems == 16) {
        sort_rows_in_registers<Ascending, 16>(x, dst, ncols, pad, threads, sort_slots);
      }
      break;
    default:
      sort_row_in_shared<Ascending>(x, dst, ncols, pad, sort_slots);
      break;
  }
}

}  // namespace

#define HKB_ARGSORT(TAG, T)                                                         \
  HKB_GLOBAL void HKB_OCCUPANCY(1024, 1)                                            \
      asort_asc_##TAG(const T* x, uint32_t* dst, const int ncols, int ncols_pad) {  \
    argsort<true, T>(x, dst, ncols, ncols_pad);                                     \
  }                                                                                 \
  HKB_GLOBAL void HKB_OCCUPANCY(1024, 1)                                            \
      asort_desc_##TAG(const T* x, uint32_t* dst, const int ncols, int ncols_pad) { \
    argsort<false, T>(x, dst, ncols, ncols_pad);                                    \
  }
HKB_ARGSORT(bf16, hkb::bf16)
HKB_ARGSORT(f16, hkb::f16)
HKB_ARGSORT(f32, float)
HKB_ARGSORT(f64, double)
HKB_ARGSORT(u8, uint8_t)
HKB_ARGSORT(u32, uint32_t)
HKB_ARGSORT(i64, int64_t)
