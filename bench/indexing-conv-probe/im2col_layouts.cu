// Which thread-to-output layout moves im2col fastest (H100, candle's launch geometry)? Each
// layout is checked against a host im2col, then timed as % of a device-to-device copy:
//   nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -I../../kernels im2col_layouts.cu
// Layouts (32-bit index math, a resident split: the first busy blocks loop over the tiles):
//   kernel: hkb's im2col_f32 / im2col_bf16 (kernels/conv.hip) as it is (since 2026-11-23 the
//            tap-table path, im2col_taps, which came out of these measurements).
//   lanes-k: a warp's lanes take 32 consecutive outputs, R rounds (scalar stores, coalesced;
//            loads of one instruction touch the rows of a few taps); coordinates step as a mixed
//            radix number (b, oy, ox, c, kh, kw) instead of dividing per output.
//   lanes-pos: a warp's lanes take 32 consecutive output positions and KC consecutive taps each
//            (loads coalesced along x; each lane stores its KC outputs as vectors).
//   smem: lanes-pos loads into a 32 x 32 shared tile per warp, then lanes take 32 consecutive
//            outputs of one position to store (both sides coalesced); 8 warps of a block.
//   smem-all P: every warp, a P x (256 / P) tile.
// Build with -DBUSY_QUARTERS=Q (busy blocks: Q quarters of a block per SM) and optionally
// -DMIN_BLOCKS=1 (64 registers). Measured (H100, 2026-11-23, % of copy bandwidth, Q = 8):
//   8x64x64x64 k3 f32: kernel 42, lanes-k R8 47, lanes-pos 19, smem 38-39, smem-all 43-45;
//   bf16: kernel 19, lanes-k 24, lanes-pos KC8 24, smem-all 21-23. Q = 4 is worse for every
//   layout but the kernel (lanes-k 33); 64 registers (MIN_BLOCKS=1) too.
// Every gathering layout lands between 40% and 47% for f32 and takes the same time for bf16 (half
// the bytes): ncu (H100) showed lanes-k issuing an instruction in 72% of cycles at about 77
// instructions per output, the old kernel 58. The tap-table path that came of it (im2col_taps,
// about 30 instructions per output) gave f32 48, bf16 25.
// 2026-11-24, row tiles (row-tile: a block copies the source rows of one output row and C
// channels into shared memory, then each thread writes VW taps of every G-th position; MODE 1:
// cp.async with the next tile in flight; noload: the writes alone; seq-store: a plain write of
// the output, the bound). f32 8x64x64x64 k3: row-tile 46-49%, async 51-53%, async v4 56-58%,
// noload v4 65-70%, seq-store 78% (every number here includes about 10 us in which candle's
// 18432 idle blocks retire). They became the kernel's im2col_rows (kernels/conv.hip): f32 63%,
// bf16 39%; smaller launches keep the taps (4x32x56x56 s2 22%, 2x3x224x224 k7 40%, d2 16%).
#define HKB_CONV_PROBE
#include <cstring>
#include <string>
#include <type_traits>

#include "../../kernels/conv.hip"
HKB_CONV(f32, float)
HKB_CONV(bf16, hkb::bf16)
#include "common.cuh"

