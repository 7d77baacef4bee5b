// The cases of the index-math test (kernels/common/indexmath.h), shared by the nvidia flavour,
// which runs them in kernels (test_indexmath.cu), and the cpu flavour, which runs the same
// functions on the host with the CPU platform's definitions (test_indexmath_cpu.cpp).
#pragma once

#include "common/indexmath.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace indexmath_cases {

constexpr uint32_t kNumerators = 4096;
constexpr uint32_t kNone = 0xFFFFFFFFu;  // no mismatch (every tested numerator is below 2^31)

// Divisors sampled over [1, 2^31): every divisor below 5000, powers of two and their neighbours,
// the largest ones, random ones and 200 at every magnitude.
inline std::vector<uint32_t> divisors() {
  std::vector<uint32_t> ds;
  for (uint32_t d = 1; d < 5000; ++d) ds.push_back(d);
  for (int b = 12; b < 31; ++b) {  // powers of two and the 16 divisors either side
    for (int e = -16; e <= 16; ++e) ds.push_back(static_cast<uint32_t>((1ll << b) + e));
  }
  for (uint32_t d : {0x7FFFFFFFu, 0x7FFFFFFEu, 0x7FFFFFF0u, 0x40000001u, 0x3FFFFFFFu,
                     3u * 0x15555555u, 0x55555555u, 0x2AAAAAABu}) {
    ds.push_back(d);
  }
  std::mt19937 rng(1);
  std::uniform_int_distribution<uint32_t> any(1, 0x7FFFFFFFu);
  for (int i = 0; i < 20000; ++i) ds.push_back(any(rng));
  for (int b = 0; b < 31; ++b) {  // 2^b + random below 2^b
    std::uniform_int_distribution<uint32_t> low(0, (1u << b) - 1);
    for (int i = 0; i < 200; ++i) ds.push_back((1u << b) + low(rng));
  }
  return ds;
}

// The numerators of case i (< kNumerators) for divisor d: at the edges (0, near 2^31, multiples of
// d and their neighbours) and spread over [0, 2^31). Returns the first one fast_div gets wrong.
HKB_DEVICE uint32_t fast_div_mismatch(uint32_t d, const hkb::FastDiv& f, uint32_t i) {
  const uint32_t m = d * (i % 64);
  const uint32_t top = 0x7FFFFFFFu / d * d;  // the largest multiple of d below 2^31
  const uint32_t cands[8] = {
      i, 0x7FFFFFFFu - i, (i * 524309u) & 0x7FFFFFFFu, m, m - 1, m + 1, top - i % 3, top + i % 3};
  for (uint32_t n : cands) {
    if (n < 0x80000000u && hkb::fast_div(n, f) != n / d) return n;
  }
  return kNone;
}

// Operand pairs for divmod on 64-bit values: every pair of edge values, then random magnitudes.
inline void divmod_operands(std::vector<uint64_t>* as, std::vector<uint64_t>* bs) {
  const uint64_t edges[] = {0,
                            1,
                            2,
                            3,
                            0x7FFFFFFFu,
                            0x80000000u,
                            0xFFFFFFFEu,
                            0xFFFFFFFFu,
                            1ull << 32,
                            (1ull << 32) + 1,
                            0x123456789ull,
                            ~0ull >> 1,
                            ~0ull - 1,
                            ~0ull};
  for (uint64_t a : edges) {
    for (uint64_t b : edges) {
      if (b == 0) continue;
      as->push_back(a);
      bs->push_back(b);
    }
  }
  std::mt19937_64 rng(2);
  for (int i = 0; i < 60000; ++i) {
    const int abits = 1 + static_cast<int>(rng() % 64), bbits = 1 + static_cast<int>(rng() % 64);
    uint64_t a = rng() >> (64 - abits), b = rng() >> (64 - bbits);
    if (b == 0) b = 1;
    as->push_back(a);
    bs->push_back(b);
  }
}

// divmod and divmod_inline of every pair against the host's / and %: got[2k], got[2k + 1] are
// divmod's quotient and remainder for pair k, got2 the same from divmod_inline.
inline void expect_divmod(const std::vector<uint64_t>& as, const std::vector<uint64_t>& bs,
                          const uint64_t* got, const uint64_t* got2) {
  int shown = 0;
  for (size_t k = 0; k < as.size() && shown < 5; ++k) {
    const uint64_t q = as[k] / bs[k], r = as[k] % bs[k];
    if (got[2 * k] != q || got[2 * k + 1] != r || got2[2 * k] != q || got2[2 * k + 1] != r) {
      ADD_FAILURE() << as[k] << " / " << bs[k] << ": expected " << q << " r " << r << ", divmod "
                    << got[2 * k] << " r " << got[2 * k + 1] << ", divmod_inline " << got2[2 * k]
                    << " r " << got2[2 * k + 1];
      ++shown;
    }
  }
}

}  // namespace indexmath_cases
