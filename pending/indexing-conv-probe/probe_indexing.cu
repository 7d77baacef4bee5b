#include "indexing_variant.hip"
#include "common.cuh"
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
  cudaMemset(tab, 0x3C, vocab * hidden * 4);
  double us = time_us([&] {
    is_u32_f32<<<cgrid(numel), 1024>>>(numel, 1, d_info, d_ids, (const float*)tab, (float*)out, 1,
                                       vocab, nid, hidden);
  });
  row("is_u32_f32 candle grid", 2.0 * numel * 4, us, cbw);
  us = time_us([&] {
    is_u32_bf16<<<cgrid(numel), 1024>>>(numel, 1, d_info, d_ids, (const hkb::bf16*)tab,
                                        (hkb::bf16*)out, 1, vocab, nid, hidden);
  });
  row("is_u32_bf16 candle grid", 2.0 * numel * 2, us, cbw);
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
