// RUN: tfc-opt %s -split-input-file -verify-diagnostics --tfc-map-loops-to-gpu | FileCheck %s

// An outermost parallel loop becomes a launch of 256-thread blocks over its
// linearised iterations; the body runs under a bounds check.
// CHECK-LABEL: func.func @elementwise
// CHECK: %[[BLOCKS:.*]] = arith.ceildivui %[[N:[0-9]+]], %c256
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[BLOCKS]], %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256
// CHECK: %[[ID:.*]] = arith.addi %{{.*}}, %[[TX]]
// CHECK: arith.cmpi ult, %[[ID]], %[[N]]
// CHECK: scf.if
// CHECK: arith.remui
// CHECK: arith.divui
// CHECK: math.exp
// CHECK: memref.store
// CHECK-NOT: scf.parallel
func.func @elementwise(%a: memref<?x?xf32>, %b: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    %v = memref.load %a[%i, %j] : memref<?x?xf32>
    %e = math.exp %v : f32
    memref.store %e, %b[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return
}

// -----

// Host code must not touch buffers: they live on the device.
func.func @host_read(%a: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{this operation would access device memory from the host}}
  %v = memref.load %a[%c0] : memref<4xf32>
  return %v : f32
}

// -----

// A shape buffer of memref.reshape stays on the host (stack).
// CHECK-LABEL: func.func @shape_buffer
// CHECK: %[[S:.*]] = memref.alloca() : memref<2xi64>
// CHECK: memref.store %{{.*}}, %[[S]]
// CHECK: memref.reshape %{{.*}}(%[[S]])
// CHECK-NOT: memref.dealloc
func.func @shape_buffer(%a: memref<?xf32>, %n: i64) -> memref<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i64
  %s = memref.alloc() : memref<2xi64>
  memref.store %one, %s[%c0] : memref<2xi64>
  memref.store %n, %s[%c1] : memref<2xi64>
  %r = memref.reshape %a(%s) : (memref<?xf32>, memref<2xi64>) -> memref<?x?xf32>
  memref.dealloc %s : memref<2xi64>
  return %r : memref<?x?xf32>
}

// -----

// The deallocation pipeline's lists (where a layer function's results leave
// ownership to run time): pointers and conditions the host fills, passes to
// its private helper and reads back stay on the host stack, and the helper
// reads and writes them there.
// CHECK-LABEL: func.func @dealloc_lists
// CHECK: %[[P:.*]] = memref.alloca() : memref<2xindex>
// CHECK: %[[C:.*]] = memref.alloca() : memref<2xi1>
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: call @helper
// CHECK: memref.load %[[C]]
// CHECK-NOT: memref.dealloc %[[P]]
func.func @dealloc_lists(%a: memref<4xf32>, %b: memref<4xf32>) -> i1 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %p = memref.alloc() : memref<2xindex>
  %c = memref.alloc() : memref<2xi1>
  %pa = memref.extract_aligned_pointer_as_index %a : memref<4xf32> -> index
  %pb = memref.extract_aligned_pointer_as_index %b : memref<4xf32> -> index
  memref.store %pa, %p[%c0] : memref<2xindex>
  memref.store %pb, %p[%c1] : memref<2xindex>
  %pc = memref.cast %p : memref<2xindex> to memref<?xindex>
  %cc = memref.cast %c : memref<2xi1> to memref<?xi1>
  call @helper(%pc, %cc) : (memref<?xindex>, memref<?xi1>) -> ()
  %r = memref.load %c[%c0] : memref<2xi1>
  memref.dealloc %p : memref<2xindex>
  memref.dealloc %c : memref<2xi1>
  return %r : i1
}
func.func private @helper(%p: memref<?xindex>, %c: memref<?xi1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x = memref.load %p[%c0] : memref<?xindex>
  %y = memref.load %p[%c1] : memref<?xindex>
  %e = arith.cmpi eq, %x, %y : index
  memref.store %e, %c[%c0] : memref<?xi1>
  return
}

// -----

// A list a kernel reads is device memory: the host may not fill it.
func.func @device_list(%out: memref<2xi64>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i64
  %l = memref.alloc() : memref<2xi64>
  // expected-error @+1 {{this operation would access device memory from the host}}
  memref.store %one, %l[%c0] : memref<2xi64>
  scf.parallel (%i) = (%c0) to (%c2) step (%c1) {
    %v = memref.load %l[%i] : memref<2xi64>
    memref.store %v, %out[%i] : memref<2xi64>
  }
  memref.dealloc %l : memref<2xi64>
  return
}
