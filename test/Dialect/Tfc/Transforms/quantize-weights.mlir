// --tfc-quantize-weights (QuantizeWeights.cpp): with a format, every f32
// [N, K] weight (K a multiple of 32) that a linear uses as its weight,
// directly or through an axis-0 concat, gets `quant`, in every function that
// names it; an embedding-only table, a transposed weight (GPT-2's Conv1D
// layout), a bias and a K that is not a multiple of 32 stay f32 (for the
// K-quants, 256: only "big" in @k qualifies). `none` drops every format. An
// unknown format is an error.
// RUN: tfc-opt %s --tfc-quantize-weights="format=q8_0" | FileCheck %s --check-prefix=Q8
// RUN: tfc-opt %s --tfc-quantize-weights="format=q8_0" | tfc-opt --tfc-quantize-weights="format=none" | FileCheck %s --check-prefix=NONE
// RUN: tfc-opt %s --tfc-quantize-weights="format=q5_k" | FileCheck %s --check-prefix=KQUANT
// RUN: not tfc-opt %s --tfc-quantize-weights="format=iq4_xs" 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// Q8-LABEL: func.func @f
// Q8-DAG: tfc.weight "w" {quant = "q8_0"} : tensor<96x64xf32>
// Q8-DAG: tfc.weight "b" : tensor<96xf32>
// Q8-DAG: tfc.weight "emb" : tensor<100x64xf32>
// Q8-DAG: tfc.weight "conv1d" : tensor<64x96xf32>
// Q8-DAG: tfc.weight "odd" : tensor<8x48xf32>
// Q8-DAG: tfc.weight "q" {quant = "q8_0"} : tensor<64x64xf32>
// Q8-DAG: tfc.weight "k" {quant = "q8_0"} : tensor<32x64xf32>
// Q8-LABEL: func.func @g
// Q8: tfc.weight "w" {quant = "q8_0"} : tensor<96x64xf32>
// NONE-NOT: quant
// KQUANT-LABEL: func.func @f
// KQUANT-NOT: quant
// KQUANT-LABEL: func.func @k
// KQUANT: tfc.weight "big" {quant = "q5_k"} : tensor<32x256xf32>
// UNKNOWN: error: unknown weight format 'iq4_xs' (expected q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k or none)
func.func @f(%x: tensor<?x64xf32>, %ids: tensor<?xi64>, %y: tensor<?x48xf32>)
    -> (tensor<?x96xf32>, tensor<?x64xf32>, tensor<?x96xf32>, tensor<?x8xf32>, tensor<?x96xf32>) {
  %w = tfc.weight "w" : tensor<96x64xf32>
  %b = tfc.weight "b" : tensor<96xf32>
  %0 = tfc.linear %x, %w, %b : (tensor<?x64xf32>, tensor<96x64xf32>, tensor<96xf32>) -> tensor<?x96xf32>
  %e = tfc.weight "emb" : tensor<100x64xf32>
  %1 = tfc.embedding %e[%ids] : (tensor<100x64xf32>, tensor<?xi64>) -> tensor<?x64xf32>
  %c = tfc.weight "conv1d" : tensor<64x96xf32>
  %ct = tfc.transpose %c [1, 0] : tensor<64x96xf32> -> tensor<96x64xf32>
  %2 = tfc.linear %x, %ct : (tensor<?x64xf32>, tensor<96x64xf32>) -> tensor<?x96xf32>
  %o = tfc.weight "odd" : tensor<8x48xf32>
  %3 = tfc.linear %y, %o : (tensor<?x48xf32>, tensor<8x48xf32>) -> tensor<?x8xf32>
  %q = tfc.weight "q" : tensor<64x64xf32>
  %k = tfc.weight "k" : tensor<32x64xf32>
  %qk = tfc.concat %q, %k {axis = 0} : (tensor<64x64xf32>, tensor<32x64xf32>) -> tensor<96x64xf32>
  %4 = tfc.linear %x, %qk : (tensor<?x64xf32>, tensor<96x64xf32>) -> tensor<?x96xf32>
  return %0, %1, %2, %3, %4 : tensor<?x96xf32>, tensor<?x64xf32>, tensor<?x96xf32>, tensor<?x8xf32>, tensor<?x96xf32>
}

// "w" is only an elementwise operand here, but a linear uses it in @f: one
// format per name.
func.func @g(%x: tensor<96x64xf32>) -> tensor<96x64xf32> {
  %w = tfc.weight "w" : tensor<96x64xf32>
  %0 = tfc.add %x, %w : (tensor<96x64xf32>, tensor<96x64xf32>) -> tensor<96x64xf32>
  return %0 : tensor<96x64xf32>
}

// K a multiple of 256: a K-quant applies.
func.func @k(%x: tensor<?x256xf32>) -> tensor<?x32xf32> {
  %w = tfc.weight "big" : tensor<32x256xf32>
  %0 = tfc.linear %x, %w : (tensor<?x256xf32>, tensor<32x256xf32>) -> tensor<?x32xf32>
  return %0 : tensor<?x32xf32>
}
