#!/usr/bin/env python3
"""A plain reading loop under #19's grids (meant as a bound; the products beat it, so it is none:
docs/performance-round2k.md): a kernel that only reads what a matrix-vector product must read (each
block its rows' weights, 16-byte streaming loads, and the activations every row reads again, 16-byte
loads) and stores one float a row, launched on the product's grid and block, with the weights
rotated over >= 256 MB as in bench/quant_cubin_probe.py, timed by the same method (20 launches a
batch, CUDA events, median of 7) and counted as the probe counts (weights + activations + outputs, %
of a 256 MiB device-to-device copy in the same run). Beside it, a device-to-device copy of the
weights' bytes alone (rotated the same way), in the same % (read and written bytes over the 256 MiB
copy's rate). cupy (NVRTC):
    python3 bench/read_bounds.py
"""
import cupy as cp
import numpy as np

from cupy_timing import copy_reference, timeit

SRC = r"""
extern "C" __global__ void read_rows(const uint4* __restrict__ w, const uint4* __restrict__ act,
                                     float* __restrict__ out, int row_vecs, int rows_per_block,
                                     int act_vecs, int ncols, int nrows) {
  const int tid = threadIdx.x + blockDim.x * threadIdx.y, nt = blockDim.x * blockDim.y;
  const int r0 = blockIdx.x * rows_per_block;
  if (r0 >= nrows) return;
  unsigned acc = 0;
  for (int r = 0; r < rows_per_block && r0 + r < nrows; ++r) {
    const uint4* p = w + (size_t)(r0 + r) * row_vecs;
#pragma unroll 4
    for (int i = tid; i < row_vecs; i += nt) {
      const uint4 v = __ldcs(p + i);
      acc += v.x ^ v.y ^ v.z ^ v.w;
    }
  }
  for (int c = 0; c < ncols; ++c) {
    const uint4* q = act + (size_t)c * act_vecs;
#pragma unroll 4
    for (int i = tid; i < act_vecs; i += nt) {
      const uint4 v = __ldg(q + i);
      acc += v.x ^ v.y ^ v.z ^ v.w;
    }
  }
  if (tid == 0) {
    for (int r = 0; r < rows_per_block && r0 + r < nrows; ++r) {
      for (int c = 0; c < ncols; ++c) out[(size_t)c * nrows + r0 + r] = (float)acc;
    }
  }
}
"""
kern = cp.RawKernel(SRC, "read_rows")
t_copy, copy_bw = copy_reference()
print(f"device {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}; "
      f"copy 256 MiB: {t_copy:.1f} us, {copy_bw:.0f} GB/s")

# Format: (values, bytes) a block.
FMT = {"q4_0": (32, 18), "q8_0": (32, 34), "q4_K": (256, 144), "q6_K": (256, 210)}


def case(label, fmt, n, k, ncols, dmmv=False):
    vals, nbytes = FMT[fmt]
    row = k // vals * nbytes
    assert row % 16 == 0
    wbytes = n * row
    copies = max(1, -(-(256 << 20) // wbytes))
    ws = [cp.zeros(wbytes // 16 * 4, dtype=cp.uint32) for _ in range(copies)]
    kp = (k + 511) // 512 * 512
    col = 4 * k if dmmv else kp // 32 * 36  # f32 y, or q8_1 columns k_padded values apart
    act = cp.zeros(ncols * col // 4, dtype=cp.uint32)
    out = cp.empty(ncols * n, dtype=cp.float32)
    if dmmv:
        grid, block, rpb = (n, 1, 1), (32, 1, 1), 1
    elif ncols == 1:
        grid, block, rpb = (n, 1, 1), (32, 4, 1), 1
    else:
        grid, block, rpb = ((n + 1) // 2, 1, 1), (32, 4 if ncols <= 4 else 2, 1), 2
    moved = wbytes + ncols * col + 4 * ncols * n
    t = timeit(lambda r: kern(grid, block, (ws[r % copies], act, out, np.int32(row // 16),
                                            np.int32(rpb), np.int32(col // 16),
                                            np.int32(ncols), np.int32(n))))
    dst = cp.empty(wbytes, dtype=cp.uint8)
    tc = timeit(lambda r: cp.cuda.runtime.memcpyAsync(dst.data.ptr, ws[r % copies].data.ptr,
                                                      wbytes, 3, 0))
    pct = moved / (t * 1e-6) / 1e9 / copy_bw * 100
    cpct = 2 * wbytes / (tc * 1e-6) / 1e9 / copy_bw * 100
    print(f"| {label} | {pct:.1f} ({t:.1f} us) | {cpct:.1f} ({tc:.1f} us) |")
    del ws, dst


print("| grid, shape | read-only kernel | copy of the weights |")
print("|---|---|---|")
for n, k in ((14336, 4096), (4096, 14336), (128256, 4096)):
    for fmt in ("q4_0", "q8_0", "q6_K"):
        case(f"MMVQ cuda1 {fmt} {n}x{k}", fmt, n, k, 1)
    for ncols in (4, 8):
        case(f"MMVQ cuda{ncols} q4_0 {n}x{k}", "q4_0", n, k, ncols)
    case(f"DMMV q4_0 {n}x{k}", "q4_0", n, k, 1, dmmv=True)
    cp.get_default_memory_pool().free_all_blocks()
