#!/bin/bash
# One GPU session of work-split measurements (NVIDIA): builds the variant probes, times every
# probe variant, then runs the GPU tests of the default code. Logs go to $OUT.
#   bench/run-probes.sh [--no-tests]
set -u
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/hkb-probes}
mkdir -p "$out"
tests=1
[ "${1:-}" = --no-tests ] && tests=0
bench/reduce-probe/run.sh build > "$out/reduce-build.log" 2>&1 &
wait
nv=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
"$nv" -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -w -Ikernels bench/geometry_probe.cu \
  -o "$out/geometry_probe" && "$out/geometry_probe" > "$out/geometry-probe.log" 2>&1
bench/elementwise_probe/run.sh > "$out/elementwise-probe.log" 2>&1
bench/reduce-probe/run.sh time > "$out/reduce-probe.log" 2>&1
bench/indexing-conv-probe/run_variants.sh conv > "$out/conv-probe.log" 2>&1
bench/indexing-conv-probe/run_variants.sh indexing > "$out/indexing-probe.log" 2>&1
if [ "$tests" = 1 ]; then tools/gpu-test.sh > "$out/gpu-test.log" 2>&1; fi
tail -8 "$out/gpu-test.log" 2>/dev/null
