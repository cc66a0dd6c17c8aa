// Layout ops (DataMovement.cpp): transposes become linalg.transpose into a
// tensor.empty of the permuted sizes; reshapes a collapse (into rank 1), an
// expand (from rank 1, at most one dynamic size) or else tensor.reshape with
// a shape tensor; slices tensor.extract_slice; concatenation a chain of
// tensor.insert_slice at running offsets; split_heads an expand of the last
// axis plus a transpose, merge_heads a transpose plus a collapse.
// RUN: tfc-opt %s -split-input-file --convert-tfc-to-linalg | FileCheck %s

// CHECK-LABEL: func @transpose
// CHECK-SAME: (%[[X:.*]]: tensor<?x4x8xf32>)
// CHECK: %[[D0:.*]] = tensor.dim %[[X]], %c0 : tensor<?x4x8xf32>
// CHECK: %[[E:.*]] = tensor.empty(%[[D0]]) : tensor<8x?x4xf32>
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[X]] : tensor<?x4x8xf32>) outs(%[[E]] : tensor<8x?x4xf32>) permutation = [2, 0, 1]
// CHECK: return %[[T]]
func.func @transpose(%x: tensor<?x4x8xf32>) -> tensor<8x?x4xf32> {
  %0 = tfc.transpose %x [2, 0, 1] : tensor<?x4x8xf32> -> tensor<8x?x4xf32>
  return %0 : tensor<8x?x4xf32>
}

// -----

// Into rank 1: one collapse group (the size operand is not needed).
// CHECK-LABEL: func @reshape_collapse
// CHECK-SAME: (%[[X:.*]]: tensor<?x4x8xf32>, %{{.*}}: index)
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2]] : tensor<?x4x8xf32> into tensor<?xf32>
// CHECK: return %[[C]]
// CHECK-NOT: tensor.reshape
func.func @reshape_collapse(%x: tensor<?x4x8xf32>, %n: index) -> tensor<?xf32> {
  %0 = tfc.reshape %x [%n] : tensor<?x4x8xf32> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// From rank 1 with one dynamic size: an expand with the given size.
// CHECK-LABEL: func @reshape_expand
// CHECK-SAME: (%[[X:.*]]: tensor<?xf32>, %[[N:.*]]: index)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[X]] {{\[}}[0, 1, 2]] output_shape [%[[N]], 4, 8] : tensor<?xf32> into tensor<?x4x8xf32>
// CHECK: return %[[E]]
func.func @reshape_expand(%x: tensor<?xf32>, %n: index) -> tensor<?x4x8xf32> {
  %0 = tfc.reshape %x [%n] : tensor<?xf32> -> tensor<?x4x8xf32>
  return %0 : tensor<?x4x8xf32>
}

// -----

// Several dynamic sizes (an expand group may have only one): tensor.reshape
// with the sizes, static and dynamic, as an i64 shape tensor.
// CHECK-LABEL: func @reshape_general
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x768xf32>, %[[B:.*]]: index, %[[T:.*]]: index)
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : i64
// CHECK-DAG: %[[C12:.*]] = arith.constant 12 : i64
// CHECK-DAG: %[[BI:.*]] = arith.index_cast %[[B]] : index to i64
// CHECK-DAG: %[[TI:.*]] = arith.index_cast %[[T]] : index to i64
// CHECK: %[[SHAPE:.*]] = tensor.from_elements %[[BI]], %[[TI]], %[[C12]], %[[C64]] : tensor<4xi64>
// CHECK: %[[R:.*]] = tensor.reshape %[[X]](%[[SHAPE]]) : (tensor<?x?x768xf32>, tensor<4xi64>) -> tensor<?x?x12x64xf32>
// CHECK: return %[[R]]
// CHECK-NOT: tensor.expand_shape
func.func @reshape_general(%x: tensor<?x?x768xf32>, %b: index, %t: index) -> tensor<?x?x12x64xf32> {
  %0 = tfc.reshape %x [%b, %t] : tensor<?x?x768xf32> -> tensor<?x?x12x64xf32>
  return %0 : tensor<?x?x12x64xf32>
}

