// tfc-outline-blocks (OutlineBlocks.cpp): the block calls between
// tfc.block_begin/tfc.block_end markers that compute the same thing up to
// the values they read become calls of one private, internal, noinline
// function made from the first; a call that is the only one of its kind
// stays inline and its inner calls are tried; constants are defined again
// inside; every marker is erased.
// RUN: tfc-opt %s -split-input-file --tfc-outline-blocks | FileCheck %s
// RUN: tfc-opt %s -split-input-file --tfc-outline-blocks=inline-only | FileCheck %s --check-prefix=INLINE

// Three layers that differ in their weights and hidden state: one function,
// three calls, each in the place of its ops; the buffer a layer allocates
// and the next one reads and frees is a result, its dim an argument.
// CHECK-LABEL: func.func @layers
// CHECK-SAME: (%[[X:.*]]: memref<?x8xf32>, %[[W0:.*]]: memref<8xf32>, %[[W1:.*]]: memref<8xf32>, %[[W2:.*]]: memref<8xf32>)
// CHECK: %[[N:.*]] = memref.dim %[[X]]
// CHECK-NEXT: %[[H1:.*]] = call @__tfc_block_layer(%[[N]], %[[X]], %[[W0]]) : (index, memref<?x8xf32>, memref<8xf32>) -> memref<?x8xf32>
// CHECK-NEXT: %[[H2:.*]] = call @__tfc_block_layer(%[[N]], %[[H1]], %[[W1]])
// CHECK-NEXT: %[[H3:.*]] = call @__tfc_block_layer(%[[N]], %[[H2]], %[[W2]])
// CHECK-NEXT: return %[[H3]]
// CHECK-NOT: tfc.block
// CHECK-LABEL: func.func private @__tfc_block_layer
// CHECK-SAME: (%[[AN:.*]]: index, %[[A:.*]]: memref<?x8xf32>, %[[AW:.*]]: memref<8xf32>) -> memref<?x8xf32>
// CHECK-SAME: attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"], tfc.block_function}
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.0
// CHECK-NEXT: %[[OUT:.*]] = memref.alloc(%[[AN]])
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[A]], %[[AW]] : {{.*}}) outs(%[[OUT]] :
// CHECK: arith.addf {{.*}}, %[[ONE]]
// CHECK: memref.dealloc %[[A]]
// CHECK-NEXT: return %[[OUT]]
// INLINE-LABEL: func.func @layers
// INLINE-NOT: call
// INLINE-NOT: tfc.block
// INLINE-COUNT-3: memref.dealloc
#map = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @layers(%x: memref<?x8xf32>, %w0: memref<8xf32>, %w1: memref<8xf32>, %w2: memref<8xf32>) -> memref<?x8xf32> {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %n = memref.dim %x, %c0 : memref<?x8xf32>
  tfc.block_begin "layer"
  %h1 = memref.alloc(%n) : memref<?x8xf32>
  linalg.generic {indexing_maps = [#map, #row, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %w0 : memref<?x8xf32>, memref<8xf32>) outs(%h1 : memref<?x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.mulf %a, %b : f32
    %t = arith.addf %s, %one : f32
    linalg.yield %t : f32
  }
  memref.dealloc %x : memref<?x8xf32>
  tfc.block_end "layer"
  tfc.block_begin "layer"
  %h2 = memref.alloc(%n) : memref<?x8xf32>
  linalg.generic {indexing_maps = [#map, #row, #map], iterator_types = ["parallel", "parallel"]} ins(%h1, %w1 : memref<?x8xf32>, memref<8xf32>) outs(%h2 : memref<?x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.mulf %a, %b : f32
    %t = arith.addf %s, %one : f32
    linalg.yield %t : f32
  }
  memref.dealloc %h1 : memref<?x8xf32>
  tfc.block_end "layer"
  tfc.block_begin "layer"
  %h3 = memref.alloc(%n) : memref<?x8xf32>
  linalg.generic {indexing_maps = [#map, #row, #map], iterator_types = ["parallel", "parallel"]} ins(%h2, %w2 : memref<?x8xf32>, memref<8xf32>) outs(%h3 : memref<?x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.mulf %a, %b : f32
    %t = arith.addf %s, %one : f32
    linalg.yield %t : f32
  }
  memref.dealloc %h2 : memref<?x8xf32>
  tfc.block_end "layer"
  return %h3 : memref<?x8xf32>
}

// -----

// The outer calls differ (another constant in the second), so both stay
// inline; their inner calls are alike and become one function. A call of
// another kind that is the only one stays inline too.
// CHECK-LABEL: func.func @nested
// CHECK: arith.mulf
// CHECK: call @__tfc_block_inner(
// CHECK: arith.mulf
// CHECK: call @__tfc_block_inner(
// CHECK: arith.subf
// CHECK-NOT: call
// CHECK: return
// CHECK-NOT: tfc.block
// CHECK-LABEL: func.func private @__tfc_block_inner
// CHECK: arith.addf
// CHECK-NOT: func.func private @__tfc_block_outer
func.func @nested(%x: f32, %y: f32) -> f32 {
  %c2 = arith.constant 2.0 : f32
  %c3 = arith.constant 3.0 : f32
  tfc.block_begin "outer"
  %a = arith.mulf %x, %c2 : f32
  tfc.block_begin "inner"
  %b = arith.addf %a, %y : f32
  %b2 = arith.addf %b, %b : f32
  tfc.block_end "inner"
  tfc.block_end "outer"
  tfc.block_begin "outer"
  %c = arith.mulf %b2, %c3 : f32
  tfc.block_begin "inner"
  %d = arith.addf %c, %y : f32
  %d2 = arith.addf %d, %d : f32
  tfc.block_end "inner"
  tfc.block_end "outer"
  tfc.block_begin "odd"
  %e = arith.subf %d2, %x : f32
  tfc.block_end "odd"
  return %e : f32
}

// -----

// Two calls whose results are used differently (the first's sum is read
// after it, the second's is not) are of different kinds: same ops, other
// function types.
// CHECK-LABEL: func.func @results
// CHECK-NOT: call
// CHECK: return
func.func @results(%x: f32) -> (f32, f32) {
  tfc.block_begin "b"
  %a = arith.addf %x, %x : f32
  %a2 = arith.mulf %a, %a : f32
  tfc.block_end "b"
  tfc.block_begin "b"
  %b = arith.addf %a2, %a2 : f32
  %b2 = arith.mulf %b, %b : f32
  tfc.block_end "b"
  return %a, %b2 : f32, f32
}

// -----

// A view of a state that CSE shared: the first call made it, the second
// reads it. It is made again in the second (views, sizes and strides are
// pure and cheap), so that both calls are of one kind.
// CHECK-LABEL: func.func @shared_view
// CHECK: call @__tfc_block_b(%arg0, %arg3, %arg1)
// CHECK-NEXT: call @__tfc_block_b(%arg0, %arg3, %arg2)
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @__tfc_block_b
// CHECK: memref.subview
// CHECK: memref.load
// CHECK: memref.store
func.func @shared_view(%s: memref<?x8xf32>, %x0: memref<8xf32>, %x1: memref<8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  tfc.block_begin "b"
  %v = memref.subview %s[0, 0] [%n, 8] [1, 1] : memref<?x8xf32> to memref<?x8xf32, strided<[8, 1]>>
  %e = memref.load %v[%c0, %c0] : memref<?x8xf32, strided<[8, 1]>>
  memref.store %e, %x0[%c0] : memref<8xf32>
  tfc.block_end "b"
  tfc.block_begin "b"
  %e2 = memref.load %v[%c0, %c0] : memref<?x8xf32, strided<[8, 1]>>
  memref.store %e2, %x1[%c0] : memref<8xf32>
  tfc.block_end "b"
  return
}
