// RUN: tfc-opt %s -split-input-file --tfc-fuse-softmax | FileCheck %s
// RUN: tfc-opt %s -split-input-file --tfc-fuse-softmax=remarks -verify-diagnostics -o /dev/null
// Numerical equivalence on random inputs (the reference interpreter):
// RUN: tfc-opt %s -split-input-file --tfc-fuse-softmax -o %t
// RUN: tfc-interpret --split-input-file %s --compare %t --tolerance 1e-5 | FileCheck %s --implicit-check-not=MISMATCH --check-prefix=NUM
// NUM-COUNT-14: result #{{[0-9]+}}: max abs error

// The numerically stable form with keepdim reductions.
// CHECK-LABEL: func @stable
// CHECK-SAME: (%[[X:.*]]: tensor<?x12x?x?xf32>)
// CHECK-NEXT: %[[S:.*]] = tfc.softmax %[[X]] {axis = 3 : i64} : tensor<?x12x?x?xf32>
// CHECK-NEXT: return %[[S]]
func.func @stable(%x: tensor<?x12x?x?xf32>) -> tensor<?x12x?x?xf32> {
  %m = tfc.reduce_max %x {axis = 3, keepdim} : tensor<?x12x?x?xf32> -> tensor<?x12x?x1xf32>
  %d = tfc.sub %x, %m : (tensor<?x12x?x?xf32>, tensor<?x12x?x1xf32>) -> tensor<?x12x?x?xf32>
  // expected-remark @+1 {{fused into tfc.softmax over axis 3}}
  %e = tfc.exp %d : tensor<?x12x?x?xf32>
  %s = tfc.reduce_sum %e {axis = 3, keepdim} : tensor<?x12x?x?xf32> -> tensor<?x12x?x1xf32>
  %y = tfc.div %e, %s : (tensor<?x12x?x?xf32>, tensor<?x12x?x1xf32>) -> tensor<?x12x?x?xf32>
  return %y : tensor<?x12x?x?xf32>
}

// -----

// The unstabilised form becomes the stable op.
// CHECK-LABEL: func @unstable
// CHECK-SAME: (%[[X:.*]]: tensor<4x10xf32>)
// CHECK-NEXT: %[[S:.*]] = tfc.softmax %[[X]] {axis = 1 : i64} : tensor<4x10xf32>
// CHECK-NEXT: return %[[S]]
func.func @unstable(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  // expected-remark @+1 {{fused into tfc.softmax over axis 1}}
  %e = tfc.exp %x : tensor<4x10xf32>
  %s = tfc.reduce_sum %e {axis = 1, keepdim} : tensor<4x10xf32> -> tensor<4x1xf32>
  %y = tfc.div %e, %s : (tensor<4x10xf32>, tensor<4x1xf32>) -> tensor<4x10xf32>
  return %y : tensor<4x10xf32>
}

// -----

// Softmax over a middle axis.
// CHECK-LABEL: func @middle_axis
// CHECK: tfc.softmax %{{.*}} {axis = 0 : i64} : tensor<4x10xf32>
// CHECK-NOT: tfc.exp
func.func @middle_axis(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %m = tfc.reduce_max %x {axis = 0, keepdim} : tensor<4x10xf32> -> tensor<1x10xf32>
  %d = tfc.sub %x, %m : (tensor<4x10xf32>, tensor<1x10xf32>) -> tensor<4x10xf32>
  // expected-remark @+1 {{fused into tfc.softmax over axis 0}}
  %e = tfc.exp %d : tensor<4x10xf32>
  %s = tfc.reduce_sum %e {axis = 0, keepdim} : tensor<4x10xf32> -> tensor<1x10xf32>
  %y = tfc.div %e, %s : (tensor<4x10xf32>, tensor<1x10xf32>) -> tensor<4x10xf32>
  return %y : tensor<4x10xf32>
}

// -----

