// --convert-tfc-linear-to-cpu-gemm (LinearToGemm.cpp): tfc.linear(x, W[N, K])
// becomes tfc_cpu.gemm over tfc_cpu.pack(W) ([ceil(N/32), K, 32] column
// panels), keeping the bias and the activation; a weight that is a
// transpose of V [K, N] packs V itself with `transposed`. tfc.matmul with
// transpose flags gets explicit tfc.transpose ops instead.
// RUN: tfc-opt %s -split-input-file --convert-tfc-linear-to-cpu-gemm -verify-diagnostics | FileCheck %s

// N = 96 = 3 panels of 32; bias and GELU stay on the gemm.
// CHECK-LABEL: func @linear_bias_activation
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x64xf32>, %[[W:.*]]: tensor<96x64xf32>, %[[B:.*]]: tensor<96xf32>)
// CHECK: %[[P:.*]] = tfc_cpu.pack %[[W]] outs(%{{.*}}) : (tensor<96x64xf32>, tensor<3x64x32xf32>) -> tensor<3x64x32xf32>
// CHECK: %[[Y:.*]] = tfc_cpu.gemm %[[X]], %[[P]], %[[B]] outs(%{{.*}}) activation(gelu_tanh) : (tensor<?x?x64xf32>, tensor<3x64x32xf32>, tensor<96xf32>, tensor<?x?x96xf32>) -> tensor<?x?x96xf32>
// CHECK-NEXT: return %[[Y]]
func.func @linear_bias_activation(%x: tensor<?x?x64xf32>, %w: tensor<96x64xf32>, %b: tensor<96xf32>) -> tensor<?x?x96xf32> {
  %0 = tfc.linear %x, %w, %b activation(gelu_tanh) : (tensor<?x?x64xf32>, tensor<96x64xf32>, tensor<96xf32>) -> tensor<?x?x96xf32>
  return %0 : tensor<?x?x96xf32>
}

// -----

// N = 40 is not a multiple of 32: ceil(40 / 32) = 2 panels (the last one
// zero-padded by the pack). The weight is transpose(V [64, 40]): V is
// packed directly and the transpose disappears. No bias, no activation.
// CHECK-LABEL: func @linear_transposed_weight
// CHECK-SAME: (%[[X:.*]]: tensor<?x64xf32>, %[[V:.*]]: tensor<64x40xf32>)
// CHECK: %[[P:.*]] = tfc_cpu.pack %[[V]] outs(%{{.*}}) {transposed} : (tensor<64x40xf32>, tensor<2x64x32xf32>) -> tensor<2x64x32xf32>
// CHECK: %[[Y:.*]] = tfc_cpu.gemm %[[X]], %[[P]] outs(%{{.*}}) : (tensor<?x64xf32>, tensor<2x64x32xf32>, tensor<?x40xf32>) -> tensor<?x40xf32>
// CHECK-NEXT: return %[[Y]]
// CHECK-NOT: tfc.transpose
func.func @linear_transposed_weight(%x: tensor<?x64xf32>, %v: tensor<64x40xf32>) -> tensor<?x40xf32> {
  %wt = tfc.transpose %v [1, 0] : tensor<64x40xf32> -> tensor<40x64xf32>
  %0 = tfc.linear %x, %wt : (tensor<?x64xf32>, tensor<40x64xf32>) -> tensor<?x40xf32>
  return %0 : tensor<?x40xf32>
}

// -----

// A single row, N = 33 (two panels), the other activations.
// CHECK-LABEL: func @linear_activations
// CHECK: %[[P:.*]] = tfc_cpu.pack %arg1 outs(%{{.*}}) : (tensor<33x8xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
// CHECK: tfc_cpu.gemm %arg0, %[[P]], %arg2 outs(%{{.*}}) activation(relu)
// CHECK: tfc_cpu.gemm %arg0, %{{.*}}, %arg2 outs(%{{.*}}) activation(silu)
// CHECK: tfc_cpu.gemm %arg0, %{{.*}} outs(%{{.*}}) activation(gelu_erf) : (tensor<8xf32>, tensor<2x8x32xf32>, tensor<33xf32>) -> tensor<33xf32>
// CHECK-NOT: tfc.linear
func.func @linear_activations(%x: tensor<8xf32>, %w: tensor<33x8xf32>, %b: tensor<33xf32>) -> (tensor<33xf32>, tensor<33xf32>, tensor<33xf32>) {
  %0 = tfc.linear %x, %w, %b activation(relu) : (tensor<8xf32>, tensor<33x8xf32>, tensor<33xf32>) -> tensor<33xf32>
  %1 = tfc.linear %x, %w, %b activation(silu) : (tensor<8xf32>, tensor<33x8xf32>, tensor<33xf32>) -> tensor<33xf32>
  %2 = tfc.linear %x, %w activation(gelu_erf) : (tensor<8xf32>, tensor<33x8xf32>) -> tensor<33xf32>
  return %0, %1, %2 : tensor<33xf32>, tensor<33xf32>, tensor<33xf32>
}

