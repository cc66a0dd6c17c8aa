// Reductions, argmax and softmax over a non-last axis (Reductions.cpp): a
// reduction is a linalg.generic whose reduced axis is the one "reduction"
// iterator, accumulating into a linalg.fill'ed tensor without that axis;
// keepdim re-inserts the unit axis with tensor.expand_shape. A last-axis
// softmax is a kernel op and stays for the target.
// RUN: tfc-opt %s -split-input-file --convert-tfc-to-linalg | FileCheck %s

// Sum over the last axis, keepdim: [?, ?, 8] -> [?, ?] -> [?, ?, 1].
// CHECK-DAG: #[[$IN:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$OUT:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func @sum_keepdim
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x8xf32>)
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x?xf32>
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<?x?xf32>) -> tensor<?x?xf32>
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[X]] : tensor<?x?x8xf32>) outs(%[[INIT]] : tensor<?x?xf32>)
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[A:.*]] = arith.addf %[[V]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[A]] : f32
// CHECK: %[[K:.*]] = tensor.expand_shape %[[SUM]] {{\[}}[0], [1, 2]] output_shape [%{{.*}}, %{{.*}}, 1] : tensor<?x?xf32> into tensor<?x?x1xf32>
// CHECK: return %[[K]]
func.func @sum_keepdim(%x: tensor<?x?x8xf32>) -> tensor<?x?x1xf32> {
  %0 = tfc.reduce_sum %x {axis = 2, keepdim} : tensor<?x?x8xf32> -> tensor<?x?x1xf32>
  return %0 : tensor<?x?x1xf32>
}

// -----

// Sum over a middle axis without keepdim: no reshape.
// CHECK-DAG: #[[$OUT:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func @sum_middle
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[$OUT]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME: outs(%{{.*}} : tensor<?x8xf32>)
// CHECK: arith.addf
// CHECK-NOT: tensor.expand_shape
// CHECK: return %{{.*}} : tensor<?x8xf32>
func.func @sum_middle(%x: tensor<?x?x8xf32>) -> tensor<?x8xf32> {
  %0 = tfc.reduce_sum %x {axis = 1} : tensor<?x?x8xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// Max starts from -inf; keepdim over a middle axis puts the unit axis in the
// group of its right neighbour.
// CHECK-DAG: #[[$OUT:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func @max_keepdim
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.*}} : tensor<?x8xf32>)
// CHECK: %[[M:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[$OUT]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME: outs(%[[INIT]] : tensor<?x8xf32>)
// CHECK: arith.maximumf
// CHECK: tensor.expand_shape %[[M]] {{\[}}[0], [1, 2]] output_shape [%{{.*}}, 1, 8] : tensor<?x8xf32> into tensor<?x1x8xf32>
func.func @max_keepdim(%x: tensor<?x?x8xf32>) -> tensor<?x1x8xf32> {
  %0 = tfc.reduce_max %x {axis = 1, keepdim} : tensor<?x?x8xf32> -> tensor<?x1x8xf32>
  return %0 : tensor<?x1x8xf32>
}

// -----

