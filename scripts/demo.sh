#!/usr/bin/env bash
# Sets everything up, builds tfc and runs it on a bundled example: a GPT-2
# style decoder block written in the tfc dialect (part of it with primitives)
# goes through the fusion pipeline, which reports what it fused; the fused IR
# is printed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${TFC_BUILD_DIR:-$root/build}
example=${1:-$root/examples/gpt2-block.mlir}

"$root/scripts/setup.sh"
cmake --build "$build_dir" -j "${TFC_JOBS:-2}" --target tfc-opt

echo "== tfc-opt $(basename "$example") --tfc-fusion-pipeline=remarks=true =="
"$build_dir/bin/tfc-opt" "$example" --tfc-fusion-pipeline=remarks=true \
  --mlir-print-op-on-diagnostic=false
