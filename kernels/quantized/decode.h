// The decoding loop shared by dequantize and get_rows: `rows` output rows of n_vals values, each
// decoded from a row of blocks. Busy threads step over the (row, unit) pairs of the job (8 values
// a unit), consecutive threads on consecutive units so that a wave's stores are one contiguous
// run; each loads kUnitsInFlight units before decoding the first. f32 rows of the 32-value
// formats take units of two quads instead (decode_quad_rows), so that each store of a wave
// covers whole cache lines.
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

// The keys of the U units from cursor d on (0 past the last row): a round's rows.
template <int U, typename I, typename RowSrc>
HKB_DEVICE void keys_from(Cursor<I> d, I rows, const RowSrc& row_src, uint32_t (&key)[U]) {
#pragma unroll
  for (int j = 0; j < U; ++j) {
    key[j] = d.row < rows ? row_src.key(d.row) : 0u;
    d.next();
  }
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
  uint32_t key[U];
  if (kAhead) keys_from(c, rows, row_src, key);
  while (c.row < rows) {
    if (!kAhead) keys_from(c, rows, row_src, key);
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
    if (kAhead) keys_from(c, rows, row_src, key);
#pragma unroll
    for (int j = 0; j < U; ++j) {
      if (out[j] == nullptr) break;
      float v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      if (block[j] != nullptr) F::decode(raw[j], part[j], v);
      store8(out[j], v, left[j], vec);
    }
  }
}

// f32 rows of whole 256-value groups of a format with quads (blocks.h): unit (row, col) is the
// quads at values 256 g + 4 i and 256 g + 128 + 4 i of the row (g = col / 32, i = col % 32), so the
// 32 consecutive units of a wave's lanes store 512 contiguous bytes an instruction: whole cache
// lines, where a unit of 8 consecutive values leaves every line half written by each store (half
// the bytes a write request). Same values, keys and rounds as decode_rows_in.
template <typename F, int A, typename I, typename RowSrc>
HKB_DEVICE void decode_quad_rows(Busy b, uint64_t rows64, uint64_t n_vals64, const RowSrc& row_src,
                                 float* dst) {
  constexpr int U = hkb::tuning::kQuantUnitsInFlight;
  constexpr bool kAhead = hkb::tuning::kQuantIdsAhead && RowSrc::kLoads;
  constexpr uint32_t kHalfBlocks = 128 / F::kValues;  // blocks between a unit's two quads
  const I rows = static_cast<I>(rows64), n_vals = static_cast<I>(n_vals64);
  Cursor<I> c(b.first, b.step, n_vals64 / 8);
  uint32_t key[U];
  if (kAhead) keys_from(c, rows, row_src, key);
  while (c.row < rows) {
    if (!kAhead) keys_from(c, rows, row_src, key);
    float* out[U];
    const uint8_t* block[U];
    uint32_t quad[U];
    typename F::Quad raw[U][2];
#pragma unroll
    for (int j = 0; j < U; ++j) {
      out[j] = nullptr, block[j] = nullptr, quad[j] = 0, raw[j][0] = {}, raw[j][1] = {};
      if (c.row < rows) {
        const I v = 256 * (c.col / 32) + 4 * (c.col % 32);  // the first quad's value in the row
        out[j] = dst + c.row * n_vals + v;
        quad[j] = static_cast<uint32_t>((v / 4) % (F::kValues / 4));
        const uint8_t* src = row_src.at(key[j]);
        if (src != nullptr) block[j] = src + (v / F::kValues) * F::kBytes;
      }
      c.next();
    }
#pragma unroll
    for (int j = 0; j < U; ++j) {
      if (block[j] == nullptr) continue;
      raw[j][0] = F::template load_quad<A>(block[j], quad[j]);
      raw[j][1] = F::template load_quad<A>(block[j] + kHalfBlocks * F::kBytes, quad[j]);
    }
    if (kAhead) keys_from(c, rows, row_src, key);
#pragma unroll
    for (int j = 0; j < U; ++j) {
      if (out[j] == nullptr) break;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float v[4] = {0, 0, 0, 0};
        if (block[j] != nullptr) F::decode_quad(raw[j][h], quad[j], v);
        *reinterpret_cast<float4*>(out[j] + 128 * h) = make_float4(v[0], v[1], v[2], v[3]);
      }
    }
  }
}

template <typename F, int A, typename TO, typename RowSrc>
HKB_DEVICE void decode_rows(Busy b, uint64_t rows, uint64_t n_vals, const RowSrc& row_src,
                            TO* dst) {
  if (rows == 0 || n_vals == 0) return;
  constexpr uint64_t kLimit = 1ull << 31;
  const bool index32 =
      hkb::tuning::kQuantIndex32 && rows < kLimit && n_vals < kLimit && rows * n_vals < kLimit;
  if constexpr (has_quads<F>::value && std::is_same<TO, float>::value) {
    if (hkb::tuning::kQuantQuadRows && n_vals % 256 == 0 && rows_vectorizable(dst, n_vals)) {
      if (index32) {
        decode_quad_rows<F, A, uint32_t>(b, rows, n_vals, row_src, dst);
      } else {
        decode_quad_rows<F, A, uint64_t>(b, rows, n_vals, row_src, dst);
      }
      return;
    }
  }
  if (index32) {
    decode_rows_in<F, A, uint32_t>(b, rows, n_vals, row_src, dst);
  } else {
    decode_rows_in<F, A, uint64_t>(b, rows, n_vals, row_src, dst);
  }
}

}  // namespace hkb::quant