#ifndef BUSY_QUARTERS
#define BUSY_QUARTERS 8
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 2
#endif
namespace probe {

struct Shape {
  uint32_t n_pos, h_out, w_out, c_in, h_k, w_k, stride, padding, dilation, h_in, w_in;
  uint32_t s[4];
  __host__ __device__ uint32_t k_all() const { return c_in * h_k * w_k; }
};

// The mixed radix digits of an output index: position (b, oy, ox) and tap (c, kh, kw).
struct Digits {
  uint32_t b, oy, ox, c, kh, kw;
};
__device__ Digits split(uint32_t e, const Shape& a) {
  const uint32_t k_all = a.c_in * a.h_k * a.w_k;
  const uint32_t p = e / k_all, k = e - p * k_all;
  Digits d;
  d.c = k / (a.h_k * a.w_k);
  const uint32_t r = k - d.c * a.h_k * a.w_k;
  d.kh = r / a.w_k;
  d.kw = r - d.kh * a.w_k;
  const uint32_t t = p / a.w_out;
  d.ox = p - t * a.w_out;
  d.b = t / a.h_out;
  d.oy = t - d.b * a.h_out;
  return d;
}
// digit += add + carry_in (add below radix); returns the carry out.
__device__ uint32_t add_digit(uint32_t& digit, uint32_t add, uint32_t radix, uint32_t carry_in) {
  digit += add + carry_in;
  const uint32_t c = digit >= radix;
  digit -= c ? radix : 0;
  return c;
}
// d += s (s's digits each below their radix).
__device__ void add(Digits& d, const Digits& s, const Shape& a) {
  uint32_t c = add_digit(d.kw, s.kw, a.w_k, 0);
  c = add_digit(d.kh, s.kh, a.h_k, c);
  c = add_digit(d.c, s.c, a.c_in, c);
  c = add_digit(d.ox, s.ox, a.w_out, c);
  c = add_digit(d.oy, s.oy, a.h_out, c);
  d.b += s.b + c;
}
template <typename T>
__device__ T read(const Digits& d, const Shape& a, const T* src) {
  const uint32_t y = d.oy * a.stride - a.padding + d.kh * a.dilation;
  const uint32_t x = d.ox * a.stride - a.padding + d.kw * a.dilation;
  return y < a.h_in && x < a.w_in ? src[d.b * a.s[0] + d.c * a.s[1] + y * a.s[2] + x * a.s[3]]
                                  : T{};
}

__device__ uint32_t busy_blocks() {
  const uint32_t cap = hkb::multiprocessors() * BUSY_QUARTERS / 4;
  return gridDim.x < cap ? gridDim.x : cap;
}

template <typename T, int R>
__global__ void __launch_bounds__(1024, MIN_BLOCKS)
    lanes_k(Shape a, const T* __restrict__ src, T* __restrict__ dst) {
  const uint32_t blocks = busy_blocks();
  if (blockIdx.x >= blocks) return;
  const uint32_t n = a.n_pos * a.k_all();
  const uint32_t warps = blocks * (blockDim.x / 32);
  const uint32_t warp = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
  const Digits step = split(32, a);
  for (uint32_t base = warp * 32 * R; base < n; base += warps * 32 * R) {
    Digits d = split(base + lane, a);
    T v[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      v[r] = base + lane + r * 32 < n ? read(d, a, src) : T{};
      if (r + 1 < R) add(d, step, a);
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
      if (base + lane + r * 32 < n) dst[base + lane + r * 32] = v[r];
    }
  }
}

template <typename T, int KC>
__global__ void __launch_bounds__(1024, MIN_BLOCKS)
    lanes_pos(Shape a, const T* __restrict__ src, T* __restrict__ dst) {
  const uint32_t blocks = busy_blocks();
  if (blockIdx.x >= blocks) return;
  const uint32_t k_all = a.k_all();  // a multiple of KC here
  const uint32_t chunks = k_all / KC;
  const uint32_t tiles = (a.n_pos + 31) / 32 * chunks;
  const uint32_t warps = blocks * (blockDim.x / 32);
  const uint32_t warp = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
  for (uint32_t tile = warp; tile < tiles; tile += warps) {
    const uint32_t pt = tile / chunks, chunk = tile - pt * chunks;
    const uint32_t p = pt * 32 + lane;
    if (p >= a.n_pos) continue;
    Digits d = split(p * k_all + chunk * KC, a);
    const Digits one = {0, 0, 0, 0, 0, 1};
    hkb::Pack<T, KC> v;
#pragma unroll
    for (int j = 0; j < KC; ++j) {
      v.v[j] = read(d, a, src);
      if (j + 1 < KC) add(d, one, a);
    }
    constexpr int C = 16 / sizeof(T);
#pragma unroll
    for (int j = 0; j < KC / C; ++j) {
      hkb::Pack<T, C> w;
#pragma unroll
      for (int i = 0; i < C; ++i) w.v[i] = v.v[j * C + i];
      reinterpret_cast<hkb::Pack<T, C>*>(dst + p * k_all + chunk * KC)[j] = w;
    }
  }
}

// 8 warps of each busy block, a 32 x 33 tile each.
template <typename T>
__global__ void __launch_bounds__(1024, MIN_BLOCKS)
    smem_tile(Shape a, const T* __restrict__ src, T* __restrict__ dst) {
  __shared__ T tile[8][32][33];
  const uint32_t blocks = busy_blocks();
  if (blockIdx.x >= blocks || threadIdx.x >= 256) return;
  const uint32_t k_all = a.k_all();
  const uint32_t chunks = (k_all + 31) / 32;
  const uint32_t tiles = (a.n_pos + 31) / 32 * chunks;
  const uint32_t warps = blocks * 8;
  const uint32_t w = threadIdx.x / 32, lane = threadIdx.x % 32;
  const uint32_t warp = blockIdx.x * 8 + w;
  for (uint32_t t = warp; t < tiles; t += warps) {
    const uint32_t pt = t / chunks, chunk = t - pt * chunks;
    const uint32_t p = pt * 32 + lane, k0 = chunk * 32;
    const uint32_t kn = k_all - k0 < 32 ? k_all - k0 : 32;
    const uint32_t pn = a.n_pos - pt * 32 < 32 ? a.n_pos - pt * 32 : 32;
    if (p < a.n_pos) {
      Digits d = split(p * k_all + k0, a);
      const Digits one = {0, 0, 0, 0, 0, 1};
#pragma unroll 8
      for (uint32_t j = 0; j < kn; ++j) {
        tile[w][lane][j] = read(d, a, src);
        add(d, one, a);
      }
    }
    __syncwarp();
    if (lane < kn) {
      T* out = dst + (pt * 32) * k_all + k0 + lane;
#pragma unroll 8
      for (uint32_t r = 0; r < pn; ++r) out[r * k_all] = tile[w][r][lane];
    }
    __syncwarp();
  }
}

// Every warp of the block: a P x KT tile (P * KT = 256, 8 outputs a lane). Loads: lanes take P
// consecutive positions and 32 / P taps; stores: lanes take KT consecutive taps of 32 / KT
// positions.
template <typename T, int P>
__global__ void __launch_bounds__(1024, MIN_BLOCKS)
    smem_all(Shape a, const T* __restrict__ src, T* __restrict__ dst) {
  constexpr int KT = 256 / P, LK = 32 / P, LP = 32 / KT;
  __shared__ T tile[32][P][KT + 1];
  const uint32_t blocks = busy_blocks();
  if (blockIdx.x >= blocks) return;
  const uint32_t k_all = a.k_all();
  const uint32_t chunks = (k_all + KT - 1) / KT;
  const uint32_t tiles = (a.n_pos + P - 1) / P * chunks;
  const uint32_t wpb = blockDim.x / 32;
  const uint32_t warps = blocks * wpb;
  const uint32_t w = threadIdx.x / 32, lane = threadIdx.x % 32;
  const uint32_t warp = blockIdx.x * wpb + w;
  const Digits step = {0, 0, 0, LK / (a.h_k * a.w_k), (LK / a.w_k) % a.h_k, LK % a.w_k};
  for (uint32_t t = warp; t < tiles; t += warps) {
    const uint32_t pt = t / chunks, chunk = t - pt * chunks;
    const uint32_t p0 = pt * P, k0 = chunk * KT;
    {
      const uint32_t p = p0 + lane % P, kk0 = lane / P;
      Digits d = split((p < a.n_pos ? p : 0) * k_all + (k0 + kk0 < k_all ? k0 + kk0 : 0), a);
#pragma unroll
      for (int j = 0; j < KT / LK; ++j) {
        const uint32_t kk = kk0 + j * LK;
        if (p < a.n_pos && k0 + kk < k_all) tile[w][lane % P][kk] = read(d, a, src);
        if (j + 1 < KT / LK) add(d, step, a);
      }
    }
    __syncwarp();
    {
      const uint32_t kk = lane % KT, pp0 = lane / KT;
#pragma unroll
      for (int j = 0; j < P / LP; ++j) {
        const uint32_t pp = pp0 + j * LP;
        if (p0 + pp < a.n_pos && k0 + kk < k_all)
          dst[(p0 + pp) * k_all + k0 + kk] = tile[w][pp][kk];
      }
    }
    __syncwarp();
  }
}

// Row tiles: a unit is one output row (b, oy) and C channels. The block loads the source rows the
// unit reads (C channels x h_k rows x the span of columns, zeros for padding) into shared memory,
// then each thread writes one tap k (of C * kk) for every G-th output column: a store of a warp
// writes consecutive outputs, and each output costs a shared load, a store and two adds.
#ifndef TILE_BYTES
#define TILE_BYTES 16384
#endif
struct TilePlan {
  uint32_t span, pitch, plane, c;  // columns, row pitch, channel pitch (elements), channels a unit
};
// cost of a unit of c channels, in rounds of the block
__device__ uint32_t tile_cost(uint32_t c, const Shape& a, uint32_t span, uint32_t vw) {
  const uint32_t kk = a.h_k * a.w_k, bd = blockDim.x;
  const uint32_t groups = bd / (c * kk / vw);
  const uint32_t chunks = (a.c_in + c - 1) / c;
  const uint32_t write = (a.w_out + groups - 1) / groups;
  const uint32_t load = (c * a.h_k * span + bd - 1) / bd * 3;
  return chunks * (write + load + 2);
}
__device__ void cp_async4(void* smem, const void* g, uint32_t bytes) {
  const uint32_t sa = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(sa), "l"(g), "r"(bytes));
}
// MODE 0: loads through registers; 1: cp.async, the next unit's tile in flight during the writes;
// 2: no loads at all (timing only: the output is wrong).
template <typename T, int MODE, int VW>
__global__ void __launch_bounds__(1024, MIN_BLOCKS)
    row_tile(Shape a, const T* __restrict__ src, T* __restrict__ dst) {
  constexpr uint32_t cap = TILE_BYTES / sizeof(T);
  __shared__ T tiles[2][cap];
  __shared__ uint32_t chosen;
  const uint32_t blocks = busy_blocks();
  if (blockIdx.x >= blocks) return;
  const uint32_t kk = a.h_k * a.w_k, k_all = a.c_in * kk, bd = blockDim.x;
  const uint32_t span = (a.w_out - 1) * a.stride + (a.w_k - 1) * a.dilation + 1;
  const uint32_t P = span + ((a.w_k * a.dilation - span) & 31);
  const uint32_t Q = a.h_k * P + ((kk * a.dilation - a.h_k * P) & 31);
  if (threadIdx.x < 32) {
    uint32_t cmax = cap / Q;
    if (cmax > a.c_in) cmax = a.c_in;
    if (cmax > bd / kk) cmax = bd / kk;
    uint32_t best = 0xFFFFFFFFu, best_c = 0;
    for (uint32_t c = cmax - threadIdx.x; c >= 1 && c <= cmax; c -= 32) {
      if ((c * kk) % VW) continue;
      const uint32_t cost = tile_cost(c, a, span, VW);
      if (cost < best) best = cost, best_c = c;
    }
    for (int o = 16; o > 0; o >>= 1) {
      const uint32_t ob = __shfl_xor_sync(0xFFFFFFFFu, best, o);
      const uint32_t oc = __shfl_xor_sync(0xFFFFFFFFu, best_c, o);
      if (ob < best || (ob == best && oc > best_c)) best = ob, best_c = oc;
    }
    if (threadIdx.x == 0) chosen = best_c;
  }
  __syncthreads();
  const uint32_t C = chosen, L = C * kk / VW, G = bd / L;
  const uint32_t g = threadIdx.x / L, k = (threadIdx.x - g * L) * VW;
  uint32_t tk[VW];
#pragma unroll
  for (int i = 0; i < VW; ++i) {
    const uint32_t c = (k + i) / kk, r = (k + i) - c * kk, kh = r / a.w_k, kw = r - kh * a.w_k;
    tk[i] = c * Q + kh * P + kw * a.dilation + g * a.stride;
  }
  const uint32_t lx0 = threadIdx.x % span, lr0 = threadIdx.x / span;
  const uint32_t lkh0 = lr0 % a.h_k, lc0 = lr0 / a.h_k;
  const uint32_t dx = bd % span, dr = bd / span, dkh = dr % a.h_k, dcl = dr / a.h_k;
  const uint32_t chunks = (a.c_in + C - 1) / C;
  const uint32_t rows = a.n_pos / a.w_out;
  const uint32_t units = rows * chunks;
  auto load = [&](uint32_t u, T* t) {
    const uint32_t row = u / chunks, chunk = u - row * chunks;
    const uint32_t b = row / a.h_out, oy = row - b * a.h_out;
    const uint32_t c0 = chunk * C, cu = a.c_in - c0 < C ? a.c_in - c0 : C;
    const uint32_t y0 = oy * a.stride - a.padding;
    const T* plane = src + b * a.s[0] + c0 * a.s[1];
    uint32_t lx = lx0, lkh = lkh0, lc = lc0;
#pragma unroll 2
    while (lc < cu) {
      const uint32_t y = y0 + lkh * a.dilation, x = lx - a.padding;
      const bool in = y < a.h_in && x < a.w_in;
      T* to = t + lc * Q + lkh * P + lx;
      if (MODE == 1) {
        cp_async4(to, in ? plane + lc * a.s[1] + y * a.s[2] + x * a.s[3] : src, in ? 4 : 0);
      } else {
        *to = in ? plane[lc * a.s[1] + y * a.s[2] + x * a.s[3]] : T{};
      }
      lx += dx;
      const uint32_t c1 = lx >= span;
      lx -= c1 ? span : 0;
      lkh += dkh + c1;
      const uint32_t c2 = lkh >= a.h_k;
      lkh -= c2 ? a.h_k : 0;
      lc += dcl + c2;
    }
  };
  uint32_t buf = 0;
  if (MODE == 1) {
    if (blockIdx.x < units) load(blockIdx.x, tiles[0]);
    asm volatile("cp.async.commit_group;");
  }
  for (uint32_t u = blockIdx.x; u < units; u += blocks, buf ^= 1) {
    const uint32_t row = u / chunks, chunk = u - row * chunks;
    const uint32_t c0 = chunk * C, cu = a.c_in - c0 < C ? a.c_in - c0 : C;
    T* t = tiles[buf];
    if (MODE == 0) load(u, t);
    if (MODE == 1) asm volatile("cp.async.wait_group 0;" ::: "memory");
    __syncthreads();
    if (MODE == 1) {
      if (u + blocks < units) load(u + blocks, tiles[buf ^ 1]);
      asm volatile("cp.async.commit_group;");
    }
    if (g < G && k < cu * kk) {
      T* out = dst + row * a.w_out * k_all + c0 * kk + g * k_all + k;
      const T* in = t;
      const uint32_t ostep = G * k_all, istep = G * a.stride;
      uint32_t ox = g;
#pragma unroll 4
      for (; ox < a.w_out; ox += G) {
        hkb::Pack<T, VW> v;
#pragma unroll
        for (int i = 0; i < VW; ++i) v.v[i] = in[tk[i]];
        *reinterpret_cast<hkb::Pack<T, VW>*>(out) = v;
        out += ostep;
        in += istep;
      }
    }
  }
}

