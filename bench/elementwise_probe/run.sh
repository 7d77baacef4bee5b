#!/bin/bash
# Times work-split variants of the elementwise drivers on an NVIDIA GPU, one line per (variant,
# case), checked against the host:  bench/elementwise_probe/run.sh [build|time]   (from anywhere)
# build: only compile into $PROBE_OUT (for example on a machine without a GPU, then carried);
# time: only run what $PROBE_OUT holds. PROBE_MODULES / PROBE_VARIANTS pick subsets. Variants
# apply to the modules whose drivers they change.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${PROBE_OUT:-/tmp/elementwise_probe}
mkdir -p "$out"
declare -A variants=(
  [base]=""
  [q1]="-DHKB_RESIDENT_QUARTERS=1"
  [q3]="-DHKB_RESIDENT_QUARTERS=3"
  [q4]="-DHKB_RESIDENT_QUARTERS=4"
)
declare -A applies=(  # variant -> modules it changes
  [base]="BINARY UNARY CAST TERNARY" [q1]="BINARY UNARY CAST TERNARY"
  [q3]="BINARY UNARY CAST TERNARY" [q4]="BINARY UNARY CAST TERNARY"
)
modules=${PROBE_MODULES:-"BINARY UNARY CAST TERNARY"}
only=${PROBE_VARIANTS:-"${!variants[*]}"}  # a subset of the variants, e.g. "base q3"
mode=${1:-all}
if [ "$mode" != time ]; then
  for v in $only; do
    for m in $modules; do
      [[ " ${applies[$v]} " == *" $m "* ]] || continue
      nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -w -DPROBE_$m ${variants[$v]} \
        -I"$here/../../kernels" "$here/probe.cu" -o "$out/$m.$v" 2> "$out/$m.$v.err" ||
        { echo "build $m $v failed"; tail -5 "$out/$m.$v.err"; } &
      [ "$(jobs -r | wc -l)" -ge "$(nproc)" ] && wait -n
    done
  done
  wait
fi
[ "$mode" = build ] && exit 0
for m in $modules; do
  for v in $(printf '%s\n' "${!variants[@]}" | sort); do
    [ -x "$out/$m.$v" ] && "$out/$m.$v" "$v"
  done
done
