// CONV: direct convolutions (conv1d, conv2d, conv_transpose1d, conv_transpose2d), the im2col /
// col2im reshapes candle's default conv paths use around a GEMM, pooling and upsampling, for
// bf16 f16 f32 f64 u8 u32 with candle's names, parameter lists and launch geometry (cudarc's
// for_num_elems over the outputs, except im2col1d: over b * l_out * c_in rows). Every loop is
// grid-stride over 64-bit indices, so any grid is correct; index math takes 32-bit division (or a
// 32-bit body) whenever the values fit, because 64-bit division is several times slower.
//
// Semantics (the contract hkb keeps, including where it departs from candle):
// - Outputs are contiguous. Inputs are read through info strides; input pointers are already
//   offset by the view's start. The size arguments are trusted as candle's host computes them,
//   except that no kernel writes past the output its info dims imply.
// - conv1d: src (b, c_in, l_in), kernel (c_out, c_in, k), dst (b, c_out, l_out); the l_out value
//   arrives in the slot candle names num_dims. candle's dilation quirk is kept: output l reads
//   input position (stride * l + k) * dilation - padding (not stride * l + k * dilation).
// - conv2d: src (b, c_in, h, w), kernel (c_out, c_in, h_k, w_k), dst (b, c_out, h_out, w_out),
//   input row stride * y + ky * dilation - padding (and the same for columns).
// - conv_transpose1d/2d: kernel (c_in, c_out, k...), output o receives input i through tap k
//   where o = i * stride + k * dilation - padding; out_padding only sizes the output (host side).
// - Accumulation: f16/bf16/f32 in f32, f64 in f64, u8/u32 in 64-bit integers and truncated on the
//   store, which equals candle's wrapping arithmetic in the type itself.
// - col2im1d: src (b, l_in, c_out, k) contiguous, dst (b, c_out, l_out) with
//   dst[l] = sum over l = i * stride + k of src[i, k], summed in the accumulator type and rounded
//   once (candle adds in T, rounding f16/bf16 at every step).
// - im2col: dst (b, h_out, w_out, c_in, h_k, w_k); im2col1d: dst (b, l_out, c_in, l_k), the first
//   argument counts rows of l_k outputs. Taps in the padding read as 0.
// - avg_pool2d / max_pool2d: no padding; "w" is dims[2] and "h" is dims[3] (candle's naming):
//   w_k/w_stride pool dims[2], h_k/h_stride dims[3], output (b, c, (d2 - w_k) / w_stride + 1,
//   (d3 - h_k) / h_stride + 1). avg multiplies the window sum by float(1 / (w_k * h_k)) like candle
//   (f64 uses a double scale; candle rounds it through float). u8/u32 sum in 64 bits (candle's
//   sum wraps in the type) and convert float(sum) * scale back by truncation. max: f32/f64 ignore
//   NaN (fmax) unless the whole window is NaN; f16/bf16 propagate NaN (candle's __hmax_nan).
// - upsample_nearest2d: "w" is dims[2]: w_out is the new dims[2], h_out the new dims[3], and the
//   scales are the host's in / out ratios; source index = min(trunc(out_index * scale), in - 1)
//   with the product in f64 as candle computes it.
// - upsample_bilinear2d: NCHW as PyTorch: h is dims[2], w is dims[3], output (b, c, h_out, w_out).
//   In f64: scale = align_corners ? (in - 1) / (out - 1) (0 when out == 1) : (has_scale and
//   factor > 0 ? 1 / factor : in / out); source = align_corners ? scale * o :
//   max(scale * (o + 0.5) - 0.5, 0); i0 = floor(source) clamped to in - 1, i1 = min(i0 + 1, in -
//   1), w1 = source - i0 (0 when i1 == i0, the clamped edge), w0 = 1 - w1; value = h0 * (w0 * v00 +
//   w1 * v01) + h1 * (w0 * v10 + w1 * v11). Every product is rounded on its own (hkb::mul_rn),
//   never fused, so the result does not depend on the compiler's contraction. f16/bf16 round the
//   f64 result through f32; integers truncate.
#include "common/dtype_lists.h"
#include "common/elementwise.h"
#include "common/fastdiv.h"

