// Elementwise tfc ops (Elementwise.cpp, activations from Activations.cpp):
// each becomes one all-parallel linalg.generic over the result, reading its
// operands through NumPy-broadcast indexing maps (aligned to the trailing
// dims; a static 1 against a larger result reads index 0; a rank-0 operand
// reads `()`), into a tensor.empty whose dynamic sizes come from an operand
// that has that dim dynamic.
// RUN: tfc-opt %s -split-input-file --convert-tfc-to-linalg | FileCheck %s

// A feature vector added to rows of unknown count.
// CHECK-DAG: #[[$ID2:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$LAST:map[0-9]*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @broadcast_vector
// CHECK-SAME: (%[[A:.*]]: tensor<?x4xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[D0:.*]] = tensor.dim %[[A]], %[[C0]] : tensor<?x4xf32>
// CHECK: %[[E:.*]] = tensor.empty(%[[D0]]) : tensor<?x4xf32>
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$LAST]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<?x4xf32>, tensor<4xf32>) outs(%[[E]] : tensor<?x4xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK: return %[[R]]
// CHECK-NOT: tfc.
func.func @broadcast_vector(%a: tensor<?x4xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %0 = tfc.add %a, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Both operands broadcast, in different dims: [?, 1, ?] * [?, 5, 1]. The
// static 1s read index 0; the dynamic result sizes come from the lhs.
// CHECK-DAG: #[[$LHS:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, 0, d2)>
// CHECK-DAG: #[[$RHS:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
// CHECK-DAG: #[[$ID3:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func @broadcast_both
// CHECK-SAME: (%[[A:.*]]: tensor<?x1x?xf32>, %[[B:.*]]: tensor<?x5x1xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[D0:.*]] = tensor.dim %[[A]], %[[C0]]
// CHECK-DAG: %[[D2:.*]] = tensor.dim %[[A]], %[[C2]]
// CHECK: %[[E:.*]] = tensor.empty(%[[D0]], %[[D2]]) : tensor<?x5x?xf32>
// CHECK: linalg.generic {indexing_maps = [#[[$LHS]], #[[$RHS]], #[[$ID3]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<?x1x?xf32>, tensor<?x5x1xf32>) outs(%[[E]] : tensor<?x5x?xf32>)
// CHECK: arith.mulf
// CHECK-NOT: tfc.
func.func @broadcast_both(%a: tensor<?x1x?xf32>, %b: tensor<?x5x1xf32>) -> tensor<?x5x?xf32> {
  %0 = tfc.mul %a, %b : (tensor<?x1x?xf32>, tensor<?x5x1xf32>) -> tensor<?x5x?xf32>
  return %0 : tensor<?x5x?xf32>
}

// -----

// The other binary ops, with a rank-0 operand on either side.
// CHECK-DAG: #[[$ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$SCALAR:map[0-9]*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func @binary_ops
// CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$SCALAR]], #[[$ID]]]
// CHECK: arith.subf
// CHECK: linalg.generic {indexing_maps = [#[[$SCALAR]], #[[$ID]], #[[$ID]]]
// CHECK-SAME: ins(%arg1, %arg0 : tensor<f32>, tensor<2x8xf32>)
// CHECK: arith.divf
// CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$ID]], #[[$ID]]]
// CHECK: arith.maximumf
// CHECK: linalg.generic
// CHECK: arith.minimumf
// CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$SCALAR]], #[[$ID]]]
// CHECK: math.powf
// CHECK-NOT: tfc.
func.func @binary_ops(%a: tensor<2x8xf32>, %s: tensor<f32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %0 = tfc.sub %a, %s : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %1 = tfc.div %s, %a : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = tfc.max %a, %a : tensor<2x8xf32>
  %3 = tfc.min %a, %a : tensor<2x8xf32>
  %4 = tfc.pow %a, %s : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  return %0, %1, %2, %3, %4 : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// Unary ops map to math/arith ops of the element type (f64 here).
// CHECK-DAG: #[[$ID1:map[0-9]*]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func @unary_ops
// CHECK-SAME: (%[[A:.*]]: tensor<?xf64>)
// CHECK: tensor.empty(%{{.*}}) : tensor<?xf64>
// CHECK: linalg.generic {indexing_maps = [#[[$ID1]], #[[$ID1]]], iterator_types = ["parallel"]} ins(%[[A]] : tensor<?xf64>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f64, %{{.*}}: f64):
// CHECK-NEXT: math.exp %[[X]] : f64
// CHECK: ^bb0(%[[X0:.*]]: f64, %{{.*}}: f64):
// CHECK-NEXT: math.log %[[X0]] : f64
// CHECK: ^bb0(%[[X1:.*]]: f64, %{{.*}}: f64):
// CHECK-NEXT: math.sqrt %[[X1]] : f64
// CHECK: ^bb0(%[[X2:.*]]: f64, %{{.*}}: f64):
// CHECK-NEXT: math.rsqrt %[[X2]] : f64
// CHECK: ^bb0(%[[X3:.*]]: f64, %{{.*}}: f64):
// CHECK-NEXT: math.tanh %[[X3]] : f64
// CHECK: ^bb0(%[[X4:.*]]: f64, %{{.*}}: f64):
// CHECK-NEXT: math.erf %[[X4]] : f64
// CHECK: ^bb0(%[[X5:.*]]: f64, %{{.*}}: f64):
// CHECK-NEXT: arith.negf %[[X5]] : f64
// CHECK-NOT: tfc.
func.func @unary_ops(%a: tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>) {
  %0 = tfc.exp %a : tensor<?xf64>
  %1 = tfc.log %a : tensor<?xf64>
  %2 = tfc.sqrt %a : tensor<?xf64>
  %3 = tfc.rsqrt %a : tensor<?xf64>
  %4 = tfc.tanh %a : tensor<?xf64>
  %5 = tfc.erf %a : tensor<?xf64>
  %6 = tfc.neg %a : tensor<?xf64>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>
}

// -----

// GELU with erf: 0.5 x (1 + erf(x / sqrt 2)).
// CHECK-LABEL: func @gelu_erf
// CHECK-DAG: %[[RSQRT2:.*]] = arith.constant 0.707106769 : f32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[S:.*]] = arith.mulf %[[X]], %[[RSQRT2]] : f32
// CHECK-NEXT: %[[E:.*]] = math.erf %[[S]] : f32
// CHECK-NEXT: %[[P:.*]] = arith.addf %[[E]], %[[ONE]] : f32
// CHECK-NEXT: %[[H:.*]] = arith.mulf %[[X]], %[[HALF]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[H]], %[[P]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK-NOT: math.tanh
func.func @gelu_erf(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = tfc.gelu erf %a : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// GELU with tanh: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
// CHECK-LABEL: func @gelu_tanh
// CHECK-DAG: %[[K:.*]] = arith.constant 0.797884583 : f32
// CHECK-DAG: %[[C:.*]] = arith.constant 4.471500e-02 : f32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[X2:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK-NEXT: %[[X3:.*]] = arith.mulf %[[X2]], %[[X]] : f32
// CHECK-NEXT: %[[CX3:.*]] = arith.mulf %[[X3]], %[[C]] : f32
// CHECK-NEXT: %[[IN:.*]] = arith.addf %[[X]], %[[CX3]] : f32
// CHECK-NEXT: %[[ARG:.*]] = arith.mulf %[[IN]], %[[K]] : f32
// CHECK-NEXT: %[[T:.*]] = math.tanh %[[ARG]] : f32
// CHECK-NEXT: %[[P:.*]] = arith.addf %[[T]], %[[ONE]] : f32
// CHECK-NEXT: %[[H:.*]] = arith.mulf %[[X]], %[[HALF]] : f32
// CHECK-NEXT: arith.mulf %[[H]], %[[P]] : f32
// CHECK-NOT: math.erf
func.func @gelu_tanh(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = tfc.gelu tanh %a : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// SiLU: x / (1 + exp(-x)); ReLU: max(x, 0).
// CHECK-LABEL: func @silu_relu
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[N:.*]] = arith.negf %[[X]] : f32
// CHECK-NEXT: %[[E:.*]] = math.exp %[[N]] : f32
// CHECK-NEXT: %[[D:.*]] = arith.addf %[[E]], %[[ONE]] : f32
// CHECK-NEXT: %[[Q:.*]] = arith.divf %[[X]], %[[D]] : f32
// CHECK-NEXT: linalg.yield %[[Q]] : f32
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[M:.*]] = arith.maximumf %[[Y]], %[[ZERO]] : f32
// CHECK-NEXT: linalg.yield %[[M]] : f32
// CHECK-NOT: tfc.
func.func @silu_relu(%a: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %0 = tfc.silu %a : tensor<?x8xf32>
  %1 = tfc.relu %a : tensor<?x8xf32>
  return %0, %1 : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// where(keep [?, 1, 1, ?], scores [?, 2, ?, ?], fill []) is a select over
// three broadcast operands; each dynamic size comes from an operand that has
// it dynamic.
// CHECK-DAG: #[[$COND:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>
// CHECK-DAG: #[[$ID4:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$FILL:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> ()>
// CHECK-LABEL: func @where
// CHECK-SAME: (%[[C:.*]]: tensor<?x1x1x?xi1>, %[[S:.*]]: tensor<?x2x?x?xf32>, %[[F:.*]]: tensor<f32>)
// CHECK-DAG: %[[D0:.*]] = tensor.dim %[[C]], %c0
// CHECK-DAG: %[[D2:.*]] = tensor.dim %[[S]], %c2
// CHECK-DAG: %[[D3:.*]] = tensor.dim %[[C]], %c3
// CHECK: %[[E:.*]] = tensor.empty(%[[D0]], %[[D2]], %[[D3]]) : tensor<?x2x?x?xf32>
// CHECK: linalg.generic {indexing_maps = [#[[$COND]], #[[$ID4]], #[[$FILL]], #[[$ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[C]], %[[S]], %[[F]] : tensor<?x1x1x?xi1>, tensor<?x2x?x?xf32>, tensor<f32>) outs(%[[E]] : tensor<?x2x?x?xf32>)
// CHECK-NEXT: ^bb0(%[[K:.*]]: i1, %[[T:.*]]: f32, %[[V:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.select %[[K]], %[[T]], %[[V]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @where(%c: tensor<?x1x1x?xi1>, %s: tensor<?x2x?x?xf32>, %f: tensor<f32>) -> tensor<?x2x?x?xf32> {
  %0 = tfc.where %c, %s, %f : (tensor<?x1x1x?xi1>, tensor<?x2x?x?xf32>, tensor<f32>) -> tensor<?x2x?x?xf32>
  return %0 : tensor<?x2x?x?xf32>
}

// -----

// Casts to and from i1: true is 1 (unsigned), and "to i1" means non-zero.
// CHECK-LABEL: func @cast_bool
// CHECK-DAG: %[[FZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[IZERO:.*]] = arith.constant 0 : i64
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[A:.*]]: i1, %{{.*}}: f32):
// CHECK-NEXT: arith.uitofp %[[A]] : i1 to f32
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[B:.*]]: f32, %{{.*}}: i1):
// CHECK-NEXT: arith.cmpf une, %[[B]], %[[FZERO]] : f32
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[C:.*]]: i64, %{{.*}}: i1):
// CHECK-NEXT: arith.cmpi ne, %[[C]], %[[IZERO]] : i64
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[D:.*]]: i1, %{{.*}}: i64):
// CHECK-NEXT: arith.extui %[[D]] : i1 to i64
// CHECK-NOT: tfc.cast
func.func @cast_bool(%b: tensor<4xi1>, %f: tensor<4xf32>, %i: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xi1>, tensor<4xi1>, tensor<4xi64>) {
  %0 = tfc.cast %b : tensor<4xi1> to tensor<4xf32>
  %1 = tfc.cast %f : tensor<4xf32> to tensor<4xi1>
  %2 = tfc.cast %i : tensor<4xi64> to tensor<4xi1>
  %3 = tfc.cast %b : tensor<4xi1> to tensor<4xi64>
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<4xi1>, tensor<4xi1>, tensor<4xi64>
}

