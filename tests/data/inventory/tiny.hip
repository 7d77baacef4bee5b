// Two kernels whose argument layouts exercise C padding: the source of tiny.hsaco, the code
// object the inventory unit tests check against tiny-manifest.json and derive bad inputs from.
// Rebuild (from the repository root):
//   clang++-15 -x hip --cuda-device-only --gpu-bundle-output -O3 -nogpulib -nogpuinc \
//     --offload-arch=gfx906 --offload-arch=gfx1030 \
//     tests/data/inventory/tiny.hip -o tests/data/inventory/tiny.hsaco
#define __global__ __attribute__((global))

// The global every hkb module defines (kernels/common/platform.h); `hkb check` requires it.
extern "C" __attribute__((constant)) unsigned hkb_multiprocessors = 0;

// numel at 0, a at 8, x at 16 (8-aligned after the 4-byte float), y at 24.
extern "C" __global__ void tiny_axpy(unsigned long numel, float a, const float* x, float* y) {
  const unsigned long i =
      __builtin_amdgcn_workgroup_id_x() * 64ul + __builtin_amdgcn_workitem_id_x();
  if (i < numel) y[i] = a * x[i] + y[i];
}

// flag at 0, h at 2, v at 4, in at 8, out at 16.
extern "C" __global__ void tiny_flags(bool flag, unsigned short h, int v, const unsigned char* in,
                                      unsigned char* out) {
  const unsigned i = __builtin_amdgcn_workitem_id_x();
  out[i] = flag ? static_cast<unsigned char>(in[i] + h + v) : in[i];
}
