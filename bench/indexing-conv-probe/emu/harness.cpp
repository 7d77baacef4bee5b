// CPU emulation check of the INDEXING and CONV entry points (index_select, index_add, gather,
// im2col, upsample_nearest2d) against tests/reference, under many grids.
#include "reference/conv_ref.hpp"
#include "reference/indexing_ref.hpp"

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

struct emu_dim3 {
  unsigned x, y, z;
};
emu_dim3 threadIdx, blockIdx, blockDim, gridDim;

static void launch(unsigned grid, unsigned block, const std::function<void()>& f) {
  gridDim = {grid, 1, 1};
  blockDim = {block, 1, 1};
  for (unsigned b = 0; b < grid; ++b)
    for (unsigned t = 0; t < block; ++t) {
      blockIdx = {b, 0, 0};
      threadIdx = {t, 0, 0};
      f();
    }
}

using ref::bf16;
using ref::f16;
using ref::f8e4m3;

// clang-format off
#define IDX_DECL(IT, I, VT, V)                                                                    \
  extern "C" void is_##IT##_##VT(size_t, size_t, const size_t*, const I*, const V*, V*, size_t,   \
                                 size_t, size_t, size_t);                                         \
  extern "C" void ia_##IT##_##VT(const I*, size_t, const V*, V*, size_t, size_t, size_t, size_t); \
  extern "C" void gather_##IT##_##VT(size_t, const I*, const V*, V*, size_t, size_t, size_t,      \
                                     size_t);
#define IDX_FOR(IT, I)                                                                      \
  IDX_DECL(IT, I, bf16, bf16)                                                               \
  IDX_DECL(IT, I, f16, f16)                                                                 \
  IDX_DECL(IT, I, f32, float)                                                               \
  IDX_DECL(IT, I, f64, double)                                                              \
  IDX_DECL(IT, I, u8, uint8_t) IDX_DECL(IT, I, u32, uint32_t) IDX_DECL(IT, I, i64, int64_t) \
      IDX_DECL(IT, I, f8_e4m3, f8e4m3)
IDX_FOR(u8, uint8_t)
IDX_FOR(u32, uint32_t)
IDX_FOR(i64, int64_t)
IDX_DECL(i16, int16_t, f8_e4m3, f8e4m3)
IDX_DECL(i32, int32_t, f8_e4m3, f8e4m3)

#define CONV_DECL(TAG, T)                                                                      \
  extern "C" void im2col_##TAG(size_t, size_t, size_t, size_t, size_t, size_t, size_t, size_t, \
                               const size_t*, const T*, T*);                                   \
  extern "C" void upsample_nearest2d_##TAG(size_t, size_t, double, double, const size_t*,      \
                                           const T*, T*);
CONV_DECL(bf16, bf16)
CONV_DECL(f16, f16)
CONV_DECL(f32, float)
CONV_DECL(f64, double)
CONV_DECL(u8, uint8_t) CONV_DECL(u32, uint32_t)

    template <typename I, typename T>
    struct IdxFns {
  void (*is)(size_t, size_t, const size_t*, const I*, const T*, T*, size_t, size_t, size_t, size_t);
  void (*ia)(const I*, size_t, const T*, T*, size_t, size_t, size_t, size_t);
  void (*gather)(size_t, const I*, const T*, T*, size_t, size_t, size_t, size_t);
  const char* name;
};
template <typename T>
struct ConvFns {
  void (*im2col)(size_t, size_t, size_t, size_t, size_t, size_t, size_t, size_t, const size_t*,
                 const T*, T*);
  void (*up)(size_t, size_t, double, double, const size_t*, const T*, T*);
  const char* name;
};

static std::mt19937_64 rng(12345);
static long failures = 0, checks = 0;
// clang-format on
#define FAIL(...)               \
  do {                          \
    ++failures;                 \
    if (failures < 40) {        \
      std::printf(__VA_ARGS__); \
      std::printf("\n");        \
    }                           \
  } while (0)