// -----

// matmul flags become explicit transposes of the last two dims.
// CHECK-LABEL: func @matmul_transpose_rhs
// CHECK-SAME: (%[[A:.*]]: tensor<?x2x?x8xf32>, %[[B:.*]]: tensor<?x2x?x8xf32>)
// CHECK-NEXT: %[[BT:.*]] = tfc.transpose %[[B]] [0, 1, 3, 2] : tensor<?x2x?x8xf32> -> tensor<?x2x8x?xf32>
// CHECK-NEXT: %[[R:.*]] = tfc.matmul %[[A]], %[[BT]] : (tensor<?x2x?x8xf32>, tensor<?x2x8x?xf32>) -> tensor<?x2x?x?xf32>
// CHECK-NEXT: return %[[R]]
func.func @matmul_transpose_rhs(%a: tensor<?x2x?x8xf32>, %b: tensor<?x2x?x8xf32>) -> tensor<?x2x?x?xf32> {
  %0 = tfc.matmul %a, %b {transpose_rhs} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x?xf32>
  return %0 : tensor<?x2x?x?xf32>
}

// -----

// CHECK-LABEL: func @matmul_transpose_lhs
// CHECK-SAME: (%[[A:.*]]: tensor<?x5xf32>, %[[B:.*]]: tensor<?x3xf32>)
// CHECK-NEXT: %[[AT:.*]] = tfc.transpose %[[A]] [1, 0] : tensor<?x5xf32> -> tensor<5x?xf32>
// CHECK-NEXT: %[[R:.*]] = tfc.matmul %[[AT]], %[[B]] : (tensor<5x?xf32>, tensor<?x3xf32>) -> tensor<5x3xf32>
// CHECK-NEXT: return %[[R]]
func.func @matmul_transpose_lhs(%a: tensor<?x5xf32>, %b: tensor<?x3xf32>) -> tensor<5x3xf32> {
  %0 = tfc.matmul %a, %b {transpose_lhs} : (tensor<?x5xf32>, tensor<?x3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

// Both flags; a plain matmul is left alone.
// CHECK-LABEL: func @matmul_both_and_plain
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<3x4xf32>, %[[C:.*]]: tensor<8x3xf32>)
// CHECK-DAG: %[[AT:.*]] = tfc.transpose %[[A]] [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
// CHECK-DAG: %[[BT:.*]] = tfc.transpose %[[B]] [1, 0] : tensor<3x4xf32> -> tensor<4x3xf32>
// CHECK: %[[R0:.*]] = tfc.matmul %[[AT]], %[[BT]] : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
// CHECK: %[[R1:.*]] = tfc.matmul %[[R0]], %{{.*}} : (tensor<8x3xf32>, tensor<3x4xf32>) -> tensor<8x4xf32>
// CHECK-NOT: transpose_
func.func @matmul_both_and_plain(%a: tensor<4x8xf32>, %b: tensor<3x4xf32>, %c: tensor<8x3xf32>) -> tensor<8x4xf32> {
  %0 = tfc.matmul %a, %b {transpose_lhs, transpose_rhs} : (tensor<4x8xf32>, tensor<3x4xf32>) -> tensor<8x3xf32>
  %1 = tfc.matmul %0, %b : (tensor<8x3xf32>, tensor<3x4xf32>) -> tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}

// -----

// The CPU GEMM is f32 only.
func.func @linear_f16(%x: tensor<?x64xf16>, %w: tensor<32x64xf16>) -> tensor<?x32xf16> {
  // expected-error @+1 {{the CPU backend cannot lower this linear: it needs an f32 weight of static shape, got 'tensor<32x64xf16>'}}
  %0 = tfc.linear %x, %w : (tensor<?x64xf16>, tensor<32x64xf16>) -> tensor<?x32xf16>
  return %0 : tensor<?x32xf16>
}

// -----

// A weight of dynamic shape cannot be packed.
func.func @linear_dynamic_weight(%x: tensor<?x64xf32>, %w: tensor<?x64xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{the CPU backend cannot lower this linear: it needs an f32 weight of static shape, got 'tensor<?x64xf32>'}}
  %0 = tfc.linear %x, %w : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
