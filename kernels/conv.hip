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

// How a launch splits units of work (a unit: v consecutive outputs written with one store) among
// its threads: the number of threads of each block that take units, the others leaving before
// their first memory access. Under candle's geometry (for_num_elems: one thread per output,
// 1024-thread blocks, at most two resident per NVIDIA multiprocessor) most threads have no unit,
// and the copy measurements of kernels/common/elementwise.h (H100) say how to place the busy
// ones: 256 threads a block moving one 16-byte unit each. For 4-byte values that is every block
// moving its own blockDim.x-element range (92% of copy bandwidth, against 69% for one element
// per thread), for 2- and 1-byte values the first half / quarter of the blocks (2-byte: 64%,
// against 44% with all 1024 threads of the first eighth). A block never takes less than its own
// range (8-byte values: 512 threads). A grid that does not cover the outputs gives every thread a
// unit per step. The loops stride by gridDim.x * units_per_block, so any grid is correct.
HKB_DEVICE uint32_t units_per_block(uint64_t elems, uint32_t v) {
  const uint32_t b = blockDim.x;
  if (static_cast<uint64_t>(gridDim.x) * b < elems) return b;
  const uint32_t own = (b + v - 1) / v;
  const uint32_t busy = own > 256 ? own : 256;
  return busy < b ? busy : b;
}

// Outputs per unit of the copying kernels (im2col, upsample_nearest2d): 16 bytes, except 8 for
// 1-byte values, whose sixteen per-output index updates do not fit the register budget.
template <typename T>
struct pack_width {
  static constexpr int value = sizeof(T) == 1 ? 8 : 16 / sizeof(T);
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

// Output e of im2col, with I as the index type and the caller's bounds (see im2col_body).
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

// One unit = V consecutive outputs (pack_width) written with one store. When the unit's outputs
// share one output position (always, when c_in * h_k * w_k is a multiple of V) the first output's
// coordinates cost five divisions and the others step (kh, kw) like an odometer; a unit that
// spans two positions computes each output on its own. I is the index type of the body: uint32_t
// when every index and offset fits (the caller checks). The state of the odometer is small (the
// position's first input row and column, padding subtracted, and the offset of the (b, c) plane)
// so the body fits the 32 registers that keep two 1024-thread blocks resident. A row or column
// left of the padding wraps around to a value above h_in / w_in (the caller's bounds make that
// so), which one unsigned comparison rejects.
template <typename T, typename I>
HKB_DEVICE void im2col_body(I first, I step, I n, I h_out, I w_out, I h_k, I w_k, I stride,
                            I padding, I dilation, I c_in, I h_in, I w_in, const I* s, const T* src,
                            T* dst) {
  constexpr int V = pack_width<T>::value;
  const I kk = h_k * w_k;
  const I k_all = c_in * kk;
  const I units = n / V + (n % V != 0);
  const bool packed = hkb::is_aligned(dst, sizeof(T) * V);
  for (I u = first; u < units; u += step) {
    const I e = u * V;
    const I p = e / k_all;
    const I q = e - p * k_all;
    if (q + V <= k_all && e + V <= n) {
      const I c = q / kk;
      const I r = q - c * kk;
      I kh = r / w_k;
      I kw = r - kh * w_k;
      const I t = p / w_out;
      const I b = t / h_out;
      const I y0 = (t - b * h_out) * stride - padding;
      const I x0 = (p - t * w_out) * stride - padding;
      I plane = b * s[0] + c * s[1];
      hkb::Pack<T, V> out;
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const I y = y0 + kh * dilation;
        const I x = x0 + kw * dilation;
        out.v[j] = y < h_in && x < w_in ? src[plane + y * s[2] + x * s[3]] : zero<T>();
        if (j + 1 < V && ++kw == w_k) {
          kw = 0;
          if (++kh == h_k) {
            kh = 0;
            plane += s[1];
          }
        }
      }
      if (packed) {
        *reinterpret_cast<hkb::Pack<T, V>*>(dst + e) = out;
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j) dst[e + j] = out.v[j];
      }
    } else {
#pragma unroll 1
      for (I j = 0; j < V && e + j < n; ++j) {
        dst[e + j] = im2col_at(e + j, h_out, w_out, h_k, w_k, stride, padding, dilation, c_in, h_in,
                               w_in, s, src);
      }
    }
  }
}