namespace {

// a / b and a % b with 32-bit hardware division when both fit.
struct DivMod {
  uint64_t q, r;
};
HKB_DEVICE DivMod divmod(uint64_t a, uint64_t b) {
  if ((a | b) <= 0xFFFFFFFFull) {
    const uint32_t q = static_cast<uint32_t>(a) / static_cast<uint32_t>(b);
    return {q, a - static_cast<uint64_t>(q) * b};
  }
  const uint64_t q = a / b;
  return {q, a - q * b};
}

// How the copying kernels (upsample_nearest2d, and im2col in blocks that are not whole teams of
// 32 threads: see im2col_taps) split units of work (a unit: V consecutive outputs written with one
// store) among a launch's threads. Under candle's geometry
// (for_num_elems: one thread per output, 1024-thread blocks, at most two resident per NVIDIA
// multiprocessor) a block's own range is blockDim.x / V units, and with so few blocks resident a
// block's throughput is its bytes over its lifetime: the dependent chain of the info loads, the
// index math, the data loads and the stores. That chain is longer here than in a plain copy, so a
// block of 256 threads moving one unit each (92% of copy bandwidth for a copy, see
// kernels/common/elementwise.h) left these kernels at 50% (upsample f32) and 23% (im2col f32).
// Groups: the blocks gather in groups of K = V * M consecutive blocks; the first block of a group
// takes the units of all its blocks' ranges with every thread, M units a thread (units t, t +
// blockDim.x, ...: each load and store instruction of a warp stays contiguous), issuing all M
// units' loads before the stores; the other blocks of the group leave before any memory access.
// This spreads the busy blocks over the grid like the "spread" copy of bench/geometry_probe.cu
// (88% of copy bandwidth) and pays the chain once for M * 16 bytes a thread. The group's range
// repeats with a stride of gridDim.x ranges, so any grid is correct.
// HKB_CONV_COPY_PACKS: M for 4-byte values (see copy_packs). HKB_CONV_GROUP_ROUNDS, for timing
// larger groups: K = V * M * rounds, each thread that many rounds of M units.
#ifndef HKB_CONV_COPY_PACKS
#define HKB_CONV_COPY_PACKS 2
#endif
#ifndef HKB_CONV_GROUP_ROUNDS
#define HKB_CONV_GROUP_ROUNDS 2
#endif
struct Group {
  uint64_t base;  // first unit of the group in the first grid-stride step
  uint64_t step;  // units of one grid-stride step: gridDim.x block ranges
  uint32_t span;  // units of the group: its blocks' ranges
};
// False for a thread with no unit in any step. Resident: one group per busy block of the resident
// split (elementwise.h) instead, its threads M units each a round; the grid's own size (one output
// per thread) bounds the busy blocks, as counting the units takes info reads. H100 (% of copy
// bandwidth, bench/indexing-conv-probe): upsample_nearest2d f32 69% resident against 61% in spread
// groups; im2col f32 42% in groups against 35% resident (its index math per unit wants every
// multiprocessor).
template <int V, int M, bool Resident>
HKB_DEVICE bool group_of_block(Group* g) {
  if (Resident) {
    uint32_t busy = hkb::resident_cap();
    if (blockIdx.x >= busy) return false;
    const uint32_t span = blockDim.x * M;
    const uint32_t rounds = (gridDim.x + V * M - 1) / (V * M);
    if (rounds < busy) busy = rounds;
    if (blockIdx.x >= busy) return false;
    g->span = span;
    g->base = static_cast<uint64_t>(blockIdx.x) * span;
    g->step = static_cast<uint64_t>(busy) * span;
    return true;
  }
  constexpr uint32_t K = static_cast<uint32_t>(V * M * HKB_CONV_GROUP_ROUNDS);
  if (blockIdx.x % K != 0) return false;
  const uint32_t per_block = blockDim.x >= static_cast<uint32_t>(V) ? blockDim.x / V : 1;
  const uint32_t left = gridDim.x - blockIdx.x;
  g->span = (left < K ? left : K) * per_block;
  if (threadIdx.x >= g->span) return false;
  g->base = static_cast<uint64_t>(blockIdx.x) * per_block;
  g->step = static_cast<uint64_t>(gridDim.x) * per_block;
  return true;
}

// Units [0, units) of this thread, M at a time: f(u, count) with the first unit u (the others are
// u + i * blockDim.x for i < count, all below units). I: the index type of the caller's body; a
// 32-bit body has units <= 2^31, so no sum below wraps.
template <int M, typename I, typename F>
HKB_DEVICE void for_group_units(const Group& g, I units, F f) {
  if (g.base >= units) return;
  const I bd = blockDim.x;
  const I step = static_cast<I>(g.step < units ? g.step : units);  // as good as g.step here
  for (I g0 = static_cast<I>(g.base); g0 < units; g0 += step) {
    for (I off = threadIdx.x; off < g.span; off += M * bd) {
      const I u = g0 + off;
      if (u >= units) break;
      int count = 1;
#pragma unroll
      for (int i = 1; i < M; ++i) {
        if (off + i * bd < g.span && u + i * bd < units) count = i + 1;
      }
      f(u, count);
    }
  }
}

// Outputs per unit of the copying kernels (im2col, upsample_nearest2d): 16 bytes, except 8 for
// 1-byte values, whose sixteen per-output index updates do not fit the register budget.
template <typename T>
struct pack_width {
  static constexpr int value = sizeof(T) == 1 ? 8 : 16 / sizeof(T);
};

// Units per thread and step of the copying kernels (see Group): HKB_CONV_COPY_PACKS for 4-byte
// values, one for the others: V scalar loads of 1- or 2-byte values take V registers in flight,
// and 8-byte values two each, so two packs of them do not fit the 32-register budget.
template <typename T>
struct copy_packs {
  static constexpr int value = sizeof(T) == 4 ? HKB_CONV_COPY_PACKS : 1;
};

// Accumulator of the sums: compute type for floats, 64-bit for integers.
template <typename T>
struct acc_type {
  using type = hkb::compute_t<T>;
};
template <>
struct acc_type<uint8_t> {
  using type = uint64_t;
};
template <>
struct acc_type<uint32_t> {
  using type = uint64_t;
};
template <typename T>
using acc_t = typename acc_type<T>::type;

template <typename T>
HKB_DEVICE acc_t<T> to_acc(T v) {
  if constexpr (hkb::is_reduced_float<T>::value) {
    return hkb::widen(v);
  } else {
    return static_cast<acc_t<T>>(v);
  }
}
template <typename T>
HKB_DEVICE T from_acc(acc_t<T> v) {
  if constexpr (hkb::is_reduced_float<T>::value) {
    return hkb::narrow<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

template <typename T>
HKB_DEVICE T zero() {
  if constexpr (hkb::is_reduced_float<T>::value) {
    return T{0};
  } else {
    return static_cast<T>(0);
  }
}

// ---------------------------------------------------------------------------------------------
// Direct convolutions.

// info = [src dims(3), src strides(3), kernel dims(3), kernel strides(3)].
template <typename T>
__device__ void conv1d(uint64_t l_out, uint64_t stride, uint64_t padding, uint64_t dilation,
                       const size_t* info, const T* src, const T* kernel, T* dst) {
  const size_t* sd = info;
  const size_t* ss = info + 3;
  const size_t* kd = info + 6;
  const size_t* ks = info + 9;
  const uint64_t c_in = sd[1], l_in = sd[2], c_out = kd[0], k_size = kd[2];
  const uint64_t n = sd[0] * c_out * l_out;
  for (uint64_t i = hkb::global_thread_index(); i < n; i += hkb::grid_stride()) {
    const DivMod t = divmod(i, l_out);
    const DivMod bc = divmod(t.q, c_out);
    const T* k_row = kernel + bc.r * ks[0];
    acc_t<T> acc = 0;
    for (uint64_t k = 0; k < k_size; ++k) {
      const uint64_t pos = (stride * t.r + k) * dilation;
      if (pos < padding || pos - padding >= l_in) continue;
      const T* s = src + bc.q * ss[0] + (pos - padding) * ss[2];
      const T* w = k_row + k * ks[2];
      for (uint64_t c = 0; c < c_in; ++c) acc += to_acc(s[c * ss[1]]) * to_acc(w[c * ks[1]]);
    }
    dst[i] = from_acc<T>(acc);
  }
}

// info = [src dims(4), src strides(4), kernel dims(4), kernel strides(4)].
template <typename T>
__device__ void conv2d(uint64_t w_out, uint64_t h_out, uint64_t stride, uint64_t padding,
                       uint64_t dilation, const size_t* info, const T* src, const T* kernel,
                       T* dst) {
  const size_t* sd = info;
  const size_t* ss = info + 4;
  const size_t* kd = info + 8;
  const size_t* ks = info + 12;
  const uint64_t c_in = sd[1], h_in = sd[2], w_in = sd[3];
  const uint64_t c_out = kd[0], h_k = kd[2], w_k = kd[3];
  const uint64_t n = sd[0] * c_out * h_out * w_out;
  for (uint64_t i = hkb::global_thread_index(); i < n; i += hkb::grid_stride()) {
    const DivMod xw = divmod(i, w_out);
    const DivMod yh = divmod(xw.q, h_out);
    const DivMod bc = divmod(yh.q, c_out);
    acc_t<T> acc = 0;
    for (uint64_t ky = 0; ky < h_k; ++ky) {
      const uint64_t y = stride * yh.r + ky * dilation;
      if (y < padding || y - padding >= h_in) continue;
      for (uint64_t kx = 0; kx < w_k; ++kx) {
        const uint64_t x = stride * xw.r + kx * dilation;
        if (x < padding || x - padding >= w_in) continue;
        const T* s = src + bc.q * ss[0] + (y - padding) * ss[2] + (x - padding) * ss[3];
        const T* w = kernel + bc.r * ks[0] + ky * ks[2] + kx * ks[3];
        for (uint64_t c = 0; c < c_in; ++c) acc += to_acc(s[c * ss[1]]) * to_acc(w[c * ks[1]]);
      }
    }
    dst[i] = from_acc<T>(acc);
  }
}

// The input index that output o reads through tap k of a transposed conv, or false when
// o + padding - k * dilation is negative, not a multiple of stride, or past the input.
HKB_DEVICE bool transposed_source(uint64_t o, uint64_t k, uint64_t stride, uint64_t padding,
                                  uint64_t dilation, uint64_t in, uint64_t* i) {
  const uint64_t reach = o + padding;
  const uint64_t back = k * dilation;
  if (back > reach) return false;
  const DivMod d = divmod(reach - back, stride);
  if (d.r != 0 || d.q >= in) return false;
  *i = d.q;
  return true;
}

// info as conv1d; kernel is (c_in, c_out, k).
template <typename T>
__device__ void conv_transpose1d(uint64_t l_out, uint64_t stride, uint64_t padding,
                                 uint64_t dilation, const size_t* info, const T* src,
                                 const T* kernel, T* dst) {
  const size_t* sd = info;
  const size_t* ss = info + 3;
  const size_t* kd = info + 6;
  const size_t* ks = info + 9;
  const uint64_t c_in = sd[1], l_in = sd[2], c_out = kd[1], k_size = kd[2];
  const uint64_t n = sd[0] * c_out * l_out;
  for (uint64_t i = hkb::global_thread_index(); i < n; i += hkb::grid_stride()) {
    const DivMod t = divmod(i, l_out);
    const DivMod bc = divmod(t.q, c_out);
    acc_t<T> acc = 0;
    for (uint64_t k = 0; k < k_size; ++k) {
      uint64_t x;
      if (!transposed_source(t.r, k, stride, padding, dilation, l_in, &x)) continue;
      const T* s = src + bc.q * ss[0] + x * ss[2];
      const T* w = kernel + bc.r * ks[1] + k * ks[2];
      for (uint64_t c = 0; c < c_in; ++c) acc += to_acc(s[c * ss[1]]) * to_acc(w[c * ks[0]]);
    }
    dst[i] = from_acc<T>(acc);
  }
}

// info as conv2d; kernel is (c_in, c_out, h_k, w_k).
template <typename T>
__device__ void conv_transpose2d(uint64_t w_out, uint64_t h_out, uint64_t stride, uint64_t padding,
                                 uint64_t dilation, const size_t* info, const T* src,
                                 const T* kernel, T* dst) {
  const size_t* sd = info;
  const size_t* ss = info + 4;
  const size_t* kd = info + 8;
  const size_t* ks = info + 12;
  const uint64_t c_in = sd[1], h_in = sd[2], w_in = sd[3];
  const uint64_t c_out = kd[1], h_k = kd[2], w_k = kd[3];
  const uint64_t n = sd[0] * c_out * h_out * w_out;
  for (uint64_t i = hkb::global_thread_index(); i < n; i += hkb::grid_stride()) {
    const DivMod xw = divmod(i, w_out);
    const DivMod yh = divmod(xw.q, h_out);
    const DivMod bc = divmod(yh.q, c_out);
    acc_t<T> acc = 0;
    for (uint64_t ky = 0; ky < h_k; ++ky) {
      uint64_t y;
      if (!transposed_source(yh.r, ky, stride, padding, dilation, h_in, &y)) continue;
      for (uint64_t kx = 0; kx < w_k; ++kx) {
        uint64_t x;
        if (!transposed_source(xw.r, kx, stride, padding, dilation, w_in, &x)) continue;
        const T* s = src + bc.q * ss[0] + y * ss[2] + x * ss[3];
        const T* w = kernel + bc.r * ks[1] + ky * ks[2] + kx * ks[3];
        for (uint64_t c = 0; c < c_in; ++c) acc += to_acc(s[c * ss[1]]) * to_acc(w[c * ks[0]]);
      }
    }
    dst[i] = from_acc<T>(acc);
  }
}

// ---------------------------------------------------------------------------------------------
// im2col / col2im.

// Output e of im2col, with I as the index type and the caller's bounds (see im2col).
template <typename T, typename I>
HKB_DEVICE T im2col_at(I e, I h_out, I w_out, I h_k, I w_k, I stride, I padding, I dilation, I c_in,
                       I h_in, I w_in, const I* s, const T* src) {
  const I kk = h_k * w_k;
  const I p = e / (c_in * kk), q = e - p * (c_in * kk);
  const I c = q / kk, r = q - c * kk;
  const I kh = r / w_k, kw = r - kh * w_k;
  const I t = p / w_out, b = t / h_out;
  const I y = (t - b * h_out) * stride - padding + kh * dilation;
  const I x = (p - t * w_out) * stride - padding + kw * dilation;
  return y < h_in && x < w_in ? src[b * s[0] + c * s[1] + y * s[2] + x * s[3]] : zero<T>();
}

// An im2col launch in the body's index type I: uint32_t when every index and offset fits (the
// caller checks). A row or column left of the padding wraps around to a value above h_in / w_in
// (the caller's bounds make that so), which one unsigned comparison rejects.
template <typename I>
struct Im2colShape {
  I n, h_out, w_out, h_k, w_k, stride, padding, dilation, c_in, h_in, w_in;
  I s[4];
};

// The shape of an im2col launch of n outputs in index type I (the caller checks that every value
// fits I); info = [src dims(4), src strides(4)].
template <typename I>
HKB_DEVICE Im2colShape<I> im2col_shape(uint64_t n, uint64_t h_out, uint64_t w_out, uint64_t h_k,
                                       uint64_t w_k, uint64_t stride, uint64_t padding,
                                       uint64_t dilation, const size_t* info) {
  return {static_cast<I>(n),
          static_cast<I>(h_out),
          static_cast<I>(w_out),
          static_cast<I>(h_k),
          static_cast<I>(w_k),
          static_cast<I>(stride),
          static_cast<I>(padding),
          static_cast<I>(dilation),
          static_cast<I>(info[1]),
          static_cast<I>(info[2]),
          static_cast<I>(info[3]),
          {static_cast<I>(info[4]), static_cast<I>(info[5]), static_cast<I>(info[6]),
           static_cast<I>(info[7])}};
}

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

// The units of this thread (see Group), M at a time: when all of them are whole packs of one
// position and the output is aligned (always, when c_in * h_k * w_k is a multiple of V), the M
// packs' loads are all issued before the first store.
template <typename T, int M, typename I>
HKB_DEVICE void im2col_body(const Group& g, const Im2colShape<I>& a, const T* src, T* dst) {
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

// The outputs an im2col launch writes: n, but no more than the info dims imply.
HKB_DEVICE uint64_t im2col_outputs(uint64_t n, uint64_t h_out, uint64_t w_out, uint64_t h_k,
                                   uint64_t w_k, const size_t* info) {
  const uint64_t total = info[0] * h_out * w_out * info[1] * h_k * w_k;
  return n < total ? n : total;
}

// Whether every index and offset of an im2col of n > 0 outputs fits the 32-bit bodies (a row or
// column left of the padding wraps around to a value above h_in / w_in, which one unsigned
// comparison rejects). info = [src dims(4), src strides(4)].
HKB_DEVICE bool im2col_fits32(uint64_t n, uint64_t h_out, uint64_t w_out, uint64_t h_k,
                              uint64_t w_k, uint64_t stride, uint64_t padding, uint64_t dilation,
                              const size_t* info) {
  const uint64_t b = info[0], c_in = info[1], h_in = info[2], w_in = info[3];
  const uint64_t total = b * h_out * w_out * c_in * h_k * w_k;
  const uint64_t lim = 0xFFFFFFFFull - 64;  // the largest value any index expression reaches
  const uint64_t max_y = (h_out - 1) * stride + (h_k - 1) * dilation;
  const uint64_t max_x = (w_out - 1) * stride + (w_k - 1) * dilation;
  const uint64_t max_off =
      (b - 1) * info[4] + (c_in - 1) * info[5] + (h_in - 1) * info[6] + (w_in - 1) * info[7];
  return n <= total && total <= lim && max_y <= lim && max_x <= lim && max_off <= lim &&
         h_in + padding <= lim && w_in + padding <= lim && stride <= lim && dilation <= lim &&
         padding <= lim;
}

// im2col by taps (launches whose blocks are whole teams of 32 threads that the row tiles below do
// not take: too few outputs a busy block, or no tile that fits). Why: im2col moves one scattered
// element per output, and the pack path below (im2col_body) spent 58 instructions per output (ncu,
// H100), its divisions each recomputing a reciprocal; five other layouts of the work all landed at
// 40-47% of copy bandwidth for f32 (bench/indexing-conv-probe/im2col_layouts.cu). Here the outputs
// are split into one contiguous chunk per team (teams of the busy blocks), lane l taking outputs l,
// l + 32, ... of its team's chunk, so each store instruction of a team writes 32 consecutive
// outputs and each load touches the rows of a few taps. The coordinates are divided out once per
// thread and then stepped: 32 outputs on are dc channels and dt taps on (32 = dc * kk + dt),
// carrying into the next output position when the channel passes c_in. The per-tap part of the
// source offset, row and column comes from a table of the h_k * w_k taps in shared memory, and
// `base` keeps b * s0 + c * s1 + y0 * s2 + x0 * s3 (mod 2^32) for the current position and channel:
// about 30 instructions per output. H100, 8x64x64x64 k3 (% of copy bandwidth,
// bench/indexing-conv-probe): f32 42 -> 48, bf16 19 -> 25; 2x3x224x224 k7 s2 f32 16 -> 37. Busy
// blocks: HKB_IM2COL_QUARTERS quarters of a block per multiprocessor (8: two, every thread slot;
// one per multiprocessor gave 38% for f32), HKB_IM2COL_ROUNDS outputs a thread in flight (2: 46%).
// 32-bit: the caller checks every offset fits (Im2colShape<uint32_t>).
constexpr uint32_t kIm2colTaps = 1024;  // h_k * w_k limit of the table: 8 KB of shared memory
constexpr int kIm2colTeam = 32;
#ifndef HKB_IM2COL_ROUNDS
#define HKB_IM2COL_ROUNDS 4
#endif
constexpr int kIm2colRounds = HKB_IM2COL_ROUNDS;  // outputs a thread loads before storing them

// The busy blocks of im2col_taps (at least one, at most the grid).
#ifndef HKB_IM2COL_QUARTERS
#define HKB_IM2COL_QUARTERS 8
#endif
HKB_DEVICE uint32_t im2col_busy_blocks() {
  uint32_t cap = hkb::multiprocessors() * HKB_IM2COL_QUARTERS / 4;
  if (cap == 0) cap = 1;
  return gridDim.x < cap ? gridDim.x : cap;
}

// Whether im2col_taps takes a launch of whole teams (its only caller, im2col_by_taps, has them): a
// table that holds the taps, with the tap's row and column offsets in 16 bits each.
HKB_DEVICE bool im2col_taps_fit(uint64_t h_k, uint64_t w_k, uint64_t dilation) {
  return h_k * w_k <= kIm2colTaps && (h_k - 1) * dilation < 0x10000 &&
         (w_k - 1) * dilation < 0x10000;
}

// The position and channel state of one thread of im2col_taps (see there).
struct TapCursor {
  uint32_t t, c, ox, oy;  // tap, channel, output column and row
  uint32_t y0, x0;        // top-left source row and column of the window (wrapping below 0)
  uint32_t base;          // b * s0 + c * s1 + y0 * s2 + x0 * s3, mod 2^32
};

// The cursor's channel passed c_in: on to the next output positions (rare: once every c_in / dc
// steps, or several times a step when c_in * h_k * w_k < 32).
HKB_DEVICE void next_positions(TapCursor& u, const Im2colShape<uint32_t>& a) {
#pragma unroll 1
  while (u.c >= a.c_in) {
    u.c -= a.c_in;
    u.base += a.stride * a.s[3] - a.c_in * a.s[1];
    u.x0 += a.stride;
    if (++u.ox == a.w_out) {
      u.ox = 0;
      u.x0 -= a.w_out * a.stride;
      u.base += a.stride * a.s[2] - a.w_out * a.stride * a.s[3];
      u.y0 += a.stride;
      if (++u.oy == a.h_out) {
        u.oy = 0;
        u.y0 -= a.h_out * a.stride;
        u.base += a.s[0] - a.h_out * a.stride * a.s[2];
      }
    }
  }
}

// One output at the cursor (tap table entry: source offset, row offset << 16 | column offset),
// then the cursor 32 outputs on: dt taps and dc channels (dcs1 = dc * s1), carrying without a
// branch, and into the next positions when the channel passes c_in.
template <typename T>
HKB_DEVICE T take_tap(TapCursor& u, const uint2* taps, uint32_t dt, uint32_t dc, uint32_t dcs1,
                      uint32_t kk, const Im2colShape<uint32_t>& a, const T* src) {
  const uint2 tap = taps[u.t];
  const uint32_t y = u.y0 + (tap.y >> 16), x = u.x0 + (tap.y & 0xFFFFu);
  const T v = y < a.h_in && x < a.w_in ? src[u.base + tap.x] : zero<T>();
  const uint32_t t = u.t + dt;
  const bool carry = t >= kk;
  u.t = carry ? t - kk : t;
  u.c += dc + (carry ? 1u : 0u);
  u.base += carry ? dcs1 + a.s[1] : dcs1;
  if (u.c >= a.c_in) next_positions(u, a);
  return v;
}

// R outputs a thread per round, their loads all issued before the stores.
// taps: kIm2colTaps entries of shared memory.
template <typename T, int R>
HKB_DEVICE void im2col_taps(const Im2colShape<uint32_t>& a, uint32_t busy, uint2* taps,
                            const T* src, T* dst) {
  const uint32_t kk = a.h_k * a.w_k;
  for (uint32_t t = threadIdx.x; t < kk; t += blockDim.x) {
    const uint32_t kh = t / a.w_k, kw = t - kh * a.w_k;
    const uint32_t dy = kh * a.dilation, dx = kw * a.dilation;
    taps[t] = make_uint2(dy * a.s[2] + dx * a.s[3], dy << 16 | dx);
  }
  __syncthreads();
  const uint32_t per_block = blockDim.x / kIm2colTeam;
  const uint64_t teams = static_cast<uint64_t>(busy) * per_block;
  const uint64_t team = static_cast<uint64_t>(blockIdx.x) * per_block + threadIdx.x / kIm2colTeam;
  // Chunks of a multiple of 32 outputs, so every lane of a team starts in it.
  const uint64_t chunk = ((a.n + teams - 1) / teams + kIm2colTeam - 1) / kIm2colTeam * kIm2colTeam;
  const uint64_t first = team * chunk + threadIdx.x % kIm2colTeam;
  const uint64_t end = team * chunk + chunk < a.n ? team * chunk + chunk : a.n;
  if (first >= end) return;
  uint32_t left = static_cast<uint32_t>((end - first + kIm2colTeam - 1) / kIm2colTeam);
  T* out = dst + first;
  const uint32_t e = static_cast<uint32_t>(first);
  const uint32_t k_all = a.c_in * kk;
  const uint32_t p = e / k_all, k = e - p * k_all;
  const uint32_t q = p / a.w_out, b = q / a.h_out;
  TapCursor u;
  u.c = k / kk;
  u.t = k - u.c * kk;
  u.ox = p - q * a.w_out;
  u.oy = q - b * a.h_out;
  u.y0 = u.oy * a.stride - a.padding;
  u.x0 = u.ox * a.stride - a.padding;
  u.base = b * a.s[0] + u.c * a.s[1] + u.y0 * a.s[2] + u.x0 * a.s[3];
  const uint32_t dc = kIm2colTeam / kk, dt = kIm2colTeam - dc * kk, dcs1 = dc * a.s[1];
#pragma unroll 1
  for (; left >= static_cast<uint32_t>(R); left -= R) {
    T v[R];
#pragma unroll
    for (int i = 0; i < R; ++i) v[i] = take_tap(u, taps, dt, dc, dcs1, kk, a, src);
#pragma unroll
    for (int i = 0; i < R; ++i) out[i * kIm2colTeam] = v[i];
    out += R * kIm2colTeam;
  }
#pragma unroll 1
  for (; left > 0; --left) {
    *out = take_tap(u, taps, dt, dc, dcs1, kk, a, src);
    out += kIm2colTeam;
  }
}

// im2col by row tiles (the main path: launches of whole waves with at least kIm2colRowTileMin
// outputs a busy block). A unit of work is R consecutive output rows of one image and C
// consecutive channels. The block copies the source rows the unit reads (C channels x TR =
// (R - 1) * stride + (h_k - 1) * dilation + 1 rows x `span` columns, zeros for the padding) into
// shared memory; then thread (grp, k) writes taps k .. k + VW - 1 of positions grp, grp + G, ...
// of the unit, one VW-output store each: a warp's store writes consecutive outputs, and an output
// costs one shared load and a share of a store. Two tiles: the next unit's copy (cp.async on
// NVIDIA sm_80+ for 4- and 8-byte values) is in flight while the threads write the current one.
// The first wave picks (R, C) by a cost model, one R per lane (row_tile_plan).
// Why: every layout that gathers one output at a time from the source, the tap table included,
// stayed at 40-49% of copy bandwidth for f32 (H100, 8x64x64x64 k3;
// bench/indexing-conv-probe/im2col_layouts.cu): index work and scattered loads per output. Row
// tiles reach 75% of copy bandwidth while their busy blocks work (a grid of only those) and 63%
// under candle's grid of 18432 blocks, whose idle blocks take about 10 us to retire after them
// (bf16: 25 -> 40%).
#if defined(HKB_PLATFORM_NVIDIA)
constexpr uint32_t kIm2colTileBytes = 24000;  // two tiles: 48000 of the 48 KB of static memory
#else
constexpr uint32_t kIm2colTileBytes = 15360;  // two tiles and two blocks fit a CU's 64 KB
#endif
static_assert(2 * kIm2colTileBytes >= kIm2colTaps * sizeof(uint2), "the tap table shares it");
static_assert(kIm2colTileBytes % 16 == 0, "tiles of whole 16-byte words");
// Outputs a busy block needs for the row tiles: with fewer, a block has one unit or none, its tile
// copy cannot overlap its writes, and the tap table does better (H100, f32: 4x32x56x56 k3 s2 17%
// of copy bandwidth by row tiles against 22 by taps, 903,168 outputs over 264 busy blocks).
constexpr uint64_t kIm2colRowTileMin = 16384;

// The plan of a row-tile launch: R output rows and C channels a unit, VW outputs a store.
struct RowTilePlan {
  uint32_t rows, chans, vw;
};

// Outputs a store of the row tiles: 16 bytes, at most 4 (each takes a register of tile offsets).
template <typename T>
struct row_vw {
  static constexpr int value = sizeof(T) >= 8 ? 16 / static_cast<int>(sizeof(T)) : 4;
};

// Geometry shared by the planner and the kernel: the tile's columns (span), rows (tr), row pitch
// and channel pitch in elements for R output rows. With one output a store, the pitches leave tap
// k of a warp in bank dilation * k mod 32 (no conflicts); with VW a store they are dense, which
// measured fewer conflicts for VW = 4 than any padding that keeps k's bank (2 wavefronts a load
// against 3, f32 k3).
struct RowTileGeometry {
  uint32_t span, tr, pitch, plane;
  HKB_DEVICE RowTileGeometry(const Im2colShape<uint32_t>& a, uint32_t rows, uint32_t vw) {
    const uint32_t kk = a.h_k * a.w_k;
    span = (a.w_out - 1) * a.stride + (a.w_k - 1) * a.dilation + 1;
    tr = (rows - 1) * a.stride + (a.h_k - 1) * a.dilation + 1;
    pitch = vw > 1 ? span : span + ((a.w_k * a.dilation - span) & 31u);
    plane = vw > 1 ? tr * pitch : tr * pitch + ((kk * a.dilation - tr * pitch) & 31u);
  }
};

// The cost (in rounds of the block) and channels of a unit of `rows` output rows, or ~0 when such
// a unit does not fit. C is the most channels whose tile fits (at most cap_c), all of c_in or a
// multiple of chunk_mult (see row_tile_plan). The cost counts a block's units times a unit's write
// rounds, its tile copy (about twice the instructions per element) and a fixed cost. 32-bit
// divisions only: the whole block waits for this.
template <int VW>
HKB_DEVICE uint64_t row_tile_cost(const Im2colShape<uint32_t>& a, uint32_t batch, uint32_t busy,
                                  uint32_t rows, uint32_t cap_c, uint32_t chunk_mult,
                                  uint32_t tile_elems, uint32_t* chans) {
  const uint64_t kNone = ~0ull;
  if (rows > a.h_out) return kNone;
  const RowTileGeometry g(a, rows, VW);
  const uint32_t kk = a.h_k * a.w_k, bd = blockDim.x;
  // Tiles that copy more elements than the unit writes: the taps path does better.
  if (static_cast<uint64_t>(g.tr) * g.span > static_cast<uint64_t>(kk) * rows * a.w_out) {
    return kNone;
  }
  uint32_t cmax = tile_elems / g.plane;
  if (cmax > cap_c) cmax = cap_c;
  // Chunks of c_in: whole runs (chunk_mult is a power of two).
  const uint32_t c = cmax < a.c_in ? cmax & ~(chunk_mult - 1) : cmax;
  if (c == 0) return kNone;
  const uint32_t chunks = (a.c_in + c - 1) / c;
  const uint32_t groups = bd / (c * kk / VW);
  const uint32_t units = batch * chunks * ((a.h_out + rows - 1) / rows);
  const uint32_t per_block = (units + busy - 1) / busy;
  const uint32_t writes = (rows * a.w_out + groups - 1) / groups;
  const uint32_t copies = (c * g.tr * g.span + bd - 1) / bd;
  *chans = c;
  return static_cast<uint64_t>(per_block) * (writes + 2 * copies + 6);
}

// The plan with the least cost over R = 1 .. the wave's width (lane i tries R = i + 1), made by
// the block's first wave (blockDim.x a multiple of the wave width); chans 0: no plan fits.
template <int VW>
HKB_DEVICE RowTilePlan row_tile_plan(const Im2colShape<uint32_t>& a, uint32_t batch, uint32_t busy,
                                     uint32_t tile_elems, uint32_t sizeof_t) {
  const uint32_t kk = a.h_k * a.w_k;
  uint32_t cap_c = blockDim.x * VW / kk;  // a run of C * kk / VW threads fits the block
  if (cap_c > a.c_in) cap_c = a.c_in;
  // The channels of a chunk are a multiple of sector_mult when the rows are whole 32-byte sectors
  // (a run that ends inside a sector leaves it to two units: 50.6 us against 40.5 with whole
  // sectors, f32 8x64x64x64 k3 on the H100), or else (no such chunk fits) of vw_mult: whole
  // VW-output stores.
  uint32_t vw_mult = 1, sector_mult = 1;
  while ((vw_mult * kk) % VW != 0) vw_mult *= 2;  // VW is a power of two
  if ((a.c_in * kk * sizeof_t) % 32 == 0) {
    while ((sector_mult * kk * sizeof_t) % 32 != 0) sector_mult *= 2;
  } else {
    sector_mult = vw_mult;
  }
  const uint32_t lane = threadIdx.x % HKB_WAVE_SIZE;
  RowTilePlan plan = {0, 0, 0};
#pragma unroll 1
  for (uint32_t mult = sector_mult;; mult = vw_mult) {
    uint32_t chans = 0;
    const uint64_t cost =
        row_tile_cost<VW>(a, batch, busy, lane + 1, cap_c, mult, tile_elems, &chans);
    // Ties: the fewer rows. The key keeps the lane in its low bits.
    uint64_t key = cost == ~0ull ? ~0ull : (cost << 8 | lane);
#pragma unroll 1
    for (int m = HKB_WAVE_SIZE / 2; m > 0; m /= 2) {
      const uint64_t other = hkb::shfl_xor(key, m, HKB_WAVE_SIZE);
      key = other < key ? other : key;
    }
    if (key != ~0ull) {
      const uint32_t best = static_cast<uint32_t>(key & 0xFFu);
      plan = {best + 1, hkb::shfl_idx(chans, static_cast<int>(best), HKB_WAVE_SIZE), VW};
      break;
    }
    if (mult == vw_mult) break;
  }
  return plan;
}

// One value into the tile, complete at tile_wait(): cp.async on NVIDIA sm_80+ for 4- and 8-byte
// values (zero-filled when !valid, reading nothing), a load and a store otherwise.
template <typename T>
HKB_DEVICE void tile_put(T* to, const T* from, bool valid) {
#if defined(HKB_PLATFORM_NVIDIA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (sizeof(T) == 4 || sizeof(T) == 8) {
    const uint32_t sa = static_cast<uint32_t>(__cvta_generic_to_shared(to));
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"(sa), "l"(from),
                 "n"(sizeof(T)), "r"(valid ? static_cast<uint32_t>(sizeof(T)) : 0u)
                 : "memory");
    return;
  }
#endif
  *to = valid ? *from : zero<T>();
}
template <typename T>
HKB_DEVICE void tile_commit() {
#if defined(HKB_PLATFORM_NVIDIA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (sizeof(T) == 4 || sizeof(T) == 8)
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
template <typename T>
HKB_DEVICE void tile_wait() {
#if defined(HKB_PLATFORM_NVIDIA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (sizeof(T) == 4 || sizeof(T) == 8)
    asm volatile("cp.async.wait_group 0;" ::: "memory");
#endif
}

// Unit u = (b * chunks + chunk) * blocks_y + by of a row-tile launch, as digits that step.
struct RowUnit {
  uint32_t by, chunk, b;
  // += d (d's digits each below their radix); b past the batch ends the units.
  HKB_DEVICE void add(const RowUnit& d, uint32_t blocks_y, uint32_t chunks) {
    by += d.by;
    const uint32_t cy = by >= blocks_y ? 1u : 0u;
    by -= cy ? blocks_y : 0u;
    chunk += d.chunk + cy;
    const uint32_t cc = chunk >= chunks ? 1u : 0u;
    chunk -= cc ? chunks : 0u;
    b += d.b + cc;
  }
};
HKB_DEVICE RowUnit row_unit(uint32_t u, uint32_t blocks_y, uint32_t chunks) {
  const uint32_t t = u / blocks_y;
  return {u - t * blocks_y, t % chunks, t / chunks};
}

// What every thread of a row-tile block needs that is the same for all of them: worked out once,
// by the first thread, and shared (each thread dividing for itself cost about 4 us of a 40 us
// launch on the H100).
struct RowTileBlock {
  RowTilePlan plan;
  uint32_t span, tr, pitch, plane;  // RowTileGeometry
  uint32_t chunks, blocks_y;        // units: (image, chunk of C channels, block of R rows)
  uint32_t run, groups;             // a run of C * kk / VW threads writes one position's taps
  uint32_t io_step, io_wrap;        // tile offset from a position to the G-th next one
  uint32_t g_cols;                  // G mod w_out
  uint32_t dx, dj, dc;              // a block's step through a tile: columns, rows, channels
  RowUnit step, first;              // the busy blocks, and this block's first unit
};

HKB_DEVICE RowTileBlock row_tile_block(const Im2colShape<uint32_t>& a, RowTilePlan plan,
                                       uint32_t busy) {
  RowTileBlock k;
  k.plan = plan;
  const RowTileGeometry g(a, plan.rows, plan.vw);
  k.span = g.span, k.tr = g.tr, k.pitch = g.pitch, k.plane = g.plane;
  const uint32_t kk = a.h_k * a.w_k, bd = blockDim.x;
  k.chunks = (a.c_in + plan.chans - 1) / plan.chans;
  k.blocks_y = (a.h_out + plan.rows - 1) / plan.rows;
  k.run = plan.chans * kk / plan.vw;
  k.groups = bd / k.run;
  const uint32_t g_rows = k.groups / a.w_out;
  k.g_cols = k.groups - g_rows * a.w_out;
  const uint32_t row_step = a.stride * g.pitch;
  k.io_step = g_rows * row_step + k.g_cols * a.stride;
  k.io_wrap = row_step - a.w_out * a.stride;
  const uint32_t dr = bd / g.span;
  k.dx = bd - dr * g.span;
  k.dc = dr / g.tr;
  k.dj = dr - k.dc * g.tr;
  k.step = row_unit(busy, k.blocks_y, k.chunks);
  k.first = row_unit(blockIdx.x, k.blocks_y, k.chunks);
  return k;
}

// The units of row tiles (see above) of this block, VW outputs a store: `tiles` holds two tiles of
// tile_elems values each.
template <typename T, int VW>
HKB_DEVICE void im2col_rows(const Im2colShape<uint32_t>& a, uint32_t batch, const RowTileBlock& kb,
                            T* tiles, uint32_t tile_elems, const T* src, T* dst) {
  const uint32_t kk = a.h_k * a.w_k, k_all = a.c_in * kk, C = kb.plan.chans, R = kb.plan.rows;
  const uint32_t span = kb.span, tr = kb.tr, pitch = kb.pitch, plane_pitch = kb.plane;
  const uint32_t chunks = kb.chunks, blocks_y = kb.blocks_y, G = kb.groups;
  // Writes: thread (grp, k) takes taps k .. k + VW - 1 of positions grp, grp + G, ...
  const uint32_t grp = threadIdx.x / kb.run, k = (threadIdx.x - grp * kb.run) * VW;
  uint32_t tk[VW];
  {
    uint32_t c = k / kk, r = k - c * kk;
    uint32_t kh = r / a.w_k, kw = r - kh * a.w_k;
#pragma unroll
    for (int i = 0; i < VW; ++i) {
      tk[i] = c * plane_pitch + kh * a.dilation * pitch + kw * a.dilation;
      if (++kw == a.w_k) {
        kw = 0;
        if (++kh == a.h_k) {
          kh = 0;
          ++c;
        }
      }
    }
  }
  const uint32_t r0 = grp / a.w_out, ox0 = grp - r0 * a.w_out;
  const uint32_t io0 = r0 * a.stride * pitch + ox0 * a.stride;
  // Copies: element f = threadIdx.x + j * blockDim.x of the tile (channel, row, column), stepped.
  const uint32_t lr0 = threadIdx.x / span, lx0 = threadIdx.x - lr0 * span;
  const uint32_t lc0 = lr0 / tr, lj0 = lr0 - lc0 * tr;
  auto copy = [&](const RowUnit& u, T* t) {
    const uint32_t c0 = u.chunk * C, cu = a.c_in - c0 < C ? a.c_in - c0 : C;
    const uint32_t y0 = u.by * R * a.stride - a.padding;
    const T* plane = src + (u.b * a.s[0] + c0 * a.s[1]);
    uint32_t lx = lx0, lj = lj0, lc = lc0;
#pragma unroll 2
    while (lc < cu) {
      const uint32_t y = y0 + lj, x = lx - a.padding;
      const bool in = y < a.h_in && x < a.w_in;
      tile_put(t + (lc * plane_pitch + lj * pitch + lx),
               in ? plane + (lc * a.s[1] + y * a.s[2] + x * a.s[3]) : src, in);
      lx += kb.dx;
      const uint32_t cx = lx >= span ? 1u : 0u;
      lx -= cx ? span : 0u;
      lj += kb.dj + cx;
      const uint32_t cy = lj >= tr ? 1u : 0u;
      lj -= cy ? tr : 0u;
      lc += kb.dc + cy;
    }
  };
  RowUnit next = kb.first;
  uint32_t cur = 0;
  if (next.b < batch) copy(next, tiles);
  tile_commit<T>();
#pragma unroll 1
  for (;;) {
    const RowUnit u = next;
    if (u.b >= batch) break;
    next.add(kb.step, blocks_y, chunks);
    const T* t = tiles + cur * tile_elems;
    tile_wait<T>();
    __syncthreads();  // this unit's tile is complete, and every thread is done with the other one
    cur ^= 1u;
    if (next.b < batch) copy(next, tiles + cur * tile_elems);
    tile_commit<T>();
    const uint32_t c0 = u.chunk * C, cu = a.c_in - c0 < C ? a.c_in - c0 : C;
    const uint32_t oy0 = u.by * R;
    const uint32_t rows = a.h_out - oy0 < R ? a.h_out - oy0 : R;
    if (grp >= G || k >= cu * kk) continue;
    const uint32_t positions = rows * a.w_out;
    T* out = dst + ((u.b * a.h_out + oy0) * a.w_out + grp) * k_all + c0 * kk + k;
    uint32_t ox = ox0, io = io0;
#pragma unroll 4
    for (uint32_t q = grp; q < positions; q += G) {
      hkb::Pack<T, VW> v;
#pragma unroll
      for (int i = 0; i < VW; ++i) v.v[i] = t[io + tk[i]];
      *reinterpret_cast<hkb::Pack<T, VW>*>(out) = v;
      out += G * k_all;
      ox += kb.g_cols;
      io += kb.io_step;
      if (ox >= a.w_out) {
        ox -= a.w_out;
        io += kb.io_wrap;
      }
    }
  }
}

// Output by output over the threads of the busy blocks: the launches im2col_taps does not take
// (more than kIm2colTaps taps, or row / column offsets of 2^16 and more), in I = uint32_t, and
// views too large for 32-bit offsets.
template <typename T, typename I>
HKB_DEVICE void im2col_elements(const Im2colShape<I>& a, uint32_t busy, const T* src, T* dst) {
  const uint64_t step = static_cast<uint64_t>(busy) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.n;
       i += step) {
    const I e = static_cast<I>(i);
    dst[e] = im2col_at(e, a.h_out, a.w_out, a.h_k, a.w_k, a.stride, a.padding, a.dilation, a.c_in,
                       a.h_in, a.w_in, a.s, src);
  }
}

// The launch of the row tiles or im2col_taps (every launch whose blocks are whole teams): idle
// blocks leave first; the rest goes element by element (im2col_elements).
template <typename T>
HKB_DEVICE void im2col_by_taps(uint64_t n, uint64_t h_out, uint64_t w_out, uint64_t h_k,
                               uint64_t w_k, uint64_t stride, uint64_t padding, uint64_t dilation,
                               const size_t* info, const T* src, T* dst) {
  // The row tiles, or the tap table (source offset, row offset << 16 | column offset).
  __shared__ uint4 smem[2 * kIm2colTileBytes / sizeof(uint4)];
  __shared__ RowTileBlock shared_block;
  const uint32_t busy = im2col_busy_blocks();
  if (blockIdx.x >= busy) return;
  // All of info at once: the checks below would otherwise wait for two rounds of loads.
  size_t dims[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) dims[i] = info[i];
  info = dims;
  const uint64_t total = im2col_outputs(~0ull, h_out, w_out, h_k, w_k, info);
  n = n < total ? n : total;
  if (n == 0) return;
  if (im2col_fits32(n, h_out, w_out, h_k, w_k, stride, padding, dilation, info)) {
    const Im2colShape<uint32_t> a =
        im2col_shape<uint32_t>(n, h_out, w_out, h_k, w_k, stride, padding, dilation, info);
    if (n == total && n >= static_cast<uint64_t>(busy) * kIm2colRowTileMin &&
        blockDim.x % HKB_WAVE_SIZE == 0) {
      constexpr int VW = row_vw<T>::value;
      constexpr uint32_t tile_elems = kIm2colTileBytes / sizeof(T);
      const uint32_t batch = static_cast<uint32_t>(info[0]);
      if (threadIdx.x < HKB_WAVE_SIZE) {
        RowTilePlan plan = {0, 0, 0};
        if (hkb::is_aligned(dst, sizeof(T) * VW) && (a.c_in * a.h_k * a.w_k) % VW == 0) {
          plan = row_tile_plan<VW>(a, batch, busy, tile_elems, sizeof(T));
        }
        if (plan.chans == 0) plan = row_tile_plan<1>(a, batch, busy, tile_elems, sizeof(T));
        if (threadIdx.x == 0) {
          if (plan.chans != 0) {
            shared_block = row_tile_block(a, plan, busy);
          } else {
            shared_block.plan = plan;
          }
        }
      }
      __syncthreads();
      const RowTilePlan plan = shared_block.plan;
      T* tiles = reinterpret_cast<T*>(smem);
      if (plan.chans != 0 && plan.vw == VW) {
        im2col_rows<T, VW>(a, batch, shared_block, tiles, tile_elems, src, dst);
        return;
      }
      if (plan.chans != 0) {
        im2col_rows<T, 1>(a, batch, shared_block, tiles, tile_elems, src, dst);
        return;
      }
    }
    if (im2col_taps_fit(h_k, w_k, dilation)) {
      im2col_taps<T, kIm2colRounds>(a, busy, reinterpret_cast<uint2*>(smem), src, dst);
    } else {
      im2col_elements(a, busy, src, dst);
    }
    return;
  }
  const Im2colShape<uint64_t> a =
      im2col_shape<uint64_t>(n, h_out, w_out, h_k, w_k, stride, padding, dilation, info);
  im2col_elements(a, busy, src, dst);
}

// info = [src dims(4), src strides(4)].
template <typename T>
__device__ void im2col(uint64_t n, uint64_t h_out, uint64_t w_out, uint64_t h_k, uint64_t w_k,
                       uint64_t stride, uint64_t padding, uint64_t dilation, const size_t* info,
                       const T* src, T* dst) {
  constexpr int V = pack_width<T>::value;
  constexpr int M = copy_packs<T>::value;
  // Blocks of whole teams past the busy ones (candle's grid has one block per 1024 outputs, about
  // 70 times the busy ones) leave before anything else, with one branch: their instructions are
  // most of the time a launch spends after the busy blocks finish. H100, grids of 18432
  // 1024-thread blocks at 32 registers: empty 14 us; this test 20 us; the checks this kernel made
  // before it 23 us (im2col f32 8x64x64x64 k3: 59 -> 63% of copy bandwidth; 61 with the block
  // test as a branch of its own first). Blocks that are not whole teams (the pack path below) own
  // ranges of outputs in every block of the grid.
  static_assert(HKB_IM2COL_QUARTERS <= 8, "the busy blocks are below the cap");
  const bool teams = blockDim.x % kIm2colTeam == 0;
  if (blockIdx.x >= hkb::multiprocessors() * 2 && teams) return;
  if (teams) {
    im2col_by_taps(n, h_out, w_out, h_k, w_k, stride, padding, dilation, info, src, dst);
    return;
  }
  Group g;
  if (!group_of_block<V, M, false>(&g)) return;
  if (g.base + threadIdx.x >= n / V + (n % V != 0)) return;  // past the end: no info loads
  n = im2col_outputs(n, h_out, w_out, h_k, w_k, info);
  if (n == 0) return;
  if (im2col_fits32(n, h_out, w_out, h_k, w_k, stride, padding, dilation, info)) {
    const Im2colShape<uint32_t> a =
        im2col_shape<uint32_t>(n, h_out, w_out, h_k, w_k, stride, padding, dilation, info);
    im2col_body<T, M>(g, a, src, dst);
  } else {
    const Im2colShape<uint64_t> a =
        im2col_shape<uint64_t>(n, h_out, w_out, h_k, w_k, stride, padding, dilation, info);
    im2col_body<T, 1>(g, a, src, dst);
  }
}

// rows = b * l_out * c_in; row r writes dst[r * l_k .. r * l_k + l_k). info = [dims(3),
// strides(3)].
template <typename T>
__device__ void im2col1d(uint64_t rows, uint64_t l_out, uint64_t l_k, uint64_t stride,
                         uint64_t padding, uint64_t dilation, const size_t* info, const T* src,
                         T* dst) {
  const uint64_t c_in = info[1], l_in = info[2];
  const uint64_t total = info[0] * l_out * c_in;
  if (rows > total) rows = total;
  for (uint64_t r = hkb::global_thread_index(); r < rows; r += hkb::grid_stride()) {
    const DivMod c = divmod(r, c_in);
    const DivMod bl = divmod(c.q, l_out);
    const T* s = src + bl.q * info[3] + c.r * info[4];
    T* d = dst + r * l_k;
    for (uint64_t k = 0; k < l_k; ++k) {
      const uint64_t x = bl.r * stride + k * dilation;
      d[k] = (x >= padding && x - padding < l_in) ? s[(x - padding) * info[5]] : zero<T>();
    }
  }
}

template <typename T>
__device__ void col2im1d(uint64_t n, uint64_t l_out, uint64_t l_in, uint64_t c_out, uint64_t k_size,
                         uint64_t stride, const T* src, T* dst) {
  for (uint64_t i = hkb::global_thread_index(); i < n; i += hkb::grid_stride()) {
    const DivMod l = divmod(i, l_out);
    const DivMod bc = divmod(l.q, c_out);
    const T* s = src + (bc.q * l_in * c_out + bc.r) * k_size;
    const DivMod ik = divmod(l.r, stride);
    acc_t<T> acc = 0;
    // Taps k = l - x * stride for x = l / stride, l / stride - 1, ... while k < k_size.
    uint64_t x = ik.q, k = ik.r;
    while (k < k_size) {
      if (x < l_in) acc += to_acc(s[x * c_out * k_size + k]);
      if (x == 0) break;
      --x;
      k += stride;
    }
    dst[i] = from_acc<T>(acc);
  }
}

// ---------------------------------------------------------------------------------------------
// Pooling. info = [dims(4), strides(4)]; "w" pools dims[2], "h" pools dims[3].

template <typename T>
HKB_DEVICE T max_of(T a, T b) {
  if constexpr (std::is_same<T, float>::value) {
    return fmaxf(a, b);
  } else if constexpr (std::is_same<T, double>::value) {
    return fmax(a, b);
  } else if constexpr (hkb::is_reduced_float<T>::value) {
    const float fa = hkb::widen(a), fb = hkb::widen(b);
    if (fa != fa) return a;
    if (fb != fb) return b;
    return fb > fa ? b : a;
  } else {
    return b > a ? b : a;
  }
}

struct PoolShape {
  uint64_t n, c, w_in, h_in, w_out, h_out;
};
HKB_DEVICE PoolShape pool_shape(const size_t* info, uint64_t w_k, uint64_t h_k, uint64_t w_stride,
                                uint64_t h_stride) {
  PoolShape p{0, info[1], info[2], info[3], 0, 0};
  if (w_k > p.w_in || h_k > p.h_in || w_stride == 0 || h_stride == 0) return p;
  p.w_out = (p.w_in - w_k) / w_stride + 1;
  p.h_out = (p.h_in - h_k) / h_stride + 1;
  p.n = info[0] * p.c * p.w_out * p.h_out;
  return p;
}

template <typename T, bool kMax>
__device__ void pool2d(uint64_t w_k, uint64_t h_k, uint64_t w_stride, uint64_t h_stride,
                       const size_t* info, const T* src, T* dst) {
  const PoolShape p = pool_shape(info, w_k, h_k, w_stride, h_stride);
  const size_t* st = info + 4;
  for (uint64_t i = hkb::global_thread_index(); i < p.n; i += hkb::grid_stride()) {
    const DivMod oh = divmod(i, p.h_out);
    const DivMod ow = divmod(oh.q, p.w_out);
    const DivMod bc = divmod(ow.q, p.c);
    const T* s = src + bc.q * st[0] + bc.r * st[1];
    if constexpr (kMax) {
      T m = zero<T>();
      bool set = false;
      for (uint64_t a = 0; a < w_k; ++a) {
        const uint64_t x = w_stride * ow.r + a;
        if (x >= p.w_in) continue;
        for (uint64_t b = 0; b < h_k; ++b) {
          const uint64_t y = h_stride * oh.r + b;
          if (y >= p.h_in) continue;
          const T v = s[x * st[2] + y * st[3]];
          m = set ? max_of(m, v) : v;
          set = true;
        }
      }
      dst[i] = m;
    } else {
      acc_t<T> acc = 0;
      for (uint64_t a = 0; a < w_k; ++a) {
        const uint64_t x = w_stride * ow.r + a;
        if (x >= p.w_in) continue;
        for (uint64_t b = 0; b < h_k; ++b) {
          const uint64_t y = h_stride * oh.r + b;
          if (y >= p.h_in) continue;
          acc += to_acc(s[x * st[2] + y * st[3]]);
        }
      }
      const double inv = 1.0 / static_cast<double>(w_k * h_k);
      if constexpr (std::is_same<acc_t<T>, double>::value) {
        dst[i] = static_cast<T>(acc * inv);
      } else if constexpr (std::is_same<acc_t<T>, float>::value) {
        dst[i] = from_acc<T>(acc * static_cast<float>(inv));
      } else {
        dst[i] = static_cast<T>(static_cast<float>(acc) * static_cast<float>(inv));
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Upsampling. info = [dims(4), strides(4)].

// min(trunc(o * scale), in - 1), the product in f64 as candle computes it.
template <typename I>
HKB_DEVICE I nearest_source(I o, double scale, I in) {
  const double p = static_cast<double>(o) * scale;
  if (!(p > 0.0)) return 0;
  return p < static_cast<double>(in) ? static_cast<I>(p) : in - 1;
}

// k when scale is exactly 2^-k with 0 <= k <= 31, else -1. Then o * scale is exact for o < 2^32,
// and nearest_source(o, scale, in) = min(o >> k, in - 1): the common integer factors 1, 2, 4, 8...
HKB_DEVICE int pow2_shift(double scale) {
  const uint64_t bits = hkb::double_bits(scale);
  if ((bits & 0x000FFFFFFFFFFFFFull) != 0) return -1;
  const int k = 1023 - static_cast<int>(bits >> 52);  // a sign bit makes k negative
  return k >= 0 && k <= 31 ? k : -1;
}

// An upsample_nearest2d launch in the body's index type I (uint32_t when the outputs and every
// input offset fit). merged: s[0] == c * s[1], so the (b, ch) plane's offset is plane * s[1].
// w_shift / h_shift: pow2_shift of the scales (used when the body's kShift says both are >= 0).
// by_row, by_plane, by_batch: the 32-bit body's divisions by h_out, h_out * w_out and
// h_out * w_out * c (fastdiv.h; that body has fewer than 2^31 outputs).
template <typename I>
struct NearestShape {
  I w_out, h_out, c, w_in, h_in;
  double w_scale, h_scale;
  int w_shift, h_shift;
  I s[4];
  bool merged;
  hkb::FastDiv by_row, by_plane, by_batch;
};

template <bool kShift, typename I>
HKB_DEVICE I nearest_in(I o, double scale, int shift, I in) {
  if constexpr (kShift) {
    const I r = o >> shift;
    return r < in - 1 ? r : in - 1;
  }
  return nearest_source(o, scale, in);
}

// The V outputs from e on, which lie in one output row (h_out a multiple of V). The row, plane and
// batch indices are each one division of e, so they take one division latency.
template <typename T, int V, bool kShift, typename I>
HKB_DEVICE hkb::Pack<T, V> nearest_pack(I e, const NearestShape<I>& a, const T* src) {
  static_assert(sizeof(I) == 4, "nearest_pack: the 32-bit body");
  const I row = hkb::fast_div(e, a.by_row);
  const I plane = hkb::fast_div(e, a.by_plane);
  I off;
  if (a.merged) {
    off = plane * a.s[1];
  } else {
    const I b = hkb::fast_div(e, a.by_batch);
    off = b * a.s[0] + (plane - b * a.c) * a.s[1];
  }
  const I ox = row - plane * a.w_out;
  const I y0 = e - row * a.h_out;
  const I row_off = off + nearest_in<kShift>(ox, a.w_scale, a.w_shift, a.w_in) * a.s[2];
  hkb::Pack<T, V> out;
#pragma unroll
  for (int j = 0; j < V; ++j) {
    out.v[j] = src[row_off + nearest_in<kShift>(y0 + j, a.h_scale, a.h_shift, a.h_in) * a.s[3]];
  }
  return out;
}

// Unit u of any launch: V consecutive outputs of one output row (the last unit of a row may be
// short), chunks units a row; rows whose length is a multiple of V are written with one store per
// unit when the output is aligned.
template <typename T, int V, typename I>
HKB_DEVICE void nearest_unit(I u, I chunks, const NearestShape<I>& a, bool packed, const T* src,
                             T* dst) {
  const I row = u / chunks;
  const I y0 = (u - row * chunks) * V;
  const I plane = row / a.w_out;
  const I ox = row - plane * a.w_out;
  const I b = plane / a.c;
  const I ch = plane - b * a.c;
  const T* s_row = src + b * a.s[0] + ch * a.s[1] + nearest_source(ox, a.w_scale, a.w_in) * a.s[2];
  T* d = dst + row * a.h_out + y0;
  hkb::Pack<T, V> out;
#pragma unroll
  for (int j = 0; j < V; ++j) {
    const I y = y0 + j;
    out.v[j] = y < a.h_out ? s_row[nearest_source(y, a.h_scale, a.h_in) * a.s[3]] : zero<T>();
  }
  if (packed) {
    *reinterpret_cast<hkb::Pack<T, V>*>(d) = out;
  } else {
#pragma unroll
    for (int j = 0; j < V; ++j) {
      if (y0 + j < a.h_out) d[j] = out.v[j];
    }
  }
}

// The units of this thread (see Group), M at a time: in a 32-bit body with rows of a multiple of V
// outputs and an aligned output, the M packs' loads are all issued before the first store.
template <typename T, int M, bool kShift, typename I>
HKB_DEVICE void nearest_body(const Group& g, I rows, const NearestShape<I>& a, const T* src,
                             T* dst) {
  constexpr int V = pack_width<T>::value;
  const I chunks = a.h_out / V + (a.h_out % V != 0);
  const I units = rows * chunks;
  const bool packed = hkb::is_aligned(dst, sizeof(T) * V) && a.h_out % V == 0;
  const uint32_t bd = blockDim.x;
  for_group_units<M>(g, units, [&](I u0, int count) {
    if constexpr (sizeof(I) == 4) {
      if (packed) {
        hkb::Pack<T, V> out[M];
#pragma unroll
        for (int i = 0; i < M; ++i) {
          if (i < count) {
            out[i] = nearest_pack<T, V, kShift>(static_cast<I>(u0 + i * bd) * V, a, src);
          }
        }
#pragma unroll
        for (int i = 0; i < M; ++i) {
          if (i < count) {
            *reinterpret_cast<hkb::Pack<T, V>*>(dst + static_cast<I>(u0 + i * bd) * V) = out[i];
          }
        }
        return;
      }
    }
    for (int i = 0; i < count; ++i) {
      nearest_unit<T, V>(static_cast<I>(u0 + i * bd), chunks, a, packed, src, dst);
    }
  });
}

// The raw words of H = V / 2 sources (8 bytes; 4 for 1-byte values) and of their V outputs, each
// source twice in a row (16 bytes; 8 for 1-byte values), handled as 32-bit words so no element
// narrower than a register is moved on its own.
template <int kSize>
struct X2Words {
  using In = uint2;
  using Out = uint4;
};
template <>
struct X2Words<1> {
  using In = uint32_t;
  using Out = uint2;
};
template <int kSize, typename In>
HKB_DEVICE auto duplicate_sources(In x) {
  if constexpr (kSize == 1) {
    return make_uint2(__byte_perm(x, 0u, 0x1100), __byte_perm(x, 0u, 0x3322));
  } else if constexpr (kSize == 2) {
    return make_uint4(__byte_perm(x.x, 0u, 0x1010), __byte_perm(x.x, 0u, 0x3232),
                      __byte_perm(x.y, 0u, 0x1010), __byte_perm(x.y, 0u, 0x3232));
  } else if constexpr (kSize == 4) {
    return make_uint4(x.x, x.x, x.y, x.y);
  } else {
    return make_uint4(x.x, x.y, x.x, x.y);
  }
}

// Scale exactly 2 on both axes (w_out = 2 w_in, h_out = 2 h_in) over contiguous, aligned source
// rows and an aligned output: a unit is V / 2 consecutive sources of a source row (one 8-byte
// load) and their V outputs in each of the two output rows that read that source row (two 16-byte
// stores), so consecutive lanes load and store consecutive vectors. The general pack path loads
// every source twice per output row, element by element. H100 (% of copy bandwidth, 8x64x128x128):
// f32 75% -> 82%, bf16 51% -> 69%. Not inlined: inlined, it made nvcc spill 56-162 bytes in the
// whole kernel, which cost the general path (scale 3: 45% -> 42%). s: the source strides (s[3] =
// 1), per_row = h_in / (V / 2) units a source row.
template <typename T, int M>
__device__ __noinline__ void nearest_x2(const Group& g, uint32_t units, uint32_t per_row,
                                        uint32_t w_in, uint32_t c, const uint32_t (&s)[4],
                                        bool merged, uint32_t w_out, uint32_t h_out, const T* src,
                                        T* dst) {
  constexpr int V = pack_width<T>::value, H = V / 2;
  using In = typename X2Words<sizeof(T)>::In;
  using Out = typename X2Words<sizeof(T)>::Out;
  static_assert(sizeof(In) == sizeof(T) * H && sizeof(Out) == sizeof(T) * V, "x2 words");
  const hkb::FastDiv by_row = hkb::make_fast_div(per_row), by_plane = hkb::make_fast_div(w_in),
                     by_batch = hkb::make_fast_div(c);
  const uint32_t bd = blockDim.x;
  for_group_units<M>(g, units, [&](uint32_t u0, int count) {
    In in[M];
    uint32_t out[M];
#pragma unroll
    for (int i = 0; i < M; ++i) {
      if (i < count) {
        const uint32_t u = u0 + i * bd;
        const uint32_t row = hkb::fast_div(u, by_row);  // plane * w_in + source row
        const uint32_t y0 = (u - row * per_row) * H;
        const uint32_t plane = hkb::fast_div(row, by_plane);
        const uint32_t x = row - plane * w_in;
        uint32_t off = plane * s[1];
        if (!merged) {
          const uint32_t b = hkb::fast_div(plane, by_batch);
          off = b * s[0] + (plane - b * c) * s[1];
        }
        in[i] = *reinterpret_cast<const In*>(src + off + x * s[2] + y0);
        out[i] = (plane * w_out + 2 * x) * h_out + 2 * y0;
      }
    }
#pragma unroll
    for (int i = 0; i < M; ++i) {
      if (i < count) {
        const Out v = duplicate_sources<sizeof(T)>(in[i]);
        *reinterpret_cast<Out*>(dst + out[i]) = v;
        *reinterpret_cast<Out*>(dst + out[i] + h_out) = v;
      }
    }
  });
}

// M units a thread (see Group); kShift: both scales are powers of two (pow2_shift).
template <typename T, int M, bool kShift>
HKB_DEVICE void nearest_launch(uint64_t w_out, uint64_t h_out, double w_scale, double h_scale,
                               int w_shift, int h_shift, const size_t* info, const T* src, T* dst) {
  constexpr int V = pack_width<T>::value;
  Group g;
  if (!group_of_block<V, M, true>(&g)) return;
  const uint64_t b = info[0], c = info[1], w_in = info[2], h_in = info[3];
  const uint64_t rows = b * c * w_out;
  if (rows == 0 || h_out == 0 || w_in == 0 || h_in == 0) return;
  const uint64_t lim = 0xFFFFFFFFull - 64;
  const uint64_t max_off =
      (b - 1) * info[4] + (c - 1) * info[5] + (w_in - 1) * info[6] + (h_in - 1) * info[7];
  const bool merged = info[4] == c * info[5];
  // The 32-bit body: fewer than 2^31 outputs (fastdiv.h; units below 2^31, see for_group_units).
  if (rows * h_out <= 0x7FFFFFFFull && max_off <= lim && w_in <= lim && h_in <= lim) {
    using I = uint32_t;
    constexpr int H = V / 2;
    if (kShift && H > 0 && w_shift == 1 && h_shift == 1 && w_out == 2 * w_in && h_out == 2 * h_in &&
        info[7] == 1 && h_in % H == 0 && (info[4] | info[5] | info[6]) % H == 0 &&
        hkb::is_aligned(src, sizeof(T) * H) && hkb::is_aligned(dst, sizeof(T) * V)) {
      const uint32_t st[4] = {static_cast<I>(info[4]), static_cast<I>(info[5]),
                              static_cast<I>(info[6]), 1};
      const uint32_t per_row = static_cast<I>(h_in / H);
      nearest_x2<T, M>(g, static_cast<I>(b * c * w_in) * per_row, per_row, static_cast<I>(w_in),
                       static_cast<I>(c), st, merged, static_cast<I>(w_out), static_cast<I>(h_out),
                       src, dst);
      return;
    }
    const uint32_t plane_len = static_cast<uint32_t>(h_out * w_out);
    const NearestShape<I> a = {static_cast<I>(w_out),
                               static_cast<I>(h_out),
                               static_cast<I>(c),
                               static_cast<I>(w_in),
                               static_cast<I>(h_in),
                               w_scale,
                               h_scale,
                               w_shift,
                               h_shift,
                               {static_cast<I>(info[4]), static_cast<I>(info[5]),
                                static_cast<I>(info[6]), static_cast<I>(info[7])},
                               merged,
                               hkb::make_fast_div(static_cast<uint32_t>(h_out)),
                               hkb::make_fast_div(plane_len),
                               hkb::make_fast_div(static_cast<uint32_t>(plane_len * c))};
    nearest_body<T, M, kShift>(g, static_cast<I>(rows), a, src, dst);
  } else {
    const NearestShape<uint64_t> a = {
        w_out,   h_out,   c,       w_in,    h_in,
        w_scale, h_scale, w_shift, h_shift, {info[4], info[5], info[6], info[7]},
        merged,  {},      {},      {}};
    nearest_body<T, M, kShift>(g, rows, a, src, dst);
  }
}

// The output count is no argument (batch and channels live in info), so every busy thread reads
// info before it knows whether its units exist. The scales are arguments: power-of-two scales
// (integer upsampling factors 1, 2, 4, ...) take integer shifts and copy_packs units a thread,
// other scales the f64 products and one unit a thread (two do not fit the register budget).
template <typename T>
__device__ void upsample_nearest2d(uint64_t w_out, uint64_t h_out, double w_scale, double h_scale,
                                   const size_t* info, const T* src, T* dst) {
  // Both launches take resident groups: the blocks past the cap (nearly all of candle's grid)
  // leave before any other instruction. With fastdiv.h for the index math, H100 (% of copy
  // bandwidth): f32 71% -> 75%, bf16 46% -> 51%, f32 with scale 3 39% -> 45%.
  if (blockIdx.x >= hkb::resident_cap()) return;
  const int w_shift = pow2_shift(w_scale), h_shift = pow2_shift(h_scale);
  if (w_shift >= 0 && h_shift >= 0) {
    nearest_launch<T, copy_packs<T>::value, true>(w_out, h_out, w_scale, h_scale, w_shift, h_shift,
                                                  info, src, dst);
  } else {
    nearest_launch<T, 1, false>(w_out, h_out, w_scale, h_scale, w_shift, h_shift, info, src, dst);
  }
}

// PyTorch's area_pixel_compute_scale for linear modes.
HKB_DEVICE double bilinear_scale(uint64_t in, uint64_t out, bool align_corners, bool has_factor,
                                 double factor) {
  if (align_corners) {
    return out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  }
  if (has_factor && factor > 0.0) return 1.0 / factor;
  return static_cast<double>(in) / static_cast<double>(out);
}

// Source taps of output o along one axis (PyTorch's area_pixel_compute_source_index and its
// two-tap weights). At the clamped edge both taps are the last pixel and it gets weight 1.
struct Tap {
  uint64_t i0, i1;
  double w0, w1;
};
HKB_DEVICE Tap bilinear_tap(uint64_t o, double scale, bool align_corners, uint64_t in) {
  const double od = static_cast<double>(o);
  double src = align_corners ? hkb::mul_rn(scale, od) : hkb::mul_rn(scale, od + 0.5) - 0.5;
  if (!(src > 0.0)) src = 0.0;
  const double f = floor(src);
  Tap tap;
  tap.i0 = f < static_cast<double>(in - 1) ? static_cast<uint64_t>(f) : in - 1;
  tap.i1 = tap.i0 + 1 < in ? tap.i0 + 1 : tap.i0;
  tap.w1 = tap.i1 == tap.i0 ? 0.0 : src - f;
  tap.w0 = 1.0 - tap.w1;
  return tap;
}

// w0 * a + w1 * b with both products rounded (no FMA), as PyTorch's formula reads.
HKB_DEVICE double blend(double w0, double a, double w1, double b) {
  return hkb::mul_rn(w0, a) + hkb::mul_rn(w1, b);
}

template <typename T>
HKB_DEVICE T from_double(double v) {
  if constexpr (hkb::is_reduced_float<T>::value) {
    return hkb::narrow<T>(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

template <typename T>
__device__ void upsample_bilinear2d(uint64_t w_out, uint64_t h_out, bool align_corners,
                                    bool has_scale_h, double scale_h_factor, bool has_scale_w,
                                    double scale_w_factor, const size_t* info, const T* src,
                                    T* dst) {
  const uint64_t c = info[1], h_in = info[2], w_in = info[3];
  const size_t* st = info + 4;
  const uint64_t n = info[0] * c * h_out * w_out;
  if (h_in == 0 || w_in == 0) return;
  const double sh = bilinear_scale(h_in, h_out, align_corners, has_scale_h, scale_h_factor);
  const double sw = bilinear_scale(w_in, w_out, align_corners, has_scale_w, scale_w_factor);
  for (uint64_t i = hkb::global_thread_index(); i < n; i += hkb::grid_stride()) {
    const DivMod ox = divmod(i, w_out);
    const DivMod oy = divmod(ox.q, h_out);
    const DivMod bc = divmod(oy.q, c);
    const T* s = src + bc.q * st[0] + bc.r * st[1];
    const Tap ty = bilinear_tap(oy.r, sh, align_corners, h_in);
    const Tap tx = bilinear_tap(ox.r, sw, align_corners, w_in);
    const T* r0 = s + ty.i0 * st[2];
    const T* r1 = s + ty.i1 * st[2];
    const double top =
        blend(tx.w0, hkb::to_double(r0[tx.i0 * st[3]]), tx.w1, hkb::to_double(r0[tx.i1 * st[3]]));
    const double bottom =
        blend(tx.w0, hkb::to_double(r1[tx.i0 * st[3]]), tx.w1, hkb::to_double(r1[tx.i1 * st[3]]));
    dst[i] = from_double<T>(blend(ty.w0, top, ty.w1, bottom));
  }
}

}  // namespace

// The dtypes candle builds its conv module for.
#define HKB_CONV_DTYPES(X) \
  X(bf16, hkb::bf16) X(f16, hkb::f16) X(f32, float) X(f64, double) X(u8, uint8_t) X(u32, uint32_t)

// candle launches every CONV kernel with 1024-thread blocks (for_num_elems): bound the registers
// so such a launch always fits (nvcc gives im2col on 1- and 2-byte types 72 to 90 otherwise).
#define HKB_CONV_GLOBAL HKB_GLOBAL HKB_OCCUPANCY(1024, 1)
// The copying kernels (im2col, upsample_nearest2d) are bound by memory latency: two 1024-thread
// blocks per multiprocessor (at most 32 registers per thread on NVIDIA) keep twice the bytes in
// flight of one.
#define HKB_CONV_COPY_GLOBAL HKB_GLOBAL HKB_OCCUPANCY(1024, 2)
#define HKB_CONV(TAG, T)                                                                           \
  HKB_CONV_GLOBAL void conv1d_##TAG(                                                               \
      const size_t src_numel, const size_t num_dims, const size_t stride, const size_t padding,    \
      const size_t dilation, const size_t* info, const T* src, const T* kernel, T* dst) {          \
    conv1d<T>(num_dims, stride, padding, dilation, info, src, kernel, dst);                        \
  }                                                                                                \
  HKB_CONV_GLOBAL void conv2d_##TAG(const size_t src_numel, const size_t w_out,                    \
                                    const size_t h_out, const size_t stride, const size_t padding, \
                                    const size_t dilation, const size_t* info, const T* src,       \
                                    const T* kernel, T* dst) {                                     \
    conv2d<T>(w_out, h_out, stride, padding, dilation, info, src, kernel, dst);                    \
  }                                                                                                \
  HKB_CONV_GLOBAL void conv_transpose1d_##TAG(                                                     \
      const size_t src_numel, const size_t l_out, const size_t stride, const size_t padding,       \
      const size_t out_padding, const size_t dilation, const size_t* info, const T* src,           \
      const T* kernel, T* dst) {                                                                   \
    conv_transpose1d<T>(l_out, stride, padding, dilation, info, src, kernel, dst);                 \
  }                                                                                                \
  HKB_CONV_GLOBAL void conv_transpose2d_##TAG(                                                     \
      const size_t src_numel, const size_t w_out, const size_t h_out, const size_t stride,         \
      const size_t padding, const size_t out_padding, const size_t dilation, const size_t* info,   \
      const T* src, const T* kernel, T* dst) {                                                     \
    conv_transpose2d<T>(w_out, h_out, stride, padding, dilation, info, src, kernel, dst);          \
  }                                                                                                \
  HKB_CONV_GLOBAL void avg_pool2d_##TAG(                                                           \
      const size_t src_numel, const size_t w_k, const size_t h_k, const size_t w_stride,           \
      const size_t h_stride, const size_t* info, const T* src, T* dst) {                           \
    pool2d<T, false>(w_k, h_k, w_stride, h_stride, info, src, dst);                                \
  }                                                                                                \
  HKB_CONV_GLOBAL void max_pool2d_##TAG(                                                           \
      const size_t src_numel, const size_t w_k, const size_t h_k, const size_t w_stride,           \
      const size_t h_stride, const size_t* info, const T* src, T* dst) {                           \
    pool2d<T, true>(w_k, h_k, w_stride, h_stride, info, src, dst);                                 \
  }                                                                                                \
  HKB_CONV_COPY_GLOBAL void upsample_nearest2d_##TAG(const size_t w_out, const size_t h_out,       \
                                                     const double w_scale, const double h_scale,   \
                                                     const size_t* info, const T* src, T* dst) {   \
    upsample_nearest2d<T>(w_out, h_out, w_scale, h_scale, info, src, dst);                         \
  }                                                                                                \
  HKB_CONV_GLOBAL void upsample_bilinear2d_##TAG(                                                  \
      const size_t w_out, const size_t h_out, const bool align_corners, const bool has_scale_h,    \
      const double scale_h_factor, const bool has_scale_w, const double scale_w_factor,            \
      const size_t* info, const T* src, T* dst) {                                                  \
    upsample_bilinear2d<T>(w_out, h_out, align_corners, has_scale_h, scale_h_factor, has_scale_w,  \
                           scale_w_factor, info, src, dst);                                        \
  }                                                                                                \
  HKB_CONV_COPY_GLOBAL void im2col_##TAG(                                                          \
      const size_t dst_numel, const size_t h_out, const size_t w_out, const size_t h_k,            \
      const size_t w_k, const size_t stride, const size_t padding, const size_t dilation,          \
      const size_t* info, const T* src, T* dst) {                                                  \
    im2col<T>(dst_numel, h_out, w_out, h_k, w_k, stride, padding, dilation, info, src, dst);       \
  }                                                                                                \
  HKB_CONV_GLOBAL void im2col1d_##TAG(                                                             \
      const size_t dst_numel, const size_t l_out, const size_t l_k, const size_t stride,           \
      const size_t padding, const size_t dilation, const size_t* info, const T* src, T* dst) {     \
    im2col1d<T>(dst_numel, l_out, l_k, stride, padding, dilation, info, src, dst);                 \
  }                                                                                                \
  HKB_CONV_GLOBAL void col2im1d_##TAG(const size_t dst_el, const size_t l_out, const size_t l_in,  \
                                      const size_t c_out, const size_t k_size,                     \
                                      const size_t stride, const T* src, T* dst) {                 \
    col2im1d<T>(dst_el, l_out, l_in, c_out, k_size, stride, src, dst);                             \
  }
#ifndef HKB_CONV_PROBE  // bench/indexing-conv-probe instantiates only the dtypes it times
HKB_CONV_DTYPES(HKB_CONV)
#endif
