// upsample_nearest2d (copying kernel: packs in resident groups, an x2 path, a 32-bit body with
// fast division) and upsample_bilinear2d (resident blocks, tap tables in shared memory, strips of
// rows that reuse each source row's blends).
#pragma once

#include "common.h"

namespace {

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
// h_out * w_out * c (indexmath.h; that body has fewer than 2^31 outputs).
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
// every source twice per output row, element by element. Not inlined: inlined, it made nvcc spill
// in the whole kernel, which cost the general path. s: the source strides (s[3] =
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
  constexpr uint32_t kQuarters =
      kShift ? hkb::tuning::kResidentQuarters : hkb::tuning::kNearestScaledQuarters;
  Group g;
  if (!group_of_block<V, M, true, kQuarters>(&g)) return;
  const uint64_t b = info[0], c = info[1], w_in = info[2], h_in = info[3];
  const uint64_t rows = b * c * w_out;
  if (rows == 0 || h_out == 0 || w_in == 0 || h_in == 0) return;
  const uint64_t lim = 0xFFFFFFFFull - 64;
  const uint64_t max_off =
      (b - 1) * info[4] + (c - 1) * info[5] + (w_in - 1) * info[6] + (h_in - 1) * info[7];
  const bool merged = info[4] == c * info[5];
  // The 32-bit body: fewer than 2^31 outputs (indexmath.h; units below 2^31, see for_group_units).
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
  // leave before any other instruction.
  constexpr uint32_t kMostQuarters =
      hkb::tuning::kResidentQuarters > hkb::tuning::kNearestScaledQuarters
          ? hkb::tuning::kResidentQuarters
          : hkb::tuning::kNearestScaledQuarters;
  if (hkb::past_resident_bound() || blockIdx.x >= hkb::resident_cap(kMostQuarters)) return;
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
// two-tap weights: w1 for i1, 1 - w1 for i0). At the clamped edge both taps are the last pixel and
// it gets weight 1.
struct Tap {
  uint64_t i0, i1;
  double w1;
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

// The taps of one axis for outputs below kBilinearTaps (tuning.h), computed once a block: a
// block's threads all read them, so each output costs table reads instead of its own f64 tap math.
using hkb::tuning::kBilinearTaps;
struct TapTable {
  uint2 off[kBilinearTaps];  // (i0, i1) times the axis's stride: below 2^31
  double w1[kBilinearTaps];
};

HKB_DEVICE void fill_taps(TapTable& t, uint32_t out, double scale, bool align_corners, uint32_t in,
                          uint32_t stride) {
  for (uint32_t o = threadIdx.x; o < out; o += blockDim.x) {
    const Tap tap = bilinear_tap(o, scale, align_corners, in);
    t.off[o] =
        make_uint2(static_cast<uint32_t>(tap.i0) * stride, static_cast<uint32_t>(tap.i1) * stride);
    t.w1[o] = tap.w1;
  }
}

// One output from its two source rows (offsets r0, r1 of s) and two columns (offsets x0, x1),
// the second row and column weighted wy1 and wx1.
template <typename T, typename I>
HKB_DEVICE T bilinear_at(const T* s, I r0, I r1, double wy1, I x0, I x1, double wx1) {
  const double wx0 = 1.0 - wx1, wy0 = 1.0 - wy1;
  const double top = blend(wx0, hkb::to_double(s[r0 + x0]), wx1, hkb::to_double(s[r0 + x1]));
  const double bottom = blend(wx0, hkb::to_double(s[r1 + x0]), wx1, hkb::to_double(s[r1 + x1]));
  return from_double<T>(blend(wy0, top, wy1, bottom));
}

// One output column's horizontal blend of the source row at offset row: its first tap's source is
// col[row], the second dx further, weighted w1.
template <typename T>
HKB_DEVICE double blend_row(const T* col, uint32_t row, uint32_t dx, double w1) {
  const T* p = col + row;
  return blend(1.0 - w1, hkb::to_double(p[0]), w1, hkb::to_double(p[dx]));
}

// Tap-table path: a unit is a strip of kBilinearStripRows rows of one output column. Walking down
// it, a thread blends each source row horizontally once and reuses the blend for every output row
// that reads that source row (an upsampled source row serves several), so each source value is
// converted to f64 and blended about once a strip, not once an output. The operations and their
// order are those of one output at a time.
template <typename T, typename PlaneOffset>
HKB_DEVICE void bilinear_strips(uint32_t begin, uint32_t step, uint32_t planes, uint32_t w_out,
                                uint32_t h_out, const TapTable& xt, const TapTable& yt,
                                const PlaneOffset& plane_offset, const T* src, T* dst) {
  constexpr uint32_t kRows = hkb::tuning::kBilinearStripRows;
  constexpr uint32_t kNoRow = ~0u;  // offsets are below 2^31
  const uint32_t strips = (h_out + kRows - 1) / kRows;
  const uint32_t units = planes * strips * w_out;  // at most the outputs: below 2^31
  const hkb::FastDiv by_w = hkb::make_fast_div(w_out), by_strips = hkb::make_fast_div(strips);
  for (uint32_t u = begin; u < units; u += step) {
    const uint32_t q = hkb::fast_div(u, by_w);
    const uint32_t ox = u - q * w_out, plane = hkb::fast_div(q, by_strips);
    const uint32_t oy0 = (q - plane * strips) * kRows;
    const uint32_t oy_end = oy0 + kRows < h_out ? oy0 + kRows : h_out;
    const uint2 x = xt.off[ox];
    const uint32_t dx = x.y - x.x;
    const double wx1 = xt.w1[ox];
    const T* col = src + (plane_offset(plane) + x.x);
    uint32_t e = (plane * h_out + oy0) * w_out + ox;  // output index: below 2^31
    uint32_t ra = kNoRow, rb = kNoRow;                // the source rows whose blends ha and hb hold
    double ha = 0.0, hb = 0.0;
#pragma unroll 1
    for (uint32_t oy = oy0; oy < oy_end; ++oy, e += w_out) {
      const uint2 y = yt.off[oy];
      // Taps rise with oy: a source row is new or one of the last two.
      const double na = y.x == ra ? ha : y.x == rb ? hb : blend_row(col, y.x, dx, wx1);
      const double nb = y.y == rb ? hb : y.y == y.x ? na : blend_row(col, y.y, dx, wx1);
      const double wy1 = yt.w1[oy];
      dst[e] = from_double<T>(blend(1.0 - wy1, na, wy1, nb));
      ra = y.x;
      rb = y.y;
      ha = na;
      hb = nb;
    }
  }
}

// The 32-bit body (fewer than 2^31 outputs, every source offset below 2^31): fast divisions, and
// the strips of bilinear_strips when both output sizes fit the tap tables.
template <typename T>
HKB_DEVICE void bilinear_body32(hkb::UnitRange r, uint32_t n, uint32_t w_out, uint32_t h_out,
                                double sh, double sw, bool align_corners, const size_t* info,
                                const T* src, T* dst) {
  __shared__ TapTable xt, yt;
  const uint32_t c = static_cast<uint32_t>(info[1]), h_in = static_cast<uint32_t>(info[2]),
                 w_in = static_cast<uint32_t>(info[3]);
  const uint32_t s0 = static_cast<uint32_t>(info[4]), s1 = static_cast<uint32_t>(info[5]),
                 sy = static_cast<uint32_t>(info[6]), sx = static_cast<uint32_t>(info[7]);
  const hkb::FastDiv by_c = hkb::make_fast_div(c);
  // Where c * s1 wraps, plane * s1 still equals b * s0 + ch * s1 modulo 2^32, and that is below
  // 2^31: merged is right whenever the test holds.
  const bool merged = s0 == c * s1;
  const auto plane_offset = [&](uint32_t plane) {
    if (merged) return plane * s1;
    const uint32_t b = hkb::fast_div(plane, by_c);
    return b * s0 + (plane - b * c) * s1;
  };
  // begin and step are below 2^20 here (resident_grid_range), so u + step does not wrap.
  const uint32_t begin = static_cast<uint32_t>(r.begin), step = static_cast<uint32_t>(r.step);
  if (w_out <= kBilinearTaps && h_out <= kBilinearTaps) {  // uniform: all reach the barrier
    fill_taps(xt, w_out, sw, align_corners, w_in, sx);
    fill_taps(yt, h_out, sh, align_corners, h_in, sy);
    __syncthreads();
    bilinear_strips<T>(begin, step, n / (w_out * h_out), w_out, h_out, xt, yt, plane_offset, src,
                       dst);
    return;
  }
  const hkb::FastDiv by_w = hkb::make_fast_div(w_out), by_h = hkb::make_fast_div(h_out);
  for (uint32_t e = begin; e < n; e += step) {
    const uint32_t row = hkb::fast_div(e, by_w);
    const uint32_t plane = hkb::fast_div(row, by_h);
    const uint32_t ox = e - row * w_out, oy = row - plane * h_out;
    const uint32_t off = plane_offset(plane);
    const Tap ty = bilinear_tap(oy, sh, align_corners, h_in);
    const Tap tx = bilinear_tap(ox, sw, align_corners, w_in);
    dst[e] = bilinear_at<T>(
        src, off + static_cast<uint32_t>(ty.i0) * sy, off + static_cast<uint32_t>(ty.i1) * sy,
        ty.w1, static_cast<uint32_t>(tx.i0) * sx, static_cast<uint32_t>(tx.i1) * sx, tx.w1);
  }
}

// Resident blocks (kBilinearBusyPerMP a multiprocessor; the rest of candle's grid leaves at once),
// each thread many outputs: the f64 math and its conversions bound it, not the bytes.
template <typename T>
__device__ void upsample_bilinear2d(uint64_t w_out, uint64_t h_out, bool align_corners,
                                    bool has_scale_h, double scale_h_factor, bool has_scale_w,
                                    double scale_w_factor, const size_t* info, const T* src,
                                    T* dst) {
  if (hkb::past_resident_bound()) return;  // nearly all of candle's grid, on its index alone
  const hkb::UnitRange r = hkb::resident_grid_range(hkb::tuning::kBilinearBusyPerMP);
  if (r.begin == hkb::kIdle) return;
  const uint64_t c = info[1], h_in = info[2], w_in = info[3];
  const size_t* st = info + 4;
  const uint64_t n = info[0] * c * h_out * w_out;
  if (n == 0 || h_in == 0 || w_in == 0) return;
  const double sh = bilinear_scale(h_in, h_out, align_corners, has_scale_h, scale_h_factor);
  const double sw = bilinear_scale(w_in, w_out, align_corners, has_scale_w, scale_w_factor);
  if (n < (1ull << 31) && hkb::offsets_fit_31(4, info, st)) {
    bilinear_body32<T>(r, static_cast<uint32_t>(n), static_cast<uint32_t>(w_out),
                       static_cast<uint32_t>(h_out), sh, sw, align_corners, info, src, dst);
    return;
  }
  for (uint64_t i = r.begin; i < n; i += r.step) {
    const DivMod ox = divmod(i, w_out);
    const DivMod oy = divmod(ox.q, h_out);
    const DivMod bc = divmod(oy.q, c);
    const Tap ty = bilinear_tap(oy.r, sh, align_corners, h_in);
    const Tap tx = bilinear_tap(ox.r, sw, align_corners, w_in);
    const uint64_t off = bc.q * st[0] + bc.r * st[1];
    dst[i] = bilinear_at<T>(src, off + ty.i0 * st[2], off + ty.i1 * st[2], ty.w1, tx.i0 * st[3],
                            tx.i1 * st[3], tx.w1);
  }
}

}  // namespace
