#!/usr/bin/env bash
# CPU benchmarks, each a ratio against a peer measured in the same run at
# the same thread count, on whatever CPU runs it (the output names the CPU,
# its ISA, the ISA tfc's kernels were compiled for, and that ISA's FMA peak
# measured in the same run by bench/fma_peak.c):
#  * GEMMs of BERT-base / GPT-2 at seq 128 (and 512x768x768): tfc vs oneDNN's
#    matmul primitive with its weights reordered once, and OpenBLAS
#    cblas_sgemm, taking turns in one process, tfc's output checked against
#    oneDNN's (bench/gemm_bench.cpp);
#  * attention alone (12 heads of 64, padding mask and causal, seq 128 and
#    512): tfc vs PyTorch's scaled_dot_product_attention
#    (bench/attention_bench.py);
#  * the row kernels and elementwise code alone (LayerNorm and RMSNorm with
#    their residual adds, softmax, GELU; 128 and 2048 rows): tfc vs the
#    PyTorch ops (bench/rows_bench.py, bench/rows.mlir);
#  * BERT-base and GPT-2 small forward at seq 128: tfc vs PyTorch eager and
#    ONNX Runtime on the same model exported to ONNX (when the Python has
#    onnxruntime) (bench/model_bench.py, which also reports the max abs
#    difference).
#
#   bench/run.sh [threads=2] [output file]
#
# TFC_BENCH_CPU=NAME compiles tfc's models for that CPU (e.g. x86-64-v3 for
# the AVX2 kernels on an AVX-512 host); TFC_BENCH_MODELS=0 runs the GEMMs
# only; TFC_BENCH_BLOCKS (default 24) sets the GEMM blocks per library.
#
# Tuning (tfc-tune, docs/tuning.md): when the tuning file (TFC_TUNE_FILE,
# else ~/.cache/tfc/tuning.json) has a record for this host and the kernels'
# ISA, the header prints it and the GEMMs and models run twice, as the
# "default" build (the analytic blocking, --tune-file=none) and the "tuned"
# one. TFC_BENCH_TUNE=1 runs tfc-tune first (TFC_BENCH_TUNE_BUDGET seconds,
# default 300) and records its result there.
#
# Installs its peers (libdnnl-dev, libopenblas-dev, python3-torch) with
# apt-get when missing, and needs a configured build (scripts/setup.sh).
# Debian's torch is 1.13; set TFC_TORCH_PYTHON to a Python with a newer
# torch and onnxruntime (bench/setup-pypi-torch.sh makes one from PyPI,
# ~5 GiB) to measure the models against them instead.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
threads=${1:-2}
blocks=${TFC_BENCH_BLOCKS:-24}
out=${2:-}
build=${TFC_BUILD_DIR:-$root/build}
bin=$build/bin
. "$root/bench/common.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

need=()
peers=(libdnnl-dev libopenblas-dev)
# Debian's torch (1.13) only when no newer one is given.
[[ ${TFC_BENCH_MODELS:-1} == 0 || -n ${TFC_TORCH_PYTHON:-} ]] || peers+=(python3-torch python3-numpy)
for p in "${peers[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if ((${#need[@]})); then
  sudo=(); [[ $(id -u) -ne 0 ]] && sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
ninja -C "$build" tfc-compile tfc-run tfc-weights tfc-tune tfcrt_shared >/dev/null

build_gemm_bench "$work/gemm_bench"
clang-22 -O2 "$root/bench/fma_peak.c" -lpthread -o "$work/fma_peak"
compile_flags=()
# Another CPU's kernels measured on this host: with this host's L1 data
# and L2 caches (a generic name such as x86-64-v3 would get 32 KiB's and
# 256 KiB's blocking).
if [[ -n ${TFC_BENCH_CPU:-} ]]; then
  compile_flags+=(--cpu="$TFC_BENCH_CPU")
  l1d=$(getconf LEVEL1_DCACHE_SIZE 2>/dev/null || echo 0)
  if (( l1d >= 4096 )); then compile_flags+=(--cpu-l1d-kib=$((l1d / 1024))); fi
  l2=$(getconf LEVEL2_CACHE_SIZE 2>/dev/null || echo 0)
  if (( l2 >= 16384 )); then compile_flags+=(--cpu-l2-kib=$((l2 / 1024))); fi
