#!/usr/bin/env bash
# The loader's launch cost against another tree's: builds that tree's hkb_bench_loader (modules
# affine and fill) and runs it alternating with this build's, each run its own process (a
# process's ratio is stable, the spread is between processes).
#
#   bench/loader_ab.sh [-B BUILD] [--runs N] OTHER_TREE
#   bench/loader_ab.sh .carry/base        # e.g. `git archive <rev> | tar -x -C .carry/base`
#
# BUILD: this tree's build with -DHKB_BUILD_BENCH=ON (default build/nvidia, as tools/gpu-test.sh
# makes it). Prints, per run and tree, hkb_launch / cuLaunchKernel, the same of adjacent batches
# and hkb's checks alone (empty grid, us).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/nvidia
runs=4
while [ $# -gt 1 ]; do
  case "$1" in
    -B) build=$(cd "$2" && pwd); shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    *) echo "loader_ab.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[ $# -eq 1 ] || { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
other=$(cd "$1" && pwd)
new=$build/bench/hkb_bench_loader
[ -x "$new" ] || { echo "loader_ab.sh: $new not built" >&2; exit 1; }
(cd "$other" && cmake --preset nvidia -B build/loader-ab -DHKB_MODULES="affine;fill" \
  -DHKB_BUILD_BENCH=ON -DHKB_BUILD_TESTS=OFF > /dev/null &&
  cmake --build build/loader-ab -j"$(nproc)" --target hkb_bench_loader > /dev/null)
old=$other/build/loader-ab/bench/hkb_bench_loader
summary() {
  "$1" 2>&1 | grep -E "hkb_launch vs|adjacent|empty grid" | awk '{print $NF}' | tr '\n' ' '
}
echo "run tree: hkb_launch/raw, adjacent batches, empty grid us"
for r in $(seq "$runs"); do
  echo "$r this:  $(summary "$new")"
  echo "$r other: $(summary "$old")"
done
