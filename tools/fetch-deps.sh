#!/usr/bin/env bash
# Downloads the Debian 12 packages tools/gpu-test.sh unpacks on a GPU machine that lacks them.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .deps
cd .deps
apt-get download libfmt-dev libfmt9 libspdlog-dev libspdlog1.10 googletest libgtest-dev \
  libgmock-dev libcli11-dev nlohmann-json3-dev libbenchmark-dev libbenchmark1debian
