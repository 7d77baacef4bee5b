#!/usr/bin/env python3
"""The QUANTIZED module's dequantize / get_rows of the 32-value formats (mode `decode`, the
default: weights rotated over >= 256 MB, % of a 256 MiB device-to-device copy in the same run), its
MMVQ kernels (mode `mmvq`: batch 1 of every format and a few batches and shapes; mode `cuda1`:
batch 1 of every format at 14336x4096, 4096x14336 and 128256x4096; mode `batch`:
every format at batches 2-8; the same rotation and %, bytes = weights + q8_1 columns + outputs),
its DMMV kernels (mode `dmmv`: bytes = weights + f32 activations + outputs), #19's table with
the MoE kernels at batch 1 (mode `issue19`; mode `profile` launches base.cubin's kernels of it
once each, for ncu) or its MMQ kernels
(mode `mmq`: 14336x4096 weights times 512 q8_1 columns, TOP/s = 2 n k cols / time)
from several sm_90 cubins, timed side by side with cupy under candle's grids, their outputs
compared bit by bit with base.cubin's.

For device sessions too short to build: compile each tree's module here and carry the cubins,
    nvcc -x cu -std=c++17 -O3 -cubin --expt-relaxed-constexpr -gencode=arch=compute_90,code=sm_90 \
        -I<tree>/kernels <tree>/kernels/quantized.hip -o DIR/<variant>.cubin
then on the GPU machine: python3 bench/quant_cubin_probe.py DIR [decode|mmvq|cuda1|batch|dmmv|mmq]. No
hkb loader is involved: the script writes the device's multiprocessor count into each module's hkb_multiprocessors itself.
"""
import glob
import os
import sys

MODES = ("decode", "mmvq", "cuda1", "batch", "dmmv", "mmq", "issue19", "profile")
mode = sys.argv[2] if len(sys.argv) == 3 else "decode"
if (len(sys.argv) not in (2, 3) or mode not in MODES or
        not os.path.isfile(os.path.join(sys.argv[1], "base.cubin"))):
    sys.exit(f"usage: quant_cubin_probe.py DIR [{'|'.join(MODES)}]  (DIR holds base.cubin and "
             "<variant>.cubin files)")
d = sys.argv[1]

import cupy as cp  # noqa: E402 (after the usage check: the GPU machine has them, this one not)
import numpy as np  # noqa: E402

import cupy_timing  # noqa: E402

names = sorted(os.path.splitext(os.path.basename(p))[0] for p in glob.glob(d + "/*.cubin"))
names.remove("base")
names = ["base"] + names
PROFILE = mode == "profile"  # #19's kernels of base.cubin, launched once each (for ncu)
if PROFILE:
    names = ["base"]
dev = cp.cuda.Device(0)
sms = dev.attributes["MultiProcessorCount"]
mods = {}
for n in names:
    m = cp.RawModule(path=f"{d}/{n}.cubin")
    g = m.get_global("hkb_multiprocessors")
    count = np.array([sms], dtype=np.uint32)
    g.copy_from_host(count.ctypes.data, 4)
    mods[n] = m
print("device", dev.id, cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "SMs", sms)


def timeit(fn, reps=20, batches=7):
    return 1.0 if PROFILE else cupy_timing.timeit(fn, reps, batches)


t_copy, copy_bw = cupy_timing.copy_reference()
print(f"copy 256 MiB: {t_copy:.1f} us, {copy_bw:.0f} GB/s")

BLOCK = {"q4_0": (32, 18), "q4_1": (32, 20), "q5_0": (32, 22), "q5_1": (32, 24), "q8_0": (32, 34)}
rng = np.random.default_rng(1)


def rand_blocks(fmt, nblocks, copies):
    vals, nbytes = BLOCK[fmt]
    host = rng.integers(0, 256, size=nblocks * nbytes, dtype=np.uint8)
    # d (and m) halves: finite, moderate (random bytes elsewhere: codes, qh)
    h = host.reshape(nblocks, nbytes)
    dh = (rng.random(nblocks) * 0.02 + 0.001).astype(np.float16).view(np.uint8).reshape(nblocks, 2)
    h[:, 0:2] = dh
    if fmt in ("q4_1", "q5_1"):
        mh = (rng.random(nblocks) - 0.5).astype(np.float16).view(np.uint8).reshape(nblocks, 2)
        h[:, 2:4] = mh
    base = cp.asarray(host)
    return [base] + [base.copy() for _ in range(copies - 1)]


results = []


