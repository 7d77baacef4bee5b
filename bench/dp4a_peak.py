#!/usr/bin/env python3
"""The GPU's integer dot-product peak: __dp4a chains with no other work (8 independent accumulators
a thread, enough warps to fill every multiprocessor), in TOP/s counting a dp4a as 8 operations (4
multiplies, 4 adds), the unit of issue 20's MMQ column (2 n k m / time). An upper bound for any
kernel built on dp4a, which #20 asks MMQ to use on NVIDIA as AMD uses sdot4. cupy (NVRTC):
    python3 bench/dp4a_peak.py
"""
import cupy as cp
import numpy as np

SRC = r"""
extern "C" __global__ void dp4a_chain(const int* in, int* out, int iters) {
  int a = in[threadIdx.x & 31], b = in[32 + (threadIdx.x & 31)];
  int s0 = 0, s1 = 1, s2 = 2, s3 = 3, s4 = 4, s5 = 5, s6 = 6, s7 = 7;
  for (int i = 0; i < iters; ++i) {
    s0 = __dp4a(a, b, s0); s1 = __dp4a(a, b, s1); s2 = __dp4a(a, b, s2); s3 = __dp4a(a, b, s3);
    s4 = __dp4a(a, b, s4); s5 = __dp4a(a, b, s5); s6 = __dp4a(a, b, s6); s7 = __dp4a(a, b, s7);
    a ^= s0 & 1;  // keeps the loop from folding; one logic op per 8 dp4a
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7;
}
"""
k = cp.RawKernel(SRC, "dp4a_chain")
dev = cp.cuda.Device(0)
sms = dev.attributes["MultiProcessorCount"]
clock = dev.attributes["ClockRate"] * 1e3  # the boost clock, Hz
inp = cp.asarray(np.arange(64, dtype=np.int32) * 0x01010101)
for blocks_per_sm, threads in ((4, 256), (8, 256), (2, 1024)):
    grid = sms * blocks_per_sm
    out = cp.empty(grid * threads, dtype=cp.int32)
    iters = 1 << 14
    k((grid,), (threads,), (inp, out, np.int32(iters)))
    e0, e1 = cp.cuda.Event(), cp.cuda.Event()
    best = 1e30
    for _ in range(5):
        e0.record()
        k((grid,), (threads,), (inp, out, np.int32(iters)))
        e1.record()
        e1.synchronize()
        best = min(best, cp.cuda.get_elapsed_time(e0, e1) * 1e-3)
    dp4a = grid * threads * iters * 8
    rate = dp4a / best / sms
    print(f"{sms} SMs, {blocks_per_sm} x {threads} threads a SM: {rate / clock:.1f} dp4a a clock a SM "
          f"at the {clock / 1e9:.2f} GHz boost clock, {dp4a * 8 / best / 1e12:.1f} TOP/s")
