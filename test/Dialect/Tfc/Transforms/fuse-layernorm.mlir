// RUN: tfc-opt %s -split-input-file --tfc-fuse-layernorm | FileCheck %s
// RUN: tfc-opt %s -split-input-file --tfc-fuse-layernorm=remarks -verify-diagnostics -o /dev/null
// Numerical equivalence on random inputs (the reference interpreter):
// RUN: tfc-opt %s -split-input-file --tfc-fuse-layernorm -o %t
// RUN: tfc-interpret --split-input-file %s --compare %t --tolerance 1e-5 | FileCheck %s --implicit-check-not=MISMATCH --check-prefix=NUM
// NUM-COUNT-12: result #{{[0-9]+}}: max abs error

// The textbook form: mean, centre, square, mean, + eps, sqrt, divide, then
// gamma and beta.
// CHECK-LABEL: func @textbook
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x768xf32>, %[[G:.*]]: tensor<768xf32>, %[[B:.*]]: tensor<768xf32>)
// CHECK-NOT: tfc.
// CHECK: %[[LN:.*]] = tfc.layer_norm %[[X]] scale(%[[G]]) bias(%[[B]]) {epsilon = 9.9999999999999998E-13 : f64}
// CHECK-NEXT: return %[[LN]]
func.func @textbook(%x: tensor<?x?x768xf32>, %g: tensor<768xf32>, %b: tensor<768xf32>) -> tensor<?x?x768xf32> {
  %eps = arith.constant dense<1.0e-12> : tensor<f32>
  %mu = tfc.reduce_mean %x {axis = 2, keepdim} : tensor<?x?x768xf32> -> tensor<?x?x1xf32>
  %d = tfc.sub %x, %mu : (tensor<?x?x768xf32>, tensor<?x?x1xf32>) -> tensor<?x?x768xf32>
  %sq = tfc.mul %d, %d : tensor<?x?x768xf32>
  %var = tfc.reduce_mean %sq {axis = 2, keepdim} : tensor<?x?x768xf32> -> tensor<?x?x1xf32>
  %ve = tfc.add %var, %eps : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  // expected-remark @+1 {{fused into tfc.layer_norm (epsilon 1e-12, scale, bias)}}
  %sd = tfc.sqrt %ve : tensor<?x?x1xf32>
  %n = tfc.div %d, %sd : (tensor<?x?x768xf32>, tensor<?x?x1xf32>) -> tensor<?x?x768xf32>
  %y = tfc.mul %n, %g : (tensor<?x?x768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  %z = tfc.add %y, %b : (tensor<?x?x768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  return %z : tensor<?x?x768xf32>
}

// -----

// rsqrt and multiply, pow 2, eps on the left, no gamma or beta.
// CHECK-LABEL: func @rsqrt_pow
// CHECK: %[[LN:.*]] = tfc.layer_norm %{{[^ ]*}} : (tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: return %[[LN]]
func.func @rsqrt_pow(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %mu = tfc.reduce_mean %x {axis = 1, keepdim} : tensor<4x16xf32> -> tensor<4x1xf32>
  %d = tfc.sub %x, %mu : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  %sq = tfc.pow %d, %two : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %var = tfc.reduce_mean %sq {axis = 1, keepdim} : tensor<4x16xf32> -> tensor<4x1xf32>
  %ve = tfc.add %eps, %var : (tensor<f32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  // expected-remark @+1 {{fused into tfc.layer_norm (epsilon 1e-05)}}
  %r = tfc.rsqrt %ve : tensor<4x1xf32>
  %n = tfc.mul %r, %d : (tensor<4x1xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %n : tensor<4x16xf32>
}

// -----

// Variance as E[x^2] - E[x]^2, and the numerator recomputed (as exporters
// that do not CSE emit it); only beta.
// CHECK-LABEL: func @expectation_form
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf32>, %[[B:.*]]: tensor<16xf32>)
// CHECK: %[[LN:.*]] = tfc.layer_norm %[[X]] bias(%[[B]]) {epsilon = 9.9999999999999995E-7 : f64}
// CHECK-NEXT: return %[[LN]]
func.func @expectation_form(%x: tensor<4x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %eps = arith.constant dense<1.0e-6> : tensor<f32>
  %x2 = tfc.mul %x, %x : tensor<4x16xf32>
  %ex2 = tfc.reduce_mean %x2 {axis = 1, keepdim} : tensor<4x16xf32> -> tensor<4x1xf32>
  %mu = tfc.reduce_mean %x {axis = 1, keepdim} : tensor<4x16xf32> -> tensor<4x1xf32>
  %mu2 = tfc.mul %mu, %mu : tensor<4x1xf32>
  %var = tfc.sub %ex2, %mu2 : tensor<4x1xf32>
  %ve = tfc.add %var, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  // expected-remark @+1 {{fused into tfc.layer_norm (epsilon 1e-06, bias)}}
  %r = tfc.rsqrt %ve : tensor<4x1xf32>
  %mu_again = tfc.reduce_mean %x {axis = 1, keepdim} : tensor<4x16xf32> -> tensor<4x1xf32>
  %d = tfc.sub %x, %mu_again : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  %n = tfc.mul %d, %r : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  %z = tfc.add %n, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  return %z : tensor<4x16xf32>
}

// -----

// RMSNorm: x * rsqrt(mean(x^2) + eps) * gamma. (1e-6 is rms_norm's default
// epsilon, which is not printed.)
// CHECK-LABEL: func @rms
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x4096xf32>, %[[G:.*]]: tensor<4096xf32>)
// CHECK: %[[RN:.*]] = tfc.rms_norm %[[X]] scale(%[[G]]) : (tensor<?x?x4096xf32>, tensor<4096xf32>)
// CHECK-NEXT: return %[[RN]]
func.func @rms(%x: tensor<?x?x4096xf32>, %g: tensor<4096xf32>) -> tensor<?x?x4096xf32> {
  %eps = arith.constant dense<1.0e-6> : tensor<f32>
  %sq = tfc.mul %x, %x : tensor<?x?x4096xf32>
  %ms = tfc.reduce_mean %sq {axis = 2, keepdim} : tensor<?x?x4096xf32> -> tensor<?x?x1xf32>
  %ve = tfc.add %ms, %eps : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  // expected-remark @+1 {{fused into tfc.rms_norm (epsilon 1e-06, scale)}}
  %r = tfc.rsqrt %ve : tensor<?x?x1xf32>
  %n = tfc.mul %x, %r : (tensor<?x?x4096xf32>, tensor<?x?x1xf32>) -> tensor<?x?x4096xf32>
  %y = tfc.mul %g, %n : (tensor<4096xf32>, tensor<?x?x4096xf32>) -> tensor<?x?x4096xf32>
  return %y : tensor<?x?x4096xf32>
}

// -----

// RMSNorm with sqrt and divide, reductions through a reshape.
// CHECK-LABEL: func @rms_div_reshape
// CHECK: %[[RN:.*]] = tfc.rms_norm %{{[^ ]*}} {epsilon = 1.000000e-05 : f64} : (tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: return %[[RN]]
func.func @rms_div_reshape(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %sq = tfc.mul %x, %x : tensor<4x16xf32>
  %ms = tfc.reduce_mean %sq {axis = 1} : tensor<4x16xf32> -> tensor<4xf32>
  %msk = tfc.reshape %ms : tensor<4xf32> -> tensor<4x1xf32>
  %ve = tfc.add %msk, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  // expected-remark @+1 {{fused into tfc.rms_norm (epsilon 1e-05)}}
  %s = tfc.sqrt %ve : tensor<4x1xf32>
  %n = tfc.div %x, %s : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  return %n : tensor<4x16xf32>
}

// -----

// NEGATIVE: epsilon is a function argument, not a constant.
// CHECK-LABEL: func @eps_not_constant
// CHECK-NOT: tfc.layer_norm
func.func @eps_not_constant(%x: tensor<4x16xf32>, %eps: tensor<f32>) -> tensor<4x16xf32> {
  %mu = tfc.reduce_mean %x {axis = 1, keepdim} : tensor<4x16xf32> -> tensor<4x1xf32>
  %d = tfc.sub %x, %mu : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  %sq = tfc.mul %d, %d : tensor<4x16xf32>
  %var = tfc.reduce_mean %sq {axis = 1, keepdim} : tensor<4x16xf32> -> tensor<4x1xf32>
  %ve = tfc.add %var, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  // expected-remark @+1 {{not fused: epsilon is not a constant}}
  %r = tfc.rsqrt %ve : tensor<4x1xf32>
  %n = tfc.mul %d, %r : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  return %n : tensor<4x16xf32>
}

// -----

// NEGATIVE: normalising over the first axis is not a LayerNorm.
// CHECK-LABEL: func @wrong_axis
// CHECK-NOT: tfc.layer_norm
func.func @wrong_axis(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %mu = tfc.reduce_mean %x {axis = 0, keepdim} : tensor<4x16xf32> -> tensor<1x16xf32>
  %d = tfc.sub %x, %mu : (tensor<4x16xf32>, tensor<1x16xf32>) -> tensor<4x16xf32>
  %sq = tfc.mul %d, %d : tensor<4x16xf32>
  %var = tfc.reduce_mean %sq {axis = 0, keepdim} : tensor<4x16xf32> -> tensor<1x16xf32>
  %ve = tfc.add %var, %eps : (tensor<1x16xf32>, tensor<f32>) -> tensor<1x16xf32>
  // expected-remark @+1 {{not fused: the reduction axis 0 is not the last axis 1}}
  %r = tfc.rsqrt %ve : tensor<1x16xf32>
  %n = tfc.mul %d, %r : (tensor<4x16xf32>, tensor<1x16xf32>) -> tensor<4x16xf32>
  return %n : tensor<4x16xf32>
}

// -----

// NEGATIVE: the variance is also returned.
// CHECK-LABEL: func @variance_other_use
// CHECK-NOT: tfc.layer_norm
func.func @variance_other_use(%x: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x1xf32>) {
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %mu = tfc.reduce_mean %x {axis = 1, keepdim} : tensor<4x16xf32> -> tensor<4x1xf32>
  %d = tfc.sub %x, %mu : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  %sq = tfc.mul %d, %d : tensor<4x16xf32>
  %var = tfc.reduce_mean %sq {axis = 1, keepdim} : tensor<4x16xf32> -> tensor<4x1xf32>
  %ve = tfc.add %var, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  // expected-remark @+1 {{not fused: 'tfc.reduce_mean' has another use at}}
  %r = tfc.rsqrt %ve : tensor<4x1xf32>
  %n = tfc.mul %d, %r : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  return %n, %var : tensor<4x16xf32>, tensor<4x1xf32>
}

// -----

// NEGATIVE: the variance is a mean of absolute... of something that is not a
// square.
// CHECK-LABEL: func @not_a_square
// CHECK-NOT: tfc.layer_norm
func.func @not_a_square(%x: tensor<4x16xf32>, %z: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  // exp(x) * exp(z): positive (no NaN for the numerical check), not a square.
  %ex = tfc.exp %x : tensor<4x16xf32>
  %ez = tfc.exp %z : tensor<4x16xf32>
  %p = tfc.mul %ex, %ez : tensor<4x16xf32>
  %var = tfc.reduce_mean %p {axis = 1, keepdim} : tensor<4x16xf32> -> tensor<4x1xf32>
  %ve = tfc.add %var, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  // expected-remark @+1 {{not fused: the variance is not a mean of squares}}
  %r = tfc.rsqrt %ve : tensor<4x1xf32>
  %n = tfc.mul %x, %r : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  return %n : tensor<4x16xf32>
}

// -----

// NEGATIVE: the centred value divided is of another tensor.
// CHECK-LABEL: func @other_numerator
// CHECK-NOT: tfc.rms_norm
func.func @other_numerator(%x: tensor<4x16xf32>, %z: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %sq = tfc.mul %x, %x : tensor<4x16xf32>
  %ms = tfc.reduce_mean %sq {axis = 1, keepdim} : tensor<4x16xf32> -> tensor<4x1xf32>
  %ve = tfc.add %ms, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  // expected-remark @+1 {{not fused: the normalised value is not the input of the mean square}}
  %r = tfc.rsqrt %ve : tensor<4x1xf32>
  %n = tfc.mul %z, %r : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  return %n : tensor<4x16xf32>
}

// -----

// A plain square root is a candidate that is reported and left alone.
// CHECK-LABEL: func @plain_sqrt
// CHECK: tfc.sqrt
func.func @plain_sqrt(%x: tensor<4xf32>) -> tensor<4xf32> {
  // The root of exp(x) (positive, so the numerical check sees no NaN).
  %e = tfc.exp %x : tensor<4xf32>
  // expected-remark @+1 {{not fused: the root is not taken of 'variance + epsilon'}}
  %s = tfc.sqrt %e : tensor<4xf32>
  return %s : tensor<4xf32>
}
