#!/usr/bin/env bash
# Runs a compiled model at many sequence lengths: every power of two, one
# less and one more, from 1 up to MAX (and MAX itself). Each run must succeed
# with finite outputs. Prints one line per length.
#
#   sweep.sh MODEL.so WEIGHTS MAX "INPUTS" [tfc-run options...]
#
# INPUTS is a template of tfc-run --input values in which @SEQ stands for the
# length, e.g. "input_ids=@range:1x@SEQ".
set -euo pipefail
lib=$1 weights=$2 max=$3 inputs=$4
shift 4
lengths=()
for ((p = 1; p <= max; p *= 2)); do
  for l in $((p - 1)) $p $((p + 1)); do
    ((l >= 1 && l <= max)) && lengths+=("$l")
  done
done
lengths+=("$max")
mapfile -t lengths < <(printf '%s\n' "${lengths[@]}" | sort -n -u)
for l in "${lengths[@]}"; do
  args=()
  for spec in $inputs; do
    args+=(--input "${spec//@SEQ/$l}")
  done
  if ! out=$(tfc-run "$lib" --weights "$weights" "${args[@]}" "$@" 2>&1); then
    echo "seq $l: FAILED"
    echo "$out"
    exit 1
  fi
  if grep -qiE '\b(nan|inf)\b' <<<"$out"; then
    echo "seq $l: NON-FINITE"
    echo "$out"
    exit 1
  fi
  echo "seq $l: ok"
done
