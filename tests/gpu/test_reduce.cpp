// REDUCE on a device, with candle's launch geometry unless a test says otherwise: fast_* (grid =
// outputs, block = next_pow2(min(1024, E)), info reordered with the reduced dims last) and the
// atomic sum (the row kernels are in test_reduce_rows.cpp). Results are held to the CPU
// references of tests/reference/reduce_ref.hpp under the contract at the top of
// kernels/reduce.hip.
#include "gpu/gpu_test.hpp"
#include "reference/reduce_ref.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

namespace {

using gpu_test::GpuTest;
using gpu_test::Layout;
using ref::FastOp;

uint32_t next_pow2(uint64_t n) {
  uint32_t b = 1;
  while (b < n) b <<= 1;
  return b;
}
uint32_t candle_fast_block(uint64_t group) {
  return next_pow2(std::min<uint64_t>(1024, group));
}

const char* op_name(FastOp op) {
  switch (op) {
    case FastOp::sum:
      return "fast_sum_";
    case FastOp::min:
      return "fast_min_";
    case FastOp::max:
      return "fast_max_";
    case FastOp::argmin:
      return "fast_argmin_";
    default:
      return "fast_argmax_";
  }
}
constexpr FastOp kAllOps[] = {FastOp::sum, FastOp::min, FastOp::max, FastOp::argmin,
                              FastOp::argmax};

template <typename T>
T from(double v) {
  return ref::from_double<T>(v);
}

// A permutation of `view` with the dims in `reduced` moved last (in their order), as candle's
// FastReduce builds info.
Layout reduced_last(const Layout& view, const std::vector<size_t>& reduced) {
  Layout r;
  r.offset = view.offset;
  for (size_t d = 0; d < view.dims.size(); ++d) {
    if (std::find(reduced.begin(), reduced.end(), d) != reduced.end()) continue;
    r.dims.push_back(view.dims[d]);
    r.strides.push_back(view.strides[d]);
  }
  for (size_t d : reduced) {
    r.dims.push_back(view.dims[d]);
    r.strides.push_back(view.strides[d]);
  }
  return r;
}

// Bound on a float sum's error for a block of `threads`: Neumaier per thread, then a butterfly tree
// for power-of-two blocks, a sequential fold otherwise.
template <typename T>
double sum_tolerance(uint32_t threads, double sum_abs) {
  const double levels =
      (threads & (threads - 1)) == 0 ? std::log2(static_cast<double>(threads)) : threads;
  return (levels + 4) * ref::compute_eps<T>() * sum_abs;
}

template <typename T>
class ReduceFastTest : public GpuTest {
 protected:
  struct Launch {
    uint32_t grid = 0;   // 0: candle's (number of outputs)
    uint32_t block = 0;  // 0: candle's
  };

