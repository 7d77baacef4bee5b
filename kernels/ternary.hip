// TERNARY: where_<cond dtype>_<value dtype>: out[i] = cond[i] != 0 ? t[i] : f[i] over three
// possibly strided / broadcast inputs into a contiguous output. info = [dims, cond strides,
// t strides, f strides] (drivers in common/binary_layout.h).
//
// Semantics:
// - The selected element is copied bit for bit (NaN payloads and -0.0 survive). Both t and f are
//   read for every element (a select, not a branch), so both must be valid for the whole view.
// - candle always passes a real info array (its kernel has no null check); hkb also accepts a null
//   info as "all three contiguous", like the binary ops.
// - Dtypes: candle's conditions u8 u32 i64 with values u8 u32 i64 bf16 f16 f32 f64, and fp8 values
//   (spelled `fp8_e4m3` here) with conditions u8 u32 i16 i32 i64 (26 symbols). hkb fills the
//   grid: every condition of u8 u32 i16 i32 i64 with every value dtype, i16 and i32 included,
//   which candle's Rust side names and candle's kernels lack (24 more).
#include "common/binary_layout.h"
#include "common/dtype_lists.h"

namespace {

// 0xFF in every byte of x that is not zero, 0x00 in the others (no carry crosses a byte: the low
// seven bits of a byte plus 0x7F reach its top bit only when one of them is set).
HKB_DEVICE uint32_t nonzero_bytes(uint32_t x) {
  const uint32_t top = (((x & 0x7F7F7F7Fu) + 0x7F7F7F7Fu) | x) & 0x80808080u;
  return (top >> 7) * 0xFFu;
}

// Bits of a value narrower than 32 bits, repeated over a 32-bit word.
template <typename T>
HKB_DEVICE uint32_t splat_word(T v) {
  if constexpr (sizeof(T) == 1) {
    uint8_t b;
    __builtin_memcpy(&b, &v, 1);
    return b * 0x01010101u;
  } else {
    uint16_t h;
    __builtin_memcpy(&h, &v, 2);
    return h * 0x00010001u;
  }
}

template <typename C, typename T>
struct WhereBody {
  const C* cond;
  const T* on_true;
  const T* on_false;

  template <int W, typename I>
  HKB_DEVICE void store(const I (&off)[3], const I (&stride)[3], T* out) const {
    if (W > 1 && hkb::is_vector_run<W>(cond, off[0], stride[0]) &&
        hkb::is_vector_run<W>(on_true, off[1], stride[1]) &&
        hkb::is_vector_run<W>(on_false, off[2], stride[2])) {
      if constexpr (sizeof(T) < 4 && (W * sizeof(T)) % 16 == 0) {
        select_words<W>(off, stride, out);
      } else {
        C c[W];
        T a[W], b[W], res[W];
        hkb::load_vector_run<W>(cond, off[0], stride[0], c);
        hkb::load_vector_run<W>(on_true, off[1], stride[1], a);
        hkb::load_vector_run<W>(on_false, off[2], stride[2], b);
#pragma unroll
        for (int j = 0; j < W; ++j) res[j] = c[j] != 0 ? a[j] : b[j];
        hkb::store_results<W>(out, res);
      }
    } else {
#pragma unroll
      for (int j = 0; j < W; ++j) {
        const C c = cond[off[0] + j * stride[0]];
        out[j] = c != 0 ? on_true[off[1] + j * stride[1]] : on_false[off[2] + j * stride[2]];
      }
    }
  }

