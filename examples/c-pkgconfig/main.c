/* A C program using hkb through pkg-config: checks the library's ABI against the header, then
 * runs affine_f32 (y = 2x + 1) on device 0 when one is present. Exit 0 on success. */
#include <hkb/hkb.h>

#include <stdio.h>
#include <stdlib.h>

static int failed(const char* what, hkb_status s) {
  fprintf(stderr, "%s: %s: %s\n", what, hkb_status_string(s), hkb_last_error());
  return 1;
}

int main(void) {
  int major, minor, patch, abi;
  hkb_version(&major, &minor, &patch, &abi);
  printf("hkb %d.%d.%d (ABI %d), %s flavour\n", major, minor, patch, abi, hkb_platform());
  if (abi != HKB_ABI_VERSION || major != HKB_VERSION_MAJOR) {
    fprintf(stderr, "header ABI %d, library ABI %d\n", HKB_ABI_VERSION, abi);
    return 1;
  }
  int devices = 0;
  hkb_status s = hkb_device_count(&devices);
  if (s != HKB_SUCCESS && s != HKB_ERROR_NO_DEVICE) return failed("hkb_device_count", s);
  if (devices == 0) {
    printf("no GPU: library loaded, launch skipped\n");
    return 0;
  }
  hkb_context ctx;
  hkb_function fn;
  if ((s = hkb_context_get(0, &ctx)) != HKB_SUCCESS) return failed("hkb_context_get", s);
  if ((s = hkb_function_get(ctx, "affine_f32", &fn)) != HKB_SUCCESS)
    return failed("hkb_function_get", s);
  enum { N = 4096 };
  static float host[N];
  for (int i = 0; i < N; ++i) host[i] = (float)i;
  hkb_devptr in = 0, out = 0;
  if ((s = hkb_malloc(ctx, sizeof host, &in)) != HKB_SUCCESS) return failed("hkb_malloc", s);
  if ((s = hkb_malloc(ctx, sizeof host, &out)) != HKB_SUCCESS) return failed("hkb_malloc", s);
  if ((s = hkb_memcpy_htod(ctx, in, host, sizeof host)) != HKB_SUCCESS)
    return failed("hkb_memcpy_htod", s);
  size_t n = N, nd = 1;
  hkb_devptr info = 0; /* null info: contiguous */
  float mul = 2.0f, add = 1.0f;
  void* args[] = {&n, &nd, &info, &in, &out, &mul, &add};
  size_t sizes[] = {8, 8, 8, 8, 8, 4, 4};
  hkb_launch_config cfg = hkb_launch_config_for_num_elems(N);
  if ((s = hkb_launch(fn, &cfg, NULL, args, sizes, 7)) != HKB_SUCCESS)
    return failed("hkb_launch", s);
  if ((s = hkb_memcpy_dtoh(ctx, host, out, sizeof host)) != HKB_SUCCESS)
    return failed("hkb_memcpy_dtoh", s);
  for (int i = 0; i < N; ++i) {
    if (host[i] != 2.0f * (float)i + 1.0f) {
      fprintf(stderr, "element %d: %g, expected %g\n", i, host[i], 2.0f * (float)i + 1.0f);
      return 1;
    }
  }
  hkb_free(ctx, in);
  hkb_free(ctx, out);
  printf("affine_f32 on device 0: %d elements correct\n", N);
  return hkb_shutdown() == HKB_SUCCESS ? 0 : 1;
}
