// SORT family on a device: asort_asc_* / asort_desc_* for every dtype candle has, under candle's
// geometry (grid nrows, block min(ncols_pad, 1024), ncols_pad * 4 bytes of dynamic shared memory)
// and under smaller blocks. Every row is checked to be a permutation that orders the keys (any
// order among equal keys passes that check); the documented stable tie order and NaN placement are
// checked apart. Rows sit before a poisoned guard so writes past the last row are caught. The
// widths and block sizes reach each of the kernel's paths (kernels/sort.hip, sort/network.h): a
// row in part of one wave, in one wave, in whole waves with trips through shared memory at 4, 8
// and 16 slots a thread, and the shared-memory network of small blocks.
#include "gpu/gpu_test.hpp"
#include "reference/sort_ref.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>

namespace {

using gpu_test::GpuTest;

using SortTypes = ::testing::Types<hkb::bf16, hkb::f16, float, double, uint8_t, uint32_t, int64_t>;

constexpr size_t kGuard = 29;
constexpr uint32_t kPoison = 0xA5A5A5A5u;

uint32_t next_pow2(uint32_t n) {
  uint32_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

template <typename T>
class SortTest : public GpuTest {
 protected:
  static std::string name(bool ascending) {
    return std::string(ascending ? "asort_asc_" : "asort_desc_") + ref::tag<T>();
  }

  // Keys with many ties. Floats: quarter steps in [-3, 3] and the specials (NaN, +-inf, -0.0,
  // subnormals, the largest finite values). Integers: a narrow range plus the type's extremes
  // (for i64 also INT64_MAX - 1, which a comparison through double would tie with INT64_MAX).
  std::vector<T> keys(size_t n) {
    std::vector<T> v(n);
    if constexpr (ref::is_float_v<T>) {
      const std::vector<double> specials = gpu_test::special_values<T>();
      for (auto& x : v) {
        if (rng()() % 8 == 0) {
          x = ref::from_double<T>(specials[rng()() % specials.size()]);
        } else {
          x = ref::from_double<T>((static_cast<int>(rng()() % 25) - 12) / 4.0);
        }
      }
    } else {
      std::vector<T> extremes{std::numeric_limits<T>::max(), std::numeric_limits<T>::min()};
      if constexpr (std::is_same_v<T, int64_t>) {
        extremes.push_back(std::numeric_limits<T>::max() - 1);
        extremes.push_back(std::numeric_limits<T>::min() + 1);
      } else if constexpr (std::is_same_v<T, uint32_t>) {
        extremes.push_back(0xFFFFFFFEu);  // ties with 0xFFFFFFFF through float
      }
      for (auto& x : v) {
        if (rng()() % 8 == 0) {
          x = extremes[rng()() % extremes.size()];
        } else {
          x = static_cast<T>(static_cast<int>(rng()() % 21) - (std::is_signed_v<T> ? 10 : 0));
        }
      }
    }
    return v;
  }

  // NaNs of every sign and payload (quiet and signalling) as raw bits, for the float dtypes.
  static std::vector<T> nans() {
    std::vector<T> v;
    if constexpr (std::is_same_v<T, float>) {
      for (const uint32_t b : {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFFFFFFFFu, 0x7FC00123u}) {
        float f;
        std::memcpy(&f, &b, 4);
        v.push_back(f);
      }
    } else if constexpr (std::is_same_v<T, double>) {
      for (const uint64_t b : {0x7FF8000000000000ull, 0xFFF8000000000000ull, 0x7FF0000000000001ull,
                               0xFFFFFFFFFFFFFFFFull}) {
        double d;
        std::memcpy(&d, &b, 8);
        v.push_back(d);
      }
    } else if constexpr (std::is_same_v<T, hkb::bf16>) {
      for (const uint16_t b : {0x7FC0, 0xFFC0, 0x7F81, 0xFFFF}) v.push_back(hkb::bf16{b});
    } else if constexpr (std::is_same_v<T, hkb::f16>) {
      for (const uint16_t b : {0x7E00, 0xFE00, 0x7C01, 0xFFFF}) v.push_back(hkb::f16{b});
    }
    return v;
  }

  // Every row of `got` is the documented stable argsort of the same row of `x`.
  static void expect_stable(const std::vector<T>& x, const std::vector<uint32_t>& got, size_t nrows,
                            size_t ncols, bool ascending) {
    for (size_t r = 0; r < nrows; ++r) {
      const std::string err =
          ref::check_argsort(x.data() + r * ncols, got.data() + r * ncols, ncols, ascending);
      ASSERT_TRUE(err.empty()) << "row " << r << ": " << err;
      const std::vector<uint32_t> stable =
          ref::stable_argsort(x.data() + r * ncols, ncols, ascending);
      for (size_t i = 0; i < ncols; ++i) {
        ASSERT_EQ(got[r * ncols + i], stable[i])
            << "row " << r << " is ordered but leaves the stable tie order at entry " << i;
      }
    }
  }

  // Launches over `nrows` rows of `ncols`; candle's geometry unless `block` / `shared` are given.
  // Returns the nrows * ncols results; the guard after them is checked here.
  std::vector<uint32_t> run(const std::vector<T>& x, size_t nrows, int ncols, int ncols_pad,
                            bool ascending, std::optional<uint32_t> block = std::nullopt,
                            std::optional<uint32_t> shared = std::nullopt) {
    const size_t n = nrows * static_cast<size_t>(ncols > 0 ? ncols : 0);
    auto x_dev = device().upload(x.empty() ? std::vector<T>{T{}} : x);
    auto dst = device().upload(std::vector<uint32_t>(n + kGuard, kPoison));
    hkb::LaunchArgs args;
    args.arg(x_dev.ptr()).arg(dst.ptr()).arg(int32_t{ncols}).arg(int32_t{ncols_pad});
    const uint32_t threads = block.value_or(std::min<uint32_t>(ncols_pad, 1024));
    const uint32_t smem = shared.value_or(static_cast<uint32_t>(ncols_pad) * 4);
    launch(name(ascending),
           hkb::LaunchConfig::make(static_cast<uint32_t>(nrows), 1, 1, threads, 1, 1, smem), args);
    std::vector<uint32_t> got = dst.download();
    for (size_t i = n; i < got.size(); ++i) {
      if (got[i] != kPoison) {
        ADD_FAILURE() << "write past the last row at element " << i;
        break;
      }
    }
    got.resize(n);
    return got;
  }

  // Random rows, candle's geometry unless `block` is given; ordered permutation and stable order.
  void check(size_t nrows, uint32_t ncols, bool ascending,
             std::optional<uint32_t> block = std::nullopt) {
    SCOPED_TRACE(name(ascending) + " nrows " + std::to_string(nrows) + " ncols " +
                 std::to_string(ncols) +
                 (block ? " block " + std::to_string(*block) : std::string(" candle geometry")));
    SCOPED_TRACE(seed_note());
    check_rows(keys(nrows * ncols), nrows, ncols, ascending, block);
  }

  // Given rows, candle's geometry unless `block` is given; ordered permutation and stable order.
  void check_rows(const std::vector<T>& x, size_t nrows, uint32_t ncols, bool ascending,
                  std::optional<uint32_t> block = std::nullopt) {
    const std::vector<uint32_t> got = run(x, nrows, static_cast<int>(ncols),
                                          static_cast<int>(next_pow2(ncols)), ascending, block);
    expect_stable(x, got, nrows, ncols, ascending);
  }
};

TYPED_TEST_SUITE(SortTest, SortTypes);

// ncols 1, powers of two and their neighbours, rows around a wave's lanes (31, 33) and around
// 1024 (the first rows whose network goes through shared memory), ncols_pad 2048 and 4096 (4 slots
// a thread), 4097 and 5000 (ncols_pad 8192, 8 slots a thread), and many short rows.
TYPED_TEST(SortTest, Widths) {
  for (const bool asc : {true, false}) {
    for (const uint32_t ncols : {1u, 2u, 3u, 5u, 16u, 31u, 33u, 100u, 129u, 1000u, 1024u, 1025u,
                                 2047u, 3000u, 4097u, 5000u}) {
      this->check(3, ncols, asc);
    }
    this->check(300, 7, asc);
  }
}

// More rows than the busy blocks of the row loop (kernels/sort/network.h: at most 2 * 1024-thread
// blocks per multiprocessor, 132 on an H100, 110 and 80 on the CPU platform): blocks sort several
// rows one after another, reading the next row during the current one's network. Candle's block
// sorts two rows at once where a row takes at most half its threads (ncols_pad 1024 to 4096 for
// most dtypes): odd row counts leave the last block's second row group without a row, in the row
// loop (1000, 2000 columns) and in one pass (3000).
TYPED_TEST(SortTest, ManyRows) {
  for (const bool asc : {true, false}) {
    this->check(300, 1000, asc);
    this->check(300, 100, asc, 1024u);
    this->check(301, 2000, asc);
    this->check(301, 3000, asc);
  }
}

// ncols_pad 16384 under candle's geometry: 16 slots a thread (f64 and i64: the shared-memory
// network), ascending and descending, and a row just past 8192.
TYPED_TEST(SortTest, WidestRows) {
  for (const bool asc : {true, false}) {
    this->check(2, 16384, asc);
    this->check(1, 8193, asc);
  }
}

// Blocks other than candle's. Smaller: one thread, fewer threads than a wave (16, 20), a
// non-power-of-two count (48, 96), a few waves; each reaches a different split of the row (8 or
// 16 slots a thread in one wave or in several, or the shared-memory network). Larger than the
// row: the threads past the row's workers leave at once, or (1000 in 512 or 768 threads) two rows
// are sorted at once by the block's largest power of two of threads.
TYPED_TEST(SortTest, OtherBlocks) {
  struct Case {
    uint32_t ncols, block;
  };
  for (const bool asc : {true, false}) {
    for (const Case c :
         {Case{1000, 1}, Case{100, 16}, Case{100, 20}, Case{200, 32}, Case{500, 32}, Case{1000, 48},
          Case{1000, 64}, Case{1000, 96}, Case{4097, 512}, Case{5000, 128}, Case{3, 256},
          Case{100, 1024}, Case{1500, 1024}, Case{1000, 512}, Case{1000, 768}}) {
      this->check(2, c.ncols, asc, c.block);
    }
  }
}

// Rows where every key ties (one value, -0.0 and +0.0 mixed, or NaNs of every payload): the
// stable order is the identity in both directions, through every layout of the network.
TYPED_TEST(SortTest, AllEqualRows) {
  using T = TypeParam;
  SCOPED_TRACE(this->seed_note());
  std::vector<std::vector<T>> fills;
  if constexpr (ref::is_float_v<T>) {
    fills.push_back({ref::from_double<T>(1.5)});
    fills.push_back({ref::from_double<T>(-0.0), ref::from_double<T>(0.0)});
    fills.push_back(this->nans());
  } else {
    fills.push_back({static_cast<T>(7)});
    fills.push_back({std::numeric_limits<T>::max()});
    fills.push_back({std::numeric_limits<T>::min()});
  }
  for (const std::vector<T>& fill : fills) {
    for (const uint32_t ncols : {33u, 1000u, 4097u, 16384u}) {
      std::vector<T> x(ncols);
      for (auto& v : x) v = fill[this->rng()() % fill.size()];
      for (const bool asc : {true, false}) {
        SCOPED_TRACE("ncols " + std::to_string(ncols) + (asc ? " asc" : " desc"));
        this->check_rows(x, 1, ncols, asc);
      }
    }
  }
}

// Rows of special values only: NaNs of every sign and payload, +-inf, -0.0 and +0.0, and the
// extremes of the integer dtypes, with heavy ties, across the layouts.
TYPED_TEST(SortTest, SpecialValueRows) {
  using T = TypeParam;
  SCOPED_TRACE(this->seed_note());
  std::vector<T> pool;
  if constexpr (ref::is_float_v<T>) {
    pool = this->nans();
    for (const double v : {std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(), -0.0, 0.0, -1.0, 1.0}) {
      pool.push_back(ref::from_double<T>(v));
    }
  } else {
    pool = {std::numeric_limits<T>::max(), std::numeric_limits<T>::min(), static_cast<T>(0),
            static_cast<T>(1)};
    if constexpr (std::is_signed_v<T>) pool.push_back(static_cast<T>(-1));
  }
  for (const uint32_t ncols : {9u, 31u, 1000u, 4097u}) {
    std::vector<T> x(3 * size_t{ncols});
    for (auto& v : x) v = pool[this->rng()() % pool.size()];
    for (const bool asc : {true, false}) {
      SCOPED_TRACE("ncols " + std::to_string(ncols) + (asc ? " asc" : " desc"));
      this->check_rows(x, 3, ncols, asc);
      this->check_rows(x, 3, ncols, asc, 64u);
    }
  }
}

// NaN is greater than +inf and equal to every NaN; -0.0 equals +0.0; ties keep column order.
TYPED_TEST(SortTest, NaNAndTieOrder) {
  using T = TypeParam;
  std::vector<T> row;
  std::vector<uint32_t> asc, desc;
  if constexpr (ref::is_float_v<T>) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    for (const double v : {nan, 1.0, -inf, nan, inf, -0.0, 0.0, -nan, 2.0}) {
      row.push_back(ref::from_double<T>(v));
    }
    asc = {2, 5, 6, 1, 8, 4, 0, 3, 7};
    desc = {0, 3, 7, 4, 8, 1, 5, 6, 2};
  } else {
    for (const int v : {3, 1, 3, 0, 1, 3}) row.push_back(static_cast<T>(v));
    asc = {3, 1, 4, 0, 2, 5};
    desc = {0, 2, 5, 1, 4, 3};
  }
  const int ncols = static_cast<int>(row.size());
  const int pad = static_cast<int>(next_pow2(static_cast<uint32_t>(ncols)));
  EXPECT_EQ(this->run(row, 1, ncols, pad, true), asc);
  EXPECT_EQ(this->run(row, 1, ncols, pad, false), desc);
  // The same row twice more, as rows 1 and 2 of a 3-row launch.
  std::vector<T> rows;
  for (int r = 0; r < 3; ++r) rows.insert(rows.end(), row.begin(), row.end());
  const std::vector<uint32_t> got = this->run(rows, 3, ncols, pad, false);
  for (int r = 0; r < 3; ++r) {
    EXPECT_TRUE(std::equal(desc.begin(), desc.end(), got.begin() + r * ncols)) << "row " << r;
  }
}

// Arguments the kernel refuses: every dst entry of every row becomes 0xFFFFFFFF, nothing else is
// written, and no shared memory is touched (the launches give none).
TYPED_TEST(SortTest, InvalidPaddingFillsRowsWithAllOnes) {
  using T = TypeParam;
  SCOPED_TRACE(this->seed_note());
  struct Case {
    int ncols, pad;
  };
  for (const Case c : {Case{5, 6}, Case{5, 4}, Case{20000, 32768}}) {
    SCOPED_TRACE("ncols " + std::to_string(c.ncols) + " ncols_pad " + std::to_string(c.pad));
    const std::vector<T> x = this->keys(2 * static_cast<size_t>(c.ncols));
    const std::vector<uint32_t> got = this->run(x, 2, c.ncols, c.pad, true, 256u, 0u);
    EXPECT_TRUE(std::all_of(got.begin(), got.end(), [](uint32_t v) { return v == 0xFFFFFFFFu; }));
  }
}

TYPED_TEST(SortTest, ZeroColumnsWritesNothing) {
  const std::vector<uint32_t> got = this->run({}, 4, 0, 1, true);
  EXPECT_TRUE(got.empty());  // and the guard, checked in run(), is intact
}

// The width limit: ncols_pad 16384 needs 64 KiB of shared memory, which AMD's LDS holds and the
// CUDA backend opts into (cuFuncSetAttribute), so it must sort. ncols_pad 32768 (128 KiB) is
// above the kernel's limit: the launch is refused, or the kernel writes 0xFFFFFFFF.
TYPED_TEST(SortTest, WidthLimit) {
  using T = TypeParam;
  SCOPED_TRACE(this->seed_note());
  {
    const uint32_t ncols = 16384;
    const std::vector<T> x = this->keys(ncols);
    const std::vector<uint32_t> got =
        this->run(x, 1, static_cast<int>(ncols), static_cast<int>(ncols), true);
    this->expect_stable(x, got, 1, ncols, true);
  }
  {
    const uint32_t ncols = 16385;
    const std::vector<T> x = this->keys(ncols);
    try {
      const std::vector<uint32_t> got = this->run(x, 1, static_cast<int>(ncols), 32768, false);
      EXPECT_TRUE(std::all_of(got.begin(), got.end(), [](uint32_t v) { return v == 0xFFFFFFFFu; }));
    } catch (const hkb::Error& e) {
      std::printf("ncols 16385 refused by this runtime: %s\n", e.what());
    }
  }
}

}  // namespace