def compare(label, outs):
    ref = outs["base"]
    for n in names[1:]:
        same = bool(cp.all(outs[n].view(cp.uint32) == ref.view(cp.uint32)))
        if not same:
            diff = int(cp.count_nonzero(outs[n].view(cp.uint32) != ref.view(cp.uint32)))
            # a reordered float scaling differs in the last bits: the largest gap beside the scale
            gap = float(cp.max(cp.abs(outs[n] - ref)) / max(float(cp.max(cp.abs(ref))), 1e-30))
            print(f"MISMATCH {label} {n}: {diff} words differ, max gap {gap:.2e} of max |base|")
        else:
            print(f"same bits {label} {n}")


def time_variants(label, kernel, grid, block, args_of, out, rate):
    """Launches `kernel` of every cubin once (output kept for compare), then times it; args_of(r):
    the arguments of launch r (rotating weight copies); rate(us): the row's number."""
    outs, row = {}, [label]
    for n in names:
        f = mods[n].get_function(kernel)
        out.fill(0)
        f(grid, block, args_of(0))
        outs[n] = out.copy()
        t = timeit(lambda r: f(grid, block, args_of(r)))
        row.append((n, t, rate(t)))
    compare(row[0], outs)
    results.append(row)


def pct_of_copy(moved):
    return lambda t: moved / (t * 1e-6) / 1e9 / copy_bw * 100


def small_bytes(count):
    """Device bytes below 0x3C: every half they form (scales, q8_1 d and s) finite and at most 1."""
    return cp.asarray(rng.integers(0, 0x3C, size=count, dtype=np.uint8))