// 64-byte aligned buffer of T with `lead` and `trail` poison elements around `n` data elements.
template <typename T>
struct Buf {
  std::vector<unsigned char> raw;
  size_t lead, n, trail;
  T* base;
  Buf(size_t n_, size_t lead_ = 0, size_t trail_ = 16) : lead(lead_), n(n_), trail(trail_) {
    raw.assign((lead + n + trail) * sizeof(T) + 128, 0xA5);
    uintptr_t p = reinterpret_cast<uintptr_t>(raw.data());
    p = (p + 63) & ~uintptr_t(63);
    base = reinterpret_cast<T*>(p);
  }
  T* data() { return base + lead; }
  bool guards_ok() const {
    const unsigned char* b = reinterpret_cast<const unsigned char*>(base);
    for (size_t i = 0; i < lead * sizeof(T); ++i)
      if (b[i] != 0xA5) return false;
    for (size_t i = (lead + n) * sizeof(T); i < (lead + n + trail) * sizeof(T); ++i)
      if (b[i] != 0xA5) return false;
    return true;
  }
};

template <typename T>
T random_bits() {
  T v;
  unsigned char b[sizeof(T)];
  for (auto& x : b) x = static_cast<unsigned char>(rng());
  std::memcpy(&v, b, sizeof(T));
  return v;
}

struct Geo {
  unsigned grid, block;
};
static std::vector<Geo> geometries(size_t n) {
  auto cover = [&](unsigned b, unsigned extra) {
    return Geo{static_cast<unsigned>((std::max<size_t>(n, 1) + b - 1) / b) + extra, b};
  };
  return {
      cover(1024, 0), Geo{3, 32},
      Geo{3, 64},     cover(90, 0),
      cover(30, 0),   cover(256, 5),
      Geo{1, 1},      cover(1024, 0).grid > 2 ? Geo{cover(1024, 0).grid / 2, 1024} : Geo{1, 1024}};
}

template <typename I>
std::vector<I> random_ids(size_t n, size_t dim) {
  const uint64_t max = static_cast<uint64_t>(std::numeric_limits<I>::max());
  std::vector<I> bad{ref::index_sentinel<I>()};
  if (dim < max) bad.push_back(static_cast<I>(dim));
  if (dim + 7 < max) bad.push_back(static_cast<I>(dim + 7));
  if (max - 1 >= dim) bad.push_back(static_cast<I>(max - 1));
  if constexpr (std::is_signed_v<I>) {
    bad.push_back(static_cast<I>(-1));
    bad.push_back(std::numeric_limits<I>::min());
  }
  std::vector<I> v(n);
  for (auto& id : v) {
    if (rng() % 10 == 0) {
      id = bad[rng() % bad.size()];
    } else {
      do {
        id = static_cast<I>(rng() % dim);
      } while (id == ref::index_sentinel<I>());
    }
  }
  return v;
}

// ids layout: dims/strides/offset
struct IdsLayout {
  std::vector<size_t> dims, strides;
  size_t offset = 0;
  size_t numel() const {
    size_t n = 1;
    for (auto d : dims) n *= d;
    return n;
  }
  size_t storage() const {
    size_t last = offset;
    if (numel() == 0) return offset + 1;
    for (size_t d = 0; d < dims.size(); ++d) last += (dims[d] - 1) * strides[d];
    return last + 1;
  }
  size_t index(size_t i) const {
    size_t off = offset;
    for (size_t d = dims.size(); d-- > 0;) {
      off += (i % dims[d]) * strides[d];
      i /= dims[d];
    }
    return off;
  }
  static IdsLayout contig(size_t n) { return IdsLayout{{n}, {1}, 0}; }
};

