// tfc-early-dealloc: each dealloc of a function's top block moves up to
// just after the last use of its buffer, counting uses of the memrefs made
// from it (views, casts, memref.transpose) and of values computed from its
// address (the pointers the CPU kernels pass to their C micro-kernels).
// RUN: tfc-opt %s -split-input-file --tfc-early-dealloc | FileCheck %s

// CHECK-LABEL: func @after_last_use
// CHECK: %[[A:.*]] = memref.alloc
// CHECK-NEXT: linalg.fill {{.*}} outs(%[[A]]
// CHECK-NEXT: memref.copy %[[A]]
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: return
func.func @after_last_use(%out: memref<8xf32>, %other: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<8xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<8xf32>)
  memref.copy %a, %out : memref<8xf32> to memref<8xf32>
  linalg.fill ins(%zero : f32) outs(%other : memref<8xf32>)
  memref.dealloc %a : memref<8xf32>
  return
}

// -----

// A transposed view of a view is read last: the dealloc follows that read.
// CHECK-LABEL: func @through_views
// CHECK: %[[A:.*]] = memref.alloc
// CHECK: memref.subview %[[A]]
// CHECK: %[[T:.*]] = memref.transpose
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: memref.copy %[[T]]
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: return
func.func @through_views(%out: memref<4x2xf32, strided<[1, 8]>>, %other: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<2x8xf32>
  %s = memref.subview %a[0, 0] [2, 4] [1, 1] : memref<2x8xf32> to memref<2x4xf32, strided<[8, 1]>>
  %t = memref.transpose %s (d0, d1) -> (d1, d0) : memref<2x4xf32, strided<[8, 1]>> to memref<4x2xf32, strided<[1, 8]>>
  linalg.fill ins(%zero : f32) outs(%other : memref<8xf32>)
  memref.copy %t, %out : memref<4x2xf32, strided<[1, 8]>> to memref<4x2xf32, strided<[1, 8]>>
  memref.dealloc %a : memref<2x8xf32>
  return
}

// -----

// The address goes to a call through integer arithmetic; a use nested in a
// region counts as its top-level op.
// CHECK-LABEL: func @address_and_regions
// CHECK: %[[A:.*]] = memref.alloc
// CHECK: llvm.call @kernel
// CHECK: scf.if
// CHECK: memref.load %[[A]]
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: linalg.fill
llvm.func @kernel(!llvm.ptr)
func.func @address_and_regions(%c: i1, %other: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %i = arith.constant 0 : index
  %a = memref.alloc() : memref<8xf32>
  %p = memref.extract_aligned_pointer_as_index %a : memref<8xf32> -> index
  %n = arith.index_cast %p : index to i64
  %q = llvm.inttoptr %n : i64 to !llvm.ptr
  llvm.call @kernel(%q) : (!llvm.ptr) -> ()
  scf.if %c {
    %v = memref.load %a[%i] : memref<8xf32>
    memref.store %v, %other[%i] : memref<8xf32>
  }
  linalg.fill ins(%zero : f32) outs(%other : memref<8xf32>)
  memref.dealloc %a : memref<8xf32>
  return
}

// -----

// A layer function whose every call frees the buffer it reads right after
// the call frees it itself, after its last use inside; the callers do not.
// An operand a call site keeps (used later) keeps the argument the
// caller's.
// CHECK-LABEL: func @layers
// CHECK: memref.copy %{{.*}}, %[[X:.*]] :
// CHECK-NEXT: %[[H1:.*]] = memref.alloc
// CHECK-NEXT: call @__tfc_block_layer(%[[X]], %[[H1]])
// CHECK-NEXT: %[[H2:.*]] = memref.alloc
// CHECK-NEXT: call @__tfc_block_layer(%[[H1]], %[[H2]])
// CHECK-NEXT: return %[[H2]]
// CHECK-LABEL: func private @__tfc_block_layer
// CHECK-SAME: (%[[IN:.*]]: memref<8xf32>, %[[OUT:.*]]: memref<8xf32>)
// CHECK: memref.copy %[[IN]], %[[OUT]]
// CHECK-NEXT: memref.dealloc %[[IN]]
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: return
// CHECK-LABEL: func @kept
// CHECK: call @__tfc_block_other(%[[K:.*]], %{{.*}})
// CHECK-NEXT: memref.copy %[[K]]
// CHECK-NEXT: memref.dealloc %[[K]]
// CHECK-LABEL: func private @__tfc_block_other
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @layers(%x0: memref<8xf32>) -> memref<8xf32> {
  %x = memref.alloc() : memref<8xf32>
  memref.copy %x0, %x : memref<8xf32> to memref<8xf32>
  %h1 = memref.alloc() : memref<8xf32>
  call @__tfc_block_layer(%x, %h1) : (memref<8xf32>, memref<8xf32>) -> ()
  memref.dealloc %x : memref<8xf32>
  %h2 = memref.alloc() : memref<8xf32>
  call @__tfc_block_layer(%h1, %h2) : (memref<8xf32>, memref<8xf32>) -> ()
  memref.dealloc %h1 : memref<8xf32>
  return %h2 : memref<8xf32>
}
func.func private @__tfc_block_layer(%in: memref<8xf32>, %out: memref<8xf32>) attributes {tfc.block_function} {
  %zero = arith.constant 0.0 : f32
  memref.copy %in, %out : memref<8xf32> to memref<8xf32>
  linalg.fill ins(%zero : f32) outs(%out : memref<8xf32>)
  return
}
func.func @kept(%x0: memref<8xf32>, %y: memref<8xf32>) {
  %k = memref.alloc() : memref<8xf32>
  memref.copy %x0, %k : memref<8xf32> to memref<8xf32>
  call @__tfc_block_other(%k, %y) : (memref<8xf32>, memref<8xf32>) -> ()
  memref.copy %k, %y : memref<8xf32> to memref<8xf32>
  memref.dealloc %k : memref<8xf32>
  return
}
func.func private @__tfc_block_other(%in: memref<8xf32>, %out: memref<8xf32>) attributes {tfc.block_function} {
  memref.copy %in, %out : memref<8xf32> to memref<8xf32>
  return
}
