// Folders and canonicalisation patterns of the tfc dialect.
// RUN: tfc-opt %s -canonicalize -split-input-file | FileCheck %s

// CHECK-LABEL: func @transpose_of_transpose
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4x5xf32>)
func.func @transpose_of_transpose(%x: tensor<2x3x4x5xf32>) -> tensor<2x4x5x3xf32> {
  // The two permutations compose into one.
  // CHECK: %[[T:.*]] = tfc.transpose %[[X]] [0, 2, 3, 1] : tensor<2x3x4x5xf32> -> tensor<2x4x5x3xf32>
  // CHECK-NEXT: return %[[T]]
  %0 = tfc.transpose %x [0, 2, 1, 3] : tensor<2x3x4x5xf32> -> tensor<2x4x3x5xf32>
  %1 = tfc.transpose %0 [0, 1, 3, 2] : tensor<2x4x3x5xf32> -> tensor<2x4x5x3xf32>
  return %1 : tensor<2x4x5x3xf32>
}

// -----

// CHECK-LABEL: func @transpose_round_trip
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x12x64xf32>)
func.func @transpose_round_trip(%x: tensor<?x?x12x64xf32>) -> tensor<?x?x12x64xf32> {
  // CHECK-NEXT: return %[[X]]
  %0 = tfc.transpose %x [0, 2, 1, 3] : tensor<?x?x12x64xf32> -> tensor<?x12x?x64xf32>
  %1 = tfc.transpose %0 [0, 2, 1, 3] : tensor<?x12x?x64xf32> -> tensor<?x?x12x64xf32>
  return %1 : tensor<?x?x12x64xf32>
}

// -----

