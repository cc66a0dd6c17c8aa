// RUN: tfc-opt %s -split-input-file --tfc-fuse-epilogue | FileCheck %s
// RUN: tfc-opt %s -split-input-file --tfc-fuse-epilogue=remarks -verify-diagnostics -o /dev/null
// Numerical equivalence on random inputs (the reference interpreter):
// RUN: tfc-opt %s -split-input-file --tfc-fuse-epilogue -o %t
// RUN: tfc-interpret --split-input-file %s --compare %t --tolerance 1e-5 | FileCheck %s --implicit-check-not=MISMATCH --check-prefix=NUM
// NUM-COUNT-13: result #{{[0-9]+}}: max abs error

// x @ W + b with W stored [in, out], then relu written as max(·, 0).
// CHECK-LABEL: func @matmul_bias_relu
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x16xf32>, %[[W:.*]]: tensor<16x32xf32>, %[[B:.*]]: tensor<32xf32>)
// CHECK-NEXT: %[[WT:.*]] = tfc.transpose %[[W]] [1, 0] : tensor<16x32xf32> -> tensor<32x16xf32>
// CHECK: %[[Y:.*]] = tfc.linear %[[X]], %[[WT]], %[[B]] activation(relu)
// CHECK-NEXT: return %[[Y]]
func.func @matmul_bias_relu(%x: tensor<?x?x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>) -> tensor<?x?x32xf32> {
  %zero = arith.constant dense<0.0> : tensor<f32>
  // expected-remark @+1 {{fused into tfc.linear (weight [K, N] read transposed)}}
  %m = tfc.matmul %x, %w : (tensor<?x?x16xf32>, tensor<16x32xf32>) -> tensor<?x?x32xf32>
  // expected-remark @+1 {{fused into the bias of tfc.linear}}
  %a = tfc.add %m, %b : (tensor<?x?x32xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
  // expected-remark @+1 {{fused into the activation relu of tfc.linear}}
  %r = tfc.max %a, %zero : (tensor<?x?x32xf32>, tensor<f32>) -> tensor<?x?x32xf32>
  return %r : tensor<?x?x32xf32>
}

// -----

// A linear without bias, the bias added on the left as [1, 1, N], then GELU.
// CHECK-LABEL: func @linear_bias_gelu
// CHECK: %[[B:.*]] = tfc.reshape %arg2 : tensor<1x1x32xf32> -> tensor<32xf32>
// CHECK: tfc.linear %arg0, %arg1, %[[B]] activation(gelu_tanh)
// CHECK-NOT: tfc.gelu
func.func @linear_bias_gelu(%x: tensor<2x5x16xf32>, %w: tensor<32x16xf32>, %b: tensor<1x1x32xf32>) -> tensor<2x5x32xf32> {
  %l = tfc.linear %x, %w : (tensor<2x5x16xf32>, tensor<32x16xf32>) -> tensor<2x5x32xf32>
  // expected-remark @+1 {{fused into the bias of tfc.linear}}
  %a = tfc.add %b, %l : (tensor<1x1x32xf32>, tensor<2x5x32xf32>) -> tensor<2x5x32xf32>
  // expected-remark @+1 {{fused into the activation gelu_tanh of tfc.linear}}
  %g = tfc.gelu tanh %a : tensor<2x5x32xf32>
  return %g : tensor<2x5x32xf32>
}

// -----

// SiLU and erf-GELU on linears that already have a bias.
// CHECK-LABEL: func @silu_and_gelu_erf
// CHECK: tfc.linear %arg0, %arg1, %arg2 activation(silu)
// CHECK: tfc.linear %arg0, %arg1, %arg2 activation(gelu_erf)
func.func @silu_and_gelu_erf(%x: tensor<4x16xf32>, %w: tensor<32x16xf32>, %b: tensor<32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %l1 = tfc.linear %x, %w, %b : (tensor<4x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  // expected-remark @+1 {{fused into the activation silu of tfc.linear}}
  %s = tfc.silu %l1 : tensor<4x32xf32>
  %l2 = tfc.linear %x, %w, %b : (tensor<4x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  // expected-remark @+1 {{fused into the activation gelu_erf of tfc.linear}}
  %g = tfc.gelu erf %l2 : tensor<4x32xf32>
  return %s, %g : tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// Post-norm residual: layer_norm(x + f(x)) takes the add; rms_norm too.
// CHECK-LABEL: func @residual_norms
// CHECK: %[[N:.*]] = tfc.layer_norm %arg0 scale(%arg2) bias(%arg3) residual(%arg1) {epsilon = 9.9999999999999998E-13 : f64}
// CHECK: tfc.rms_norm %[[N]] scale(%arg2) residual(%arg1)
// CHECK-NOT: tfc.add
func.func @residual_norms(%x: tensor<2x5x16xf32>, %f: tensor<2x5x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<2x5x16xf32> {
  %s = tfc.add %x, %f : tensor<2x5x16xf32>
  // expected-remark @+1 {{fused into the residual add of tfc.layer_norm}}
  %n = tfc.layer_norm %s scale(%g) bias(%b) {epsilon = 1.0e-12 : f64} : (tensor<2x5x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x5x16xf32>
  %s2 = tfc.add %n, %f : tensor<2x5x16xf32>
  // expected-remark @+1 {{fused into the residual add of tfc.rms_norm}}
  %r = tfc.rms_norm %s2 scale(%g) : (tensor<2x5x16xf32>, tensor<16xf32>) -> tensor<2x5x16xf32>
  return %r : tensor<2x5x16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Not fused, with the reason.
//===----------------------------------------------------------------------===//

// The pre-bias result is also returned.
// CHECK-LABEL: func @linear_other_use
// CHECK: tfc.linear %arg0, %arg1 :
// CHECK: tfc.add
func.func @linear_other_use(%x: tensor<4x16xf32>, %w: tensor<32x16xf32>, %b: tensor<32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %l = tfc.linear %x, %w : (tensor<4x16xf32>, tensor<32x16xf32>) -> tensor<4x32xf32>
  // expected-remark @+1 {{not fused: the linear's result has another use at}}
  %a = tfc.add %l, %b : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %a, %l : tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// Two activations in a row: only the first goes into the linear.
// CHECK-LABEL: func @second_activation
// CHECK: tfc.linear %arg0, %arg1, %arg2 activation(gelu_tanh)
// CHECK: tfc.relu
func.func @second_activation(%x: tensor<4x16xf32>, %w: tensor<32x16xf32>, %b: tensor<32xf32>) -> tensor<4x32xf32> {
  %l = tfc.linear %x, %w, %b : (tensor<4x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  // expected-remark @+1 {{fused into the activation gelu_tanh of tfc.linear}}
  %g = tfc.gelu tanh %l : tensor<4x32xf32>
  // expected-remark @+1 {{not fused: the linear already has the activation gelu_tanh}}
  %r = tfc.relu %g : tensor<4x32xf32>
  return %r : tensor<4x32xf32>
}

// -----

// A second bias after the first.
// CHECK-LABEL: func @second_bias
// CHECK: tfc.linear %arg0, %arg1, %arg2 :
// CHECK: tfc.add
func.func @second_bias(%x: tensor<4x16xf32>, %w: tensor<32x16xf32>, %b: tensor<32xf32>) -> tensor<4x32xf32> {
  %l = tfc.linear %x, %w, %b : (tensor<4x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  // expected-remark @+1 {{not fused: the linear already has a bias}}
  %a = tfc.add %l, %b : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %a : tensor<4x32xf32>
}

// -----

// Pre-norm: the residual sum also feeds the next residual.
// CHECK-LABEL: func @pre_norm_residual
// CHECK: %[[S:.*]] = tfc.add %arg0, %arg1
// CHECK: tfc.layer_norm %[[S]] :
func.func @pre_norm_residual(%x: tensor<2x5x16xf32>, %f: tensor<2x5x16xf32>) -> (tensor<2x5x16xf32>, tensor<2x5x16xf32>) {
  %s = tfc.add %x, %f : tensor<2x5x16xf32>
  // expected-remark @+1 {{not fused: the residual sum has another use at}}
  %n = tfc.layer_norm %s : (tensor<2x5x16xf32>) -> tensor<2x5x16xf32>
  return %n, %s : tensor<2x5x16xf32>, tensor<2x5x16xf32>
}

// -----

// A bias that is a full tensor (not a vector of the output features) is a
// plain add, and a broadcasting add before a norm is not a residual: no
// candidates, no remarks.
// CHECK-LABEL: func @not_candidates
// CHECK: tfc.linear %arg0, %arg1 :
// CHECK: tfc.add
// CHECK: tfc.layer_norm %{{.*}} :
func.func @not_candidates(%x: tensor<4x16xf32>, %w: tensor<32x16xf32>, %t: tensor<4x1xf32>) -> tensor<4x32xf32> {
  %l = tfc.linear %x, %w : (tensor<4x16xf32>, tensor<32x16xf32>) -> tensor<4x32xf32>
  %a = tfc.add %l, %t : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %n = tfc.layer_norm %a : (tensor<4x32xf32>) -> tensor<4x32xf32>
  return %n : tensor<4x32xf32>
}

// -----

// A product of two activations (W of dynamic shape) stays a matmul: a
// linear's weight has a static shape (the CPU packs it into panels).
// CHECK-LABEL: func @activation_product
// CHECK: tfc.matmul %arg0, %arg1
// CHECK-NOT: tfc.linear
func.func @activation_product(%a: tensor<?x16xf32>, %b: tensor<16x?xf32>) -> tensor<?x?xf32> {
  %m = tfc.matmul %a, %b : (tensor<?x16xf32>, tensor<16x?xf32>) -> tensor<?x?xf32>
  return %m : tensor<?x?xf32>
}
