// INDEXING family on a device: index_select (is_), gather, index_add (ia_), scatter (s_) and
// scatter_add (sa_) for every (index dtype, value dtype) pair candle has, against the CPU
// references of tests/reference/indexing_ref.hpp. Every case runs under candle's geometry
// (for_num_elems over the outputs, or over left * right for the writing ops) and under a grid far
// smaller than the work. Ids mix valid entries (with duplicates), the sentinel and out-of-range
// values (negative ones for signed index dtypes). Outputs sit between poisoned guard regions so a
// write outside the output is caught; copies compare bits, additions compare within 0 ulp.
#include "gpu/gpu_test.hpp"
#include "reference/indexing_ref.hpp"

#include <limits>
#include <optional>
#include <type_traits>

namespace {

using gpu_test::GpuTest;
using gpu_test::Layout;

template <typename I_, typename T_>
struct Pair {
  using I = I_;
  using T = T_;
};

#define HKB_PAIRS_FOR_INDEX(I)                                                              \
  Pair<I, hkb::bf16>, Pair<I, hkb::f16>, Pair<I, float>, Pair<I, double>, Pair<I, uint8_t>, \
      Pair<I, uint32_t>, Pair<I, int64_t>
// candle's pairs: u8/u32/i64 indices over every value dtype; i16/i32 indices with fp8 only.
using AllPairs = ::testing::Types<HKB_PAIRS_FOR_INDEX(uint8_t), Pair<uint8_t, hkb::f8e4m3>,
                                  HKB_PAIRS_FOR_INDEX(uint32_t), Pair<uint32_t, hkb::f8e4m3>,
                                  HKB_PAIRS_FOR_INDEX(int64_t), Pair<int64_t, hkb::f8e4m3>,
                                  Pair<int16_t, hkb::f8e4m3>, Pair<int32_t, hkb::f8e4m3>>;
// scatter (s_) has no fp8 entry in candle.
using ScatterPairs = ::testing::Types<HKB_PAIRS_FOR_INDEX(uint8_t), HKB_PAIRS_FOR_INDEX(uint32_t),
                                      HKB_PAIRS_FOR_INDEX(int64_t)>;
#undef HKB_PAIRS_FOR_INDEX

// Poisoned elements on each side of every output. A multiple of 16 bytes for every dtype, so an
// output that starts after the guard is 16-byte aligned and index_select takes its widest word;
// the out_shift cases break that alignment.
constexpr size_t kGuard = 32;

// A grid far smaller than the work: every thread must loop.
hkb::LaunchConfig small_grid() {
  return hkb::LaunchConfig::make(3, 1, 1, 32, 1, 1);
}

// A grid that covers n elements with blocks of `block` threads, `extra` blocks more than needed:
// the kernels then give each block its own range of elements, which for a block size that is not
// a multiple of the vector width ends inside a vector.
hkb::LaunchConfig covering_grid(size_t n, uint32_t block, uint32_t extra = 0) {
  const uint32_t blocks = static_cast<uint32_t>((std::max<size_t>(n, 1) + block - 1) / block);
  return hkb::LaunchConfig::make(blocks + extra, 1, 1, block, 1, 1);
}

template <typename P>
class IndexingTest : public GpuTest {
 protected:
  using I = typename P::I;
  using T = typename P::T;

  static std::string name(const char* op) {
    return std::string(op) + "_" + ref::tag<I>() + "_" + ref::tag<T>();
  }

  // Random bit patterns (NaN payloads, subnormals, -0.0 included): what the copying ops move.
  std::vector<T> random_bits(size_t n) {
    std::vector<T> v(n);
    std::vector<unsigned char> bytes(n * sizeof(T));
    for (auto& b : bytes) b = static_cast<unsigned char>(rng()());
    if (!bytes.empty()) std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
  }

  // Values for the adding ops: random, with the float specials (NaN, +-inf, -0.0, subnormals,
  // the largest finite value, values beyond fp8's range) mixed in.
  std::vector<T> random_values(size_t n) {
    std::vector<T> v = gpu_test::random_vector<T>(rng(), n);
    if constexpr (ref::is_float_v<T>) {
      const std::vector<double> specials = gpu_test::special_values<T>();
      for (auto& x : v) {
        if (rng()() % 16 == 0) x = ref::from_double<T>(specials[rng()() % specials.size()]);
      }
    }
    return v;
  }