fi
# The ISA tfc's kernels are tiled for: the module attribute of a tiny model.
echo 'module { func.func @f(%x: tensor<1x8xf32>) -> tensor<1x8xf32> { return %x : tensor<1x8xf32> } }' > "$work/isa.mlir"
isa=$("$bin/tfc-compile" "$work/isa.mlir" "${compile_flags[@]}" --emit=linalg | sed -n 's/.*tfc.cpu_isa = "\([a-z0-9]*\)".*/\1/p')

export TFC_NUM_THREADS=$threads OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads
# The builds compared: the analytic default, and the host's tuning record
# when there is one (never with TFC_BENCH_CPU: a record is this host's).
if [[ -n ${TFC_TUNE_FILE:-} ]]; then
  tune_file=$TFC_TUNE_FILE
  [[ $tune_file == none ]] && tune_file=""
elif [[ -n ${TFC_CACHE_DIR:-} ]]; then
  tune_file=$TFC_CACHE_DIR/tuning.json
else
  tune_file=${XDG_CACHE_HOME:-$HOME/.cache}/tfc/tuning.json
fi
builds=(default)
build_flags_default=(--tune-file=none)
tune_record=none
if [[ -z ${TFC_BENCH_CPU:-} && -n $tune_file ]]; then
  if [[ ${TFC_BENCH_TUNE:-0} == 1 ]]; then
    "$bin/tfc-tune" --isa="$isa" --num-threads="$threads" --budget="${TFC_BENCH_TUNE_BUDGET:-300}" -o "$tune_file" >&2
  fi
  if [[ -f $tune_file ]]; then
    tune_record=$("$bin/tfc-tune" --isa="$isa" --show -o "$tune_file")
  fi
  if [[ $tune_record != none ]]; then
    builds+=(tuned)
  fi
fi
build_flags_tuned=(--tune-file="$tune_file")
flags_of() { local -n f=build_flags_$1; echo "${f[@]}"; }
# OpenBLAS pins the main thread to one CPU when it is loaded; every thread
# started later (tfc's pool, oneDNN's OpenMP team) would inherit that mask
# and share one core. Measured: tfc 128x768x768 0.66-0.73 ms without the
# pinning, 1.37-1.43 ms with it in about half the runs.
export OPENBLAS_MAIN_FREE=1
# With the AVX2 kernels on a host that has AVX-512, the peers are held to
# AVX2 too, so that the comparison is the one an AVX2 machine would see.
peer_note=""
if [[ $isa == avx2 ]] && grep -q -w avx512f /proc/cpuinfo; then
  export DNNL_MAX_CPU_ISA=AVX2 ONEDNN_MAX_CPU_ISA=AVX2 OPENBLAS_CORETYPE=Haswell
  # PyTorch's own kernels (scaled_dot_product_attention, elementwise)
  # dispatch on ATEN_CPU_CAPABILITY.
  export MKL_ENABLE_INSTRUCTIONS=AVX2 ATEN_CPU_CAPABILITY=avx2
  peer_note=" (peers held to AVX2: DNNL_MAX_CPU_ISA=AVX2, OPENBLAS_CORETYPE=Haswell, MKL_ENABLE_INSTRUCTIONS=AVX2, ATEN_CPU_CAPABILITY=avx2; ONNX Runtime's MLAS has no such switch)"
elif [[ -z ${OPENBLAS_CORETYPE:-} ]]; then
  # Debian's OpenBLAS (0.3.21) picks its kernels by CPU model and falls back
  # to its SSE3 "Prescott" kernels on models it does not know (measured on
  # an Emerald Rapids, family 6 model 207: 22 GFLOP/s on one core instead
  # of 120); name the kernels the host's instruction set can run instead.
  if grep -q -w avx512bw /proc/cpuinfo && grep -q -w avx512vl /proc/cpuinfo; then
    export OPENBLAS_CORETYPE=SkylakeX
  elif grep -q -w avx2 /proc/cpuinfo && grep -q -w fma /proc/cpuinfo; then
    export OPENBLAS_CORETYPE=Haswell
  fi
  [[ -n ${OPENBLAS_CORETYPE:-} ]] && peer_note=" (OpenBLAS's kernels chosen by ISA: OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE)"
