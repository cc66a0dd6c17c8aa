#!/usr/bin/env bash
# What a session with a GPU runs (see README): the GPU tests, then the GPU
# benchmarks, with the results written to bench/results/gpu-<gpu>.txt.
#
#   bench/run-gpu.sh [--quick]
#
# Needs the build (scripts/setup.sh; ninja -C build, or a bundle of it:
# scripts/gpu-bundle.sh), an NVIDIA driver and
# PyTorch with CUDA for the peer (pip install torch, or TFC_TORCH_PYTHON).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TFC_BUILD_DIR:-$root/build}
py=${TFC_TORCH_PYTHON:-python3}
# Up to date where the build was configured (elsewhere it came in a
# bundle: scripts/gpu-bundle.sh).
if [[ -f $build/build.ninja ]]; then ninja -C "$build" >/dev/null; fi
echo "== GPU tests"
# A failing test does not stop the benchmarks; it makes the exit status 1.
status=0
"$py" /usr/lib/llvm-22/bin/lit -sv "$build/test/E2E/GPU" "$build/test/Target/NVPTX" \
  "$build/test/Conversion/TfcToGPU" || status=1
# One process per test, as ctest runs them: the driver is loaded (or found
# missing) once per process.
for t in $("$build/test/unit/TfcRuntimeTests" --gtest_list_tests --gtest_filter='CudaTest.*' |
           sed -n 's/^  \([A-Za-z0-9_]*\).*/CudaTest.\1/p'); do
  "$build/test/unit/TfcRuntimeTests" --gtest_filter="$t" --gtest_brief=1 || status=1
done
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr ' ' '-' || echo gpu)
out=$root/bench/results/gpu-${gpu:-gpu}.txt
echo "== GPU benchmarks -> $out"
{
  echo "# tfc GPU benchmarks, $(date -u +%Y-%m-%d), tfc ${TFC_REVISION:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}"
  "$py" "$root/bench/gpu_bench.py" --bin "$build/bin" "$@"
  echo "# command: bench/run-gpu.sh $*"
} | tee "$out"
exit $status