  // Ids that do not address an entry of a dim of `dim` entries.
  static std::vector<I> invalid_ids(size_t dim) {
    const uint64_t max = static_cast<uint64_t>(std::numeric_limits<I>::max());
    std::vector<I> v{ref::index_sentinel<I>()};
    if (dim < max) v.push_back(static_cast<I>(dim));
    if (dim + 7 < max) v.push_back(static_cast<I>(dim + 7));
    if (max - 1 >= dim) v.push_back(static_cast<I>(max - 1));
    if constexpr (std::is_signed_v<I>) {
      v.push_back(static_cast<I>(-1));
      v.push_back(std::numeric_limits<I>::min());
    }
    return v;
  }

  // Mostly valid ids (duplicates whenever n > dim), one in ten invalid.
  std::vector<I> random_ids(size_t n, size_t dim) {
    const std::vector<I> bad = invalid_ids(dim);
    std::vector<I> v(n);
    for (auto& id : v) {
      if (rng()() % 10 == 0) {
        id = bad[rng()() % bad.size()];
      } else {
        do {
          id = static_cast<I>(rng()() % dim);
        } while (id == ref::index_sentinel<I>());
      }
    }
    return v;
  }

  // The device buffer holds [guard | data | guard]; the guards must come back unchanged.
  struct Guarded {
    std::vector<T> host;
    hkb::DeviceBuffer<T> dev;
    size_t n;
  };
  Guarded guarded(const std::vector<T>& data, size_t lead = kGuard) {
    std::vector<T> host(lead, gpu_test::poison<T>());
    host.insert(host.end(), data.begin(), data.end());
    host.insert(host.end(), kGuard, gpu_test::poison<T>());
    auto dev = device().upload(host);
    return Guarded{std::move(host), std::move(dev), data.size()};
  }
  // The data part after a launch, with the guards checked against what was uploaded.
  std::vector<T> data_of(const Guarded& g, size_t lead = kGuard) {
    const std::vector<T> all = g.dev.download();
    for (size_t i = 0; i < all.size(); ++i) {
      if (i >= lead && i < lead + g.n) continue;
      if (!ref::same_bits(all[i], g.host[i])) {
        ADD_FAILURE() << "write outside the output at guard element " << i;
        break;
      }
    }
    return std::vector<T>(all.begin() + lead, all.begin() + lead + g.n);
  }

  // index_select with ids read through `ids_layout`. src_shift / out_shift move the data pointers
  // by whole elements, breaking 16-byte alignment when odd.
  void check_index_select(size_t left, size_t src_dim, size_t right, const Layout& ids_layout,
                          std::optional<hkb::LaunchConfig> cfg = std::nullopt, size_t src_shift = 0,
                          size_t out_shift = 0) {
    SCOPED_TRACE(name("is") + " left " + std::to_string(left) + " src_dim " +
                 std::to_string(src_dim) + " right " + std::to_string(right) + " ids " +
                 ids_layout.str() + " src_shift " + std::to_string(src_shift) + " out_shift " +
                 std::to_string(out_shift) + (cfg ? " small grid" : " candle grid"));
    SCOPED_TRACE(seed_note());
    const size_t n_ids = ids_layout.numel();
    const std::vector<I> storage =
        random_ids(std::max<size_t>(ids_layout.storage_size(), 1), src_dim);
    std::vector<I> ids(n_ids);
    for (size_t i = 0; i < n_ids; ++i) ids[i] = storage[ids_layout.index(i)];
    std::vector<T> src_host = random_bits(src_shift + left * src_dim * right + 1);
    const std::vector<T> src(src_host.begin() + src_shift, src_host.end() - 1);
    const std::vector<T> want = ref::index_select(ids, src, left, src_dim, right);

    auto ids_dev = device().upload(storage);
    std::vector<size_t> info = ids_layout.info();
    if (info.empty()) info.push_back(0);
    auto info_dev = device().upload(info);
    auto src_dev = device().upload(src_host);
    Guarded out = guarded(std::vector<T>(want.size(), gpu_test::poison<T>()), kGuard + out_shift);
    const size_t numel = want.size();
    hkb::LaunchArgs args;
    args.arg(numel)
        .arg(ids_layout.dims.size())
        .arg(info_dev.ptr())
        .arg(ids_dev.ptr(ids_layout.offset))
        .arg(src_dev.ptr(src_shift))
        .arg(out.dev.ptr(kGuard + out_shift))
        .arg(left)
        .arg(src_dim)
        .arg(n_ids)
        .arg(right);
    launch(name("is"), cfg.value_or(hkb::LaunchConfig::for_num_elems(numel)), args);
    EXPECT_TRUE(gpu_test::same_bits(data_of(out, kGuard + out_shift), want));
  }

