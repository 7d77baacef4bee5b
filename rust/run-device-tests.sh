#!/usr/bin/env bash
# Runs the prebuilt Rust test binaries and the candle_style example against the libhkb in LIB_DIR,
# on a machine without cargo. Build them first where cargo is (any libhkb flavour will do, the
# binaries only record the soname libhkb.so.0; `cargo test --no-run` builds the examples too):
#   HKB_LIB_DIR=$PWD/build/<dir>/loader cargo test --offline --no-run --manifest-path rust/Cargo.toml
# then carry rust/target/debug (with this script) to the GPU machine and run
#   rust/run-device-tests.sh /path/to/build/nvidia/loader [test-binary args, e.g. --nocapture]
# The binaries' RUNPATH points at the build machine's library directory; LD_LIBRARY_PATH, set here,
# takes precedence over RUNPATH, so LIB_DIR's library is the one loaded (checked with ldd).
# Exit status: 0 when every binary passed, 1 otherwise, 2 on a usage error.
set -u

if [ $# -lt 1 ] || [ ! -d "$1" ]; then
  echo "usage: $0 LIB_DIR [test args...]   (LIB_DIR holds libhkb.so.0)" >&2
  exit 2
fi
lib_dir=$(cd "$1" && pwd)
shift
if [ ! -e "$lib_dir/libhkb.so.0" ]; then
  echo "error: $lib_dir has no libhkb.so.0" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
target=${HKB_RUST_TARGET_DIR:-$here/target/debug}
export LD_LIBRARY_PATH="$lib_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# The newest executable named NAME-<hash> in deps/ (cargo keeps old builds beside new ones).
newest_test() {
  find "$target/deps" -maxdepth 1 -type f -perm -u+x -name "$1-*" ! -name '*.*' \
    -printf '%T@ %p\n' 2>/dev/null | sort -rn | head -n 1 | cut -d' ' -f2-
}

failed=()
run_one() {
  local label=$1 bin=$2
  shift 2
  if [ -z "$bin" ] || [ ! -x "$bin" ]; then
    echo "error: no prebuilt binary for $label under $target" >&2
    failed+=("$label (missing)")
    return
  fi
  local resolved
  resolved=$(ldd "$bin" 2>/dev/null | awk '/libhkb\.so/ {print $3}')
  echo "=== $label: $bin"
  echo "    libhkb: ${resolved:-not found}"
  if [ "$(readlink -f "${resolved:-/nonexistent}")" != "$(readlink -f "$lib_dir/libhkb.so.0")" ]; then
    echo "error: $label would not load $lib_dir/libhkb.so.0" >&2
    failed+=("$label (wrong library)")
    return
  fi
  if ! "$bin" "$@"; then
    failed+=("$label")
  fi
}

run_one "hkb-sys unit tests" "$(newest_test hkb_sys)" "$@"
run_one "hkb unit tests" "$(newest_test hkb)" "$@"
run_one "hkb device tests" "$(newest_test device)" "$@"
run_one "candle_style example" "$target/examples/candle_style"

if [ ${#failed[@]} -gt 0 ]; then
  printf 'FAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "all Rust tests and the example passed against $lib_dir"
