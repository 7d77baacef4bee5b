#!/usr/bin/env bash
# bench/tune.sh's argument handling against a fake build (no GPU): compile flags reach the kernel
# compiler and environment words the benchmark, --passes alternates, a variant whose --check fails
# is reported and skipped, a module list times each module, and unknown knobs are refused. Run by
# tools/run-tests.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
b=$(mktemp -d)
trap 'rm -rf "$b"' EXIT
mkdir -p "$b/bench" "$b/bundle" "$b/tests"
# The "compiler" writes its arguments as the code object; the "benchmark" prints a row from them.
printf '%s\n' bash -c 'echo "$@" > "${@: -1}"' cc > "$b/bench/kernel-compile.args"
printf 'suffix=.fatbin\nbundle_dir=%s/bundle\nkernel_dir=%s/kernels\n' "$b" "$root" > "$b/bench/bundle.env"
for m in affine fill; do
  echo base > "$b/bundle/$m.fatbin"
  cat > "$b/bench/hkb_bench_$m" << SH
#!/bin/bash
flags=\$(grep -o -- '-DHKB_[A-Z_]*=[0-9]*' "\$HKB_BUNDLE_DIR/$m.fatbin" | tr '\\n' ' ')
echo "${m}_f32 row \${flags}blocks=\${HKB_TUNED_MAX_BLOCKS:-unset}     7   42%"
SH
  chmod +x "$b/bench/hkb_bench_$m"
done
printf '#!/bin/bash\n[ "${HKB_TUNED_PACKS:-}" != 3 ]\n' > "$b/tests/hkb_gpu_tests"
chmod +x "$b/tests/hkb_gpu_tests"
fail() { echo "test_tune.sh: $*" >&2; exit 1; }
tune() { OUT=$b/logs "$root/bench/tune.sh" -B "$b" "$@"; }

out=$(tune --check 'X*' --passes 2 affine knob "-DHKB_RESIDENT_QUARTERS=3" env \
  "HKB_TUNED_MAX_BLOCKS=9" broken "HKB_TUNED_PACKS=3" 2>&1) && fail "a failing --check must fail the run"
grep -q 'broken: GPU tests failed' <<< "$out" || fail "no report of the failing variant: $out"
grep -q -- '-DHKB_RESIDENT_QUARTERS=3 blocks=unset' "$b/logs/knob.2.affine.txt" || fail "flag lost"
grep -q 'blocks=9' "$b/logs/env.1.affine.txt" || fail "environment word lost"
grep -q -- '-D' "$b/variants/env/affine.fatbin" && fail "an environment word reached the compiler"
[ ! -f "$b/logs/broken.1.affine.txt" ] || fail "a variant that failed --check was timed"
grep -Eq 'base\.1 +knob\.1 +env\.1 +base\.2 +knob\.2 +env\.2' <<< "$out" || fail "columns: $out"

out=$(tune affine,fill both "-DHKB_RESIDENT_QUARTERS=5" 2>&1) || fail "a module list failed: $out"
for m in affine fill; do
  grep -q -- "${m}_f32 row -DHKB_RESIDENT_QUARTERS=5" "$b/logs/both.$m.txt" || fail "$m of the list: $out"
  grep -q "== $m: % of copy" <<< "$out" || fail "no summary for $m: $out"
done

tune affine x "-DHKB_NO_SUCH_KNOB=1" > /dev/null 2>&1 && fail "an unused -D knob was taken"
tune affine x "HKB_NO_SUCH_VARIABLE=1" > /dev/null 2>&1 && fail "an unknown variable was taken"
tune --passes 0 affine x "HKB_TUNED_PACKS=1" > /dev/null 2>&1 && fail "--passes 0 was taken"
echo "test_tune.sh: ok"
