#!/usr/bin/env bash
# Runs a compiled model on the reference interpreter's inputs and compares
# its outputs with the interpreter's results.
#
#   compare.sh WORKDIR MODEL.tfm MODEL.so WEIGHTS ENTRY "OUTPUTS" TOLERANCE \
#              [tfc-interpret options: -D ..., --dim ..., --seed ...]
#
# OUTPUTS is the space-separated list of the entry's output names, in order.
# TOLERANCE is per element (tfc-interpret --elementwise): every output must
# satisfy |out_i - ref_i| <= TOLERANCE x max(|ref_i|, rms(ref)) at every
# element, be finite everywhere and not constant (interp::compareElementwise).
# Tools come from PATH (lit puts the build's bin first). TFC_RUN_ARGS: more
# tfc-run options (e.g. "--time 3": the outputs compared are then the last
# timed run's).
set -euo pipefail
work=$1 model=$2 lib=$3 weights=$4 entry=$5 outputs=$6 tolerance=$7
shift 7
rm -rf "$work"
mkdir -p "$work"
tfc-interpret "$model" --entry "$entry" --weights "$weights" \
  --save-inputs "$work/in" "$@" > /dev/null
run_args=()
for f in "$work"/in/*.npy; do
  name=$(basename "$f" .npy)
  run_args+=(--input "$name=$f")
done
compare_args=()
for o in $outputs; do
  run_args+=(--output "$o=$work/$o.npy")
  compare_args+=(--compare-npy "$work/$o.npy")
done
read -r -a extra_args <<< "${TFC_RUN_ARGS:-}"
tfc-run "$lib" --weights "$weights" --entry "$entry" "${run_args[@]}" \
  ${extra_args[@]+"${extra_args[@]}"} > "$work/run.log"
tfc-interpret "$model" --entry "$entry" --weights "$weights" "$@" \
  "${compare_args[@]}" --elementwise --tolerance "$tolerance"
