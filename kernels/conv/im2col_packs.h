// im2col strategy "packs": V outputs a unit in spread groups of blocks (common.h: Group).
#pragma once

#include "im2col_shape.h"

namespace {

// The V outputs from e on, which share one output position. The five divisions that give the
// coordinates depend on e (or on one quotient) only, so they take two division latencies instead of
// four; the other outputs step (kh, kw) like an odometer.
template <typename T, int V, typename I>
HKB_DEVICE hkb::Pack<T, V> im2col_pack(I e, const Im2colShape<I>& a, const T* src) {
  const I kk = a.h_k * a.w_k;
  const I k_all = a.c_in * kk;
  const I k_row = k_all * a.w_out;  // outputs of one output row
  const I p = e / k_all;            // output position (b, oy, ox)
  const I t = e / k_row;            // b * h_out + oy
  const I b = e / (k_row * a.h_out);
  const I q = e - p * k_all;
  const I c = q / kk;
  const I ckh = q / a.w_k;  // c * h_k + kh
  I kh = ckh - c * a.h_k;
  I kw = q - ckh * a.w_k;
  const I y0 = (t - b * a.h_out) * a.stride - a.padding;
  const I x0 = (p - t * a.w_out) * a.stride - a.padding;
  I plane = b * a.s[0] + c * a.s[1];
  hkb::Pack<T, V> out;
#pragma unroll
  for (int j = 0; j < V; ++j) {
    const I y = y0 + kh * a.dilation;
    const I x = x0 + kw * a.dilation;
    out.v[j] = y < a.h_in && x < a.w_in ? src[plane + y * a.s[2] + x * a.s[3]] : zero<T>();
    if (j + 1 < V && ++kw == a.w_k) {
      kw = 0;
      if (++kh == a.h_k) {
        kh = 0;
        plane += a.s[1];
      }
    }
  }
  return out;
}

// Unit u (outputs u * V .. u * V + V, fewer at the end) of any launch: a unit whose outputs share
// one position takes im2col_pack, one that spans two positions (c_in * h_k * w_k not a multiple of
// V) or ends the outputs computes each output on its own.
template <typename T, int V, typename I>
HKB_DEVICE void im2col_unit(I u, const Im2colShape<I>& a, bool packed, const T* src, T* dst) {
  const I e = u * V;
  const I k_all = a.c_in * a.h_k * a.w_k;
  if (e % k_all + V <= k_all && e + V <= a.n) {
    const hkb::Pack<T, V> out = im2col_pack<T, V>(e, a, src);
    if (packed) {
      *reinterpret_cast<hkb::Pack<T, V>*>(dst + e) = out;
    } else {
#pragma unroll
      for (int j = 0; j < V; ++j) dst[e + j] = out.v[j];
    }
  } else {
#pragma unroll 1
    for (I j = 0; j < V && e + j < a.n; ++j) {
      dst[e + j] = im2col_at(e + j, a.h_out, a.w_out, a.h_k, a.w_k, a.stride, a.padding, a.dilation,
                             a.c_in, a.h_in, a.w_in, a.s, src);
    }
  }
}

// Strategy "packs", for blocks that are not whole teams of 32 threads (they own ranges of outputs
// in every block of the grid): the units of this thread (see Group), M at a time. When all of them
// are whole packs of one position and the output is aligned (always, when c_in * h_k * w_k is a
// multiple of V), the M packs' loads are all issued before the first store.
template <typename T, int M, typename I>
HKB_DEVICE void im2col_packs(const Group& g, const Im2colShape<I>& a, const T* src, T* dst) {
  constexpr int V = pack_width<T>::value;
  const I whole = a.n / V;
  const I units = whole + (a.n % V != 0);
  const bool packed = hkb::is_aligned(dst, sizeof(T) * V);
  const bool fast = packed && (a.c_in * a.h_k * a.w_k) % V == 0;
  const uint32_t bd = blockDim.x;
  for_group_units<M>(g, units, [&](I u0, int count) {
    if (sizeof(I) == 4 && fast && u0 + (count - 1) * bd < whole) {
      hkb::Pack<T, V> out[M];
#pragma unroll
      for (int i = 0; i < M; ++i) {
        if (i < count) out[i] = im2col_pack<T, V>(static_cast<I>(u0 + i * bd) * V, a, src);
      }
#pragma unroll
      for (int i = 0; i < M; ++i) {
        if (i < count) {
          *reinterpret_cast<hkb::Pack<T, V>*>(dst + static_cast<I>(u0 + i * bd) * V) = out[i];
        }
      }
    } else {
      for (int i = 0; i < count; ++i) {
        im2col_unit<T, V>(static_cast<I>(u0 + i * bd), a, packed, src, dst);
      }
    }
  });
}

}  // namespace
