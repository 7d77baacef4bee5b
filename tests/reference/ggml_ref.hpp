// CPU reference for every GGML block format candle's QUANTIZED module uses (the API agreed in
// notes/QUANT_API.md): ggml's reference quantizers, exact dequantization, candle's quantize_q8_1,
// and the q8_1 dot product of the MMVQ kernels. Header-only, C++17, standard library only.
// Bad arguments (a count that is not a whole number of blocks, non-finite input, a type that
// has no such operation) throw std::invalid_argument.
// Quantized bytes are ggml's current reference rules (candle's CPU port uses older fits for
// q2_K, q4_K, q5_K and q6_K, so its bytes differ there). Dequantized values are exact: each is a
// half times small integers, or a difference of two such products, which double holds unless
// the two products' exponents lie more than ~30 apart (then it is correctly rounded instead).
#pragma once

#include "ggml_ref_dot.hpp"
#include "ggml_ref_kquants.hpp"
#include "ggml_ref_legacy.hpp"
#include "ggml_ref_types.hpp"

namespace ref::ggml {

namespace detail {

using QuantizeBlock = void (*)(const float*, uint8_t*);
using DequantizeBlock = void (*)(const uint8_t*, double*);
using DotBlock = double (*)(const uint8_t*, const uint8_t*);

struct Codec {
  QuantizeBlock quantize;
  DequantizeBlock dequantize;
  DotBlock dot;  // null: not a weight format of the q8_1 dot products
};

inline const Codec& codec(QType t) {
  static const Codec table[12] = {
      {quantize_q4_0, dequantize_q4_0, dot_q4_0}, {quantize_q4_1, dequantize_q4_1, dot_q4_1},
      {quantize_q5_0, dequantize_q5_0, dot_q5_0}, {quantize_q5_1, dequantize_q5_1, dot_q5_1},
      {quantize_q8_0, dequantize_q8_0, dot_q8_0}, {quantize_q8_1, dequantize_q8_1, nullptr},
      {quantize_q2_K, dequantize_q2_K, dot_q2_K}, {quantize_q3_K, dequantize_q3_K, dot_q3_K},
      {quantize_q4_K, dequantize_q4_K, dot_q4_K}, {quantize_q5_K, dequantize_q5_K, dot_q5_K},
      {quantize_q6_K, dequantize_q6_K, dot_q6_K}, {quantize_q8_K, dequantize_q8_K, nullptr}};
  info(t);  // rejects an out-of-range value
  return table[static_cast<size_t>(t)];
}

inline size_t whole_blocks(QType t, size_t n, const char* who) {
  const QTypeInfo& i = info(t);
  require(n % i.block_values == 0, std::string(who) + ": " + std::to_string(n) +
                                       " values are not a whole number of " + i.name + " blocks (" +
                                       std::to_string(i.block_values) + " values each)");
  return n / i.block_values;
}

}  // namespace detail

// Bytes of one row of k values of type t (k a multiple of block_values).
inline size_t row_bytes(QType t, size_t k) {
  return detail::whole_blocks(t, k, "row_bytes") * info(t).block_bytes;
}

// candle's k_padded for quantize_q8_1: k rounded up to a multiple of 512 (MATRIX_ROW_PADDING).
inline size_t q8_1_padded(size_t k) {
  return (k + 511) / 512 * 512;
}

// ggml's reference quantization (quantize_row_*_ref rules) of n values, n a multiple of
// block_values. Returns n / block_values blocks of block_bytes bytes.
inline std::vector<uint8_t> quantize(QType t, const float* x, size_t n) {
  const size_t blocks = detail::whole_blocks(t, n, "quantize");
  require(x != nullptr || n == 0, "quantize: null input");
  require_finite(x, n, "quantize");
  const QTypeInfo& i = info(t);
  const detail::QuantizeBlock fn = detail::codec(t).quantize;
  std::vector<uint8_t> out(blocks * i.block_bytes);
  for_blocks(blocks, 4096 / i.block_values * 16, [&](size_t first, size_t last) {
    for (size_t b = first; b < last; ++b)
      fn(x + b * i.block_values, out.data() + b * i.block_bytes);
  });
  return out;
}

// The exact value of every element of n / block_values blocks.
inline std::vector<double> dequantize(QType t, const uint8_t* blocks, size_t n) {
  const size_t count = detail::whole_blocks(t, n, "dequantize");
  require(blocks != nullptr || n == 0, "dequantize: null input");
  const QTypeInfo& i = info(t);
  const detail::DequantizeBlock fn = detail::codec(t).dequantize;
  std::vector<double> out(n);
  for_blocks(count, 4096 / i.block_values * 16, [&](size_t first, size_t last) {
    for (size_t b = first; b < last; ++b)
      fn(blocks + b * i.block_bytes, out.data() + b * i.block_values);
  });
  return out;
}

// candle's quantize_q8_1 kernel: `rows` rows of kx floats, each written as kx_padded / 32 blocks
// (values past kx are 0). Per block: amax = max |x|, d = amax / 127, q = amax == 0 ? 0 :
// roundf(x / d), s = float sum of the 32 inputs in index order; d and s stored as half. The
// exact per-block sums go to exact_sums (rows * kx_padded / 32 of them) when it is non-null.
inline std::vector<uint8_t> quantize_q8_1_rows(const float* x, size_t rows, size_t kx,
                                               size_t kx_padded,
                                               std::vector<double>* exact_sums = nullptr) {
  require(kx_padded % 32 == 0, "quantize_q8_1_rows: kx_padded " + std::to_string(kx_padded) +
                                   " is not a multiple of 32");
  require(kx <= kx_padded, "quantize_q8_1_rows: kx " + std::to_string(kx) + " exceeds kx_padded " +
                               std::to_string(kx_padded));
  require(x != nullptr || rows * kx == 0, "quantize_q8_1_rows: null input");
  require_finite(x, rows * kx, "quantize_q8_1_rows");
  const size_t per_row = kx_padded / 32;
  std::vector<uint8_t> out(rows * per_row * 36);
  if (exact_sums != nullptr) exact_sums->assign(rows * per_row, 0.0);
  for_blocks(rows * per_row, 2048, [&](size_t first, size_t last) {
    float block[32];
    for (size_t b = first; b < last; ++b) {
      const size_t row = b / per_row, col = (b % per_row) * 32;
      for (size_t j = 0; j < 32; ++j) block[j] = col + j < kx ? x[row * kx + col + j] : 0.0f;
      const double exact = detail::quantize_q8_1_candle(block, out.data() + b * 36);
      if (exact_sums != nullptr) (*exact_sums)[b] = exact;
    }
  });
  return out;
}

namespace detail {

inline double dot_row(QType t, const uint8_t* weight_row, const uint8_t* q8_1_row, size_t k,
                      DotBlock fn, const char* who) {
  require(fn != nullptr, std::string(who) + ": " + info(t).name + " is not a weight format");
  const size_t blocks = whole_blocks(t, k, who);
  require((weight_row != nullptr && q8_1_row != nullptr) || k == 0,
          std::string(who) + ": null input");
  const QTypeInfo& i = info(t);
  const size_t act_per_block = i.block_values / 32;
  double sum = 0.0;
  for (size_t b = 0; b < blocks; ++b) {
    sum += fn(weight_row + b * i.block_bytes, q8_1_row + b * act_per_block * 36);
  }
  return sum;
}

}  // namespace detail

// One weight row (k values of a weight format) times one q8_1 row (at least k / 32 blocks), as
// the MMVQ kernels compute it: exact integer sums, the stored scales, products and sum in double
// (per-format formulas in ggml_ref_dot.hpp).
inline double dot_q8_1(QType t, const uint8_t* weight_row, const uint8_t* q8_1_row, size_t k) {
  return detail::dot_row(t, weight_row, q8_1_row, k, detail::codec(t).dot, "dot_q8_1");
}

// The same product as the MMQ kernels (mul_mat_*) compute it: identical to dot_q8_1 except for
// q4_K and q5_K, whose min term uses the q8_1 blocks' stored sums s_a (dmin Σ_g m_g s_a).
inline double dot_q8_1_mmq(QType t, const uint8_t* weight_row, const uint8_t* q8_1_row, size_t k) {
  const detail::DotBlock fn = t == QType::q4_K   ? detail::dot_q4_K_mmq
                              : t == QType::q5_K ? detail::dot_q5_K_mmq
                                                 : detail::codec(t).dot;
  return detail::dot_row(t, weight_row, q8_1_row, k, fn, "dot_q8_1_mmq");
}

}  // namespace ref::ggml
