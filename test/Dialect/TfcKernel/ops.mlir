// The kernel ops print and parse in both forms: on tensors (returning the
// destination's new value) and on buffers (returning nothing).
// RUN: tfc-opt %s | tfc-opt | FileCheck %s

// CHECK-LABEL: func @tensors
// CHECK: tfc_kernel.softmax %{{.*}} outs(%{{.*}}) : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK: tfc_kernel.layer_norm %{{.*}} scale(%{{.*}}) bias(%{{.*}}) outs(%{{.*}}) {epsilon = 1.000000e-05 : f64}
// CHECK: tfc_kernel.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}}) outs(%{{.*}}) {alibi = 8.000000e+00 : f64, causal, scale = 5.000000e-01 : f64, window = 4 : i64}
// CHECK: tfc_cpu.pack %{{.*}} outs(%{{.*}}) {transposed} : (tensor<8x40xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
// CHECK: tfc_cpu.gemm %{{.*}}, %{{.*}} outs(%{{.*}}) activation(gelu_tanh)
func.func @tensors(%x: tensor<?x8xf32>, %g: tensor<8xf32>, %q: tensor<1x2x?x4xf32>, %m: tensor<1x1x1x?xf32>, %w: tensor<8x40xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<1x2x?x4xf32>, tensor<?x40xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %0 = tfc_kernel.softmax %x outs(%e) : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %1 = tfc_kernel.layer_norm %0 scale(%g) bias(%g) outs(%e) {epsilon = 1.0e-5} : (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %2 = tfc_kernel.attention %q, %q, %q mask(%m) outs(%q) {causal, scale = 0.5, window = 4, alibi = 8.0} : (tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>, tensor<1x1x1x?xf32>, tensor<1x2x?x4xf32>) -> tensor<1x2x?x4xf32>
  %pe = tensor.empty() : tensor<2x8x32xf32>
  %p = tfc_cpu.pack %w outs(%pe) {transposed} : (tensor<8x40xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %ye = tensor.empty(%n) : tensor<?x40xf32>
  %y = tfc_cpu.gemm %x, %p outs(%ye) activation(gelu_tanh) : (tensor<?x8xf32>, tensor<2x8x32xf32>, tensor<?x40xf32>) -> tensor<?x40xf32>
  return %0, %1, %2, %y : tensor<?x8xf32>, tensor<?x8xf32>, tensor<1x2x?x4xf32>, tensor<?x40xf32>
}

// CHECK-LABEL: func @buffers
// CHECK: tfc_kernel.matmul %{{.*}}, %{{.*}} outs(%{{.*}}) {transpose_rhs} : (memref<2x?x16xf32>, memref<?x16xf32>, memref<2x?x?xf32>) -> ()
// CHECK: tfc_kernel.rms_norm %{{.*}} residual(%{{.*}}) outs(%{{.*}}) {epsilon = 9.9999999999999995E-7 : f64} : (memref<2x?x16xf32, strided<[?, 16, 1]>>, memref<2x?x16xf32>, memref<2x?x16xf32>) -> ()
// CHECK: tfc_cpu.qembedding %{{.*}}[%{{.*}}] format "q8_0" outs(%{{.*}}) : (memref<10x2x34xi8>, memref<?xi32>, memref<?x64xf32>) -> ()
func.func @buffers(%a: memref<2x?x16xf32>, %b: memref<?x16xf32>, %c: memref<2x?x?xf32>, %s: memref<2x?x16xf32, strided<[?, 16, 1]>>, %o: memref<2x?x16xf32>, %t: memref<10x2x34xi8>, %ids: memref<?xi32>, %rows: memref<?x64xf32>) {
  tfc_kernel.matmul %a, %b outs(%c) {transpose_rhs} : (memref<2x?x16xf32>, memref<?x16xf32>, memref<2x?x?xf32>) -> ()
  tfc_kernel.rms_norm %s residual(%a) outs(%o) {epsilon = 1.0e-6} : (memref<2x?x16xf32, strided<[?, 16, 1]>>, memref<2x?x16xf32>, memref<2x?x16xf32>) -> ()
  tfc_cpu.qembedding %t[%ids] format "q8_0" outs(%rows) : (memref<10x2x34xi8>, memref<?xi32>, memref<?x64xf32>) -> ()
  return
}
