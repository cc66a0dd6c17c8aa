#!/usr/bin/env bash
# What a session with a GPU runs (see README): the GPU tests, then the GPU
# benchmarks, with the results written to bench/results/gpu-<gpu>.txt.
#
#   bench/run-gpu.sh [--quick]
#
# Needs the build (scripts/setup.sh; ninja -C build), an NVIDIA driver and
# PyTorch with CUDA for the peer (pip install torch, or TFC_TORCH_PYTHON).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TFC_BUILD_DIR:-$root/build}
py=${TFC_TORCH_PYTHON:-python3}
ninja -C "$build" >/dev/null
echo "== GPU tests"
/usr/lib/llvm-22/bin/lit -sv "$build/test/E2E/GPU" "$build/test/Target/NVPTX" \
  "$build/test/Conversion/TfcToGPU"
"$build/test/unit/TfcUnitTests" --gtest_filter='Cuda*'
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr ' ' '-' || echo gpu)
out=$root/bench/results/gpu-${gpu:-gpu}.txt
echo "== GPU benchmarks -> $out"
{
  echo "# tfc GPU benchmarks, $(date -u +%Y-%m-%d), tfc $(git -C "$root" rev-parse --short HEAD)"
  "$py" "$root/bench/gpu_bench.py" --bin "$build/bin" "$@"
  echo "# command: bench/run-gpu.sh $*"
} | tee "$out"
