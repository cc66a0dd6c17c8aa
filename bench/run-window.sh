#!/usr/bin/env bash
# Sliding-window attention skips the keys outside the window: SmolLM2-135M
# (the F32 .gguf of bench/run-generate.sh) imported by tfc-import, once as
# it is (full causal attention) and once with `window = 1024` on every
# attention; the time per token of a forward pass over 1024 and 8192 tokens
# (tfc-run --time) and the ratios. Issue 22 asks for the windowed model at
# 8192 within 1.5x of its time per token at 1024.
#
#   bench/run-window.sh [threads=2] [output file]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
threads=${1:-2}
out=${2:-}
build=${TFC_BUILD_DIR:-$root/build}
cache=$("$root/scripts/setup-test-data.sh")
q41=$cache/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
f32=${q41%.Q4_1.gguf}.F32.gguf
[[ -f $f32 ]] || "$cache/venv/bin/python" "$root/bench/gguf_convert.py" "$q41" "$f32" f32 >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ninja -C "$build" tfc-compile tfc-import tfc-run >/dev/null
"$build/bin/tfc-import" "$f32" -o "$work/full.tfm" 2>/dev/null
sed 's/a = attention(q, k, v, causal = true)/a = attention(q, k, v, causal = true, window = 1024)/' \
  "$work/full.tfm" >"$work/window.tfm"
grep -q 'window = 1024' "$work/window.tfm"
for m in full window; do "$build/bin/tfc-compile" "$work/$m.tfm" -o "$work/$m.so"; done
ms_per_token() { # model seq runs
  "$build/bin/tfc-run" "$work/$1.so" -w "$f32" -i "input_ids=@range:1x$2" --time "$3" \
    --threads "$threads" | sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' |
    awk -v n="$2" '{ printf "%.3f", $1 / n }'
}
report() { if [[ -n $out ]]; then tee -a "$out"; else cat; fi; }
[[ -n $out ]] && : >"$out"
{
  echo "# windowed attention, SmolLM2-135M f32, $(date -u +%Y-%m-%d), tfc $(git -C "$root" rev-parse --short HEAD), $threads threads"
  echo "# host: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; ISA: $(grep -o -w -E 'avx512f|avx512_vnni|avx2|fma' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  w1=$(ms_per_token window 1024 2)
  w8=$(ms_per_token window 8192 2)
  f8=$(ms_per_token full 8192 1)
  echo "window 1024, seq 1024: $w1 ms/token"
  echo "window 1024, seq 8192: $w8 ms/token ($(awk -v a="$w8" -v b="$w1" 'BEGIN { printf "%.2f", a / b }')x seq 1024; limit 1.5x)"
  echo "full attention, seq 8192: $f8 ms/token (windowed is $(awk -v a="$f8" -v b="$w8" 'BEGIN { printf "%.2f", a / b }')x faster)"
} | report
