// tfc-kernel-own-destinations: after CSE merged equal tensor.empty ops,
// each kernel gets a copy of its destination right before it, and the
// linalg op that shared it keeps the original, moved to just before itself.
// RUN: tfc-opt %s --tfc-kernel-own-destinations | FileCheck %s

// CHECK-LABEL: func @shared
// CHECK: %[[N:.*]] = tensor.dim
// CHECK-NEXT: %[[E1:.*]] = tensor.empty(%[[N]]) : tensor<?x8xf32>
// CHECK-NEXT: %[[S:.*]] = tfc_kernel.softmax %{{.*}} outs(%[[E1]])
// CHECK-NEXT: %[[E2:.*]] = tensor.empty(%[[N]]) : tensor<?x8xf32>
// CHECK-NEXT: %[[R:.*]] = tfc_kernel.rms_norm %[[S]] outs(%[[E2]])
// CHECK-NEXT: %[[E3:.*]] = tensor.empty(%[[N]]) : tensor<?x8xf32>
// CHECK-NEXT: linalg.generic {{.*}} outs(%[[E3]] : tensor<?x8xf32>)
func.func @shared(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %s = tfc_kernel.softmax %x outs(%e) : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %r = tfc_kernel.rms_norm %s outs(%e) {epsilon = 1.0e-6} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = arith.addf %in, %in : f32
    linalg.yield %y : f32
  } -> tensor<?x8xf32>
  return %g : tensor<?x8xf32>
}

// A transpose gets its own destination too (a head split or merge sharing
// another layer's buffer would not fold into attention's views).
// CHECK-LABEL: func @transposes
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[T1:.*]] = linalg.transpose ins(%{{.*}} : tensor<8x4xf32>) outs(%[[E1]]
// CHECK-NEXT: %[[E2:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: linalg.transpose ins(%{{.*}} : tensor<8x4xf32>) outs(%[[E2]]
func.func @transposes(%x: tensor<8x4xf32>, %y: tensor<8x4xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %a = linalg.transpose ins(%x : tensor<8x4xf32>) outs(%e : tensor<4x8xf32>) permutation = [1, 0]
  %b = linalg.transpose ins(%y : tensor<8x4xf32>) outs(%e : tensor<4x8xf32>) permutation = [1, 0]
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}
