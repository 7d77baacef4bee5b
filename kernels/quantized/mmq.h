// mul_mat_<format> (MMQ): dst[c * nrows_dst + r] = weight row r (ncols_x values of the format) .
// q8_1 column c (columns nrows_y values apart, candle's k_padded), for r < nrows_x, c < ncols_y.
// candle's geometry: grid (ceil(nrows_x / MMQ_Y), ceil(ncols_y / MMQ_X)), block (32, 4); the tile
// sizes are per format and part of the ABI (the caller derives the grid from them).
//
// Each GPU block walks k in chunks of tuning::kMmqChunkValues. Per chunk it stages in shared
// memory its MMQ_Y rows' weights already decoded to signed bytes (quantized/mmq_decode.h: each
// weight is decoded once per block, not once per column group) with their per-32-value row data,
// and its MMQ_X columns' q8_1 ints with their column data. Every thread then owns a register tile
// of rows x columns (rows rg + kRowGroups i, columns cg + kColGroups j, so that a warp's stores are
// runs of consecutive rows): per 32-value group it holds up to tuning::mmq_cols_held columns' 8
// words, takes each row's 8 words in turn, and adds one exact integer sum (8 dot4_i8) per output
// with one float scaling (mmq_madd). Beyond candle:
//   - a chunk's groups past the row's last block are staged as zeros (weights and scales; they
//     read the row's last group), so every k that is a multiple of the format's block is right
//     (candle reads the next row when k is not a multiple of its tile) and nothing past the row
//     is read;
//   - rows past nrows_x and columns past ncols_y are read as the last valid one and never written;
//   - q4_K / q5_K take their min term from exact integer sums as MMVQ does (candle's MMQ takes it
//     from the q8_1 blocks' rounded sums s), so MMQ and MMVQ agree on the same data.
// The block must hold exactly kMmqThreads threads (candle's (32, 4); on a 64-lane CDNA wave these
// are two waves): no step depends on the wave width, the only exchange is through shared memory.
#pragma once

#include "quantized/mmq_decode.h"

