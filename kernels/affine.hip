// AFFINE: y = x * mul + add, elementwise over a possibly strided input into a contiguous output.
// Reduced-precision floats compute in float and round once. Integers wrap as in C. A null `inp`
// means in place on `out` (candle's contract; its Rust side never passes null).
#include "common/dtype_lists.h"
#include "common/elementwise.h"

namespace {

template <typename T>
struct AffineOp {
  hkb::compute_t<T> mul, add;
  HKB_DEVICE T operator()(T x) const { return hkb::narrow<T>(hkb::widen(x) * mul + add); }
};

// Integer arithmetic in the type itself (u8/i16 promote to int; the store truncates like C).
template <typename T>
__device__ void affine(size_t numel, size_t num_dims, const size_t* info, const T* inp, T* out,
                       T mul, T add) {
  const AffineOp<T> op{hkb::widen(mul), hkb::widen(add)};
  if (inp == nullptr) {
    hkb::map_contiguous(numel, out, out, op);
    return;
  }
  hkb::map_unary_layout(numel, num_dims, info, inp, out, op);
}

}  // namespace

#define HKB_AFFINE(TAG, T)                                                                      \
  HKB_GLOBAL void HKB_OCCUPANCY(1024, 2)                                                        \
      affine_##TAG(const size_t numel, const size_t num_dims, const size_t* info, const T* inp, \
                   T* out, const T mul, const T add) {                                          \
    affine<T>(numel, num_dims, info, inp, out, mul, add);                                       \
  }
HKB_DTYPES_ALL(HKB_AFFINE)
