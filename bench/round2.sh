#!/usr/bin/env bash
# Issue #21's cases (speed round 2) before and after in one run, PyTorch beside them: the benchmarks
# of the eight modules those cases live in, restricted to them, on BUILD's code objects ("base")
# and on another tree's kernels ("before"), then bench/torch_baseline.py.
#
#   git archive 3f8969f kernels | tar -x -C /tmp/pre21     # main before #21's work
#   bench/round2.sh /tmp/pre21/kernels                      # after tools/gpu-test.sh
#
# HKB_BENCH_FILTER overrides the cases; -B BUILD as for bench/tune.sh. Every table goes to stdout;
# tune.sh's per-run logs (34 files) go to BUILD/variants/logs, or, with $OUT set (the device
# machine, which returns at most 8 files), into one $OUT/round2-logs.tgz.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_args=()
if [ "${1:-}" = -B ]; then build_args=(-B "$2"); shift 2; fi
[ $# -eq 1 ] && [ -d "$1" ] || { echo "usage: bench/round2.sh [-B BUILD] OLD_KERNELS_DIR" >&2; exit 2; }
cases=gather_i64,softmax,im2col1d,fast_,rope,copy2d,bilinear,ucopy,const_set,affine,pool2d
cases+=,layernorm,rmsnorm,bmaximum,bdiv,asort,conv_transpose
export HKB_BENCH_FILTER=${HKB_BENCH_FILTER:-$cases}
out=${OUT:-}
logs=''
if [ -n "$out" ]; then
  logs=$(mktemp -d)
  trap 'tar czf "$out/round2-logs.tgz" -C "$logs" . && rm -rf "$logs"' EXIT
fi
OUT=$logs "$root/bench/tune.sh" "${build_args[@]}" --kernels "$1" \
  reduce,indexing,conv,fill,unary,affine,binary,sort before ""
python3 "$root/bench/torch_baseline.py"