template <typename I, typename T>
void check_is(const IdxFns<I, T>& f, size_t left, size_t src_dim, size_t right, const IdsLayout& il,
              size_t src_shift, size_t out_shift, bool all_geos = true) {
  const size_t n_ids = il.numel();
  std::vector<I> storage = random_ids<I>(il.storage(), src_dim);
  std::vector<I> ids(n_ids);
  for (size_t i = 0; i < n_ids; ++i) ids[i] = storage[il.index(i)];
  Buf<T> srcb(left * src_dim * right, src_shift);
  std::vector<T> src(left * src_dim * right);
  for (size_t i = 0; i < src.size(); ++i) src[i] = srcb.data()[i] = random_bits<T>();
  const std::vector<T> want = ref::index_select(ids, src, left, src_dim, right);
  std::vector<size_t> info = il.dims;
  info.insert(info.end(), il.strides.begin(), il.strides.end());
  const size_t numel = want.size();
  auto geos = geometries(numel);
  if (!all_geos) geos.resize(1);
  for (const Geo& g : geos) {
    Buf<T> out(numel, 16 + out_shift);
    launch(g.grid, g.block, [&] {
      f.is(numel, il.dims.size(), info.data(), storage.data() + il.offset, srcb.data(), out.data(),
           left, src_dim, n_ids, right);
    });
    ++checks;
    bool ok = out.guards_ok();
    for (size_t i = 0; ok && i < numel; ++i) ok = ref::same_bits(out.data()[i], want[i]);
    if (!ok)
      FAIL("is %s left %zu src_dim %zu right %zu ids %zu shifts %zu/%zu grid %u x %u", f.name, left,
           src_dim, right, n_ids, src_shift, out_shift, g.grid, g.block);
  }
}

template <typename I, typename T>
std::vector<T> random_values(size_t n) {
  std::vector<T> v(n);
  for (auto& x : v) {
    if constexpr (ref::is_float_v<T>) {
      x = ref::from_double<T>(std::uniform_real_distribution<double>(-4, 4)(rng));
      if (rng() % 16 == 0) {
        const double sp[] = {NAN, INFINITY, -INFINITY, -0.0, 1e-40, 1e300, 448, 500};
        x = ref::from_double<T>(sp[rng() % 8]);
      }
    } else {
      x = random_bits<T>();
    }
  }
  return v;
}

template <typename I, typename T>
void check_ia(const IdxFns<I, T>& f, size_t left, size_t n_ids, size_t dst_dim, size_t right) {
  const std::vector<I> ids = random_ids<I>(n_ids, dst_dim);
  const std::vector<T> src = random_values<I, T>(left * n_ids * right);
  const std::vector<T> dst0 = random_values<I, T>(left * dst_dim * right);
  std::vector<T> want = dst0;
  ref::index_add(ids, src, want, left, dst_dim, right);
  const size_t threads = left * right;
  std::vector<Geo> geos = {
      Geo{static_cast<unsigned>((std::max<size_t>(threads, 1) + 1023) / 1024), 1024}, Geo{3, 32},
      Geo{19, 64}};
  for (const Geo& g : geos) {
    Buf<T> out(dst0.size(), 8);
    std::memcpy(out.data(), dst0.data(), dst0.size() * sizeof(T));
    launch(g.grid, g.block, [&] {
      f.ia(ids.empty() ? nullptr : ids.data(), n_ids, src.data(), out.data(), left, n_ids, dst_dim,
           right);
    });
    ++checks;
    bool ok = out.guards_ok();
    size_t bad = 0;
    for (size_t i = 0; ok && i < want.size(); ++i)
      if (!ref::same_bits(out.data()[i], want[i])) {
        // NaN payloads may differ: accept any NaN for NaN
        if constexpr (ref::is_float_v<T>) {
          if (std::isnan(ref::to_double(out.data()[i])) && std::isnan(ref::to_double(want[i])))
            continue;
        }
        ok = false;
        bad = i;
      }
    if (!ok)
      FAIL("ia %s left %zu ids %zu dst_dim %zu right %zu grid %u x %u at %zu: got %g want %g",
           f.name, left, n_ids, dst_dim, right, g.grid, g.block, bad,
           ref::to_double(out.data()[bad]), ref::to_double(want[bad]));
  }
}

template <typename I, typename T>
void check_gather(const IdxFns<I, T>& f, size_t left, size_t src_dim, size_t ids_dim,
                  size_t right) {
  const size_t numel = left * ids_dim * right;
  const std::vector<I> ids = random_ids<I>(numel, src_dim);
  std::vector<T> src(left * src_dim * right);
  for (auto& x : src) x = random_bits<T>();
  const std::vector<T> want = ref::gather(ids, src, left, src_dim, ids_dim, right);
  for (const Geo& g : {Geo{static_cast<unsigned>((numel + 1023) / 1024), 1024}, Geo{3, 32}}) {
    Buf<T> out(numel, 8);
    launch(g.grid, g.block, [&] {
      f.gather(numel, ids.data(), src.data(), out.data(), left, src_dim, ids_dim, right);
    });
    ++checks;
    bool ok = out.guards_ok();
    for (size_t i = 0; ok && i < numel; ++i) ok = ref::same_bits(out.data()[i], want[i]);
    if (!ok) FAIL("gather %s", f.name);
  }
}

