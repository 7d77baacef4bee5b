#!/usr/bin/env bash
# Tuning variants: a module compiled with -D flags into its own bundle directory and timed by the
# module's own benchmark through HKB_BUNDLE_DIR, beside the build's code objects ("base").
#
#   bench/tune.sh [-B BUILD] [--check GTEST_FILTER] [--passes N] MODULE NAME "FLAGS" [NAME "FLAGS" ...]
#   bench/tune.sh [-B BUILD] [--check GTEST_FILTER] --sweep [FILE] [MODULE ...]
#
#   bench/tune.sh unary quarters-4 "-DHKB_RESIDENT_QUARTERS=4"
#   bench/tune.sh --check 'Reduce*' reduce rows2 "-DHKB_FAST_ROWS=2" blocks512 "-DHKB_FAST_BLOCKS=512"
#   bench/tune.sh --sweep bench/sweeps.txt reduce
#   bench/tune.sh --kernels /tmp/old/kernels unary before ""   # another tree's kernels, same flags
#   bench/tune.sh --bench quantized_mmvq quantized bpm16 "-DHKB_MMVQ_BLOCKS_PER_MP=16"
#   bench/tune.sh --kernels /tmp/old/kernels unary before "HKB_TUNED_MAX_BLOCKS=1024"
#   bench/tune.sh --kernels /tmp/old/kernels reduce,conv,fill before ""   # several modules
#
# BUILD: a build directory configured with -DHKB_BUILD_BENCH=ON and built (default build/nvidia,
# which tools/gpu-test.sh makes). A variant NAME lives in BUILD/variants/NAME/: MODULE compiled
# with the kernel compiler and flags of BUILD (BUILD/bench/kernel-compile.args, written by
# bench/CMakeLists.txt from cmake/HkbKernels.cmake) plus FLAGS, and links to BUILD's code objects
# of the other modules, since HKB_BUNDLE_DIR serves every module from one directory. Each flag
# must define an HKB_ macro that kernels/ tests, so a renamed knob fails here instead of timing the
# base twice. --check runs BUILD/tests/hkb_gpu_tests --gtest_filter=GTEST_FILTER on each variant
# before timing it. --sweep reads "MODULE KNOB VALUE..." lines (default bench/sweeps.txt): each
# value is the variant KNOB=VALUE of MODULE, named after both; MODULE ... picks modules of the file.
# --kernels DIR compiles the variants from DIR (another checkout's kernels/, e.g. `git archive REV`)
# instead of BUILD's kernels/, so a change of the kernels is timed before and after in one run;
# FLAGS may then be empty. MODULE may be a comma-separated list: every variant of every module is
# compiled in parallel, then each module is timed in turn. --bench SUFFIX times
# BUILD/bench/hkb_bench_SUFFIX instead of hkb_bench_MODULE (a module with several benchmarks, e.g.
# quantized_mmvq). A FLAGS word HKB_NAME=VALUE (no -D) is instead set in the environment of that
# variant's runs (a loader knob, e.g. HKB_TUNED_MAX_BLOCKS, so that an old tree's kernels get the
# launch they were tuned for).
# --passes N times the base and the variants in turn N times (columns NAME.1, NAME.2, ...), so that
# a drift of the GPU shows as a drift and not as a difference.
# Output: each run's table, then one table per module of % of copy bandwidth, a column per variant.
# Logs in $OUT, else BUILD/variants/logs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/nvidia
check=''
passes=1
sweep=0
while [ $# -gt 0 ]; do
  case "$1" in
    -B) build=$(cd "$2" && pwd); shift 2 ;;
    --check) check=$2; shift 2 ;;
    --passes) passes=$2; shift 2 ;;
    --sweep) sweep=1; shift ;;
    --kernels) source_dir=$(cd "$2" && pwd); shift 2 ;;
    --bench) bench_suffix=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done
[[ "$passes" =~ ^[1-9][0-9]*$ ]] || { echo "tune.sh: --passes takes a count, not '$passes'" >&2; exit 2; }
args_file=$build/bench/kernel-compile.args
if [ ! -f "$args_file" ] || [ ! -f "$build/bench/bundle.env" ]; then
  echo "tune.sh: $build is not a build with benchmarks (cmake -DHKB_BUILD_BENCH=ON, then build)" >&2
  exit 2
