#!/usr/bin/env bash
# Compares builds or flags of tfc on one GEMM, alternating in one process
# with oneDNN's prepacked matmul (bench/gemm_bench.cpp's A/B mode): what a
# kernel change buys, measured so that a VM's slow phases touch every
# variant alike. Each variant is a tfc-compile command (a binary, with flags
# if any); the first is the reference of the "time / first's" column.
#
#   bench/ab-gemm.sh M K N 'variant' 'variant' ...
#   bench/ab-gemm.sh 128 3072 768 build/bin/tfc-compile \
#       'build/bin/tfc-compile --cpu-l2-kib=4096' /tmp/old/bin/tfc-compile
#
# TFC_AB_THREADS (default 2), TFC_AB_ROUNDS (default 40) and TFC_AB_CALLS
# (timed calls per turn, default 5). Needs a build with the runtime and
# oneDNN (libdnnl-dev; bench/run.sh installs it).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TFC_BUILD_DIR:-$root/build}
if (($# < 5)); then
  echo "usage: bench/ab-gemm.sh M K N 'tfc-compile [flags]' 'tfc-compile [flags]' ..." >&2
  exit 2
fi
m=$1 k=$2 n=$3
shift 3
threads=${TFC_AB_THREADS:-2}
. "$root/bench/common.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ninja -C "$build" tfcrt_shared >/dev/null
build_gemm_bench "$work/gemm_bench"
"$root/bench/gemm_mlir.sh" "$m" "$k" "$n" > "$work/gemm.mlir"
models=()
for variant in "$@"; do
  i=${#models[@]}
  read -r -a command <<< "$variant"
  "${command[@]}" "$work/gemm.mlir" -o "$work/v$i.so"
  echo "v$i: $variant"
  models+=("$work/v$i.so")
done
echo "# $(host_cpu), $threads threads"
export TFC_NUM_THREADS=$threads OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads OPENBLAS_MAIN_FREE=1
list=$(IFS=,; echo "${models[*]}")
"$work/gemm_bench" "$m" "$k" "$n" "$list" "$work" "${TFC_AB_ROUNDS:-40}" "${TFC_AB_CALLS:-5}" |
  sed "s|$work/||"
