// im2col strategy "row tiles": source rows copied into shared memory, written as whole sectors.
#pragma once

#include "im2col_shape.h"

namespace {

// Strategy "row tiles", the main path of whole waves (at least kIm2colRowTileMin outputs a busy
// block). A unit of work is R consecutive output rows of one image and C consecutive channels. The
// block copies the source rows the unit reads (C channels x TR = (R - 1) * stride + (h_k - 1) *
// dilation + 1 rows x `span` columns, zeros for the padding) into shared memory; then thread (grp,
// k) writes taps k .. k + VW - 1 of positions grp, grp + G, ... of the unit, one VW-output store
// each: a warp's store writes consecutive outputs, and an output costs one shared load and a share
// of a store. Two tiles: the next unit's copy (platform.h's async copies) is in flight while the
// threads write the current one. The first wave picks (R, C) by a cost model, one R per lane
// (row_tile_plan). Why: every layout that gathers one output at a time from the source, the tap
// table included, is bound by index work and scattered loads per output.
constexpr uint32_t kIm2colTileBytes = hkb::tuning::kIm2colTileBytes;
static_assert(2 * kIm2colTileBytes >= hkb::tuning::kIm2colTaps * sizeof(uint2),
              "the tap table shares the tiles");
static_assert(kIm2colTileBytes % 16 == 0, "tiles of whole 16-byte words");
constexpr uint64_t kIm2colRowTileMin = hkb::tuning::kIm2colRowTileMin;

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
  // (a run that ends inside a sector leaves it to two units, a quarter slower), or else (no such
  // chunk fits) of vw_mult: whole VW-output stores.
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
// by the first thread, and shared (each thread dividing for itself cost a tenth of the launch).
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
      hkb::async_copy_to_shared(t + (lc * plane_pitch + lj * pitch + lx),
                                in ? plane + (lc * a.s[1] + y * a.s[2] + x * a.s[3]) : src, in);
      // Stepped like RowUnit::add, written out: one helper for both raised nvcc's spills for u8.
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
  hkb::async_copy_commit<T>();
#pragma unroll 1
  for (;;) {
    const RowUnit u = next;
    if (u.b >= batch) break;
    next.add(kb.step, blocks_y, chunks);
    const T* t = tiles + cur * tile_elems;
    hkb::async_copy_wait<T>();
    __syncthreads();  // this unit's tile is complete, and every thread is done with the other one
    cur ^= 1u;
    if (next.b < batch) copy(next, tiles + cur * tile_elems);
    hkb::async_copy_commit<T>();
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

// The row tiles for a launch with 32-bit offsets: false (before any thread writes) unless it writes
// all `total` outputs its info implies, has at least kIm2colRowTileMin of them a busy block, blocks
// of whole waves and a plan that fits. The first wave plans; smem holds the two tiles,
// shared_block the plan of the block.
template <typename T>
HKB_DEVICE bool im2col_row_tiles(const Im2colShape<uint32_t>& a, uint64_t total, uint32_t batch,
                                 uint32_t busy, uint4* smem, RowTileBlock& shared_block,
                                 const T* src, T* dst) {
  if (a.n != total || a.n < static_cast<uint64_t>(busy) * kIm2colRowTileMin ||
      blockDim.x % HKB_WAVE_SIZE != 0) {
    return false;
  }
  constexpr int VW = row_vw<T>::value;
  constexpr uint32_t tile_elems = kIm2colTileBytes / sizeof(T);
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
    return true;
  }
  if (plan.chans != 0) {
    im2col_rows<T, 1>(a, batch, shared_block, tiles, tile_elems, src, dst);
    return true;
  }
  return false;
}

}  // namespace
