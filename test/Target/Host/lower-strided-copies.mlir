// --tfc-lower-strided-copies (LowerStridedCopies.cpp): a memref.copy with a
// non-identity-layout source or target becomes linalg.copy (lowered to
// loops later, instead of a call of the runner utilities' memrefCopy); a copy
// between identity layouts stays a memref.copy (a memcpy).
// RUN: tfc-opt %s -split-input-file --tfc-lower-strided-copies | FileCheck %s

// CHECK-LABEL: func @strided_source
// CHECK-SAME: (%[[SRC:.*]]: memref<8x16xf32>, %[[DST:.*]]: memref<8x4xf32>)
// CHECK: %[[SV:.*]] = memref.subview %[[SRC]][0, 4] [8, 4] [1, 1]
// CHECK-NEXT: linalg.copy ins(%[[SV]] : memref<8x4xf32, strided<[16, 1], offset: 4>>) outs(%[[DST]] : memref<8x4xf32>)
// CHECK-NOT: memref.copy
func.func @strided_source(%src: memref<8x16xf32>, %dst: memref<8x4xf32>) {
  %sv = memref.subview %src[0, 4] [8, 4] [1, 1] : memref<8x16xf32> to memref<8x4xf32, strided<[16, 1], offset: 4>>
  memref.copy %sv, %dst : memref<8x4xf32, strided<[16, 1], offset: 4>> to memref<8x4xf32>
  return
}

// -----

// CHECK-LABEL: func @strided_target
// CHECK-SAME: (%[[SRC:.*]]: memref<?xf32>, %[[DST:.*]]: memref<?x4xf32>)
// CHECK: %[[SV:.*]] = memref.subview %[[DST]]
// CHECK-NEXT: linalg.copy ins(%[[SRC]] : memref<?xf32>) outs(%[[SV]] : memref<?xf32, strided<[4], offset: 1>>)
// CHECK-NOT: memref.copy
func.func @strided_target(%src: memref<?xf32>, %dst: memref<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %dst, %c0 : memref<?x4xf32>
  %sv = memref.subview %dst[0, 1] [%n, 1] [1, 1] : memref<?x4xf32> to memref<?xf32, strided<[4], offset: 1>>
  memref.copy %src, %sv : memref<?xf32> to memref<?xf32, strided<[4], offset: 1>>
  return
}

// -----

// CHECK-LABEL: func @identity
// CHECK-SAME: (%[[SRC:.*]]: memref<?x4xf32>, %[[DST:.*]]: memref<?x4xf32>)
// CHECK-NEXT: memref.copy %[[SRC]], %[[DST]] : memref<?x4xf32> to memref<?x4xf32>
// CHECK-NOT: linalg.copy
func.func @identity(%src: memref<?x4xf32>, %dst: memref<?x4xf32>) {
  memref.copy %src, %dst : memref<?x4xf32> to memref<?x4xf32>
  return
}
