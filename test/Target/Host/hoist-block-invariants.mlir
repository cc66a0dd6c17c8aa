// tfc-hoist-block-invariants (HoistBlockInvariants.cpp): what reads only
// weights and constants (and what is computed from them alone, with a
// static destination of its own) moves before the outermost block call it
// is in; what reads the call's activations stays. Each use of a tensor.empty
// gets its own copy right before it.
// RUN: tfc-opt %s --tfc-hoist-block-invariants | FileCheck %s

// CHECK-LABEL: func.func @layer
// CHECK: %[[W:.*]] = tfc.weight "w"
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8x4xf32>
// CHECK-NEXT: %[[T:.*]] = linalg.transpose ins(%[[W]] : {{.*}}) outs(%[[E]] :
// CHECK-NEXT: tfc.block_begin "outer"
// CHECK-NEXT: tfc.block_begin "inner"
// CHECK-NEXT: %[[D0:.*]] = tensor.empty(%{{.*}}) : tensor<?x4xf32>
// CHECK-NEXT: %[[A:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<?x4xf32>) outs(%[[D0]] :
// CHECK: %[[D1:.*]] = tensor.empty(%{{.*}}) : tensor<?x4xf32>
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[A]] : tensor<?x4xf32>) outs(%[[D1]] :
// CHECK: tfc.block_end "inner"
// CHECK-NEXT: tfc.block_end "outer"
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @layer(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %w = tfc.weight "w" : tensor<4x8xf32>
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %d = tensor.empty(%n) : tensor<?x4xf32>
  tfc.block_begin "outer"
  tfc.block_begin "inner"
  %e = tensor.empty() : tensor<8x4xf32>
  %t = linalg.transpose ins(%w : tensor<4x8xf32>) outs(%e : tensor<8x4xf32>) permutation = [1, 0]
  %a = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x4xf32>) outs(%d : tensor<?x4xf32>) {
  ^bb0(%i: f32, %o: f32):
    %s = arith.mulf %i, %i : f32
    linalg.yield %s : f32
  } -> tensor<?x4xf32>
  %b = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<?x4xf32>) outs(%d : tensor<?x4xf32>) {
  ^bb0(%i: f32, %o: f32):
    %s = arith.addf %i, %i : f32
    linalg.yield %s : f32
  } -> tensor<?x4xf32>
  tfc.block_end "inner"
  tfc.block_end "outer"
  return %b, %t : tensor<?x4xf32>, tensor<8x4xf32>
}

// Shape arithmetic on values from before a call moves out of the outermost
// call it does not depend on; on the call's own values it stays.
// CHECK-LABEL: func.func @sizes
// CHECK: %[[N:.*]] = tensor.dim %arg0
// CHECK-NEXT: %[[N2:.*]] = arith.muli %[[N]]
// CHECK-NEXT: tfc.block_begin "outer"
// CHECK-NEXT: %[[Y:.*]] = tfc.neg
// CHECK-NEXT: %[[M:.*]] = tensor.dim %[[Y]]
// CHECK-NEXT: tfc.block_begin "inner"
// CHECK-NEXT: tensor.empty(%[[N2]], %[[M]])
// CHECK-NEXT: linalg.fill
func.func @sizes(%x: tensor<?x4xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  tfc.block_begin "outer"
  %y = tfc.neg %x : tensor<?x4xf32>
  tfc.block_begin "inner"
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %n2 = arith.muli %n, %c2 : index
  %m = tensor.dim %y, %c0 : tensor<?x4xf32>
  %e = tensor.empty(%n2, %m) : tensor<?x?xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  tfc.block_end "inner"
  tfc.block_end "outer"
  return %f : tensor<?x?xf32>
}
