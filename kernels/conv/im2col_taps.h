// im2col strategy "taps": whole teams of 32 threads stepping through their chunk of outputs with a
// table of the taps in shared memory.
#pragma once

#include "im2col_shape.h"

namespace {

// Strategy "taps", for launches of whole teams of 32 threads that the row tiles do not take. The
// outputs are split into one contiguous chunk per team (teams of the busy blocks), lane l taking
// outputs l, l + 32, ... of its team's chunk, so each store instruction of a team writes 32
// consecutive outputs and each load touches the rows of a few taps. The coordinates are divided out
// once per thread and then stepped: 32 outputs on are dc channels and dt taps on (32 = dc * kk +
// dt), carrying into the next output position when the channel passes c_in. The per-tap part of
// the source offset, row and column comes from a table of the h_k * w_k taps in shared memory, and
// `base` keeps b * s0 + c * s1 + y0 * s2 + x0 * s3 (mod 2^32) for the current position and
// channel: about half the instructions per output of the packs. 32-bit: the caller checks every
// offset fits (Im2colShape<uint32_t>).
constexpr uint32_t kIm2colTaps = hkb::tuning::kIm2colTaps;
constexpr int kIm2colTeam = 32;

// Whether im2col_taps takes a launch of whole teams: a table that holds the taps, with the tap's
// row and column offsets in 16 bits each.
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

}  // namespace