// -----

// CHECK-LABEL: func @slice
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x2304xf32>)
// CHECK-DAG: %[[D0:.*]] = tensor.dim %[[X]], %c0
// CHECK-DAG: %[[D1:.*]] = tensor.dim %[[X]], %c1
// CHECK: %[[S:.*]] = tensor.extract_slice %[[X]][0, 0, 768] [%[[D0]], %[[D1]], 768] [1, 1, 1] : tensor<?x?x2304xf32> to tensor<?x?x768xf32>
// CHECK: return %[[S]]
func.func @slice(%x: tensor<?x?x2304xf32>) -> tensor<?x?x768xf32> {
  %0 = tfc.slice %x {axis = 2, start = 768, size = 768} : tensor<?x?x2304xf32> -> tensor<?x?x768xf32>
  return %0 : tensor<?x?x768xf32>
}

// -----

// From the end: the offset is the axis' size less start + size (the last
// position of a sequence of any length).
// CHECK-LABEL: func @slice_from_end
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x64xf32>)
// CHECK-DAG: %[[D0:.*]] = tensor.dim %[[X]], %c0
// CHECK-DAG: %[[D1:.*]] = tensor.dim %[[X]], %c1
// CHECK: %[[OFF:.*]] = arith.subi %[[D1]], %c1
// CHECK: %[[S:.*]] = tensor.extract_slice %[[X]][0, %[[OFF]], 0] [%[[D0]], 1, 64] [1, 1, 1] : tensor<?x?x64xf32> to tensor<?x1x64xf32>
// CHECK: return %[[S]]
func.func @slice_from_end(%x: tensor<?x?x64xf32>) -> tensor<?x1x64xf32> {
  %0 = tfc.slice %x {axis = 1, start = 0, size = 1, from_end} : tensor<?x?x64xf32> -> tensor<?x1x64xf32>
  return %0 : tensor<?x1x64xf32>
}

// -----

// Static sizes along the axis: constant offsets.
// CHECK-LABEL: func @concat_static
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<2x8xf32>, %[[C:.*]]: tensor<3x8xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<9x8xf32>
// CHECK: %[[I0:.*]] = tensor.insert_slice %[[A]] into %[[E]][0, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<9x8xf32>
// CHECK: %[[I1:.*]] = tensor.insert_slice %[[B]] into %[[I0]][4, 0] [2, 8] [1, 1] : tensor<2x8xf32> into tensor<9x8xf32>
// CHECK: %[[I2:.*]] = tensor.insert_slice %[[C]] into %[[I1]][6, 0] [3, 8] [1, 1] : tensor<3x8xf32> into tensor<9x8xf32>
// CHECK: return %[[I2]]
func.func @concat_static(%a: tensor<4x8xf32>, %b: tensor<2x8xf32>, %c: tensor<3x8xf32>) -> tensor<9x8xf32> {
  %0 = tfc.concat %a, %b, %c {axis = 0} : (tensor<4x8xf32>, tensor<2x8xf32>, tensor<3x8xf32>) -> tensor<9x8xf32>
  return %0 : tensor<9x8xf32>
}

// -----

