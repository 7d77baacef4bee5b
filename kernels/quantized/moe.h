// indexed_moe_forward_<format>_q8_1: for token b < batch and slot t < topk, expert e =
// indices[b * topk + t] and output row o = b * topk + t,
//   all_outputs[o * n + r] = expert e's weight row r (k values) . input row i,
// with i = b when input_dim1 == 1 (one input per token, shared by its experts) and i = o otherwise
// (one input per slot). Inputs are q8_1 rows of k_padded values; experts are n * k values apart.
// candle's geometry: grid (n, batch, topk), block (32, 4): each GPU block is MMVQ's batch-1 row
// product (mmvq.h) over the chosen expert and input, a row a block (two rows a working block, as
// batch-1 MMVQ takes for some formats, is not measured on the MoE grid). Beyond candle: the expert
// stride is n * k / (the format's block values) blocks in 64 bits for every format (candle's q8_0
// kernel steps by QK_K-value blocks and forms n * k in int).
#pragma once

#include "quantized/mmvq.h"

namespace hkb::quant {

template <typename F>
HKB_DEVICE void indexed_moe(const void* __restrict__ all_weights,
                            const void* __restrict__ all_inputs,
                            const unsigned int* __restrict__ indices,
                            float* __restrict__ all_outputs, int n, int k, int topk, int k_padded,
                            int input_dim1) {
  const size_t slot = static_cast<size_t>(blockIdx.y) * topk + blockIdx.z;
  const size_t expert = indices[slot];
  const size_t expert_bytes =
      static_cast<size_t>(n) * static_cast<size_t>(k / F::kValues) * F::kBytes;
  const size_t input = input_dim1 == 1 ? blockIdx.y : slot;
  const size_t input_bytes = static_cast<size_t>(k_padded / 32) * kQ81Bytes;
  mmvq<F, 1, 1>(static_cast<const uint8_t*>(all_weights) + expert * expert_bytes,
                static_cast<const uint8_t*>(all_inputs) + input * input_bytes,
                all_outputs + slot * static_cast<size_t>(n), k, n, k_padded, n);
}

}  // namespace hkb::quant