fi
report() { if [[ -n $out ]]; then tee -a "$out"; else cat; fi; }
[[ -n $out ]] && : > "$out"
{
  echo "# tfc CPU benchmarks, $(date -u +%Y-%m-%d), $threads threads"
  echo "# host: $(host_cpu), $(nproc) cores visible; ISA: $(grep -o -w -E 'avx512f|avx512_vnni|avx2|fma' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  echo "# tfc $(git -C "$root" rev-parse --short HEAD), kernels for ${isa:-?}${TFC_BENCH_CPU:+ (${compile_flags[*]})}$peer_note"
  echo "# tuning record: $tune_record"
  "$work/fma_peak" "$isa" "$threads" | tee "$work/peak1"
} | report

for b in "${builds[@]}"; do
  ((${#builds[@]} > 1)) && echo "## $b build$([[ $b == tuned ]] && echo ": $tune_record")" | report
  for shape in "128 768 768" "128 768 2304" "128 768 3072" "128 3072 768" "512 768 768"; do
    read -r m k n <<< "$shape"
    "$root/bench/gemm_mlir.sh" "$m" "$k" "$n" > "$work/gemm.mlir"
    # shellcheck disable=SC2046
    "$bin/tfc-compile" "$work/gemm.mlir" "${compile_flags[@]}" $(flags_of "$b") -o "$work/gemm.so"
    # tfc, oneDNN and OpenBLAS take turns in one process, $blocks blocks of
    # 20 calls each (bench/gemm_bench.cpp): each ratio is of two blocks run
    # well under a second apart, so the VM's slow phases touch both.
    "$work/gemm_bench" "$m" "$k" "$n" "$work/gemm.so" "$work" "$blocks" 20 | report
  done
done

pythons=("${TFC_TORCH_PYTHON:-/usr/bin/python3}")
[[ ${TFC_BENCH_MODELS:-1} == 0 ]] && exit 0
# Attention alone (12 heads of 64, as BERT and GPT-2 run it), against
# PyTorch's scaled_dot_product_attention.
"$bin/tfc-compile" "$root/bench/attention.mlir" "${compile_flags[@]}" -o "$work/attention.so"
for seq in 128 512; do
  for kind in "" --causal; do
    for py in "${pythons[@]}"; do
      "$py" "$root/bench/attention_bench.py" "$work/attention.so" --seq "$seq" $kind \
        --threads "$threads" --iters 200 --rounds 3 --bin "$bin" | report
    done
  done
done
# The row kernels and elementwise code alone (LayerNorm, RMSNorm with their
# residual adds, softmax, GELU; BERT-base's sizes), against the PyTorch ops.
"$bin/tfc-compile" "$root/bench/rows.mlir" "${compile_flags[@]}" -o "$work/rows.so"
for op in layer_norm rms_norm softmax gelu; do
  for rows in 128 2048; do
    for py in "${pythons[@]}"; do
      "$py" "$root/bench/rows_bench.py" "$work/rows.so" --op "$op" --rows "$rows" \
        --threads "$threads" --iters 200 --rounds 3 --bin "$bin" | report
    done
  done
done
# The FMA peak once more (the VM's speed drifts): the models' share of it
# is taken of the higher of the two measurements.
"$work/fma_peak" "$isa" "$threads" | tee "$work/peak2" | report
peak=$(cat "$work/peak1" "$work/peak2" | awk '/GFLOP/ { for (i = 1; i <= NF; ++i) if ($(i + 1) == "GFLOP/s" && $i + 0 > p) p = $i + 0 } END { print p + 0 }')
for b in "${builds[@]}"; do
  ((${#builds[@]} > 1)) && echo "## $b build$([[ $b == tuned ]] && echo ": $tune_record")" | report
  for model in bert gpt2; do
    tfm=$root/examples/$([[ $model == bert ]] && echo bert-base || echo gpt2).tfm
    # shellcheck disable=SC2046
    "$bin/tfc-compile" "$tfm" "${compile_flags[@]}" $(flags_of "$b") -o "$work/$model.so"
    "$bin/tfc-weights" "$work/$model.so" -o "$work/$model.safetensors" >/dev/null
    for py in "${pythons[@]}"; do
      "$py" "$root/bench/model_bench.py" "$model" "$work/$model.so" \
        "$work/$model.safetensors" --seq 128 --threads "$threads" --iters 10 --rounds 5 --bin "$bin" \
        --peak "$peak" --peak-cmd "$work/fma_peak $isa $threads" | report
    done
  done
done
