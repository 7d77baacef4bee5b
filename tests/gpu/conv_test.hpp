// What the CONV module's GPU tests share (test_conv.cpp, test_conv_upsample.cpp): random inputs,
// the input layouts, 4-D reference views, the comparison with the reference and the guard
// elements, and launches with candle's geometry.
#pragma once

#include "gpu/gpu_test.hpp"
#include "reference/conv_ref.hpp"

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace {

using gpu_test::GpuTest;
using gpu_test::Layout;

constexpr size_t kGuard = 8;

using ConvTypes = ::testing::Types<float, double, hkb::f16, hkb::bf16, uint8_t, uint32_t>;

// Random inputs: floats in [-4, 4), u8 over its range, u32 below 2^20 (window sums and averages
// stay exact in float and double; conv products still wrap past 2^32).
template <typename T>
std::vector<T> random_values(std::mt19937_64& rng, size_t n) {
  std::vector<T> v(std::max<size_t>(n, 1));  // an empty tensor still gets a (never read) buffer
  for (auto& x : v) {
    if constexpr (ref::is_float_v<T>) {
      x = ref::from_double<T>(std::uniform_real_distribution<double>(-4.0, 4.0)(rng));
    } else if constexpr (sizeof(T) == 1) {
      x = static_cast<T>(rng());
    } else {
      x = static_cast<T>(rng() & 0xFFFFFu);
    }
  }
  return v;
}

// How an input tensor is laid out in its buffer.
enum class Kind { Contiguous, ChannelsLast, OffsetBroadcast };
const char* kind_name(Kind k) {
  return k == Kind::Contiguous     ? "contiguous"
         : k == Kind::ChannelsLast ? "channels-last"
                                   : "offset+broadcast";
}

// A 3- or 4-D view (dims[0] batch, dims[1] channels) of the given kind. ChannelsLast stores the
// channel dim innermost; OffsetBroadcast starts at element 5 and repeats batch 0 (stride 0).
Layout make_layout(std::vector<size_t> dims, Kind kind) {
  Layout l = Layout::contiguous(dims);
  const size_t nd = dims.size();
  if (kind == Kind::ChannelsLast) {
    // memory order: dims[0], dims[2..], dims[1]
    size_t s = 1;
    l.strides[1] = s;
    s *= dims[1];
    for (size_t d = nd; d-- > 2;) {
      l.strides[d] = s;
      s *= dims[d];
    }
    l.strides[0] = s;
  } else if (kind == Kind::OffsetBroadcast) {
    l.strides[0] = 0;
    l.offset = 5;
  }
  return l;
}

// 4-D reference view of a layout; 3-D layouts get a leading unit dim (`unit_at` 0) or a unit dim
// at position 2 (`unit_at` 2, the h of a 1-D transposed conv).
template <typename T>
ref::View4<T> view4(const std::vector<T>& base, const Layout& l, int unit_at = 0) {
  ref::View4<T> v;
  v.base = base.data() + l.offset;
  if (l.dims.size() == 4) {
    for (int d = 0; d < 4; ++d) v.dims[d] = l.dims[d], v.strides[d] = l.strides[d];
  } else if (unit_at == 0) {
    v.dims[0] = 1, v.strides[0] = 0;
    for (int d = 0; d < 3; ++d) v.dims[d + 1] = l.dims[d], v.strides[d + 1] = l.strides[d];
  } else {
    v.dims[0] = l.dims[0], v.strides[0] = l.strides[0];
    v.dims[1] = l.dims[1], v.strides[1] = l.strides[1];
    v.dims[2] = 1, v.strides[2] = 0;
    v.dims[3] = l.dims[2], v.strides[3] = l.strides[2];
  }
  return v;
}

std::vector<size_t> concat(std::vector<size_t> a, const std::vector<size_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

template <typename T>
double acc_eps() {
  return std::is_same_v<T, double> ? std::ldexp(1.0, -52) : std::ldexp(1.0, -23);
}

// Compares the first e.value.size() outputs with the reference and checks the guard elements
// behind them are still poison. Floats: within one ulp of T plus the accumulation error bound
// (terms * eps of the accumulator * sum of |terms|), or exactly (sign of zero included) for
// copies; NaN and infinities must match. Integers: within int_tol.
template <typename T>
void expect_close(const std::vector<T>& got, const ref::Expect& e, bool exact, double int_tol = 0) {
  const size_t n = e.value.size();
  ASSERT_EQ(got.size(), n + kGuard);
  size_t bad = 0;
  std::ostringstream os;
  for (size_t i = 0; i < n; ++i) {
    const double g = ref::to_double(got[i]), w = e.value[i];
    bool ok;
    if constexpr (ref::is_float_v<T>) {
      if (std::isnan(w) || std::isnan(g)) {
        ok = std::isnan(w) && std::isnan(g);
      } else if (exact || std::isinf(w)) {
        ok = g == w && std::signbit(g) == std::signbit(w);
      } else {
        const double tol = ref::ulp_at<T>(std::fabs(w)) + 2.0 * e.terms * acc_eps<T>() * e.mag[i];
        ok = std::isfinite(g) && std::fabs(g - w) <= tol;
      }
    } else {
      ok = std::fabs(g - w) <= int_tol;
    }
    if (!ok) {
      if (bad < 5) os << "\n  [" << i << "] got " << g << " want " << w;
      ++bad;
    }
  }
  EXPECT_EQ(bad, 0u) << bad << " of " << n << " outputs wrong" << os.str();
  for (size_t i = n; i < got.size(); ++i) {
    ASSERT_TRUE(ref::same_bits(got[i], gpu_test::poison<T>())) << "wrote past the end at " << i;
  }
}

// Launches `op`_<dtype> over a poisoned output of n elements (+ guard) with `args` built by
// `build(args, out_ptr)`, with candle's geometry over `grid_elems` unless `cfg` is given.
template <typename T>
std::vector<T> run(GpuTest& t, const std::string& op, size_t n, size_t grid_elems,
                   const hkb::LaunchConfig* cfg,
                   const std::function<void(hkb::LaunchArgs&, hkb_devptr)>& build) {
  auto out = t.device().upload(std::vector<T>(n + kGuard, gpu_test::poison<T>()));
  hkb::LaunchArgs args;
  build(args, out.ptr());
  const hkb::LaunchConfig c = cfg ? *cfg
                                  : hkb::LaunchConfig::for_num_elems(
                                        static_cast<uint32_t>(std::max<size_t>(grid_elems, 1)));
  t.launch(op + "_" + ref::tag<T>(), c, args);
  return out.download();
}

}  // namespace
