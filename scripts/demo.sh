#!/usr/bin/env bash
# Sets everything up, builds tfc and runs it on a bundled example: a GPT-2
# style decoder block written in the tfc dialect goes through the
# optimisation pipeline that exists today, and the result is printed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${TFC_BUILD_DIR:-$root/build}
example=${1:-$root/examples/gpt2-block.mlir}

"$root/scripts/setup.sh"
cmake --build "$build_dir" -j "${TFC_JOBS:-2}" --target tfc-opt

echo "== tfc-opt $(basename "$example") --canonicalize --cse =="
"$build_dir/bin/tfc-opt" "$example" --canonicalize --cse