// Max over the last axis without keepdim.
// CHECK-LABEL: func @max_last
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK-SAME: outs(%{{.*}} : tensor<?xf32>)
// CHECK: arith.maximumf
// CHECK-NOT: tensor.expand_shape
func.func @max_last(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %0 = tfc.reduce_max %x {axis = 1} : tensor<?x?xf32> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// Mean: the sum, then a division by the axis size (a constant when static).
// CHECK-LABEL: func @mean_static_axis
// CHECK-DAG: %[[N:.*]] = arith.constant 8.000000e+00 : f32
// CHECK: %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: arith.addf
// CHECK: %[[Q:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[S]] : tensor<?xf32>)
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.divf %[[V]], %[[N]] : f32
// CHECK: tensor.expand_shape %[[Q]] {{\[}}[0, 1]] output_shape [%{{.*}}, 1] : tensor<?xf32> into tensor<?x1xf32>
func.func @mean_static_axis(%x: tensor<?x8xf32>) -> tensor<?x1xf32> {
  %0 = tfc.reduce_mean %x {axis = 1, keepdim} : tensor<?x8xf32> -> tensor<?x1xf32>
  return %0 : tensor<?x1xf32>
}

// -----

// Mean over a dynamic axis: the count is the tensor.dim, converted to float.
// CHECK-LABEL: func @mean_dynamic_axis
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK-SAME: outs(%{{.*}} : tensor<8xf32>)
// CHECK: %[[D:.*]] = tensor.dim %[[X]], %c0
// CHECK: %[[DI:.*]] = arith.index_cast %[[D]] : index to i64
// CHECK: %[[DF:.*]] = arith.sitofp %[[DI]] : i64 to f32
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.divf %[[V]], %[[DF]] : f32
// CHECK-NOT: tensor.expand_shape
func.func @mean_dynamic_axis(%x: tensor<?x8xf32>) -> tensor<8xf32> {
  %0 = tfc.reduce_mean %x {axis = 0} : tensor<?x8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// A rank-1 reduction: into a rank-0 tensor, and with keepdim into [1].
// CHECK-DAG: #[[$ALL:map[0-9]*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func @sum_to_scalar
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[$ALL]]], iterator_types = ["reduction"]}
// CHECK-SAME: outs(%{{.*}} : tensor<f32>)
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[$ALL]]], iterator_types = ["reduction"]}
// CHECK: tensor.expand_shape %[[S]] [] output_shape [1] : tensor<f32> into tensor<1xf32>
func.func @sum_to_scalar(%x: tensor<8xf32>) -> (tensor<f32>, tensor<1xf32>) {
  %0 = tfc.reduce_sum %x {axis = 0} : tensor<8xf32> -> tensor<f32>
  %1 = tfc.reduce_sum %x {axis = 0, keepdim} : tensor<8xf32> -> tensor<1xf32>
  return %0, %1 : tensor<f32>, tensor<1xf32>
}

// -----

// argmax: one generic with two accumulators (the best value from -inf, its
// index from 0); an element replaces them when it is greater, or when it is
// the first one along the axis.
// CHECK-DAG: #[[$IN:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$OUT:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func @argmax_last
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[VALS:.*]] = linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.*}} : tensor<?x?xf32>)
// CHECK-DAG: %[[IDXS:.*]] = linalg.fill ins(%[[ZERO]] : i64) outs(%{{.*}} : tensor<?x?xi64>)
// CHECK: %[[R:.*]]:2 = linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: outs(%[[VALS]], %[[IDXS]] : tensor<?x?xf32>, tensor<?x?xi64>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[BEST:.*]]: f32, %[[BESTI:.*]]: i64):
// CHECK-NEXT: %[[I:.*]] = linalg.index 2 : index
// CHECK-NEXT: %[[I64:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK-NEXT: %[[GT:.*]] = arith.cmpf ogt, %[[X]], %[[BEST]] : f32
// CHECK-NEXT: %[[FIRST:.*]] = arith.cmpi eq, %[[I]], %[[C0]] : index
// CHECK-NEXT: %[[TAKE:.*]] = arith.ori %[[GT]], %[[FIRST]] : i1
// CHECK-NEXT: %[[NV:.*]] = arith.select %[[TAKE]], %[[X]], %[[BEST]] : f32
// CHECK-NEXT: %[[NI:.*]] = arith.select %[[TAKE]], %[[I64]], %[[BESTI]] : i64
// CHECK-NEXT: linalg.yield %[[NV]], %[[NI]] : f32, i64
// CHECK: return %[[R]]#1 : tensor<?x?xi64>
func.func @argmax_last(%x: tensor<?x?x8xf32>) -> tensor<?x?xi64> {
  %0 = tfc.argmax %x {axis = 2} : tensor<?x?x8xf32> -> tensor<?x?xi64>
  return %0 : tensor<?x?xi64>
}

// -----

