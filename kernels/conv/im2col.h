// im2col: dst (b, h_out, w_out, c_in, h_k, w_k). The launch goes to the first strategy that
// applies (the others are in the headers included here):
//   1. blocks that are not whole teams of 32 threads: "packs" (im2col_packs.h);
//   2. blocks past the busy ones: leave, before anything else;
//   3. 32-bit offsets, all outputs, enough of them a busy block, a plan that fits: "row tiles"
//      (im2col_rows.h);
//   4. 32-bit offsets and taps that fit the table: "taps" (im2col_taps.h);
//   5. anything else: "elements" (im2col_shape.h).
#pragma once

#include "im2col_packs.h"
#include "im2col_rows.h"
#include "im2col_shape.h"
#include "im2col_taps.h"

namespace {

// Strategies 3 to 5, for blocks of whole teams that are busy.
template <typename T>
HKB_DEVICE void im2col_teams(uint64_t n, uint64_t h_out, uint64_t w_out, uint64_t h_k, uint64_t w_k,
                             uint64_t stride, uint64_t padding, uint64_t dilation,
                             const size_t* info, uint32_t busy, const T* src, T* dst) {
  // The row tiles, or the tap table (source offset, row offset << 16 | column offset).
  __shared__ uint4 smem[2 * kIm2colTileBytes / sizeof(uint4)];
  __shared__ RowTileBlock shared_block;
  // All of info at once: the checks below would otherwise wait for two rounds of loads.
  size_t dims[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) dims[i] = info[i];
  info = dims;
  const uint64_t total = im2col_outputs(~0ull, h_out, w_out, h_k, w_k, info);
  n = n < total ? n : total;
  if (n == 0) return;
  if (im2col_fits32(n, h_out, w_out, h_k, w_k, stride, padding, dilation, info)) {
    const Im2colShape<uint32_t> a =
        im2col_shape<uint32_t>(n, h_out, w_out, h_k, w_k, stride, padding, dilation, info);
    const uint32_t batch = static_cast<uint32_t>(info[0]);
    if (im2col_row_tiles(a, total, batch, busy, smem, shared_block, src, dst)) return;
    if (im2col_taps_fit(h_k, w_k, dilation)) {
      im2col_taps<T, hkb::tuning::kIm2colRounds>(a, busy, reinterpret_cast<uint2*>(smem), src, dst);
    } else {
      im2col_elements(a, busy, src, dst);
    }
    return;
  }
  const Im2colShape<uint64_t> a =
      im2col_shape<uint64_t>(n, h_out, w_out, h_k, w_k, stride, padding, dilation, info);
  im2col_elements(a, busy, src, dst);
}

// info = [src dims(4), src strides(4)].
template <typename T>
__device__ void im2col(uint64_t n, uint64_t h_out, uint64_t w_out, uint64_t h_k, uint64_t w_k,
                       uint64_t stride, uint64_t padding, uint64_t dilation, const size_t* info,
                       const T* src, T* dst) {
  constexpr int V = pack_width<T>::value;
  constexpr int M = copy_packs<T>::value;
  // Idle blocks of whole teams (candle's grid has about 70 times the busy ones) leave with one
  // branch on a bound that needs no division: their instructions are most of the time a launch
  // spends after the busy blocks finish.
  static_assert(hkb::tuning::kIm2colQuarters <= 8, "the busy blocks are below the cap");
  const bool teams = blockDim.x % kIm2colTeam == 0;
  if (blockIdx.x >= hkb::multiprocessors() * 2 && teams) return;
  if (teams) {
    const uint32_t busy = im2col_busy_blocks();
    if (blockIdx.x >= busy) return;
    im2col_teams(n, h_out, w_out, h_k, w_k, stride, padding, dilation, info, busy, src, dst);
    return;
  }
  Group g;
  if (!group_of_block<V, M, false>(&g)) return;
  if (g.base + threadIdx.x >= n / V + (n % V != 0)) return;  // past the end: no info loads
  n = im2col_outputs(n, h_out, w_out, h_k, w_k, info);
  if (n == 0) return;
  if (im2col_fits32(n, h_out, w_out, h_k, w_k, stride, padding, dilation, info)) {
    const Im2colShape<uint32_t> a =
        im2col_shape<uint32_t>(n, h_out, w_out, h_k, w_k, stride, padding, dilation, info);
    im2col_packs<T, M>(g, a, src, dst);
  } else {
    const Im2colShape<uint64_t> a =
        im2col_shape<uint64_t>(n, h_out, w_out, h_k, w_k, stride, padding, dilation, info);
    im2col_packs<T, 1>(g, a, src, dst);
  }
}

}  // namespace
