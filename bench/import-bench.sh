#!/usr/bin/env bash
# Import and compile time of the real checkpoints of the conformance tests
# (all-MiniLM-L6-v2, a Hugging Face directory; SmolLM2-135M-Instruct, a Q4_1
# .gguf), and the time to load the compiled model and bind its weights
# (tfc-run --info --weights: dlopen, checks, mapping, conversion or
# dequantisation, derived constants). Median of 3 runs each.
#
#   bench/import-bench.sh [output file]
#
# Needs a built tree (scripts/setup.sh; ninja -C build) and the checkpoints
# (scripts/setup-test-data.sh).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-}
build=${TFC_BUILD_DIR:-$root/build}
bin=$build/bin
cache=$("$root/scripts/setup-test-data.sh")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
report() { if [[ -n $out ]]; then tee -a "$out"; else cat; fi; }
[[ -n $out ]] && : >"$out"

median3() { # command...: prints the median wall time of 3 runs in seconds
  local t=()
  for _ in 1 2 3; do
    local s e
    s=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    e=$(date +%s.%N)
    t+=("$(echo "$e - $s" | bc -l)")
  done
  printf '%s\n' "${t[@]}" | sort -g | sed -n 2p
}

{
  echo "# tfc import + compile time, $(date -u +%Y-%m-%d), tfc $(git -C "$root" rev-parse --short HEAD)"
  echo "# host: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores;" \
       "ISA: $(grep -o -w -E 'avx512f|avx512_vnni|avx2|fma' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  printf '%-24s %10s %10s %12s\n' model import_s compile_s load+bind_s
} | report

for spec in "all-MiniLM-L6-v2:$cache/models/minilm" \
            "SmolLM2-135M-Q4_1:$cache/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"; do
  name=${spec%%:*} path=${spec#*:}
  imp=$(median3 "$bin/tfc-import" "$path" -o "$work/m.tfm")
  comp=$(median3 "$bin/tfc-compile" "$path" -o "$work/m.so")
  load=$(median3 "$bin/tfc-run" "$work/m.so" --info --weights "$path")
  printf '%-24s %10.3f %10.2f %12.3f\n' "$name" "$imp" "$comp" "$load" | report
done
