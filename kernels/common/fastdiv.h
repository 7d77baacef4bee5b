// Division of values below 2^31 by a divisor fixed for many of them: q = (n * m) >> s, a multiply
// and a shift, with the magic m computed once (Granlund and Montgomery's round-up method). Index
// math of the copying kernels divides every output's index by the same few extents, and a 32-bit
// hardware division is a loop of about twenty instructions on both vendors.
//
// For 1 <= d < 2^31 let l = ceil(log2 d), s = 31 + l and m = ceil(2^s / d), which is below 2^32.
// Then n * m / 2^s = n / d + n * e / 2^s with 0 <= e < 1, and n * e / 2^s < 2^31 / 2^(31 + l) <=
// 1 / d, while the fraction of n / d is at most (d - 1) / d: floor(n * m / 2^s) = floor(n / d)
// for every n < 2^31.
#pragma once

#include "platform.h"

namespace hkb {

struct FastDiv {
  uint32_t m;
  uint32_t s;
};

// The magic of 1 <= d < 2^31. 2^s / d comes from an f64 division (within 2^-21 of the exact
// quotient, which is below 2^32) and is then corrected with exact integer tests to the ceiling.
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
