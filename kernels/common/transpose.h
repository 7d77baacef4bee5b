// Transposed inputs of the unary-shaped maps (elementwise.h, map_strided_in): a strided view whose
// inner dim is strided while another dim k has stride 1 (a transposed matrix, a transposed key).
// Element by element, either a warp's reads or its writes scatter over 32 lines; through square
// tiles in shared memory both are whole lines: the block reads a tile along dim k, then writes it
// along the inner dim. Every thread of a block runs the same tiles (two barriers a tile); 2-byte
// values move by pairs through tiles twice as wide (map_transposed_pairs).
#pragma once

#include "dtypes.h"
#include "indexmath.h"

namespace hkb {

constexpr uint32_t kTile = tuning::kTransposeTile;

// The view as tiles: dims[k] x dims[last] planes, one for each index of the other dims (groups).
struct TransposeView {
  uint32_t k;           // the input's stride-1 dim
  uint32_t rows, cols;  // dims[k], dims[last]
  uint32_t col_stride;  // the input's stride along the inner dim
  uint32_t out_row;     // the output's stride along dim k: the product of the dims after it
  uint32_t groups;      // planes
  uint32_t tiles_j, tiles_k, tiles;  // tiles along the inner dim, along dim k, in all
};

// Whether a strided view of n elements is such a transpose with every offset below 2^31 (32-bit
// index math) and both tiled dims at least tuning::kTransposeMinDim long (shorter ones would leave
// most of each tile empty).
HKB_DEVICE bool transpose_of(uint64_t n, uint64_t num_dims, const size_t* dims,
                             const size_t* strides, TransposeView& v) {
  if (num_dims < 2 || n >= (1ull << 31)) return false;
  const uint64_t last = num_dims - 1;
  if (strides[last] <= 1 || dims[last] < tuning::kTransposeMinDim) return false;
  uint64_t k = num_dims, end = 1;
  for (uint64_t d = 0; d < num_dims; ++d) {
    if (k == num_dims && dims[d] > 1 && strides[d] == 1) k = d;
    if (strides[d] >= (1ull << 31)) return false;
    end += (dims[d] - 1) * strides[d];  // n > 0 here: no dim is 0, each below 2^31
  }
  if (k == num_dims || dims[k] < tuning::kTransposeMinDim || end > (1ull << 31)) return false;
  uint64_t out_row = 1;
  for (uint64_t d = k + 1; d < num_dims; ++d) out_row *= dims[d];
  v.k = static_cast<uint32_t>(k);
  v.rows = static_cast<uint32_t>(dims[k]);
  v.cols = static_cast<uint32_t>(dims[last]);
  v.col_stride = static_cast<uint32_t>(strides[last]);
  v.out_row = static_cast<uint32_t>(out_row);
  v.groups = static_cast<uint32_t>(n / (static_cast<uint64_t>(v.rows) * v.cols));
  return true;
}

// The view cut into square tiles of side kT.
template <uint32_t kT>
HKB_DEVICE void cut_tiles(TransposeView& v) {
  v.tiles_j = (v.cols + kT - 1) / kT;
  v.tiles_k = (v.rows + kT - 1) / kT;
  v.tiles = v.groups * v.tiles_j * v.tiles_k;  // <= n: each tile holds at least one element
}

// Tile t of the view (tiles of side kT): where it starts in the input and the output, and how many
// of its kT rows (along dim k) and columns (along the inner dim) exist.
struct TileAt {
  uint32_t in, out, rows, cols;
};
template <uint32_t kT>
HKB_DEVICE TileAt tile_at(const TransposeView& v, FastDiv fj, FastDiv fk, uint32_t t,
                          uint64_t num_dims, const size_t* dims, const size_t* strides) {
  const uint32_t q = fast_div(t, fj), g = fast_div(q, fk);
  const uint32_t i0 = (q - g * v.tiles_k) * kT, j0 = (t - q * v.tiles_j) * kT;
  TileAt a{i0 + j0 * v.col_stride, i0 * v.out_row + j0, v.rows - i0, v.cols - j0};
  if (a.rows > kT) a.rows = kT;
  if (a.cols > kT) a.cols = kT;
  uint32_t span = v.cols, rem = g;  // span: the output's stride along dim d
  for (uint64_t d = num_dims - 1; d-- > 0;) {
    if (d == v.k) {
      span *= v.rows;
      continue;
    }
    const uint32_t dim = static_cast<uint32_t>(dims[d]), r = rem / dim;
    const uint32_t idx = rem - r * dim;
    rem = r;
    a.in += idx * static_cast<uint32_t>(strides[d]);
    a.out += idx * span;
    span *= dim;
  }
  return a;
}

// Element e of a tile: row e % kTile, column e / kTile while it is read (consecutive threads along
// dim k), row e / kTile, column e % kTile while it is written (along the inner dim). The shared
// tile is [column][row], rows of kTile + 1 so that neither walk hits one bank twice.
constexpr uint32_t kTileElems = kTile * kTile, kTilePitch = kTile + 1;

template <typename TI>
HKB_DEVICE void tile_load(const TileAt& a, const TransposeView& v, const TI* in, uint32_t e,
                          TI& x) {
  const uint32_t r = e % kTile, c = e / kTile;
  if (r < a.rows && c < a.cols) x = in[a.in + r + c * v.col_stride];
}
template <typename TI, typename TO, typename F>
HKB_DEVICE void tile_store(const TileAt& a, const TransposeView& v, const TI* tile, TO* out,
                           uint32_t e, F f) {
  const uint32_t r = e / kTile, c = e % kTile;
  if (r < a.rows && c < a.cols) out[a.out + r * v.out_row + c] = f(tile[c * kTilePitch + r]);
}

// Whether the pair path below fits the view: every pair it reads (two neighbours along dim k) and
// writes (two along the inner dim) is one aligned vector access, and both tiled dims fill a tile.
template <typename TI, typename TO>
HKB_DEVICE bool pairs_fit(const TransposeView& v, uint64_t num_dims, const size_t* dims,
                          const size_t* strides, const TI* in, const TO* out) {
  constexpr uint32_t kPT = 2 * kTile;
  if (v.rows < kPT || v.cols < kPT || v.cols % 2 != 0) return false;  // cols: the output's rows
  for (uint64_t d = 0; d < num_dims; ++d) {
    if (d != v.k && dims[d] > 1 && strides[d] % 2 != 0) return false;
  }
  return reinterpret_cast<uintptr_t>(in) % sizeof(Pack<TI, 2>) == 0 &&
         reinterpret_cast<uintptr_t>(out) % sizeof(Pack<TO, 2>) == 0;
}

// 2-byte values in 1024-thread blocks: tiles of 2 kTile, a 2 x 2 block of values a thread. Lane l
// of warp w reads rows 2l and 2l + 1 of columns 2w and 2w + 1 (two vector loads, each a warp's
// whole line), swaps the block's halves in registers, and writes rows 2l, 2l + 1 as pairs of
// columns into the shared tile ([row][column pair], rows of kTile + 1 pairs: the lanes of each
// half-warp write one of the two rows first, so that no bank is hit twice); then warp w writes
// rows w and w + kTile, a pair of columns a lane. One shared store, shared load, global load and
// global store move two values, where the square tiles move one: those were bound by the
// load/store pipes at half of 4-byte values' bytes. kIn tiles in flight, corners as below.
template <typename TI, typename TO, typename F>
HKB_DEVICE void map_transposed_pairs(TransposeView v, uint64_t num_dims, const size_t* dims,
                                     const size_t* strides, const TI* in, TO* out, F f,
                                     uint32_t first, uint32_t step, uint32_t* tile) {
  static_assert(sizeof(TI) == 2, "pairs of 2-byte values in 32-bit words (low half first)");
  constexpr uint32_t kPT = 2 * kTile;
  constexpr int kIn = tuning::kTransposePairsInFlight;
  using Out2 = Pack<TO, 2>;
  cut_tiles<kPT>(v);
  const FastDiv fj = make_fast_div(v.tiles_j), fk = make_fast_div(v.tiles_k);
  const uint32_t tid = threadIdx.x, lane = tid % kTile, w = tid / kTile;
  const uint32_t r = 2 * lane, half = lane / (kTile / 2);  // half: which row goes first
  const uint32_t* in_w = reinterpret_cast<const uint32_t*>(in);
  const uint16_t* in_h = reinterpret_cast<const uint16_t*>(in);
  Out2* out2 = reinterpret_cast<Out2*>(out);
  __shared__ TileAt at[kIn];
  for (uint32_t t0 = first * kIn; t0 < v.tiles; t0 += step * kIn) {
    const uint32_t m = v.tiles - t0;  // tiles left, at least 1
    if (tid < kIn && tid < m) at[tid] = tile_at<kPT>(v, fj, fk, t0 + tid, num_dims, dims, strides);
    block_sync();
    uint32_t x[kIn][2] = {};  // columns 2w, 2w + 1; rows 2l (low half), 2l + 1
#pragma unroll
    for (int u = 0; u < kIn; ++u) {
      if (static_cast<uint32_t>(u) >= m) continue;
      const TileAt a = at[u];
      if (a.rows == kPT && a.cols == kPT) {  // a whole tile (the same for the whole block)
        const uint32_t p = a.in / 2 + w * v.col_stride + lane;  // words: a.in, strides even
        x[u][0] = in_w[p];
        x[u][1] = in_w[p + v.col_stride / 2];
        continue;
      }
#pragma unroll
      for (uint32_t h = 0; h < 2; ++h) {
        const uint32_t c = 2 * w + h, e = a.in + r + c * v.col_stride;
        if (c >= a.cols || r >= a.rows) continue;
        x[u][h] = r + 1 < a.rows ? in_w[e / 2] : in_h[e];
      }
    }
#pragma unroll
    for (int u = 0; u < kIn; ++u) {
      if (static_cast<uint32_t>(u) >= m) continue;  // the same for the whole block
      const uint32_t row0 = (x[u][0] & 0xFFFFu) | (x[u][1] << 16);
      const uint32_t row1 = (x[u][0] >> 16) | (x[u][1] & 0xFFFF0000u);
      tile[(r + half) * (kTile + 1) + w] = half ? row1 : row0;
      tile[(r + 1 - half) * (kTile + 1) + w] = half ? row0 : row1;
      block_sync();
      const TileAt a = at[u];
#pragma unroll
      for (uint32_t h = 0; h < 2; ++h) {
        const uint32_t row = w + h * kTile, c = 2 * lane;
        if (row >= a.rows || c >= a.cols) continue;
        const uint32_t y = tile[row * (kTile + 1) + lane];
        const uint16_t lo = static_cast<uint16_t>(y), hi = static_cast<uint16_t>(y >> 16);
        TI y0, y1;
        __builtin_memcpy(&y0, &lo, 2);
        __builtin_memcpy(&y1, &hi, 2);
        const Out2 z{{f(y0), f(y1)}};
        const uint32_t o = a.out + row * v.out_row;  // even: the output's rows are
        if (a.cols == kPT) {                         // a whole row
          store_whole(out2 + o / 2 + lane, z);
        } else {
          out[o + c] = z.v[0];
          if (c + 1 < a.cols) out[o + c + 1] = z.v[1];
        }
      }
      block_sync();  // the next tile overwrites this one, the next round the corners
    }
  }
}

// out[i] = f(in[strided(i)]) for a view of n elements (info = [dims, strides]) when it is such a
// transpose (then true), over its tiles first, first + step, ... for this block. A thread holds
// tuning::kTransposeInFlight loaded elements before its first shared store: of as many tiles (one
// element each) in 1024-thread blocks, of one tile in smaller ones; 2-byte values in 1024-thread
// blocks go by pairs where they fit (map_transposed_pairs). Not inlined, and the test is inside:
// beside the other strided paths it would spill under NVIDIA's 32-register cap.
template <typename TI, typename TO, typename F>
__device__ __noinline__ bool map_transposed(uint64_t n, uint64_t num_dims, const size_t* info,
                                            const TI* in, TO* out, F f, uint32_t first,
                                            uint32_t step) {
  const size_t* dims = info;
  const size_t* strides = info + num_dims;
  TransposeView v;
  if (!transpose_of(n, num_dims, dims, strides, v)) return false;
  constexpr int kIn = tuning::kTransposeInFlight;
  constexpr size_t kSquareBytes = kTile * kTilePitch * sizeof(TI);
  constexpr size_t kPairBytes = sizeof(TI) == 2 ? 2 * kTile * kTilePitch * sizeof(uint32_t) : 0;
  __shared__ uint64_t raw[((kSquareBytes > kPairBytes ? kSquareBytes : kPairBytes) + 7) / 8];
  const uint32_t tid = threadIdx.x, threads = blockDim.x;
  static_assert(kTileElems == 1024, "a tile an element per thread of the largest block");
  if constexpr (sizeof(TI) == 2) {
    if (threads == kTileElems && pairs_fit(v, num_dims, dims, strides, in, out)) {
      map_transposed_pairs(v, num_dims, dims, strides, in, out, f, first, step,
                           reinterpret_cast<uint32_t*>(raw));
      return true;
    }
  }
  TI* tile = reinterpret_cast<TI*>(raw);
  cut_tiles<kTile>(v);
  const FastDiv fj = make_fast_div(v.tiles_j), fk = make_fast_div(v.tiles_k);
  if (threads == kTileElems) {  // one element of kIn tiles a thread
    // The tiles' corners are computed once a tile by kIn threads and read from shared memory:
    // computed by every thread at its load and its store, they made the kernel issue-bound.
    __shared__ TileAt at[kIn];
    for (uint32_t t0 = first * kIn; t0 < v.tiles; t0 += step * kIn) {
      const uint32_t m = v.tiles - t0;  // tiles left, at least 1
      if (tid < kIn && tid < m) {
        at[tid] = tile_at<kTile>(v, fj, fk, t0 + tid, num_dims, dims, strides);
      }
      block_sync();
      TI x[kIn];
#pragma unroll
      for (int u = 0; u < kIn; ++u) {
        if (static_cast<uint32_t>(u) < m) tile_load(TileAt(at[u]), v, in, tid, x[u]);
      }
#pragma unroll
      for (int u = 0; u < kIn; ++u) {
        if (static_cast<uint32_t>(u) < m) {  // the same for the whole block
          tile[(tid / kTile) * kTilePitch + tid % kTile] = x[u];
          block_sync();
          tile_store(TileAt(at[u]), v, tile, out, tid, f);
          block_sync();  // the next tile overwrites this one, the next round the corners
        }
      }
    }
    return true;
  }
  for (uint32_t t = first; t < v.tiles; t += step) {
    const TileAt a = tile_at<kTile>(v, fj, fk, t, num_dims, dims, strides);
    for (uint32_t base = tid; base < kTileElems; base += kIn * threads) {
      TI x[kIn];
#pragma unroll
      for (int u = 0; u < kIn; ++u) {
        const uint32_t e = base + u * threads;
        if (e < kTileElems) tile_load(a, v, in, e, x[u]);
      }
#pragma unroll
      for (int u = 0; u < kIn; ++u) {
        const uint32_t e = base + u * threads;
        if (e < kTileElems) tile[(e / kTile) * kTilePitch + e % kTile] = x[u];
      }
    }
    block_sync();
    for (uint32_t e = tid; e < kTileElems; e += threads) tile_store(a, v, tile, out, e, f);
    block_sync();
  }
  return true;
}

}  // namespace hkb
