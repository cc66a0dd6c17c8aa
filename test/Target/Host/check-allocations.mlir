// --tfc-check-allocations (CheckAllocations.cpp): after each call of the
// memref lowering's allocation functions, a null result for a non-zero size
// branches (unlikely) to a block that returns from the function, with a
// poison result where there is one; a parallel task first sets its failure
// flag (the operand of the __tfc_failure_flag marker, atomically: its chunks
// run concurrently); each __tfc_fail_if(c) becomes `if (c) return`. The
// markers and their declarations are gone afterwards.
// RUN: tfc-opt %s --tfc-check-allocations | FileCheck %s

// CHECK-NOT: __tfc_fail_if
// CHECK-NOT: __tfc_failure_flag
llvm.func @__tfc_fail_if(i1)
llvm.func @__tfc_failure_flag(!llvm.ptr)
llvm.func @use(!llvm.ptr)

// The allocation functions themselves are not checked.
// CHECK-LABEL: llvm.func internal @_mlir_memref_to_llvm_alloc
// CHECK-NOT: llvm.cond_br
// CHECK: llvm.return
llvm.func internal @_mlir_memref_to_llvm_alloc(%size: i64) -> !llvm.ptr {
  %0 = llvm.mlir.zero : !llvm.ptr
  llvm.return %0 : !llvm.ptr
}
llvm.func internal @_mlir_memref_to_llvm_aligned_alloc(%align: i64, %size: i64) -> !llvm.ptr {
  %0 = llvm.mlir.zero : !llvm.ptr
  llvm.return %0 : !llvm.ptr
}

// CHECK-LABEL: llvm.func internal @impl
// CHECK-SAME: (%[[N:.*]]: i64) -> !llvm.struct<(ptr, i64)>
// CHECK: %[[P:.*]] = llvm.call @_mlir_memref_to_llvm_alloc(%[[N]])
// CHECK-NEXT: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: %[[ISNULL:.*]] = llvm.icmp "eq" %[[P]], %[[NULL]] : !llvm.ptr
// CHECK-NEXT: %[[ZERO:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT: %[[SIZED:.*]] = llvm.icmp "ne" %[[N]], %[[ZERO]] : i64
// CHECK-NEXT: %[[FAILED:.*]] = llvm.and %[[ISNULL]], %[[SIZED]] : i1
// CHECK-NEXT: llvm.cond_br %[[FAILED]] weights([1, 1048576]), ^[[FAIL:.*]], ^[[OK:.*]]
// CHECK: ^[[OK]]:
// CHECK-NEXT: llvm.call @use(%[[P]])
// CHECK: llvm.return %{{.*}} : !llvm.struct<(ptr, i64)>
// CHECK: ^[[FAIL]]:
// CHECK-NEXT: %[[POISON:.*]] = llvm.mlir.poison : !llvm.struct<(ptr, i64)>
// CHECK-NEXT: llvm.return %[[POISON]]
llvm.func internal @impl(%n: i64) -> !llvm.struct<(ptr, i64)> {
  %p = llvm.call @_mlir_memref_to_llvm_alloc(%n) : (i64) -> !llvm.ptr
  llvm.call @use(%p) : (!llvm.ptr) -> ()
  %u = llvm.mlir.undef : !llvm.struct<(ptr, i64)>
  %s0 = llvm.insertvalue %p, %u[0] : !llvm.struct<(ptr, i64)>
  %s1 = llvm.insertvalue %n, %s0[1] : !llvm.struct<(ptr, i64)>
  llvm.return %s1 : !llvm.struct<(ptr, i64)>
}

// A task that allocates: the size is the aligned function's second operand;
// a failure sets the flag before returning.
// CHECK-LABEL: llvm.func internal @task
// CHECK-SAME: (%[[CTX:.*]]: !llvm.ptr, %[[BEGIN:.*]]: i64, %{{.*}}: i64)
// CHECK: %[[FLAG:.*]] = llvm.getelementptr %[[CTX]][0, 1]
// CHECK-NEXT: %[[ALIGN:.*]] = llvm.mlir.constant(64 : i64) : i64
// CHECK-NEXT: %[[P:.*]] = llvm.call @_mlir_memref_to_llvm_aligned_alloc(%[[ALIGN]], %[[BEGIN]])
// CHECK: llvm.icmp "ne" %[[BEGIN]], %{{.*}} : i64
// CHECK: llvm.cond_br %{{.*}} weights([1, 1048576]), ^[[FAIL:.*]], ^
// CHECK: ^[[FAIL]]:
// CHECK-NEXT: %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: llvm.store %[[ONE]], %[[FLAG]] atomic monotonic {alignment = 4 : i64} : i32, !llvm.ptr
// CHECK-NEXT: llvm.return
llvm.func internal @task(%ctx: !llvm.ptr, %begin: i64, %end: i64) {
  %flag = llvm.getelementptr %ctx[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i64, i32)>
  llvm.call @__tfc_failure_flag(%flag) : (!llvm.ptr) -> ()
  %align = llvm.mlir.constant(64 : i64) : i64
  %p = llvm.call @_mlir_memref_to_llvm_aligned_alloc(%align, %begin) : (i64, i64) -> !llvm.ptr
  llvm.call @use(%p) : (!llvm.ptr) -> ()
  llvm.return
}

// After the parallel_for, the task's flag: `if (flag != 0) return`.
// CHECK-LABEL: llvm.func @caller
// CHECK: %[[V:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i32
// CHECK: %[[C:.*]] = llvm.icmp "ne" %[[V]], %{{.*}} : i32
// CHECK-NEXT: llvm.cond_br %[[C]] weights([1, 1048576]), ^[[FAIL:.*]], ^[[OK:.*]]
// CHECK: ^[[OK]]:
// CHECK-NEXT: llvm.call @use
// CHECK: ^[[FAIL]]:
// CHECK-NEXT: llvm.return
llvm.func @caller(%ctx: !llvm.ptr) {
  %flagPtr = llvm.getelementptr %ctx[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i64, i32)>
  %flag = llvm.load %flagPtr : !llvm.ptr -> i32
  %zero = llvm.mlir.constant(0 : i32) : i32
  %failed = llvm.icmp "ne" %flag, %zero : i32
  llvm.call @__tfc_fail_if(%failed) : (i1) -> ()
  llvm.call @use(%ctx) : (!llvm.ptr) -> ()
  llvm.return
}

// A function that does not allocate is left alone.
// CHECK-LABEL: llvm.func @pure
// CHECK-NOT: llvm.cond_br
// CHECK: llvm.return
llvm.func @pure(%p: !llvm.ptr) {
  llvm.call @use(%p) : (!llvm.ptr) -> ()
  llvm.return
}