  // Runs every fast_* op on `view` of `base`, reducing `reduced`, and compares each output.
  void check(const std::vector<T>& base, const Layout& view, const std::vector<size_t>& reduced,
             Launch how = {}, const char* what = "") {
    SCOPED_TRACE(seed_note());
    const Layout r = reduced_last(view, reduced);
    size_t group = 1;
    for (size_t d : reduced) group *= view.dims[d];
    const size_t numel = r.numel();
    const size_t n_out = group == 0 ? (how.grid ? how.grid : 1) : numel / group;
    const uint32_t grid = how.grid ? how.grid : static_cast<uint32_t>(n_out);
    const uint32_t block = how.block ? how.block : candle_fast_block(group);
    SCOPED_TRACE(std::string(what) + " " + r.str() + " E=" + std::to_string(group) + " grid " +
                 std::to_string(grid) + " block " + std::to_string(block));

    std::vector<std::vector<T>> groups(n_out);
    for (size_t o = 0; o < n_out; ++o) {
      for (size_t j = 0; j < group; ++j) groups[o].push_back(base[r.index(o * group + j)]);
    }
    auto src = this->device().upload(base);
    auto info = this->device().upload(r.info());
    for (FastOp op : kAllOps) {
      const std::string name = std::string(op_name(op)) + ref::tag<T>();
      SCOPED_TRACE(name);
      hkb::LaunchArgs args;
      args.arg(numel).arg(group).arg(r.dims.size()).arg(info.ptr()).arg(src.ptr(r.offset));
      const auto cfg = hkb::LaunchConfig::make(grid, 1, 1, block, 1, 1);
      if (op == FastOp::argmin || op == FastOp::argmax) {
        auto out = this->device().upload(std::vector<uint32_t>(n_out + 1, 0xA5A5A5A5u));
        args.arg(out.ptr());
        this->launch(name, cfg, args);
        const auto got = out.download();
        for (size_t o = 0; o < n_out; ++o) {
          const auto want = ref::reduce_group(op, groups[o]);
          ASSERT_EQ(got[o], want.index) << "output " << o;
        }
        ASSERT_EQ(got[n_out], 0xA5A5A5A5u) << "wrote past the outputs";
      } else {
        auto out = this->device().upload(std::vector<T>(n_out + 1, gpu_test::poison<T>()));
        args.arg(out.ptr());
        this->launch(name, cfg, args);
        const auto got = out.download();
        for (size_t o = 0; o < n_out; ++o) {
          const auto want = ref::reduce_group(op, groups[o]);
          if constexpr (ref::is_float_v<T>) {
            if (op == FastOp::sum) {
              double sum_abs = 0;
              for (const T& x : groups[o]) sum_abs += std::fabs(ref::to_double(x));
              ASSERT_TRUE(ref::close_to(got[o], want.value, sum_tolerance<T>(block, sum_abs)))
                  << "output " << o << ": got " << ref::to_double(got[o]) << " want " << want.value;
            } else {
              // min/max are exact: the same value, the sign of zero included, or NaN for NaN.
              const double g = ref::to_double(got[o]);
              const bool ok =
                  std::isnan(want.value)
                      ? std::isnan(g)
                      : (g == want.value && std::signbit(g) == std::signbit(want.value));
              ASSERT_TRUE(ok) << "output " << o << ": got " << g << " want " << want.value;
            }
          } else {
            ASSERT_EQ(static_cast<int64_t>(got[o]), want.ivalue) << "output " << o;
          }
        }
        ASSERT_TRUE(ref::same_bits(got[n_out], gpu_test::poison<T>())) << "wrote past the outputs";
      }
    }
  }

