// tfc-convert-compute-type: an f32 model computed in f16 (bf16 alike). The
// weights stay f32 (the file's) behind a cast, an entry keeps its f32
// signature with casts at the edges, outlined blocks take the new type,
// constants are rounded; non-float values do not change.
// RUN: tfc-opt %s --tfc-convert-compute-type=type=f16 | FileCheck %s
// RUN: tfc-opt %s --tfc-convert-compute-type=type=bf16 | FileCheck %s --check-prefix=BF16
// RUN: tfc-opt %s --tfc-convert-compute-type=type=f32 | FileCheck %s --check-prefix=SAME
// RUN: not tfc-opt %s --tfc-convert-compute-type=type=f64 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK-LABEL: func.func private @block(
// CHECK-SAME: %{{.*}}: tensor<?x8xf16>) -> tensor<?x8xf16>
// CHECK: tfc.gelu tanh %{{.*}} : tensor<?x8xf16>
// BF16-LABEL: func.func private @block(
// BF16-SAME: tensor<?x8xbf16>) -> tensor<?x8xbf16>
func.func private @block(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %y = tfc.gelu tanh %x : tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[X:.*]]: tensor<?x8xf32> {tfc.name = "x"}, %[[IDS:.*]]: tensor<?xi64> {tfc.name = "ids"}) -> (tensor<?x8xf32> {tfc.name = "y"}, tensor<?xi64>
// CHECK: %[[XH:.*]] = tfc.cast %[[X]] : tensor<?x8xf32> to tensor<?x8xf16>
// CHECK: %[[C:.*]] = arith.constant dense<1.000000e+00> : tensor<8xf16>
// CHECK: %[[W:.*]] = tfc.weight "w" : tensor<8x8xf32>
// CHECK-NEXT: %[[WH:.*]] = tfc.cast %[[W]] : tensor<8x8xf32> to tensor<8x8xf16>
// CHECK: %[[L:.*]] = tfc.linear %[[XH]], %[[WH]] : (tensor<?x8xf16>, tensor<8x8xf16>) -> tensor<?x8xf16>
// CHECK: %[[B:.*]] = call @block(%[[L]]) : (tensor<?x8xf16>) -> tensor<?x8xf16>
// CHECK: %[[A:.*]] = tfc.add %[[B]], %[[C]] : (tensor<?x8xf16>, tensor<8xf16>) -> tensor<?x8xf16>
// CHECK: %[[Y:.*]] = tfc.cast %[[A]] : tensor<?x8xf16> to tensor<?x8xf32>
// CHECK: return %[[Y]], %[[IDS]] : tensor<?x8xf32>, tensor<?xi64>
// SAME-NOT: f16
// SAME-NOT: bf16
// BAD: tfc-convert-compute-type: type is f32, f16 or bf16, not 'f64'
func.func @forward(%x: tensor<?x8xf32> {tfc.name = "x"}, %ids: tensor<?xi64> {tfc.name = "ids"})
    -> (tensor<?x8xf32> {tfc.name = "y"}, tensor<?xi64> {tfc.name = "ids_out"}) {
  %c = arith.constant dense<1.0> : tensor<8xf32>
  %w = tfc.weight "w" : tensor<8x8xf32>
  %l = tfc.linear %x, %w : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %b = call @block(%l) : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %a = tfc.add %b, %c : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return %a, %ids : tensor<?x8xf32>, tensor<?xi64>
}
