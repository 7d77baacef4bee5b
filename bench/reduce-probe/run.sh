#!/bin/bash
# usage (from the repository root): bench/reduce-probe/run.sh [build|time]
# Builds one probe per HKB_FAST_* variant of kernels/reduce.hip in parallel (a copy trimmed to the
# f32/bf16 fast_* entry points, so each compiles in seconds), then runs them one after another:
# one line per (variant, case) with the time, % of a device-to-device copy and the result check.
set -u
cd "$(dirname "$0")"
NV=${NVCC:-nvcc}
command -v "$NV" >/dev/null 2>&1 || NV=/usr/local/cuda/bin/nvcc
OUT=${PROBE_DIR:-/tmp/hkb-reduce-probe}
mkdir -p "$OUT"
# The module without the entry points the probe does not use.
sed -e 's/^HKB_DTYPES_FLOAT(HKB_ROW_OPS)$//' -e 's/^HKB_DTYPES_FLOAT(HKB_SUM)$//' \
  -e 's/^HKB_SUM(u32, uint32_t)$//' -e '/^#define HKB_REDUCE_FAST_DTYPES(X)/,/^$/c\
#define HKB_REDUCE_FAST_DTYPES(X) X(bf16, hkb::bf16, 2) X(f32, float, 2)\
' ../../kernels/reduce.hip >"$OUT/reduce_trimmed.hip"
grep -q 'X(bf16, hkb::bf16, 2) X(f32, float, 2)$' "$OUT/reduce_trimmed.hip" || {
  echo "trimming kernels/reduce.hip failed"
  exit 1
}
# name: macros (defaults: HKB_FAST_BLOCKS=1024 HKB_FAST_ROWS=4 HKB_FAST_DEPTH=2 HKB_FAST_PRESUM=1)
VARIANTS=(
  "default:"
  "blocks512:-DHKB_FAST_BLOCKS=512"
  "blocks2048:-DHKB_FAST_BLOCKS=2048"
  "blocks4096:-DHKB_FAST_BLOCKS=4096"
  "rows1:-DHKB_FAST_ROWS=1"
  "rows2:-DHKB_FAST_ROWS=2"
  "rows8:-DHKB_FAST_ROWS=8"
  "depth1:-DHKB_FAST_DEPTH=1"
  "depth3:-DHKB_FAST_DEPTH=3"
  "depth4:-DHKB_FAST_DEPTH=4"
  "nopresum:-DHKB_FAST_PRESUM=0"
)
phase=${1:-all}
if [ "$phase" != time ]; then
  for v in "${VARIANTS[@]}"; do
    name=${v%%:*}
    flags=${v#*:}
    (
      $NV -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -I../../kernels -I"$OUT" \
        -DVARIANT="\"$name\"" $flags -Xptxas -warn-spills reduce_probe.cu -o "$OUT/probe_$name" \
        >"$OUT/$name.log" 2>&1 || echo "build $name failed: $(tail -n 5 "$OUT/$name.log")"
      grep -c "spill" "$OUT/$name.log" | sed "s/^/$name: ptxas spill warnings: /"
    ) &
  done
  wait
fi
[ "$phase" = build ] && exit 0
for v in "${VARIANTS[@]}"; do
  name=${v%%:*}
  [ -x "$OUT/probe_$name" ] && "$OUT/probe_$name"
done
