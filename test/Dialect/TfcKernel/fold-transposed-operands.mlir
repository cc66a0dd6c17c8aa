// tfc-kernel-fold-transposed-operands: a head split that bufferisation
// materialised (linalg.transpose of a view into a fresh allocation) and that
// only attention reads becomes a memref.transpose view; copies something
// else reads, copies whose source may be written before attention reads
// it, and permutations that move the innermost dimension stay.
// RUN: tfc-opt %s -split-input-file --tfc-kernel-fold-transposed-operands | FileCheck %s

// The split of a fused QKV projection: three views, three copies, gone.
// CHECK-LABEL: func @split_qkv
// CHECK-SAME: (%[[QKV:.*]]: memref<2x8x96xf32>
// CHECK-NOT: linalg.transpose
// CHECK-NOT: memref.alloc() {{.*}} : memref<2x4x8x8xf32>
// CHECK: %[[QS:.*]] = memref.subview %[[QKV]][0, 0, 0]
// CHECK: %[[QE:.*]] = memref.expand_shape %[[QS]]
// CHECK: %[[QT:.*]] = memref.transpose %[[QE]] (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<2x8x4x8xf32, strided<[768, 96, 8, 1]>> to memref<2x4x8x8xf32, strided<[768, 8, 96, 1]>>
// CHECK: %[[KT:.*]] = memref.transpose
// CHECK-SAME: to memref<2x4x8x8xf32, strided<[768, 8, 96, 1], offset: 32>>
// CHECK: %[[VT:.*]] = memref.transpose
// CHECK-SAME: to memref<2x4x8x8xf32, strided<[768, 8, 96, 1], offset: 64>>
// CHECK: %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x4x8x8xf32>
// CHECK: tfc_kernel.attention %[[QT]], %[[KT]], %[[VT]] outs(%[[OUT]])
func.func @split_qkv(%qkv: memref<2x8x96xf32>) -> memref<2x4x8x8xf32> {
  %qs = memref.subview %qkv[0, 0, 0] [2, 8, 32] [1, 1, 1] : memref<2x8x96xf32> to memref<2x8x32xf32, strided<[768, 96, 1]>>
  %qe = memref.expand_shape %qs [[0], [1], [2, 3]] output_shape [2, 8, 4, 8] : memref<2x8x32xf32, strided<[768, 96, 1]>> into memref<2x8x4x8xf32, strided<[768, 96, 8, 1]>>
  %q = memref.alloc() {alignment = 64 : i64} : memref<2x4x8x8xf32>
  linalg.transpose ins(%qe : memref<2x8x4x8xf32, strided<[768, 96, 8, 1]>>) outs(%q : memref<2x4x8x8xf32>) permutation = [0, 2, 1, 3]
  %ks = memref.subview %qkv[0, 0, 32] [2, 8, 32] [1, 1, 1] : memref<2x8x96xf32> to memref<2x8x32xf32, strided<[768, 96, 1], offset: 32>>
  %ke = memref.expand_shape %ks [[0], [1], [2, 3]] output_shape [2, 8, 4, 8] : memref<2x8x32xf32, strided<[768, 96, 1], offset: 32>> into memref<2x8x4x8xf32, strided<[768, 96, 8, 1], offset: 32>>
  %k = memref.alloc() {alignment = 64 : i64} : memref<2x4x8x8xf32>
  linalg.transpose ins(%ke : memref<2x8x4x8xf32, strided<[768, 96, 8, 1], offset: 32>>) outs(%k : memref<2x4x8x8xf32>) permutation = [0, 2, 1, 3]
  %vs = memref.subview %qkv[0, 0, 64] [2, 8, 32] [1, 1, 1] : memref<2x8x96xf32> to memref<2x8x32xf32, strided<[768, 96, 1], offset: 64>>
  %ve = memref.expand_shape %vs [[0], [1], [2, 3]] output_shape [2, 8, 4, 8] : memref<2x8x32xf32, strided<[768, 96, 1], offset: 64>> into memref<2x8x4x8xf32, strided<[768, 96, 8, 1], offset: 64>>
  %v = memref.alloc() {alignment = 64 : i64} : memref<2x4x8x8xf32>
  linalg.transpose ins(%ve : memref<2x8x4x8xf32, strided<[768, 96, 8, 1], offset: 64>>) outs(%v : memref<2x4x8x8xf32>) permutation = [0, 2, 1, 3]
  %out = memref.alloc() {alignment = 64 : i64} : memref<2x4x8x8xf32>
  tfc_kernel.attention %q, %k, %v outs(%out) {causal, scale = 0.125} : (memref<2x4x8x8xf32>, memref<2x4x8x8xf32>, memref<2x4x8x8xf32>, memref<2x4x8x8xf32>) -> ()
  return %out : memref<2x4x8x8xf32>
}

