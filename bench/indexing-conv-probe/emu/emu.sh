#!/bin/bash
# CPU emulation of the INDEXING / CONV entry points (index_select, index_add, gather, im2col,
# upsample_nearest2d) against tests/reference under many grids, for machines without a GPU:
#   bench/indexing-conv-probe/emu/emu.sh   (from anywhere)
# EMU_FLAGS: extra compiler flags for the kernels, e.g. a tuning variant: EMU_FLAGS=-DHKB_IS_UNITS=2
# EMU_SMS_LIST: the multiprocessor counts to emulate (default "132 1 7").
set -eu
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../../.." && pwd)
w=$(mktemp -d); mkdir -p $w/kernels/common
cp $root/kernels/indexing.hip $root/kernels/conv.hip $w/kernels/
cp $root/kernels/common/*.h $w/kernels/common/; cp $here/platform_emu.h $w/kernels/common/platform.h
for m in indexing conv; do g++ -std=c++17 -O2 -ffp-contract=off -fno-strict-aliasing ${EMU_FLAGS:-} -x c++ -c $w/kernels/$m.hip -o $w/$m.o & done; wait
g++ -std=c++17 -O2 -I$root/include -I$root/tests $here/harness.cpp $w/indexing.o $w/conv.o -o $w/harness
# The resident split under several multiprocessor counts (EMU_SMS: what multiprocessors() says).
rc=0
for sms in ${EMU_SMS_LIST:-132 1 7}; do echo "EMU_SMS=$sms"; EMU_SMS=$sms $w/harness || rc=1; done
rm -rf $w; exit $rc
