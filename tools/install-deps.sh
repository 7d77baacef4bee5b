#!/usr/bin/env bash
# Installs what hkb builds with, from Debian 12's archive. Run as root (or through sudo).
set -euo pipefail
pkgs=(cmake ninja-build g++ pkg-config python3 clang-format
      hipcc libamdhip64-dev libamd-comgr-dev rocm-device-libs
      libfmt-dev libspdlog-dev googletest libgtest-dev nlohmann-json3-dev libcli11-dev
      libbenchmark-dev
      # reliability jobs (#23): clang-15's sanitizer and libFuzzer runtimes
      # (libclang-common-15-dev), dpkg-shlibdeps for cpack -G DEB
      clang-15 libclang-common-15-dev dpkg-dev
      # tools/check-dot4.sh: clang-offload-bundler-15, llvm-objdump-15
      clang-tools-15 llvm-15)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" > /dev/null 2>&1 || missing+=("$p")
done
command -v cargo > /dev/null 2>&1 || missing+=(cargo)
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
