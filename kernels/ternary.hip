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

template <typename C, typename T>
struct WhereBody {
  const C* cond;
  const T* on_true;
  const T* on_false;

  template <int W, typename I>
  HKB_DEVICE void run(const I (&off)[3], const I (&stride)[3], T (&res)[W]) const {
    if (W > 1 && hkb::is_vector_run<W>(cond, off[0], stride[0]) &&
        hkb::is_vector_run<W>(on_true, off[1], stride[1]) &&
        hkb::is_vector_run<W>(on_false, off[2], stride[2])) {
      C c[W];
      T a[W], b[W];
      hkb::load_vector_run<W>(cond, off[0], stride[0], c);
      hkb::load_vector_run<W>(on_true, off[1], stride[1], a);
      hkb::load_vector_run<W>(on_false, off[2], stride[2], b);
      select(c, a, b, res);
    } else {
#pragma unroll
      for (int j = 0; j < W; ++j) {
        const C c = cond[off[0] + j * stride[0]];
        res[j] = c != 0 ? on_true[off[1] + j * stride[1]] : on_false[off[2] + j * stride[2]];
      }
    }
  }

  // res[j] = c[j] != 0 ? a[j] : b[j]. Values narrower than 32 bits are selected a 32-bit word at a
  // time through a mask, so a pack stays in four registers per operand.
  template <int W>
  HKB_DEVICE static void select(const C (&c)[W], const T (&a)[W], const T (&b)[W], T (&res)[W]) {
    constexpr int kBytes = static_cast<int>(sizeof(T));
    if constexpr (kBytes < 4 && (W * kBytes) % 4 == 0) {
      constexpr int kWords = W * kBytes / 4;
      constexpr int kPerWord = 4 / kBytes;
      constexpr uint32_t kLaneMask = kBytes == 1 ? 0xFFu : 0xFFFFu;
      uint32_t aw[kWords], bw[kWords], rw[kWords];
      __builtin_memcpy(aw, a, sizeof(aw));
      __builtin_memcpy(bw, b, sizeof(bw));
#pragma unroll
      for (int w = 0; w < kWords; ++w) {
        uint32_t mask = 0;
#pragma unroll
        for (int j = 0; j < kPerWord; ++j) {
          if (c[w * kPerWord + j] != 0) mask |= kLaneMask << (8 * kBytes * j);
        }
        rw[w] = (aw[w] & mask) | (bw[w] & ~mask);
      }
      __builtin_memcpy(res, rw, sizeof(rw));
    } else {
#pragma unroll
      for (int j = 0; j < W; ++j) res[j] = c[j] != 0 ? a[j] : b[j];
    }
  }
};

template <typename C, typename T>
__device__ void where(size_t numel, size_t num_dims, const size_t* info, const C* ids, const T* t,
                      const T* f, T* out) {
  constexpr int V = 16 / hkb::max_size<C, T>::value;
  const WhereBody<C, T> body{ids, t, f};
  hkb::map_layout<3, V, V, hkb::max_size<C, T>::value == 4 ? 2 * V : V>(numel, num_dims, info, out,
                                                                        body);
}

}  // namespace

// Two 1024-thread blocks per SM need <= 32 registers, which only where over a u8 condition and
// 4-byte values reaches without spilling (nvcc 13, sm_90); the rest keep one block per SM.
#define HKB_WHERE_BLOCKS(C, T) (sizeof(C) == 1 && sizeof(T) == 4 ? 2 : 1)
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
