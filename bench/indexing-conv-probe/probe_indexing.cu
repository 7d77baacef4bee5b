#define HKB_INDEXING_PROBE  // only the kernels timed here: the whole module takes minutes to build
#include "indexing_variant.hip"
HKB_INDEX_SELECT(u32, uint32_t, f32, float)
HKB_INDEX_SELECT(u32, uint32_t, bf16, hkb::bf16)
HKB_INDEX_ADD(u32, uint32_t, f32, float)
#include "common.cuh"
#include <cstring>
#include <random>
int main() {
  const size_t vocab = 32000, hidden = 4096, nid = 8192, numel = nid * hidden;
  const double cbw = copy_bw(numel * 4);
  std::vector<uint32_t> ids(nid);
  std::mt19937_64 rng(42);
  for (auto& x : ids) x = rng() % vocab;
  uint32_t* d_ids;
  size_t* d_info;
  void *tab, *out, *src;
  CK(cudaMalloc(&d_ids, nid * 4));
  CK(cudaMemcpy(d_ids, ids.data(), nid * 4, cudaMemcpyHostToDevice));
  size_t info[2] = {nid, 1};
  CK(cudaMalloc(&d_info, 16));
  CK(cudaMemcpy(d_info, info, 16, cudaMemcpyHostToDevice));
  CK(cudaMalloc(&tab, vocab * hidden * 4));
  CK(cudaMalloc(&out, numel * 4));
  CK(cudaMalloc(&src, numel * 4));
  {  // every table word names its row and column, so a wrong gather shows
    std::vector<uint32_t> h(vocab * hidden);
    for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<uint32_t>(i);
    CK(cudaMemcpy(tab, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
  }
  auto check = [&](size_t esize, const char* what) {
    std::vector<uint8_t> got(numel * esize), want(numel * esize);
    CK(cudaMemcpy(got.data(), out, got.size(), cudaMemcpyDeviceToHost));
    std::vector<uint8_t> t(vocab * hidden * 4);
    CK(cudaMemcpy(t.data(), tab, t.size(), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < nid; ++i)
      std::memcpy(&want[i * hidden * esize], &t[ids[i] * hidden * esize], hidden * esize);
    if (got != want) std::printf("%s: WRONG RESULT\n", what);
  };
  double us = time_us([&] {
    is_u32_f32<<<cgrid(numel), 1024>>>(numel, 1, d_info, d_ids, (const float*)tab, (float*)out, 1,
                                       vocab, nid, hidden);
  });
  row("is_u32_f32 candle grid", 2.0 * numel * 4, us, cbw);
  check(4, "is_u32_f32");
  us = time_us([&] {
    is_u32_bf16<<<cgrid(numel), 1024>>>(numel, 1, d_info, d_ids, (const hkb::bf16*)tab,
                                        (hkb::bf16*)out, 1, vocab, nid, hidden);
  });
  row("is_u32_bf16 candle grid", 2.0 * numel * 2, us, cbw);
  check(2, "is_u32_bf16");
  cudaMemset(src, 0x3C, numel * 4);
  us = time_us(
      [&] {
        ia_u32_f32<<<cgrid(hidden), 1024>>>(d_ids, nid, (const float*)src, (float*)tab, 1, nid,
                                            vocab, hidden);
      },
      3, 3);
  row("ia_u32_f32", 3.0 * numel * 4, us, cbw);
  return 0;
}