// Division written as multiplication by the reciprocal 1 / s.
// CHECK-LABEL: func @reciprocal
// CHECK-SAME: (%[[X:.*]]: tensor<4x10xf32>)
// CHECK-NOT: tfc.
// CHECK: %[[S:.*]] = tfc.softmax %[[X]] {axis = 1 : i64}
// CHECK-NEXT: return %[[S]]
func.func @reciprocal(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %one = arith.constant dense<1.0> : tensor<f32>
  %m = tfc.reduce_max %x {axis = 1, keepdim} : tensor<4x10xf32> -> tensor<4x1xf32>
  %d = tfc.sub %x, %m : (tensor<4x10xf32>, tensor<4x1xf32>) -> tensor<4x10xf32>
  // expected-remark @+1 {{fused into tfc.softmax over axis 1}}
  %e = tfc.exp %d : tensor<4x10xf32>
  %s = tfc.reduce_sum %e {axis = 1, keepdim} : tensor<4x10xf32> -> tensor<4x1xf32>
  %r = tfc.div %one, %s : (tensor<f32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = tfc.mul %r, %e : (tensor<4x1xf32>, tensor<4x10xf32>) -> tensor<4x10xf32>
  return %y : tensor<4x10xf32>
}

// -----

// Division written as multiplication by s ^ -1.
// CHECK-LABEL: func @power_minus_one
// CHECK-NOT: tfc.
// CHECK: %[[S:.*]] = tfc.softmax %{{.*}} {axis = 1 : i64}
// CHECK-NEXT: return %[[S]]
func.func @power_minus_one(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %minus_one = arith.constant dense<-1.0> : tensor<f32>
  // expected-remark @+1 {{fused into tfc.softmax over axis 1}}
  %e = tfc.exp %x : tensor<4x10xf32>
  %s = tfc.reduce_sum %e {axis = 1, keepdim} : tensor<4x10xf32> -> tensor<4x1xf32>
  %r = tfc.pow %s, %minus_one : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %y = tfc.mul %e, %r : (tensor<4x10xf32>, tensor<4x1xf32>) -> tensor<4x10xf32>
  return %y : tensor<4x10xf32>
}

// -----

// Reductions without keepdim, broadcast back with a reshape.
// CHECK-LABEL: func @reshape_broadcast
// CHECK-SAME: (%[[X:.*]]: tensor<4x10xf32>)
// CHECK-NEXT: %[[S:.*]] = tfc.softmax %[[X]] {axis = 1 : i64}
// CHECK-NEXT: return %[[S]]
func.func @reshape_broadcast(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %m = tfc.reduce_max %x {axis = 1} : tensor<4x10xf32> -> tensor<4xf32>
  %mk = tfc.reshape %m : tensor<4xf32> -> tensor<4x1xf32>
  %d = tfc.sub %x, %mk : (tensor<4x10xf32>, tensor<4x1xf32>) -> tensor<4x10xf32>
  // expected-remark @+1 {{fused into tfc.softmax over axis 1}}
  %e = tfc.exp %d : tensor<4x10xf32>
  %s = tfc.reduce_sum %e {axis = 1} : tensor<4x10xf32> -> tensor<4xf32>
  %sk = tfc.reshape %s : tensor<4xf32> -> tensor<4x1xf32>
  %y = tfc.div %e, %sk : (tensor<4x10xf32>, tensor<4x1xf32>) -> tensor<4x10xf32>
  return %y : tensor<4x10xf32>
}

// -----

// A maximum over another axis is kept as part of the softmax input: the
// result is still exactly softmax(x - m).
// CHECK-LABEL: func @max_over_other_axis
// CHECK: %[[D:.*]] = tfc.sub
// CHECK-NEXT: tfc.softmax %[[D]] {axis = 1 : i64}
func.func @max_over_other_axis(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %m = tfc.reduce_max %x {axis = 0, keepdim} : tensor<4x10xf32> -> tensor<1x10xf32>
  %d = tfc.sub %x, %m : (tensor<4x10xf32>, tensor<1x10xf32>) -> tensor<4x10xf32>
  // expected-remark @+1 {{fused into tfc.softmax over axis 1}}
  %e = tfc.exp %d : tensor<4x10xf32>
  %s = tfc.reduce_sum %e {axis = 1, keepdim} : tensor<4x10xf32> -> tensor<4x1xf32>
  %y = tfc.div %e, %s : (tensor<4x10xf32>, tensor<4x1xf32>) -> tensor<4x10xf32>
  return %y : tensor<4x10xf32>
}

// -----

// NEGATIVE: the exponentials are also returned.
// CHECK-LABEL: func @exp_other_use
// CHECK-NOT: tfc.softmax
func.func @exp_other_use(%x: tensor<4x10xf32>) -> (tensor<4x10xf32>, tensor<4x10xf32>) {
  // expected-remark @+1 {{not fused: the exponentials have another use at}}
  %e = tfc.exp %x : tensor<4x10xf32>
  %s = tfc.reduce_sum %e {axis = 1, keepdim} : tensor<4x10xf32> -> tensor<4x1xf32>
  %y = tfc.div %e, %s : (tensor<4x10xf32>, tensor<4x1xf32>) -> tensor<4x10xf32>
  return %y, %e : tensor<4x10xf32>, tensor<4x10xf32>
}

// -----

// NEGATIVE: the sum is used again (e.g. a log-sum-exp).
// CHECK-LABEL: func @sum_other_use
// CHECK-NOT: tfc.softmax
func.func @sum_other_use(%x: tensor<4x10xf32>) -> (tensor<4x10xf32>, tensor<4x1xf32>) {
  // expected-remark @+1 {{not fused: the sum has another use at}}
  %e = tfc.exp %x : tensor<4x10xf32>
  %s = tfc.reduce_sum %e {axis = 1, keepdim} : tensor<4x10xf32> -> tensor<4x1xf32>
  %y = tfc.div %e, %s : (tensor<4x10xf32>, tensor<4x1xf32>) -> tensor<4x10xf32>
  %l = tfc.log %s : tensor<4x1xf32>
  return %y, %l : tensor<4x10xf32>, tensor<4x1xf32>
}

// -----

// NEGATIVE: the sum divides something else.
// CHECK-LABEL: func @divides_other
// CHECK-NOT: tfc.softmax
func.func @divides_other(%x: tensor<4x10xf32>, %z: tensor<4x10xf32>) -> tensor<4x10xf32> {
  // expected-remark @+1 {{not fused: the sum of the exponentials does not divide them}}
  %e = tfc.exp %x : tensor<4x10xf32>
  %s = tfc.reduce_sum %e {axis = 1, keepdim} : tensor<4x10xf32> -> tensor<4x1xf32>
  %y = tfc.div %z, %s : (tensor<4x10xf32>, tensor<4x1xf32>) -> tensor<4x10xf32>
  return %y : tensor<4x10xf32>
}

// -----

// NEGATIVE: the normalisation broadcasts the result beyond the input's shape
// (the reciprocal is taken of a larger constant).
// CHECK-LABEL: func @broadcasting_division
// CHECK-NOT: tfc.softmax
func.func @broadcasting_division(%x: tensor<1x10xf32>) -> tensor<3x10xf32> {
  %ones = arith.constant dense<1.0> : tensor<3x1xf32>
  // expected-remark @+1 {{not fused: the division broadcasts: the input type tensor<1x10xf32> differs from the result type tensor<3x10xf32>}}
  %e = tfc.exp %x : tensor<1x10xf32>
  %s = tfc.reduce_sum %e {axis = 1, keepdim} : tensor<1x10xf32> -> tensor<1x1xf32>
  %r = tfc.div %ones, %s : (tensor<3x1xf32>, tensor<1x1xf32>) -> tensor<3x1xf32>
  %y = tfc.mul %e, %r : (tensor<1x10xf32>, tensor<3x1xf32>) -> tensor<3x10xf32>
  return %y : tensor<3x10xf32>
}

// -----

// An exp that is never summed is not a softmax candidate: no remark.
// CHECK-LABEL: func @plain_exp
// CHECK: tfc.exp
func.func @plain_exp(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %e = tfc.exp %x : tensor<4x10xf32>
  return %e : tensor<4x10xf32>
}