  std::vector<T> random(size_t n) { return gpu_test::random_vector<T>(this->rng(), n); }
};

using FastTypes = ::testing::Types<hkb::bf16, hkb::f16, float, double, uint8_t, uint32_t, int64_t>;
TYPED_TEST_SUITE(ReduceFastTest, FastTypes);

// Rows of the widths over the last dim, contiguous.
TYPED_TEST(ReduceFastTest, LastDimRowWidths) {
  for (size_t cols : {1, 31, 32, 33, 1023, 1024, 1025, 65537}) {
    const size_t rows = cols > 4096 ? 2 : 5;
    const Layout view = Layout::contiguous({rows, cols});
    this->check(this->random(view.numel()), view, {1});
  }
}

// Values drawn from a handful of levels, so many ties: argmin/argmax must give the first index.
TYPED_TEST(ReduceFastTest, TiesGiveTheFirstIndex) {
  using T = TypeParam;
  std::vector<T> base(3 * 2000);
  for (auto& x : base) x = from<T>(static_cast<double>(this->rng()() % 4));
  const Layout view = Layout::contiguous({3, 2000});
  this->check(base, view, {1});
  // Extremes only at the far end and at a low index on another row.
  std::vector<T> flat(3 * 2000, from<T>(1));
  flat[2000 + 1999] = from<T>(3);
  flat[2000 + 7] = from<T>(3);
  flat[4000 + 1500] = from<T>(0);
  flat[4000 + 1501] = from<T>(0);
  this->check(flat, view, {1});
  // The same over whole packs (the packed-row path; 16-bit floats compare two values a word there).
  std::vector<T> packed(3 * 2048);
  for (auto& x : packed) x = from<T>(static_cast<double>(this->rng()() % 4));
  this->check(packed, Layout::contiguous({3, 2048}), {1}, {}, "whole packs");
}

// A middle dim (stride = last dim), several reduced dims, a transposed view, a sliced view with a
// start offset, and a broadcast (stride 0) dim: info carries the permuted dims and strides.
TYPED_TEST(ReduceFastTest, ReorderedLayouts) {
  {
    const Layout view = Layout::contiguous({3, 37, 5});
    const auto base = this->random(view.numel());
    this->check(base, view, {1}, {}, "middle dim");
    this->check(base, view, {0, 2}, {}, "outer and inner dims");
    this->check(base, view, {0}, {}, "first dim");
  }
  {
    Layout t = Layout::contiguous({40, 70});
    std::swap(t.dims[0], t.dims[1]);
    std::swap(t.strides[0], t.strides[1]);  // (70, 40) view, column-major
    const auto base = this->random(40 * 70);
    this->check(base, t, {1}, {}, "transposed");
  }
  {
    Layout s;  // rows 1..4 of a (6, 300) tensor, every other column from column 1
    s.dims = {4, 150};
    s.strides = {300, 2};
    s.offset = 301;
    this->check(this->random(6 * 300), s, {1}, {}, "sliced");
  }
  {
    Layout b;  // (4, 3, 700) broadcast over dim 1
    b.dims = {4, 3, 700};
    b.strides = {700, 0, 1};
    b.offset = 5;
    const auto base = this->random(5 + 4 * 700);
    this->check(base, b, {2}, {}, "broadcast kept dim");
    this->check(base, b, {1}, {}, "broadcast reduced dim");
    this->check(base, b, {1, 2}, {}, "broadcast and contiguous reduced dims");
  }
  {
    // Start offset of one element: rows are not 16-byte aligned (the scalar head path).
    Layout o = Layout::contiguous({3, 1030});
    o.offset = 1;
    this->check(this->random(1 + 3 * 1030), o, {1}, {}, "misaligned rows");
  }
}

// Any grid that covers the outputs by looping, and block sizes other than candle's: below, at and
// above both wave widths, and sizes that are not powers of two (the shared-memory-only path). Rows
// of 777 elements take the element-wise paths; rows of 768 are whole 16-byte packs for every dtype
// (the packed-row path wherever the block size and the row's pack count divide one another).
TYPED_TEST(ReduceFastTest, OtherGridsAndBlocks) {
  for (size_t cols : {777, 768}) {
    const Layout view = Layout::contiguous({50, cols});
    const auto base = this->random(view.numel());
    this->check(base, view, {1}, {3, 0}, "grid of 3");
    for (uint32_t block : {1u, 2u, 16u, 32u, 64u, 128u, 96u, 100u, 1024u, 1000u}) {
      this->check(base, view, {1}, {7, block}, "block");
    }
  }
}

// More outputs than twice the working-block count (HKB_FAST_BLOCKS, 1024 in kernels/reduce.hip), so
// one block reduces several consecutive outputs and the blocks past the last chunk do nothing: rows
// of several packs per thread, of one, and narrower than the block (several rows per pass, the last
// pass partial), plus a grid smaller than the chunk count and rows that are not adjacent.
TYPED_TEST(ReduceFastTest, ManyRows) {
  for (size_t cols : {4, 64, 1024}) {
    const Layout view = Layout::contiguous({2100, cols});
    this->check(this->random(view.numel()), view, {1}, {}, "many rows");
  }
  const Layout wide = Layout::contiguous({2048, 4096});
  this->check(this->random(wide.numel()), wide, {1}, {}, "many wide rows");
  const Layout narrow = Layout::contiguous({2100, 64});
  this->check(this->random(narrow.numel()), narrow, {1}, {5, 0}, "many rows, grid of 5");
  Layout sliced;  // columns 0..63 of a (2100, 80) tensor
  sliced.dims = {2100, 64};
  sliced.strides = {80, 1};
  this->check(this->random(2100 * 80), sliced, {1}, {}, "many sliced rows");
}

// E = 0 (a zero-sized reduced dim): every output is the identity; argmin/argmax 0xFFFFFFFF.
TYPED_TEST(ReduceFastTest, EmptyGroups) {
  const Layout view = Layout::contiguous({6, 0});
  this->check(std::vector<TypeParam>(1), view, {1}, {6, 1}, "empty");
}

// Float specials: NaN propagates through min/max and wins argmin/argmax at its first index; +-inf
// and +-0 follow IEEE 754-2019 minimum/maximum.
template <typename T>
class ReduceFastFloatTest : public ReduceFastTest<T> {};
using FloatTypes = ::testing::Types<hkb::bf16, hkb::f16, float, double>;
TYPED_TEST_SUITE(ReduceFastFloatTest, FloatTypes);

TYPED_TEST(ReduceFastFloatTest, SpecialValues) {
  using T = TypeParam;
  const double nan = NAN, inf = INFINITY;
  // 1025 columns take the element-wise paths, 1024 (whole aligned packs) the packed-row path.
  for (const size_t cols : {size_t{1025}, size_t{1024}}) {
    std::vector<std::vector<double>> rows;
    auto row = [&](std::initializer_list<std::pair<size_t, double>> set, double fill) {
      std::vector<double> r(cols, fill);
      for (auto [i, v] : set) r[i] = v;
      rows.push_back(r);
    };
    const size_t last = cols - 1;
    row({{700, nan}, {900, nan}}, 1.0);              // NaN late in the row
    row({{0, nan}}, 2.0);                            // NaN first
    row({{5, -nan}, {9, nan}}, -3.0);                // a negative NaN first
    row({{3, inf}, {1000, -inf}}, 0.5);              // both infinities
    row({}, -inf);                                   // all -inf
    row({}, inf);                                    // all +inf
    row({{10, -0.0}, {20, 0.0}, {30, -0.0}}, 1.0);   // zeros: min -0 at 10, max 1
    row({{10, -0.0}, {20, 0.0}, {30, -0.0}}, -1.0);  // zeros: max +0 at 20
    row({{10, 0.0}, {last, -0.0}}, 0.0);             // all zeros: min -0 at the end, max +0 at 0
    row({{512, -inf}}, nan);                         // all NaN
    row({{512, inf}}, -nan);                         // all negative NaN
    std::vector<T> base;
    for (const auto& r : rows) {
      for (double v : r) base.push_back(from<T>(v));
    }
    const Layout view = Layout::contiguous({rows.size(), cols});
    const std::string what = "specials, " + std::to_string(cols) + " columns";
    this->check(base, view, {1}, {}, what.c_str());
    this->check(base, view, {1}, {0, 32}, (what + ", block 32").c_str());
  }
  // Random rows with special values sprinkled in.
  std::vector<T> mixed = this->random(8 * 333);
  const auto specials = gpu_test::special_values<T>();
  for (size_t i = 0; i < mixed.size(); i += 97) mixed[i] = from<T>(specials[i % specials.size()]);
  this->check(mixed, Layout::contiguous({8, 333}), {1}, {}, "sprinkled specials");
  // The same over whole packs (the packed-row path), finite values only, negated in odd rows (a
  // row's sum may overflow, but to one infinity): the largest, the subnormals and the zeros decide
  // min and max.
  std::vector<double> numbers;
  for (double v : specials) {
    if (std::isfinite(v)) numbers.push_back(v);
  }
  std::vector<T> packed = this->random(8 * 1024);
  for (size_t i = 0; i < packed.size(); i += 61) {
    const double v = numbers[i % numbers.size()];
    packed[i] = from<T>((i / 1024) % 2 == 1 ? -v : v);
  }
  this->check(packed, Layout::contiguous({8, 1024}), {1}, {}, "sprinkled numbers, whole packs");
}

// A NaN of the given sign and mantissa payload (nonzero, within the type's mantissa).
template <typename T>
T nan_bits(bool negative, uint64_t payload) {
  using U = std::conditional_t<sizeof(T) == 2, uint16_t,
                               std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;
  const int mant = std::is_same_v<T, hkb::bf16>  ? 7
                   : std::is_same_v<T, hkb::f16> ? 10
                   : sizeof(T) == 4              ? 23
                                                 : 52;
  const U exp_all = static_cast<U>(((U{1} << (sizeof(T) * 8 - 1 - mant)) - 1) << mant);
  const U bits = static_cast<U>((negative ? U{1} << (sizeof(T) * 8 - 1) : U{0}) | exp_all |
                                (payload & ((U{1} << mant) - 1)));
  T t;
  std::memcpy(&t, &bits, sizeof(T));
  return t;
}

// NaNs of different signs and payloads in whole packs (the packed-row path, where 16-bit floats
// skip NaN in their keys and read a thread's values again when it saw one): the first NaN wins
// argmin and argmax whatever its bits, in wide rows and in rows narrower than the block, where a
// NaN row sits between rows without one.
TYPED_TEST(ReduceFastFloatTest, NanPayloadsInWholePacks) {
  using T = TypeParam;
  const size_t cols = 2048;
  std::vector<T> wide(6 * cols, from<T>(0.25));
  auto at = [&](size_t row, size_t col) -> T& { return wide[row * cols + col]; };
  at(0, 1503) = nan_bits<T>(false, 1);  // a small payload after a large one, in one pack
  at(0, 1501) = nan_bits<T>(false, ~uint64_t{0});
  at(1, 1501) = nan_bits<T>(true, 1);  // a negative NaN before a positive one
  at(1, 1502) = nan_bits<T>(false, ~uint64_t{0});
  at(2, 7) = nan_bits<T>(true, ~uint64_t{0});  // NaNs in the high and then the low half of words
  at(2, 8) = nan_bits<T>(false, 2);
  at(3, 100) = from<T>(INFINITY);  // no NaN: +-inf decide, beside a NaN row
  at(3, 1900) = from<T>(-INFINITY);
  at(4, cols - 1) = nan_bits<T>(false, 3);  // a NaN last, after the row's extremes
  at(4, 3) = from<T>(-8.0);
  at(4, 4) = from<T>(8.0);
  at(5, 0) = nan_bits<T>(true, 5);  // a NaN first
  this->check(wide, Layout::contiguous({6, cols}), {1}, {}, "NaN payloads, wide rows");
  std::vector<T> narrow = this->random(300 * 64);
  for (size_t i = 0; i < narrow.size(); i += 211) {
    narrow[i] = nan_bits<T>((i / 211) % 2 == 1, 1 + i % 5);
  }
  this->check(narrow, Layout::contiguous({300, 64}), {1}, {}, "NaN payloads, narrow rows");
}

// Rows where a thread of a 32-thread block reads exactly 16384 and then 16385 packs (8-value
// packs: the most words of 16-bit floats whose count HalfKeyArgOp keeps, and one pack more, which
// argmin / argmax of 16-bit floats leave to the element-wise path), the extremes and their ties
// at the ends.
TYPED_TEST(ReduceFastFloatTest, LongRowsOfSmallBlocks) {
  using T = TypeParam;
  for (const size_t packs : {size_t{16384}, size_t{16385}}) {
    const size_t cols = 8 * 32 * packs;
    std::vector<T> base(2 * cols, from<T>(0.5));
    base[cols - 1] = from<T>(3.0);  // row 0: the extremes last
    base[cols - 2] = from<T>(-3.0);
    base[cols + 31 * 8] = from<T>(2.0);  // row 1: ties, the first in the last thread's first pack
    base[2 * cols - 1] = from<T>(2.0);
    base[cols + 31 * 8 + 1] = from<T>(-2.0);
    base[2 * cols - 2] = from<T>(-2.0);
    this->check(base, Layout::contiguous({2, cols}), {1}, {0, 32}, "long rows, block 32");
  }
}

// f32 sums against an f64 reference for n from 1 to 2^24, positive data (the worst case for
// sequential rounding) and mixed signs over many magnitudes.
class FastSumAccuracyTest : public GpuTest {};

TEST_F(FastSumAccuracyTest, F32ErrorIsBoundedForAnyLength) {
  SCOPED_TRACE(seed_note());
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<int> expo(-20, 20);
  for (size_t n :
       {size_t{1}, size_t{2}, size_t{3}, size_t{100}, size_t{4097},
        gpu_test::size_cap((size_t{1} << 20) + 3), gpu_test::size_cap(size_t{1} << 24)}) {
    for (int kind = 0; kind < 2; ++kind) {
      std::vector<float> x(n);
      for (auto& v : x) {
        v = kind == 0 ? static_cast<float>(unit(rng()))
                      : static_cast<float>((unit(rng()) - 0.5) * std::ldexp(1.0, expo(rng())));
      }
      double want = 0, sum_abs = 0;
      for (float v : x) want += v, sum_abs += std::fabs(v);
      const uint32_t block = candle_fast_block(n);
      auto src = device().upload(x);
      auto info = device().upload(std::vector<size_t>{n, 1});
      auto out = device().upload(std::vector<float>{NAN});
      hkb::LaunchArgs args;
      args.arg(n).arg(n).arg(size_t{1}).arg(info.ptr()).arg(src.ptr()).arg(out.ptr());
      launch("fast_sum_f32", hkb::LaunchConfig::make(1, 1, 1, block, 1, 1), args);
      const float got = out.download()[0];
      const double bound = (std::log2(static_cast<double>(block)) + 3) * 0x1p-23 * sum_abs;
      EXPECT_LE(std::fabs(got - want), bound + ref::ulp_at<float>(std::fabs(want)))
          << "n " << n << " kind " << kind << " got " << got << " want " << want;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// sum (atomic scatter into an output that already holds values: it accumulates)

template <typename T>
class SumScatterTest : public GpuTest {
 protected:
  // Sums `view` (over base) over `summed` dims, listed outermost first; the output keeps the other
  // dims, contiguous. Small integers keep every partial sum exact in every dtype, so the result is
  // exact whatever order the atomics land in.
  void check(const Layout& view, const std::vector<size_t>& summed, uint32_t grid = 0) {
    SCOPED_TRACE(seed_note());
    SCOPED_TRACE(view.str() + " grid " + std::to_string(grid));
    std::uniform_int_distribution<int> small(-8, 8);
    std::vector<T> base(view.storage_size());
    for (auto& v : base) {
      if constexpr (std::is_same_v<T, uint32_t>) {
        v = static_cast<T>(small(rng()) + 8);
      } else {
        v = from<T>(small(rng()));
      }
    }
    const size_t nd = view.dims.size();
    std::vector<size_t> cstrides(nd, 1);  // the contiguous strides of the logical index space
    for (size_t d = nd; d-- > 1;) cstrides[d - 1] = cstrides[d] * view.dims[d];
    std::vector<size_t> info = view.info();
    for (size_t d : summed) info.push_back(view.dims[d]);
    for (size_t d : summed) info.push_back(cstrides[d]);
    size_t out_n = 1;
    std::vector<size_t> out_dims;
    for (size_t d = 0; d < nd; ++d) {
      if (std::find(summed.begin(), summed.end(), d) == summed.end()) {
        out_dims.push_back(view.dims[d]);
        out_n *= view.dims[d];
      }
    }
    std::vector<double> want(out_n, 3.0);  // the output starts at 3
    for (size_t i = 0; i < view.numel(); ++i) {
      size_t rem = i, o = 0;
      std::vector<size_t> idx(nd);
      for (size_t d = nd; d-- > 0;) idx[d] = rem % view.dims[d], rem /= view.dims[d];
      for (size_t d = 0; d < nd; ++d) {
        if (std::find(summed.begin(), summed.end(), d) == summed.end()) {
          o = o * view.dims[d] + idx[d];
        }
      }
      want[o] += ref::to_double(base[view.index(i)]);
    }
    auto src = device().upload(base);
    auto inf = device().upload(info);
    auto out = device().upload(std::vector<T>(out_n, from<T>(3.0)));
    hkb::LaunchArgs args;
    args.arg(view.numel()).arg(nd).arg(summed.size()).arg(inf.ptr()).arg(src.ptr(view.offset));
    args.arg(out.ptr());
    const auto cfg = grid ? hkb::LaunchConfig::make(grid, 1, 1, 64, 1, 1)
                          : hkb::LaunchConfig::for_num_elems(static_cast<uint32_t>(view.numel()));
    launch(std::string("sum_") + ref::tag<T>(), cfg, args);
    const auto got = out.download();
    for (size_t o = 0; o < out_n; ++o) {
      ASSERT_EQ(ref::to_double(got[o]), want[o]) << "output " << o;
    }
  }
};
using SumTypes = ::testing::Types<hkb::bf16, hkb::f16, float, double, uint32_t>;
TYPED_TEST_SUITE(SumScatterTest, SumTypes);

TYPED_TEST(SumScatterTest, SummedDims) {
  const Layout view = Layout::contiguous({4, 6, 5});
  this->check(view, {1});
  this->check(view, {0, 2});
  this->check(view, {2});
  this->check(Layout::contiguous({2, 3, 4}), {0, 1, 2});  // 24 terms of |x| <= 8: exact in bf16
  this->check(view, {0, 2}, 2);
  Layout t = Layout::contiguous({5, 9});
  std::swap(t.dims[0], t.dims[1]);
  std::swap(t.strides[0], t.strides[1]);
  t.offset = 0;
  this->check(t, {0});
  this->check(t, {1});
}

}  // namespace