// Write-only reference: VW outputs per lane, grid-stride over the busy blocks.
template <typename T, int VW>
__global__ void __launch_bounds__(1024, MIN_BLOCKS) seq_store(uint32_t n, T* __restrict__ dst) {
  const uint32_t blocks = busy_blocks();
  if (blockIdx.x >= blocks) return;
  hkb::Pack<T, VW> v;
  for (int i = 0; i < VW; ++i) v.v[i] = T{};
  for (uint32_t i = (blockIdx.x * blockDim.x + threadIdx.x) * VW; i + VW <= n;
       i += blocks * blockDim.x * VW)
    *reinterpret_cast<hkb::Pack<T, VW>*>(dst + i) = v;
}
}  // namespace probe

template <typename T>
std::vector<T> host_im2col(const probe::Shape& a, uint32_t b, const std::vector<T>& src) {
  std::vector<T> out(static_cast<size_t>(a.n_pos) * a.k_all());
  size_t e = 0;
  for (uint32_t bi = 0; bi < b; ++bi)
    for (uint32_t oy = 0; oy < a.h_out; ++oy)
      for (uint32_t ox = 0; ox < a.w_out; ++ox)
        for (uint32_t c = 0; c < a.c_in; ++c)
          for (uint32_t kh = 0; kh < a.h_k; ++kh)
            for (uint32_t kw = 0; kw < a.w_k; ++kw) {
              const int64_t y = int64_t(oy) * a.stride - a.padding + int64_t(kh) * a.dilation;
              const int64_t x = int64_t(ox) * a.stride - a.padding + int64_t(kw) * a.dilation;
              T v{};
              if (y >= 0 && y < a.h_in && x >= 0 && x < a.w_in)
                v = src[bi * a.s[0] + c * a.s[1] + y * a.s[2] + x * a.s[3]];
              out[e++] = v;
            }
  return out;
}