  // Values narrower than 32 bits, W of them a whole number of 16-byte vectors: selected a 32-bit
  // word at a time through a mask, loaded and stored as words, so a pack of 8 or 16 values stays
  // in four registers per operand (as 16-bit or 8-bit elements they took one register each, and
  // where_u8_bf16 needed 64 registers: one 1024-thread block per SM, half the slots that retire
  // candle's idle blocks). u8 conditions are read as words too.
  template <int W, typename I>
  HKB_DEVICE void select_words(const I (&off)[3], const I (&stride)[3], T* out) const {
    constexpr int kBytes = static_cast<int>(sizeof(T));
    constexpr int kWords = W * kBytes / 4;
    constexpr int kPerWord = 4 / kBytes;
    uint32_t aw[kWords], bw[kWords], mask[kWords];
    load_words<W>(on_true, off[1], stride[1], aw);
    load_words<W>(on_false, off[2], stride[2], bw);
    if constexpr (sizeof(C) == 1) {
      // Condition bytes as words (W / 4 of them), each byte 0xFF where the condition holds.
      uint32_t cb[W / 4];
      if (stride[0] == 0) {
        const uint32_t all = cond[off[0]] != 0 ? 0xFFFFFFFFu : 0u;
#pragma unroll
        for (int w = 0; w < W / 4; ++w) cb[w] = all;
      } else {
        uint32_t cw[W / 4];
        hkb::load_run<W / 4>(reinterpret_cast<const uint32_t*>(cond + off[0]), cw);
#pragma unroll
        for (int w = 0; w < W / 4; ++w) cb[w] = nonzero_bytes(cw[w]);
      }
#pragma unroll
      for (int w = 0; w < kWords; ++w) {
        if constexpr (kBytes == 1) {
          mask[w] = cb[w];
        } else {  // 2-byte values: condition bytes 2w and 2w + 1 widened to 16-bit lanes
          const uint32_t sel = (w & 1) ? 0x3322u : 0x1100u;
          mask[w] = __byte_perm(cb[w / 2], 0u, sel);
        }
      }
    } else {
      C c[W];
      hkb::load_vector_run<W>(cond, off[0], stride[0], c);
      constexpr uint32_t kLaneMask = kBytes == 1 ? 0xFFu : 0xFFFFu;
#pragma unroll
      for (int w = 0; w < kWords; ++w) {
        uint32_t m = 0;
#pragma unroll
        for (int j = 0; j < kPerWord; ++j) {
          if (c[w * kPerWord + j] != 0) m |= kLaneMask << (8 * kBytes * j);
        }
        mask[w] = m;
      }
    }
#pragma unroll
    for (int w = 0; w < kWords; ++w) aw[w] = (aw[w] & mask[w]) | (bw[w] & ~mask[w]);
    hkb::store_run<kWords>(reinterpret_cast<uint32_t*>(out), aw);
  }

  // The W values of a vector run (is_vector_run) as W * sizeof(T) / 4 words.
  template <int W, typename I>
  HKB_DEVICE static void load_words(const T* p, I off, I stride, uint32_t (&w)[W * sizeof(T) / 4]) {
    constexpr int kWords = W * static_cast<int>(sizeof(T)) / 4;
    if (stride == 0) {
      const uint32_t x = splat_word(p[off]);
#pragma unroll
      for (int k = 0; k < kWords; ++k) w[k] = x;
    } else {
      hkb::load_run<kWords>(reinterpret_cast<const uint32_t*>(p + off), w);
    }
  }
};

template <typename C, typename T>
__device__ void where(size_t numel, size_t num_dims, const size_t* info, const C* ids, const T* t,
                      const T* f, T* out) {
  constexpr int V = 16 / hkb::max_size<C, T>::value;
  const WhereBody<C, T> body{ids, t, f};
  // Contiguous operands: two packs a unit where the widest operand has 2 or 4 bytes (no spills
  // under the 32-register cap, nvcc 13, sm_90).
  constexpr int kSize = hkb::max_size<C, T>::value;
  constexpr int VD = kSize == 2 || kSize == 4 ? 2 * V : V;
  hkb::map_layout<3, V, V, VD>(numel, num_dims, info, out, body);
}

}  // namespace

// Two 1024-thread blocks per SM need <= 32 registers, which where over a u8 condition with 2- or
// 4-byte values reaches without spilling (nvcc 13, sm_90); the others spill 24-116 bytes there and
// keep one block per SM.
#define HKB_WHERE_BLOCKS(C, T) (sizeof(C) == 1 && (sizeof(T) == 2 || sizeof(T) == 4) ? 2 : 1)
#define HKB_WHERE(CTAG, C, TAG, T)                                                        \
  HKB_GLOBAL void HKB_OCCUPANCY(1024, HKB_WHERE_BLOCKS(C, T))                             \
      where_##CTAG##_##TAG(const size_t numel, const size_t num_dims, const size_t* info, \
                           const C* ids, const T* t, const T* f, T* out) {                \
    where<C, T>(numel, num_dims, info, ids, t, f, out);                                   \
  }
#define HKB_WHERE_VALUES(X) HKB_DTYPES_FLOAT(X) HKB_DTYPES_INT(X) HKB_DTYPES_F8_ALT(X)
#define HKB_WHERE_COND_U8(TAG, T) HKB_WHERE(u8, uint8_t, TAG, T)
#define HKB_WHERE_COND_U32(TAG, T) HKB_WHERE(u32, uint32_t, TAG, T)
#define HKB_WHERE_COND_I16(TAG, T) HKB_WHERE(i16, int16_t, TAG, T)
#define HKB_WHERE_COND_I32(TAG, T) HKB_WHERE(i32, int32_t, TAG, T)
#define HKB_WHERE_COND_I64(TAG, T) HKB_WHERE(i64, int64_t, TAG, T)
HKB_WHERE_VALUES(HKB_WHERE_COND_U8)
HKB_WHERE_VALUES(HKB_WHERE_COND_U32)
HKB_WHERE_VALUES(HKB_WHERE_COND_I16)
HKB_WHERE_VALUES(HKB_WHERE_COND_I32)
HKB_WHERE_VALUES(HKB_WHERE_COND_I64)
