#!/usr/bin/env bash
# Sets everything up, builds tfc and runs every test suite (lit + GoogleTest,
# through ctest; the Python package's pytest, scripts/test-python.sh), then
# ctest again with an AVX-512 host masked to AVX2 (x86-64-v3), then the
# sanitizer job (scripts/test-sanitizers.sh: the runtime and its tools under
# ASan+UBSan and TSan; TFC_SANITIZERS=0 skips it). The last line is the
# sanitizer job's summary.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Tuning records (tfc-tune, docs/tuning.md) change the GEMM's blocking of
# every compile for the host: the suites run without the user's records
# unless TFC_TUNE_FILE names a file to run them under.
export TFC_TUNE_FILE=${TFC_TUNE_FILE:-none}
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
# The lit suite's slowest files in the run just done (lit's own record of
# each file's time; ctest shows a passing test's output only with -V).
slowest_lit() {
  local times=$build_dir/test/.lit_test_times.txt
  [[ -f $times ]] || return 0
  echo "test: the slowest lit files (seconds):"
  awk '{t = $1 < 0 ? -$1 : $1; printf "%8.1f %s\n", t, $2}' "$times" | sort -gr | sed -n 1,12p
}
ctest --test-dir "$build_dir" --output-on-failure -j "$jobs"
slowest_lit
# The Python package (python/): built against this build, then pytest.
"$root/scripts/test-python.sh"
# The suite once more with the host masked down to x86-64-v3 (AVX2 + FMA:
# TFC_HOST_CPU, include/tfc/Schemas/CpuLevels.h) where the host has more:
# every compile for the host takes the AVX2 kernels and the runtime runs
# what an AVX2-only machine would, so that an AVX-512 machine also proves
# an AVX2 machine's expectations (docs/testing.md). An AVX2 host has run
# exactly that already. The masked run leaves out the lit tests whose code
# the mask does not reach (LIT_FILTER_OUT; docs/testing.md): the GPU path
# (PTX and SASS checks, the CUDA emulator: kernels compiled for the GPU, not
# the host) and the parsers' fuzz and tokenizer tests (libtfcrt's own code,
# built once for every x86-64 host).
if [[ ${TFC_MASKED_RUN:-1} != 0 ]]; then
  host_cpu=$("$build_dir/bin/tfc-run" --host-cpu)
  if grep -qw avx512f <<<"$host_cpu"; then
    echo "test: the suite again with the host masked to x86-64-v3 (TFC_HOST_CPU)"
    TFC_HOST_CPU=x86-64-v3 \
      LIT_FILTER_OUT='^TFC :: (E2E/GPU/|Target/NVPTX/|Conversion/TfcToGPU/|Runtime/fuzz-|Runtime/tokenizer-)' \
      ctest --test-dir "$build_dir" --output-on-failure -j "$jobs"
  else
    echo "test: the host is x86-64-v3 at most: no masked run needed"
  fi
fi
echo "test: $(disk_free) free on the disk of $root after the main job"
if [[ ${TFC_SANITIZERS:-1} != 0 ]]; then
  "$root/scripts/test-sanitizers.sh"
fi
