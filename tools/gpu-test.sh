#!/usr/bin/env bash
# Builds the nvidia flavour and runs every GPU test on a machine with an NVIDIA GPU and the CUDA
# toolkit but none of Debian's -dev packages: those come as .deb files in .deps/ (fetch them on a
# Debian 12 machine with tools/fetch-deps.sh) and are unpacked into /opt/deps.
#
#   tools/gpu-test.sh [--bench] [--build-only] [--filter GTEST_FILTER] [--modules "a;b"]
#
# --build-only stops after the build (a tree for bench/tune.sh when the tests ran before).
#
# Writes logs to $OUT (or build/nvidia/logs) and prints a summary last.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
bench=0
build_only=0
filter='*'
modules=''
while [ $# -gt 0 ]; do
  case "$1" in
    --bench) bench=1 ;;
    --build-only) build_only=1 ;;
    --filter) filter="$2"; shift ;;
    --modules) modules="$2"; shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
logs=${OUT:-$root/build/nvidia/logs}
mkdir -p "$logs"

deps=/opt/deps
if [ -d .deps ] && [ ! -d "$deps/usr" ]; then
  for f in .deps/*.deb; do dpkg -x "$f" "$deps"; done
fi
export CMAKE_PREFIX_PATH=$deps/usr
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
set -e
cmake --preset nvidia -DHKB_MODULES="$modules" -DHKB_BUILD_BENCH=ON > "$logs/configure.log" 2>&1 ||
  { tail -30 "$logs/configure.log"; exit 1; }
if ! cmake --build build/nvidia -j"$(nproc)" > "$logs/build.log" 2>&1; then
  grep -E "error|FAILED" -A5 "$logs/build.log" | head -80
  exit 1
fi
set +e
if [ "$build_only" = 1 ]; then
  echo "built build/nvidia (modules: ${modules:-all}); no tests run"
  exit 0
fi
summary=()
build/nvidia/tools/hkb doctor 2>&1 | tee "$logs/doctor.log" | tail -20
summary+=("doctor: rc ${PIPESTATUS[0]}")
ctest --test-dir build/nvidia -L unit -j"$(nproc)" > "$logs/unit.log" 2>&1
summary+=("unit: $(grep -E 'tests passed|tests failed' "$logs/unit.log")")
build/nvidia/tests/hkb_gpu_tests --gtest_filter="$filter" --gtest_brief=1 > "$logs/gpu.log" 2>&1
gpu_rc=$?
grep -E "^\[  FAILED  \]|Failure|error" "$logs/gpu.log" | head -60
summary+=("gpu: rc $gpu_rc, $(grep -E '^\[  PASSED  \]' "$logs/gpu.log") $(grep -E '^\[  FAILED  \] [0-9]+ test' "$logs/gpu.log") $(grep -E '^\[  SKIPPED \] [0-9]+ test' "$logs/gpu.log")")
HKB_DEBUG_SYNC=1 build/nvidia/tests/hkb_gpu_tests --gtest_filter='LoaderTest.*:GpuTest.*' --gtest_brief=1 > "$logs/gpu-debug-sync.log" 2>&1
summary+=("gpu with HKB_DEBUG_SYNC=1 (loader subset): rc $?")
# Rust: binaries staged on a machine with cargo by tools/stage-rust-tests.sh (carried as .rustbin).
if [ -x rust/run-device-tests.sh ] && [ -d .rustbin ]; then
  HKB_RUST_TARGET_DIR=$root/.rustbin rust/run-device-tests.sh "$root/build/nvidia/loader" \
    > "$logs/rust.log" 2>&1
  rc=$?
  tail -15 "$logs/rust.log"
  summary+=("rust: rc $rc")
fi
if [ "$bench" = 1 ]; then
  for b in build/nvidia/bench/hkb_bench_*; do
    [ -x "$b" ] || continue
    "$b" 2>&1 | tee -a "$logs/bench.log"
  done
  if [ -f bench/torch_baseline.py ]; then
    python3 bench/torch_baseline.py 2>&1 | tee -a "$logs/bench.log"
  fi
fi
echo "=== summary ==="
printf '%s\n' "${summary[@]}"
[ $gpu_rc -eq 0 ]