template <typename I, typename T>
void indexing_suite(const IdxFns<I, T>& f) {
  for (size_t sh : {0, 1, 3}) {
    for (size_t osh : {0, 1, 5}) {
      check_is(f, 1, 1, 1, IdsLayout::contig(1), sh, osh);
      check_is(f, 1, 7, 1, IdsLayout::contig(5), sh, osh);
      check_is(f, 3, 11, 5, IdsLayout::contig(9), sh, osh);
      check_is(f, 2, 13, 64, IdsLayout::contig(17), sh, osh);
      check_is(f, 2, 5, 6, IdsLayout::contig(4), sh, osh);
      check_is(f, 1, 37, 1031, IdsLayout::contig(3), sh, osh);
      check_is(f, 3, 9, 32, IdsLayout::contig(40), sh, osh);
      check_is(f, 2, 9, 8, IdsLayout::contig(6), sh, osh);
      check_is(f, 1, 9, 2, IdsLayout::contig(6), sh, osh);
      check_is(f, 2, 9, 4, IdsLayout::contig(7), sh, osh);
    }
  }
  IdsLayout step{{6}, {3}, 2};
  IdsLayout tr{{3, 4}, {1, 3}, 0};
  IdsLayout bc{{5}, {0}, 1};
  IdsLayout unit{{1, 5}, {7, 1}, 0};
  for (const IdsLayout& l : {step, tr, bc, unit}) {
    check_is(f, 2, 9, 8, l, 0, 0);
    check_is(f, 1, 10, 3, l, 0, 0);
    check_is(f, 2, 9, 64, l, 0, 0);
  }
  check_is(f, 1, 200, 1024, IdsLayout::contig(257), 0, 0, false);
  check_is(f, 4, 50, 3, IdsLayout::contig(1000), 0, 0, false);
  // numel smaller than left * ids * right: only the first numel outputs (ref computes all; compare
  // prefix)
  for (size_t a : {1, 5}) check_ia(f, 1, a, 1, 1);
  check_ia(f, 1, 1, 1, 1);
  check_ia(f, 1, 5, 7, 1);
  check_ia(f, 3, 17, 5, 7);
  check_ia(f, 2, 40, 3, 1030);
  check_ia(f, 2, 64, 4, 300);
  check_ia(f, 2, 13, 2, 33);
  check_ia(f, 1, 4, 8, 1u << 14);
  check_ia(f, 2, 0, 5, 4);
  check_gather(f, 3, 11, 9, 5);
  check_gather(f, 1, 20, 3, 1030);
}

// Conv: 4-D layouts
struct L4 {
  size_t dims[4], strides[4], offset;
  size_t storage() const {
    size_t last = offset;
    for (int d = 0; d < 4; ++d) {
      if (dims[d] == 0) return offset + 1;
      last += (dims[d] - 1) * strides[d];
    }
    return last + 1;
  }
};
static L4 make_l4(size_t a, size_t b, size_t c, size_t d, int kind) {
  L4 l{{a, b, c, d}, {b * c * d, c * d, d, 1}, 0};
  if (kind == 1) {  // channels last
    l.strides[1] = 1;
    l.strides[3] = b;
    l.strides[2] = b * d;
    l.strides[0] = b * c * d;
  } else if (kind == 2) {
    l.strides[0] = 0;
    l.offset = 5;
  }
  return l;
}
// The reference's view of l over src, and candle's info array for it ([dims, strides]).
template <typename T>
ref::View4<T> view_of(const L4& l, const std::vector<T>& src) {
  return {src.data() + l.offset,
          {l.dims[0], l.dims[1], l.dims[2], l.dims[3]},
          {l.strides[0], l.strides[1], l.strides[2], l.strides[3]}};
}
static std::vector<size_t> info_of(const L4& l) {
  return {l.dims[0],    l.dims[1],    l.dims[2],    l.dims[3],
          l.strides[0], l.strides[1], l.strides[2], l.strides[3]};
}