// info = [src dims(4), src strides(4)].
template <typename T>
__device__ void im2col(uint64_t n, uint64_t h_out, uint64_t w_out, uint64_t h_k, uint64_t w_k,
                       uint64_t stride, uint64_t padding, uint64_t dilation, const size_t* info,
                       const T* src, T* dst) {
  constexpr int V = pack_width<T>::value;
  const uint32_t per_block = units_per_block(n, V);
  const uint64_t first = static_cast<uint64_t>(blockIdx.x) * per_block + threadIdx.x;
  if (threadIdx.x >= per_block || first >= n / V + (n % V != 0)) return;
  const uint64_t step = static_cast<uint64_t>(gridDim.x) * per_block;
  const uint64_t b = info[0], c_in = info[1], h_in = info[2], w_in = info[3];
  const uint64_t total = b * h_out * w_out * c_in * h_k * w_k;
  if (n > total) n = total;
  if (n == 0) return;
  // Largest value any index expression of the body reaches.
  const uint64_t lim = 0xFFFFFFFFull - 64;
  const uint64_t max_y = (h_out - 1) * stride + (h_k - 1) * dilation;
  const uint64_t max_x = (w_out - 1) * stride + (w_k - 1) * dilation;
  const uint64_t max_off =
      (b - 1) * info[4] + (c_in - 1) * info[5] + (h_in - 1) * info[6] + (w_in - 1) * info[7];
  const bool fits32 = total <= lim && max_y <= lim && max_x <= lim && max_off <= lim &&
                      h_in + padding <= lim && w_in + padding <= lim && stride <= lim &&
                      dilation <= lim && padding <= lim;
  if (fits32) {
    const uint32_t s[4] = {static_cast<uint32_t>(info[4]), static_cast<uint32_t>(info[5]),
                           static_cast<uint32_t>(info[6]), static_cast<uint32_t>(info[7])};
    // A step past every unit ends the loop as well as the real one and cannot wrap.
    const uint64_t units = n / V + (n % V != 0);
    const uint32_t step32 = static_cast<uint32_t>(step < units ? step : units);
    im2col_body<T, uint32_t>(first, step32, n, h_out, w_out, h_k, w_k, stride, padding, dilation,
                             c_in, h_in, w_in, s, src, dst);
  } else {
    const uint64_t s[4] = {info[4], info[5], info[6], info[7]};
    im2col_body<T, uint64_t>(first, step, n, h_out, w_out, h_k, w_k, stride, padding, dilation,
                             c_in, h_in, w_in, s, src, dst);
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

// One unit = V consecutive outputs of one output row (the last unit of a row may be short), so
// the row's coordinates cost three divisions per V outputs and rows whose length is a multiple
// of V are written with one store per unit.
template <typename T, typename I>
HKB_DEVICE void upsample_nearest_body(uint64_t first, uint64_t step, I w_out, I h_out,
                                      double w_scale, double h_scale, I c, I w_in, I h_in,
                                      const I* s, I rows, const T* src, T* dst) {
  constexpr int V = pack_width<T>::value;
  const I chunks = h_out / V + (h_out % V != 0);
  const I units = rows * chunks;
  const bool packed = hkb::is_aligned(dst, sizeof(T) * V) && h_out % V == 0;
  for (uint64_t u = first; u < units; u += step) {
    const I row = static_cast<I>(u) / chunks;
    const I y0 = (static_cast<I>(u) - row * chunks) * V;
    const I plane = row / w_out;
    const I ox = row - plane * w_out;
    const I b = plane / c;
    const I ch = plane - b * c;
    const T* s_row = src + b * s[0] + ch * s[1] + nearest_source(ox, w_scale, w_in) * s[2];
    T* d = dst + row * h_out + y0;
    hkb::Pack<T, V> out;
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const I y = y0 + j;
      out.v[j] = y < h_out ? s_row[nearest_source(y, h_scale, h_in) * s[3]] : zero<T>();
    }
    if (packed) {
      *reinterpret_cast<hkb::Pack<T, V>*>(d) = out;
    } else {
#pragma unroll
      for (int j = 0; j < V; ++j) {
        if (y0 + j < h_out) d[j] = out.v[j];
      }
    }
  }
}

// The output count is no argument (batch and channels live in info), so the split cannot tell
// whether the grid covers the outputs, nor which blocks are past the end, without a memory read:
// every block takes its own range of units (see units_per_block), which candle's geometry fills
// and any other grid strides over. For 2-byte values that is 128 threads a block (the copy
// measurements: 50%, against 64% for 256 threads over the first half of the blocks).
template <typename T>
__device__ void upsample_nearest2d(uint64_t w_out, uint64_t h_out, double w_scale, double h_scale,
                                   const size_t* info, const T* src, T* dst) {
  constexpr int V = pack_width<T>::value;
  const uint32_t per_block = (blockDim.x + V - 1) / V;
  if (threadIdx.x >= per_block) return;
  const uint64_t first = static_cast<uint64_t>(blockIdx.x) * per_block + threadIdx.x;
  const uint64_t step = static_cast<uint64_t>(gridDim.x) * per_block;
  const uint64_t b = info[0], c = info[1], w_in = info[2], h_in = info[3];
  const uint64_t rows = b * c * w_out;
  if (rows == 0 || h_out == 0 || w_in == 0 || h_in == 0) return;
  const uint64_t lim = 0xFFFFFFFFull - 64;
  const uint64_t max_off =
      (b - 1) * info[4] + (c - 1) * info[5] + (w_in - 1) * info[6] + (h_in - 1) * info[7];
  if (rows * h_out <= lim && max_off <= lim) {
    const uint32_t s[4] = {static_cast<uint32_t>(info[4]), static_cast<uint32_t>(info[5]),
                           static_cast<uint32_t>(info[6]), static_cast<uint32_t>(info[7])};
    upsample_nearest_body<T, uint32_t>(first, step, w_out, h_out, w_scale, h_scale, c, w_in, h_in,
                                       s, rows, src, dst);
  } else {
    const uint64_t s[4] = {info[4], info[5], info[6], info[7]};
    upsample_nearest_body<T, uint64_t>(first, step, w_out, h_out, w_scale, h_scale, c, w_in, h_in,
                                       s, rows, src, dst);
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
HKB_CONV_DTYPES(HKB_CONV)
