// Row split of the matrix-vector kernels (mmvq.h, dmmv.h) under candle's grids of one or two rows
// a block: the first busy_blocks_x() blocks (split.h) loop over chunks of rows, the rest leave as
// their first act. A chunk is `rows` rows for each 32-thread group of the block; group g takes
// rows first + g * rows .. +rows-1 of it. first and step are the same for every thread of a
// block, so its groups take the same trips over the chunks.
#pragma once

#include "quantized/split.h"

namespace hkb::quant {

struct RowGroups {
  bool busy;      // false: an idle block, or a thread past the block's last whole 32-thread group
  int lane;       // 0..31 within the group
  int group;      // the group within the block
  int64_t first;  // this block's first chunk's first row
  int64_t step;   // rows between this block's chunks
  int lanes;      // 32: the stride of a group's loops over a row
};

HKB_DEVICE RowGroups row_groups(int rows) {
  RowGroups g{};
  const uint32_t busy = busy_blocks_x();
  const uint32_t tid = flat_thread(), groups = block_threads() >> 5;
  g.busy = blockIdx.x < busy && (tid >> 5) < groups;
  g.lane = static_cast<int>(tid & 31u);
  g.group = static_cast<int>(tid >> 5);
  const int64_t chunk = static_cast<int64_t>(groups) * rows;
  g.first = static_cast<int64_t>(blockIdx.x) * chunk;
  g.step = static_cast<int64_t>(busy) * chunk;
  // 32 for every busy thread, but not a constant to the compiler: with a constant stride a lane's
  // item within a weight block is loop-invariant, and hoisting all that follows from it doubles
  // the VGPRs of the multi-column kernels on AMD and makes nvcc spill under the 64-register cap.
  const uint32_t threads = block_threads();
  g.lanes = static_cast<int>(threads < 32u ? threads : 32u);
  return g;
}

}  // namespace hkb::quant
