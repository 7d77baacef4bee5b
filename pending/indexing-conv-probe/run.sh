#!/bin/bash
# usage: pending/indexing-conv-probe/run.sh  (from the repository root) -> builds variants and times them
set -u
cd "$(dirname "$0")"
K=../../kernels
NV=${NVCC:-nvcc}
which $NV >/dev/null 2>&1 || NV=/usr/local/cuda/bin/nvcc
mkdir -p v
build() {  # variant module sed-expr
  local var=$1 mod=$2 expr=$3
  mkdir -p v/$var
  sed -e "$expr" $K/$mod.hip > v/$var/${mod}_variant.hip
  $NV -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -I$K -Iv/$var -I. probe_$mod.cu -o v/$var/probe_$mod 2> v/$var/$mod.err || { echo "build $var $mod failed"; tail -n 20 v/$var/$mod.err; }
}
# Variants of the work split under candle's grid, timed on one machine in one go:
#   base: the code as it is; busy: all threads of the first blocks (units_per_block returns
#   blockDim.x; upsample: one unit per thread, idle blocks read info before leaving);
#   range: every block its own range (blockDim.x / v threads), for every dtype.
phase=${1:-all}
if [ "$phase" != time ]; then
for mod in indexing conv; do
  build base $mod 's/x/x/' &
  build busy $mod 's/const uint32_t busy = own > 256 ? own : 256;/const uint32_t busy = b;/; s/const uint32_t per_block = (blockDim.x + V - 1) \/ V;/const uint32_t per_block = blockDim.x;/' &
  build range $mod 's/const uint32_t busy = own > 256 ? own : 256;/const uint32_t busy = own;/' &
done
wait
fi
[ "$phase" = build ] && exit 0
for var in base busy range; do
  grep -c "busy = b;\|busy = own;\|per_block = blockDim.x;" v/$var/*_variant.hip
  for mod in indexing conv; do echo "== $var $mod"; [ -x v/$var/probe_$mod ] && v/$var/probe_$mod; done
done
