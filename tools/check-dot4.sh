#!/usr/bin/env bash
# #19's AMD check, from the disassembly: every MMVQ kernel (mul_mat_vec_<format>_q8_1_cuda1..8) of
# the quantized code object takes its integer dot products through v_dot4 on each target named,
# with no byte-wise fallback (sign-extracted bytes and 24-bit multiplies outnumbering the dot4s),
# and a batch of b columns has at least 8 b of them (one per 4 x 8 values of a lane and column).
#
#   tools/check-dot4.sh [CODE_OBJECT] [TARGET ...]
#   (default build/amd/bundle/quantized.hsaco; gfx906 gfx90a gfx1030)
#
# Needs clang-offload-bundler and llvm-objdump (Debian: clang-tools-15, llvm-15). Prints a line a
# target; exit 1 naming each kernel that fails, 2 when a tool, the file or a target is missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
co=${1:-$root/build/amd/bundle/quantized.hsaco}
[ $# -gt 0 ] && shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(gfx906 gfx90a gfx1030)
tool() {  # the first of the names found on PATH
  local t
  for t in "$@"; do command -v "$t" > /dev/null 2>&1 && { echo "$t"; return; }; done
  echo "check-dot4.sh: none of $* found (apt-get install clang-tools-15 llvm-15)" >&2
  exit 2
}
bundler=$(tool clang-offload-bundler-15 clang-offload-bundler)
objdump=$(tool llvm-objdump-15 llvm-objdump)
[ -f "$co" ] || { echo "check-dot4.sh: $co is not a file" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
listed=$("$bundler" --list --type=o --input="$co" 2>&1) ||
  { echo "check-dot4.sh: $co is not an offload bundle: $listed" >&2; exit 2; }
rc=0
for t in "${targets[@]}"; do
  entry=$(grep -E -- "^hipv4-amdgcn-amd-amdhsa--$t(:|$)" <<< "$listed" | head -n 1) ||
    { echo "check-dot4.sh: $co has no entry for $t (it holds: $(tr '\n' ' ' <<< "$listed"))" >&2; exit 2; }
  "$bundler" --unbundle --type=o --input="$co" --targets="$entry" --output="$tmp/$t.co"
  "$objdump" -d --mcpu="${t%%:*}" "$tmp/$t.co" > "$tmp/$t.s"
  # Per MMVQ kernel: its dot4 count, and its byte-extract and 24-bit multiply count.
  awk -v target="$t" '
    /^[0-9a-f]+ <[A-Za-z_0-9.]+>:/ { f = $2; gsub(/[<>:]/, "", f); next }
    f ~ /^mul_mat_vec_.*_q8_1_cuda[1-8]$/ && /^\t/ {
      seen[f] = 1
      if ($0 ~ /v_dot4/) dot[f]++
      if ($0 ~ /v_bfe_i32|_i32_i24|_u32_u24/) bytewise[f]++
    }
    END {
      bad = 0; lo = 1e9
      for (k in seen) {
        b = substr(k, length(k)) + 0
        if (dot[k] < 8 * b || bytewise[k] >= dot[k]) {
          printf "check-dot4.sh: %s %s: %d v_dot4, %d byte-wise instructions\n", target, k,
            dot[k], bytewise[k] > "/dev/stderr"
          bad = 1
        }
        if (dot[k] / b < lo) lo = dot[k] / b
        n++
      }
      if (n != 80) {
        printf "check-dot4.sh: %s: %d MMVQ kernels, not 80\n", target, n > "/dev/stderr"
        bad = 1
      }
      if (!bad) printf "%s: %d MMVQ kernels, each with v_dot4 (at least %d a column) and no byte-wise fallback\n", target, n, lo
      exit bad
    }' "$tmp/$t.s" || rc=1
done
exit $rc
