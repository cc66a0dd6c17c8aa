// RUN: tfc-opt %s -split-input-file --tfc-merge-qkv | FileCheck %s
// RUN: tfc-opt %s -split-input-file --tfc-merge-qkv=remarks -verify-diagnostics -o /dev/null
// Numerical equivalence on random inputs (the reference interpreter):
// RUN: tfc-opt %s -split-input-file --tfc-merge-qkv -o %t
// RUN: tfc-interpret --split-input-file %s --compare %t --tolerance 1e-5 | FileCheck %s --implicit-check-not=MISMATCH --check-prefix=NUM
// NUM-COUNT-8: result #{{[0-9]+}}: max abs error

// Q, K and V of one input, with biases; K/V narrower than Q (GQA).
// CHECK-LABEL: func @qkv
// CHECK: %[[W:.*]] = tfc.concat %arg1, %arg3, %arg5 {axis = 0 : i64} : (tensor<64x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<96x64xf32>
// CHECK: %[[B:.*]] = tfc.concat %arg2, %arg4, %arg6 {axis = 0 : i64} : (tensor<64xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<96xf32>
// CHECK: %[[P:.*]] = tfc.linear %arg0, %[[W]], %[[B]] : (tensor<?x?x64xf32>, tensor<96x64xf32>, tensor<96xf32>) -> tensor<?x?x96xf32>
// CHECK: %[[Q:.*]] = tfc.slice %[[P]] {axis = 2 : i64, size = 64 : i64, start = 0 : i64}
// CHECK: %[[K:.*]] = tfc.slice %[[P]] {axis = 2 : i64, size = 16 : i64, start = 64 : i64}
// CHECK: %[[V:.*]] = tfc.slice %[[P]] {axis = 2 : i64, size = 16 : i64, start = 80 : i64}
// CHECK: return %[[Q]], %[[K]], %[[V]]
func.func @qkv(%x: tensor<?x?x64xf32>, %wq: tensor<64x64xf32>, %bq: tensor<64xf32>, %wk: tensor<16x64xf32>, %bk: tensor<16xf32>, %wv: tensor<16x64xf32>, %bv: tensor<16xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>) {
  // expected-remark @+1 {{fused into one packed tfc.linear with 96 outputs (3 projections of the same input)}}
  %q = tfc.linear %x, %wq, %bq : (tensor<?x?x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  // expected-remark @+1 {{fused into one packed tfc.linear with 96 outputs}}
  %k = tfc.linear %x, %wk, %bk : (tensor<?x?x64xf32>, tensor<16x64xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  // expected-remark @+1 {{fused into one packed tfc.linear with 96 outputs}}
  %v = tfc.linear %x, %wv, %bv : (tensor<?x?x64xf32>, tensor<16x64xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  return %q, %k, %v : tensor<?x?x64xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>
}

// -----

// Gate and up projections without biases (LLaMA's MLP, before activation
// fusion).
// CHECK-LABEL: func @gate_up
// CHECK: %[[W:.*]] = tfc.concat %arg1, %arg2 {axis = 0 : i64}
// CHECK: %[[P:.*]] = tfc.linear %arg0, %[[W]] : (tensor<4x32xf32>, tensor<128x32xf32>) -> tensor<4x128xf32>
// CHECK-COUNT-2: tfc.slice %[[P]]
func.func @gate_up(%x: tensor<4x32xf32>, %wg: tensor<64x32xf32>, %wu: tensor<64x32xf32>) -> tensor<4x64xf32> {
  // expected-remark @+1 {{fused into one packed tfc.linear with 128 outputs (2 projections of the same input)}}
  %g = tfc.linear %x, %wg : (tensor<4x32xf32>, tensor<64x32xf32>) -> tensor<4x64xf32>
  %s = tfc.silu %g : tensor<4x64xf32>
  // expected-remark @+1 {{fused into one packed tfc.linear with 128 outputs (2 projections of the same input)}}
  %u = tfc.linear %x, %wu : (tensor<4x32xf32>, tensor<64x32xf32>) -> tensor<4x64xf32>
  %y = tfc.mul %s, %u : tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

// Not packed: another activation, a missing bias, a weight computed after
// the first linear.
// CHECK-LABEL: func @not_packed
// CHECK-NOT: tfc.concat
func.func @not_packed(%x: tensor<4x32xf32>, %w: tensor<64x32xf32>, %b: tensor<64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>) {
  %a = tfc.linear %x, %w, %b : (tensor<4x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  // expected-remark @+1 {{not fused: not packed with the linear at}}
  %c = tfc.linear %x, %w, %b activation(relu) : (tensor<4x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  // expected-remark @+1 {{that reads the same input: one has a bias and the other not}}
  %d = tfc.linear %x, %w : (tensor<4x32xf32>, tensor<64x32xf32>) -> tensor<4x64xf32>
  %w2 = tfc.neg %w : tensor<64x32xf32>
  // expected-remark @+1 {{that reads the same input: its weight or bias is computed after}}
  %e = tfc.linear %x, %w2, %b : (tensor<4x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  return %a, %c, %d, %e : tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>
}
