#!/usr/bin/env bash
# Makes a virtual environment with PyPI's torch and numpy for the model
# benchmarks (Debian ships torch 1.13 only). About 5 GiB: PyPI's Linux
# wheels bring the CUDA libraries along.
#
#   bench/setup-pypi-torch.sh [dir=build/bench-venv]
#   TFC_TORCH_PYTHON=build/bench-venv/bin/python bench/run.sh 2
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${1:-$root/build/bench-venv}
if [[ ! -x $dir/bin/python ]]; then
  python3 -m venv "$dir"
fi
"$dir/bin/pip" install -q torch numpy onnxruntime onnx
"$dir/bin/python" -c 'import torch; print("torch", torch.__version__, "in", "'"$dir"'")'