// argmax over the first axis with keepdim: the index is linalg.index 0 and
// the unit axis goes back in front.
// CHECK-DAG: #[[$OUT:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func @argmax_first_keepdim
// CHECK: %[[R:.*]]:2 = linalg.generic {indexing_maps = [#{{.*}}, #[[$OUT]], #[[$OUT]]], iterator_types = ["reduction", "parallel", "parallel"]}
// CHECK: linalg.index 0 : index
// CHECK: tensor.expand_shape %[[R]]#1 {{\[}}[0, 1], [2]] output_shape [1, %{{.*}}, 8] : tensor<?x8xi64> into tensor<1x?x8xi64>
func.func @argmax_first_keepdim(%x: tensor<?x?x8xf32>) -> tensor<1x?x8xi64> {
  %0 = tfc.argmax %x {axis = 0, keepdim} : tensor<?x?x8xf32> -> tensor<1x?x8xi64>
  return %0 : tensor<1x?x8xi64>
}

// -----

// Softmax over axis 1 of 3: max over the axis, exp(x - max) (a max of -inf
// subtracts 0 instead), sum over the axis, divide (a zero sum gives 0).
// CHECK-DAG: #[[$ID:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$RED:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func @softmax_middle_axis
// CHECK-SAME: (%[[X:.*]]: tensor<?x4x8xf32>)
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[MAXINIT:.*]] = linalg.fill ins(%[[NEGINF]] : f32)
// CHECK: %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$RED]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[X]] : tensor<?x4x8xf32>) outs(%[[MAXINIT]] : tensor<?x8xf32>)
// CHECK: arith.maximumf
// CHECK: %[[EXP:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$RED]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[MAX]] : tensor<?x4x8xf32>, tensor<?x8xf32>)
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %[[M:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[ISINF:.*]] = arith.cmpf oeq, %[[M]], %[[NEGINF]] : f32
// CHECK-NEXT: %[[SAFE:.*]] = arith.select %[[ISINF]], %[[ZERO]], %[[M]] : f32
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[V]], %[[SAFE]] : f32
// CHECK-NEXT: math.exp %[[D]] : f32
// CHECK: %[[SUMINIT:.*]] = linalg.fill ins(%[[ZERO]] : f32)
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$RED]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[EXP]] : tensor<?x4x8xf32>) outs(%[[SUMINIT]] : tensor<?x8xf32>)
// CHECK: arith.addf
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$RED]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[EXP]], %[[SUM]] : tensor<?x4x8xf32>, tensor<?x8xf32>)
// CHECK-NEXT: ^bb0(%[[E:.*]]: f32, %[[S:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[ISZERO:.*]] = arith.cmpf oeq, %[[S]], %[[ZERO]] : f32
// CHECK-NEXT: %[[Q:.*]] = arith.divf %[[E]], %[[S]] : f32
// CHECK-NEXT: arith.select %[[ISZERO]], %[[ZERO]], %[[Q]] : f32
// CHECK: return %[[R]]
// CHECK-NOT: tfc.softmax
func.func @softmax_middle_axis(%x: tensor<?x4x8xf32>) -> tensor<?x4x8xf32> {
  %0 = tfc.softmax %x {axis = 1} : tensor<?x4x8xf32>
  return %0 : tensor<?x4x8xf32>
}

// -----

// Softmax over the last axis is a kernel op: left for the target, and the
// ops around it are still lowered.
// CHECK-LABEL: func @softmax_last_axis
// CHECK-SAME: (%[[X:.*]]: tensor<?x4x8xf32>)
// CHECK-NOT: linalg.generic
// CHECK: %[[S:.*]] = tfc.softmax %[[X]] {axis = 2 : i64} : tensor<?x4x8xf32>
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[S]], %[[S]] :
// CHECK: arith.addf
// CHECK-NOT: tfc.add
func.func @softmax_last_axis(%x: tensor<?x4x8xf32>) -> tensor<?x4x8xf32> {
  %0 = tfc.softmax %x {axis = 2} : tensor<?x4x8xf32>
  %1 = tfc.add %0, %0 : tensor<?x4x8xf32>
  return %1 : tensor<?x4x8xf32>
}
