// hkb_launch_config_tuned: per kernel (the manifest's launch rule, manifest.hpp) and device, the
// launch of n elements with which hkb's kernel is fastest. Grid-stride kernels (LaunchRule::
// kResident) get only the blocks the device holds at once: under candle's one-thread-per-element
// grid the idle blocks' launch and retirement cost bandwidth (docs/performance.md), and a grid
// that fits the device lets every block work (the kernels' resident split,
// kernels/common/elementwise.h).
#include "library.hpp"

#include <limits>

namespace hkb::detail {

namespace {

// Candle's block (cudarc's for_num_elems): the kernels' register budgets (HKB_OCCUPANCY) are
// sized for it.
constexpr uint32_t kBlock = 1024;
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
  const uint64_t need = n / kBlock + (n % kBlock != 0 ? 1 : 0);  // one thread per element
  switch (k.launch) {
    case LaunchRule::kNone:
      return error(HKB_ERROR_INVALID_ARGUMENT,
                   k.name +
                       " has no launch from an element count: candle computes its grid and "
                       "block from the op's shape (manifests/candle-abi.tsv, launch_note)");
    case LaunchRule::kForNumElems:
      if (need > kMaxGridX) {
        return error(HKB_ERROR_INVALID_ARGUMENT,
                     k.name + ": " + std::to_string(n) + " elements need " + std::to_string(need) +
                         " blocks of 1024 threads, more than a grid holds (2^31 - 1)");
      }
      *out = one_dimensional(static_cast<uint32_t>(need));
      return Status::ok();
    case LaunchRule::kResident:
      break;
  }
  uint32_t per_mp = fn->blocks_per_multiprocessor.load(std::memory_order_relaxed);
  if (per_mp == 0) {
    LiveLock live;
    HKB_RETURN_IF_ERROR(bind(fn->ctx, &live));
    void* handle = fn->handle.load(std::memory_order_acquire);
    if (handle == nullptr) {
      return error(HKB_ERROR_INVALID_ARGUMENT, k.name + ": function handle was never loaded");
    }
    HKB_RETURN_IF_ERROR(runtime_->occupancy(handle, kBlock, 0, &per_mp));
    if (per_mp == 0) {
      return error(HKB_ERROR_RUNTIME, k.name + ": the runtime reports no resident block of " +
                                          std::to_string(kBlock) + " threads on device " +
                                          std::to_string(fn->ctx->ordinal));
    }
    fn->blocks_per_multiprocessor.store(per_mp, std::memory_order_relaxed);  // same if raced
  }
  // The count the kernels' work split reads (the device's, or the caller's override).
  const uint64_t resident =
      static_cast<uint64_t>(per_mp) * fn->ctx->multiprocessors.load(std::memory_order_relaxed);
  *out = one_dimensional(static_cast<uint32_t>(need < resident ? need : resident));
  return Status::ok();
}

}  // namespace hkb::detail
