#!/usr/bin/env bash
# Sets everything up, builds tfc and compiles a bundled model: a small
# encoder whose attention softmax and LayerNorms are written out with
# primitives goes through the frontend and the fusion pipeline, which reports
# what it fused (pointing into the .tfm file); the fused tfc IR is printed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${TFC_BUILD_DIR:-$root/build}
example=${1:-$root/examples/handwritten-attention.tfm}

"$root/scripts/setup.sh"
cmake --build "$build_dir" -j "${TFC_JOBS:-2}" --target tfc-compile

echo "== tfc-compile $(basename "$example") --emit=fused --fusion-remarks =="
"$build_dir/bin/tfc-compile" "$example" --emit=fused --fusion-remarks \
  --mlir-print-op-on-diagnostic=false
