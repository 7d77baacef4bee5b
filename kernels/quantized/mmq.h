// mul_mat_<format> (MMQ): dst[c * nrows_dst + r] = weight row r (ncols_x values of the format) .
// q8_1 column c (columns nrows_y values apart, candle's k_padded), for r < nrows_x, c < ncols_y.
// candle's geometry: grid (ceil(nrows_x / MMQ_Y), ceil(ncols_y / MMQ_X)), block (32, 4); the tile
// sizes are per format and part of the ABI (the caller derives the grid from them).
//
// Each GPU block walks k in chunks: it copies the chunk's raw weight blocks of its MMQ_Y rows and
// the q8_1 blocks of its MMQ_X columns to shared memory, then every thread multiplies 8 rows (4 in
// q3_K's 128 x 128 tile) by MMQ_X * MMQ_Y / 128 / rows columns out of shared memory with the MMVQ
// items of vecdot.h (one definition of each format's integer dot product; a weight item is decoded
// once for all of the thread's columns). Beyond candle:
//   - a chunk ends at the last whole block of the row, so every k that is a multiple of the
//     format's block is right (candle reads the next row when k is not a multiple of its tile);
//   - rows past nrows_x and columns past ncols_y are read as the last valid one and never written;
//   - q4_K / q5_K take their min term from exact integer sums as MMVQ does (candle's MMQ takes it
//     from the q8_1 blocks' rounded sums s), so MMQ and MMVQ agree on the same data.
// The block must hold exactly kMmqThreads threads (candle's (32, 4); on a 64-lane CDNA wave these
// are two waves): no step depends on the wave width, the only exchange is through shared memory.
#pragma once

#include "quantized/vecdot.h"

