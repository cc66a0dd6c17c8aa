#!/usr/bin/env bash
# Prints the module of one GEMM benchmarked by bench/run.sh and
# bench/ab-gemm.sh: y = x · Wᵀ, x [M, K] with M dynamic, W [N, K] a weight.
#
#   bench/gemm_mlir.sh M K N > gemm.mlir
set -euo pipefail
m=$1 k=$2 n=$3
cat <<MLIR
module attributes {tfc.model = "gemm_${m}x${k}x${n}"} {
  func.func @forward(%x: tensor<?x${k}xf32> {tfc.name = "x", tfc.dims = ["m", ${k}]}) -> (tensor<?x${n}xf32> {tfc.name = "y"}) {
    %w = tfc.weight "w" : tensor<${n}x${k}xf32>
    %y = tfc.linear %x, %w : (tensor<?x${k}xf32>, tensor<${n}x${k}xf32>) -> tensor<?x${n}xf32>
    return %y : tensor<?x${n}xf32>
  }
}
MLIR