// -----

// Casts between the other types: signed integers, truncation toward zero.
// CHECK-LABEL: func @cast_numbers
// CHECK: arith.sitofp %{{.*}} : i64 to f32
// CHECK: arith.fptosi %{{.*}} : f32 to i64
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.trunci %{{.*}} : i64 to i32
// CHECK: arith.extsi %{{.*}} : i32 to i64
// CHECK-NOT: tfc.cast
func.func @cast_numbers(%f: tensor<4xf32>, %h: tensor<4xf16>, %i: tensor<4xi64>, %j: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi64>, tensor<4xf16>, tensor<4xf32>, tensor<4xi32>, tensor<4xi64>) {
  %0 = tfc.cast %i : tensor<4xi64> to tensor<4xf32>
  %1 = tfc.cast %f : tensor<4xf32> to tensor<4xi64>
  %2 = tfc.cast %f : tensor<4xf32> to tensor<4xf16>
  %3 = tfc.cast %h : tensor<4xf16> to tensor<4xf32>
  %4 = tfc.cast %i : tensor<4xi64> to tensor<4xi32>
  %5 = tfc.cast %j : tensor<4xi32> to tensor<4xi64>
  return %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xi64>, tensor<4xf16>, tensor<4xf32>, tensor<4xi32>, tensor<4xi64>
}

// -----

// f16 <-> bf16 (XFAIL-notes.md #4): through f32.
// CHECK-LABEL: func.func @f16_to_bf16
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @f16_to_bf16(%a: tensor<3xf16>) -> tensor<3xbf16> {
  %0 = tfc.cast %a : tensor<3xf16> to tensor<3xbf16>
  return %0 : tensor<3xbf16>
}
