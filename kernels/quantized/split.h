// Work split of the quantized kernels. candle's grids give every GPU block a few hundred values,
// so most of the cost of a launch is launching and retiring blocks. As in the elementwise families
// (common/elementwise.h), only the first blocks of the grid work, all their threads stepping over
// the whole job, while the other blocks leave as their first act: the data moves while they
// retire. Blocks are numbered x fastest, then y, then z (the order the hardware launches them),
// so any grid shape works, and any grid with at least one block covers the job.
#pragma once

#include "common/platform.h"

namespace hkb::quant {

struct Busy {
  uint64_t first;  // this thread's index among the busy threads
  uint64_t step;   // number of busy threads (at most mp * kBusyThreadsPerMP: below 2^32)
};

HKB_DEVICE uint64_t linear_block() {
  return blockIdx.x + static_cast<uint64_t>(gridDim.x) *
                          (blockIdx.y + static_cast<uint64_t>(gridDim.y) * blockIdx.z);
}
HKB_DEVICE uint32_t block_threads() {
  return blockDim.x * blockDim.y * blockDim.z;
}
HKB_DEVICE uint32_t flat_thread() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

// True for the blocks that leave at once: two multiplies and compares, no division.
HKB_DEVICE bool idle_block() {
  const uint64_t block = linear_block();
  const uint32_t mp = multiprocessors();
  return block >= static_cast<uint64_t>(mp) * hkb::tuning::kQuantBusyBlocksPerMP ||
         block * block_threads() >= static_cast<uint64_t>(mp) * hkb::tuning::kQuantBusyThreadsPerMP;
}

// For a thread of a block that is not idle: the busy blocks are the first
// min(grid, mp * kBusyBlocksPerMP, ceil(mp * kBusyThreadsPerMP / threads)).
HKB_DEVICE Busy busy_range() {
  const uint32_t threads = block_threads();
  const uint32_t mp = multiprocessors();
  uint64_t blocks = static_cast<uint64_t>(gridDim.x) * gridDim.y * gridDim.z;
  const uint64_t by_blocks = static_cast<uint64_t>(mp) * hkb::tuning::kQuantBusyBlocksPerMP;
  const uint64_t by_threads = (mp * hkb::tuning::kQuantBusyThreadsPerMP + threads - 1) / threads;
  if (blocks > by_blocks) blocks = by_blocks;
  if (blocks > by_threads) blocks = by_threads;
  return {linear_block() * threads + flat_thread(), blocks * threads};
}

// Position (row, col) of the units first, first + step, ... of a rows x cols job (cols > 0),
// stepped without dividing. first and step count busy threads (below 2^32), so the two divisions
// when it starts are 32-bit ones (or none, for rows of 2^32 units or more). I = uint32_t needs
// rows * cols below 2^31 (row then stays below 2^32 while the cursor runs past the job).
template <typename I = uint64_t>
struct Cursor {
  I row, col, cols;
  uint32_t drow, dcol;
  HKB_DEVICE Cursor(uint64_t first, uint64_t step, uint64_t cols_) : cols(static_cast<I>(cols_)) {
    const uint32_t f = static_cast<uint32_t>(first), s = static_cast<uint32_t>(step);
    if (cols_ > 0xFFFFFFFFull) {
      row = 0, col = f, drow = 0, dcol = s;
      return;
    }
    const uint32_t c = static_cast<uint32_t>(cols_);
    const uint32_t r = f / c;
    row = r, col = f - r * c;
    drow = s / c, dcol = s - drow * c;
  }
  HKB_DEVICE void next() {
    col += dcol;
    row += drow;
    if (col >= cols) {
      col -= cols;
      ++row;
    }
  }
};

}  // namespace hkb::quant
