// Elementwise drivers shared by the elementwise families. The contiguous path moves 16 bytes per
// thread per step (one element per thread cannot keep enough bytes in flight to reach copy
// bandwidth) and falls back to scalar accesses when a pointer is not aligned for that. Every loop
// is grid-stride over 64-bit indices, so any grid that launches at least one thread is correct.
#pragma once

#include "dtypes.h"
#include "strided.h"

namespace hkb {

template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

template <typename A, typename B>
struct max_size {
  static constexpr int value = sizeof(A) > sizeof(B) ? sizeof(A) : sizeof(B);
};

// Elements per thread step for a map from TI to TO: 16 bytes of the wider type.
template <typename TI, typename TO>
struct pack_width {
  static constexpr int value = 16 / max_size<TI, TO>::value;
};

HKB_DEVICE bool is_aligned(const void* p, uint64_t bytes) {
  return (reinterpret_cast<uintptr_t>(p) & (bytes - 1)) == 0;
}

// out[i] = f(in[i]) for i in [0, n), both contiguous. `in` may equal `out`.
template <typename TI, typename TO, typename F>
HKB_DEVICE void map_contiguous(uint64_t n, const TI* in, TO* out, F f) {
  constexpr int V = pack_width<TI, TO>::value;
  const uint64_t tid = global_thread_index();
  const uint64_t stride = grid_stride();
  uint64_t done = 0;
  if (V > 1 && is_aligned(in, sizeof(TI) * V) && is_aligned(out, sizeof(TO) * V)) {
    const uint64_t packs = n / V;
    const Pack<TI, V>* in_p = reinterpret_cast<const Pack<TI, V>*>(in);
    Pack<TO, V>* out_p = reinterpret_cast<Pack<TO, V>*>(out);
    for (uint64_t p = tid; p < packs; p += stride) {
      const Pack<TI, V> a = in_p[p];
      Pack<TO, V> b;
#pragma unroll
      for (int k = 0; k < V; ++k) b.v[k] = f(a.v[k]);
      out_p[p] = b;
    }
    done = packs * V;
  }
  for (uint64_t i = done + tid; i < n; i += stride) out[i] = f(in[i]);
}

// out[i] = f(in[strided(i)]) with the input described by info = [dims, strides]; out contiguous.
template <typename TI, typename TO, typename F>
HKB_DEVICE void map_strided_in(uint64_t n, uint64_t num_dims, const size_t* info, const TI* in,
                               TO* out, F f) {
  const size_t* dims = info;
  const size_t* strides = info + num_dims;
  for (uint64_t i = global_thread_index(); i < n; i += grid_stride()) {
    out[i] = f(in[strided_offset(i, num_dims, dims, strides)]);
  }
}

// The unary-shaped entry contract of candle (affine, unary, cast): null info, or an info that
// describes a contiguous layout, takes the vectorised path.
template <typename TI, typename TO, typename F>
HKB_DEVICE void map_unary_layout(uint64_t n, uint64_t num_dims, const size_t* info, const TI* in,
                                 TO* out, F f) {
  if (info == nullptr || is_contiguous(num_dims, info, info + num_dims)) {
    map_contiguous(n, in, out, f);
  } else {
    map_strided_in(n, num_dims, info, in, out, f);
  }
}

}  // namespace hkb
