// dequantize_block_<format>_<f32|f16>: a run of blocks to a contiguous output.
// How many values (candle's arguments):
//   q4_0, q4_1, q8_0: k = number of 32-value blocks; 32 k values.
//   q5_0, q5_1: k = number of values. k need not be a multiple of 32: exactly k values are
//     written, from the ceil(k / 32) blocks that hold them.
//   K-quants: no count; one 256-value super-block per block of the grid (candle launches
//     ceil(el / 256) blocks), so the grid decides: 256 * blocks values.
// k <= 0 writes nothing. Any grid: the busy blocks (split.h) do the whole job.
#pragma once

#include "quantized/decode.h"

namespace hkb::quant {

struct SameRow {
  static constexpr bool kLoads = false;
  const uint8_t* base;
  HKB_DEVICE uint32_t key(uint64_t) const { return 0; }
  HKB_DEVICE const uint8_t* at(uint32_t) const { return base; }
};

template <typename F, typename TO>
HKB_DEVICE void dequantize(const void* vx, TO* y, uint64_t values) {
  if (idle_block()) return;
  const Busy b = busy_range();
  const uint8_t* x = static_cast<const uint8_t*>(vx);
  if ((reinterpret_cast<uintptr_t>(x) & (F::kAlign - 1)) == 0) {
    decode_rows<F, F::kAlign>(b, 1, values, SameRow{x}, y);
  } else {
    decode_rows<F, 1>(b, 1, values, SameRow{x}, y);
  }
}

// Values of candle's count argument for each format family.
HKB_DEVICE uint64_t values_of_blocks(int k) {
  return k > 0 ? 32ull * static_cast<uint64_t>(k) : 0;
}
HKB_DEVICE uint64_t values_of_count(int k) {
  return k > 0 ? static_cast<uint64_t>(k) : 0;
}
HKB_DEVICE uint64_t values_of_grid() {
  return 256ull * gridDim.x * gridDim.y * gridDim.z;
}

}  // namespace hkb::quant
