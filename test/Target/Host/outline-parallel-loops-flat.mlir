// --tfc-outline-parallel-loops (OutlineParallelLoops.cpp) on a flat loop nest
// (elementwise code or a copy from linalg: no region or alloca in the body)
// of two or more dims: the innermost dim becomes a serial scf.for inside
// each parallel iteration, so only the outer dims are linearised (one
// division per row, not per element) and the contiguous innermost run can
// be vectorised. A head-splitting copy [B, T, H, D] -> [B, H, T, D] is the
// case that mattered (BERT-base 78 -> 66 ms on a 2-core AMD EPYC Zen 5,
// AVX-512).
// RUN: tfc-opt %s -split-input-file --tfc-outline-parallel-loops | FileCheck %s

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
// row blocks inside a task.
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
