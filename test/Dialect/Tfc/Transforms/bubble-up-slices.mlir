// RUN: tfc-opt %s -split-input-file --tfc-bubble-up-slices | FileCheck %s
// Numerical equivalence on random inputs (the reference interpreter):
// RUN: tfc-opt %s -split-input-file --tfc-bubble-up-slices -o %t
// RUN: tfc-interpret --split-input-file %s --compare %t --tolerance 1e-5 | FileCheck %s --implicit-check-not=MISMATCH --check-prefix=NUM
// NUM-COUNT-10: result #{{[0-9]+}}: max abs error

// A classifier's head: the first position of a post-norm FFN block. The
// slice moves above the norm (input and residual), both linears and the
// activation; the two slices of %x it leaves are one value after CSE.
// CHECK-LABEL: func @cls_head
// CHECK-DAG: %[[X0:.*]] = tfc.slice %arg0 {axis = 1 : i64, size = 1 : i64, start = 0 : i64} : tensor<?x?x32xf32> -> tensor<?x1x32xf32>
// CHECK-DAG: %[[H:.*]] = tfc.linear %{{.*}}, %arg1, %arg2 activation(gelu_erf) : (tensor<?x1x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<?x1x64xf32>
// CHECK: %[[Y:.*]] = tfc.linear %[[H]], %arg3 : (tensor<?x1x64xf32>, tensor<32x64xf32>) -> tensor<?x1x32xf32>
// CHECK: %[[N:.*]] = tfc.layer_norm %{{.*}} scale(%arg4) bias(%arg5) residual(%[[Y]]) {{.*}} -> tensor<?x1x32xf32>
// CHECK-NOT: tfc.slice
// CHECK: return %[[N]]
func.func @cls_head(%x: tensor<?x?x32xf32>, %w1: tensor<64x32xf32>, %b1: tensor<64xf32>, %w2: tensor<32x64xf32>, %g: tensor<32xf32>, %b: tensor<32xf32>) -> tensor<?x1x32xf32> {
  %h = tfc.linear %x, %w1, %b1 activation(gelu_erf) : (tensor<?x?x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  %y = tfc.linear %h, %w2 : (tensor<?x?x64xf32>, tensor<32x64xf32>) -> tensor<?x?x32xf32>
  %n = tfc.layer_norm %x scale(%g) bias(%b) residual(%y) {epsilon = 1.0e-5 : f64} : (tensor<?x?x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  %s = tfc.slice %n {axis = 1 : i64, start = 0 : i64, size = 1 : i64} : tensor<?x?x32xf32> -> tensor<?x1x32xf32>
  return %s : tensor<?x1x32xf32>
}

// -----

// Elementwise ops move for any axis, the last included; an operand
// broadcast along the axis (lower rank, or size 1) stays whole. RMSNorm
// moves with its residual.
// CHECK-LABEL: func @elementwise
// CHECK-DAG: %[[A:.*]] = tfc.slice %arg0 {axis = 2 : i64, size = 4 : i64, start = 2 : i64} : tensor<3x5x8xf32> -> tensor<3x5x4xf32>
// CHECK-DAG: %[[B:.*]] = tfc.slice %arg1 {axis = 0 : i64, size = 4 : i64, start = 2 : i64} : tensor<8xf32> -> tensor<4xf32>
// CHECK: %[[S:.*]] = tfc.add %[[A]], %[[B]] : (tensor<3x5x4xf32>, tensor<4xf32>) -> tensor<3x5x4xf32>
// CHECK: %[[T:.*]] = tfc.tanh %[[S]] : tensor<3x5x4xf32>
// CHECK: return %[[T]]
func.func @elementwise(%a: tensor<3x5x8xf32>, %b: tensor<8xf32>) -> tensor<3x5x4xf32> {
  %s = tfc.add %a, %b : (tensor<3x5x8xf32>, tensor<8xf32>) -> tensor<3x5x8xf32>
  %t = tfc.tanh %s : tensor<3x5x8xf32>
  %r = tfc.slice %t {axis = 2 : i64, start = 2 : i64, size = 4 : i64} : tensor<3x5x8xf32> -> tensor<3x5x4xf32>
  return %r : tensor<3x5x4xf32>
}

// CHECK-LABEL: func @broadcast_kept
// CHECK: %[[A:.*]] = tfc.slice %arg0 {axis = 1 : i64, size = 2 : i64, start = 1 : i64} : tensor<3x5x8xf32> -> tensor<3x2x8xf32>
// CHECK: %[[M:.*]] = tfc.mul %[[A]], %arg1 : (tensor<3x2x8xf32>, tensor<3x1x8xf32>) -> tensor<3x2x8xf32>
// CHECK: %[[R:.*]] = tfc.slice %arg2 {axis = 1 : i64, size = 2 : i64, start = 1 : i64} : tensor<3x5x8xf32> -> tensor<3x2x8xf32>
// CHECK: tfc.rms_norm %[[M]] scale(%arg3) residual(%[[R]]) {{.*}} -> tensor<3x2x8xf32>
func.func @broadcast_kept(%a: tensor<3x5x8xf32>, %b: tensor<3x1x8xf32>, %r: tensor<3x5x8xf32>, %g: tensor<8xf32>) -> tensor<3x2x8xf32> {
  %m = tfc.mul %a, %b : (tensor<3x5x8xf32>, tensor<3x1x8xf32>) -> tensor<3x5x8xf32>
  %n = tfc.rms_norm %m scale(%g) residual(%r) {epsilon = 1.0e-6 : f64} : (tensor<3x5x8xf32>, tensor<8xf32>, tensor<3x5x8xf32>) -> tensor<3x5x8xf32>
  %s = tfc.slice %n {axis = 1 : i64, start = 1 : i64, size = 2 : i64} : tensor<3x5x8xf32> -> tensor<3x2x8xf32>
  return %s : tensor<3x2x8xf32>
}

// -----

// What stays: a value with another use (it is computed whole anyway), a
// linear or norm sliced along its feature axis, softmax along its own axis.
// CHECK-LABEL: func @kept
// CHECK: %[[H:.*]] = tfc.linear %arg0, %arg1 : (tensor<4x6x8xf32>, tensor<16x8xf32>) -> tensor<4x6x16xf32>
// CHECK: tfc.slice %[[H]] {axis = 1
// CHECK: %[[E:.*]] = tfc.exp %[[H]]
// CHECK: %[[L:.*]] = tfc.linear %arg0, %arg1 : (tensor<4x6x8xf32>, tensor<16x8xf32>) -> tensor<4x6x16xf32>
// CHECK: tfc.slice %[[L]] {axis = 2
// CHECK: %[[N:.*]] = tfc.rms_norm %arg0
// CHECK: tfc.slice %[[N]] {axis = 2
// CHECK: %[[P:.*]] = tfc.softmax %arg0 {axis = 2 : i64}
// CHECK: tfc.slice %[[P]] {axis = 2
func.func @kept(%x: tensor<4x6x8xf32>, %w: tensor<16x8xf32>, %g: tensor<8xf32>) -> (tensor<4x1x16xf32>, tensor<4x6x16xf32>, tensor<4x6x4xf32>, tensor<4x6x4xf32>, tensor<4x6x4xf32>) {
  %h = tfc.linear %x, %w : (tensor<4x6x8xf32>, tensor<16x8xf32>) -> tensor<4x6x16xf32>
  %s = tfc.slice %h {axis = 1 : i64, start = 0 : i64, size = 1 : i64} : tensor<4x6x16xf32> -> tensor<4x1x16xf32>
  %e = tfc.exp %h : tensor<4x6x16xf32>
  %l = tfc.linear %x, %w : (tensor<4x6x8xf32>, tensor<16x8xf32>) -> tensor<4x6x16xf32>
  %ls = tfc.slice %l {axis = 2 : i64, start = 0 : i64, size = 4 : i64} : tensor<4x6x16xf32> -> tensor<4x6x4xf32>
  %n = tfc.rms_norm %x scale(%g) {epsilon = 1.0e-6 : f64} : (tensor<4x6x8xf32>, tensor<8xf32>) -> tensor<4x6x8xf32>
  %ns = tfc.slice %n {axis = 2 : i64, start = 0 : i64, size = 4 : i64} : tensor<4x6x8xf32> -> tensor<4x6x4xf32>
  %p = tfc.softmax %x {axis = 2 : i64} : tensor<4x6x8xf32>
  %ps = tfc.slice %p {axis = 2 : i64, start = 4 : i64, size = 4 : i64} : tensor<4x6x8xf32> -> tensor<4x6x4xf32>
  return %s, %e, %ls, %ns, %ps : tensor<4x1x16xf32>, tensor<4x6x16xf32>, tensor<4x6x4xf32>, tensor<4x6x4xf32>, tensor<4x6x4xf32>
}

// -----

// Softmax moves for another axis than its own.
// CHECK-LABEL: func @softmax_rows
// CHECK: %[[X:.*]] = tfc.slice %arg0 {axis = 0 : i64, size = 1 : i64, start = 3 : i64}
// CHECK: tfc.softmax %[[X]] {axis = 1 : i64} : tensor<1x8xf32>
func.func @softmax_rows(%x: tensor<5x8xf32>) -> tensor<1x8xf32> {
  %p = tfc.softmax %x {axis = 1 : i64} : tensor<5x8xf32>
  %s = tfc.slice %p {axis = 0 : i64, start = 3 : i64, size = 1 : i64} : tensor<5x8xf32> -> tensor<1x8xf32>
  return %s : tensor<1x8xf32>
}

// -----

// The slices of one value are replaced together, the narrow op placed
// before the first of them (here the one whose user comes first), and a
// slice from the end (the last position) moves like any other.
// CHECK-LABEL: func @two_slices
// CHECK: %[[X:.*]] = tfc.slice %arg0 {axis = 1 : i64, from_end, size = 1 : i64, start = 0 : i64} : tensor<2x?x8xf32> -> tensor<2x1x8xf32>
// CHECK: %[[E:.*]] = tfc.exp %[[X]] : tensor<2x1x8xf32>
// CHECK: %[[A:.*]] = tfc.add %[[E]], %[[E]] : tensor<2x1x8xf32>
// CHECK: %[[M:.*]] = tfc.mul %[[A]], %[[E]] : tensor<2x1x8xf32>
// CHECK: return %[[M]]
func.func @two_slices(%x: tensor<2x?x8xf32>) -> tensor<2x1x8xf32> {
  %e = tfc.exp %x : tensor<2x?x8xf32>
  %s1 = tfc.slice %e {axis = 1 : i64, start = 0 : i64, size = 1 : i64, from_end} : tensor<2x?x8xf32> -> tensor<2x1x8xf32>
  %a = tfc.add %s1, %s1 : tensor<2x1x8xf32>
  %s2 = tfc.slice %e {axis = 1 : i64, start = 0 : i64, size = 1 : i64, from_end} : tensor<2x?x8xf32> -> tensor<2x1x8xf32>
  %m = tfc.mul %a, %s2 : tensor<2x1x8xf32>
  return %m : tensor<2x1x8xf32>
}