template <typename T>
std::vector<T> conv_values(size_t n) {
  std::vector<T> v(std::max<size_t>(n, 1));
  for (auto& x : v) x = random_bits<T>();
  return v;
}

template <typename T>
bool same_copy(T a, double w) {
  if constexpr (ref::is_float_v<T>) {
    const double g = ref::to_double(a);
    if (std::isnan(w) || std::isnan(g)) return std::isnan(w) && std::isnan(g);
    return g == w && std::signbit(g) == std::signbit(w);
  } else {
    return static_cast<double>(a) == w;
  }
}

// The guards of out hold and its first n values are copies of want; *bad: the first that is not.
template <typename T>
bool copy_matches(Buf<T>& out, const std::vector<double>& want, size_t n, size_t* bad) {
  if (!out.guards_ok()) return false;
  for (size_t i = 0; i < n; ++i) {
    if (!same_copy(out.data()[i], want[i])) {
      *bad = i;
      return false;
    }
  }
  return true;
}

template <typename T>
void check_im2col(const ConvFns<T>& f, size_t b, size_t c, size_t h, size_t w, size_t hk, size_t wk,
                  size_t stride, size_t pad, size_t dil, int kind, bool all = true) {
  const L4 l = make_l4(b, c, h, w, kind);
  const auto src = conv_values<T>(l.storage());
  const ref::View4<T> v = view_of(l, src);
  const size_t ho = (h + 2 * pad - dil * (hk - 1) - 1) / stride + 1;
  const size_t wo = (w + 2 * pad - dil * (wk - 1) - 1) / stride + 1;
  const auto want = ref::im2col(v, ho, wo, hk, wk, stride, pad, dil);
  const size_t n = b * ho * wo * c * hk * wk;
  const std::vector<size_t> info = info_of(l);
  auto geos = geometries(n);
  if (!all) geos.resize(1);
  for (const Geo& g : geos) {
    for (size_t osh : {0, 1}) {
      Buf<T> out(n, osh);
      launch(g.grid, g.block, [&] {
        f.im2col(n, ho, wo, hk, wk, stride, pad, dil, info.data(), src.data() + l.offset,
                 out.data());
      });
      ++checks;
      size_t bad = 0;
      if (!copy_matches(out, want.value, n, &bad))
        FAIL(
            "im2col %s b%zu c%zu %zux%zu k%zux%zu s%zu p%zu d%zu kind %d grid %u x %u shift %zu at "
            "%zu",
            f.name, b, c, h, w, hk, wk, stride, pad, dil, kind, g.grid, g.block, osh, bad);
    }
  }
}

template <typename T>
void check_up(const ConvFns<T>& f, size_t b, size_t c, size_t d2, size_t d3, size_t o2, size_t o3,
              int kind, bool all = true) {
  const L4 l = make_l4(b, c, d2, d3, kind);
  const auto src = conv_values<T>(l.storage());
  const ref::View4<T> v = view_of(l, src);
  const double ws = double(d2) / double(o2), hs = double(d3) / double(o3);
  const auto want = ref::upsample_nearest2d(v, o2, o3, ws, hs);
  const size_t n = b * c * o2 * o3;
  const std::vector<size_t> info = info_of(l);
  auto geos = geometries(n);
  if (!all) geos.resize(1);
  for (const Geo& g : geos) {
    for (size_t osh : {0, 1}) {
      Buf<T> out(n, osh);
      launch(g.grid, g.block,
             [&] { f.up(o2, o3, ws, hs, info.data(), src.data() + l.offset, out.data()); });
      ++checks;
      size_t bad = 0;
      if (!copy_matches(out, want.value, n, &bad))
        FAIL("upsample %s b%zu c%zu %zux%zu -> %zux%zu kind %d grid %u x %u shift %zu at %zu",
             f.name, b, c, d2, d3, o2, o3, kind, g.grid, g.block, osh, bad);
    }
  }
}

