// Transposed inputs of the unary-shaped maps (elementwise.h, map_strided_in): a strided view whose
// inner dim is strided while another dim k has stride 1 (a transposed matrix, a transposed key).
// Element by element, either a warp's reads or its writes scatter over 32 lines; through square
// tiles in shared memory both are whole lines: the block reads a tile along dim k, then writes it
// along the inner dim. Every thread of a block runs the same tiles (two barriers a tile).
#pragma once

#include "indexmath.h"

namespace hkb {

constexpr uint32_t kTile = tuning::kTransposeTile;

// The view as tiles: dims[k] x dims[last] planes, one for each index of the other dims (groups).
struct TransposeView {
  uint32_t k;           // the input's stride-1 dim
  uint32_t rows, cols;  // dims[k], dims[last]
  uint32_t col_stride;  // the input's stride along the inner dim
  uint32_t out_row;     // the output's stride along dim k: the product of the dims after it
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
  v.tiles_j = (v.cols + kTile - 1) / kTile;
  v.tiles_k = (v.rows + kTile - 1) / kTile;
  v.tiles = static_cast<uint32_t>(n / (static_cast<uint64_t>(v.rows) * v.cols)) * v.tiles_j *
            v.tiles_k;  // <= n: each tile holds at least one element
  return true;
}

// Tile t of the view: where it starts in the input and the output, and how many of its kTile rows
// (along dim k) and columns (along the inner dim) exist.
struct TileAt {
  uint32_t in, out, rows, cols;
};
HKB_DEVICE TileAt tile_at(const TransposeView& v, FastDiv fj, FastDiv fk, uint32_t t,
                          uint64_t num_dims, const size_t* dims, const size_t* strides) {
  const uint32_t q = fast_div(t, fj), g = fast_div(q, fk);
  const uint32_t i0 = (q - g * v.tiles_k) * kTile, j0 = (t - q * v.tiles_j) * kTile;
  TileAt a{i0 + j0 * v.col_stride, i0 * v.out_row + j0, v.rows - i0, v.cols - j0};
  if (a.rows > kTile) a.rows = kTile;
  if (a.cols > kTile) a.cols = kTile;
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

// out[i] = f(in[strided(i)]) for a view of n elements (info = [dims, strides]) when it is such a
// transpose (then true), over its tiles first, first + step, ... for this block. A thread holds
// tuning::kTransposeInFlight loaded elements before its first shared store: of as many tiles (one
// element each) in 1024-thread blocks, of one tile in smaller ones. Not inlined, and the test is
// inside: beside the other strided paths it would spill under NVIDIA's 32-register cap.
template <typename TI, typename TO, typename F>
__device__ __noinline__ bool map_transposed(uint64_t n, uint64_t num_dims, const size_t* info,
                                            const TI* in, TO* out, F f, uint32_t first,
                                            uint32_t step) {
  const size_t* dims = info;
  const size_t* strides = info + num_dims;
  TransposeView v;
  if (!transpose_of(n, num_dims, dims, strides, v)) return false;
  constexpr int kIn = tuning::kTransposeInFlight;
  __shared__ uint64_t raw[(kTile * kTilePitch * sizeof(TI) + 7) / 8];  // any TI's alignment
  TI* tile = reinterpret_cast<TI*>(raw);
  const FastDiv fj = make_fast_div(v.tiles_j), fk = make_fast_div(v.tiles_k);
  const uint32_t tid = threadIdx.x, threads = blockDim.x;
  static_assert(kTileElems == 1024, "a tile an element per thread of the largest block");
  if (threads == kTileElems) {  // one element of kIn tiles a thread
    // The tiles' corners are computed once a tile by kIn threads and read from shared memory:
    // computed by every thread at its load and its store, they made the kernel issue-bound.
    __shared__ TileAt at[kIn];
    for (uint32_t t0 = first * kIn; t0 < v.tiles; t0 += step * kIn) {
      const uint32_t m = v.tiles - t0;  // tiles left, at least 1
      if (tid < kIn && tid < m) {
        at[tid] = tile_at(v, fj, fk, t0 + tid, num_dims, dims, strides);
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
    const TileAt a = tile_at(v, fj, fk, t, num_dims, dims, strides);
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
