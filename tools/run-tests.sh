#!/usr/bin/env bash
# The test command: builds what is not built yet, then runs
#   - the unit tests and the GPU tests (ctest; GPU tests skip with a message when no GPU is present),
#   - the inventory check of every code object against the manifest and candle's ABI, and the
#     static report of every kernel on every AMD target (no register spills, no scratch), and the
#     MMVQ kernels' v_dot4 in the disassembly (tools/check-dot4.sh),
#   - a compile of the nvidia flavour (kernels through nvcc, the CUDA driver backend),
#   - the Rust crates' tests against the AMD build of libhkb,
#   - bench/tune.sh's argument handling against a fake build (tests/tools/test_tune.sh),
#   - the GPU tests on the CPU platform (the AMD code path on the host, wave 64 and 32).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${HKB_JOBS:-$(nproc)}
[ -f build/amd/build.ninja ] || cmake --preset amd
cmake --build build/amd -j"$jobs"
if build/amd/tools/hkb --help 2>/dev/null | grep -q check; then
  echo "== hkb check (amd) =="
  build/amd/tools/hkb check --require-layouts --bundle build/amd/bundle
  echo "== hkb report (amd): no kernel spills registers or uses scratch on any target =="
  # Fails naming each kernel and target that does (stderr); the full table stays in a file.
  build/amd/tools/hkb report --fail-on-spill --bundle build/amd/bundle > build/amd/hkb-report.txt ||
    { echo "full report: build/amd/hkb-report.txt"; exit 1; }
  tail -n 1 build/amd/hkb-report.txt
  echo "== MMVQ on AMD: v_dot4 and no byte-wise fallback (disassembly) =="
  tools/check-dot4.sh build/amd/bundle/quantized.hsaco gfx906 gfx90a gfx1030
  tests/tools/test_check_dot4.sh
fi
if command -v nvcc > /dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "== nvidia flavour (compile) =="
  [ -f build/nvidia/build.ninja ] || cmake --preset nvidia
  cmake --build build/nvidia -j"$jobs"
  echo "== hkb check (nvidia: cubin parameter layouts) =="
  # The tool links the CUDA driver; on a machine without one the build's stub satisfies the loader
  # (the check reads files only).
  LD_LIBRARY_PATH=$PWD/build/nvidia/cuda-stub${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
    build/nvidia/tools/hkb check --require-layouts --bundle build/nvidia/bundle
fi
if [ -f rust/Cargo.toml ] && command -v cargo > /dev/null 2>&1; then
  echo "== rust =="
  HKB_LIB_DIR=$PWD/build/amd/loader cargo test --offline --manifest-path rust/Cargo.toml
fi
echo "== ctest (amd) =="
ctest --test-dir build/amd --output-on-failure -j"$jobs"
echo "== bench/tune.sh arguments (a fake build) =="
tests/tools/test_tune.sh

# The GPU test suite executed on the CPU platform: the kernels' AMD code path compiled for the host
# (build/cpu), at wave 64 and at wave 32. See README "The CPU platform".
echo "== GPU tests on the CPU platform (wave 64, wave 32) =="
cpu_start=$(date +%s)
HKB_JOBS=$jobs tools/cpu-test.sh
# A GPU flavour selects the CPU platform too: the amd build's own test binary and doctor, with
# HKB_PLATFORM=cpu, on the cpu build's modules (one family; the selection rules are unit tests).
echo "== amd build with HKB_PLATFORM=cpu (modules of build/cpu) =="
for w in 64 32; do
  HKB_PLATFORM=cpu HKB_CPU_WAVE=$w HKB_CPU_BUNDLE_DIR=$PWD/build/cpu/bundle \
    build/amd/tests/hkb_gpu_tests --gtest_filter='LoaderTest.*:Affine*' --gtest_brief=1
done
HKB_PLATFORM=cpu HKB_CPU_BUNDLE_DIR=$PWD/build/cpu/bundle build/amd/tools/hkb doctor > /dev/null
echo "== CPU platform: $(($(date +%s) - cpu_start)) s =="
