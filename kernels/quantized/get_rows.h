// get_rows_<format>: dst[i, :] = the ne00 values of table row ids[i], as f32. The number of ids is
// the grid's x dimension (candle passes no count: grid (n_ids, ...)); the y and z dimensions and
// the block size only decide how many threads there are (candle: (n_ids, min(ceil(ne00 / 512),
// 65535)) x 256 for the 32-value formats, (n_ids, ne00 / 256) x 32 or 64 for the K-quants,
// (n_ids, min(ceil(ne00 / 256), 65535)) x 256 for f32/f16/bf16). dst rows are ne00 values apart.
// Table rows: quantized formats start nb01 bytes apart; f32/f16/bf16 rows start ne00 elements
// apart (candle passes nb01 and ignores it there, and so does hkb).
// - ne00 need not be a multiple of the block: each row writes exactly ne00 values, reading the
//   ceil(ne00 / block values) blocks that hold them. ne00 <= 0 writes nothing.
// - Ids: the ABI passes no row count, so an id past the table cannot be told from a valid one
//   and is read as a row (the caller's responsibility, as in candle). The index sentinel of the
//   indexing family, 0xFFFFFFFF, is recognised: its output row is all zeros and nothing is read.
// - A table whose blocks are not at their format's alignment (src0 or nb01 odd) is read byte by
//   byte: slower, same values.
// - Offsets are 64-bit: ids[i] * nb01 and i * ne00 never wrap.
#pragma once

#include "quantized/decode.h"

namespace hkb::quant {

constexpr uint32_t kNoRow = 0xFFFFFFFFu;

struct IdRow {
  static constexpr bool kLoads = true;
  const uint8_t* table;
  const uint32_t* ids;
  uint64_t stride;  // bytes
  HKB_DEVICE uint32_t key(uint64_t r) const { return ids[r]; }
  HKB_DEVICE const uint8_t* at(uint32_t id) const {
    return id == kNoRow ? nullptr : table + id * stride;
  }
};

template <typename F>
HKB_DEVICE void get_rows(const void* src0, const uint32_t* ids, float* dst, int64_t ne00,
                         uint64_t row_bytes) {
  if (idle_block()) return;
  if (ne00 <= 0) return;
  const Busy b = busy_range();
  const uint8_t* table = static_cast<const uint8_t*>(src0);
  const IdRow rows{table, ids, row_bytes};
  const uint64_t n = static_cast<uint64_t>(ne00);
  const bool aligned = ((reinterpret_cast<uintptr_t>(table) | row_bytes) & (F::kAlign - 1)) == 0;
  if (aligned) {
    decode_rows<F, F::kAlign>(b, gridDim.x, n, rows, dst);
  } else {
    decode_rows<F, 1>(b, gridDim.x, n, rows, dst);
  }
}

// Quantized tables: rows nb01 bytes apart.
template <typename F>
HKB_DEVICE void get_rows_blocks(const void* src0, const uint32_t* ids, float* dst, int64_t ne00,
                                size_t nb01) {
  get_rows<F>(src0, ids, dst, ne00, nb01);
}

// Unquantized tables: rows ne00 elements apart.
template <typename T>
HKB_DEVICE void get_rows_plain(const T* src0, const uint32_t* ids, float* dst, int64_t ne00) {
  get_rows<Plain<T>>(src0, ids, dst, ne00, ne00 > 0 ? static_cast<uint64_t>(ne00) * sizeof(T) : 0);
}

}  // namespace hkb::quant