fi
mapfile -t compile < "$args_file"
env_value() { sed -n "s/^$1=//p" "$build/bench/bundle.env"; }
suffix=$(env_value suffix)          # .fatbin or .hsaco
bundle_dir=$(env_value bundle_dir)  # BUILD's own code objects
kernel_dir=$(env_value kernel_dir)  # the kernels/ BUILD compiles
source_dir=${source_dir:-$kernel_dir}
if [ "$source_dir" != "$kernel_dir" ]; then  # the variants include their own tree's headers
  for i in "${!compile[@]}"; do [ "${compile[$i]}" = "-I$kernel_dir" ] && compile[i]="-I$source_dir"; done
fi
logs=${OUT:-$build/variants/logs}
mkdir -p "$logs"

# Variants as "module name flags" lines, from the command line or the sweep file.
variants=()
if [ "$sweep" = 1 ]; then
  file=$root/bench/sweeps.txt
  if [ $# -gt 0 ] && [ -f "$1" ]; then file=$1; shift; fi
  while read -r module knob values; do
    [[ -z "$module" || "$module" == \#* ]] && continue
    [ $# -gt 0 ] && [[ " $* " != *" $module "* ]] && continue
    for v in $values; do
      name=${knob#HKB_}
      name=${name,,}-$v
      variants+=("$module $name -D$knob=$v")
    done
  done < "$file"
else
  [ $# -ge 3 ] || { echo "usage: bench/tune.sh [-B BUILD] [--check FILTER] MODULE NAME FLAGS [NAME FLAGS ...]" >&2; exit 2; }
  IFS=, read -r -a module_list <<< "$1"
  shift
  while [ $# -ge 2 ]; do
    for module in "${module_list[@]}"; do variants+=("$module $1 $2"); done
    shift 2
  done
  [ $# -eq 0 ] || { echo "tune.sh: variant '$1' has no flags" >&2; exit 2; }
fi
[ ${#variants[@]} -gt 0 ] || { echo "tune.sh: no variants" >&2; exit 2; }

for line in "${variants[@]}"; do
  read -r module name flags <<< "$line"
  [ -f "$source_dir/$module.hip" ] || { echo "tune.sh: no module $source_dir/$module.hip" >&2; exit 2; }
  [ -x "$build/bench/hkb_bench_${bench_suffix:-$module}" ] ||
    { echo "tune.sh: $build/bench/hkb_bench_${bench_suffix:-$module} is not built" >&2; exit 2; }
  [[ "$name" =~ ^[A-Za-z0-9._=-]+$ ]] || { echo "tune.sh: variant name '$name'" >&2; exit 2; }
  for f in $flags; do
    if [[ "$f" =~ ^(HKB_[A-Z0-9_]+)=[^=]*$ ]]; then
      grep -rqw "${BASH_REMATCH[1]}" "$root/loader" ||
        { echo "tune.sh: the loader does not read ${BASH_REMATCH[1]}" >&2; exit 2; }
      continue
    fi
    [[ "$f" =~ ^-D(HKB_[A-Z0-9_]+)(=.*)?$ ]] ||
      { echo "tune.sh: '$f' is not -DHKB_NAME[=VALUE] or HKB_NAME=VALUE" >&2; exit 2; }
    grep -rqw "${BASH_REMATCH[1]}" "$source_dir" ||
      { echo "tune.sh: kernels/ does not use ${BASH_REMATCH[1]}" >&2; exit 2; }
  done
done

# The variant directories: every module of BUILD as a link, replaced below by the modules the
# variant compiles (a variant NAME run for several modules holds all of them).
for line in "${variants[@]}"; do
  read -r module name flags <<< "$line"
  mkdir -p "$build/variants/$name"
  for f in "$bundle_dir"/*"$suffix"; do
    dest=$build/variants/$name/$(basename "$f")
    [ -e "$dest" ] || [ -L "$dest" ] || ln -s "$f" "$dest"
  done
done
# Compile every variant, in parallel; a code object is rebuilt when its flags or kernels/ changed.
# It is written beside its link and then moved over it, never through it.
compile_variant() {  # module name flags
  local dir=$build/variants/$2
  local out=$dir/$1$suffix
  if [ -f "$out" ] && [ ! -L "$out" ] && [ "$(cat "$dir/$1.flags" 2> /dev/null)" = "$3" ] &&
    [ -z "$(find "$source_dir" -newer "$out" -print -quit)" ]; then
    return 0
  fi
  rm -f "$dir/$1.flags"
  local defines=()
  for f in $3; do [[ "$f" == -D* ]] && defines+=("$f"); done
  if "${compile[@]}" "${defines[@]}" "$source_dir/$1.hip" -o "$out.tmp" > "$logs/$2.$1.build.log" 2>&1; then
    mv -f "$out.tmp" "$out"
    echo "$3" > "$dir/$1.flags"
  else
    echo "tune.sh: compiling $1 for $2 failed:" >&2
    tail -20 "$logs/$2.$1.build.log" >&2
    touch "$logs/.failed"
  fi
}
rm -f "$logs/.failed"
jobs=${HKB_JOBS:-$(nproc)}
for line in "${variants[@]}"; do
  read -r module name flags <<< "$line"
  compile_variant "$module" "$name" "$flags" &
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 1; done
done
wait
[ ! -f "$logs/.failed" ] || exit 1

# Time: per module, the base once, then its variants. Each run's rows go to $logs/<name>.<module>.txt.
modules=()
for line in "${variants[@]}"; do
  read -r module _ <<< "$line"
  [[ " ${modules[*]} " == *" $module "* ]] || modules+=("$module")
done
# Runs a command for the variant NAME with FLAGS: its code objects, and its HKB_NAME=VALUE words
# in the environment.
run_variant() {  # name flags command...
  local dir=$build/variants/$1 envs=() f
  for f in $2; do [[ "$f" == HKB_* ]] && envs+=("$f"); done
  shift 2
  env HKB_BUNDLE_DIR="$dir" "${envs[@]}" "$@"
}
rc=0
for module in "${modules[@]}"; do
  # The variants of this module whose GPU tests pass (--check).
  mine=()
  for line in "${variants[@]}"; do
    read -r m name flags <<< "$line"
    [ "$m" = "$module" ] || continue
    if [ -n "$check" ]; then
      if ! run_variant "$name" "$flags" "$build/tests/hkb_gpu_tests" --gtest_filter="$check" \
        --gtest_brief=1 > "$logs/$name.$module.check.log" 2>&1; then
        echo "$name: GPU tests failed ($logs/$name.$module.check.log)"
        grep -E "^\[  FAILED  \]" "$logs/$name.$module.check.log" | head -20 || true
        rc=1
        continue
      fi
      echo "$name: $(grep -E '^\[  PASSED  \]' "$logs/$name.$module.check.log")"
    fi
    mine+=("$line")
  done
  # Time the base and the variants in turn, --passes times.
  names=()
  for pass in $(seq 1 "$passes"); do
    tag=''
    [ "$passes" = 1 ] || tag=.$pass
    echo "== $module: base$tag ($bundle_dir)"
    HKB_BUNDLE_DIR=$bundle_dir "$build/bench/hkb_bench_${bench_suffix:-$module}" |
      tee "$logs/base$tag.$module.txt"
    names+=("base$tag")
    for line in "${mine[@]}"; do
      read -r m name flags <<< "$line"
      echo "== $module: $name$tag ($flags)"
      run_variant "$name" "$flags" "$build/bench/hkb_bench_${bench_suffix:-$module}" |
        tee "$logs/$name$tag.$module.txt"
      names+=("$name$tag")
    done
  done
  # The rows' "of copy" column side by side: the case is a row less its time, GB/s and % fields
  # (whole, so that cases whose names share their first 48 characters stay apart).
  echo
  echo "== $module: % of copy bandwidth"
  for n in "${names[@]}"; do [ -f "$logs/$n.$module.txt" ] && echo "$n $logs/$n.$module.txt"; done |
    awk '
      BEGIN { width = 48 }
      { label[++nv] = $1; file[nv] = $2 }
      END {
        for (v = 1; v <= nv; ++v) {
          while ((getline line < file[v]) > 0) {
            if (line !~ /%$/ || line ~ /^kernel \/ case/) continue
            key = line; sub(/[ \t]+[^ \t]+[ \t]+[^ \t]+[ \t]+[^ \t]+%$/, "", key)
            if (length(key) > width) width = length(key)
            if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
            n = split(line, f, " "); pct[key, v] = f[n]
          }
        }
        printf "%-*s", width, "kernel / case"; for (v = 1; v <= nv; ++v) printf " %14s", label[v]; print ""
        for (k = 1; k <= nk; ++k) {
          printf "%-*s", width, order[k]
          for (v = 1; v <= nv; ++v) printf " %14s", ((order[k], v) in pct) ? pct[order[k], v] : "-"
          print ""
        }
      }' | tee "$logs/summary.$module.txt"
done
exit $rc
