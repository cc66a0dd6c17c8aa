// --convert-tfc-linear-to-cpu-gemm (LinearToGemm.cpp) on block-quantised
// weights: a linear whose weight is a `tfc.weight {quant}` (f32 values)
// becomes tfc_cpu.qgemm over tfc_cpu.qpack of the raw form of the weight
// (the raw form: i8 blocks [N, K / 32, block bytes]; packed: groups of 8
// rows [ceil(N / 8), K / 32, group-block bytes]) and no f32 pack; an axis-0 concat of weights of
// one format (tfc-merge-qkv's QKV) becomes the concat of their raw forms;
// every other use (an embedding table, a transpose) reads tfc_cpu.dequantize
// of the raw form, except an embedding lookup, which becomes
// tfc_cpu.qembedding (the rows it reads, dequantised; the ids' bound is
// recorded as tfc.embedding's lowering does); weights of mixed formats in one
// concat are dequantised and packed as f32.
// RUN: tfc-opt %s --convert-tfc-linear-to-cpu-gemm | FileCheck %s

// CHECK-LABEL: func.func @single
// CHECK: %[[RAW:.*]] = tfc.weight "w" {quant = "q4_1"} : tensor<96x2x20xi8>
// CHECK-NOT: tfc_cpu.pack
// CHECK: %[[P:.*]] = tfc_cpu.qpack %[[RAW]] format "q4_1" outs(%{{.*}}) : (tensor<96x2x20xi8>, tensor<12x2x160xi8>) -> tensor<12x2x160xi8>
// CHECK: tfc_cpu.qgemm %{{.*}}, %[[P]], %{{.*}} format "q4_1" outs(%{{.*}}) activation(silu) : (tensor<?x64xf32>, tensor<12x2x160xi8>, tensor<96xf32>, tensor<?x96xf32>) -> tensor<?x96xf32>
func.func @single(%x: tensor<?x64xf32>) -> tensor<?x96xf32> {
  %w = tfc.weight "w" {quant = "q4_1"} : tensor<96x64xf32>
  %b = tfc.weight "b" : tensor<96xf32>
  %0 = tfc.linear %x, %w, %b activation(silu) : (tensor<?x64xf32>, tensor<96x64xf32>, tensor<96xf32>) -> tensor<?x96xf32>
  return %0 : tensor<?x96xf32>
}

// CHECK-LABEL: func.func @merged
// CHECK-DAG: %[[Q:.*]] = tfc.weight "q" {quant = "q8_0"} : tensor<64x2x34xi8>
// CHECK-DAG: %[[K:.*]] = tfc.weight "k" {quant = "q8_0"} : tensor<32x2x34xi8>
// CHECK: %[[CAT:.*]] = tfc.concat %[[Q]], %[[K]] {axis = 0 : i64} : (tensor<64x2x34xi8>, tensor<32x2x34xi8>) -> tensor<96x2x34xi8>
// CHECK: %[[P:.*]] = tfc_cpu.qpack %[[CAT]] format "q8_0" outs(%{{.*}}) : (tensor<96x2x34xi8>, tensor<12x2x272xi8>) -> tensor<12x2x272xi8>
// CHECK: tfc_cpu.qgemm %{{.*}}, %[[P]] format "q8_0"
func.func @merged(%x: tensor<?x64xf32>) -> tensor<?x96xf32> {
  %q = tfc.weight "q" {quant = "q8_0"} : tensor<64x64xf32>
  %k = tfc.weight "k" {quant = "q8_0"} : tensor<32x64xf32>
  %w = tfc.concat %q, %k {axis = 0} : (tensor<64x64xf32>, tensor<32x64xf32>) -> tensor<96x64xf32>
  %0 = tfc.linear %x, %w : (tensor<?x64xf32>, tensor<96x64xf32>) -> tensor<?x96xf32>
  return %0 : tensor<?x96xf32>
}

// A table used by an embedding, by the tied LM head and by an elementwise
// op: one raw weight, the head multiplies it, the lookup reads its rows, the
// add its dequantised values.
// CHECK-LABEL: func.func @tied
// CHECK-SAME: tfc.id_bound = 100
// CHECK: %[[RAW:.*]] = tfc.weight "emb" {quant = "q8_0"} : tensor<100x2x34xi8>
// CHECK: %[[VALUES:.*]] = tfc_cpu.dequantize %[[RAW]] format "q8_0" outs(%{{.*}}) : (tensor<100x2x34xi8>, tensor<100x64xf32>) -> tensor<100x64xf32>
// CHECK: tfc_cpu.qembedding %[[RAW]][%{{.*}}] format "q8_0" outs(%{{.*}}) : (tensor<100x2x34xi8>, tensor<?xi64>, tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK: %[[P:.*]] = tfc_cpu.qpack %[[RAW]] format "q8_0" outs(%{{.*}}) : (tensor<100x2x34xi8>, tensor<13x2x272xi8>) -> tensor<13x2x272xi8>
// CHECK: tfc_cpu.qgemm %{{.*}}, %[[P]] format "q8_0"
// CHECK: tfc.add %[[VALUES]]
func.func @tied(%ids: tensor<?xi64>) -> (tensor<?x100xf32>, tensor<100x64xf32>) {
  %e = tfc.weight "emb" {quant = "q8_0"} : tensor<100x64xf32>
  %x = tfc.embedding %e[%ids] : (tensor<100x64xf32>, tensor<?xi64>) -> tensor<?x64xf32>
  %0 = tfc.linear %x, %e : (tensor<?x64xf32>, tensor<100x64xf32>) -> tensor<?x100xf32>
  %1 = tfc.add %e, %e : (tensor<100x64xf32>, tensor<100x64xf32>) -> tensor<100x64xf32>
  return %0, %1 : tensor<?x100xf32>, tensor<100x64xf32>
}

// CHECK-LABEL: func.func @mixed
// CHECK-DAG: tfc_cpu.dequantize %{{.*}} format "q8_0"
// CHECK-DAG: tfc_cpu.dequantize %{{.*}} format "q4_0"
// CHECK: tfc_cpu.pack
// CHECK: tfc_cpu.gemm
// CHECK-NOT: tfc_cpu.qgemm
func.func @mixed(%x: tensor<?x64xf32>) -> tensor<?x96xf32> {
  %q = tfc.weight "q" {quant = "q8_0"} : tensor<64x64xf32>
  %k = tfc.weight "k" {quant = "q4_0"} : tensor<32x64xf32>
  %w = tfc.concat %q, %k {axis = 0} : (tensor<64x64xf32>, tensor<32x64xf32>) -> tensor<96x64xf32>
  %0 = tfc.linear %x, %w : (tensor<?x64xf32>, tensor<96x64xf32>) -> tensor<?x96xf32>
  return %0 : tensor<?x96xf32>
}
