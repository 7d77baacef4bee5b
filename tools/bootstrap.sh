#!/usr/bin/env bash
# Set-up and main job on a fresh Debian 12 machine: install the dependencies, build the bundle
# (AMD code objects for HKB_AMDGPU_TARGETS, default gfx906;gfx908;gfx90a;gfx940;gfx1030), check
# the inventory against the code objects and candle's ABI, list the kernels, and run `hkb doctor`.
# On a machine with an NVIDIA GPU it also builds the nvidia flavour and runs the GPU tests.
# Run it as yourself or as root: the apt step goes through sudo unless it already runs as root
# (a fresh container has root and no sudo).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" = 0 ]; then tools/install-deps.sh; else sudo tools/install-deps.sh; fi
cmake --preset amd ${HKB_AMDGPU_TARGETS:+-DHKB_AMDGPU_TARGETS="$HKB_AMDGPU_TARGETS"}
cmake --build build/amd
build/amd/tools/hkb list | tail -1
if build/amd/tools/hkb --help 2>/dev/null | grep -q check; then
  build/amd/tools/hkb check
fi
build/amd/tools/hkb doctor
if command -v nvidia-smi > /dev/null 2>&1 && nvidia-smi > /dev/null 2>&1; then
  tools/gpu-test.sh
fi
