// im2col1d (by tiles through shared memory, or a row of l_k outputs a thread) and col2im1d (one
// output a thread), grid-stride.
#pragma once

#include "common.h"

namespace {

// im2col1d in tiles of kTileL output positions x kTileC channels of one batch element: the block
// copies each channel's input window under the tile (every position once, consecutive threads on
// consecutive positions) into shared memory, then writes the tile's output, kTileC * l_k
// consecutive values per position, consecutive threads on consecutive values. Row by row, a warp's
// loads touch 32 channels' lines, each position is loaded l_k times and the stores are 12-byte
// runs. For windows of up to kWindow positions. Not inlined on NVIDIA: beside the row path it
// spills under the 32-register cap (AMD inlines it).
constexpr uint32_t kTileL = hkb::tuning::kIm2col1dTileL, kTileC = 32;
constexpr uint32_t kWindow = 2 * kTileL + 32, kWindowRow = kWindow + 1;  // stride 2 fits

template <typename T>
__device__ __noinline__ void im2col1d_tiles(uint32_t l_out, uint32_t l_k, uint32_t stride,
                                            uint32_t padding, uint32_t dilation, const size_t* info,
                                            const T* src, T* dst) {
  __shared__ uint64_t raw[(kTileC * kWindowRow * sizeof(T) + 7) / 8];  // any T's alignment
  T* window = reinterpret_cast<T*>(raw);  // [channel][position - first], rows of kWindowRow
  const uint32_t c_in = static_cast<uint32_t>(info[1]), l_in = static_cast<uint32_t>(info[2]);
  const uint32_t s0 = static_cast<uint32_t>(info[3]), s1 = static_cast<uint32_t>(info[4]);
  const uint32_t s2 = static_cast<uint32_t>(info[5]);
  const uint32_t tiles_c = (c_in + kTileC - 1) / kTileC, tiles_l = (l_out + kTileL - 1) / kTileL;
  const uint32_t tiles = static_cast<uint32_t>(info[0]) * tiles_l * tiles_c;
  for (uint32_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {  // the same for the block
    const uint32_t ct = tile % tiles_c, bl = tile / tiles_c;
    const uint32_t b = bl / tiles_l, c0 = ct * kTileC, l0 = (bl - b * tiles_l) * kTileL;
    const uint32_t nc = c_in - c0 < kTileC ? c_in - c0 : kTileC;
    const uint32_t nl = l_out - l0 < kTileL ? l_out - l0 : kTileL;
    const uint32_t width = (nl - 1) * stride + (l_k - 1) * dilation + 1;  // <= kWindow
    const T* s = src + b * s0 + c0 * s1;
    for (uint32_t i = threadIdx.x; i < nc * width; i += blockDim.x) {
      const uint32_t c = i / width, j = i - c * width, x = l0 * stride + j;  // x: padded position
      window[c * kWindowRow + j] =
          x >= padding && x - padding < l_in ? s[c * s1 + (x - padding) * s2] : zero<T>();
    }
    hkb::block_sync();
    const uint32_t run = nc * l_k;  // the tile's values of one position: consecutive in dst
    T* d = dst + ((b * l_out + l0) * c_in + c0) * l_k;
    for (uint32_t e = threadIdx.x; e < nl * run; e += blockDim.x) {
      const uint32_t l = e / run, ck = e - l * run, c = ck / l_k, k = ck - c * l_k;
      d[l * c_in * l_k + ck] = window[c * kWindowRow + l * stride + k * dilation];
    }
    hkb::block_sync();  // the next tile's window overwrites this one
  }
}

// rows = b * l_out * c_in; row r writes dst[r * l_k .. r * l_k + l_k). info = [dims(3),
// strides(3)]. Whole tensors whose tiles' windows fit go by tiles, other launches row by row.
template <typename T>
__device__ void im2col1d(uint64_t rows, uint64_t l_out, uint64_t l_k, uint64_t stride,
                         uint64_t padding, uint64_t dilation, const size_t* info, const T* src,
                         T* dst) {
  const uint64_t c_in = info[1], l_in = info[2];
  const uint64_t total = info[0] * l_out * c_in;
  // The tiles' 32-bit index math: every output, input offset and tap position below 2^31.
  constexpr uint64_t k31 = 1ull << 31;
  const bool small_strides = info[3] < k31 && info[4] < k31 && info[5] < k31;
  const uint64_t in_extent =
      small_strides ? info[0] * info[3] + c_in * info[4] + l_in * info[5] : ~0ull;
  const bool small_steps = stride <= kWindow && dilation <= kWindow && l_k <= kWindow;
  const uint64_t width = small_steps ? (kTileL - 1) * stride + (l_k - 1) * dilation + 1 : ~0ull;
  if (rows >= total && l_k > 0 && width <= kWindow && total > 0 && total * l_k < k31 &&
      in_extent < k31 && l_out * stride + l_k * dilation < k31 &&
      padding < k31) {  // the same for every thread
    im2col1d_tiles(static_cast<uint32_t>(l_out), static_cast<uint32_t>(l_k),
                   static_cast<uint32_t>(stride), static_cast<uint32_t>(padding),
                   static_cast<uint32_t>(dilation), info, src, dst);
    return;
  }
  if (rows > total) rows = total;
  for (uint64_t r = hkb::global_thread_index(); r < rows; r += hkb::grid_stride()) {
    const DivMod c = divmod(r, c_in);
    const DivMod bl = divmod(c.q, l_out);
    const T* s = src + bl.q * info[3] + c.r * info[4];
    T* d = dst + r * l_k;
    for (uint64_t k = 0; k < l_k; ++k) {
      const uint64_t x = bl.r * stride + k * dilation;
      d[k] = (x >= padding && x - padding < l_in) ? s[(x - padding) * info[5]] : zero<T>();
    }
  }
}

template <typename T>
__device__ void col2im1d(uint64_t n, uint64_t l_out, uint64_t l_in, uint64_t c_out, uint64_t k_size,
                         uint64_t stride, const T* src, T* dst) {
  for (uint64_t i = hkb::global_thread_index(); i < n; i += hkb::grid_stride()) {
    const DivMod l = divmod(i, l_out);
    const DivMod bc = divmod(l.q, c_out);
    const T* s = src + (bc.q * l_in * c_out + bc.r) * k_size;
    const DivMod ik = divmod(l.r, stride);
    hkb::wide_acc_t<T> acc = 0;
    // Taps k = l - x * stride for x = l / stride, l / stride - 1, ... while k < k_size.
    uint64_t x = ik.q, k = ik.r;
    while (k < k_size) {
      if (x < l_in) acc += hkb::to_wide_acc(s[x * c_out * k_size + k]);
      if (x == 0) break;
      --x;
      k += stride;
    }
    dst[i] = hkb::from_acc<T>(acc);
  }
}

}  // namespace
