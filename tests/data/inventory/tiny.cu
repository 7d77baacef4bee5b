// The CUDA twin of tiny.hip (same kernels, same parameter lists): the source of tiny.fatbin,
// which the inventory unit tests read with the cubin `.nv.info` reader. Rebuild (from the
// repository root):
//   nvcc -x cu -O3 -fatbin -gencode=arch=compute_90,code=sm_90 \
//     tests/data/inventory/tiny.cu -o tests/data/inventory/tiny.fatbin
// The global every hkb module defines (kernels/common/platform.h); `hkb check` requires it.
extern "C" __constant__ unsigned hkb_multiprocessors = 0;

extern "C" __global__ void tiny_axpy(unsigned long numel, float a, const float* x, float* y) {
  const unsigned long i = blockIdx.x * 64ul + threadIdx.x;
  if (i < numel) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void tiny_flags(bool flag, unsigned short h, int v, const unsigned char* in,
                                      unsigned char* out) {
  const unsigned i = threadIdx.x;
  out[i] = flag ? static_cast<unsigned char>(in[i] + h + v) : in[i];
}
