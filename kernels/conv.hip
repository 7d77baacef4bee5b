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
//
// Layout: each op family is a header of conv/ (direct.h and its transposed tiles, col1d.h,
// im2col.h and its strategies, pool.h, upsample.h); this file holds the entry points.
#include "common/dtype_lists.h"
#include "conv/col1d.h"
#include "conv/direct.h"
#include "conv/im2col.h"
#include "conv/pool.h"
#include "conv/upsample.h"

// The dtypes candle builds its conv module for.
#define HKB_CONV_DTYPES(X) \
  X(bf16, hkb::bf16) X(f16, hkb::f16) X(f32, float) X(f64, double) X(u8, uint8_t) X(u32, uint32_t)

// candle launches every CONV kernel with 1024-thread blocks (for_num_elems): bound the registers
// so such a launch always fits (nvcc gives im2col on 1- and 2-byte types 72 to 90 otherwise).
#define HKB_CONV_GLOBAL HKB_GLOBAL HKB_OCCUPANCY(1024, 1)
// The copying kernels (im2col, im2col1d, upsample, pooling) are bound by memory latency: two
// 1024-thread blocks per multiprocessor (at most 32 registers per thread on NVIDIA) keep twice the
// bytes in flight of one (avg pooling's 64-bit path spills under that cap, and it is still faster).
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
  HKB_CONV_COPY_GLOBAL void avg_pool2d_##TAG(                                                      \
      const size_t src_numel, const size_t w_k, const size_t h_k, const size_t w_stride,           \
      const size_t h_stride, const size_t* info, const T* src, T* dst) {                           \
    pool2d<T, false>(w_k, h_k, w_stride, h_stride, info, src, dst);                                \
  }                                                                                                \
  HKB_CONV_COPY_GLOBAL void max_pool2d_##TAG(                                                      \
      const size_t src_numel, const size_t w_k, const size_t h_k, const size_t w_stride,           \
      const size_t h_stride, const size_t* info, const T* src, T* dst) {                           \
    pool2d<T, true>(w_k, h_k, w_stride, h_stride, info, src, dst);                                 \
  }                                                                                                \
  HKB_CONV_COPY_GLOBAL void upsample_nearest2d_##TAG(const size_t w_out, const size_t h_out,       \
                                                     const double w_scale, const double h_scale,   \
                                                     const size_t* info, const T* src, T* dst) {   \
    upsample_nearest2d<T>(w_out, h_out, w_scale, h_scale, info, src, dst);                         \
  }                                                                                                \
  HKB_CONV_COPY_GLOBAL void upsample_bilinear2d_##TAG(                                             \
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
  HKB_CONV_COPY_GLOBAL void im2col1d_##TAG(                                                        \
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
