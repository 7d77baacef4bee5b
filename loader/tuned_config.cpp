// hkb_launch_config_tuned: per kernel (the manifest's launch rule, manifest.hpp), the launch of n
// elements with which hkb's kernel is fastest. Grid-stride kernels (LaunchRule::kResident) get
// candle's 1024-thread blocks, one per Options::tuned_packs 16-byte packs of the kernel's widest
// element a thread, so that the data moves in one pass, up to Options::tuned_max_blocks of them
// (past it the threads loop). Past kTunedRowBlocks blocks the grid has rows (x, y): candle's
// one-row grids keep their blocks past kTunedRowBlocks idle (kernels/common/elementwise.h), and a
// grid of rows has every block of every row busy on contiguous data; strided layouts take its first
// row (docs/performance-round2.md, docs/performance-round2b.md).
#include "library.hpp"

#include <algorithm>
#include <limits>

namespace hkb::detail {

namespace {

// Candle's block (cudarc's for_num_elems): the kernels' register budgets are sized for it.
constexpr uint32_t kBlock = 1024;
// Largest grid x dimension of both runtimes.
constexpr uint64_t kMaxGridX = std::numeric_limits<int32_t>::max();

hkb_launch_config grid_of(uint32_t x, uint32_t y) {
  hkb_launch_config c;
  c.grid[0] = x, c.grid[1] = y, c.grid[2] = 1;
  c.block[0] = kBlock, c.block[1] = 1, c.block[2] = 1;
  c.shared_mem_bytes = 0;
  return c;
}

}  // namespace

Status Library::tuned_config(hkb_function_s* fn, uint64_t n, hkb_launch_config* out) {
  if (fn == nullptr) return error(HKB_ERROR_INVALID_ARGUMENT, "null function");
  if (out == nullptr) return error(HKB_ERROR_INVALID_ARGUMENT, "null launch config output");
  HKB_RETURN_IF_ERROR(check_alive(fn->ctx));
  const KernelInfo& k = *fn->info;
  uint64_t per_block = kBlock;  // elements a block takes (a round)
  switch (k.launch) {
    case LaunchRule::kNone:
      return error(HKB_ERROR_INVALID_ARGUMENT,
                   k.name +
                       " has no launch from an element count: candle computes its grid and "
                       "block from the op's shape (manifests/candle-abi.tsv, launch_note)");
    case LaunchRule::kForNumElems:
      break;
    case LaunchRule::kResident: {
      // Elements of a 16-byte pack (element_bytes is at most 8), as the kernels' pack_width.
      const uint64_t per_pack = k.element_bytes == 0 ? 1 : 16 / k.element_bytes;
      per_block = kBlock * options_.tuned_packs * per_pack;
      break;
    }
  }
  const uint64_t need = n / per_block + (n % per_block != 0 ? 1 : 0);
  if (k.launch == LaunchRule::kResident) {
    const uint64_t blocks = std::min<uint64_t>(need, options_.tuned_max_blocks);
    if (blocks <= kTunedRowBlocks) {
      *out = grid_of(static_cast<uint32_t>(blocks), 1);
    } else {  // the fewest rows, then as few blocks a row as they allow
      const uint64_t rows = (blocks + kTunedRowBlocks - 1) / kTunedRowBlocks;
      *out =
          grid_of(static_cast<uint32_t>((blocks + rows - 1) / rows), static_cast<uint32_t>(rows));
    }
    return Status::ok();
  }
  if (need > kMaxGridX) {
    return error(HKB_ERROR_INVALID_ARGUMENT,
                 k.name + ": " + std::to_string(n) + " elements need " + std::to_string(need) +
                     " blocks of 1024 threads, more than a grid holds (2^31 - 1)");
  }
  *out = grid_of(static_cast<uint32_t>(need), 1);
  return Status::ok();
}

}  // namespace hkb::detail