namespace hkb::quant {

constexpr int kMmqThreads = 128;

// A tile's geometry: kRows x kCols outputs a thread, kRowGroups x kColGroups threads.
template <int MMQ_X, int MMQ_Y>
struct MmqTile {
  static constexpr int kRows = hkb::tuning::mmq_thread_rows(MMQ_X, MMQ_Y);
  static constexpr int kRowGroups = MMQ_Y / kRows;
  static constexpr int kColGroups = kMmqThreads / kRowGroups;
  static constexpr int kCols = MMQ_X / kColGroups;
  // Columns whose words a thread holds at once, and the passes over its columns.
  static constexpr int kColsHeld = kCols < hkb::tuning::mmq_cols_held(kRows * kCols)
                                       ? kCols
                                       : hkb::tuning::mmq_cols_held(kRows * kCols);
  static constexpr int kPasses = kCols / kColsHeld;
  static_assert(kRowGroups * kRows == MMQ_Y && kRowGroups * kColGroups == kMmqThreads &&
                    kCols * kColGroups == MMQ_X && kPasses * kColsHeld == kCols,
                "MMQ tile");
};

// The kernel's NVIDIA occupancy bound (quantized.hip).
template <typename F, int MMQ_X, int MMQ_Y>
constexpr int mmq_blocks_per_sm() {
  return hkb::tuning::mmq_blocks_per_sm(MMQ_X, MMQ_Y, mmq_row_words(MmqFormat<F>::kForm));
}

// 16-byte words of shared memory (every staged line starts 16-byte aligned).
template <int kWords>
struct alignas(16) MmqShared {
  uint32_t w[kWords];
};

template <typename F, int MMQ_X, int MMQ_Y>
HKB_DEVICE void mmq(const void* __restrict__ vx, const void* __restrict__ vy,
                    float* __restrict__ dst, int ncols_x, int nrows_x, int ncols_y, int nrows_y,
                    int nrows_dst) {
  using Fmt = MmqFormat<F>;
  using T = MmqTile<MMQ_X, MMQ_Y>;
  constexpr MmqForm kForm = Fmt::kForm;
  constexpr int kRW = mmq_row_words(kForm), kCW = mmq_col_words(kForm);
  constexpr int kG = hkb::tuning::kMmqChunkValues / 32;  // groups of 32 values per chunk
  constexpr int kGPB = F::kValues / 32;                  // groups per weight block
  static_assert(kG * 32 == hkb::tuning::kMmqChunkValues && (kGPB % kG == 0 || kG % kGPB == 0),
                "MMQ chunk: whole groups, whole blocks or whole parts of a block");
  // Units (a line's group) a thread stages per chunk: weights, q8_1 columns.
  constexpr int kWU = MMQ_Y * kG / kMmqThreads, kAU = MMQ_X * kG / kMmqThreads;
  static_assert(kWU * kMmqThreads == MMQ_Y * kG && kAU * kMmqThreads == MMQ_X * kG,
                "MMQ staging: whole units a thread");
  // Line pitch in words: 4 words of padding put consecutive lines 4 banks apart, so the 16-byte
  // reads of 8 lines (and the staging stores) hit distinct banks.
  constexpr int kPitch = 8 * kG + 4;
  // Row and column data are group-major ([group][line][words]): a warp reads consecutive lines.
  constexpr int kWWords = MMQ_Y * kPitch, kAWords = MMQ_X * kPitch;
  constexpr int kRWords = kG * MMQ_Y * kRW, kCWords = kG * MMQ_X * kCW;
  static_assert(4 * (kWWords + kAWords + kRWords + kCWords) <= 48 * 1024,
                "shared memory within NVIDIA's 48 KiB of static shared data");
  __shared__ MmqShared<kWWords> sw;
  __shared__ MmqShared<kAWords> sa;
  __shared__ MmqShared<kRWords> sr;
  __shared__ MmqShared<kCWords> sc;

  if (blockDim.x * blockDim.y * blockDim.z != kMmqThreads) return;  // not candle's block
  const int tid = static_cast<int>(threadIdx.x + blockDim.x * threadIdx.y);
  const int row0 = static_cast<int>(blockIdx.x) * MMQ_Y;
  const int col0 = static_cast<int>(blockIdx.y) * MMQ_X;
  if (row0 >= nrows_x || col0 >= ncols_y) return;  // the whole block: before any barrier
  const int groups = ncols_x / F::kValues * kGPB;  // whole blocks only
  const size_t row_bytes = static_cast<size_t>(ncols_x / F::kValues) * F::kBytes;
  const size_t col_bytes = static_cast<size_t>(nrows_y / 32) * kQ81Bytes;
  const uint8_t* x = static_cast<const uint8_t*>(vx) + row_bytes * static_cast<size_t>(row0);
  const uint8_t* y = static_cast<const uint8_t*>(vy) + col_bytes * static_cast<size_t>(col0);
  const int last_row = nrows_x - 1 - row0, last_col = ncols_y - 1 - col0;
  const int rg = tid % T::kRowGroups, cg = tid / T::kRowGroups;

  // Staging: unit v of a thread is line (tid + kMmqThreads v) / kG, group % kG, so consecutive
  // threads read along a line. A group past the row's last block reads the row's last group and
  // is staged as zeros.
  const auto load_w = [&](uint32_t(&raw)[Fmt::kRaw], int v, int g0) {
    const int u = tid + kMmqThreads * v, gi = min(g0 + u % kG, groups - 1);
    const uint8_t* blk = x + row_bytes * static_cast<size_t>(min(u / kG, last_row)) +
                         static_cast<size_t>(gi / kGPB) * F::kBytes;
    Fmt::load(blk, gi % kGPB, raw);
  };
  const auto load_a = [&](uint32_t(&raw)[9], int v, int g0) {
    const int u = tid + kMmqThreads * v, gi = min(g0 + u % kG, groups - 1);
    const uint8_t* blk = y + col_bytes * static_cast<size_t>(min(u / kG, last_col)) +
                         static_cast<size_t>(gi) * kQ81Bytes;
#pragma unroll
    for (int i = 0; i < 9; ++i) raw[i] = ld32<4>(blk + 4 * i);
  };
  // Decodes unit v's raw words (of chunk g0) into shared memory.
  const auto store_w = [&](const uint32_t(&raw)[Fmt::kRaw], int v, int g0) {
    const int u = tid + kMmqThreads * v, line = u / kG, b = u % kG;
    uint32_t q[8], r[kRW];
    Fmt::decode(raw, (g0 + b) % kGPB, q, r);
    if (g0 + b >= groups) {
#pragma unroll
      for (int i = 0; i < 8; ++i) q[i] = 0;
#pragma unroll
      for (int i = 0; i < kRW; ++i) r[i] = 0;
    }
    uint4* to = reinterpret_cast<uint4*>(sw.w + line * kPitch + 8 * b);
    to[0] = make_uint4(q[0], q[1], q[2], q[3]);
    to[1] = make_uint4(q[4], q[5], q[6], q[7]);
#pragma unroll
    for (int i = 0; i < kRW; ++i) sr.w[(b * MMQ_Y + line) * kRW + i] = r[i];
  };
  const auto store_a = [&](const uint32_t(&raw)[9], int v, int g0) {
    const int u = tid + kMmqThreads * v, line = u / kG, b = u % kG;
    const bool in = g0 + b < groups;
    uint32_t a[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) a[i] = in ? raw[1 + i] : 0u;
    float c[kCW];
    mmq_col_data<F>(in ? raw[0] : 0u, a, c);
    uint4* to = reinterpret_cast<uint4*>(sa.w + line * kPitch + 8 * b);
    to[0] = make_uint4(a[0], a[1], a[2], a[3]);
    to[1] = make_uint4(a[4], a[5], a[6], a[7]);
#pragma unroll
    for (int i = 0; i < kCW; ++i) {
      sc.w[(b * MMQ_X + line) * kCW + i] = float_bits(c[i]);
    }
  };
  const auto stage_w = [&](int v, int g0) {
    uint32_t raw[Fmt::kRaw];
    load_w(raw, v, g0);
    store_w(raw, v, g0);
  };
  const auto stage_a = [&](int v, int g0) {
    uint32_t raw[9];
    load_a(raw, v, g0);
    store_a(raw, v, g0);
  };
  const auto stage = [&](int g0) {
    if constexpr (hkb::tuning::mmq_stage_at_once(kRW)) {
#pragma unroll
      for (int v = 0; v < kWU; ++v) stage_w(v, g0);
#pragma unroll
      for (int v = 0; v < kAU; ++v) stage_a(v, g0);
    } else {
#pragma unroll 1
      for (int v = 0; v < kWU; ++v) stage_w(v, g0);
#pragma unroll 1
      for (int v = 0; v < kAU; ++v) stage_a(v, g0);
    }
  };

  float acc[T::kRows][T::kCols] = {};
  // The staged chunk into the register tile.
  const auto compute = [&]() {
    const uint32_t* w_lines = sw.w;
    const uint32_t* a_lines = sa.w;
    const uint32_t* r_data = sr.w;
    const uint32_t* c_data = sc.w;
#pragma unroll 1
    for (int b = 0; b < kG; ++b) {
#pragma unroll
      for (int p = 0; p < T::kPasses; ++p) {
        uint32_t a[T::kColsHeld][8];
        float c[T::kColsHeld][4];
#pragma unroll
        for (int j = 0; j < T::kColsHeld; ++j) {
          const int line = cg + T::kColGroups * (p * T::kColsHeld + j);
          const uint4* from = reinterpret_cast<const uint4*>(a_lines + line * kPitch + 8 * b);
          const uint4 lo = from[0], hi = from[1];
          a[j][0] = lo.x, a[j][1] = lo.y, a[j][2] = lo.z, a[j][3] = lo.w;
          a[j][4] = hi.x, a[j][5] = hi.y, a[j][6] = hi.z, a[j][7] = hi.w;
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            c[j][i] = i < kCW ? bits_float(c_data[(b * MMQ_X + line) * kCW + i]) : 0.0f;
          }
        }
#pragma unroll
        for (int i = 0; i < T::kRows; ++i) {
          const int line = rg + T::kRowGroups * i;
          const uint4* from = reinterpret_cast<const uint4*>(w_lines + line * kPitch + 8 * b);
          const uint4 lo = from[0], hi = from[1];
          const uint32_t w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
          float r[3];
          uint32_t rw[kRW];
#pragma unroll
          for (int k = 0; k < kRW; ++k) rw[k] = r_data[(b * MMQ_Y + line) * kRW + k];
#pragma unroll
          for (int k = 0; k < 3; ++k) r[k] = k < kRW ? bits_float(rw[k < kRW ? k : 0]) : 0.0f;
          // kSplit: the sub-scales of r1, sign-extended from 16 bits.
          const int sc0 = static_cast<int>(rw[kRW - 1] << 16) >> 16;
          const int sc1 = static_cast<int>(rw[kRW - 1]) >> 16;
#pragma unroll
          for (int j = 0; j < T::kColsHeld; ++j) {
            float& o = acc[i][p * T::kColsHeld + j];
            o = mmq_madd<kForm>(o, w, a[j], r, sc0, sc1, c[j]);
          }
        }
      }
    }
  };

  for (int g0 = 0; g0 < groups; g0 += kG) {
    stage(g0);
    block_sync();
    compute();
    block_sync();
  }

#pragma unroll
  for (int j = 0; j < T::kCols; ++j) {
    const int col = col0 + cg + T::kColGroups * j;
#pragma unroll
    for (int i = 0; i < T::kRows; ++i) {
      const int row = row0 + rg + T::kRowGroups * i;
      if (row < nrows_x && col < ncols_y) {
        dst[static_cast<size_t>(col) * nrows_dst + row] = acc[i][j];
      }
    }
  }
}

}  // namespace hkb::quant
