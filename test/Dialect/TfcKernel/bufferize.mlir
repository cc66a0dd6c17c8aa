// One-shot bufferisation handles kernel ops like any destination-style op
// (BufferizableOpInterfaceImpl.cpp): the op is rebuilt on the buffers of its
// operands and writes its destination's buffer; a tensor.empty destination
// becomes an allocation and is not copied (the kernels overwrite all of
// it). No kernel code is emitted here.
// RUN: tfc-opt %s -split-input-file --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s

// CHECK-LABEL: func @chain
// CHECK-SAME: (%[[X:.*]]: memref<?x8xf32>, %[[W:.*]]: memref<16x8xf32>) -> memref<?x16xf32>
// CHECK: %[[A:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x8xf32>
// CHECK-NEXT: tfc_kernel.softmax %[[X]] outs(%[[A]]) : (memref<?x8xf32>, memref<?x8xf32>) -> ()
// CHECK: %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x8x32xf32>
// CHECK-NEXT: tfc_cpu.pack %[[W]] outs(%[[P]]) : (memref<16x8xf32>, memref<1x8x32xf32>) -> ()
// CHECK: %[[Y:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x16xf32>
// CHECK-NEXT: tfc_cpu.gemm %[[A]], %[[P]] outs(%[[Y]]) : (memref<?x8xf32>, memref<1x8x32xf32>, memref<?x16xf32>) -> ()
// CHECK-NOT: memref.copy
// CHECK: return %[[Y]]
func.func @chain(%x: tensor<?x8xf32>, %w: tensor<16x8xf32>) -> tensor<?x16xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %s = tfc_kernel.softmax %x outs(%e) : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %pe = tensor.empty() : tensor<1x8x32xf32>
  %p = tfc_cpu.pack %w outs(%pe) : (tensor<16x8xf32>, tensor<1x8x32xf32>) -> tensor<1x8x32xf32>
  %ye = tensor.empty(%n) : tensor<?x16xf32>
  %y = tfc_cpu.gemm %s, %p outs(%ye) : (tensor<?x8xf32>, tensor<1x8x32xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

// A destination that is an input of the kernel (or still read later) is not
// overwritten in place: bufferisation gives the kernel a new buffer.
// CHECK-LABEL: func @reuse
// CHECK-SAME: (%[[X:.*]]: memref<4x8xf32>) -> (memref<4x8xf32>, memref<4x8xf32>)
// CHECK: %[[A:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
// CHECK-NOT: memref.copy
// CHECK: tfc_kernel.softmax %[[X]] outs(%[[A]])
// CHECK: return %[[X]], %[[A]]
func.func @reuse(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = tfc_kernel.softmax %x outs(%x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x, %s : tensor<4x8xf32>, tensor<4x8xf32>
}
