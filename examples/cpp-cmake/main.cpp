// A C++ program using hkb through find_package(hkb): checks the library's ABI against the header,
// then runs affine_f32 (y = 2x + 1) on device 0 when one is present. Exit 0 on success.
#include <hkb/hkb.hpp>

#include <cstdio>
#include <vector>

int main() {
  int major = 0, minor = 0, patch = 0, abi = 0;
  hkb_version(&major, &minor, &patch, &abi);
  std::printf("hkb %d.%d.%d (ABI %d), %s flavour\n", major, minor, patch, abi, hkb_platform());
  if (abi != HKB_ABI_VERSION) return 1;
  try {
    if (hkb::Device::count() == 0) {
      std::printf("no GPU: library loaded, launch skipped\n");
      return 0;
    }
    constexpr size_t n = 4096;
    hkb::Device dev(0);
    std::vector<float> x(n);
    for (size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i);
    auto in = dev.upload(x);
    auto out = dev.alloc<float>(n);
    hkb::LaunchArgs args;
    args.arg(n).arg(size_t{1}).arg(hkb_devptr{0}).arg(in.ptr()).arg(out.ptr()).arg(2.0f).arg(1.0f);
    dev.function("affine_f32").launch(hkb::LaunchConfig::for_num_elems(n), args);
    const std::vector<float> y = out.download();
    for (size_t i = 0; i < n; ++i) {
      if (y[i] != 2.0f * x[i] + 1.0f) {
        std::fprintf(stderr, "element %zu: %g\n", i, y[i]);
        return 1;
      }
    }
    std::printf("affine_f32 on device 0 (%s): %zu elements correct\n", dev.target().c_str(), n);
  } catch (const hkb::Error& e) {
    std::fprintf(stderr, "hkb: %s\n", e.what());
    return 1;
  }
  return 0;
}
