// --tfc-outline-parallel-loops (OutlineParallelLoops.cpp): each outermost
// scf.parallel becomes an internal llvm.func @<fn>__par<N>(ctx, begin, end)
// running the linearised iterations [begin, end) serially, plus, at the
// loop's place, a context struct on the stack (llvm.alloca) holding the
// captured values (memrefs as descriptors, indices as i64), and either a
// direct call of the body over [0, n) (no runtime attached, or one
// iteration) or an indirect call of the hooks' parallel_for (field 2).
// Nested scf.parallel loops stay inside the outlined body.
// RUN: tfc-opt %s -split-input-file -verify-diagnostics --tfc-outline-parallel-loops | FileCheck %s

// CHECK-LABEL: module {
// CHECK: llvm.mlir.global external @tfc_model_hooks()
// CHECK-LABEL: func.func @scale
// CHECK-SAME: (%[[M:.*]]: memref<?x?xf32>, %[[S:.*]]: f32)
// The context: {memref descriptor, f32, then i64 ub of the inner loop,
// count}, a static frame slot at the top of the entry block. Constants (the
// bounds 0 and steps 1) are not in it: the task defines them again.
// CHECK-NEXT: %[[ONE64:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: %[[CTX:.*]] = llvm.alloca %[[ONE64]] x !llvm.struct<(struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, f32, i64, i64)> : (i64) -> !llvm.ptr
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[D0:.*]] = memref.dim %[[M]], %[[C0]]
// CHECK: %[[D1:.*]] = memref.dim %[[M]], %[[C1]]
// The trip count: ceil((ub - lb) / step), 0 for an empty range.
// CHECK: %[[SPAN:.*]] = arith.subi %[[D0]], %[[C0]] : index
// CHECK: %[[TRIPS:.*]] = arith.ceildivui %[[SPAN]], %[[C1]] : index
// CHECK: %[[EMPTY:.*]] = arith.cmpi sle, %[[D0]], %[[C0]] : index
// CHECK: %[[COUNT:.*]] = arith.select %[[EMPTY]], %{{.*}}, %[[TRIPS]] : index
// CHECK: %[[TOTAL:.*]] = arith.muli %{{.*}}, %[[COUNT]] : index
// CHECK: %[[DESC:.*]] = builtin.unrealized_conversion_cast %[[M]] : memref<?x?xf32> to !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK: llvm.insertvalue %[[DESC]], %{{.*}}[0]
// CHECK: llvm.insertvalue %[[S]], %{{.*}}[1]
// CHECK: %[[I64:.*]] = arith.index_cast %[[D1]] : index to i64
// CHECK: llvm.insertvalue %[[I64]], %{{.*}}[2]
// CHECK: %[[PACKED:.*]] = llvm.insertvalue %{{.*}}, %{{.*}}[3]
// CHECK: llvm.store %[[PACKED]], %[[CTX]]
// CHECK: %[[N:.*]] = arith.index_cast %[[TOTAL]] : index to i64
// CHECK: %[[FN:.*]] = llvm.mlir.addressof @scale__par0 : !llvm.ptr
// CHECK: %[[HA:.*]] = llvm.mlir.addressof @tfc_model_hooks : !llvm.ptr
// CHECK: %[[HOOKS:.*]] = llvm.load %[[HA]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: %[[NOHOOKS:.*]] = llvm.icmp "eq" %[[HOOKS]], %[[NULL]] : !llvm.ptr
// CHECK: %[[ONE:.*]] = arith.cmpi sle, %[[N]], %{{.*}} : i64
// CHECK: %[[SERIAL:.*]] = arith.ori %[[NOHOOKS]], %[[ONE]] : i1
// CHECK: scf.if %[[SERIAL]] {
// CHECK: %[[ZERO:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK: llvm.call @scale__par0(%[[CTX]], %[[ZERO]], %[[N]]) : (!llvm.ptr, i64, i64) -> ()
// CHECK: } else {
// CHECK: %[[PFP:.*]] = llvm.getelementptr %[[HOOKS]][2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[PF:.*]] = llvm.load %[[PFP]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.call %[[PF]](%[[N]], %[[FN]], %[[CTX]]) : !llvm.ptr, (i64, !llvm.ptr, !llvm.ptr) -> ()
// CHECK: }
// CHECK-NOT: scf.parallel
// CHECK: return
//
// The body: define the constants, unpack the context, loop over [begin,
// end), iv = lb + i * step; the inner scf.parallel is cloned as is.
// The task is never inlined into the serial fallback (a second copy of
// every task body in the caller).
// CHECK-LABEL: llvm.func internal @scale__par0
// CHECK-SAME: (%[[C:.*]]: !llvm.ptr, %[[BEGIN:.*]]: i64, %[[END:.*]]: i64) attributes {passthrough = ["noinline"]} {
// CHECK: %[[V:.*]] = llvm.load %[[C]] : !llvm.ptr -> !llvm.struct<(struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, f32, i64, i64)>
// CHECK-NEXT: %[[LB:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[STEP:.*]] = arith.constant 1 : index
// CHECK: %[[F0:.*]] = llvm.extractvalue %[[V]][0]
// CHECK: %[[MM:.*]] = builtin.unrealized_conversion_cast %[[F0]] : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<?x?xf32>
// CHECK: %[[SS:.*]] = llvm.extractvalue %[[V]][1]
// CHECK: %[[F2:.*]] = llvm.extractvalue %[[V]][2]
// CHECK: %[[UB:.*]] = arith.index_cast %[[F2]] : i64 to index
// CHECK: %[[B:.*]] = arith.index_cast %[[BEGIN]] : i64 to index
// CHECK: %[[E:.*]] = arith.index_cast %[[END]] : i64 to index
// CHECK: scf.for %[[L:.*]] = %[[B]] to %[[E]] step %{{.*}} {
// CHECK-NEXT: %[[OFF:.*]] = arith.muli %[[L]], %[[STEP]] : index
// CHECK-NEXT: %[[I:.*]] = arith.addi %[[LB]], %[[OFF]] : index
// Each iteration releases its stack memory (scf.parallel's body is an
// automatic allocation scope, the loop's is not).
// CHECK-NEXT: %[[SP:.*]] = llvm.intr.stacksave : !llvm.ptr
// CHECK-NEXT: scf.parallel (%[[J:.*]]) = (%[[LB]]) to (%[[UB]]) step (%[[STEP]]) {
// CHECK-NEXT: %[[X:.*]] = memref.load %[[MM]][%[[I]], %[[J]]] : memref<?x?xf32>
// CHECK-NEXT: %[[Y:.*]] = arith.mulf %[[X]], %[[SS]] : f32
// CHECK-NEXT: memref.store %[[Y]], %[[MM]][%[[I]], %[[J]]] : memref<?x?xf32>
// CHECK: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: llvm.intr.stackrestore %[[SP]] : !llvm.ptr
// CHECK-NEXT: }
// CHECK-NEXT: llvm.return
func.func @scale(%m: memref<?x?xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = memref.dim %m, %c0 : memref<?x?xf32>
  %d1 = memref.dim %m, %c1 : memref<?x?xf32>
  scf.parallel (%i) = (%c0) to (%d0) step (%c1) {
    scf.parallel (%j) = (%c0) to (%d1) step (%c1) {
      %v = memref.load %m[%i, %j] : memref<?x?xf32>
      %w = arith.mulf %v, %s : f32
      memref.store %w, %m[%i, %j] : memref<?x?xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

// Two loops in one function and one in another: numbered through the
// module. A 2-d loop whose body holds a region is linearised with the
// innermost dimension fastest: i1 = lb1 + (l mod n1) * step1,
// i0 = lb0 + (l div n1) * step0. (A flat one keeps its innermost dim
// serial: outline-parallel-loops-flat.mlir.)
// CHECK-LABEL: func.func @two
// CHECK: llvm.call @two__par0(
// CHECK: llvm.call @two__par1(
// CHECK-NOT: scf.parallel
// CHECK-LABEL: func.func @other
// CHECK: llvm.call @other__par2(
// CHECK-LABEL: llvm.func internal @two__par0
// CHECK-LABEL: llvm.func internal @two__par1
// CHECK: scf.for %[[L:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: %[[IDX1:.*]] = arith.remui %[[L]], %[[N1:.*]] : index
// CHECK-NEXT: %[[REST:.*]] = arith.divui %[[L]], %[[N1]] : index
// CHECK-NEXT: %[[O1:.*]] = arith.muli %[[IDX1]], %{{.*}} : index
// CHECK-NEXT: %[[I1:.*]] = arith.addi %{{.*}}, %[[O1]] : index
// CHECK-NEXT: %[[O0:.*]] = arith.muli %[[REST]], %[[STEP0:.*]] : index
// CHECK-NEXT: %[[I0:.*]] = arith.addi %{{.*}}, %[[O0]] : index
// CHECK-NEXT: llvm.intr.stacksave
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[I0]], %[[I1]]] : memref<8x?xf32>
// CHECK-LABEL: llvm.func internal @other__par2
func.func @two(%m: memref<?xf32>, %n: memref<8x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %d = memref.dim %m, %c0 : memref<?xf32>
  %cst = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%d) step (%c1) {
    memref.store %cst, %m[%i] : memref<?xf32>
    scf.reduce
  }
  %e = memref.dim %n, %c1 : memref<8x?xf32>
  scf.parallel (%i, %j) = (%c0, %c1) to (%c8, %e) step (%c2, %c1) {
    %inside = arith.cmpi ult, %i, %j : index
    scf.if %inside {
      memref.store %cst, %n[%i, %j] : memref<8x?xf32>
    }
    scf.reduce
  }
  return
}
func.func @other(%m: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d = memref.dim %m, %c0 : memref<?xf32>
  %cst = arith.constant 2.0 : f32
  scf.parallel (%i) = (%c0) to (%d) step (%c1) {
    memref.store %cst, %m[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// A parallel loop with a reduction is not outlined.
// CHECK-LABEL: func.func @reduction
// CHECK: scf.parallel
// CHECK: scf.reduce
// CHECK-NOT: llvm.func internal @reduction__par
func.func @reduction(%m: memref<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d = memref.dim %m, %c0 : memref<?xf32>
  %zero = arith.constant 0.0 : f32
  %r = scf.parallel (%i) = (%c0) to (%d) step (%c1) init (%zero) -> f32 {
    %v = memref.load %m[%i] : memref<?xf32>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  return %r : f32
}

// -----

// Only memrefs, scalars, pointers and 1-d vectors can travel in the context.
func.func @capture_2d_vector(%m: memref<?x4x4xf32>, %v: vector<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %m, %c0 : memref<?x4x4xf32>
  // expected-error @+1 {{cannot pass a value of type 'vector<4x4xf32>' to a parallel task}}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    vector.store %v, %m[%i, %c0, %c0] : memref<?x4x4xf32>, vector<4x4xf32>
    scf.reduce
  }
  return
}

// -----

// A body that allocates can run out of memory (tfc-check-allocations): the
// caller's frame gets an i32 failure flag, 0 before the loop, to which the
// context's last field points; the task names it with the __tfc_failure_flag
// marker (its chunks set it when an allocation fails), and the caller tests
// it after the loop with __tfc_fail_if (then returns).
// CHECK-LABEL: func.func @allocating
// CHECK: %[[CTX:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(i64, ptr)>
// CHECK-NEXT: %[[FLAG:.*]] = llvm.alloca %{{.*}} x i32
// CHECK: %[[ZERO:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: llvm.store %[[ZERO]], %[[FLAG]] : i32, !llvm.ptr
// CHECK-NEXT: %[[PACKED:.*]] = llvm.insertvalue %[[FLAG]], %{{.*}}[1]
// CHECK-NEXT: llvm.store %[[PACKED]], %[[CTX]]
// CHECK: scf.if
// CHECK: llvm.call @allocating__par0
// CHECK: %[[F:.*]] = llvm.load %[[FLAG]] : !llvm.ptr -> i32
// CHECK: %[[FAILED:.*]] = llvm.icmp "ne" %[[F]], %{{.*}} : i32
// CHECK-NEXT: llvm.call @__tfc_fail_if(%[[FAILED]]) : (i1) -> ()
// CHECK-NEXT: return
// CHECK: llvm.func internal @allocating__par0(%[[C:.*]]: !llvm.ptr,
// CHECK-NEXT: %[[LOADED:.*]] = llvm.load %[[C]]
// CHECK: %[[FP:.*]] = llvm.extractvalue %[[LOADED]][1]
// CHECK-NEXT: llvm.call @__tfc_failure_flag(%[[FP]]) : (!llvm.ptr) -> ()
// CHECK: memref.alloc
// CHECK-DAG: llvm.func @__tfc_failure_flag(!llvm.ptr)
// CHECK-DAG: llvm.func @__tfc_fail_if(i1)
func.func @allocating(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %m = memref.alloc(%i) : memref<?xf32>
    memref.dealloc %m : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// Tasks that come out the same are kept once, the first: here the second
// loop (the first's body on another buffer: the buffer travels in the
// context) calls and hands the hook @same__par0, and its own task is gone;
// the third (another body) keeps its task. The tasks of another function
// (@other) reuse @same__par0 too.
// CHECK-LABEL: func.func @same
// CHECK: llvm.mlir.addressof @same__par0
// CHECK: llvm.call @same__par0
// CHECK: llvm.mlir.addressof @same__par0
// CHECK: llvm.call @same__par0
// CHECK: llvm.mlir.addressof @same__par2
// CHECK: llvm.call @same__par2
// CHECK-LABEL: func.func @other
// CHECK: llvm.mlir.addressof @same__par0
// CHECK: llvm.call @same__par0
// CHECK-NOT: @same__par1
// CHECK-NOT: @other__par
// CHECK: llvm.func internal @same__par0(
// CHECK: arith.mulf
// CHECK: llvm.func internal @same__par2(
// CHECK: arith.addf
func.func @same(%a: memref<?xf32>, %b: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %a[%i] : memref<?xf32>
    %y = arith.mulf %x, %x : f32
    memref.store %y, %a[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %b[%i] : memref<?xf32>
    %y = arith.mulf %x, %x : f32
    memref.store %y, %b[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %b[%i] : memref<?xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %b[%i] : memref<?xf32>
    scf.reduce
  }
  return
}
func.func @other(%a: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %a[%i] : memref<?xf32>
    %y = arith.mulf %x, %x : f32
    memref.store %y, %a[%i] : memref<?xf32>
    scf.reduce
  }
  return
}
