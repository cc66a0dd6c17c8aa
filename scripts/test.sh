#!/usr/bin/env bash
# Sets everything up, builds tfc and runs every test suite (lit + GoogleTest,
# through ctest), the end-to-end tests again for the portable AVX2 variant,
# then the sanitizer job (scripts/test-sanitizers.sh: the
# runtime and its tools under ASan+UBSan and TSan; TFC_SANITIZERS=0 skips
# it). The last line is the sanitizer job's summary.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${TFC_BUILD_DIR:-$root/build}
jobs=${TFC_JOBS:-2}

# The free disk, for the log: a full disk fails tests far from the cause.
# The suite's peak is a few GB (lit deletes a passing test's files,
# test/lit_format.py).
disk_free() { df -h --output=avail "$root" | tail -1 | tr -d ' '; }
echo "test: $(disk_free) free on the disk of $root"
"$root/scripts/setup.sh"
# Real checkpoints and Python references for the conformance tests, in a
# cache outside the tree (TFC_CACHE_DIR) that later runs reuse.
"$root/scripts/setup-test-data.sh" >/dev/null
cmake --build "$build_dir" -j "$jobs"
ctest --test-dir "$build_dir" --output-on-failure -j "$jobs"
# The end-to-end suite once more with every model compiled for the most
# portable CPU variant (x86-64-v3: AVX2 + FMA, the AVX2 kernels), whatever
# the host has (test/lit.cfg.py, TFC_TEST_CPU).
if [[ ${TFC_PORTABLE_E2E:-1} != 0 ]]; then
  echo "test: the end-to-end suite compiled for x86-64-v3 (AVX2 kernels)"
  TFC_TEST_CPU=x86-64-v3 /usr/lib/llvm-22/bin/lit -s -j "$jobs" "$build_dir/test/E2E"
fi
echo "test: $(disk_free) free on the disk of $root after the main job"
if [[ ${TFC_SANITIZERS:-1} != 0 ]]; then
  "$root/scripts/test-sanitizers.sh"
fi