namespace hkb::quant {

constexpr int kMmqThreads = 128;
// Rows of a thread's outputs: 8, or 4 where the tile gives a thread more than
// tuning::kMmqFullRowOutputs outputs (the decoded weights of its rows would not fit beside them).
template <int MMQ_X, int MMQ_Y>
constexpr int mmq_rows_per_thread() {
  return MMQ_X * MMQ_Y / kMmqThreads > hkb::tuning::kMmqFullRowOutputs ? 4 : 8;
}

// Weight blocks per chunk: 32-value formats take 256 (MMQ_X 64) or 128 (MMQ_X 128) values so that
// the q8_1 tile stays at 18 KiB; the 256-value formats one block.
template <typename F, int MMQ_X>
constexpr int mmq_chunk_blocks() {
  return F::kValues == 32 ? (MMQ_X == 64 ? 8 : 4) : 1;
}
// q8_1 phases per chunk: q3_K's 128 x 128 tile stages its columns' eight q8_1 blocks in two
// halves of four (items 4 h .. 4 h + 3 of vecdot.h's q2_K/q3_K/q6_K layout read only q8_1 blocks
// 4 h .. 4 h + 3), keeping shared memory within NVIDIA's 48 KiB of static shared data.
template <typename F, int MMQ_X, int MMQ_Y>
constexpr int mmq_y_phases() {
  return MMQ_Y * mmq_chunk_blocks<F, MMQ_X>() * F::kBytes +
                     MMQ_X * mmq_chunk_blocks<F, MMQ_X>() * (F::kValues / 32) * kQ81Bytes >
                 48 * 1024
             ? 2
             : 1;
}

// The word a staged line is copied in: whole 32-bit words where the format's blocks allow.
template <int kAlign>
struct MmqUnit {
  using T = uint16_t;
};
template <>
struct MmqUnit<4> {
  using T = uint32_t;
};

// Copies `units` words of type U per line from `lines` lines (line i at src + i * src_stride,
// clamped to line `last`) to shared memory, lines dst_stride bytes apart.
template <typename U>
HKB_DEVICE void mmq_stage(uint8_t* __restrict__ dst, int dst_stride,
                          const uint8_t* __restrict__ src, size_t src_stride, int lines, int last,
                          int units, int tid) {
  for (int i = tid; i < lines * units; i += kMmqThreads) {
    const int line = i / units, u = i - line * units;
    const U* s =
        reinterpret_cast<const U*>(src + src_stride * static_cast<size_t>(min(line, last)));
    reinterpret_cast<U*>(dst + dst_stride * line)[u] = s[u];
  }
}

template <typename F, int MMQ_X, int MMQ_Y>
HKB_DEVICE void mmq(const void* __restrict__ vx, const void* __restrict__ vy,
                    float* __restrict__ dst, int ncols_x, int nrows_x, int ncols_y, int nrows_y,
                    int nrows_dst) {
  using V = Vec<F>;
  using W = decltype(V::load(nullptr, 0));
  constexpr int kB = mmq_chunk_blocks<F, MMQ_X>();
  constexpr int kYPerBlock = F::kValues / 32 * kQ81Bytes;  // q8_1 bytes under one weight block
  constexpr int kPhases = mmq_y_phases<F, MMQ_X, MMQ_Y>();
  static_assert(kPhases == 1 || (F::kValues == 256 && V::kItems == 8), "phases: q3_K layout");
  constexpr int kPhaseItems = V::kItems / kPhases, kPhaseBytes = kYPerBlock / kPhases;
  constexpr int kWLine = kB * F::kBytes, kYLine = kB * kYPerBlock / kPhases;
  constexpr int kMmqRowsPerThread = mmq_rows_per_thread<MMQ_X, MMQ_Y>();
  constexpr int kRowGroups = MMQ_Y / kMmqRowsPerThread;
  constexpr int kColGroups = kMmqThreads / kRowGroups;
  constexpr int kCols = MMQ_X / kColGroups;
  static_assert(kRowGroups * kColGroups == kMmqThreads && kCols * kColGroups == MMQ_X, "tiles");
  static_assert(MMQ_Y * kWLine + MMQ_X * kYLine <= 48 * 1024, "shared memory within 48 KiB");
  using U = typename MmqUnit<F::kAlign>::T;
  // 32-bit words: every staged line starts at a multiple of 4 bytes (the widest unit loaded).
  __shared__ uint32_t sw_words[(MMQ_Y * kWLine + 3) / 4];
  __shared__ uint32_t sy_words[MMQ_X * kYLine / 4];
  uint8_t* sw = reinterpret_cast<uint8_t*>(sw_words);
  uint8_t* sy = reinterpret_cast<uint8_t*>(sy_words);

  if (blockDim.x * blockDim.y * blockDim.z != kMmqThreads) return;  // not candle's block
  const int tid = static_cast<int>(threadIdx.x + blockDim.x * threadIdx.y);
  const int row0 = static_cast<int>(blockIdx.x) * MMQ_Y;
  const int col0 = static_cast<int>(blockIdx.y) * MMQ_X;
  if (row0 >= nrows_x || col0 >= ncols_y) return;  // the whole block: before any barrier
  const int blocks = ncols_x / F::kValues;
  const size_t row_bytes = static_cast<size_t>(blocks) * F::kBytes;
  const size_t col_bytes = static_cast<size_t>(nrows_y / 32) * kQ81Bytes;
  const uint8_t* x = static_cast<const uint8_t*>(vx) + row_bytes * static_cast<size_t>(row0);
  const uint8_t* y = static_cast<const uint8_t*>(vy) + col_bytes * static_cast<size_t>(col0);
  const int rg = tid % kRowGroups, cg = tid / kRowGroups;

  float acc[kMmqRowsPerThread][kCols] = {};
  for (int kb = 0; kb < blocks; kb += kB) {
    const int nb = min(kB, blocks - kb);
    mmq_stage<U>(sw, kWLine, x + static_cast<size_t>(kb) * F::kBytes, row_bytes, MMQ_Y,
                 nrows_x - 1 - row0, nb * F::kBytes / static_cast<int>(sizeof(U)), tid);
    for (int ph = 0; ph < kPhases; ++ph) {
      mmq_stage<uint32_t>(sy, kYLine, y + static_cast<size_t>(kb) * kYPerBlock + ph * kPhaseBytes,
                          col_bytes, MMQ_X, ncols_y - 1 - col0, nb * kPhaseBytes / 4, tid);
      block_sync();
      for (int it = 0; it < nb * kPhaseItems; ++it) {
        const int blk = it / kPhaseItems, sub = it - blk * kPhaseItems;
        W w[kMmqRowsPerThread];
#pragma unroll
        for (int r = 0; r < kMmqRowsPerThread; ++r) {
          w[r] = V::load(sw + (rg + r * kRowGroups) * kWLine + blk * F::kBytes,
                         sub + ph * kPhaseItems);
        }
#pragma unroll
        for (int c = 0; c < kCols; ++c) {
          const auto a = V::act(sy + (cg + c * kColGroups) * kYLine + blk * kPhaseBytes, sub);
#pragma unroll
          for (int r = 0; r < kMmqRowsPerThread; ++r) acc[r][c] += V::dot(w[r], a);
        }
      }
      block_sync();
    }
  }

#pragma unroll
  for (int c = 0; c < kCols; ++c) {
    const int col = col0 + cg + c * kColGroups;
#pragma unroll
    for (int r = 0; r < kMmqRowsPerThread; ++r) {
      const int row = row0 + rg + r * kRowGroups;
      if (row < nrows_x && col < ncols_y) {
        dst[static_cast<size_t>(col) * nrows_dst + row] = acc[r][c];
      }
    }
  }
}

}  // namespace hkb::quant