template <typename T>
void run(const char* tname, double cbw, uint32_t b, uint32_t c, uint32_t h, uint32_t w, uint32_t k,
         uint32_t stride, uint32_t pad, uint32_t dil) {
  probe::Shape a;
  a.h_out = (h + 2 * pad - dil * (k - 1) - 1) / stride + 1;
  a.w_out = (w + 2 * pad - dil * (k - 1) - 1) / stride + 1;
  a.n_pos = b * a.h_out * a.w_out;
  a.c_in = c, a.h_k = k, a.w_k = k, a.stride = stride, a.padding = pad, a.dilation = dil;
  a.h_in = h, a.w_in = w;
  a.s[0] = c * h * w, a.s[1] = h * w, a.s[2] = w, a.s[3] = 1;
  const size_t n = static_cast<size_t>(a.n_pos) * a.k_all(), ns = size_t(b) * c * h * w;
  std::vector<T> hs(ns);
  for (size_t i = 0; i < ns; ++i) {
    const uint32_t bits = static_cast<uint32_t>(i * 2654435761u) & 0x3FFFFFu;
    float f = 1.0f + bits * 1e-7f;
    std::memcpy(&hs[i], reinterpret_cast<char*>(&f) + (4 - sizeof(T)), sizeof(T));
  }
  const std::vector<T> want = host_im2col(a, b, hs);
  struct {
    T *src, *dst;
    size_t* info;
  } m;
  CK(cudaMalloc(&m.src, ns * sizeof(T)));
  CK(cudaMalloc(&m.dst, n * sizeof(T)));
  CK(cudaMalloc(&m.info, 8 * sizeof(size_t)));
  const size_t hi[8] = {b, c, h, w, a.s[0], a.s[1], a.s[2], a.s[3]};
  CK(cudaMemcpy(m.info, hi, sizeof hi, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(m.src, hs.data(), ns * sizeof(T), cudaMemcpyHostToDevice));
  const double bytes = 1.0 * (n + ns) * sizeof(T);
  const dim3 grid = cgrid(n);
  auto check_time = [&](const char* name, auto launch) {
    CK(cudaMemset(m.dst, 0xFF, n * sizeof(T)));
    launch();
    CK(cudaDeviceSynchronize());
    std::vector<T> got(n);
    CK(cudaMemcpy(got.data(), m.dst, n * sizeof(T), cudaMemcpyDeviceToHost));
    const bool ok = std::memcmp(got.data(), want.data(), n * sizeof(T)) == 0;
    char label[96];
    std::snprintf(label, sizeof label, "%s %s %ux%ux%ux%u k%u s%u p%u d%u", name, tname, b, c, h, w,
                  k, stride, pad, dil);
    if (!ok && !std::strstr(name, "noload")) {  // noload: timing only, its output is not written
      std::printf("%-48s MISMATCH\n", label);
      return;
    }
    row(label, bytes, time_us(launch), cbw);
  };
  if constexpr (sizeof(T) == 4) {
    check_time("kernel", [&] {
      im2col_f32<<<grid, 1024>>>(n, a.h_out, a.w_out, k, k, stride, pad, dil, m.info, m.src, m.dst);
    });
  } else {
    check_time("kernel", [&] {
      im2col_bf16<<<grid, 1024>>>(n, a.h_out, a.w_out, k, k, stride, pad, dil, m.info, m.src,
                                  m.dst);
    });
  }
  {
    const uint32_t span = (a.w_out - 1) * stride + (k - 1) * dil + 1;
    const uint32_t P = span + ((k * dil - span) & 31);
    const uint32_t Q = k * P + ((k * k * dil - k * P) & 31);
    if (Q <= TILE_BYTES / sizeof(T) && k * k <= 1024) {
      // The three modes (through registers; cp.async, 4-byte values only; no loads) at VW outputs
      // a store.
      auto modes = [&](auto vw, const char* suffix) {
        constexpr int VW = decltype(vw)::value;
        if (a.k_all() % VW != 0) return;
        const std::string s = suffix;
        check_time(("row-tile" + s).c_str(),
                   [&] { probe::row_tile<T, 0, VW><<<grid, 1024>>>(a, m.src, m.dst); });
        if (sizeof(T) == 4) {
          check_time(("row-tile async" + s).c_str(),
                     [&] { probe::row_tile<T, 1, VW><<<grid, 1024>>>(a, m.src, m.dst); });
        }
        check_time(("row-tile noload" + s).c_str(),
                   [&] { probe::row_tile<T, 2, VW><<<grid, 1024>>>(a, m.src, m.dst); });
      };
      modes(std::integral_constant<int, 1>{}, "");
      modes(std::integral_constant<int, 4>{}, " v4");
      modes(std::integral_constant<int, 2>{}, " v2");
      check_time("seq-store noload", [&] { probe::seq_store<T, 1><<<grid, 1024>>>(n, m.dst); });
      check_time("seq-store v4 noload", [&] { probe::seq_store<T, 4><<<grid, 1024>>>(n, m.dst); });
    }
  }
  check_time("lanes-k R4", [&] { probe::lanes_k<T, 4><<<grid, 1024>>>(a, m.src, m.dst); });
  check_time("lanes-k R8", [&] { probe::lanes_k<T, 8><<<grid, 1024>>>(a, m.src, m.dst); });
  if (a.k_all() % 8 == 0) {
    check_time("lanes-pos KC8", [&] { probe::lanes_pos<T, 8><<<grid, 1024>>>(a, m.src, m.dst); });
  }
  if (a.k_all() % 16 == 0) {
    check_time("lanes-pos KC16", [&] { probe::lanes_pos<T, 16><<<grid, 1024>>>(a, m.src, m.dst); });
  }
  check_time("smem", [&] { probe::smem_tile<T><<<grid, 1024>>>(a, m.src, m.dst); });
  check_time("smem-all P32", [&] { probe::smem_all<T, 32><<<grid, 1024>>>(a, m.src, m.dst); });
  check_time("smem-all P16", [&] { probe::smem_all<T, 16><<<grid, 1024>>>(a, m.src, m.dst); });
  check_time("smem-all P8", [&] { probe::smem_all<T, 8><<<grid, 1024>>>(a, m.src, m.dst); });
  cudaFree(m.src);
  cudaFree(m.dst);
  cudaFree(m.info);
}

int main() {
  const double cbw = copy_bw(8ull * 64 * 256 * 256 * 4);
  run<float>("f32", cbw, 8, 64, 64, 64, 3, 1, 1, 1);
  run<hkb::bf16>("bf16", cbw, 8, 64, 64, 64, 3, 1, 1, 1);
  run<float>("f32", cbw, 4, 32, 56, 56, 3, 2, 1, 1);
  run<float>("f32", cbw, 2, 3, 224, 224, 7, 2, 3, 1);
  run<float>("f32", cbw, 4, 16, 32, 48, 3, 1, 2, 2);
  return 0;
}