// -----

// The copy is also used by something that is not a reader through loads
// (here: it is returned): it stays.
// CHECK-LABEL: func @other_reader
// CHECK: linalg.transpose
// CHECK: tfc_kernel.attention %[[Q:[a-z0-9_]+]], %[[Q]], %[[Q]]
// CHECK: return %{{.*}}, %[[Q]]
func.func @other_reader(%x: memref<2x8x4x8xf32>) -> (memref<2x4x8x8xf32>, memref<2x4x8x8xf32>) {
  %q = memref.alloc() : memref<2x4x8x8xf32>
  linalg.transpose ins(%x : memref<2x8x4x8xf32>) outs(%q : memref<2x4x8x8xf32>) permutation = [0, 2, 1, 3]
  %out = memref.alloc() : memref<2x4x8x8xf32>
  tfc_kernel.attention %q, %q, %q outs(%out) {scale = 0.125} : (memref<2x4x8x8xf32>, memref<2x4x8x8xf32>, memref<2x4x8x8xf32>, memref<2x4x8x8xf32>) -> ()
  return %out, %q : memref<2x4x8x8xf32>, memref<2x4x8x8xf32>
}

// -----

// The source is overwritten between the copy and attention: it stays.
// CHECK-LABEL: func @source_written
// CHECK: linalg.transpose
// CHECK: linalg.fill
// CHECK: tfc_kernel.attention
func.func @source_written(%x: memref<2x8x4x8xf32>) -> memref<2x4x8x8xf32> {
  %q = memref.alloc() : memref<2x4x8x8xf32>
  linalg.transpose ins(%x : memref<2x8x4x8xf32>) outs(%q : memref<2x4x8x8xf32>) permutation = [0, 2, 1, 3]
  %zero = arith.constant 0.0 : f32
  %sub = memref.subview %x[0, 0, 0, 0] [1, 8, 4, 8] [1, 1, 1, 1] : memref<2x8x4x8xf32> to memref<1x8x4x8xf32, strided<[256, 32, 8, 1]>>
  linalg.fill ins(%zero : f32) outs(%sub : memref<1x8x4x8xf32, strided<[256, 32, 8, 1]>>)
  %out = memref.alloc() : memref<2x4x8x8xf32>
  tfc_kernel.attention %q, %q, %q outs(%out) {scale = 0.125} : (memref<2x4x8x8xf32>, memref<2x4x8x8xf32>, memref<2x4x8x8xf32>, memref<2x4x8x8xf32>) -> ()
  return %out : memref<2x4x8x8xf32>
}

// -----

// A write to another argument may alias the source (an argument too): it
// stays. A write to an allocation cannot: folded.
// CHECK-LABEL: func @argument_writes
// CHECK: linalg.transpose
// CHECK: tfc_kernel.attention
// CHECK-NOT: linalg.transpose
// CHECK: memref.transpose
// CHECK: tfc_kernel.attention
func.func @argument_writes(%x: memref<2x8x4x8xf32>, %y: memref<8xf32>) -> (memref<2x4x8x8xf32>, memref<2x4x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %q = memref.alloc() : memref<2x4x8x8xf32>
  linalg.transpose ins(%x : memref<2x8x4x8xf32>) outs(%q : memref<2x4x8x8xf32>) permutation = [0, 2, 1, 3]
  linalg.fill ins(%zero : f32) outs(%y : memref<8xf32>)
  %out = memref.alloc() : memref<2x4x8x8xf32>
  tfc_kernel.attention %q, %q, %q outs(%out) {scale = 0.125} : (memref<2x4x8x8xf32>, memref<2x4x8x8xf32>, memref<2x4x8x8xf32>, memref<2x4x8x8xf32>) -> ()
  %q2 = memref.alloc() : memref<2x4x8x8xf32>
  linalg.transpose ins(%x : memref<2x8x4x8xf32>) outs(%q2 : memref<2x4x8x8xf32>) permutation = [0, 2, 1, 3]
  %tmp = memref.alloc() : memref<8xf32>
  linalg.fill ins(%zero : f32) outs(%tmp : memref<8xf32>)
  %out2 = memref.alloc() : memref<2x4x8x8xf32>
  tfc_kernel.attention %q2, %q2, %q2 outs(%out2) {scale = 0.125} : (memref<2x4x8x8xf32>, memref<2x4x8x8xf32>, memref<2x4x8x8xf32>, memref<2x4x8x8xf32>) -> ()
  return %out, %out2 : memref<2x4x8x8xf32>, memref<2x4x8x8xf32>
}