  void check_gather(size_t left, size_t src_dim, size_t ids_dim, size_t right,
                    std::optional<hkb::LaunchConfig> cfg = std::nullopt) {
    SCOPED_TRACE(name("gather") + " left " + std::to_string(left) + " src_dim " +
                 std::to_string(src_dim) + " ids_dim " + std::to_string(ids_dim) + " right " +
                 std::to_string(right) + (cfg ? " small grid" : " candle grid"));
    SCOPED_TRACE(seed_note());
    const size_t numel = left * ids_dim * right;
    const std::vector<I> ids = random_ids(numel, src_dim);
    const std::vector<T> src = random_bits(left * src_dim * right);
    const std::vector<T> want = ref::gather(ids, src, left, src_dim, ids_dim, right);
    auto ids_dev = device().upload(ids.empty() ? std::vector<I>{0} : ids);
    auto src_dev = device().upload(src.empty() ? std::vector<T>{T{}} : src);
    Guarded out = guarded(std::vector<T>(numel, gpu_test::poison<T>()));
    hkb::LaunchArgs args;
    args.arg(numel)
        .arg(ids_dev.ptr())
        .arg(src_dev.ptr())
        .arg(out.dev.ptr(kGuard))
        .arg(left)
        .arg(src_dim)
        .arg(ids_dim)
        .arg(right);
    launch(name("gather"), cfg.value_or(hkb::LaunchConfig::for_num_elems(numel)), args);
    EXPECT_TRUE(gpu_test::same_bits(data_of(out), want));
  }

  // index_add into a random dst; returns the device result (for the determinism check).
  std::vector<T> check_index_add(size_t left, size_t n_ids, size_t dst_dim, size_t right,
                                 std::optional<hkb::LaunchConfig> cfg = std::nullopt,
                                 std::optional<uint64_t> data_seed = std::nullopt) {
    SCOPED_TRACE(name("ia") + " left " + std::to_string(left) + " ids " + std::to_string(n_ids) +
                 " dst_dim " + std::to_string(dst_dim) + " right " + std::to_string(right) +
                 (cfg ? " small grid" : " candle grid"));
    SCOPED_TRACE(seed_note());
    if (data_seed) rng().seed(*data_seed);
    const std::vector<I> ids = random_ids(n_ids, dst_dim);
    const std::vector<T> src = random_values(left * n_ids * right);
    std::vector<T> want = random_values(left * dst_dim * right);
    Guarded dst = guarded(want);
    ref::index_add(ids, src, want, left, dst_dim, right);
    auto ids_dev = device().upload(ids.empty() ? std::vector<I>{0} : ids);
    auto src_dev = device().upload(src.empty() ? std::vector<T>{T{}} : src);
    hkb::LaunchArgs args;
    args.arg(ids_dev.ptr())
        .arg(n_ids)
        .arg(src_dev.ptr())
        .arg(dst.dev.ptr(kGuard))
        .arg(left)
        .arg(n_ids)
        .arg(dst_dim)
        .arg(right);
    launch(name("ia"), cfg.value_or(hkb::LaunchConfig::for_num_elems(left * right)), args);
    const std::vector<T> got = data_of(dst);
    EXPECT_TRUE(gpu_test::near_ulps(got, want, 0));
    return got;
  }

