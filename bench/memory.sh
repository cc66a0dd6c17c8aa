#!/usr/bin/env bash
# Resident memory of real models, bound from their checkpoints and from
# packed weights files (tfc-pack): SmolLM2-135M-Instruct in f32 (the Q4_1
# .gguf of the conformance tests dequantised to an F32 .gguf by
# bench/gguf_convert.py, and the Q4_1 file itself compiled with
# --quantize=none), SmolLM2 in its own Q4_1 (int8 kernels), all-MiniLM-L6-v2 and
# BERT-base (a transformers BertModel with TFC_TORCH_PYTHON, else
# examples/bert-base.tfm with tfc-weights' weights): the peak
# resident memory of one forward pass of 128 tokens against
# 1.15 x weights + arena, and the cold and warm load times
# (bench/memory_bench.py); then a user's first run of each checkpoint with
# tfc-run and an empty cache (compile, bind, write the packed weights into
# the cache) and the second run (the cache's packed weights mapped). With TFC_LLAMACPP_PYTHON (a Python with
# llama-cpp-python, built from its PyPI source package), llama.cpp's peak for
# the same F32 and Q4_1 .gguf files, and with TFC_TORCH_PYTHON too (torch,
# transformers: converts the encoders with llama.cpp's convert_hf_to_gguf.py)
# for MiniLM's and BERT-base's embeddings. Then the speed of prefill and decode with SmolLM2 bound
# from the F32 .gguf and from its packed file, in the same run
# (bench/generate_bench.c).
#
#   bench/memory.sh [threads=2] [output file]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
threads=${1:-2}
out=${2:-}
build=${TFC_BUILD_DIR:-$root/build}
source "$root/bench/common.sh"
cache=$("$root/scripts/setup-test-data.sh")
q41=$cache/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
f32=${q41%.Q4_1.gguf}.F32.gguf
minilm=$cache/models/minilm
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ninja -C "$build" tfc-compile tfc-pack tfc-run tfc-weights tfcrt_shared >/dev/null
[[ -f $f32 ]] || "$cache/venv/bin/python" "$root/bench/gguf_convert.py" "$q41" "$f32" >&2
clang-22 -O2 -std=c11 -I"$root/include" "$root/bench/generate_bench.c" \
  -L"$build/lib" -Wl,-rpath,"$build/lib" -ltfcrt -lpthread -o "$work/generate_bench"
bin=$build/bin
"$bin/tfc-compile" "$q41" --kv-cache --quantize=none -o "$work/smollm2.so"
"$bin/tfc-compile" "$q41" --kv-cache -o "$work/smollm2-q41.so"
"$bin/tfc-compile" "$minilm" -o "$work/minilm.so"
# BERT-base: with TFC_TORCH_PYTHON, a Hugging Face directory that
# transformers writes (bench/make_bert_base.py), which llama.cpp can read
# too; else examples/bert-base.tfm with tfc-weights' weights.
if [[ -n ${TFC_TORCH_PYTHON:-} ]]; then
  "$TFC_TORCH_PYTHON" "$root/bench/make_bert_base.py" "$minilm" "$work/bert-base" >/dev/null
  bert_src=$work/bert-base bert_weights=$work/bert-base
  "$bin/tfc-compile" "$bert_src" -o "$work/bert.so"
else
  bert_src=$root/examples/bert-base.tfm bert_weights=$work/bert.safetensors
  "$bin/tfc-compile" "$bert_src" -o "$work/bert.so"
  "$bin/tfc-weights" "$work/bert.so" -o "$bert_weights"
fi
# The encoders for llama.cpp: F32 .gguf files written by the
# convert_hf_to_gguf.py of the llama.cpp inside llama-cpp-python's source
# package (the version TFC_LLAMACPP_PYTHON has), run by TFC_TORCH_PYTHON.
encoders_gguf=
if [[ -n ${TFC_LLAMACPP_PYTHON:-} && -n ${TFC_TORCH_PYTHON:-} ]]; then
  version=$("$TFC_LLAMACPP_PYTHON" -c 'import llama_cpp; print(llama_cpp.__version__)')
  python3 -m pip download -q --disable-pip-version-check --no-deps \
    --no-binary :all: "llama-cpp-python==$version" -d "$work/sdist" >&2
  tar xzf "$work/sdist/llama_cpp_python-$version.tar.gz" -C "$work/sdist"
  convert=$work/sdist/llama_cpp_python-$version/vendor/llama.cpp/convert_hf_to_gguf.py
  "$TFC_TORCH_PYTHON" "$convert" "$minilm" --outtype f32 --outfile "$work/minilm-f32.gguf" >/dev/null 2>&1
  "$TFC_TORCH_PYTHON" "$convert" "$work/bert-base" --outtype f32 --outfile "$work/bert-base-f32.gguf" >/dev/null 2>&1
  encoders_gguf=yes
