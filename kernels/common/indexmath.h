// Index math of every module: quotient and remainder of 64-bit indices with a 32-bit fast path,
// and division of values below 2^31 by an invariant divisor with a multiply and a shift. A 32-bit
// hardware division is a loop of about twenty instructions on both vendors and a 64-bit one
// several times that, so the index math of a kernel takes the cheapest form its values allow.
#pragma once

#include "platform.h"

namespace hkb {

// Quotient and remainder.
struct DivMod {
  uint64_t q, r;
};

// a / b and a % b for b != 0: 32-bit division when both fit, else the compiler's 64-bit division
// (on NVIDIA a call, fast but with the register cost of a call on every path of the kernel).
HKB_DEVICE DivMod divmod(uint64_t a, uint64_t b) {
  if ((a | b) <= 0xFFFFFFFFull) {
    const uint32_t q = static_cast<uint32_t>(a) / static_cast<uint32_t>(b);
    return {q, a - static_cast<uint64_t>(q) * b};
  }
  const uint64_t q = a / b;
  return {q, a - q * b};
}

// a / b and a % b for a 32-bit b != 0: 32-bit division when a fits (the test of b is not needed).
HKB_DEVICE DivMod divmod(uint64_t a, uint32_t b) {
  DivMod d;
  if (a <= 0xFFFFFFFFull) {
    const uint32_t a32 = static_cast<uint32_t>(a);
    const uint32_t q32 = a32 / b;
    d.q = q32;
    d.r = a32 - q32 * b;
  } else {
    d.q = a / b;
    d.r = a - d.q * b;
  }
  return d;
}

// a / b and a % b in the index type I of a loop: a plain 32-bit division for uint32_t, divmod
// for uint64_t.
template <typename I>
HKB_DEVICE void divmod_as(I a, uint32_t b, I& q, I& r) {
  if constexpr (sizeof(I) == 4) {
    q = a / b;
    r = a - q * b;
  } else {
    const DivMod d = divmod(a, b);
    q = d.q;
    r = d.r;
  }
}

// divmod with hkb::udiv64 for 64-bit operands: no call on NVIDIA (slower for such operands), for
// kernels whose 32-bit paths must not pay the call's registers under a tight register cap.
HKB_DEVICE DivMod divmod_inline(uint64_t a, uint64_t b) {
  if ((a | b) <= 0xFFFFFFFFull) {
    const uint32_t a32 = static_cast<uint32_t>(a), b32 = static_cast<uint32_t>(b);
    const uint32_t q = a32 / b32;
    return {q, a32 - q * b32};
  }
  const uint64_t q = udiv64(a, b);
  return {q, a - q * b};
}

// Whether every element offset of a view (num_dims dims and strides, as in an info array) is
// below 2^31, so that a kernel may take 32-bit index math. An empty view has no offset.
HKB_DEVICE bool offsets_fit_31(uint64_t num_dims, const size_t* dims, const size_t* strides) {
  uint64_t end = 1;
  for (uint64_t d = 0; d < num_dims; ++d) {
    if (dims[d] == 0) return true;
    if (dims[d] >= (1ull << 31) || strides[d] >= (1ull << 31)) return false;
    end += (dims[d] - 1) * strides[d];  // below 2^31 + 2^62: no wrap
    if (end > (1ull << 31)) return false;
  }
  return true;
}

// Division of n < 2^31 by a divisor 1 <= d < 2^31 fixed for many n: q = (n * m) >> s with the
// magic m computed once (Granlund and Montgomery's round-up method). With l = ceil(log2 d),
// s = 31 + l and m = ceil(2^s / d) < 2^32: n * m / 2^s = n / d + n * e / 2^s with 0 <= e < 1 and
// n * e / 2^s < 1 / d, while the fraction of n / d is at most (d - 1) / d, so the floor is exact.
struct FastDiv {
  uint32_t m;
  uint32_t s;
};

// The magic of d. 2^s / d comes from an f64 division (within 2^-21 of the exact quotient, which is
// below 2^32) and is then corrected with exact integer tests to the ceiling.
HKB_DEVICE FastDiv make_fast_div(uint32_t d) {
  const uint32_t l = d > 1 ? 32u - static_cast<uint32_t>(__clz(static_cast<int>(d - 1))) : 0u;
  const uint32_t s = 31 + l;
  const uint64_t two_s = 1ull << s;
  const double x = bits_double(static_cast<uint64_t>(1023 + s) << 52) / static_cast<double>(d);
  uint64_t m = static_cast<uint64_t>(x);  // x >= 1: truncation is floor
  if (m * d < two_s) ++m;                 // below the quotient: one up
  if (m * d < two_s) ++m;                 // (floor rounded down past an integer)
  if ((m - 1) * d >= two_s) --m;          // above the ceiling: one down
  return {static_cast<uint32_t>(m), s};
}

// floor(n / d) for n < 2^31, with f = make_fast_div(d).
HKB_DEVICE uint32_t fast_div(uint32_t n, FastDiv f) {
  return static_cast<uint32_t>((static_cast<uint64_t>(n) * f.m) >> f.s);
}

}  // namespace hkb
