#!/usr/bin/env python3
"""PyTorch on the same GPU, same sizes as hkb's benchmarks: the ratios in the closing tables.

Times each op with CUDA events (median of repeats after warm-up) and prints GB/s (bytes read +
bytes written, counted as the hkb benchmarks count them) and the share of a device-to-device copy
measured in the same run.
"""
import statistics

import torch
import torch.nn.functional as F


def timed(fn, reps=20, batches=7):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(batches):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / reps)
    return statistics.median(times)


def main():
    dev = torch.device("cuda")
    n = 64 * 1024 * 1024
    a = torch.randn(n, device=dev)
    b = torch.empty_like(a)
    copy_s = timed(lambda: b.copy_(a))
    copy_bw = 2 * a.numel() * 4 / copy_s
    rows = []

    def row(name, nbytes, fn):
        s = timed(fn)
        rows.append((name, s, nbytes / s))

    for dt, size in ((torch.float32, 4), (torch.bfloat16, 2)):
        x = torch.randn(n, device=dev).to(dt)
        y = torch.randn(n, device=dev).to(dt)
        out = torch.empty_like(x)
        tag = "f32" if dt == torch.float32 else "bf16"
        row(f"copy {tag}", 2 * n * size, lambda: out.copy_(x))
        row(f"exp {tag}", 2 * n * size, lambda: torch.exp(x, out=out))
        row(f"gelu(tanh) {tag}", 2 * n * size, lambda: out.copy_(F.gelu(x, approximate="tanh")))
        row(f"add {tag}", 3 * n * size, lambda: torch.add(x, y, out=out))
        # affine's traffic (one read, one write; x * mul + add is two kernels in PyTorch) and fill's.
        row(f"mul by a scalar {tag}", 2 * n * size, lambda: torch.mul(x, 1.5, out=out))
        row(f"fill {tag}", n * size, lambda: out.fill_(1.5))
        m = x.view(8192, 8192)
        r = torch.randn(1, 8192, device=dev).to(dt)
        c = torch.randn(8192, 1, device=dev).to(dt)
        o2 = torch.empty_like(m)
        row(f"add bcast row {tag}", (2 * n + 8192) * size, lambda: torch.add(m, r, out=o2))
        row(f"add bcast col {tag}", (2 * n + 8192) * size, lambda: torch.add(m, c, out=o2))
        cond = (torch.rand(n, device=dev) > 0.5).to(torch.uint8)
        row(f"where {tag}", n * (3 * size + 1), lambda: torch.where(cond.bool(), x, y))
        row(f"transpose copy {tag}", 2 * n * size, lambda: o2.copy_(m.t()))
    x32 = torch.randn(n, device=dev)
    o16 = torch.empty(n, device=dev, dtype=torch.bfloat16)
    row("cast f32->bf16", n * 6, lambda: o16.copy_(x32))
    oh = torch.empty(n, device=dev, dtype=torch.float16)
    row("cast f32->f16", n * 6, lambda: oh.copy_(x32))
    m = torch.randn(8192, 8192, device=dev)
    sums = torch.empty(8192, device=dev)
    row("sum last dim f32 8192x8192", m.numel() * 4, lambda: torch.sum(m, dim=-1, out=sums))
    sm = torch.empty_like(m)
    row("softmax f32 8192x8192", 2 * m.numel() * 4, lambda: torch.softmax(m, dim=-1, out=sm))
    w = torch.randn(8192, device=dev)
    row("rmsnorm f32 8192x8192", 2 * m.numel() * 4, lambda: F.rms_norm(m, (8192,), w, 1e-5))
    # fast_min / fast_argmax and bmaximum / bdiv as bench_reduce.cpp and bench_binary.cpp count them.
    mb = m.to(torch.bfloat16)
    row("amin last dim bf16 8192x8192", m.numel() * 2, lambda: torch.amin(mb, dim=-1))
    row("argmax last dim f32 8192x8192", m.numel() * 4, lambda: torch.argmax(m, dim=-1))
    row("argmax last dim bf16 8192x8192", m.numel() * 2, lambda: torch.argmax(mb, dim=-1))
    xb = torch.randn(n, device=dev).to(torch.bfloat16)
    yb = torch.randn(n, device=dev).to(torch.bfloat16)
    ob = torch.empty_like(xb)
    row("maximum bf16 64M", 3 * n * 2, lambda: torch.maximum(xb, yb, out=ob))
    xd = torch.randn(n // 2, device=dev, dtype=torch.float64)
    yd = torch.rand(n // 2, device=dev, dtype=torch.float64) + 1
    od = torch.empty_like(xd)
    row("div f64 32M", 3 * (n // 2) * 8, lambda: torch.div(xd, yd, out=od))
    del mb, xb, yb, ob, xd, yd, od
    table = torch.randn(32000, 4096, device=dev)
    ids = torch.randint(0, 32000, (8192,), device=dev)
    row("index_select 32000x4096 f32, 8192 ids", 2 * 8192 * 4096 * 4,
        lambda: torch.index_select(table, 0, ids))
    img = torch.randn(8, 64, 128, 128, device=dev)
    row("upsample_nearest2d 8x64x128x128 x2", img.numel() * 4 * 5,
        lambda: F.interpolate(img, scale_factor=2, mode="nearest"))
    row("upsample_bilinear2d 8x64x128x128 x2", img.numel() * 4 * 5,
        lambda: F.interpolate(img, scale_factor=2, mode="bilinear", align_corners=False))
    big = torch.randn(1, 32, 512, 512, device=dev)
    row("upsample_bilinear2d 1x32x512x512 x2", big.numel() * 4 * 5,
        lambda: F.interpolate(big, scale_factor=2, mode="bilinear", align_corners=False))
    row("max_pool2d 8x64x128x128 k2 s2", img.numel() * 4 * 5 // 4,
        lambda: F.max_pool2d(img, 2, 2))
    row("avg_pool2d 8x64x128x128 k2 s2", img.numel() * 4 * 5 // 4,
        lambda: F.avg_pool2d(img, 2, 2))
    del img, big
    round2_rows(row, dev)
    # conv_transpose as bench_conv.cpp (stride 2, padding 1, output padding 1; bytes: input, kernel
    # and output once). PyTorch's default lets cuDNN take TF32 for f32 convolutions; the f32 rows
    # say which setting they ran with.
    for tf32 in (True, False):
        torch.backends.cudnn.allow_tf32 = tf32
        note = " (tf32)" if tf32 else ""
        for dt, size, tag in ((torch.float32, 4, "f32"), (torch.bfloat16, 2, "bf16")):
            if dt != torch.float32 and not tf32:
                continue
            x2 = torch.randn(8, 64, 32, 32, device=dev).to(dt)
            k2 = torch.randn(64, 64, 3, 3, device=dev).to(dt)
            row(f"conv_transpose2d {tag} 8x64x32x32 k3 s2 p1 op1{note if size == 4 else ''}",
                (x2.numel() + k2.numel() + 8 * 64 * 64 * 64) * size,
                lambda: F.conv_transpose2d(x2, k2, stride=2, padding=1, output_padding=1))
            x1 = torch.randn(8, 256, 512, device=dev).to(dt)
            k1 = torch.randn(256, 256, 3, device=dev).to(dt)
            row(f"conv_transpose1d {tag} 8x256x512 k3 s2 p1 op1{note if size == 4 else ''}",
                (x1.numel() + k1.numel() + 8 * 256 * 1024) * size,
                lambda: F.conv_transpose1d(x1, k1, stride=2, padding=1, output_padding=1))
    torch.backends.cudnn.allow_tf32 = True
    # argsort of each row as bench_sort.cpp (uniform keys in [-1, 1); bytes: the keys read and u32
    # indices written once, as hkb counts them): the default and the stable sort.
    for dt, size, tag in ((torch.float32, 4, "f32"), (torch.bfloat16, 2, "bf16")):
        for rows_, cols_ in ((1024, 1024), (2048, 2048), (4096, 4096), (1024, 8192),
                             (512, 16384)):
            if dt != torch.float32 and cols_ != 4096:
                continue
            keys = (torch.rand(rows_, cols_, device=dev) * 2 - 1).to(dt)
            for stable in (False, True):
                row(f"argsort {tag} {rows_}x{cols_}{' stable' if stable else ''}",
                    keys.numel() * (size + 4),
                    lambda: torch.argsort(keys, dim=-1, stable=stable))
            if dt == torch.float32 and cols_ == 4096:
                row(f"argsort descending {tag} {rows_}x{cols_}", keys.numel() * (size + 4),
                    lambda: torch.argsort(keys, dim=-1, descending=True))
            del keys

    print(f"\nPyTorch {torch.__version__} on {torch.cuda.get_device_name()} "
          f"(device-to-device copy: {copy_bw / 1e9:.1f} GB/s)")
    print(f"{'op':44s} {'time us':>10s} {'GB/s':>10s} {'of copy':>8s}")
    for name, s, bw in rows:
        print(f"{name:44s} {s * 1e6:10.1f} {bw / 1e9:10.1f} {100 * bw / copy_bw:7.0f}%")
    # For scale beside mul_mat_<format> (bench_quantized_mmq): an f16 GEMM of its shape, TOP/s.
    wq = torch.randn(14336, 4096, device=dev, dtype=torch.float16)
    xq = torch.randn(4096, 512, device=dev, dtype=torch.float16)
    s = timed(lambda: torch.matmul(wq, xq))
    print(f"{'f16 matmul 14336x4096 x 4096x512':44s} {s * 1e6:10.1f} "
          f"{2 * 14336 * 4096 * 512 / s / 1e12:10.1f} TOP/s")


def round2_rows(row, dev):
    """Issue #21's cases that the rows above lack, with the bytes the hkb benchmarks count."""
    src = torch.randn(8192, 8192, device=dev)
    ids = torch.randint(0, 8192, (8192, 8192), device=dev)
    row("gather i64 ids f32 [8192,8192] last dim", src.numel() * (8 + 4 + 4),
        lambda: torch.gather(src, 1, ids))
    del ids
    row("copy of a transposed view f32 8192x8192", 2 * src.numel() * 4,
        lambda: src.t().contiguous())
    dst = torch.empty_like(src)
    row("fill of a transposed view f32 8192x8192", src.numel() * 4, lambda: dst.t().fill_(1.5))
    row("mul by a scalar, transposed view f32 8192x8192", 2 * src.numel() * 4,
        lambda: torch.mul(src.t(), 1.5))
    wide = torch.randn(8192, 8192 + 64, device=dev)
    row("copy2d f32 8192 rows of 8192 (strided rows)", 2 * src.numel() * 4,
        lambda: dst.copy_(wide[:, :8192]))
    del wide, dst
    for dt, size, tag in ((torch.float32, 4, "f32"), (torch.bfloat16, 2, "bf16")):
        m = src.to(dt)
        w = torch.randn(8192, device=dev).to(dt)
        if dt != torch.float32:
            row(f"softmax {tag} 8192x8192", 2 * m.numel() * size, lambda: torch.softmax(m, -1))
            row(f"rmsnorm {tag} 8192x8192", 2 * m.numel() * size,
                lambda: F.rms_norm(m, (8192,), w, 1e-5))
        row(f"layernorm {tag} 8192x8192", 2 * m.numel() * size,
            lambda: F.layer_norm(m, (8192,), w, w, 1e-5))
        a = m.view(65536, 1024)[:, :128].contiguous()
        row(f"softmax {tag} 65536x128", 2 * a.numel() * size, lambda: torch.softmax(a, -1))
        for cols in (32, 64, 128, 256):
            r = m.view(-1)[:65536 * cols].view(65536, cols)
            row(f"sum last dim {tag} 65536x{cols}", (r.numel() + 65536) * size,
                lambda: torch.sum(r, dim=-1))
        p = m.view(64, 1024, 1024)
        row(f"copy of a permute(1,0,2) view {tag} 64x1024x1024", 2 * p.numel() * size,
            lambda: p.permute(1, 0, 2).contiguous())
        del m, a, r, p
    q = src.view(1024, 512, 128)
    cos = torch.randn(512, 64, device=dev)
    sin = torch.randn(512, 64, device=dev)

    def rope():
        x1, x2 = q[..., :64], q[..., 64:]
        return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)
    row("rope f32 bh 1024 t 512 d 128 (eager)", 2 * q.numel() * 4, rope)
    del q, src
    x = torch.randn(8, 256, 1, 4096, device=dev)
    row("im2col1d (unfold) f32 8x256x4096 k3 p1", (x.numel() + x.numel() * 3) * 4,
        lambda: F.unfold(x, (1, 3), padding=(0, 1)))


if __name__ == "__main__":
    main()