// -----

// The innermost dimension moves (K^T): it stays.
// CHECK-LABEL: func @innermost_moves
// CHECK: linalg.transpose
func.func @innermost_moves(%x: memref<2x4x8x8xf32>) -> memref<2x4x8x8xf32> {
  %k = memref.alloc() : memref<2x4x8x8xf32>
  linalg.transpose ins(%x : memref<2x4x8x8xf32>) outs(%k : memref<2x4x8x8xf32>) permutation = [0, 1, 3, 2]
  %out = memref.alloc() : memref<2x4x8x8xf32>
  tfc_kernel.attention %k, %k, %k outs(%out) {scale = 0.125} : (memref<2x4x8x8xf32>, memref<2x4x8x8xf32>, memref<2x4x8x8xf32>, memref<2x4x8x8xf32>) -> ()
  return %out : memref<2x4x8x8xf32>
}

// -----

// The copy goes to the attention's destination, not an input: it stays.
// CHECK-LABEL: func @into_destination
// CHECK: linalg.transpose
func.func @into_destination(%x: memref<2x8x4x8xf32>, %q: memref<2x4x8x8xf32>) -> memref<2x4x8x8xf32> {
  %o = memref.alloc() : memref<2x4x8x8xf32>
  linalg.transpose ins(%x : memref<2x8x4x8xf32>) outs(%o : memref<2x4x8x8xf32>) permutation = [0, 2, 1, 3]
  tfc_kernel.attention %q, %q, %q outs(%o) {scale = 0.125} : (memref<2x4x8x8xf32>, memref<2x4x8x8xf32>, memref<2x4x8x8xf32>, memref<2x4x8x8xf32>) -> ()
  return %o : memref<2x4x8x8xf32>
}

// -----

// The source is a view of a loop's block argument, which may be the
// allocation the loop body overwrites: it stays.
// CHECK-LABEL: func @loop_carried
// CHECK: scf.for
// CHECK: linalg.transpose
// CHECK: linalg.fill
// CHECK: tfc_kernel.attention
func.func @loop_carried(%n: index) -> memref<2x8x4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<2x8x4x8xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> (memref<2x8x4x8xf32>) {
    %q = memref.alloc() : memref<2x4x8x8xf32>
    linalg.transpose ins(%acc : memref<2x8x4x8xf32>) outs(%q : memref<2x4x8x8xf32>) permutation = [0, 2, 1, 3]
    linalg.fill ins(%zero : f32) outs(%a : memref<2x8x4x8xf32>)
    %out = memref.alloc() : memref<2x4x8x8xf32>
    tfc_kernel.attention %q, %q, %q outs(%out) {scale = 0.125} : (memref<2x4x8x8xf32>, memref<2x4x8x8xf32>, memref<2x4x8x8xf32>, memref<2x4x8x8xf32>) -> ()
    scf.yield %acc : memref<2x8x4x8xf32>
  }
  return %r : memref<2x8x4x8xf32>
}

// -----

// The head merge after attention ([B, H, T, D] -> [B, T, H, D], then
// [B, T, H·D]): attention writes the merged buffer through a transposed
// view, allocated before it (with its run-time sizes); copy and the
// attention's own output buffer are gone.
// CHECK-LABEL: func @merge_heads
// CHECK-SAME: (%[[Q:.*]]: memref<?x4x?x8xf32>, %[[B:.*]]: index, %[[T:.*]]: index)
// CHECK-NOT: linalg.transpose
// CHECK: %[[Y:.*]] = memref.alloc(%[[B]], %[[T]]) {alignment = 64 : i64} : memref<?x?x4x8xf32>
// CHECK-NEXT: %[[V:.*]] = memref.transpose %[[Y]] (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<?x?x4x8xf32> to memref<?x4x?x8xf32, strided<[?, 8, 32, 1]>>
// CHECK-NEXT: tfc_kernel.attention %[[Q]], %[[Q]], %[[Q]] outs(%[[V]])
// CHECK-NOT: linalg.transpose
// CHECK: memref.collapse_shape %[[Y]]
func.func @merge_heads(%q: memref<?x4x?x8xf32>, %b: index, %t: index) -> memref<?x?x32xf32> {
  %x = memref.alloc(%b, %t) {alignment = 64 : i64} : memref<?x4x?x8xf32>
  tfc_kernel.attention %q, %q, %q outs(%x) {scale = 0.125} : (memref<?x4x?x8xf32>, memref<?x4x?x8xf32>, memref<?x4x?x8xf32>, memref<?x4x?x8xf32>) -> ()
  %y = memref.alloc(%b, %t) {alignment = 64 : i64} : memref<?x?x4x8xf32>
  linalg.transpose ins(%x : memref<?x4x?x8xf32>) outs(%y : memref<?x?x4x8xf32>) permutation = [0, 2, 1, 3]
  %m = memref.collapse_shape %y [[0], [1], [2, 3]] : memref<?x?x4x8xf32> into memref<?x?x32xf32>
  return %m : memref<?x?x32xf32>
}

