#!/usr/bin/env bash
# Generation speed of SmolLM2-135M-Instruct (the Q4_1 .gguf of the
# conformance tests, dequantised to f32 at load) compiled with --kv-cache:
# prefill tokens/s (128 and 1024 tokens), the time of a decode step at cache
# positions 16, 256, 1024 and 4096, and the read bandwidth measured in the
# same run (the bound of a decode step is the bytes of weights it reads over
# it). With TFC_TORCH_PYTHON (a Python with torch and transformers, e.g. from
# bench/setup-pypi-torch.sh plus `pip install transformers gguf`), the same
# measurements of transformers run next to it; with TFC_LLAMACPP_PYTHON (a
# Python with llama-cpp-python, built from its PyPI source package: `pip
# install --no-binary llama-cpp-python llama-cpp-python`), those of llama.cpp
# on an F32 .gguf of the same weights (bench/gguf_to_f32.py, made once next
# to the Q4_1 file).
#
#   bench/run-generate.sh [threads=2] [output file]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
threads=${1:-2}
out=${2:-}
build=${TFC_BUILD_DIR:-$root/build}
cache=$("$root/scripts/setup-test-data.sh")
gguf=$cache/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ninja -C "$build" tfc-compile tfcrt_shared >/dev/null
clang-22 -O2 -std=c11 -I"$root/include" "$root/bench/generate_bench.c" \
  -L"$build/lib" -Wl,-rpath,"$build/lib" -ltfcrt -lpthread -o "$work/generate_bench"
"$build/bin/tfc-compile" "$gguf" --kv-cache -o "$work/smollm2.so"
report() { if [[ -n $out ]]; then tee -a "$out"; else cat; fi; }
[[ -n $out ]] && : >"$out"
{
  echo "# tfc generation, SmolLM2-135M-Instruct (Q4_1 .gguf dequantised to f32: 540 MB of weights read per token), $(date -u +%Y-%m-%d), tfc $(git -C "$root" rev-parse --short HEAD), $threads threads"
  echo "# host: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; ISA: $(grep -o -w -E 'avx512f|avx512_vnni|avx2|fma' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  echo "## tfc"
  "$work/generate_bench" "$work/smollm2.so" "$gguf" "$threads"
  if [[ -n ${TFC_TORCH_PYTHON:-} ]]; then
    echo "## peer: transformers (eager, f32)"
    "$TFC_TORCH_PYTHON" "$root/bench/generate_peer.py" "$(dirname "$gguf")" "$(basename "$gguf")" "$threads" 2>/dev/null
  fi
  if [[ -n ${TFC_LLAMACPP_PYTHON:-} ]]; then
    f32=${gguf%.Q4_1.gguf}.F32.gguf
    [[ -f $f32 ]] || "$cache/venv/bin/python" "$root/bench/gguf_to_f32.py" "$gguf" "$f32" >&2
    echo "## peer: llama.cpp (f32 .gguf of the same weights)"
    "$TFC_LLAMACPP_PYTHON" "$root/bench/generate_llamacpp.py" "$f32" "$threads" 2>/dev/null
  fi
} | report
