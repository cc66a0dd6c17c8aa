#!/usr/bin/env bash
# CPU benchmarks of issue 5, each a ratio against a peer measured in the
# same run at the same thread count:
#  * GEMMs of BERT-base / GPT-2 at seq 128 (and 512x768x768): tfc vs oneDNN
#    dnnl_sgemm and OpenBLAS cblas_sgemm (bench/gemm_bench.cpp);
#  * BERT-base and GPT-2 small forward at seq 128: tfc vs PyTorch eager
#    (bench/model_bench.py, which also reports the max abs difference).
#
#   bench/run.sh [threads=2] [output file]
#
# Installs its peers (libdnnl-dev, libopenblas-dev, python3-torch) with
# apt-get when missing, and needs a configured build (scripts/setup.sh).
# Debian's torch is 1.13; set TFC_TORCH_PYTHON to a Python with a newer
# torch (bench/setup-pypi-torch.sh makes one from PyPI, ~5 GiB) to measure
# the models against it too.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
threads=${1:-2}
out=${2:-}
build=${TFC_BUILD_DIR:-$root/build}
bin=$build/bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

need=()
for p in libdnnl-dev libopenblas-dev python3-torch python3-numpy; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if ((${#need[@]})); then
  sudo=(); [[ $(id -u) -ne 0 ]] && sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
ninja -C "$build" tfc-compile tfc-run tfc-weights tfcrt_shared >/dev/null

clang++-22 -O2 -std=c++17 -I"$root/include" "$root/bench/gemm_bench.cpp" \
  -L"$build/lib" -Wl,-rpath,"$build/lib" -ltfcrt -ldnnl -lopenblas -o "$work/gemm_bench"

export TFC_NUM_THREADS=$threads OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads
# OpenBLAS pins the main thread to one CPU when it is loaded; every thread
# started later (tfc's pool, oneDNN's OpenMP team) would inherit that mask
# and share one core. Measured: tfc 128x768x768 0.66-0.73 ms without the
# pinning, 1.37-1.43 ms with it in about half the runs.
export OPENBLAS_MAIN_FREE=1
report() { if [[ -n $out ]]; then tee -a "$out"; else cat; fi; }
[[ -n $out ]] && : > "$out"
{
  echo "# tfc CPU benchmarks, $(date -u +%Y-%m-%d), $threads threads"
  echo "# host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores visible"
  echo "# tfc $(git -C "$root" rev-parse --short HEAD), compiled for $("$bin/tfc-compile" --version 2>/dev/null | head -1 || true)"
} | report

for shape in "128 768 768" "128 768 2304" "128 768 3072" "128 3072 768" "512 768 768"; do
  read -r m k n <<< "$shape"
  cat > "$work/gemm.mlir" <<MLIR
module attributes {tfc.model = "gemm_${m}x${k}x${n}"} {
  func.func @forward(%x: tensor<?x${k}xf32> {tfc.name = "x", tfc.dims = ["m", ${k}]}) -> (tensor<?x${n}xf32> {tfc.name = "y"}) {
    %w = tfc.weight "w" : tensor<${n}x${k}xf32>
    %y = tfc.linear %x, %w : (tensor<?x${k}xf32>, tensor<${n}x${k}xf32>) -> tensor<?x${n}xf32>
    return %y : tensor<?x${n}xf32>
  }
}
MLIR
  "$bin/tfc-compile" "$work/gemm.mlir" -o "$work/gemm.so"
  "$bin/tfc-weights" "$work/gemm.so" -o "$work/gemm.safetensors" >/dev/null
  "$work/gemm_bench" "$m" "$k" "$n" "$work/gemm.so" "$work/gemm.safetensors" 50 | report
done

pythons=(/usr/bin/python3)
[[ -n ${TFC_TORCH_PYTHON:-} ]] && pythons+=("$TFC_TORCH_PYTHON")
for model in bert gpt2; do
  tfm=$root/examples/$([[ $model == bert ]] && echo bert-base || echo gpt2).tfm
  "$bin/tfc-compile" "$tfm" -o "$work/$model.so"
  "$bin/tfc-weights" "$work/$model.so" -o "$work/$model.safetensors" >/dev/null
  for py in "${pythons[@]}"; do
    "$py" "$root/bench/model_bench.py" "$model" "$work/$model.so" \
      "$work/$model.safetensors" --seq 128 --threads "$threads" --iters 10 --bin "$bin" | report
  done
done