fi
"$bin/tfc-pack" "$work/smollm2.so" -w "$f32" -o "$work/smollm2.tfcw" -q
"$bin/tfc-pack" "$work/smollm2-q41.so" -w "$q41" -o "$work/smollm2-q41.tfcw" -q
"$bin/tfc-pack" "$work/minilm.so" -w "$minilm" -o "$work/minilm.tfcw" -q
"$bin/tfc-pack" "$work/bert.so" -w "$bert_weights" -o "$work/bert.tfcw" -q
export TFC_NUM_THREADS=$threads
report() { if [[ -n $out ]]; then tee -a "$out"; else cat; fi; }
[[ -n $out ]] && : >"$out"
py=python3
{
  echo "# tfc resident memory and load time, $(date -u +%Y-%m-%d), tfc $(git -C "$root" rev-parse --short HEAD), $threads threads"
  echo "# host: $(host_cpu), $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB; ISA: $(grep -o -w -E 'avx512f|avx512_vnni|avx2|fma' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  $py "$root/bench/memory_bench.py" "$build" "SmolLM2-135M-Instruct f32 (F32 .gguf)" "$work/smollm2.so" "$f32" "$work/smollm2.tfcw" 128 "$f32"
  $py "$root/bench/memory_bench.py" "$build" "SmolLM2-135M-Instruct (Q4_1 .gguf dequantised at bind)" "$work/smollm2.so" "$q41" "$work/smollm2.tfcw" 128
  $py "$root/bench/memory_bench.py" "$build" "SmolLM2-135M-Instruct Q4_1 (its .gguf's blocks, int8 kernels)" "$work/smollm2-q41.so" "$q41" "$work/smollm2-q41.tfcw" 128 "$q41"
  $py "$root/bench/memory_bench.py" "$build" "all-MiniLM-L6-v2" "$work/minilm.so" "$minilm" "$work/minilm.tfcw" 128 "$minilm"
  $py "$root/bench/memory_bench.py" "$build" "BERT-base ($(basename "$bert_src"))" "$work/bert.so" "$bert_weights" "$work/bert.tfcw" 128 "$bert_src"
  if [[ -n ${TFC_LLAMACPP_PYTHON:-} ]]; then
    echo "### peer: llama.cpp, the same F32 .gguf"
    "$TFC_LLAMACPP_PYTHON" "$root/bench/memory_llamacpp.py" "$f32" 128 "$threads" 2>/dev/null
    echo "### peer: llama.cpp, the same Q4_1 .gguf"
    "$TFC_LLAMACPP_PYTHON" "$root/bench/memory_llamacpp.py" "$q41" 128 "$threads" 2>/dev/null
    if [[ -n $encoders_gguf ]]; then
      echo "### peer: llama.cpp, all-MiniLM-L6-v2 (its convert_hf_to_gguf.py, F32), embeddings"
      "$TFC_LLAMACPP_PYTHON" "$root/bench/memory_llamacpp.py" "$work/minilm-f32.gguf" 128 "$threads" --embedding 2>/dev/null
      echo "### peer: llama.cpp, the same BERT-base (its convert_hf_to_gguf.py, F32), embeddings"
      "$TFC_LLAMACPP_PYTHON" "$root/bench/memory_llamacpp.py" "$work/bert-base-f32.gguf" 128 "$threads" --embedding 2>/dev/null
    fi
  fi
  echo "### speed: SmolLM2 f32 bound from the F32 .gguf (checkpoint) and from its packed file, 5 runs each, alternating; medians"
  for run in 1 2 3 4 5; do
    "$work/generate_bench" "$work/smollm2.so" "$f32" "$threads" | sed 's/^/checkpoint: /'
    "$work/generate_bench" "$work/smollm2.so" "$work/smollm2.tfcw" "$threads" | sed 's/^/packed: /'
  done | $py -c '
import re, statistics, sys
runs = {}
for line in sys.stdin:
    m = re.match(r"(\w+): (.*?): .*?([0-9.]+) (tokens/s|GB/s)", line)
    if m:
        runs.setdefault((m.group(2), m.group(4)), {}).setdefault(m.group(1), []).append(float(m.group(3)))
for (what, unit), by in runs.items():
    cs, ps = by["checkpoint"], by["packed"]
    c, p = statistics.median(cs), statistics.median(ps)
    print(f"{what:28s} checkpoint {c:8.1f} {unit}, packed {p:8.1f} {unit}: packed/checkpoint {p / c:.2f}"
          f"  (runs: {cs} / {ps})")
'
} | report
