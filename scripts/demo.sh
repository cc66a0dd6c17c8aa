#!/usr/bin/env bash
# Sets everything up, builds tfc and runs a bundled model end to end:
#  1. compiles GPT-2 small (examples/gpt2.tfm, all 12 layers) to a native
#     shared library for this CPU (tfc-compile, fusion remarks summarised);
#  2. writes deterministic weights for it (tfc-weights; a real checkpoint in
#     the Hugging Face naming works the same way);
#  3. runs it on a prompt of token ids with tfc-run and prints the logits'
#     shape, their first values and the argmax token at the last position,
#     then the median time of 5 runs.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${TFC_BUILD_DIR:-$root/build}
example=${1:-$root/examples/gpt2.tfm}
work=${TFC_DEMO_DIR:-$(mktemp -d)}

"$root/scripts/setup.sh"
cmake --build "$build_dir" -j "${TFC_JOBS:-2}" --target tfc-compile tfc-run tfc-weights
bin=$build_dir/bin
name=$(basename "$example" .tfm)

echo "== tfc-compile $(basename "$example") -o $work/$name.so"
"$bin/tfc-compile" "$example" -o "$work/$name.so"
echo "== tfc-weights $name.so -o $work/$name.safetensors"
"$bin/tfc-weights" "$work/$name.so" -o "$work/$name.safetensors"
echo "== tfc-run $name.so (\"The quick brown fox\" as GPT-2 token ids)"
"$bin/tfc-run" "$work/$name.so" --weights "$work/$name.safetensors" \
  --input input_ids=464,2068,7586,21831 --time 5