// CHECK-LABEL: func @identity_transpose
func.func @identity_transpose(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK-NOT: tfc.transpose
  %0 = tfc.transpose %x [0, 1] : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @reshape_chain
// CHECK-SAME: (%[[X:.*]]: tensor<?x768xf32>, %[[N:.*]]: index)
func.func @reshape_chain(%x: tensor<?x768xf32>, %n: index) -> tensor<?x64xf32> {
  // CHECK: %[[R:.*]] = tfc.reshape %[[X]][%[[N]]] : tensor<?x768xf32> -> tensor<?x64xf32>
  // CHECK-NEXT: return %[[R]]
  %0 = tfc.reshape %x [%n] : tensor<?x768xf32> -> tensor<?x12x64xf32>
  %1 = tfc.reshape %0 [%n] : tensor<?x12x64xf32> -> tensor<?x64xf32>
  return %1 : tensor<?x64xf32>
}

// -----

// CHECK-LABEL: func @static_noop_reshape
func.func @static_noop_reshape(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK-NOT: tfc.reshape
  %0 = tfc.reshape %x : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// A dynamic reshape to the same type is kept: its sizes may differ at run time.
// CHECK-LABEL: func @dynamic_reshape_kept
func.func @dynamic_reshape_kept(%x: tensor<?x?xf32>, %a: index, %b: index) -> tensor<?x?xf32> {
  // CHECK: tfc.reshape
  %0 = tfc.reshape %x [%a, %b] : tensor<?x?xf32> -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func @identities
// CHECK-SAME: (%[[X:.*]]: tensor<?x768xf32>)
func.func @identities(%x: tensor<?x768xf32>) -> tensor<?x768xf32> {
  // CHECK-NEXT: return %[[X]]
  %one = arith.constant dense<1.0> : tensor<f32>
  %zero = arith.constant dense<0.0> : tensor<768xf32>
  %0 = tfc.mul %x, %one : (tensor<?x768xf32>, tensor<f32>) -> tensor<?x768xf32>
  %1 = tfc.mul %one, %0 : (tensor<f32>, tensor<?x768xf32>) -> tensor<?x768xf32>
  %2 = tfc.add %1, %zero : (tensor<?x768xf32>, tensor<768xf32>) -> tensor<?x768xf32>
  %3 = tfc.add %zero, %2 : (tensor<768xf32>, tensor<?x768xf32>) -> tensor<?x768xf32>
  %4 = tfc.sub %3, %zero : (tensor<?x768xf32>, tensor<768xf32>) -> tensor<?x768xf32>
  %5 = tfc.div %4, %one : (tensor<?x768xf32>, tensor<f32>) -> tensor<?x768xf32>
  %6 = tfc.pow %5, %one : (tensor<?x768xf32>, tensor<f32>) -> tensor<?x768xf32>
  %7 = tfc.neg %6 : tensor<?x768xf32>
  %8 = tfc.neg %7 : tensor<?x768xf32>
  return %8 : tensor<?x768xf32>
}

// -----

// An identity that broadcasts the other operand to a larger shape is kept, as
// are operations whose constant is not the identity.
// CHECK-LABEL: func @not_identities
func.func @not_identities(%x: tensor<768xf32>) -> (tensor<4x768xf32>, tensor<768xf32>, tensor<768xf32>) {
  %one = arith.constant dense<1.0> : tensor<4x768xf32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  // CHECK: tfc.mul
  %0 = tfc.mul %x, %one : (tensor<768xf32>, tensor<4x768xf32>) -> tensor<4x768xf32>
  // CHECK: tfc.mul
  %1 = tfc.mul %x, %two : (tensor<768xf32>, tensor<f32>) -> tensor<768xf32>
  // 0 - x is not x.
  // CHECK: tfc.sub
  %2 = tfc.sub %zero, %x : (tensor<f32>, tensor<768xf32>) -> tensor<768xf32>
  return %0, %1, %2 : tensor<4x768xf32>, tensor<768xf32>, tensor<768xf32>
}

// -----

// CHECK-LABEL: func @heads_round_trip
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x768xf32>, %[[H:.*]]: tensor<?x12x?x64xf32>)
func.func @heads_round_trip(%x: tensor<?x?x768xf32>, %h: tensor<?x12x?x64xf32>) -> (tensor<?x?x768xf32>, tensor<?x12x?x64xf32>) {
  // CHECK-NEXT: return %[[X]], %[[H]]
  %0 = tfc.split_heads %x {heads = 12} : tensor<?x?x768xf32> -> tensor<?x12x?x64xf32>
  %1 = tfc.merge_heads %0 : tensor<?x12x?x64xf32> -> tensor<?x?x768xf32>
  %2 = tfc.merge_heads %h : tensor<?x12x?x64xf32> -> tensor<?x?x768xf32>
  %3 = tfc.split_heads %2 {heads = 12} : tensor<?x?x768xf32> -> tensor<?x12x?x64xf32>
  return %1, %3 : tensor<?x?x768xf32>, tensor<?x12x?x64xf32>
}

// -----

// Splitting into a different number of heads than were merged is not a no-op.
// CHECK-LABEL: func @heads_regrouped
func.func @heads_regrouped(%h: tensor<?x12x?x64xf32>) -> tensor<?x24x?x32xf32> {
  // CHECK: tfc.merge_heads
  // CHECK: tfc.split_heads
  %0 = tfc.merge_heads %h : tensor<?x12x?x64xf32> -> tensor<?x?x768xf32>
  %1 = tfc.split_heads %0 {heads = 24} : tensor<?x?x768xf32> -> tensor<?x24x?x32xf32>
  return %1 : tensor<?x24x?x32xf32>
}

// -----

// CHECK-LABEL: func @cast_noop
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
func.func @cast_noop(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: return %[[X]]
  %0 = tfc.cast %x : tensor<4xf32> to tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Unused tfc ops are pure and disappear.
// CHECK-LABEL: func @dead_code
func.func @dead_code(%x: tensor<?x?x768xf32>) {
  // CHECK-NEXT: return
  %0 = tfc.softmax %x {axis = 2} : tensor<?x?x768xf32>
  %1 = tfc.gelu erf %x : tensor<?x?x768xf32>
  return
}

// -----

// CHECK-LABEL: func @slice_whole_axis
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
func.func @slice_whole_axis(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x4xf32>) {
  // CHECK: %[[S:.*]] = tfc.slice %[[X]] {axis = 1 : i64, size = 4 : i64, start = 4 : i64}
  // CHECK: return %[[X]], %[[S]]
  %0 = tfc.slice %x {axis = 1, start = 0, size = 8} : tensor<2x8xf32> -> tensor<2x8xf32>
  %1 = tfc.slice %x {axis = 1, start = 4, size = 4} : tensor<2x8xf32> -> tensor<2x4xf32>
  return %0, %1 : tensor<2x8xf32>, tensor<2x4xf32>
}
