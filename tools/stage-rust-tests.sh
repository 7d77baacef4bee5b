#!/usr/bin/env bash
# Builds the Rust test binaries and the example here (the GPU machine has no cargo) and copies the
# newest of each, stripped, into .rustbin/ (git-ignored), small enough to carry to that machine,
# where tools/gpu-test.sh runs them with rust/run-device-tests.sh against the nvidia libhkb.
set -euo pipefail
cd "$(dirname "$0")/.."
lib=${1:-$PWD/build/amd/loader}
HKB_LIB_DIR=$lib cargo test --offline --no-run --manifest-path rust/Cargo.toml
rm -rf .rustbin
mkdir -p .rustbin/deps .rustbin/examples
for name in hkb_sys hkb device; do
  bin=$(find rust/target/debug/deps -maxdepth 1 -type f -perm -u+x -name "$name-*" ! -name '*.*' \
    -printf '%T@ %p\n' | sort -rn | head -n 1 | cut -d' ' -f2-)
  cp "$bin" .rustbin/deps/
done
cp rust/target/debug/examples/candle_style .rustbin/examples/
strip .rustbin/deps/* .rustbin/examples/*
du -sh .rustbin
