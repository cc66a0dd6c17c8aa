// tfc-kernel-fold-transposed-operands on readers other than attention: a
// head split folds into whatever only reads it through memref indexing (a
// generic's input and the loads in its body, as rotary embeddings read
// their input at two positions; the source of a copy into a KV cache). A
// writer of the split, or of its source before the last reader, keeps the
// copy.
// RUN: tfc-opt %s -split-input-file --tfc-kernel-fold-transposed-operands | FileCheck %s

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// Rotary embedding on the split queries: the generic reads the source
// through the view, its input and its loads alike.
// CHECK-LABEL: func @rope
// CHECK-NOT: linalg.transpose
// CHECK: %[[T:.*]] = memref.transpose %{{.*}} (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<1x5x2x8xf32, strided<[160, 32, 8, 1]>> to memref<1x2x5x8xf32, strided<[160, 8, 32, 1]>>
// CHECK: linalg.generic {{.*}} ins(%[[T]] : memref<1x2x5x8xf32, strided<[160, 8, 32, 1]>>)
// CHECK: memref.load %[[T]]
func.func @rope(%out: memref<1x2x5x8xf32>) {
  %qkv = memref.alloc() {alignment = 64 : i64} : memref<1x5x32xf32>
  %s = memref.subview %qkv[0, 0, 0] [1, 5, 16] [1, 1, 1] : memref<1x5x32xf32> to memref<1x5x16xf32, strided<[160, 32, 1]>>
  %e = memref.expand_shape %s [[0], [1], [2, 3]] output_shape [1, 5, 2, 8] : memref<1x5x16xf32, strided<[160, 32, 1]>> into memref<1x5x2x8xf32, strided<[160, 32, 8, 1]>>
  %q = memref.alloc() {alignment = 64 : i64} : memref<1x2x5x8xf32>
  linalg.transpose ins(%e : memref<1x5x2x8xf32, strided<[160, 32, 8, 1]>>) outs(%q : memref<1x2x5x8xf32>) permutation = [0, 2, 1, 3]
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%q : memref<1x2x5x8xf32>) outs(%out : memref<1x2x5x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %j = arith.addi %i3, %c4 : index
    %jj = arith.remui %j, %c8 : index
    %other = memref.load %q[%i0, %i1, %i2, %jj] : memref<1x2x5x8xf32>
    %r = arith.subf %in, %other : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// The split values go straight from the projection into the KV cache.
// CHECK-LABEL: func @cache_write
// CHECK-NOT: linalg.transpose
// CHECK: %[[T:.*]] = memref.transpose
// CHECK: memref.copy %[[T]], %{{.*}} : memref<1x2x5x8xf32, strided<[160, 8, 32, 1], offset: 16>> to memref<1x2x5x8xf32, strided<[?, ?, 8, 1], offset: ?>>
func.func @cache_write(%cache: memref<1x2x?x8xf32>, %at: index) {
  %qkv = memref.alloc() {alignment = 64 : i64} : memref<1x5x32xf32>
  %s = memref.subview %qkv[0, 0, 16] [1, 5, 16] [1, 1, 1] : memref<1x5x32xf32> to memref<1x5x16xf32, strided<[160, 32, 1], offset: 16>>
  %e = memref.expand_shape %s [[0], [1], [2, 3]] output_shape [1, 5, 2, 8] : memref<1x5x16xf32, strided<[160, 32, 1], offset: 16>> into memref<1x5x2x8xf32, strided<[160, 32, 8, 1], offset: 16>>
  %v = memref.alloc() {alignment = 64 : i64} : memref<1x2x5x8xf32>
  linalg.transpose ins(%e : memref<1x5x2x8xf32, strided<[160, 32, 8, 1], offset: 16>>) outs(%v : memref<1x2x5x8xf32>) permutation = [0, 2, 1, 3]
  %slot = memref.subview %cache[0, 0, %at, 0] [1, 2, 5, 8] [1, 1, 1, 1] : memref<1x2x?x8xf32> to memref<1x2x5x8xf32, strided<[?, ?, 8, 1], offset: ?>>
  memref.copy %v, %slot : memref<1x2x5x8xf32> to memref<1x2x5x8xf32, strided<[?, ?, 8, 1], offset: ?>>
  return
}

// -----

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// A generic that writes the split (its output) keeps the copy, and so does
// one that reads it after the source was overwritten.
// CHECK-LABEL: func @writers
// CHECK-COUNT-2: linalg.transpose
func.func @writers(%out: memref<1x2x5x8xf32>) {
  %src = memref.alloc() {alignment = 64 : i64} : memref<1x5x2x8xf32>
  %a = memref.alloc() {alignment = 64 : i64} : memref<1x2x5x8xf32>
  linalg.transpose ins(%src : memref<1x5x2x8xf32>) outs(%a : memref<1x2x5x8xf32>) permutation = [0, 2, 1, 3]
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%a : memref<1x2x5x8xf32>) {
  ^bb0(%o: f32):
    %r = arith.addf %o, %o : f32
    linalg.yield %r : f32
  }
  %b = memref.alloc() {alignment = 64 : i64} : memref<1x2x5x8xf32>
  linalg.transpose ins(%src : memref<1x5x2x8xf32>) outs(%b : memref<1x2x5x8xf32>) permutation = [0, 2, 1, 3]
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%src : memref<1x5x2x8xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : memref<1x2x5x8xf32>) outs(%out : memref<1x2x5x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

// Sizes read from a folded buffer (shape resolution makes them: the sizes
// of the merged heads read back from attention's output) are read from the
// view: the head merge still folds.
// CHECK-LABEL: func @merge_sizes
// CHECK-NOT: linalg.transpose
// CHECK: %[[Y:.*]] = memref.alloc(%{{.*}}, %{{.*}}) {alignment = 64 : i64} : memref<?x?x4x8xf32>
// CHECK-NEXT: %[[V:.*]] = memref.transpose %[[Y]]
// CHECK-NEXT: tfc_kernel.attention {{.*}} outs(%[[V]])
// CHECK: memref.dim %[[V]], %c2
func.func @merge_sizes(%q: memref<?x4x?x8xf32>, %b: index, %t: index) -> (memref<?x?x32xf32>, index) {
  %c2 = arith.constant 2 : index
  %x = memref.alloc(%b, %t) {alignment = 64 : i64} : memref<?x4x?x8xf32>
  tfc_kernel.attention %q, %q, %q outs(%x) {scale = 0.125} : (memref<?x4x?x8xf32>, memref<?x4x?x8xf32>, memref<?x4x?x8xf32>, memref<?x4x?x8xf32>) -> ()
  %y = memref.alloc(%b, %t) {alignment = 64 : i64} : memref<?x?x4x8xf32>
  linalg.transpose ins(%x : memref<?x4x?x8xf32>) outs(%y : memref<?x?x4x8xf32>) permutation = [0, 2, 1, 3]
  %n = memref.dim %x, %c2 : memref<?x4x?x8xf32>
  %m = memref.collapse_shape %y [[0], [1], [2, 3]] : memref<?x?x4x8xf32> into memref<?x?x32xf32>
  return %m, %n : memref<?x?x32xf32>, index
}
