#!/usr/bin/env bash
# Runs every libFuzzer target for a while, one after the other, and prints
# each one's executions, coverage and outcome. Not part of CI (which runs a
# 10-second smoke of each through lit: test/*/fuzz*.test).
#
#   scripts/fuzz.sh                  # every target, 600 s each
#   scripts/fuzz.sh 60 npy metadata  # 60 s each for tfc-npy-fuzzer, ...
#
# Targets are found by convention, so that a new one joins without edits
# here: every build/bin/tfc-NAME-fuzzer, with, from tools/tfc-NAME-fuzzer/,
#   seeds/      its seed corpus (checked in),
#   seed-dirs   more seed directories, one per line, relative to the root,
#   *.dict      a libFuzzer dictionary,
#   options     more libFuzzer flags, one per line (e.g. -max_len=8192).
# Each target's growing corpus is kept in $TFC_FUZZ_DIR/NAME/corpus (default
# build/fuzz/NAME/corpus), its crashes, leaks and timeouts in .../crashes/ and
# its log in .../log. Exit status: 1 if any target found something.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${TFC_BUILD_DIR:-$root/build}
fuzz_dir=${TFC_FUZZ_DIR:-$build_dir/fuzz}
seconds=600
if [[ $# -gt 0 && $1 =~ ^[0-9]+$ ]]; then
  seconds=$1
  shift
fi

targets=()
if [[ $# -gt 0 ]]; then
  for name in "$@"; do
    targets+=("$build_dir/bin/tfc-${name#tfc-}")
    [[ ${targets[-1]} == *-fuzzer ]] || targets[-1]+=-fuzzer
  done
else
  shopt -s nullglob
  targets=("$build_dir"/bin/tfc-*-fuzzer)
fi
if [[ ${#targets[@]} -eq 0 ]]; then
  echo "fuzz.sh: no fuzz targets in $build_dir/bin (build with clang and" \
       "TFC_ENABLE_FUZZERS=ON)" >&2
  exit 1
fi

status=0
summary=()
for bin in "${targets[@]}"; do
  exe=$(basename "$bin")
  name=${exe#tfc-}
  name=${name%-fuzzer}
  if [[ ! -x $bin ]]; then
    echo "fuzz.sh: $bin is not built" >&2
    status=1
    continue
  fi
  src=$root/tools/$exe
  work=$fuzz_dir/$name
  corpus=$work/corpus
  mkdir -p "$corpus" "$work/crashes"
  inputs=("$corpus")
  [[ -d $src/seeds ]] && inputs+=("$src/seeds")
  if [[ -f $src/seed-dirs ]]; then
    while read -r dir; do
      [[ -n $dir && $dir != \#* ]] && inputs+=("$root/$dir")
    done < "$src/seed-dirs"
  fi
  flags=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048
         -print_final_stats=1 -artifact_prefix="$work/crashes/")
  for dict in "$src"/*.dict; do
    [[ -f $dict ]] && flags+=(-dict="$dict")
  done
  if [[ -f $src/options ]]; then
    while read -r option; do
      [[ -n $option && $option != \#* ]] && flags+=("$option")
    done < "$src/options"
  fi

  echo "== $exe: ${seconds}s, corpus $corpus"
  "$bin" "${flags[@]}" "${inputs[@]}" > "$work/log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
  cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9a-zA-Z]+' "$work/log" |
        tail -1)
  if [[ $rc -eq 0 ]]; then
    outcome=ok
  else
    outcome="FOUND SOMETHING (exit $rc): see $work/log and $work/crashes/"
    status=1
  fi
  line="$exe: ${runs:-?} runs in ${seconds}s, ${cov:-no coverage line}: $outcome"
  echo "$line"
  summary+=("$line")
done

echo "== summary"
printf '%s\n' "${summary[@]}"
exit $status
