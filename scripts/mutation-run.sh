#!/usr/bin/env bash
# The mutation run: each test/mutations/*.patch plants a bug that the suite
# must catch (a wrong sampling order, a T5 bucket, an ALiBi slope, beams
# reordered across sources, a quantised kernel's zero point, ...). For each,
# applies it, rebuilds, runs the tests its "Run:" line names (lit:PATH under
# test/, unit:BINARY of test/unit), reverts it, and prints one row: which of
# those tests failed. A mutation that no test catches makes the run fail.
# Not part of the test command (a rebuild per mutation); run it after
# changing what the tests cover, and record the table (docs/testing.md).
#
#   scripts/mutation-run.sh [NAME ...]     # default: every patch
#
# Needs a clean work tree for the files the patches touch, and a configured
# build (scripts/setup.sh).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TFC_BUILD_DIR:-$root/build}
lit=/usr/lib/llvm-22/bin/lit
cd "$root"

names=("$@")
if ((${#names[@]} == 0)); then
  for p in test/mutations/*.patch; do names+=("$(basename "$p" .patch)"); done
fi

applied=""
revert() {
  if [[ -n $applied ]]; then
    git apply -R "$applied"
    applied=""
  fi
}
trap 'revert; cmake --build "$build" -j "${TFC_JOBS:-2}" >/dev/null 2>&1 || true' EXIT

missed=0
printf '| mutation | tests run | caught by |\n|---|---|---|\n'
for name in "${names[@]}"; do
  patch=test/mutations/$name.patch
  [[ -f $patch ]] || { echo "mutation-run: no $patch" >&2; exit 2; }
  git apply --check "$patch"
  git apply "$patch"
  applied=$patch
  caught=()
  if ! cmake --build "$build" -j "${TFC_JOBS:-2}" >/tmp/mutation-build.log 2>&1; then
    caught+=("the build")
  else
    read -r -a tests < <(sed -n 's/^Run: //p' "$patch")
    for t in "${tests[@]}"; do
      case $t in
        lit:*) "$lit" -q "$build/test/${t#lit:}" >/dev/null 2>&1 || caught+=("${t#lit:}") ;;
        unit:*) "$build/test/unit/${t#unit:}" >/dev/null 2>&1 || caught+=("${t#unit:}") ;;
        *) echo "mutation-run: $patch: bad test '$t'" >&2; exit 2 ;;
      esac
    done
  fi
  revert
  run=$(sed -n 's/^Run: //p' "$patch" | sed 's/lit://g; s/unit://g')
  if ((${#caught[@]} == 0)); then
    missed=$((missed + 1))
    printf '| %s | %s | **none** |\n' "$name" "$run"
  else
    printf '| %s | %s | %s |\n' "$name" "$run" "${caught[*]}"
  fi
done
exit $((missed > 0))
