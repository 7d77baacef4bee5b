// Sort slots: a value and its column combined into one value whose unsigned order is the sort's
// order (the contract of kernels/sort.hip), so that a compare-exchange is one unsigned compare.
// 1- and 2-byte dtypes: a 16-bit key above a 16-bit column in 32 bits; 4-byte dtypes: a 32-bit key
// above the column in 64 bits; 8-byte dtypes: a 64-bit key and the column side by side (Wide).
// A descending sort complements the key, so every network sorts ascending. Padding slots carry the
// all-ones key and their own slot number as the column: above every real slot, since a real key
// equal to all ones (u32 0xFFFFFFFF ascending) has a smaller column.
#pragma once

#include "common/dtypes.h"

namespace {

// Order-preserving keys: unsigned order of the keys is the contract's order of the values. Floats
// take their order keys (dtypes.h) with the sign bit flipped, after every NaN becomes the positive
// quiet NaN (above +inf, all NaNs equal) and -0.0 becomes +0.0.
HKB_DEVICE uint32_t sort_key(float v) {
  uint32_t u = hkb::float_bits(v);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) u = 0x7FC00000u;
  if (u == 0x80000000u) u = 0;
  return static_cast<uint32_t>(hkb::float_order_key(hkb::bits_float(u))) ^ 0x80000000u;
}
HKB_DEVICE uint64_t sort_key(double v) {
  uint64_t u = hkb::double_bits(v);
  if ((u & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull) u = 0x7FF8000000000000ull;
  if (u == 0x8000000000000000ull) u = 0;
  return (u & 0x8000000000000000ull) != 0 ? ~u : (u | 0x8000000000000000ull);
}
// 16-bit floats: `nan_above` is the largest non-NaN magnitude (+inf), `quiet` the canonical NaN.
HKB_DEVICE uint32_t half_sort_key(uint32_t h, uint32_t inf, uint32_t quiet) {
  if ((h & 0x7FFFu) > inf) h = quiet;
  if (h == 0x8000u) h = 0;
  return (static_cast<uint32_t>(hkb::half_order_key(static_cast<uint16_t>(h))) ^ 0x8000u) & 0xFFFFu;
}
HKB_DEVICE uint32_t sort_key(hkb::f16 v) {
  return half_sort_key(v.bits, 0x7C00u, 0x7E00u);
}
HKB_DEVICE uint32_t sort_key(hkb::bf16 v) {
  return half_sort_key(v.bits, 0x7F80u, 0x7FC0u);
}
HKB_DEVICE uint32_t sort_key(uint8_t v) {
  return v;
}
HKB_DEVICE uint32_t sort_key(uint32_t v) {
  return v;
}
HKB_DEVICE uint64_t sort_key(int64_t v) {
  return static_cast<uint64_t>(v) ^ 0x8000000000000000ull;
}

struct Wide {
  uint64_t key;
  uint32_t col;
};

HKB_DEVICE bool slot_less(uint32_t a, uint32_t b) {
  return a < b;
}
HKB_DEVICE bool slot_less(uint64_t a, uint64_t b) {
  return a < b;
}
HKB_DEVICE bool slot_less(const Wide& a, const Wide& b) {
  return a.key != b.key ? a.key < b.key : a.col < b.col;
}

// A slot as 32-bit words, for shuffles and for shared memory of 4 bytes a column.
template <typename S>
struct SlotWords;
template <>
struct SlotWords<uint32_t> {
  static constexpr int kCount = 1;
  static HKB_DEVICE uint32_t get(uint32_t s, int) { return s; }
  static HKB_DEVICE void set(uint32_t& s, int, uint32_t w) { s = w; }
};
template <>
struct SlotWords<uint64_t> {
  static constexpr int kCount = 2;
  static HKB_DEVICE uint32_t get(uint64_t s, int i) {
    return static_cast<uint32_t>(i == 0 ? s : s >> 32);
  }
  static HKB_DEVICE void set(uint64_t& s, int i, uint32_t w) {
    s = i == 0 ? ((s & 0xFFFFFFFF00000000ull) | w) : ((s & 0xFFFFFFFFull) | uint64_t{w} << 32);
  }
};
template <>
struct SlotWords<Wide> {
  static constexpr int kCount = 3;
  static HKB_DEVICE uint32_t get(const Wide& s, int i) {
    return i == 2 ? s.col : static_cast<uint32_t>(i == 0 ? s.key : s.key >> 32);
  }
  static HKB_DEVICE void set(Wide& s, int i, uint32_t w) {
    if (i == 2) {
      s.col = w;
    } else {
      SlotWords<uint64_t>::set(s.key, i, w);
    }
  }
};

// The slot type of a dtype (by its size), how a (value, column) pair and a padding slot become
// one, and the column a slot carries.
template <size_t Bytes>
struct SlotBySize {
  using type = uint32_t;
};
template <>
struct SlotBySize<4> {
  using type = uint64_t;
};
template <>
struct SlotBySize<8> {
  using type = Wide;
};
template <typename T>
using slot_t = typename SlotBySize<sizeof(T)>::type;

template <bool Ascending>
HKB_DEVICE void make_slot(uint32_t& s, uint32_t key, uint32_t col) {
  s = ((Ascending ? key : ~key) << 16) | col;
}
template <bool Ascending>
HKB_DEVICE void make_slot(uint64_t& s, uint32_t key, uint32_t col) {
  s = (uint64_t{Ascending ? key : ~key} << 32) | col;
}
template <bool Ascending>
HKB_DEVICE void make_slot(Wide& s, uint64_t key, uint32_t col) {
  s = Wide{Ascending ? key : ~key, col};
}
HKB_DEVICE void padding_slot(uint32_t& s, uint32_t col) {
  s = 0xFFFF0000u | col;
}
HKB_DEVICE void padding_slot(uint64_t& s, uint32_t col) {
  s = 0xFFFFFFFF00000000ull | col;
}
HKB_DEVICE void padding_slot(Wide& s, uint32_t col) {
  s = Wide{~0ull, col};
}
HKB_DEVICE uint32_t slot_column(uint32_t s) {
  return s & 0xFFFFu;
}
HKB_DEVICE uint32_t slot_column(uint64_t s) {
  return static_cast<uint32_t>(s);
}
HKB_DEVICE uint32_t slot_column(const Wide& s) {
  return s.col;
}

}  // namespace
