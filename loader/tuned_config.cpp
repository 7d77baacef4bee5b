// hkb_launch_config_tuned: per kernel (the manifest's launch rule, manifest.hpp), the launch of n
// elements with which hkb's kernel is fastest. Grid-stride kernels (LaunchRule::kResident) get
// candle's 1024-thread blocks, one per two 16-byte packs of the kernel's widest element a thread,
// at most kTunedGridMax of them: a grid that small has every block work (the kernels' resident
// split, kernels/common/elementwise.h), and many blocks streaming their own spans move more bytes
// than a few looping over everything or candle's grid with its idle blocks
// (docs/performance-round2.md).
#include "library.hpp"

#include <algorithm>
#include <limits>

namespace hkb::detail {

namespace {

// Candle's block (cudarc's for_num_elems): the kernels' register budgets are sized for it.
constexpr uint32_t kBlock = 1024;
// 16-byte packs of the widest element a thread of the tuned grid takes a round: the kernels load
// two before the first store.
constexpr uint64_t kTunedPacks = 2;
// The kernels' tuning::kResidentBlockBound: grids of at most this many blocks have every block
// work.
constexpr uint64_t kTunedGridMax = 1024;
// Largest grid x dimension of both runtimes.
constexpr uint64_t kMaxGridX = std::numeric_limits<int32_t>::max();

hkb_launch_config one_dimensional(uint32_t blocks) {
  hkb_launch_config c;
  c.grid[0] = blocks, c.grid[1] = 1, c.grid[2] = 1;
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
      per_block = kBlock * kTunedPacks * per_pack;
      break;
    }
  }
  const uint64_t need = n / per_block + (n % per_block != 0 ? 1 : 0);
  if (k.launch == LaunchRule::kResident) {  // past kTunedGridMax blocks the threads loop
    *out = one_dimensional(static_cast<uint32_t>(std::min(need, kTunedGridMax)));
    return Status::ok();
  }
  if (need > kMaxGridX) {
    return error(HKB_ERROR_INVALID_ARGUMENT,
                 k.name + ": " + std::to_string(n) + " elements need " + std::to_string(need) +
                     " blocks of 1024 threads, more than a grid holds (2^31 - 1)");
  }
  *out = one_dimensional(static_cast<uint32_t>(need));
  return Status::ok();
}

}  // namespace hkb::detail
