#!/usr/bin/env python3
"""What candle's launch grids cost with nothing to do: an empty kernel launched 20 times back to back
on each grid (CUDA events, median of 9 batches). A kernel bound to candle's grid cannot finish
sooner; the tables in docs/performance.md and docs/performance-h200.md ("What candle's grids cost
when empty") come from it. cupy (NVRTC):
    python3 bench/empty_grids.py
"""
import cupy as cp

from cupy_timing import timeit

k = cp.RawKernel(r'extern "C" __global__ void k_empty() {}', "k_empty")
GRIDS = (("DMMV, 14336 rows: 14336 x 32", (14336, 1, 1), (32, 1, 1)),
         ("MMVQ cuda1, 14336 rows: 14336 x (32,4)", (14336, 1, 1), (32, 4, 1)),
         ("MMVQ cuda2-4: 7168 x (32,4)", (7168, 1, 1), (32, 4, 1)),
         ("MMVQ cuda5-8: 7168 x (32,2)", (7168, 1, 1), (32, 2, 1)),
         ("MoE batch 1, top 2: (14336,1,2) x (32,4)", (14336, 1, 2), (32, 4, 1)),
         ("MoE batch 16, top 2: (14336,16,2) x (32,4)", (14336, 16, 2), (32, 4, 1)),
         ("dequantize 14336x4096: 229376 x 32", (229376, 1, 1), (32, 1, 1)),
         ("get_rows 4096 ids, 32-value formats: (4096,8) x 256", (4096, 8, 1), (256, 1, 1)),
         ("get_rows 4096 ids, K-quants: (4096,16) x 32", (4096, 16, 1), (32, 1, 1)),
         ("elementwise 64M: 65536 x 1024", (65536, 1, 1), (1024, 1, 1)),
         ("fast_* 65536 rows of 32: 65536 x 32", (65536, 1, 1), (32, 1, 1)),
         ("fast_* 65536 rows of 64: 65536 x 64", (65536, 1, 1), (64, 1, 1)),
         ("fast_* 65536 rows of 128: 65536 x 128", (65536, 1, 1), (128, 1, 1)),
         ("fast_* 65536 rows of 256: 65536 x 256", (65536, 1, 1), (256, 1, 1)))
for name, grid, block in GRIDS:
    print(f"{name}: {timeit(lambda r: k(grid, block, ()), reps=20, batches=9):.1f} us")
