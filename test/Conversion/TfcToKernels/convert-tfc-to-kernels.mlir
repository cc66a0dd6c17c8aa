// convert-tfc-to-kernels: each kernel op of tfc becomes its tfc_kernel op
// writing into a tensor.empty, the dynamic sizes read from the operand that
// determines them; the attention scale becomes explicit.
// RUN: tfc-opt %s -split-input-file -verify-diagnostics --convert-tfc-to-kernels | FileCheck %s

// CHECK-LABEL: func @rows
// CHECK-SAME: (%[[X:.*]]: tensor<?x4x?xf32>, %[[G:.*]]: tensor<?xf32>)
// CHECK-DAG: %[[D0:.*]] = tensor.dim %[[X]], %c0
// CHECK-DAG: %[[D2:.*]] = tensor.dim %[[X]], %c2
// CHECK: %[[E:.*]] = tensor.empty(%[[D0]], %[[D2]]) : tensor<?x4x?xf32>
// CHECK: %[[S:.*]] = tfc_kernel.softmax %[[X]] outs(%[[E]]) : (tensor<?x4x?xf32>, tensor<?x4x?xf32>) -> tensor<?x4x?xf32>
// CHECK: %[[E2:.*]] = tensor.empty
// CHECK: %[[N:.*]] = tfc_kernel.layer_norm %[[S]] scale(%[[G]]) residual(%[[X]]) outs(%[[E2]]) {epsilon = 1.000000e-05 : f64}
// CHECK: %[[E3:.*]] = tensor.empty
// CHECK: tfc_kernel.rms_norm %[[N]] outs(%[[E3]]) {epsilon = 9.9999999999999995E-7 : f64}
// CHECK-NOT: tfc.
func.func @rows(%x: tensor<?x4x?xf32>, %g: tensor<?xf32>) -> tensor<?x4x?xf32> {
  %0 = tfc.softmax %x {axis = 2} : tensor<?x4x?xf32>
  %1 = tfc.layer_norm %0 scale(%g) residual(%x) : (tensor<?x4x?xf32>, tensor<?xf32>, tensor<?x4x?xf32>) -> tensor<?x4x?xf32>
  %2 = tfc.rms_norm %1 : (tensor<?x4x?xf32>) -> tensor<?x4x?xf32>
  return %2 : tensor<?x4x?xf32>
}

// -----

// [B, H, Tq, Dv]: Tq from the query, Dv from the value; the default scale
// 1/sqrt(64) is written out.
// CHECK-LABEL: func @attention
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x?x64xf32>, %[[K:.*]]: tensor<2x2x?x64xf32>, %[[V:.*]]: tensor<2x2x?x?xf32>, %[[T:.*]]: tensor<8x33xf32>)
// CHECK-DAG: %[[TQ:.*]] = tensor.dim %[[Q]], %c2
// CHECK-DAG: %[[DV:.*]] = tensor.dim %[[V]], %c3
// CHECK: %[[E:.*]] = tensor.empty(%[[TQ]], %[[DV]]) : tensor<2x8x?x?xf32>
// CHECK: tfc_kernel.attention %[[Q]], %[[K]], %[[V]] relative_bias(%[[T]]) outs(%[[E]]) {causal, scale = 1.250000e-01 : f64, window = 16 : i64}
func.func @attention(%q: tensor<2x8x?x64xf32>, %k: tensor<2x2x?x64xf32>, %v: tensor<2x2x?x?xf32>, %t: tensor<8x33xf32>) -> tensor<2x8x?x?xf32> {
  %0 = tfc.attention %q, %k, %v relative_bias(%t) {causal, window = 16} : (tensor<2x8x?x64xf32>, tensor<2x2x?x64xf32>, tensor<2x2x?x?xf32>, tensor<8x33xf32>) -> tensor<2x8x?x?xf32>
  return %0 : tensor<2x8x?x?xf32>
}

// -----

// Batch dims from the operand that has them dynamic; M, N through the
// transpose flags.
// CHECK-LABEL: func @matmul
// CHECK-SAME: (%[[A:.*]]: tensor<?x4x16x?xf32>, %[[B:.*]]: tensor<4x?x16xf32>)
// CHECK-DAG: %[[BT:.*]] = tensor.dim %[[A]], %c0
// CHECK-DAG: %[[M:.*]] = tensor.dim %[[A]], %c3
// CHECK-DAG: %[[N:.*]] = tensor.dim %[[B]], %c1
// CHECK: %[[E:.*]] = tensor.empty(%[[BT]], %[[M]], %[[N]]) : tensor<?x4x?x?xf32>
// CHECK: tfc_kernel.matmul %[[A]], %[[B]] outs(%[[E]]) {transpose_lhs, transpose_rhs}
func.func @matmul(%a: tensor<?x4x16x?xf32>, %b: tensor<4x?x16xf32>) -> tensor<?x4x?x?xf32> {
  %0 = tfc.matmul %a, %b {transpose_lhs, transpose_rhs} : (tensor<?x4x16x?xf32>, tensor<4x?x16xf32>) -> tensor<?x4x?x?xf32>
  return %0 : tensor<?x4x?x?xf32>
}

// -----

// CHECK-LABEL: func @linear
// CHECK: %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<?x32xf16>
// CHECK: tfc_kernel.linear %{{.*}}, %{{.*}}, %{{.*}} outs(%[[E]]) activation(silu) : (tensor<?x16xf16>, tensor<32x16xf16>, tensor<32xf16>, tensor<?x32xf16>) -> tensor<?x32xf16>
func.func @linear(%x: tensor<?x16xf16>, %w: tensor<32x16xf16>, %b: tensor<32xf16>) -> tensor<?x32xf16> {
  %0 = tfc.linear %x, %w, %b activation(silu) : (tensor<?x16xf16>, tensor<32x16xf16>, tensor<32xf16>) -> tensor<?x32xf16>
  return %0 : tensor<?x32xf16>
}

// -----

// The row kernels normalise the last axis; another axis is an error here
// (convert-tfc-to-linalg decomposes it first in the pipeline), never a
// softmax over the wrong axis (the former XFAIL-notes.md #7).
func.func @softmax_axis0(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{the softmax kernel normalises the last axis (1), not axis 0: run convert-tfc-to-linalg first, which decomposes it}}
  %0 = tfc.softmax %x {axis = 0} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