// Dynamic sizes along the axis: the second piece starts at the first one's
// size and the result is their sum.
// CHECK-LABEL: func @concat_dynamic
// CHECK-SAME: (%[[A:.*]]: tensor<2x?xf32>, %[[B:.*]]: tensor<2x?xf32>)
// CHECK-DAG: %[[DA:.*]] = tensor.dim %[[A]], %c1
// CHECK-DAG: %[[DB:.*]] = tensor.dim %[[B]], %c1
// CHECK: %[[N:.*]] = arith.addi %[[DA]], %[[DB]] : index
// CHECK: %[[E:.*]] = tensor.empty(%[[N]]) : tensor<2x?xf32>
// CHECK: %[[I0:.*]] = tensor.insert_slice %[[A]] into %[[E]][0, 0] [2, %{{.*}}] [1, 1] : tensor<2x?xf32> into tensor<2x?xf32>
// CHECK: %[[I1:.*]] = tensor.insert_slice %[[B]] into %[[I0]][0, %[[DA]]] [2, %{{.*}}] [1, 1] : tensor<2x?xf32> into tensor<2x?xf32>
// CHECK: return %[[I1]]
func.func @concat_dynamic(%a: tensor<2x?xf32>, %b: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = tfc.concat %a, %b {axis = 1} : (tensor<2x?xf32>, tensor<2x?xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// [B, T, H*D] -> [B, T, H, D] -> [B, H, T, D].
// CHECK-LABEL: func @split_heads
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x768xf32>)
// CHECK-DAG: %[[B:.*]] = tensor.dim %[[X]], %c0
// CHECK-DAG: %[[T:.*]] = tensor.dim %[[X]], %c1
// CHECK: %[[E:.*]] = tensor.expand_shape %[[X]] {{\[}}[0], [1], [2, 3]] output_shape [%[[B]], %[[T]], 12, 64] : tensor<?x?x768xf32> into tensor<?x?x12x64xf32>
// CHECK: %[[INIT:.*]] = tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x12x?x64xf32>
// CHECK: %[[R:.*]] = linalg.transpose ins(%[[E]] : tensor<?x?x12x64xf32>) outs(%[[INIT]] : tensor<?x12x?x64xf32>) permutation = [0, 2, 1, 3]
// CHECK: return %[[R]]
func.func @split_heads(%x: tensor<?x?x768xf32>) -> tensor<?x12x?x64xf32> {
  %h = tfc.split_heads %x {heads = 12} : tensor<?x?x768xf32> -> tensor<?x12x?x64xf32>
  return %h : tensor<?x12x?x64xf32>
}

// -----

// A dynamic feature size: the head size is features / heads.
// CHECK-LABEL: func @split_heads_dynamic_features
// CHECK-SAME: (%[[X:.*]]: tensor<2x?x?xf32>)
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[F:.*]] = tensor.dim %[[X]], %c2
// CHECK: %[[D:.*]] = arith.divui %[[F]], %[[C4]] : index
// CHECK: tensor.expand_shape %[[X]] {{\[}}[0], [1], [2, 3]] output_shape [2, %{{.*}}, 4, %[[D]]] : tensor<2x?x?xf32> into tensor<2x?x4x?xf32>
// CHECK: linalg.transpose {{.*}} permutation = [0, 2, 1, 3]
func.func @split_heads_dynamic_features(%x: tensor<2x?x?xf32>) -> tensor<2x4x?x?xf32> {
  %h = tfc.split_heads %x {heads = 4} : tensor<2x?x?xf32> -> tensor<2x4x?x?xf32>
  return %h : tensor<2x4x?x?xf32>
}

// -----

// [B, H, T, D] -> [B, T, H, D] -> [B, T, H*D].
// CHECK-LABEL: func @merge_heads
// CHECK-SAME: (%[[X:.*]]: tensor<?x12x?x64xf32>)
// CHECK: %[[INIT:.*]] = tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x?x12x64xf32>
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[X]] : tensor<?x12x?x64xf32>) outs(%[[INIT]] : tensor<?x?x12x64xf32>) permutation = [0, 2, 1, 3]
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[T]] {{\[}}[0], [1], [2, 3]] : tensor<?x?x12x64xf32> into tensor<?x?x768xf32>
// CHECK: return %[[C]]
func.func @merge_heads(%h: tensor<?x12x?x64xf32>) -> tensor<?x?x768xf32> {
  %m = tfc.merge_heads %h : tensor<?x12x?x64xf32> -> tensor<?x?x768xf32>
  return %m : tensor<?x?x768xf32>
}