template <typename T>
void conv_suite(const ConvFns<T>& f) {
  for (int kind = 0; kind < 3; ++kind) {
    check_im2col(f, 2, 3, 7, 9, 3, 3, 1, 0, 1, kind);
    check_im2col(f, 1, 5, 4, 6, 1, 1, 1, 0, 1, kind);
    check_im2col(f, 2, 2, 11, 9, 2, 2, 3, 0, 1, kind);
    check_im2col(f, 1, 3, 5, 4, 2, 3, 1, 3, 1, kind);
    check_im2col(f, 2, 3, 12, 10, 3, 2, 2, 1, 2, kind);
    check_im2col(f, 1, 1, 3, 3, 3, 3, 1, 1, 1, kind);
    check_im2col(f, 2, 8, 17, 19, 3, 3, 1, 1, 1, kind);
    check_im2col(f, 1, 16, 6, 5, 3, 3, 2, 2, 1, kind);
    check_im2col(f, 0, 3, 5, 5, 3, 3, 1, 1, 1, kind);
    check_up(f, 2, 3, 4, 5, 8, 12, kind);
    check_up(f, 1, 2, 5, 7, 7, 9, kind);
    check_up(f, 2, 2, 6, 8, 4, 3, kind);
    check_up(f, 1, 1, 3, 3, 3, 3, kind);
    check_up(f, 1, 2, 5, 4, 9, 16, kind);
    check_up(f, 3, 1, 2, 3, 11, 32, kind);
    check_up(f, 2, 3, 16, 16, 32, 32, kind);
    check_up(f, 0, 3, 4, 4, 8, 8, kind);
    check_up(f, 1, 3, 8, 4, 32, 16, kind);   // x4 / x4: power-of-two scales 0.25
    check_up(f, 2, 3, 8, 8, 4, 4, kind);     // scale 2: no shift, the f64 path
    check_up(f, 3, 5, 50, 4, 100, 8, kind);  // x2, groups that end inside a thread's units
    check_up(f, 2, 2, 3, 5, 6, 40, kind);    // x2 / x8
    check_im2col(f, 3, 4, 9, 7, 3, 3, 1, 1, 1, kind);  // c_in * 9 = 36: whole packs for 4 bytes
  }
  check_im2col(f, 2, 32, 40, 40, 3, 3, 1, 1, 1, 0, false);
  check_up(f, 4, 16, 64, 64, 128, 128, 0, false);
}

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "all";
// clang-format off
#define IDX_RUN(IT, I, VT, V) \
  indexing_suite(IdxFns<I, V>{is_##IT##_##VT, ia_##IT##_##VT, gather_##IT##_##VT, #IT "_" #VT});
#define IDX_RUN_FOR(IT, I)                                                               \
  IDX_RUN(IT, I, bf16, bf16)                                                             \
  IDX_RUN(IT, I, f16, f16)                                                               \
  IDX_RUN(IT, I, f32, float)                                                             \
  IDX_RUN(IT, I, f64, double)                                                            \
  IDX_RUN(IT, I, u8, uint8_t)                                                            \
  IDX_RUN(IT, I, u32, uint32_t)                                                          \
  IDX_RUN(IT, I, i64, int64_t)                                                           \
  IDX_RUN(IT, I, f8_e4m3, f8e4m3)
  if (what == "all" || what == "indexing") {
    IDX_RUN_FOR(u8, uint8_t)
    IDX_RUN_FOR(u32, uint32_t)
    IDX_RUN_FOR(i64, int64_t)
    IDX_RUN(i16, int16_t, f8_e4m3, f8e4m3)
    IDX_RUN(i32, int32_t, f8_e4m3, f8e4m3)
    std::printf("indexing: %ld checks, %ld failures\n", checks, failures);
  }
#define CONV_RUN(TAG, T) conv_suite(ConvFns<T>{im2col_##TAG, upsample_nearest2d_##TAG, #TAG});
  if (what == "all" || what == "conv") {
    CONV_RUN(bf16, bf16)
    CONV_RUN(f16, f16)
    CONV_RUN(f32, float)
    CONV_RUN(f64, double)
    CONV_RUN(u8, uint8_t)
    CONV_RUN(u32, uint32_t)
  }
  // clang-format on
  std::printf("total: %ld checks, %ld failures\n", checks, failures);
  return failures != 0;
}
