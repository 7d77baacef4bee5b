// kernels/common/indexmath.h as the CPU platform compiles it (the AMD code path's definitions of
// __clz and the 64-bit division), run on the host over the cases the nvidia flavour runs on the
// GPU (indexmath_cases.hpp). Built into hkb_gpu_tests in the cpu flavour only.
#include "indexmath_cases.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace {

using namespace indexmath_cases;

TEST(IndexMathTest, FastDivMatchesDivision) {
  const std::vector<uint32_t> ds = divisors();
  size_t bad = 0;
  for (uint32_t d : ds) {
    const hkb::FastDiv f = hkb::make_fast_div(d);
    for (uint32_t i = 0; i < kNumerators; ++i) {
      const uint32_t n = fast_div_mismatch(d, f, i);
      if (n != kNone && bad++ == 0) ADD_FAILURE() << "first mismatch: " << n << " / " << d;
    }
  }
  EXPECT_EQ(bad, 0u) << "over " << ds.size() << " divisors";
}

TEST(IndexMathTest, DivModMatchesHost) {
  std::vector<uint64_t> as, bs;
  divmod_operands(&as, &bs);
  std::vector<uint64_t> out(2 * as.size()), out2(2 * as.size());
  for (size_t k = 0; k < as.size(); ++k) {
    const hkb::DivMod x = hkb::divmod(as[k], bs[k]), y = hkb::divmod_inline(as[k], bs[k]);
    out[2 * k] = x.q;
    out[2 * k + 1] = x.r;
    out2[2 * k] = y.q;
    out2[2 * k + 1] = y.r;
  }
  expect_divmod(as, bs, out.data(), out2.data());
}

}  // namespace
