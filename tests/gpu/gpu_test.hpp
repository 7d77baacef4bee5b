// Shared fixture and helpers of the GPU tests (ctest label `gpu`). Tests launch through the C++ API
// (hkb.hpp) and, where a test says so, through the C ABI, with candle's launch geometry; the
// elementwise families also with the tuned one (GpuTest::launch_both).
#pragma once

#include <gtest/gtest.h>
#include <hkb/hkb.hpp>

#include "../reference/dtypes.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace gpu_test {

// A seed per test: HKB_TEST_SEED if set, else fresh. Printed on failure through SCOPED_TRACE.
inline uint64_t test_seed() {
  if (const char* s = std::getenv("HKB_TEST_SEED")) return std::strtoull(s, nullptr, 0);
  return std::random_device{}() * 0x9E3779B97F4A7C15ull + std::random_device{}();
}

template <typename T>
::testing::AssertionResult same_bits(const std::vector<T>& got, const std::vector<T>& want);

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int n = 0;
    if (hkb_device_count(&n) != HKB_SUCCESS || n == 0) {
      GTEST_SKIP() << "no GPU device: " << hkb_last_error();
    }
    device_.emplace(0);
    seed_ = test_seed();
    rng_.seed(seed_);
  }

  // Public so free helper functions of a test file can take the fixture.
 public:
  const hkb::Device& device() const { return *device_; }
  std::mt19937_64& rng() { return rng_; }
  uint64_t seed() const { return seed_; }
  std::string seed_note() const {
    return "seed " + std::to_string(seed_) + " (rerun with HKB_TEST_SEED=" + std::to_string(seed_) +
           ")";
  }

  void launch(const std::string& name, const hkb::LaunchConfig& cfg, const hkb::LaunchArgs& args) {
    device_->function(name).launch(cfg, args);
    device_->synchronize();
  }

  // An element count for which candle's geometry has 1025 blocks, one more than
  // tuning::kResidentBlockBound, so that its resident split has only its first blocks work, and
  // the tuned grid fewer blocks, every one working, with an odd tail.
  static size_t tuned_split_size() { return (size_t{1} << 20) + 7; }

  // Grids of rows (gridDim.y > 1, as the tuned launch gives past 1024 blocks) or planes smaller
  // than the work: 3 x 2 x 2 blocks of 64 (every block of the first plane busy over contiguous
  // data, the first row alone over layouts, the second plane idle), 5 x 1 x 3 of 64 (one row: the
  // planes past the first idle) and 1030 x 2 of 32 (rows wider than tuning::kResidentBlockBound:
  // the first row splits the work as candle's grid does).
  static std::vector<hkb::LaunchConfig> grids_with_rows() {
    return {hkb::LaunchConfig::make(3, 2, 2, 64, 1, 1), hkb::LaunchConfig::make(5, 1, 3, 64, 1, 1),
            hkb::LaunchConfig::make(1030, 2, 1, 32, 1, 1)};
  }

  // The elementwise families' launch of `name` over n elements: `out` set to `initial` (its poison,
  // or the input of an in-place launch), then launched with `cfg` when given, else with candle's
  // geometry (for_num_elems(n); one block for n = 0, which must write nothing) and again, `out`
  // reset, with hkb's tuned configuration (LaunchConfig::tuned). Expects the two outputs equal bit
  // for bit and returns candle's: the family's check against its CPU reference covers both.
  template <typename T>
  std::vector<T> launch_elementwise(const std::string& name, uint64_t n,
                                    const hkb::LaunchArgs& args, hkb::DeviceBuffer<T>& out,
                                    const std::vector<T>& initial,
                                    const hkb::LaunchConfig* cfg = nullptr) {
    const hkb::Function fn = device_->function(name);
    const hkb::LaunchConfig candle =
        n == 0 ? hkb::LaunchConfig::make(1, 1, 1, 1024, 1, 1)
               : hkb::LaunchConfig::for_num_elems(static_cast<uint32_t>(n));
    out.upload(initial);
    fn.launch(cfg != nullptr ? *cfg : candle, args);
    device_->synchronize();
    std::vector<T> got = out.download();
    if (cfg != nullptr) return got;
    const hkb::LaunchConfig tuned = hkb::LaunchConfig::tuned(fn, n);
    out.upload(initial);
    fn.launch(tuned, args);
    device_->synchronize();
    EXPECT_TRUE(same_bits(out.download(), got))
        << name << ": the tuned launch (grid " << tuned.grid[0] << ", block " << tuned.block[0]
        << ") differs from candle's (grid " << candle.grid[0] << ")";
    return got;
  }

 private:
  std::optional<hkb::Device> device_;
  std::mt19937_64 rng_;
  uint64_t seed_ = 0;
};

// A view over a base buffer: dims, element strides and start offset (candle's Layout).
struct Layout {
  std::vector<size_t> dims, strides;
  size_t offset = 0;

