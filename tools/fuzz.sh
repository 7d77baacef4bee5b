#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang-15 under ASan+UBSan (one module, one AMD
# target) and runs each from a seed corpus of real files: the test code objects, this build's
# bundle, every manifest and candle's ABI table.
# Usage: tools/fuzz.sh [--seconds N | --runs N] [--jobs J] [TARGET...]
#   default: 60 seconds per target (CI); --runs N: N executions per target.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=(-max_total_time=60)
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) limit=(-max_total_time="$2"); shift ;;
    --runs) limit=(-runs="$2"); shift ;;
    fuzz_*) targets+=("$1") ;;
    *) echo "usage: $0 [--seconds N | --runs N] [fuzz_TARGET...]" >&2; exit 2 ;;
  esac
  shift
done
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_code_object fuzz_msgpack fuzz_manifest fuzz_candle_abi fuzz_cpu_module)
build=build/fuzz
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
if [ ! -f "$build/build.ninja" ]; then
  CC=clang-15 CXX=clang++-15 cmake -S . -B "$build" -G Ninja -DHKB_GPU_PLATFORM=amd \
    -DHKB_AMDGPU_TARGETS=gfx90a -DHKB_MODULES=affine -DHKB_CPU_MODULES=ON -DHKB_BUILD_TESTS=OFF \
    -DHKB_BUILD_FUZZERS=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS="$san" -DCMAKE_CXX_FLAGS="$san -fsanitize=fuzzer-no-link" \
    -DCMAKE_EXE_LINKER_FLAGS="$san" -DCMAKE_SHARED_LINKER_FLAGS="$san" > /dev/null
fi
cmake --build "$build" -j"${HKB_JOBS:-2}" --target hkb_fuzzers

# Seeds: real files only, copied so that the fuzzer's new inputs never land in the source tree.
seeds=$build/seeds
rm -rf "$seeds" && mkdir -p "$seeds"/{fuzz_code_object,fuzz_msgpack,fuzz_manifest,fuzz_candle_abi,fuzz_cpu_module}
cp tests/data/inventory/tiny.hsaco tests/data/inventory/tiny.fatbin "$build"/bundle/*.hsaco \
  "$seeds/fuzz_code_object/"
cp tests/fuzz/seeds/msgpack/* "$seeds/fuzz_msgpack/"
cp manifests/*.json tests/data/inventory/tiny-manifest.json "$seeds/fuzz_manifest/"
# The whole table and its first lines (small inputs mutate faster).
cp manifests/candle-abi.tsv "$seeds/fuzz_candle_abi/full.tsv"
head -n 40 manifests/candle-abi.tsv > "$seeds/fuzz_candle_abi/head.tsv"
# A CPU module archive, and its wave-64 shared object alone.
cp "$build"/bundle/affine.cpu "$build"/bundle/wave64/affine.so "$seeds/fuzz_cpu_module/"

status=0
for t in "${targets[@]}"; do
  echo "== $t (${limit[*]}) =="
  corpus=$build/corpus/$t
  mkdir -p "$corpus" "$build/artifacts"
  rm -f "$build/artifacts/$t"-*
  start=$(date +%s)
  if ! "$build/tests/fuzz/$t" "${limit[@]}" -max_len=262144 -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$build/artifacts/$t-" "$corpus" "$seeds/$t" \
      > "$build/$t.log" 2>&1; then
    status=1
    tail -n 60 "$build/$t.log"
    # What reproduces it where the artifact file is out of reach (CI): the seed, and a small input.
    grep -m1 "INFO: Seed:" "$build/$t.log" || true
    for a in "$build/artifacts/$t"-*; do
      [ -f "$a" ] || continue
      n=$(stat -c %s "$a")
      echo "artifact $a: $n bytes"
      if [ "$n" -le 4096 ]; then base64 -w 100 "$a"; fi
    done
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$build/$t.log" | tr '\n' ' '
  echo "($(($(date +%s) - start)) s)"
done
[ $status = 0 ] && echo "fuzz: no crash, leak, hang or sanitizer finding"
exit $status
