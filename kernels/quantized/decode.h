// The decoding loop shared by dequantize and get_rows: `rows` output rows of n_vals values, each
// decoded from a row of blocks. Busy threads step over the (row, unit) pairs of the job (8 values
// a unit), consecutive threads on consecutive units so that a wave's stores are one contiguous
// run; each loads kUnitsInFlight units before decoding the first.
#pragma once

#include "common/dtypes.h"
#include "quantized/blocks.h"
#include "quantized/split.h"

namespace hkb::quant {

// Unquantized rows (get_rows_f32/f16/bf16) in the same shape: a unit is 8 elements. A = 16: a
// whole unit is one or two 16-byte loads; otherwise, and for the last unit of a row that is not a
// multiple of 8, element by element (never past the row).
template <typename T>
struct Plain {
  static constexpr int kValues = 8, kBytes = 8 * sizeof(T), kAlign = 16;
  struct Raw {
    T v[8];
  };
  template <int A>
  static HKB_DEVICE Raw load_part(const uint8_t* b, uint64_t left) {
    Raw r;
    const T* p = reinterpret_cast<const T*>(b);
    if (A >= 16 && left >= 8) {
      constexpr int kVec = 16 / sizeof(T);
#pragma unroll
      for (int c = 0; c < 8 / kVec; ++c) {
        const uint4 w = reinterpret_cast<const uint4*>(p)[c];
        __builtin_memcpy(&r.v[c * kVec], &w, 16);
      }
    } else {
#pragma unroll
      for (int i = 0; i < 8; ++i) r.v[i] = static_cast<uint64_t>(i) < left ? p[i] : T{};
    }
    return r;
  }
  static HKB_DEVICE void decode(const Raw& r, uint32_t, float (&v)[8]) {
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = to_float(r.v[i]);
  }
};
template <typename F>
struct is_plain {
  static constexpr bool value = false;
};
template <typename T>
struct is_plain<Plain<T>> {
  static constexpr bool value = true;
};

// 8 values to p: as 16-byte stores when `vec` (p 16-byte aligned) and the unit is whole, else
// element by element up to `left`.
template <typename TO>
HKB_DEVICE void store8(TO* p, const float (&v)[8], uint64_t left, bool vec) {
  if (vec && left >= 8) {
    if constexpr (sizeof(TO) == 4) {
      reinterpret_cast<float4*>(p)[0] = make_float4(v[0], v[1], v[2], v[3]);
      reinterpret_cast<float4*>(p)[1] = make_float4(v[4], v[5], v[6], v[7]);
    } else {
      uint32_t w[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        w[i] = float_to_half_bits(v[2 * i]) |
               (static_cast<uint32_t>(float_to_half_bits(v[2 * i + 1])) << 16);
      }
      *reinterpret_cast<uint4*>(p) = make_uint4(w[0], w[1], w[2], w[3]);
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    if (static_cast<uint64_t>(i) < left) p[i] = from_float<TO>(v[i]);
  }
}

// Whether every unit of every output row starts 16-byte aligned.
template <typename TO>
HKB_DEVICE bool rows_vectorizable(const TO* dst, uint64_t n_vals) {
  return (reinterpret_cast<uintptr_t>(dst) & 15u) == 0 && n_vals % (16 / sizeof(TO)) == 0;
}

// Output row r (r < rows) is dst + r * n_vals: values v < n_vals of the row whose blocks start at
// row_src.at(row_src.key(r)) (nullptr: a row of zeros). A: the alignment every block start has (see
// blocks.h). Where a row's key is a load (RowSrc::kLoads: get_rows' ids) of a quantized table and
// kQuantIdsAhead, a round loads the next round's keys while its own data is in flight, so it waits
// for one load instead of a key load and then a data load; otherwise every unit's key is asked for
// before any unit's data, so the U key loads are in flight together. Plain tables keep the latter:
// their held keys cost a resident idle block of candle's grid per SM, which bounds them.
// I: the type of the unit positions and output offsets (uint32_t: rows * n_vals below 2^31).
template <typename F, int A, typename I, typename TO, typename RowSrc>
HKB_DEVICE void decode_rows_in(Busy b, uint64_t rows64, uint64_t n_vals64, const RowSrc& row_src,
                               TO* dst) {
  constexpr int U = hkb::tuning::kQuantUnitsInFlight;
  constexpr bool kAhead = hkb::tuning::kQuantIdsAhead && RowSrc::kLoads && !is_plain<F>::value;
  constexpr uint32_t kUnits = F::kValues / 8;  // units of a block: 4 or 32
  const I rows = static_cast<I>(rows64), n_vals = static_cast<I>(n_vals64);
  const bool vec = rows_vectorizable(dst, n_vals64);
  Cursor<I> c(b.first, b.step, (n_vals64 + 7) / 8);
  // The keys of the round that starts at cursor d.
  const auto keys_of = [&](Cursor<I> d, uint32_t(&key)[U]) {
#pragma unroll
    for (int j = 0; j < U; ++j) {
      key[j] = d.row < rows ? row_src.key(d.row) : 0u;
      d.next();
    }
  };
  uint32_t key[U];
  if (kAhead) keys_of(c, key);
  while (c.row < rows) {
    if (!kAhead) keys_of(c, key);
    TO* out[U];
    const uint8_t* block[U];
    uint32_t part[U], left[U];
    typename F::Raw raw[U];
#pragma unroll
    for (int j = 0; j < U; ++j) {
      out[j] = nullptr, block[j] = nullptr, part[j] = 0, left[j] = 0, raw[j] = {};
      if (c.row < rows) {
        const I rest = n_vals - 8 * c.col;
        out[j] = dst + c.row * n_vals + 8 * c.col;
        left[j] = rest < 8 ? static_cast<uint32_t>(rest) : 8u;
        part[j] = static_cast<uint32_t>(c.col % kUnits);
        const uint8_t* src = row_src.at(key[j]);
        if (src != nullptr) block[j] = src + (c.col / kUnits) * F::kBytes;
      }
      c.next();
    }
#pragma unroll
    for (int j = 0; j < U; ++j) {
      if (block[j] == nullptr) continue;
      if constexpr (is_plain<F>::value) {
        raw[j] = F::template load_part<A>(block[j], left[j]);
      } else {
        raw[j] = F::template load<A>(block[j], part[j]);
      }
    }
    if (kAhead) keys_of(c, key);
#pragma unroll
    for (int j = 0; j < U; ++j) {
      if (out[j] == nullptr) break;
      float v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      if (block[j] != nullptr) F::decode(raw[j], part[j], v);
      store8(out[j], v, left[j], vec);
    }
  }
}

template <typename F, int A, typename TO, typename RowSrc>
HKB_DEVICE void decode_rows(Busy b, uint64_t rows, uint64_t n_vals, const RowSrc& row_src,
                            TO* dst) {
  if (rows == 0 || n_vals == 0) return;
  constexpr uint64_t kLimit = 1ull << 31;
  if (hkb::tuning::kQuantIndex32 && rows < kLimit && n_vals < kLimit && rows * n_vals < kLimit) {
    decode_rows_in<F, A, uint32_t>(b, rows, n_vals, row_src, dst);
  } else {
    decode_rows_in<F, A, uint64_t>(b, rows, n_vals, row_src, dst);
  }
}

}  // namespace hkb::quant