  static Layout contiguous(std::vector<size_t> dims) {
    Layout l;
    l.dims = dims;
    l.strides.assign(dims.size(), 1);
    for (size_t d = dims.size(); d-- > 1;) l.strides[d - 1] = l.strides[d] * dims[d];
    return l;
  }
  size_t numel() const {
    size_t n = 1;
    for (size_t d : dims) n *= d;
    return n;
  }
  // Elements the base buffer needs so every element of the view is in range.
  size_t storage_size() const {
    if (numel() == 0) return offset;
    size_t last = offset;
    for (size_t d = 0; d < dims.size(); ++d) last += (dims[d] - 1) * strides[d];
    return last + 1;
  }
  // Offset (from the base, start offset included) of the i-th element in row-major order.
  size_t index(size_t i) const {
    size_t off = offset;
    for (size_t d = dims.size(); d-- > 0;) {
      off += (i % dims[d]) * strides[d];
      i /= dims[d];
    }
    return off;
  }
  bool is_contiguous() const {
    size_t expected = 1;
    for (size_t d = dims.size(); d-- > 0;) {
      if (dims[d] != 1 && strides[d] != expected) return false;
      expected *= dims[d];
    }
    return true;
  }
  // [dims..., strides...] as candle's info array.
  std::vector<size_t> info() const {
    std::vector<size_t> v(dims);
    v.insert(v.end(), strides.begin(), strides.end());
    return v;
  }
  std::string str() const {
    std::ostringstream os;
    os << "dims[";
    for (size_t d : dims) os << d << ",";
    os << "] strides[";
    for (size_t s : strides) os << s << ",";
    os << "] offset " << offset;
    return os.str();
  }
};

// Strided views whose inner dim is contiguous and a multiple of 16 long (attention's head
// transpose, permute(1, 0, 2) of a 3x4x48 tensor), which the strided path moves in packs: from an
// aligned start and from two elements in.
inline std::vector<Layout> run_layouts() {
  std::vector<Layout> v;
  for (size_t offset : {0, 2}) {
    Layout h;
    h.dims = {4, 3, 48};
    h.strides = {48, 192, 1};
    h.offset = offset;
    v.push_back(h);
  }
  return v;
}

// Transposed views (inner dim strided, another dim of stride 1) whose tiled dims are at least 8
// long, which the strided path moves by tiles (kernels/common/transpose.h): partial tiles, a
// transposed key [2, 3, 40, 37], a dim between the tiled ones, a broadcast group dim, a start
// offset.
inline std::vector<Layout> transpose_layouts() {
  std::vector<Layout> v;
  auto add = [&v](std::vector<size_t> dims, std::vector<size_t> strides, size_t offset) {
    Layout l;
    l.dims = std::move(dims);
    l.strides = std::move(strides);
    l.offset = offset;
    v.push_back(l);
  };
  add({45, 37}, {1, 45}, 0);                    // a 37 x 45 matrix transposed
  add({2, 3, 40, 37}, {4440, 1480, 1, 40}, 0);  // its last two dims swapped
  add({40, 3, 37}, {1, 1480, 40}, 1);           // dim k, then a group dim, then the inner
  add({2, 33, 9}, {0, 1, 33}, 3);               // broadcast over the leading dim
  add({8, 70}, {1, 8}, 0);                      // the shortest tiled dim
  // 2-byte values by pairs (64-wide tiles, transpose.h): partial tiles along both dims; an odd
  // dim k (its last pair half) in a wider storage row; an odd offset, an odd inner dim (no pairs);
  // groups before both tiled dims, and between them with an even offset.
  add({130, 66}, {1, 130}, 0);
  add({129, 130}, {1, 132}, 2);
  add({130, 66}, {1, 130}, 1);
  add({130, 65}, {1, 130}, 0);
  add({2, 3, 72, 70}, {15120, 5040, 1, 72}, 0);
  add({128, 3, 66}, {1, 8448, 128}, 2);
  return v;
}

// Views the tests sweep: contiguous, transposed (last two dims swapped: by 3 columns, and by 37
// through tiles), sliced with a start offset and a step, broadcast (stride 0) over the leading
// dim, and a head transpose (the first two of three dims swapped, rows of 32).
inline std::vector<Layout> standard_layouts(size_t n) {
  std::vector<Layout> v;
  v.push_back(Layout::contiguous({n}));
  if (n >= 64) {
    Layout h;
    h.dims = {2, n / 64, 32};
    h.strides = {32, 64, 1};
    v.push_back(h);
  }
  if (n >= 6 && n % 3 == 0) {
    Layout t = Layout::contiguous({3, n / 3});
    std::swap(t.dims[0], t.dims[1]);
    std::swap(t.strides[0], t.strides[1]);
    v.push_back(t);
  }
  if (n >= 37 * 8) {  // a transpose by tiles, the last ones partial
    Layout t = Layout::contiguous({37, n / 37});
    std::swap(t.dims[0], t.dims[1]);
    std::swap(t.strides[0], t.strides[1]);
    v.push_back(t);
  }
  {
    Layout s;
    s.dims = {n};
    s.strides = {2};
    s.offset = 3;
    v.push_back(s);
  }
  {
    Layout b;
    b.dims = {4, n / 4 + 1};
    b.strides = {0, 1};
    b.offset = 1;
    if (b.numel() > 0) v.push_back(b);
  }
  return v;
}

