// tfc-block-out-params (BlockOutParams.cpp): on the functions of a model's
// layers (tfc.block_function), a result that is an argument (a cache
// written in place) is dropped and each call reads its operand; a result
// the function allocates with sizes from its arguments becomes an argument
// each call allocates before it (same sizes, same alignment); a function
// whose results are neither, and functions that are not a layer's, keep
// their results.
// RUN: tfc-opt %s -allow-unregistered-dialect -split-input-file --tfc-block-out-params | FileCheck %s

// CHECK-LABEL: func.func @entry
// CHECK-SAME: (%[[X:.*]]: memref<?x8xf32>, %[[C0:.*]]: memref<4x8xf32>, %[[C1:.*]]: memref<4x8xf32>)
// CHECK: %[[N:.*]] = memref.dim %[[X]]
// CHECK-NEXT: %[[H1:.*]] = memref.alloc(%[[N]]) {alignment = 64 : i64} : memref<?x8xf32>
// CHECK-NEXT: call @__tfc_block_layer(%[[N]], %[[X]], %[[C0]], %[[H1]]) : (index, memref<?x8xf32>, memref<4x8xf32>, memref<?x8xf32>) -> ()
// CHECK-NEXT: %[[H2:.*]] = memref.alloc(%[[N]]) {alignment = 64 : i64} : memref<?x8xf32>
// CHECK-NEXT: call @__tfc_block_layer(%[[N]], %[[H1]], %[[C1]], %[[H2]])
// CHECK-NEXT: "test.use"(%[[C0]], %[[C1]], %[[H2]])
// CHECK-LABEL: func.func private @__tfc_block_layer
// CHECK-SAME: (%[[AN:.*]]: index, %[[A:.*]]: memref<?x8xf32>, %[[AC:.*]]: memref<4x8xf32>, %[[OUT:.*]]: memref<?x8xf32>)
// CHECK-NOT: memref.alloc
// CHECK: "test.write"(%[[A]], %[[AC]], %[[OUT]])
// CHECK-NEXT: return{{$}}
func.func @entry(%x: memref<?x8xf32>, %c0: memref<4x8xf32>, %c1: memref<4x8xf32>) {
  %i0 = arith.constant 0 : index
  %n = memref.dim %x, %i0 : memref<?x8xf32>
  %k0, %h1 = call @__tfc_block_layer(%n, %x, %c0) : (index, memref<?x8xf32>, memref<4x8xf32>) -> (memref<4x8xf32>, memref<?x8xf32>)
  %k1, %h2 = call @__tfc_block_layer(%n, %h1, %c1) : (index, memref<?x8xf32>, memref<4x8xf32>) -> (memref<4x8xf32>, memref<?x8xf32>)
  "test.use"(%k0, %k1, %h2) : (memref<4x8xf32>, memref<4x8xf32>, memref<?x8xf32>) -> ()
  return
}
func.func private @__tfc_block_layer(%n: index, %a: memref<?x8xf32>, %cache: memref<4x8xf32>) -> (memref<4x8xf32>, memref<?x8xf32>) attributes {tfc.block_function} {
  %out = memref.alloc(%n) {alignment = 64 : i64} : memref<?x8xf32>
  "test.write"(%a, %cache, %out) : (memref<?x8xf32>, memref<4x8xf32>, memref<?x8xf32>) -> ()
  return %cache, %out : memref<4x8xf32>, memref<?x8xf32>
}

// -----

// A result whose size is computed inside, one that is not an allocation,
// and a function that is not a layer's: unchanged.
// CHECK-LABEL: func.func @kept
// CHECK: call @__tfc_block_sized(%{{.*}}) : (index) -> memref<?xf32>
// CHECK: call @__tfc_block_view(%{{.*}}) : (memref<8xf32>) -> memref<4xf32, strided<[1]>>
// CHECK: call @helper(%{{.*}}) : (memref<8xf32>) -> memref<8xf32>
// CHECK-LABEL: func.func private @__tfc_block_sized
// CHECK-SAME: -> memref<?xf32>
// CHECK-LABEL: func.func private @__tfc_block_view
// CHECK-SAME: -> memref<4xf32, strided<[1]>>
// CHECK-LABEL: func.func private @helper
// CHECK-SAME: -> memref<8xf32>
func.func @kept(%n: index, %b: memref<8xf32>) {
  %0 = call @__tfc_block_sized(%n) : (index) -> memref<?xf32>
  %1 = call @__tfc_block_view(%b) : (memref<8xf32>) -> memref<4xf32, strided<[1]>>
  %2 = call @helper(%b) : (memref<8xf32>) -> memref<8xf32>
  "test.use"(%0, %1, %2) : (memref<?xf32>, memref<4xf32, strided<[1]>>, memref<8xf32>) -> ()
  return
}
func.func private @__tfc_block_sized(%n: index) -> memref<?xf32> attributes {tfc.block_function} {
  %two = arith.constant 2 : index
  %m = arith.muli %n, %two : index
  %out = memref.alloc(%m) : memref<?xf32>
  return %out : memref<?xf32>
}
func.func private @__tfc_block_view(%b: memref<8xf32>) -> memref<4xf32, strided<[1]>> attributes {tfc.block_function} {
  %v = memref.subview %b[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  return %v : memref<4xf32, strided<[1]>>
}
func.func private @helper(%b: memref<8xf32>) -> memref<8xf32> {
  return %b : memref<8xf32>
}
