// INDEXING throughput under candle's launch geometry. The headline case is an embedding lookup:
// index_select of 8192 rows from a 32000 x 4096 table (candle: left 1, ids_dim 8192, right 4096,
// for_num_elems over the 2^25 outputs). Bytes counted: the rows read plus the rows written (ids
// are noise). A second row per dtype launches one thread per 16-byte word instead of one per
// element, to show what candle's grid (three quarters of its threads idle here) costs. index_add
// is the embedding's backward shape: dst rows are read and written once per id, src read once;
// scatter_add the same with ids as large as the source.
// gather along the last dim of an 8192 x 8192 source with 8192 x 8192 i64 ids (a top-k's or a
// loss's gather): ids, outputs and one source element per output counted.
#include "bench_common.hpp"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr size_t kVocab = 32000;
constexpr size_t kHidden = 4096;
constexpr size_t kIds = 8192;

template <typename T>
struct Buffers {
  hkb::DeviceBuffer<T> table, rows;  // index_select: src, dst; index_add: dst, src
};

template <typename T>
std::vector<Buffers<T>> index_sets(const hkb::Device& dev, double footprint) {
  return bench::make_sets<Buffers<T>>(footprint, [&] {
    Buffers<T> b{dev.alloc<T>(kVocab * kHidden), dev.alloc<T>(kIds * kHidden)};
    bench::fill(dev, b.table, 0x3C);
    bench::fill(dev, b.rows, 0x3C);
    return b;
  });
}

template <typename I, typename T>
bench::Row index_select_row(const hkb::Device& dev, const std::string& kernel,
                            const std::vector<I>& ids_host, bool word_per_thread) {
  const size_t numel = kIds * kHidden;
  const auto sets = index_sets<T>(dev, 2.0 * numel * sizeof(T));
  auto ids = dev.upload(ids_host);
  auto info = dev.upload(std::vector<size_t>{kIds, 1});
  const auto cfg =
      word_per_thread ? bench::pack_grid(numel * sizeof(T)) : bench::candle_grid(numel);
  const hkb::Function fn = bench::function(dev, kernel);
  const double s = bench::time_sets(dev, sets.size(), [&](size_t i) {
    hkb::LaunchArgs args;
    args.arg(numel).arg(size_t{1}).arg(info.ptr()).arg(ids.ptr());
    args.arg(sets[i].table.ptr()).arg(sets[i].rows.ptr());
    args.arg(size_t{1}).arg(kVocab).arg(kIds).arg(kHidden);
    fn.launch(cfg, args);
  });
  const std::string geometry = word_per_thread ? " (thread per 16 B)" : " (candle grid)";
  return {kernel + " 32000x4096, 8192 ids" + geometry, 2.0 * numel * sizeof(T), s};
}

template <typename I, typename T>
bench::Row index_add_row(const hkb::Device& dev, const std::string& kernel,
                         const std::vector<I>& ids_host) {
  const double bytes = 3.0 * kIds * kHidden * sizeof(T);
  const auto sets = index_sets<T>(dev, bytes);
  auto ids = dev.upload(ids_host);
  const auto cfg = bench::candle_grid(kHidden);
  const hkb::Function fn = bench::function(dev, kernel);
  const double s = bench::time_sets(
      dev, sets.size(),
      [&](size_t i) {
        hkb::LaunchArgs args;
        args.arg(ids.ptr()).arg(kIds).arg(sets[i].rows.ptr()).arg(sets[i].table.ptr());
        args.arg(size_t{1}).arg(kIds).arg(kVocab).arg(kHidden);
        fn.launch(cfg, args);
      },
      5, 5);
  return {kernel + " 32000x4096 += 8192 rows", bytes, s};
}

// scatter_add of the same shape: ids as large as the source (the embedding's id repeated along
// each row), so ids count as read bytes too.
bench::Row scatter_add_row(const hkb::Device& dev, const std::vector<uint32_t>& ids_host) {
  std::vector<uint32_t> wide(kIds * kHidden);
  for (size_t i = 0; i < kIds; ++i) {
    std::fill(wide.begin() + i * kHidden, wide.begin() + (i + 1) * kHidden, ids_host[i]);
  }
  const double bytes = kIds * kHidden * (3.0 * sizeof(float) + sizeof(uint32_t));
  const auto sets = index_sets<float>(dev, bytes);
  auto ids = dev.upload(wide);
  const auto cfg = bench::candle_grid(kHidden);
  const hkb::Function fn = bench::function(dev, "sa_u32_f32");
  const double s = bench::time_sets(
      dev, sets.size(),
      [&](size_t i) {
        hkb::LaunchArgs args;
        args.arg(ids.ptr()).arg(sets[i].rows.ptr()).arg(sets[i].table.ptr());
        args.arg(size_t{1}).arg(kIds).arg(kVocab).arg(kHidden);
        fn.launch(cfg, args);
      },
      5, 5);
  return {"sa_u32_f32 32000x4096 += 8192 rows", bytes, s};
}

bench::Row gather_row(const hkb::Device& dev, const std::vector<int64_t>& ids_host) {
  constexpr size_t kSide = 8192, numel = kSide * kSide;
  struct Set {
    hkb::DeviceBuffer<float> src, out;
  };
  const double bytes = numel * (sizeof(int64_t) + 2 * sizeof(float));
  const auto sets = bench::make_sets<Set>(bytes, [&] {
    Set s{dev.alloc<float>(numel), dev.alloc<float>(numel)};
    bench::fill(dev, s.src, 0x3C);
    return s;
  });
  auto ids = dev.upload(ids_host);
  const auto cfg = bench::candle_grid(numel);
  const hkb::Function fn = bench::function(dev, "gather_i64_f32");
  const double s = bench::time_sets(dev, sets.size(), [&](size_t i) {
    hkb::LaunchArgs args;
    args.arg(numel).arg(ids.ptr()).arg(sets[i].src.ptr()).arg(sets[i].out.ptr());
    args.arg(kSide).arg(kSide).arg(kSide).arg(size_t{1});
    fn.launch(cfg, args);
  });
  return {"gather_i64_f32 [8192,8192] along the last dim", bytes, s};
}

}  // namespace

int main() {
  return bench::run("hkb_bench_indexing", [](const hkb::Device& dev, bench::Report& report) {
    std::mt19937_64 rng(42);
    std::vector<uint32_t> ids32(kIds);
    for (auto& id : ids32) id = static_cast<uint32_t>(rng() % kVocab);
    const std::vector<int64_t> ids64(ids32.begin(), ids32.end());
    report.section("INDEXING");
    report.add(index_select_row<uint32_t, float>(dev, "is_u32_f32", ids32, false));
    report.add(index_select_row<uint32_t, float>(dev, "is_u32_f32", ids32, true));
    report.add(index_select_row<int64_t, float>(dev, "is_i64_f32", ids64, false));
    report.add(index_select_row<uint32_t, hkb::bf16>(dev, "is_u32_bf16", ids32, false));
    report.add(index_select_row<uint32_t, hkb::bf16>(dev, "is_u32_bf16", ids32, true));
    report.add(index_add_row<uint32_t, float>(dev, "ia_u32_f32", ids32));
    report.add(scatter_add_row(dev, ids32));
    std::vector<int64_t> gather_ids(size_t{8192} * 8192);
    for (auto& id : gather_ids) id = static_cast<int64_t>(rng() % 8192);
    report.add(gather_row(dev, gather_ids));
  });
}
