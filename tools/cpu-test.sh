#!/usr/bin/env bash
# The GPU tests on the CPU platform: the kernels' AMD code path compiled for the host, every GPU
# thread a fiber, at wave 64 (CDNA) and wave 32 (RDNA), side by side where there are two cores.
# No GPU needed. One family in seconds:
#   tools/cpu-test.sh --modules affine --filter 'Affine*' --wave 64
# Options: --modules "a b" (default: all), --filter GTEST_FILTER (default '*'),
#          --wave 64|32|both (default both), --build-dir DIR (default build/cpu).
set -euo pipefail
cd "$(dirname "$0")/.."
modules="" filter="*" waves="64 32" build=build/cpu
jobs=${HKB_JOBS:-$(nproc)}
while [ $# -gt 0 ]; do
  case "$1" in
    --modules) modules=$2; shift 2 ;;
    --filter) filter=$2; shift 2 ;;
    --wave)
      case "$2" in
        64 | 32) waves=$2 ;;
        both) waves="64 32" ;;
        *) echo "cpu-test.sh: --wave takes 64, 32 or both, not '$2'" >&2; exit 2 ;;
      esac
      shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    -h | --help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "cpu-test.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
modules=$(echo "$modules" | tr ' ,' ';;')
cmake --preset cpu -B "$build" -DHKB_MODULES="$modules" -DHKB_CPU_WAVE_SIZES="${waves// /;}" \
  > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j"$jobs" --target hkb_gpu_tests hkb_tool
run_wave() {
  local start rc=0
  start=$(date +%s)
  echo "== GPU tests on the CPU platform, wave $1 =="
  HKB_CPU_WAVE=$1 "$build/tests/hkb_gpu_tests" --gtest_filter="$filter" --gtest_brief=1 || rc=1
  echo "(wave $1: $(($(date +%s) - start)) s)"
  return $rc
}
status=0
set -- $waves
if [ $# -gt 1 ] && [ "$jobs" -gt 1 ]; then
  # Each test process runs its fibers on one core: the waves run side by side, their logs printed
  # in wave order once both end.
  logs=()
  pids=()
  for w in "$@"; do
    logs+=("$build/wave$w.log")
    run_wave "$w" > "$build/wave$w.log" 2>&1 &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || status=1
    cat "${logs[$i]}"
  done
else
  for w in "$@"; do run_wave "$w" || status=1; done
fi
exit $status
