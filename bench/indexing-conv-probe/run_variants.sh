#!/bin/bash
# usage (from anywhere):
#   bench/indexing-conv-probe/run_variants.sh conv|indexing [build|time]
# Builds probe_<module>.cu against variants of kernels/<module>.hip in parallel (outside the work
# tree) and times each under candle's launch geometry (% of a device-to-device copy), one line per
# kernel and variant. build: only compile into $PROBE_OUT (on a machine without a GPU, then
# carried); time: only run what $PROBE_OUT holds. Extra variants: VARIANTS="name:-Dflag,-Dflag ...";
# PROBE_VARIANTS="base ..." builds or times only the variants named.
#   Both: base = the defaults (resident split, kernels/common/elementwise.h, with half a busy block
#         per multiprocessor); q4: HKB_RESIDENT_QUARTERS=4 (one per multiprocessor).
#   conv:     m1: HKB_CONV_COPY_PACKS=1 (f32 units a thread per round, 2 by default).
#   indexing: u2: HKB_IS_UNITS=2 words in flight per thread (4 by default).
set -u
mod=${1:?usage: run_variants.sh conv|indexing [build|time]}
mode=${2:-all}
cd "$(dirname "$0")"
K=../../kernels
NV=${NVCC:-nvcc}
command -v "$NV" >/dev/null 2>&1 || NV=/usr/local/cuda/bin/nvcc
common="base: q4:-DHKB_RESIDENT_QUARTERS=4"
case "$mod" in
  conv) variants="$common m1:-DHKB_CONV_COPY_PACKS=1" ;;
  indexing) variants="$common u2:-DHKB_IS_UNITS=2" ;;
  *) echo "unknown module $mod" >&2; exit 2 ;;
esac
variants="$variants ${VARIANTS:-}"
if [ -n "${PROBE_VARIANTS:-}" ]; then  # only these names, e.g. PROBE_VARIANTS="base q4"
  kept=""
  for v in $variants; do
    [[ " $PROBE_VARIANTS " == *" ${v%%:*} "* ]] && kept="$kept $v"
  done
  variants=$kept
fi
if [ -n "${PROBE_OUT:-}" ]; then
  out=$PROBE_OUT/$mod
  mkdir -p "$out"
else
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
if [ "$mode" != time ]; then
  for v in $variants; do
    name=${v%%:*} flags=${v#*:} flags=${flags//,/ }
    mkdir -p "$out/$name"
    cp "$K/$mod.hip" "$out/$name/${mod}_variant.hip"
    # shellcheck disable=SC2086
    $NV -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -w $flags -I$K -I"$out/$name" -I. \
      "probe_$mod.cu" -o "$out/$name/probe" 2> "$out/$name/build.err" &
    [ "$(jobs -r | wc -l)" -ge "$(nproc)" ] && wait -n
  done
  wait
fi
[ "$mode" = build ] && exit 0
for v in $variants; do
  name=${v%%:*}
  if [ -x "$out/$name/probe" ]; then
    "$out/$name/probe" | sed "s/^/$(printf '%-7s' "$name") /"
  else
    echo "$name: build failed"
    tail -n 20 "$out/$name/build.err"
  fi
done
