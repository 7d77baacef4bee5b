#!/bin/bash
# CPU emulation of the INDEXING / CONV entry points (index_select, index_add, gather, im2col,
# upsample_nearest2d) against tests/reference under many grids, for machines without a GPU:
#   bench/indexing-conv-probe/emu/emu.sh   (from anywhere)
# EMU_FLAGS: extra compiler flags for the kernels, e.g. a tuning variant: EMU_FLAGS=-DHKB_IS_BUSY=1024
set -eu
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../../.." && pwd)
w=$(mktemp -d); mkdir -p $w/kernels/common
cp $root/kernels/indexing.hip $root/kernels/conv.hip $w/kernels/
cp $root/kernels/common/*.h $w/kernels/common/; cp $here/platform_emu.h $w/kernels/common/platform.h
for m in indexing conv; do g++ -std=c++17 -O2 -ffp-contract=off -fno-strict-aliasing ${EMU_FLAGS:-} -x c++ -c $w/kernels/$m.hip -o $w/$m.o & done; wait
g++ -std=c++17 -O2 -I$root/include -I$root/tests $here/harness.cpp $w/indexing.o $w/conv.o -o $w/harness
$w/harness; rc=$?; rm -rf $w; exit $rc
