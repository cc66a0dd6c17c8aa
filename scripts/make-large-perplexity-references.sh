#!/usr/bin/env bash
# llama.cpp's perplexity of the full-size tier's Q4_K_M decoders
# (Qwen2.5-Coder-0.5B-Instruct and Gemma 3 270M: scripts/setup-test-data.sh
# --large) over the whole book of Genesis
# (test/Import/Inputs/perplexity/genesis.txt, ~48,000 tokens, ~23,700 of
# them scored), as users run it (bench/perplexity_llamacpp.py: context 512,
# llama.cpp's default f16 KV cache), written to
# test/Import/Inputs/large/<model>/perplexity-llamacpp-genesis.json, with the
# CPU it ran on, and each scored token's NLL to llamacpp-nll-genesis.npy
# beside it, which test/Import/large-models.test compares tfc-perplexity
# with, token by token. Run once, with a Python that has llama-cpp-python
# built from its PyPI source package:
#
#   TFC_LLAMACPP_PYTHON=/path/to/python scripts/make-large-perplexity-references.sh
#
# (python -m venv V && V/bin/pip install numpy && V/bin/pip install
# --no-binary llama-cpp-python llama-cpp-python==0.3.36: ~15 min on 2 cores.)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
py=${TFC_LLAMACPP_PYTHON:?set TFC_LLAMACPP_PYTHON to a Python with llama-cpp-python}
cache=$("$root/scripts/setup-test-data.sh" --large)
text=$root/test/Import/Inputs/perplexity/genesis.txt
cpu="$(lscpu | sed -n 's/^Model name: *//p' | head -1) (family $(lscpu | sed -n 's/^CPU family: *//p'), model $(lscpu | sed -n 's/^Model: *//p'))"
isa=$(grep -qw avx512f /proc/cpuinfo && echo AVX-512 || echo AVX2)
for model in qwen2.5-coder-0.5b:qwen2.5-coder-0.5b-instruct-q4_k_m.gguf \
             gemma3-270m:gemma-3-270m-q4_k_m.gguf; do
  name=${model%%:*}
  out=$root/test/Import/Inputs/large/$name
  result=$(PYTHONPATH=$root/bench "$py" "$root/bench/perplexity_llamacpp.py" \
    "$cache/models/$name/${model#*:}" "$text" 512 2 \
    --nll-out "$out/llamacpp-nll-genesis.npy" 2>/dev/null)
  CPU="$cpu" ISA="$isa" "$py" -c '
import json, os, sys
r = json.loads(sys.argv[1])
r["cpu"] = os.environ["CPU"] + ", " + os.environ["ISA"]
print(json.dumps(r))' "$result" >"$out/perplexity-llamacpp-genesis.json"
  echo "$name: $(cat "$out/perplexity-llamacpp-genesis.json")"
done
