#!/bin/bash
# Times work-split variants of the elementwise drivers on an NVIDIA GPU, one line per (variant,
# case), checked against the host:  bench/elementwise_probe/run.sh   (from anywhere)
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${PROBE_OUT:-/tmp/elementwise_probe}
mkdir -p "$out"
declare -A variants=(
  [p16]="-DHKB_PACK_BYTES=16"
  [p32]="-DHKB_PACK_BYTES=32"
  [p16t128]="-DHKB_PACK_BYTES=16 -DHKB_PACK_THREADS=128"
  [p32t128]="-DHKB_PACK_BYTES=32 -DHKB_PACK_THREADS=128"
)
modules=${PROBE_MODULES:-"BINARY UNARY CAST TERNARY"}
for v in "${!variants[@]}"; do
  for m in $modules; do
    nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -w -DPROBE_$m ${variants[$v]} \
      -I"$here/../../kernels" "$here/probe.cu" -o "$out/$m.$v" 2> "$out/$m.$v.err" ||
      { echo "build $m $v failed"; tail -5 "$out/$m.$v.err"; } &
  done
done
wait
for m in $modules; do
  for v in $(printf '%s\n' "${!variants[@]}" | sort); do
    [ -x "$out/$m.$v" ] && "$out/$m.$v" "$v"
  done
done
