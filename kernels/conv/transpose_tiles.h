// conv_transpose1d/2d by tiles (f32, f16, bf16; dilation 1): the outputs split by stride phase.
// An output o of an axis with padded position o + padding = q * stride + r reads, through taps
// k = r + j * stride, the inputs q - j: every output of a phase (ry, rx) reads the same taps, so a
// phase is a matrix product (output channels x positions, summed over input channels x taps). A
// block takes tiles of kConvTRows * kConvTThreadCo output channels x (its threads / kConvTRows) *
// TP (tuning::kConvTThreadPos1d / 2d) positions of one phase (convt_busy_blocks share the tiles),
// stages kConvTChunk input channels of one tap at a time in shared memory (double-buffered: the
// next chunk's copies fly while the block computes on this one) and each thread sums a register
// tile in the wide accumulator. 32-bit index math: transpose_tiles_apply says when every offset
// fits.
#pragma once

#include "common.h"

namespace {

// The sizes of a transposed convolution as 32-bit values; 1-D passes a unit y axis.
struct ConvTGeom {
  uint32_t b, c_in, c_out, h_in, w_in, h_out, w_out, kh, kw, sy, sx, py, px;
  uint32_t ss[4];  // src strides (b, c, y, x)
  uint32_t ks[4];  // kernel strides (c_in, c_out, y, x)
};

// One axis of phase r: outputs q * s + r - pad for q in [q0, q0 + nq), taps r + j * s for j < nt.
struct ConvTAxis {
  uint32_t q0, nq, nt;
};

HKB_DEVICE ConvTAxis convt_axis(uint32_t r, uint32_t s, uint32_t pad, uint32_t out, uint32_t k) {
  ConvTAxis a;
  a.q0 = r >= pad ? 0u : (pad - r + s - 1) / s;  // first q with q * s + r >= pad
  const uint32_t end = out + pad;                // padded end of the output
  const uint32_t q_end = r >= end ? 0u : (end - r + s - 1) / s;
  a.nq = q_end > a.q0 ? q_end - a.q0 : 0u;
  a.nt = r < k ? (k - 1 - r) / s + 1 : 0u;
  return a;
}

// The dtypes the tiles take: those summed in f32 (f64 and the 64-bit integer sums keep the direct
// path: their register tiles would not fit the 64 registers of a 1024-thread block).
template <typename T>
struct convt_tiled_dtype {
  static constexpr bool value = std::is_same<hkb::wide_acc_t<T>, float>::value;
};

// The blocks that take work in the kernels of the f32-summed dtypes (tiles or direct, grid-stride
// over these blocks: any grid is correct), or 0 in the others: resident_grid_range's blocks,
// kConvTThreadsPerMP threads a multiprocessor, so that most of candle's grid of a block per 1024
// outputs leaves on its index alone, before any read.
HKB_DEVICE uint32_t convt_busy_blocks() {
  static_assert(hkb::tuning::kConvTThreadsPerMP % 1024 == 0, "whole 1024-thread units");
  const hkb::UnitRange r = hkb::resident_grid_range(hkb::tuning::kConvTThreadsPerMP / 1024);
  return r.begin == hkb::kIdle ? 0u : static_cast<uint32_t>(r.step / blockDim.x);
}

HKB_DEVICE bool fits31(uint64_t v) {
  return v < (1ull << 31);
}

// Whether the tiles take a launch (the same answer for every thread): an f32-summed dtype,
// dilation 1, a stride up to kConvTMaxStride, blocks of at least kConvTRows threads, and every
// input, kernel and output offset, every padded position and the chunk count below 2^31.
// src_dims/src_strides and k_dims/k_strides: the info views (nd dims each).
template <typename T>
HKB_DEVICE bool transpose_tiles_apply(uint64_t nd, const size_t* sd, const size_t* ss,
                                      const size_t* kd, const size_t* ks, uint64_t h_out,
                                      uint64_t w_out, uint64_t stride, uint64_t padding,
                                      uint64_t dilation) {
  if (!convt_tiled_dtype<T>::value || dilation != 1 || stride == 0) return false;
  if (stride > hkb::tuning::kConvTMaxStride || blockDim.x < hkb::tuning::kConvTRows) return false;
  for (uint64_t d = 0; d < nd; ++d) {
    if (!fits31(sd[d]) || !fits31(kd[d])) return false;
  }
  if (!hkb::offsets_fit_31(nd, sd, ss) || !hkb::offsets_fit_31(nd, kd, ks)) return false;
  // A tile's chunks, taps x channel chunks (a kernel broadcast along its taps has large dims).
  uint64_t chunks = (sd[1] + hkb::tuning::kConvTChunk - 1) / hkb::tuning::kConvTChunk;
  for (uint64_t d = 2; d < nd; ++d) {
    chunks *= kd[d];
    if (chunks >= (1ull << 31)) return false;
  }
  const uint64_t limit = 1ull << 29;  // positions, pads and their sums stay below 2^31
  if (h_out >= limit || w_out >= limit || padding >= limit) return false;
  const uint64_t plane = h_out * w_out, bc = sd[0] * kd[1];  // each factor below 2^31
  return plane < (1ull << 31) && bc < (1ull << 31) && (plane == 0 || bc < (1ull << 31) / plane);
}

// The sizes of a launch that transpose_tiles_apply took: info of conv_transpose2d (16 values), or
// of conv_transpose1d (12: a unit y axis).
HKB_DEVICE ConvTGeom convt_geom(const size_t* info, bool two_d, uint64_t h_out, uint64_t w_out,
                                uint64_t stride, uint64_t padding) {
  auto u = [](uint64_t v) { return static_cast<uint32_t>(v); };
  ConvTGeom g;
  const size_t* sd = info;
  const size_t* ss = info + (two_d ? 4 : 3);
  const size_t* kd = info + (two_d ? 8 : 6);
  const size_t* ks = info + (two_d ? 12 : 9);
  g.b = u(sd[0]), g.c_in = u(sd[1]), g.c_out = u(kd[1]);
  g.ss[0] = u(ss[0]), g.ss[1] = u(ss[1]), g.ks[0] = u(ks[0]), g.ks[1] = u(ks[1]);
  if (two_d) {
    g.h_in = u(sd[2]), g.w_in = u(sd[3]), g.kh = u(kd[2]), g.kw = u(kd[3]);
    g.ss[2] = u(ss[2]), g.ss[3] = u(ss[3]), g.ks[2] = u(ks[2]), g.ks[3] = u(ks[3]);
    g.h_out = u(h_out), g.sy = u(stride), g.py = u(padding);
  } else {
    g.h_in = 1, g.w_in = u(sd[2]), g.kh = 1, g.kw = u(kd[2]);
    g.ss[2] = 0, g.ss[3] = u(ss[2]), g.ks[2] = 0, g.ks[3] = u(ks[2]);
    g.h_out = 1, g.sy = 1, g.py = 0;
  }
  g.w_out = u(w_out), g.sx = u(stride), g.px = u(padding);
  return g;
}

// Stores *from (or 0 when !ok) as the accumulator type into shared memory: asynchronously where
// the value is already that type (f32), converted on the way otherwise.
template <typename T, typename A>
HKB_DEVICE void convt_put(A* to, const T* from, bool ok) {
  if constexpr (sizeof(T) == sizeof(A)) {
    hkb::async_copy_to_shared(to, from, ok);
  } else {
    *to = ok ? hkb::to_wide_acc(*from) : A(0);
  }
}

// N accumulators read from shared memory as one access.
template <typename A, uint32_t N>
struct alignas(sizeof(A) * N) ConvTVec {
  A v[N];
};

template <uint32_t TP, typename T>
__device__ void conv_transpose_tiles(const ConvTGeom& geom, uint32_t busy, const T* src,
                                     const T* kernel, T* dst) {
  using A = hkb::wide_acc_t<T>;
  constexpr uint32_t TC = hkb::tuning::kConvTThreadCo;
  constexpr uint32_t R = hkb::tuning::kConvTRows, KC = hkb::tuning::kConvTChunk;
  constexpr uint32_t TM = TC * R;               // output channels of a tile
  constexpr uint32_t kMaxTN = TP * (1024 / R);  // positions of a tile of a 1024-thread block
  // Aligned so that a thread reads its TC weights and TP inputs of a step as single wide loads.
  alignas(16) __shared__ A w_s[2][KC][TM];
  alignas(16) __shared__ A x_s[2][KC][kMaxTN];
  // Per position of the tile: the source offset of its batch, its q on both axes (kFar where the
  // position is past the phase: every tap then reads 0) and its output offset (kNone past it).
  __shared__ uint32_t t_src[kMaxTN], t_qy[kMaxTN], t_qx[kMaxTN], t_dst[kMaxTN];
  constexpr uint32_t kFar = 0xFFFFFFFFu, kNone = 0xFFFFFFFFu;  // q - j stays >= 2^31
  constexpr uint32_t kOutCo = 2 * KC / R;  // channels a thread row whose sums fill the buffers
  static_assert(2 * KC % R == 0 && TC % kOutCo == 0, "whole channels of every row a pass");

  const uint32_t tid = threadIdx.x, bd = blockDim.x;
  // The sizes in shared memory: read again after every barrier instead of held in registers
  // beside the sums (held, f16/bf16 conv_transpose2d spills on sm_90).
  __shared__ ConvTGeom g_s;
  if (tid == 0) g_s = geom;
  hkb::block_sync();
  const ConvTGeom& g = g_s;
  const uint32_t cols = bd / R, tn = cols * TP;  // thread columns, positions of a tile
  // The register tile (row, col) of a thread (row >= R: none). Where the columns come in eights,
  // every 32 consecutive threads take 4 rows x 8 columns, so that a step's shared reads of such a
  // team are 64 bytes of weights and 128 of inputs (a team of 32 columns reads 512 bytes of
  // inputs: four times the shared memory's width); else row-major.
  uint32_t row, col;
  if (cols % 8 == 0) {
    const uint32_t team = tid / 32, in_team = tid % 32, teams_per_row = cols / 8;
    const uint32_t trow = team / teams_per_row;
    row = trow * 4 + in_team / 8;
    col = (team - trow * teams_per_row) * 8 + in_team % 8;
  } else {
    row = tid / cols;
    col = tid - row * cols;
  }
  const uint32_t xn = tid % tn, xc0 = tid / tn, xc_step = bd / tn;  // share of the x staging
  const uint32_t tiles_co = (g.c_out + TM - 1) / TM, cchunks = (g.c_in + KC - 1) / KC;
  const uint32_t plane = g.h_out * g.w_out, phases = g.sy * g.sx;
  // The phases' axes and first tiles, once a block (phases in order: the first ones have the most
  // taps per axis, so their tiles start first). Held in shared memory: recomputed per tile, their
  // divisions spilled SGPRs on gfx90a / gfx940.
  constexpr uint32_t kMaxS = static_cast<uint32_t>(hkb::tuning::kConvTMaxStride);
  __shared__ ConvTAxis axes_y[kMaxS], axes_x[kMaxS];
  __shared__ uint32_t phase_first[kMaxS * kMaxS + 1];
  if (tid == 0) {
    for (uint32_t r = 0; r < g.sy; ++r) axes_y[r] = convt_axis(r, g.sy, g.py, g.h_out, g.kh);
    for (uint32_t r = 0; r < g.sx; ++r) axes_x[r] = convt_axis(r, g.sx, g.px, g.w_out, g.kw);
    uint32_t first = 0;
    for (uint32_t p = 0; p < phases; ++p) {
      phase_first[p] = first;
      const uint32_t n = g.b * axes_y[p / g.sx].nq * axes_x[p % g.sx].nq;  // below 2^31
      first += tiles_co * ((n + tn - 1) / tn);
    }
    phase_first[phases] = first;
  }
  hkb::block_sync();
  const uint32_t tiles = phase_first[phases];
  // Rounds of `busy` tiles, every other one in reverse block order, so that a block that took one
  // of the first phases' tiles (the longest) takes one of the last ones in the next round.
  bool reverse = false;
  for (uint32_t first = 0; first < tiles; first += busy, reverse = !reverse) {
    const uint32_t tile = first + (reverse ? busy - 1 - blockIdx.x : blockIdx.x);
    if (tile >= tiles) continue;  // the same for the block
    uint32_t ry = 0, rx = 0, p = 0;
    while (tile >= phase_first[p + 1]) {
      ++p;
      if (++rx == g.sx) rx = 0, ++ry;
    }
    const ConvTAxis ay = axes_y[ry], ax = axes_x[rx];
    const uint32_t rest = tile - phase_first[p];
    const uint32_t n0 = (rest / tiles_co) * tn, co0 = (rest % tiles_co) * TM;
    const uint32_t nq = ay.nq * ax.nq, n_phase = g.b * nq;
    for (uint32_t n = tid; n < tn; n += bd) {
      const uint32_t ng = n0 + n;
      if (ng < n_phase) {
        const uint32_t bi = ng / nq, r = ng - bi * nq, yl = r / ax.nq, xl = r - yl * ax.nq;
        const uint32_t qy = ay.q0 + yl, qx = ax.q0 + xl;
        t_src[n] = bi * g.ss[0];
        t_qy[n] = qy;
        t_qx[n] = qx;
        t_dst[n] = bi * g.c_out * plane + (qy * g.sy + ry - g.py) * g.w_out + qx * g.sx + rx - g.px;
      } else {
        t_src[n] = 0;
        t_qy[n] = kFar;
        t_qx[n] = kFar;
        t_dst[n] = kNone;
      }
    }
    hkb::block_sync();
    // Chunk ch: tap t = ch / cchunks (taps (jy, jx) row-major), input channels from
    // (ch % cchunks) * KC.
    const uint32_t chunks = ay.nt * ax.nt * cchunks;
    auto stage = [&](uint32_t ch, uint32_t buf) {
      const uint32_t t = ch / cchunks, c0 = (ch - t * cchunks) * KC;
      const uint32_t jy = t / ax.nt, jx = t - jy * ax.nt;
      const uint32_t k_off = (ry + jy * g.sy) * g.ks[2] + (rx + jx * g.sx) * g.ks[3];
      for (uint32_t e = tid; e < KC * TM; e += bd) {
        const uint32_t cl = e / TM, m = e % TM, c = c0 + cl, co = co0 + m;
        const bool ok = c < g.c_in && co < g.c_out;
        const T* from = ok ? kernel + (c * g.ks[0] + co * g.ks[1] + k_off) : kernel;
        convt_put(&w_s[buf][cl][m], from, ok);
      }
      if (xc0 < xc_step) {
        const uint32_t iy = t_qy[xn] - jy, ix = t_qx[xn] - jx;  // wrap past 0: invalid
        const bool in = iy < g.h_in && ix < g.w_in;
        const uint32_t base = in ? t_src[xn] + iy * g.ss[2] + ix * g.ss[3] : 0u;
        for (uint32_t cl = xc0; cl < KC; cl += xc_step) {
          const uint32_t c = c0 + cl;
          const bool ok = in && c < g.c_in;
          convt_put(&x_s[buf][cl][xn], ok ? src + (base + c * g.ss[1]) : src, ok);
        }
      }
      hkb::async_copy_commit<T>();
    };
    A acc[TC][TP];
#pragma unroll
    for (uint32_t i = 0; i < TC; ++i) {
#pragma unroll
      for (uint32_t j = 0; j < TP; ++j) acc[i][j] = A(0);
    }
    if (chunks > 0) stage(0, 0);
    for (uint32_t ch = 0; ch < chunks; ++ch) {
      hkb::async_copy_wait<T>();
      hkb::block_sync();  // chunk ch is in; every thread is done with buffer (ch + 1) & 1
      if (ch + 1 < chunks) stage(ch + 1, (ch + 1) & 1);
      if (row < R) {
        const A* wr = &w_s[ch & 1][0][row * TC];
        const A* xr = &x_s[ch & 1][0][col * TP];
#pragma unroll
        for (uint32_t kk = 0; kk < KC; ++kk) {
          const ConvTVec<A, TC> a = *reinterpret_cast<const ConvTVec<A, TC>*>(wr + kk * TM);
          const ConvTVec<A, TP> v = *reinterpret_cast<const ConvTVec<A, TP>*>(xr + kk * kMaxTN);
#pragma unroll
          for (uint32_t i = 0; i < TC; ++i) {
#pragma unroll
            for (uint32_t j = 0; j < TP; ++j) acc[i][j] += a.v[i] * v.v[j];
          }
        }
      }
    }
    // The sums leave through shared memory (the input buffers), kOutCo of a thread's TC channels
    // a pass (the sums of a pass die before its stores), so that consecutive threads store
    // consecutive positions of the phase (stride apart in dst) instead of every thread its own TP
    // positions, each in another sector.
    A* out_s = &x_s[0][0][0];
#pragma unroll
    for (uint32_t i0 = 0; i0 < TC; i0 += kOutCo) {
      hkb::block_sync();  // every thread is done with the buffers (the last chunk, the last pass)
      if (row < R) {
#pragma unroll
        for (uint32_t i = 0; i < kOutCo; ++i) {
          ConvTVec<A, TP> v;
#pragma unroll
          for (uint32_t j = 0; j < TP; ++j) v.v[j] = acc[i0 + i][j];
          *reinterpret_cast<ConvTVec<A, TP>*>(out_s + (row * kOutCo + i) * kMaxTN + col * TP) = v;
        }
      }
      hkb::block_sync();
      const uint32_t d = t_dst[xn];
      if (xc0 < xc_step && d != kNone) {
        for (uint32_t cl = xc0; cl < R * kOutCo; cl += xc_step) {
          const uint32_t co = co0 + (cl / kOutCo) * TC + i0 + cl % kOutCo;
          if (co < g.c_out) dst[d + co * plane] = hkb::from_acc<T>(out_s[cl * kMaxTN + xn]);
        }
      }
    }
    hkb::block_sync();  // the next tile rewrites the position table and buffer 0
  }
}

}  // namespace
