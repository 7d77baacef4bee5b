#!/usr/bin/env bash
# tools/check-dot4.sh against code objects it must refuse: an MMVQ-named kernel whose dot product
# is byte-wise, and one through __builtin_amdgcn_sdot4 that is alone (not the module's 80 kernels).
# Run by tools/run-tests.sh; compiles with the AMD build's kernel compiler and flags
# (BUILD/bench/kernel-compile.args, default build/amd) for gfx906 and gfx1030 alone.
#
#   tests/tools/test_check_dot4.sh [BUILD]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
args_file=${1:-$root/build/amd}/bench/kernel-compile.args
[ -f "$args_file" ] || { echo "test_check_dot4.sh: no $args_file (an AMD build with benchmarks)" >&2; exit 2; }
compile=()
while read -r a; do [[ "$a" == --offload-arch=* ]] || compile+=("$a"); done < "$args_file"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail() { echo "test_check_dot4.sh: $*" >&2; exit 1; }
cat > "$t/k.hip" << 'HIP'
#include <hip/hip_runtime.h>
extern "C" __global__ void mul_mat_vec_q4_0_q8_1_cuda1(const int* a, const int* b, float* d, int n) {
  int s = 0;
  for (int i = threadIdx.x; i < n; i += 256) {
#ifdef WITH_DOT4
#pragma unroll
    for (int j = 0; j < 8; ++j) s = __builtin_amdgcn_sdot4(a[i + 32 * j], b[i + 32 * j], s, false);
#else
    for (int j = 0; j < 4; ++j) s += (signed char)(a[i] >> (8 * j)) * (signed char)(b[i] >> (8 * j));
#endif
  }
  d[threadIdx.x] = (float)s;
}
HIP
cc() { "${compile[@]}" --offload-arch=gfx906 --offload-arch=gfx1030 "$@" -c "$t/k.hip"; }
cc -o "$t/bytes.hsaco"
cc -DWITH_DOT4 -o "$t/dot4.hsaco"
out=$("$root/tools/check-dot4.sh" "$t/bytes.hsaco" gfx906 gfx1030 2>&1) && fail "byte-wise taken: $out"
grep -q 'gfx906 mul_mat_vec_q4_0_q8_1_cuda1: 0 v_dot4' <<< "$out" || fail "no byte-wise report: $out"
out=$("$root/tools/check-dot4.sh" "$t/dot4.hsaco" gfx906 2>&1) && fail "one kernel taken: $out"
grep -q 'cuda1: ' <<< "$out" && fail "a kernel with v_dot4 reported: $out"
grep -q 'gfx906: 1 MMVQ kernels, not 80' <<< "$out" || fail "no count report: $out"
"$root/tools/check-dot4.sh" "$t/dot4.hsaco" gfx908 > /dev/null 2>&1 && fail "a missing target taken"
echo "test_check_dot4.sh: ok"
