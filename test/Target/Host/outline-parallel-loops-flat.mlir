// --tfc-outline-parallel-loops (OutlineParallelLoops.cpp) on a flat loop nest
// (elementwise code or a copy from linalg: no region or alloca in the body)
// of two or more dims: the innermost dim becomes a serial scf.for inside
// each parallel iteration, so only the outer dims are linearised (one
// division per row, not per element) and the contiguous innermost run can
// be vectorised. A head-splitting copy [B, T, H, D] -> [B, H, T, D] is the
// case that mattered (BERT-base 78 -> 66 ms on a 2-core AMD EPYC Zen 5,
// AVX-512).
// A flat nest whose work is small runs on the calling thread: the call
// site adds "elements x ops per element < 32768" (kSerialWork, unsigned) to the
// conditions of the direct call (here 2 ops: the load and the store; the
// elements are the parallel iterations times the serial loop's 64).
// RUN: tfc-opt %s -split-input-file --tfc-outline-parallel-loops | FileCheck %s

// CHECK-LABEL: func.func @transpose_copy
// The serial loop's trip count comes first, then the parallel dims'.
// CHECK: arith.subi %c64, %c0 : index
// CHECK: %[[INNER:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : index
// CHECK: llvm.store
// CHECK-NEXT: %[[N:.*]] = arith.index_cast %[[TOTAL:.*]] : index to i64
// CHECK-NEXT: llvm.mlir.addressof @transpose_copy__par0
// CHECK: %[[SERIAL:.*]] = arith.ori %{{.*}}, %{{.*}} : i1
// CHECK-NEXT: %[[ELEMENTS:.*]] = arith.muli %[[TOTAL]], %[[INNER]] : index
// CHECK-NEXT: %[[E64:.*]] = arith.index_cast %[[ELEMENTS]] : index to i64
// CHECK-NEXT: %[[OPS:.*]] = arith.constant 2 : i64
// CHECK-NEXT: %[[WORK:.*]] = arith.muli %[[E64]], %[[OPS]] : i64
// CHECK-NEXT: %[[LIMIT:.*]] = arith.constant 32768 : i64
// CHECK-NEXT: %[[SMALL:.*]] = arith.cmpi ult, %[[WORK]], %[[LIMIT]] : i64
// CHECK-NEXT: %[[EITHER:.*]] = arith.ori %[[SERIAL]], %[[SMALL]] : i1
// CHECK-NEXT: scf.if %[[EITHER]] {
// CHECK-NEXT: llvm.mlir.constant(0 : i64)
// CHECK-NEXT: llvm.call @transpose_copy__par0(%{{.*}}, %{{.*}}, %[[N]])

// CHECK-LABEL: llvm.func internal @transpose_copy__par0
// CHECK: scf.for %[[L:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: arith.remui %[[L]], %{{.*}} : index
// CHECK: llvm.intr.stacksave
// CHECK-NEXT: scf.for %[[D:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: %[[V:.*]] = memref.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[D]]] : memref<?x?x12x64xf32>
// CHECK-NEXT: memref.store %[[V]], %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[D]]] : memref<?x12x?x64xf32>
// CHECK-NOT: arith.divui
// CHECK: llvm.intr.stackrestore
func.func @transpose_copy(%src: memref<?x?x12x64xf32>, %dst: memref<?x12x?x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c12 = arith.constant 12 : index
  %c64 = arith.constant 64 : index
  %b = memref.dim %src, %c0 : memref<?x?x12x64xf32>
  %t = memref.dim %src, %c1 : memref<?x?x12x64xf32>
  scf.parallel (%i, %h, %j, %d) = (%c0, %c0, %c0, %c0) to (%b, %c12, %t, %c64) step (%c1, %c1, %c1, %c1) {
    %v = memref.load %src[%i, %j, %h, %d] : memref<?x?x12x64xf32>
    memref.store %v, %dst[%i, %h, %j, %d] : memref<?x12x?x64xf32>
    scf.reduce
  }
  return
}

// -----

// A loop whose body calls a task function (the GEMM's: one call per (panel
// group, row block)) is a kernel's, not a flat nest: both dims stay
// parallel, linearised into one task index, with no serial loop over the
// row blocks inside a task. Its work is not estimated: it runs on the
// pool whenever it has two tasks or more.
// CHECK-LABEL: func.func @tasks
// CHECK-NOT: arith.constant 32768
// CHECK: llvm.call %{{.*}}(%{{.*}}, %{{.*}}, %{{.*}}) : !llvm.ptr, (i64, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-LABEL: llvm.func internal @tasks__par0
// CHECK: scf.for %[[L:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: arith.remui %[[L]], %{{.*}} : index
// CHECK: arith.divui %[[L]], %{{.*}} : index
// CHECK: llvm.intr.stacksave
// CHECK-NEXT: func.call @task(
// CHECK-NEXT: llvm.intr.stackrestore
func.func private @task(index, index)
func.func @tasks(%g: index, %r: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%g, %r) step (%c1, %c1) {
    func.call @task(%i, %j) : (index, index) -> ()
    scf.reduce
  }
  return
}

// -----

// A flat nest of one dim: an element per iteration; a math op counts 20
// (the polynomial it becomes), so the work is n x (load + exp + store) =
// n x 22.
// CHECK-LABEL: func.func @exp_1d
// CHECK: llvm.store
// CHECK-NEXT: %[[N:.*]] = arith.index_cast %[[TOTAL:.*]] : index to i64
// CHECK-NEXT: llvm.mlir.addressof @exp_1d__par0
// CHECK: %[[ELEMENTS:.*]] = arith.muli %[[TOTAL]], %{{.*}} : index
// CHECK-NEXT: %[[E64:.*]] = arith.index_cast %[[ELEMENTS]] : index to i64
// CHECK-NEXT: %[[OPS:.*]] = arith.constant 22 : i64
// CHECK-NEXT: arith.muli %[[E64]], %[[OPS]] : i64
// CHECK-NEXT: arith.constant 32768 : i64
func.func @exp_1d(%x: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<?xf32>
    %e = math.exp %v : f32
    memref.store %e, %x[%i] : memref<?xf32>
    scf.reduce
  }
  return
}
