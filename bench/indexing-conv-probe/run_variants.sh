#!/bin/bash
# usage (from anywhere, on a machine with an NVIDIA GPU):
#   bench/indexing-conv-probe/run_variants.sh conv|indexing
# Builds probe_<module>.cu against variants of kernels/<module>.hip in parallel (outside the work
# tree) and times each under candle's launch geometry (% of a device-to-device copy), one line per
# kernel and variant. Extra variants: VARIANTS="name:-Dflag,-Dflag ...".
#   conv:     m1 / m2: HKB_CONV_COPY_PACKS=1 / 2 (f32 units a thread of the group split) with
#             groups of one round; m2r2: two rounds (the default in conv.hip).
#   indexing: uU[f][bB]: HKB_IS_UNITS=U words in flight per thread (4 is the default), f: busy
#             blocks first instead of spread, bB: HKB_IS_BLOCKS=B blocks per multiprocessor,
#             tT: HKB_IS_BUSY=T threads of a busy block (256 is the default).
set -u
mod=${1:?usage: run_variants.sh conv|indexing}
cd "$(dirname "$0")"
K=../../kernels
NV=${NVCC:-nvcc}
command -v "$NV" >/dev/null 2>&1 || NV=/usr/local/cuda/bin/nvcc
case "$mod" in
  conv)
    variants="m1:-DHKB_CONV_COPY_PACKS=1,-DHKB_CONV_GROUP_ROUNDS=1
      m2:-DHKB_CONV_COPY_PACKS=2,-DHKB_CONV_GROUP_ROUNDS=1
      m2r2:-DHKB_CONV_COPY_PACKS=2,-DHKB_CONV_GROUP_ROUNDS=2
      m2r4:-DHKB_CONV_COPY_PACKS=2,-DHKB_CONV_GROUP_ROUNDS=4" ;;
  indexing)
    variants="u1f:-DHKB_IS_UNITS=1,-DHKB_IS_SPREAD=0 u2:-DHKB_IS_UNITS=2
      u2f:-DHKB_IS_UNITS=2,-DHKB_IS_SPREAD=0 u4:-DHKB_IS_UNITS=4
      u4b1:-DHKB_IS_UNITS=4,-DHKB_IS_BLOCKS=1 u8b1:-DHKB_IS_UNITS=8,-DHKB_IS_BLOCKS=1
      u4t512:-DHKB_IS_BUSY=512 u4t1k:-DHKB_IS_BUSY=1024 u2t1k:-DHKB_IS_UNITS=2,-DHKB_IS_BUSY=1024" ;;
  *) echo "unknown module $mod" >&2; exit 2 ;;
esac
variants="$variants ${VARIANTS:-}"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for v in $variants; do
  name=${v%%:*} flags=${v#*:} flags=${flags//,/ }
  mkdir -p "$out/$name"
  cp "$K/$mod.hip" "$out/$name/${mod}_variant.hip"
  # shellcheck disable=SC2086
  $NV -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 $flags -I$K -I"$out/$name" -I. \
    "probe_$mod.cu" -o "$out/$name/probe" 2> "$out/$name/build.err" &
done
wait
for v in $variants; do
  name=${v%%:*}
  if [ -x "$out/$name/probe" ]; then
    "$out/$name/probe" | sed "s/^/$(printf '%-7s' "$name") /"
  else
    echo "$name: build failed"
    tail -n 20 "$out/$name/build.err"
  fi
done