  template <bool Accumulate>
  std::vector<T> check_scatter(size_t left, size_t src_dim, size_t dst_dim, size_t right,
                               std::optional<hkb::LaunchConfig> cfg = std::nullopt,
                               std::optional<uint64_t> data_seed = std::nullopt) {
    const char* op = Accumulate ? "sa" : "s";
    SCOPED_TRACE(name(op) + " left " + std::to_string(left) + " src_dim " +
                 std::to_string(src_dim) + " dst_dim " + std::to_string(dst_dim) + " right " +
                 std::to_string(right) + (cfg ? " small grid" : " candle grid"));
    SCOPED_TRACE(seed_note());
    if (data_seed) rng().seed(*data_seed);
    const size_t n_src = left * src_dim * right;
    const std::vector<I> ids = random_ids(n_src, dst_dim);
    const std::vector<T> src = Accumulate ? random_values(n_src) : random_bits(n_src);
    std::vector<T> want =
        Accumulate ? random_values(left * dst_dim * right) : random_bits(left * dst_dim * right);
    Guarded dst = guarded(want);
    ref::scatter<Accumulate>(ids, src, want, left, src_dim, dst_dim, right);
    auto ids_dev = device().upload(ids.empty() ? std::vector<I>{0} : ids);
    auto src_dev = device().upload(src.empty() ? std::vector<T>{T{}} : src);
    hkb::LaunchArgs args;
    args.arg(ids_dev.ptr())
        .arg(src_dev.ptr())
        .arg(dst.dev.ptr(kGuard))
        .arg(left)
        .arg(src_dim)
        .arg(dst_dim)
        .arg(right);
    launch(name(op), cfg.value_or(hkb::LaunchConfig::for_num_elems(left * right)), args);
    const std::vector<T> got = data_of(dst);
    if (Accumulate) {
      EXPECT_TRUE(gpu_test::near_ulps(got, want, 0));
    } else {
      EXPECT_TRUE(gpu_test::same_bits(got, want));
    }
    return got;
  }
};

template <typename P>
class ScatterTest : public IndexingTest<P> {};

TYPED_TEST_SUITE(IndexingTest, AllPairs);
TYPED_TEST_SUITE(ScatterTest, ScatterPairs);

// Shapes: a single element, odd rows (element path), rows of 64 and 6 elements (16- and 8-byte
// word paths for most dtypes), a row over 1024 elements, misaligned pointers, and every one under
// both geometries.
TYPED_TEST(IndexingTest, IndexSelectShapes) {
  for (const bool small : {false, true}) {
    const std::optional<hkb::LaunchConfig> cfg =
        small ? std::optional<hkb::LaunchConfig>(small_grid()) : std::nullopt;
    this->check_index_select(1, 1, 1, Layout::contiguous({1}), cfg);
    this->check_index_select(1, 7, 1, Layout::contiguous({5}), cfg);
    this->check_index_select(3, 11, 5, Layout::contiguous({9}), cfg);
    this->check_index_select(2, 13, 64, Layout::contiguous({17}), cfg);
    this->check_index_select(2, 5, 6, Layout::contiguous({4}), cfg);
    this->check_index_select(1, 37, 1031, Layout::contiguous({3}), cfg);
    this->check_index_select(2, 13, 64, Layout::contiguous({17}), cfg, 1, 0);
    this->check_index_select(2, 13, 64, Layout::contiguous({17}), cfg, 0, 1);
    this->check_index_select(3, 9, 32, Layout::contiguous({40}), cfg, 3, 5);
  }
}

// Grids that cover the outputs with block sizes other than candle's 1024: blocks of 90 threads
// (ranges that end inside a 16-byte word), 30 (less than a wave), and 256 with spare blocks.
TYPED_TEST(IndexingTest, IndexSelectCoveringGrids) {
  for (const uint32_t block : {90u, 30u, 256u}) {
    const uint32_t extra = block == 256 ? 5 : 0;
    this->check_index_select(2, 13, 64, Layout::contiguous({17}),
                             covering_grid(2 * 17 * 64, block, extra));
    this->check_index_select(3, 11, 5, Layout::contiguous({9}),
                             covering_grid(3 * 9 * 5, block, extra));
    this->check_index_select(1, 37, 1031, Layout::contiguous({3}),
                             covering_grid(3 * 1031, block, extra));
    this->check_index_select(2, 5, 6, Layout::contiguous({4}),
                             covering_grid(2 * 4 * 6, block, extra));
    this->check_index_select(2, 13, 64, Layout::contiguous({17}),
                             covering_grid(2 * 17 * 64, block, extra), 1, 0);
    Layout step;
    step.dims = {6};
    step.strides = {3};
    step.offset = 2;
    this->check_index_select(2, 9, 8, step, covering_grid(2 * 6 * 8, block, extra));
  }
}

// Ids through their layout: a step with a start offset, a transposed 2-D view, a broadcast.
TYPED_TEST(IndexingTest, IndexSelectStridedIds) {
  Layout step;
  step.dims = {6};
  step.strides = {3};
  step.offset = 2;
  Layout transposed = Layout::contiguous({4, 3});
  std::swap(transposed.dims[0], transposed.dims[1]);
  std::swap(transposed.strides[0], transposed.strides[1]);
  Layout broadcast;
  broadcast.dims = {5};
  broadcast.strides = {0};
  broadcast.offset = 1;
  for (const Layout& l : {step, transposed, broadcast}) {
    this->check_index_select(2, 9, 8, l);
    this->check_index_select(1, 10, 3, l);
    this->check_index_select(2, 9, 8, l, small_grid());
  }
}

// About 2^20 outputs: an embedding-style lookup (left 1, wide rows) on the word path and a
// narrow-row shape on the element path.
TYPED_TEST(IndexingTest, IndexSelectLarge) {
  this->check_index_select(1, 200, 1024, Layout::contiguous({1025}));
  this->check_index_select(4, 50, 3, Layout::contiguous({gpu_test::size_cap(1u << 18) / 3 + 1}));
}

// No ids: nothing is written, under a launch that does run (the loader skips empty grids).
TYPED_TEST(IndexingTest, EmptyWritesNothing) {
  this->check_index_select(2, 5, 4, Layout::contiguous({0}),
                           hkb::LaunchConfig::make(1, 1, 1, 64, 1, 1));
  this->check_gather(2, 5, 0, 4, hkb::LaunchConfig::make(1, 1, 1, 64, 1, 1));
  this->check_index_add(2, 0, 5, 4);
  this->check_index_add(0, 3, 5, 4, hkb::LaunchConfig::make(1, 1, 1, 64, 1, 1));
  this->template check_scatter<true>(2, 0, 5, 4);
}

// Explicit sentinel and out-of-range ids: their rows are all-zero bits, valid rows are copied.
TYPED_TEST(IndexingTest, IndexSelectSentinelAndOutOfRangeGiveZero) {
  using I = typename TestFixture::I;
  using T = typename TestFixture::T;
  SCOPED_TRACE(this->seed_note());
  const size_t src_dim = 6, right = 8;
  std::vector<I> ids = TestFixture::invalid_ids(src_dim);
  const size_t n_bad = ids.size();
  ids.push_back(static_cast<I>(src_dim - 1));
  ids.push_back(static_cast<I>(0));
  const std::vector<T> src = this->random_bits(src_dim * right);
  auto ids_dev = this->device().upload(ids);
  const std::vector<size_t> info{ids.size(), 1};
  auto info_dev = this->device().upload(info);
  auto src_dev = this->device().upload(src);
  const size_t numel = ids.size() * right;
  auto out = this->device().upload(std::vector<T>(numel, gpu_test::poison<T>()));
  hkb::LaunchArgs args;
  args.arg(numel)
      .arg(size_t{1})
      .arg(info_dev.ptr())
      .arg(ids_dev.ptr())
      .arg(src_dev.ptr())
      .arg(out.ptr())
      .arg(size_t{1})
      .arg(src_dim)
      .arg(ids.size())
      .arg(right);
  this->launch(TestFixture::name("is"), hkb::LaunchConfig::for_num_elems(numel), args);
  const std::vector<T> got = out.download();
  for (size_t i = 0; i < ids.size(); ++i) {
    for (size_t r = 0; r < right; ++r) {
      const T want =
          i < n_bad ? ref::zero_value<T>() : src[static_cast<size_t>(ids[i]) * right + r];
      ASSERT_TRUE(ref::same_bits(got[i * right + r], want))
          << "id #" << i << " = " << static_cast<int64_t>(ids[i]) << " element " << r;
    }
  }
}

TYPED_TEST(IndexingTest, GatherShapes) {
  for (const bool small : {false, true}) {
    const std::optional<hkb::LaunchConfig> cfg =
        small ? std::optional<hkb::LaunchConfig>(small_grid()) : std::nullopt;
    this->check_gather(1, 1, 1, 1, cfg);
    this->check_gather(1, 7, 5, 1, cfg);
    this->check_gather(3, 11, 9, 5, cfg);
    this->check_gather(2, 4, 300, 3, cfg);
    this->check_gather(1, 20, 3, 1030, cfg);
  }
  this->check_gather(2, 50, 512, 1024);  // 2^20 outputs
}

TYPED_TEST(IndexingTest, IndexAddShapes) {
  for (const bool small : {false, true}) {
    const std::optional<hkb::LaunchConfig> cfg =
        small ? std::optional<hkb::LaunchConfig>(small_grid()) : std::nullopt;
    this->check_index_add(1, 1, 1, 1, cfg);
    this->check_index_add(1, 5, 7, 1, cfg);
    this->check_index_add(3, 17, 5, 7, cfg);  // every dst row hit several times
    this->check_index_add(2, 40, 3, 1030, cfg);
  }
  this->check_index_add(1, 4, 8, gpu_test::size_cap(1u << 18));  // 2^20 source elements on GPUs
}

// Duplicates accumulate in index order on every grid: the same bits from differently shaped
// grids (candle's, one block, a grid of single-wave blocks) and equal to the ordered reference.
TYPED_TEST(IndexingTest, IndexAddIsDeterministic) {
  const uint64_t data_seed = this->seed();
  const auto a = this->check_index_add(2, 64, 4, 300, std::nullopt, data_seed);
  const auto b = this->check_index_add(2, 64, 4, 300, small_grid(), data_seed);
  const auto c =
      this->check_index_add(2, 64, 4, 300, hkb::LaunchConfig::make(19, 1, 1, 64, 1, 1), data_seed);
  EXPECT_TRUE(gpu_test::same_bits(a, b));
  EXPECT_TRUE(gpu_test::same_bits(a, c));
}

TYPED_TEST(IndexingTest, ScatterAddShapes) {
  for (const bool small : {false, true}) {
    const std::optional<hkb::LaunchConfig> cfg =
        small ? std::optional<hkb::LaunchConfig>(small_grid()) : std::nullopt;
    this->template check_scatter<true>(1, 1, 1, 1, cfg);
    this->template check_scatter<true>(1, 5, 7, 1, cfg);
    this->template check_scatter<true>(3, 17, 5, 7, cfg);
    this->template check_scatter<true>(2, 40, 3, 1030, cfg);
  }
  this->template check_scatter<true>(1, 4, 3, gpu_test::size_cap(1u << 18));
}

TYPED_TEST(IndexingTest, ScatterAddIsDeterministic) {
  const uint64_t data_seed = this->seed();
  const auto a = this->template check_scatter<true>(2, 64, 4, 300, std::nullopt, data_seed);
  const auto b = this->template check_scatter<true>(2, 64, 4, 300, small_grid(), data_seed);
  EXPECT_TRUE(gpu_test::same_bits(a, b));
}

// A u8 id of 0xFF is the sentinel even where the dim has more than 255 entries.
class U8SentinelTest : public IndexingTest<Pair<uint8_t, float>> {};
TEST_F(U8SentinelTest, SentinelInsideALongDim) {
  using I = uint8_t;
  using T = float;
  SCOPED_TRACE(seed_note());
  const size_t dim = 300, right = 2;
  const std::vector<I> ids{254, 255, 1, 255};
  const std::vector<T> src = random_bits(dim * right);
  auto ids_dev = device().upload(ids);
  auto src_dev = device().upload(src);
  const std::vector<size_t> info{ids.size(), 1};
  auto info_dev = device().upload(info);
  const size_t numel = ids.size() * right;
  auto out = device().upload(std::vector<T>(numel, gpu_test::poison<T>()));
  hkb::LaunchArgs args;
  args.arg(numel)
      .arg(size_t{1})
      .arg(info_dev.ptr())
      .arg(ids_dev.ptr())
      .arg(src_dev.ptr())
      .arg(out.ptr())
      .arg(size_t{1})
      .arg(dim)
      .arg(ids.size())
      .arg(right);
  launch("is_u8_f32", hkb::LaunchConfig::for_num_elems(numel), args);
  const std::vector<T> want = ref::index_select(ids, src, 1, dim, right);
  EXPECT_TRUE(ref::same_bits(want[2], 0.0f) && ref::same_bits(want[3], 0.0f));
  EXPECT_TRUE(gpu_test::same_bits(out.download(), want));

  // index_add into a 300-row dst: 0xFF adds nothing to row 255.
  const std::vector<T> add_src = random_values(ids.size() * right);
  std::vector<T> dst = random_values(dim * right);
  auto dst_dev = device().upload(dst);
  auto add_src_dev = device().upload(add_src);
  ref::index_add(ids, add_src, dst, 1, dim, right);
  hkb::LaunchArgs ia;
  ia.arg(ids_dev.ptr())
      .arg(ids.size())
      .arg(add_src_dev.ptr())
      .arg(dst_dev.ptr())
      .arg(size_t{1})
      .arg(ids.size())
      .arg(dim)
      .arg(right);
  launch("ia_u8_f32", hkb::LaunchConfig::for_num_elems(right), ia);
  EXPECT_TRUE(gpu_test::near_ulps(dst_dev.download(), dst, 0));
}

TYPED_TEST(ScatterTest, ScatterShapes) {
  for (const bool small : {false, true}) {
    const std::optional<hkb::LaunchConfig> cfg =
        small ? std::optional<hkb::LaunchConfig>(small_grid()) : std::nullopt;
    this->template check_scatter<false>(1, 1, 1, 1, cfg);
    this->template check_scatter<false>(1, 5, 7, 1, cfg);
    this->template check_scatter<false>(3, 17, 5, 7, cfg);  // duplicates: the last one wins
    this->template check_scatter<false>(2, 40, 3, 1030, cfg);
  }
  this->template check_scatter<false>(1, 4, 3, gpu_test::size_cap(1u << 18));
}

TYPED_TEST(ScatterTest, ScatterLastDuplicateWins) {
  using I = typename TestFixture::I;
  using T = typename TestFixture::T;
  SCOPED_TRACE(this->seed_note());
  // One column (left 1, right 1): ids 2, 0, 2, sentinel, 2 -> dst[2] = src[4], dst[0] = src[1].
  const std::vector<I> ids{2, 0, 2, ref::index_sentinel<I>(), 2};
  const std::vector<T> src = this->random_bits(ids.size());
  const std::vector<T> dst0 = this->random_bits(4);
  auto ids_dev = this->device().upload(ids);
  auto src_dev = this->device().upload(src);
  auto dst_dev = this->device().upload(dst0);
  hkb::LaunchArgs args;
  args.arg(ids_dev.ptr())
      .arg(src_dev.ptr())
      .arg(dst_dev.ptr())
      .arg(size_t{1})
      .arg(ids.size())
      .arg(size_t{4})
      .arg(size_t{1});
  this->launch(TestFixture::name("s"), hkb::LaunchConfig::for_num_elems(1), args);
  const std::vector<T> want{src[1], dst0[1], src[4], dst0[3]};
  EXPECT_TRUE(gpu_test::same_bits(dst_dev.download(), want));
}

// Every candle name resolves; candle has no fp8 scatter and no i16/i32 index for other dtypes,
// and neither does hkb.
class IndexingNames : public GpuTest {};
TEST_F(IndexingNames, InventoryMatchesCandle) {
  const char* values[] = {"bf16", "f16", "f32", "f64", "u8", "u32", "i64", "f8_e4m3"};
  size_t found = 0;
  for (const char* op : {"is", "gather", "ia", "s", "sa"}) {
    for (const char* idx : {"u8", "u32", "i64", "i16", "i32"}) {
      for (const char* v : values) {
        const std::string name = std::string(op) + "_" + idx + "_" + v;
        const bool fp8 = std::string(v) == "f8_e4m3";
        const bool narrow_index = std::string(idx) == "i16" || std::string(idx) == "i32";
        const bool expected =
            std::string(op) == "s" ? (!fp8 && !narrow_index) : (fp8 || !narrow_index);
        hkb_function fn = nullptr;
        const hkb_status st = hkb_function_get(device().get(), name.c_str(), &fn);
        EXPECT_EQ(st == HKB_SUCCESS, expected) << name << ": " << hkb_last_error();
        found += st == HKB_SUCCESS;
      }
    }
  }
  EXPECT_EQ(found, 125u);
}

}  // namespace
