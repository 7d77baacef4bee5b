// INDEXING throughput under candle's launch geometry. The headline case is an embedding lookup:
// index_select of 8192 rows from a 32000 x 4096 table (candle: left 1, ids_dim 8192, right 4096,
// for_num_elems over the 2^25 outputs). Bytes counted: the rows read plus the rows written (ids
// are noise). A second f32 row launches one thread per 16-byte word instead of one per element,
// to show what candle's grid (three quarters of its threads idle here) costs. index_add is the
// embedding's backward shape: dst rows are read and written once per id, src read once.
#include "bench_common.hpp"

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr size_t kVocab = 32000;
constexpr size_t kHidden = 4096;
constexpr size_t kIds = 8192;

template <typename T>
void fill_bytes(const hkb::Device& dev, const hkb::DeviceBuffer<T>& buf, uint8_t v) {
  hkb::check(hkb_memset_d8(dev.get(), buf.ptr(), v, buf.size() * sizeof(T)));
}

template <typename I, typename T>
bench::Row index_select_row(const hkb::Device& dev, const std::string& kernel,
                            const std::vector<I>& ids_host, bool word_per_thread) {
  auto table = dev.alloc<T>(kVocab * kHidden);
  fill_bytes(dev, table, 0x3C);
  auto ids = dev.upload(ids_host);
  auto info = dev.upload(std::vector<size_t>{kIds, 1});
  const size_t numel = kIds * kHidden;
  auto out = dev.alloc<T>(numel);
  hkb::LaunchArgs args;
  args.arg(numel)
      .arg(size_t{1})
      .arg(info.ptr())
      .arg(ids.ptr())
      .arg(table.ptr())
      .arg(out.ptr())
      .arg(size_t{1})
      .arg(kVocab)
      .arg(kIds)
      .arg(kHidden);
  hkb::LaunchConfig cfg = hkb::LaunchConfig::for_num_elems(static_cast<uint32_t>(numel));
  if (word_per_thread) {
    const size_t words = numel * sizeof(T) / 16;
    cfg = hkb::LaunchConfig::make(static_cast<uint32_t>((words + 1023) / 1024), 1, 1, 1024, 1, 1);
  }
  const hkb::Function fn = dev.function(kernel);
  const double s = bench::time_median(dev, [&] { fn.launch(cfg, args); });
  const std::string geometry = word_per_thread ? " (thread per 16 B)" : " (candle grid)";
  return {kernel + " 32000x4096, 8192 ids" + geometry, 2.0 * numel * sizeof(T), s};
}

template <typename I, typename T>
bench::Row index_add_row(const hkb::Device& dev, const std::string& kernel,
                         const std::vector<I>& ids_host) {
  auto dst = dev.alloc<T>(kVocab * kHidden);
  fill_bytes(dev, dst, 0);
  auto src = dev.alloc<T>(kIds * kHidden);
  fill_bytes(dev, src, 0x3C);
  auto ids = dev.upload(ids_host);
  hkb::LaunchArgs args;
  args.arg(ids.ptr())
      .arg(kIds)
      .arg(src.ptr())
      .arg(dst.ptr())
      .arg(size_t{1})
      .arg(kIds)
      .arg(kVocab)
      .arg(kHidden);
  const hkb::LaunchConfig cfg = hkb::LaunchConfig::for_num_elems(static_cast<uint32_t>(kHidden));
  const hkb::Function fn = dev.function(kernel);
  const double s = bench::time_median(
      dev, [&] { fn.launch(cfg, args); }, 5, 5);
  return {kernel + " 32000x4096 += 8192 rows", 3.0 * kIds * kHidden * sizeof(T), s};
}

}  // namespace

int main() {
  int count = 0;
  if (hkb_device_count(&count) != HKB_SUCCESS || count == 0) {
    std::printf("no GPU device: %s\n", hkb_last_error());
    return 0;
  }
  const hkb::Device dev(0);
  std::mt19937_64 rng(42);
  std::vector<uint32_t> ids32(kIds);
  for (auto& id : ids32) id = static_cast<uint32_t>(rng() % kVocab);
  const std::vector<int64_t> ids64(ids32.begin(), ids32.end());

  std::vector<bench::Row> rows;
  rows.push_back(index_select_row<uint32_t, float>(dev, "is_u32_f32", ids32, false));
  rows.push_back(index_select_row<uint32_t, float>(dev, "is_u32_f32", ids32, true));
  rows.push_back(index_select_row<int64_t, float>(dev, "is_i64_f32", ids64, false));
  rows.push_back(index_select_row<uint32_t, hkb::bf16>(dev, "is_u32_bf16", ids32, false));
  rows.push_back(index_select_row<uint32_t, hkb::bf16>(dev, "is_u32_bf16", ids32, true));
  rows.push_back(index_add_row<uint32_t, float>(dev, "ia_u32_f32", ids32));
  bench::print_table("INDEXING", rows, bench::copy_bandwidth(dev, kIds * kHidden * sizeof(float)));
  return 0;
}