// -----

// A permutation that is not its own inverse: the view undoes it (X dim 0
// is Y dim 2, stride 8; X dim 1 is Y dim 0, stride 128; X dim 2 is Y dim 1).
// CHECK-LABEL: func @merge_rotated
// CHECK: %[[Y:.*]] = memref.alloc() : memref<4x8x2x8xf32>
// CHECK-NEXT: memref.transpose %[[Y]] (d0, d1, d2, d3) -> (d2, d0, d1, d3) : memref<4x8x2x8xf32> to memref<2x4x8x8xf32, strided<[8, 128, 16, 1]>>
// CHECK-NOT: linalg.transpose
func.func @merge_rotated(%q: memref<2x4x8x8xf32>) -> memref<4x8x2x8xf32> {
  %x = memref.alloc() : memref<2x4x8x8xf32>
  tfc_kernel.attention %q, %q, %q outs(%x) {scale = 0.125} : (memref<2x4x8x8xf32>, memref<2x4x8x8xf32>, memref<2x4x8x8xf32>, memref<2x4x8x8xf32>) -> ()
  %y = memref.alloc() : memref<4x8x2x8xf32>
  linalg.transpose ins(%x : memref<2x4x8x8xf32>) outs(%y : memref<4x8x2x8xf32>) permutation = [1, 2, 0, 3]
  return %y : memref<4x8x2x8xf32>
}

// -----

// The attention's output is read by something else too, the destination is
// used before the copy, or its size is known only after attention: each
// copy stays.
// CHECK-LABEL: func @merge_kept
// CHECK-COUNT-3: linalg.transpose
func.func @merge_kept(%q: memref<?x4x?x8xf32>, %b: index, %t: index, %keep: memref<?x4x?x8xf32>, %w: memref<?x?x4x8xf32>) -> (memref<?x?x4x8xf32>, memref<?x?x4x8xf32>, memref<?x?x4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %c1 = arith.constant 1 : index
  %x1 = memref.alloc(%b, %t) : memref<?x4x?x8xf32>
  tfc_kernel.attention %q, %q, %q outs(%x1) {scale = 0.125} : (memref<?x4x?x8xf32>, memref<?x4x?x8xf32>, memref<?x4x?x8xf32>, memref<?x4x?x8xf32>) -> ()
  %y1 = memref.alloc(%b, %t) : memref<?x?x4x8xf32>
  linalg.transpose ins(%x1 : memref<?x4x?x8xf32>) outs(%y1 : memref<?x?x4x8xf32>) permutation = [0, 2, 1, 3]
  memref.copy %x1, %keep : memref<?x4x?x8xf32> to memref<?x4x?x8xf32>
  %x2 = memref.alloc(%b, %t) : memref<?x4x?x8xf32>
  %y2 = memref.alloc(%b, %t) : memref<?x?x4x8xf32>
  linalg.fill ins(%zero : f32) outs(%y2 : memref<?x?x4x8xf32>)
  tfc_kernel.attention %q, %q, %q outs(%x2) {scale = 0.125} : (memref<?x4x?x8xf32>, memref<?x4x?x8xf32>, memref<?x4x?x8xf32>, memref<?x4x?x8xf32>) -> ()
  linalg.transpose ins(%x2 : memref<?x4x?x8xf32>) outs(%y2 : memref<?x?x4x8xf32>) permutation = [0, 2, 1, 3]
  %x3 = memref.alloc(%b, %t) : memref<?x4x?x8xf32>
  tfc_kernel.attention %q, %q, %q outs(%x3) {scale = 0.125} : (memref<?x4x?x8xf32>, memref<?x4x?x8xf32>, memref<?x4x?x8xf32>, memref<?x4x?x8xf32>) -> ()
  %t3 = memref.dim %w, %c1 : memref<?x?x4x8xf32>
  %y3 = memref.alloc(%b, %t3) : memref<?x?x4x8xf32>
  linalg.transpose ins(%x3 : memref<?x4x?x8xf32>) outs(%y3 : memref<?x?x4x8xf32>) permutation = [0, 2, 1, 3]
  return %y1, %y2, %y3 : memref<?x?x4x8xf32>, memref<?x?x4x8xf32>, memref<?x?x4x8xf32>
}