def rotated_weights(wbytes):
    """Copies of one random weight buffer of wbytes bytes, together at least 256 MB (so the L2
    serves none of them when launches take them in turn), and their count."""
    copies = max(1, -(-(256 << 20) // wbytes))
    w0 = small_bytes(wbytes)
    return [w0] + [w0.copy() for _ in range(copies - 1)], copies


def get_rows_case(fmt, rows=32000, hidden=4096, n_ids=4096, copies=4):
    vals, nbytes = BLOCK[fmt]
    row_bytes = hidden // vals * nbytes
    tables = rand_blocks(fmt, rows * hidden // vals, copies)
    ids = cp.asarray(rng.integers(0, rows, size=n_ids, dtype=np.uint32))
    ids[0] = 0
    ids[1] = rows - 1
    out = cp.empty(n_ids * hidden, dtype=cp.float32)
    grid = (n_ids, min((hidden + 511) // 512, 65535), 1)
    moved = n_ids * (row_bytes + hidden * 4)
    time_variants(f"get_rows_{fmt} {n_ids} ids of {rows}x{hidden}", f"get_rows_{fmt}", grid,
                  (256, 1, 1),
                  lambda r: (tables[r % copies], ids, out, np.int64(hidden), np.uint64(row_bytes)),
                  out, pct_of_copy(moved))


def dequant_case(fmt, rows=14336, cols=4096, copies=None):
    vals, nbytes = BLOCK[fmt]
    el = rows * cols
    nblocks = el // vals
    if copies is None:
        copies = max(1, -(-(256 << 20) // (nblocks * nbytes)))
    xs = rand_blocks(fmt, nblocks, copies)
    out = cp.empty(el, dtype=cp.float32)
    if fmt in ("q5_0", "q5_1"):
        grid, block, k = ((el + 511) // 512, 1, 1), (256, 1, 1), el
    else:
        grid, block, k = ((el + 255) // 256, 1, 1), (32, 1, 1), el // 32
    moved = nblocks * nbytes + el * 4
    time_variants(f"dequantize_block_{fmt}_f32 {rows}x{cols}", f"dequantize_block_{fmt}_f32",
                  grid, block, lambda r: (xs[r % copies], out, np.int32(k)), out,
                  pct_of_copy(moved))
    del xs, out


# mul_mat_<format>: candle's (mmq_x, mmq_y) tiles, grid (ceil(n / mmq_y), ceil(cols / mmq_x)) x
# (32, 4).
MMQ = {"q4_0": (32, 18, 64, 128), "q4_1": (32, 20, 64, 128), "q5_0": (32, 22, 128, 64),
       "q5_1": (32, 24, 128, 64), "q8_0": (32, 34, 128, 64), "q2_K": (256, 84, 64, 128),
       "q3_K": (256, 110, 128, 128), "q4_K": (256, 144, 64, 128), "q5_K": (256, 176, 64, 128),
       "q6_K": (256, 210, 64, 64)}


def mmq_case(fmt, n=14336, k=4096, cols=512):
    vals, nbytes, mx, my = MMQ[fmt]
    kp = (k + 511) // 512 * 512
    w = small_bytes(n * (k // vals) * nbytes)
    y = small_bytes(cols * kp // 32 * 36)
    out = cp.empty(cols * n, dtype=cp.float32)
    grid = ((n + my - 1) // my, (cols + mx - 1) // mx, 1)
    args = (w, y, out, np.int32(k), np.int32(n), np.int32(cols), np.int32(kp), np.int32(n))
    time_variants(f"mul_mat_{fmt} {n}x{k} x {cols} columns (TOP/s)", f"mul_mat_{fmt}", grid,
                  (32, 4, 1), lambda r: args, out, lambda t: 2.0 * n * k * cols / (t * 1e-6) / 1e12)


def mmvq_case(fmt, ncols, n=14336, k=4096):
    vals, nbytes = MMQ[fmt][:2]
    kp = (k + 511) // 512 * 512
    wbytes = n * (k // vals) * nbytes
    ws, copies = rotated_weights(wbytes)
    y = small_bytes(ncols * kp // 32 * 36)
    out = cp.empty(ncols * n, dtype=cp.float32)
    grid = (n if ncols == 1 else (n + 1) // 2, 1, 1)
    block = (32, 4 if ncols <= 4 else 2, 1)
    moved = wbytes + ncols * kp // 32 * 36 + ncols * n * 4
    name = f"mul_mat_vec_{fmt}_q8_1_cuda{ncols}"
    time_variants(f"{name} {n}x{k}", name, grid, block,
                  lambda r: (ws[r % copies], y, out, np.int32(k), np.int32(n), np.int32(kp),
                             np.int32(n)), out, pct_of_copy(moved))
    del ws


def dmmv_case(fmt, n=14336, k=4096):
    vals, nbytes = MMQ[fmt][:2]
    wbytes = n * (k // vals) * nbytes
    ws, copies = rotated_weights(wbytes)
    y = cp.asarray(np.random.default_rng(3).uniform(-1, 1, k).astype(np.float32))
    out = cp.empty(n, dtype=cp.float32)
    name = "dequantize_mul_mat_vec_" + (fmt.lower() if fmt.endswith("K") else fmt + "_cuda")
    moved = wbytes + 4 * k + 4 * n
    if fmt == "q5_K":  # candle's q5_k kernel takes no nrows (the grid is the row count)
        args = lambda r: (ws[r % copies], y, out, np.int32(k))
    else:
        args = lambda r: (ws[r % copies], y, out, np.int32(k), np.int32(n))
    time_variants(f"{name} {n}x{k}", name, (n, 1, 1), (32, 1, 1), args, out, pct_of_copy(moved))
    del ws


def moe_case(fmt, batch=1, topk=2, experts=8, n=14336, k=4096):
    """indexed_moe_forward_<fmt>_q8_1 under candle's grid (n, batch, topk) x (32, 4): launch r
    takes experts 2 r, 2 r + 1, ... (mod experts), so that the experts' weights (>= 256 MB
    together) rotate; bytes = the experts used + the inputs + the outputs."""
    vals, nbytes = MMQ[fmt][:2]
    kp = (k + 511) // 512 * 512
    ebytes = n * (k // vals) * nbytes
    w = small_bytes(experts * ebytes)
    y = small_bytes(batch * kp // 32 * 36)
    slots = batch * topk
    ids = [cp.asarray(np.array([(slots * r + j) % experts for j in range(slots)], dtype=np.uint32))
           for r in range(experts)]
    out = cp.empty(slots * n, dtype=cp.float32)
    name = ("indexed_moe_forward_" + (fmt.replace("_", "").lower() if fmt.endswith("K") else fmt)
            + "_q8_1")
    moved = min(slots, experts) * ebytes + batch * kp // 32 * 36 + slots * n * 4
    time_variants(f"{name} {experts}x{n}x{k} top{topk} b{batch}", name, (n, batch, topk),
                  (32, 4, 1),
                  lambda r: (w, y, ids[r % experts], out, np.int32(n), np.int32(k),
                             np.int32(batch), np.int32(topk), np.int32(kp), np.int32(1)),
                  out, pct_of_copy(moved))
    del w


if mode == "mmvq":
    for fmt in MMQ:
        mmvq_case(fmt, 1)
        cp.get_default_memory_pool().free_all_blocks()
    for fmt, ncols in (("q4_0", 4), ("q4_0", 8), ("q4_K", 2), ("q4_K", 4), ("q4_K", 8),
                       ("q8_0", 4), ("q2_K", 2), ("q2_K", 3), ("q2_K", 4), ("q2_K", 6),
                       ("q2_K", 8), ("q3_K", 2), ("q3_K", 3), ("q3_K", 4), ("q3_K", 6),
                       ("q3_K", 8), ("q5_K", 2), ("q6_K", 2), ("q6_K", 3),
                       ("q6_K", 4), ("q6_K", 5), ("q6_K", 6), ("q6_K", 7), ("q6_K", 8)):
        mmvq_case(fmt, ncols)
        cp.get_default_memory_pool().free_all_blocks()
    for fmt, n, k in (("q4_0", 4096, 14336), ("q4_0", 128256, 4096), ("q4_K", 4096, 14336),
                      ("q4_K", 128256, 4096), ("q6_K", 128256, 4096)):
        mmvq_case(fmt, 1, n, k)
        cp.get_default_memory_pool().free_all_blocks()
elif mode == "cuda1":
    for n, k in ((14336, 4096), (4096, 14336), (128256, 4096)):
        for fmt in MMQ:
            mmvq_case(fmt, 1, n, k)
            cp.get_default_memory_pool().free_all_blocks()
elif mode == "dmmv":
    for fmt in MMQ:
        dmmv_case(fmt)
        cp.get_default_memory_pool().free_all_blocks()
elif mode == "batch":
    for fmt in MMQ:
        for ncols in range(2, 9):
            mmvq_case(fmt, ncols)
            cp.get_default_memory_pool().free_all_blocks()
    for fmt, ncols in (("q4_0", 4), ("q4_0", 8), ("q4_K", 4), ("q4_K", 8)):
        mmvq_case(fmt, ncols, 128256, 4096)
        cp.get_default_memory_pool().free_all_blocks()
elif mode in ("issue19", "profile"):
    # #19's table (MMVQ batch 1, 4, 8 of q4_0 / q4_K, batch 1 of q8_0 / q6_K, DMMV q4_0 / q4_k) at
    # its three shapes, the MoE kernels at batch 1, then batches 2-7 of q4_0, q8_0 and q5_1.
    for n, k in ((14336, 4096), (4096, 14336), (128256, 4096)):
        for fmt, ncols in (("q4_0", 1), ("q8_0", 1), ("q4_K", 1), ("q6_K", 1), ("q4_0", 4),
                           ("q4_0", 8), ("q4_K", 4), ("q4_K", 8)):
            mmvq_case(fmt, ncols, n, k)
            cp.get_default_memory_pool().free_all_blocks()
        for fmt in ("q4_0", "q4_K"):
            dmmv_case(fmt, n, k)
            cp.get_default_memory_pool().free_all_blocks()
    for fmt in ("q2_K", "q3_K", "q4_K", "q5_K", "q6_K", "q8_0"):
        moe_case(fmt)
        cp.get_default_memory_pool().free_all_blocks()
    if not PROFILE:
        for fmt in ("q4_0", "q8_0", "q5_1"):
            for ncols in (2, 3, 5, 6, 7):
                mmvq_case(fmt, ncols)
                cp.get_default_memory_pool().free_all_blocks()
elif mode == "mmq":
    for fmt in MMQ:
        mmq_case(fmt)
        cp.get_default_memory_pool().free_all_blocks()
    # 12672 rows: 792 blocks for q4_0 / q8_0 / q4_K, whole waves of 3 (2 for q4_K) blocks on each
    # of 132 multiprocessors; 14336 rows' 896 blocks leave a last wave of 104.
    for fmt in ("q4_0", "q8_0", "q4_K"):
        mmq_case(fmt, n=12672)
        cp.get_default_memory_pool().free_all_blocks()
else:
    for fmt in ("q4_0", "q4_1", "q5_0", "q5_1", "q8_0"):
        get_rows_case(fmt)
        cp.get_default_memory_pool().free_all_blocks()
    for fmt in ("q5_0", "q5_1", "q4_0", "q8_0"):
        dequant_case(fmt)
        cp.get_default_memory_pool().free_all_blocks()
    # A second pass of the get_rows rows, to show drift.
    for fmt in ("q4_0", "q5_0"):
        get_rows_case(fmt)
        cp.get_default_memory_pool().free_all_blocks()

print()
print("| case | " + " | ".join(names) + " |")
print("|---|" + "---|" * len(names))
for row in results:
    unit = "" if mode == "mmq" else "%"
    print(f"| {row[0]} | " + " | ".join(f"{p:.1f}{unit} ({t:.1f} us)" for _, t, p in row[1:]) + " |")
