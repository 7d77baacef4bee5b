// Layout helpers. candle passes a layout as a device array of size_t `[dims..., strides...]`
// (binary: dims, lhs strides, rhs strides). Offsets are computed in 64 bits so tensors of 2^32
// elements or more are addressed correctly; a 32-bit path is taken when every value fits, because
// 64-bit division is several times slower than 32-bit on both vendors.
#pragma once

#include "indexmath.h"

namespace hkb {

// True when dims/strides describe a dense row-major tensor (size-1 dims may have any stride).
HKB_DEVICE bool is_contiguous(uint64_t num_dims, const size_t* dims, const size_t* strides) {
  uint64_t expected = 1;
  for (uint64_t d = num_dims; d-- > 0;) {
    if (dims[d] != 1 && strides[d] != expected) return false;
    expected *= dims[d];
  }
  return true;
}

// Element offset of the i-th element (row-major logical order) of a strided view. kSkip: the view
// without its dim `skip` (as if that dim were 1).
template <bool kSkip = false>
HKB_DEVICE uint64_t strided_offset(uint64_t i, uint64_t num_dims, const size_t* dims,
                                   const size_t* strides, uint64_t skip = 0) {
  uint64_t offset = 0;
  if (i <= 0xFFFFFFFFull) {
    uint32_t rem = static_cast<uint32_t>(i);
    for (uint64_t d = num_dims; d-- > 0;) {
      if (kSkip && d == skip) continue;
      const uint64_t dim = dims[d];
      if (dim > 0xFFFFFFFFull) {  // a dim this large holds all of rem
        offset += static_cast<uint64_t>(rem) * strides[d];
        rem = 0;
        continue;
      }
      const uint32_t dim32 = static_cast<uint32_t>(dim);
      const uint32_t q = rem / dim32;
      offset += static_cast<uint64_t>(rem - q * dim32) * strides[d];
      rem = q;
    }
    return offset;
  }
  for (uint64_t d = num_dims; d-- > 0;) {
    if (kSkip && d == skip) continue;
    const uint64_t dim = dims[d];
    const DivMod qr = divmod_inline(i, dim);
    i = qr.q;
    offset += qr.r * strides[d];
  }
  return offset;
}

// strided_offset in 32 bits, for views whose element count and every offset are below 2^32 (the
// caller checks): no 64-bit values to hold.
HKB_DEVICE uint32_t strided_offset32(uint32_t i, uint64_t num_dims, const size_t* dims,
                                     const size_t* strides) {
  uint32_t offset = 0;
  for (uint64_t d = num_dims; d-- > 0;) {
    const uint32_t dim = static_cast<uint32_t>(dims[d]), q = i / dim;
    offset += (i - q * dim) * static_cast<uint32_t>(strides[d]);
    i = q;
  }
  return offset;
}

// The dim of a view with the smallest nonzero stride among its dims longer than 1 (num_dims - 1
// when there is none): the order of a loop whose result does not depend on it (const_set) puts
// this dim innermost, so neighbouring threads touch neighbouring elements.
HKB_DEVICE uint64_t densest_dim(uint64_t num_dims, const size_t* dims, const size_t* strides) {
  uint64_t best = num_dims - 1;
  for (uint64_t d = num_dims; d-- > 0;) {
    if (dims[d] > 1 && strides[d] != 0 &&
        (dims[best] <= 1 || strides[best] == 0 || strides[d] < strides[best])) {
      best = d;
    }
  }
  return best;
}

}  // namespace hkb