// Random values of T. Floats: a spread of magnitudes with both signs; ints: the full range of the
// smaller types, a symmetric window for wide ones.
template <typename T>
T random_value(std::mt19937_64& rng) {
  if constexpr (ref::is_float_v<T>) {
    std::uniform_real_distribution<double> mant(-4.0, 4.0);
    return ref::from_double<T>(mant(rng));
  } else if constexpr (sizeof(T) <= 2) {
    return static_cast<T>(rng());
  } else {
    std::uniform_int_distribution<int64_t> d(-100000, 100000);
    return static_cast<T>(d(rng));
  }
}
template <typename T>
std::vector<T> random_vector(std::mt19937_64& rng, size_t n) {
  std::vector<T> v(n);
  for (auto& x : v) x = random_value<T>(rng);
  return v;
}

// Special values of a float type: NaN, +-inf (where T has them), -0.0, +0.0, the smallest
// subnormal, the largest finite value and values beyond fp8's range (which must saturate).
template <typename T>
std::vector<double> special_values() {
  std::vector<double> v = {std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),
                           -0.0,
                           0.0,
                           1.0,
                           -1.5};
  if constexpr (std::is_same_v<T, hkb::f16>) {
    v.insert(v.end(), {5.960464477539063e-08, 65504.0, -65504.0});
  } else if constexpr (std::is_same_v<T, hkb::bf16>) {
    v.insert(v.end(), {9.183549615799121e-41, 3.3895313892515355e+38});
  } else if constexpr (std::is_same_v<T, hkb::f8e4m3>) {
    v.insert(v.end(), {0.001953125, 448.0, -448.0, 500.0, -1000.0});
  } else if constexpr (std::is_same_v<T, float>) {
    v.insert(v.end(), {1.401298464324817e-45, 3.4028234663852886e+38});
  } else if constexpr (std::is_same_v<T, double>) {
    v.insert(v.end(), {4.9406564584124654e-324, 1.7976931348623157e+308});
  }
  return v;
}

// A value that marks unwritten output: NaN-like bytes 0xA5 repeated.
template <typename T>
T poison() {
  T v;
  std::memset(&v, 0xA5, sizeof(T));
  return v;
}

// Compare element-wise within `max_ulps`; reports the first few mismatches with their index.
template <typename T>
::testing::AssertionResult near_ulps(const std::vector<T>& got, const std::vector<T>& want,
                                     double max_ulps) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << "size " << got.size() << " vs expected " << want.size();
  }
  size_t bad = 0;
  std::ostringstream os;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = ref::ulp_distance(got[i], want[i]);
    if (!(d <= max_ulps)) {
      if (bad < 5) {
        os << "\n  [" << i << "] got " << ref::to_double(got[i]) << " want "
           << ref::to_double(want[i]) << " (" << d << " ulp)";
      }
      ++bad;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " of " << got.size() << " elements off by more than " << max_ulps << " ulp"
         << os.str();
}

// Bitwise equality, for copies and fills.
template <typename T>
::testing::AssertionResult same_bits(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << "size " << got.size() << " vs " << want.size();
  }
  for (size_t i = 0; i < got.size(); ++i) {
    if (!ref::same_bits(got[i], want[i])) {
      return ::testing::AssertionFailure()
             << "first difference at [" << i << "]: got " << ref::to_double(got[i]) << " want "
             << ref::to_double(want[i]);
    }
  }
  return ::testing::AssertionSuccess();
}

// True when the tests' device (ordinal 0) is one of the CPU platform's (every GPU thread a fiber
// on the host): the cpu flavour, or a GPU flavour with HKB_PLATFORM=cpu.
inline bool on_cpu_platform() {
  static const bool cpu = [] {
    hkb_context ctx = nullptr;
    char target[64] = {};
    return hkb_context_get(0, &ctx) == HKB_SUCCESS &&
           hkb_context_target(ctx, target, sizeof target) == HKB_SUCCESS &&
           std::strncmp(target, "cpu-", 4) == 0;
  }();
  return cpu;
}

// A test's largest sizes, shrunk on the CPU platform: above 2^16 elements only the low 16 bits
// are kept, over 2^16 (so (1 << 20) + 3 becomes 65539: still odd, still many blocks). GPUs get
// `n` unchanged. Layouts, special values and small odd sizes are never shrunk.
inline size_t size_cap(size_t n) {
  constexpr size_t kCap = size_t{1} << 16;
  return on_cpu_platform() && n > kCap ? (n & (kCap - 1)) | kCap : n;
}

// The test sizes of the foundation issue; families add their own.
inline std::vector<size_t> standard_sizes() {
  return {0, 1, 31, 1023, 1025, size_cap((1u << 20) + 3)};
}

}  // namespace gpu_test
