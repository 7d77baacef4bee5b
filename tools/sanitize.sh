#!/usr/bin/env bash
# Sanitizer job (CI): builds the loader, the tool and the unit tests with clang-15 under
#   asan: AddressSanitizer + UndefinedBehaviorSanitizer (every finding fatal), or
#   tsan: ThreadSanitizer,
# for one module and one AMD target, and runs every unit test: the loader against the fake
# runtime, the C ABI concurrency tests (shutdown racing lookups, loads, launches and streams),
# the inventory readers and the hkb tool itself.
# Usage: tools/sanitize.sh asan|tsan
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-}
case "$kind" in
  asan) san="-fsanitize=address,undefined -fno-sanitize-recover=all" ;;
  tsan) san="-fsanitize=thread" ;;
  *) echo "usage: $0 asan|tsan" >&2; exit 2 ;;
esac
build=build/$kind
if [ ! -f "$build/build.ninja" ]; then
  CC=clang-15 CXX=clang++-15 cmake -S . -B "$build" -G Ninja -DHKB_GPU_PLATFORM=amd \
    -DHKB_AMDGPU_TARGETS=gfx90a -DHKB_MODULES=affine -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_C_FLAGS="$san -fno-omit-frame-pointer" -DCMAKE_CXX_FLAGS="$san -fno-omit-frame-pointer" \
    -DCMAKE_EXE_LINKER_FLAGS="$san" -DCMAKE_SHARED_LINKER_FLAGS="$san" > /dev/null
fi
cmake --build "$build" -j"${HKB_JOBS:-2}" --target hkb_unit_tests hkb_tool
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
echo "== unit tests under $kind =="
"$build/tests/hkb_unit_tests"
