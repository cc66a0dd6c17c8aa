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
