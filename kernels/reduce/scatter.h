// sum: atomic scatter-add into a pre-zeroed output.
#pragma once

#include "block.h"

namespace {

HKB_DEVICE void atomic_accumulate(float* p, float x) {
  hkb::atomic_add(p, x);
}
HKB_DEVICE void atomic_accumulate(double* p, double x) {
  hkb::atomic_add(p, x);
}
HKB_DEVICE void atomic_accumulate(uint32_t* p, uint32_t x) {
  hkb::atomic_add(p, x);
}
// 16-bit floats: compare-and-swap on the aligned 32-bit word holding the element (little-endian:
// the element at the lower address is the low half).
template <typename H>
HKB_DEVICE void atomic_accumulate_16(H* p, float x) {
  const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
  uint32_t* word = reinterpret_cast<uint32_t*>(addr & ~static_cast<uintptr_t>(3));
  const uint32_t shift = (addr & 2) != 0 ? 16u : 0u;
  uint32_t seen = *reinterpret_cast<volatile uint32_t*>(word);
  while (true) {
    const H cur{static_cast<uint16_t>(seen >> shift)};
    const H next = hkb::from_float<H>(hkb::to_float(cur) + x);
    const uint32_t desired =
        (seen & ~(0xFFFFu << shift)) | (static_cast<uint32_t>(next.bits) << shift);
    const uint32_t prev = hkb::atomic_cas(word, seen, desired);
    if (prev == seen) return;
    seen = prev;
  }
}
HKB_DEVICE void atomic_accumulate(hkb::f16* p, hkb::f16 x) {
  atomic_accumulate_16(p, hkb::to_float(x));
}
HKB_DEVICE void atomic_accumulate(hkb::bf16* p, hkb::bf16 x) {
  atomic_accumulate_16(p, hkb::to_float(x));
}

template <typename T>
__device__ void sum_scatter(size_t numel, size_t nd, size_t nsd, const size_t* info, const T* inp,
                            T* out) {
  const size_t* dims = info;
  const size_t* strides = info + nd;
  const size_t* sum_len = info + 2 * nd;
  const size_t* sum_stride = info + 2 * nd + nsd;
  const bool contiguous = hkb::is_contiguous(nd, dims, strides);
  const uint64_t step = hkb::grid_stride();
  for (uint64_t i = hkb::global_thread_index(); i < numel; i += step) {
    uint64_t di = i;
    for (uint64_t k = 0; k < nsd; ++k) {
      const uint64_t s = sum_stride[k];
      const uint64_t pre = di / s;
      di = (pre / sum_len[k]) * s + (di - pre * s);
    }
    const T x = inp[contiguous ? i : hkb::strided_offset(i, nd, dims, strides)];
    atomic_accumulate(out + di, x);
  }
}

}  // namespace
