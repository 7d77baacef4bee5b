#!/usr/bin/env bash
# Packaging check (CI): builds a small hkb (one module, one AMD target, no tests), then
#   1. installs it into a temporary prefix, moves that prefix elsewhere, and builds and runs the
#      consumers in examples/ against it: C through pkg-config, C++ through find_package(hkb);
#      the installed `hkb check` must find the installed bundle, manifest and candle-abi.tsv;
#   2. with --deb (needs root; CI runs as root): `cpack -G DEB`, checks each package's contents,
#      `apt-get install ./*.deb`, runs `hkb --version`, `hkb check` and both consumers against
#      /usr, then `apt-get purge`s the packages again.
# Usage: tools/test-install.sh [--deb] [--build-dir DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
deb=0
build=build/pkg
while [ $# -gt 0 ]; do
  case "$1" in
    --deb) deb=1 ;;
    --build-dir) build=$2; shift ;;
    *) echo "usage: $0 [--deb] [--build-dir DIR]" >&2; exit 2 ;;
  esac
  shift
done
jobs=${HKB_JOBS:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

build_small() {
  echo "== package build ($build: affine, gfx90a) =="
  [ -f "$build/build.ninja" ] || cmake -S . -B "$build" -G Ninja -DHKB_GPU_PLATFORM=amd \
    -DHKB_AMDGPU_TARGETS=gfx90a -DHKB_MODULES=affine -DHKB_BUILD_TESTS=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr > /dev/null
  cmake --build "$build" -j"$jobs"
}

# Builds and runs both consumers; $1 is the prefix, empty for the system's (packages).
run_consumers() {
  local prefix=$1 out=$tmp/consumers
  rm -rf "$out" && mkdir -p "$out"
  local libdir=""
  if [ -n "$prefix" ]; then
    libdir=$(dirname "$(find "$prefix" -name hkb.pc -path '*/pkgconfig/*' | head -1)")
    export PKG_CONFIG_PATH=$libdir
    libdir=$(dirname "$libdir")
  fi
  echo "-- C consumer (pkg-config: $(pkg-config --cflags --libs hkb))"
  cc -std=c11 -Wall -Werror "$src/examples/c-pkgconfig/main.c" $(pkg-config --cflags --libs hkb) \
    -o "$out/c-example"
  LD_LIBRARY_PATH=$libdir "$out/c-example"
  echo "-- C++ consumer (find_package)"
  cmake -S "$src/examples/cpp-cmake" -B "$out/cpp" -G Ninja ${prefix:+-DCMAKE_PREFIX_PATH=$prefix} \
    > "$out/cmake.log" || { cat "$out/cmake.log"; return 1; }
  grep -- "-- hkb " "$out/cmake.log"
  # HKB_BUNDLE_INSTALL_DIR must point into the prefix the package was found in.
  grep -q -- "code objects in ${prefix:-/usr}/" "$out/cmake.log" \
    || { echo "HKB_BUNDLE_INSTALL_DIR is outside ${prefix:-/usr}"; return 1; }
  cmake --build "$out/cpp" > /dev/null
  LD_LIBRARY_PATH=$libdir "$out/cpp/hkb_cpp_example"
  unset PKG_CONFIG_PATH
}

# The installed tool must check the installed files, not the build tree's.
run_installed_tool() {
  local hkb=$1 where=$2
  "$hkb" --version
  "$hkb" check --json > "$tmp/check.json"
  python3 - "$tmp/check.json" "$where" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
files = [i["file"] for i in r["images"]]
assert r["ok"], r["errors"]
assert files and all(f.startswith(sys.argv[2]) for f in files), files
assert r["coverage"], "candle-abi.tsv was not found"
print("installed hkb check: OK,", len(files), "images under", sys.argv[2])
PY
}

test_prefix() {
  echo "== install into a temporary prefix, then move it =="
  cmake --install "$build" --prefix "$tmp/first" > /dev/null
  mv "$tmp/first" "$tmp/moved"
  local pc
  pc=$(find "$tmp/moved" -name hkb.pc)
  PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --variable=bundledir hkb | grep -q "^$tmp/moved/"
  run_consumers "$tmp/moved"
  run_installed_tool "$tmp/moved/bin/hkb" "$tmp/moved/"
}

test_deb() {
  echo "== Debian packages =="
  (cd "$build" && rm -f ./*.deb && cpack -G DEB > "$tmp/cpack.log") || { cat "$tmp/cpack.log"; return 1; }
  local debs=("$build"/*.deb)
  [ ${#debs[@]} -eq 3 ] || { echo "expected 3 packages, got ${debs[*]}"; return 1; }
  for d in "${debs[@]}"; do
    echo "-- $(basename "$d"): $(dpkg-deb -f "$d" Package) depends: $(dpkg-deb -f "$d" Depends)"
    dpkg-deb -c "$d" | awk '{print $6}' > "$tmp/contents"
    case "$(dpkg-deb -f "$d" Package)" in
      libhkb[0-9]*) want='libhkb\.so\.[0-9]+$|/hkb/affine\.hsaco$|/hkb/hkb-manifest\.json$' ;;
      libhkb-dev) want='include/hkb/hkb\.h$|include/hkb/hkb\.hpp$|libhkb\.so$|pkgconfig/hkb\.pc$|cmake/hkb/hkbConfig\.cmake$|cmake/hkb/hkbTargets\.cmake$' ;;
      hkb-tools) want='/usr/bin/hkb$|/usr/share/hkb/candle-abi\.tsv$' ;;
      *) echo "unexpected package $d"; return 1 ;;
    esac
    local n_want n_have
    n_want=$(echo "$want" | tr '|' '\n' | wc -l)
    n_have=$(grep -cE "$want" "$tmp/contents" || true)
    [ "$n_have" -ge "$n_want" ] || { echo "missing files in $d:"; cat "$tmp/contents"; return 1; }
  done
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends "${debs[@]/#/$PWD/}" > "$tmp/apt.log" \
    || { cat "$tmp/apt.log"; return 1; }
  local status=0
  (run_installed_tool /usr/bin/hkb /usr/ && run_consumers "") || status=1
  local names=()
  for d in "${debs[@]}"; do names+=("$(dpkg-deb -f "$d" Package)"); done
  apt-get purge -y -qq "${names[@]}" > /dev/null || status=1
  [ ! -e /usr/bin/hkb ] || { echo "hkb still installed after apt-get purge"; status=1; }
  return $status
}

build_small
test_prefix
if [ "$deb" = 1 ]; then test_deb; fi
echo "test-install: OK"
