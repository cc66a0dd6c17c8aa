// The activations' scale block of the K-quants (tfc-compile
// --activation-block=256, the module's tfc.activation_block): llama.cpp's
// Q8_K, one int8 scale per 256 activations. convert-tfc-linear-to-cpu-gemm
// gives a K-quant weight's tfc_cpu.qgemm activation_block = 256 and leaves
// the 32-element formats at 32 (the default, not printed); the kernels'
// lowering calls the quantiser of that block (lower-kernels.mlir,
// @qgemm_activation_block_256).
// RUN: tfc-opt %s -split-input-file -verify-diagnostics --convert-tfc-linear-to-cpu-gemm | FileCheck %s

// CHECK-LABEL: func.func @k_quant
// CHECK: tfc_cpu.qgemm %{{.*}}, %{{.*}} format "q4_k" outs(%{{.*}}) {activation_block = 256 : i64}
// CHECK: tfc_cpu.qgemm %{{.*}}, %{{.*}} format "q8_0" outs(%{{.*}}) :
module attributes {tfc.activation_block = 256 : i64} {
func.func @k_quant(%x: tensor<?x256xf32>) -> tensor<?x32xf32> {
  %w = tfc.weight "w" {quant = "q4_k"} : tensor<32x256xf32>
  %v = tfc.weight "v" {quant = "q8_0"} : tensor<32x32xf32>
  %0 = tfc.linear %x, %w : (tensor<?x256xf32>, tensor<32x256xf32>) -> tensor<?x32xf32>
  %1 = tfc.linear %0, %v : (tensor<?x32xf32>, tensor<32x32xf32>) -> tensor<?x32xf32>
  return %1 : tensor<?x32xf32>
}
}

// -----

// Without the attribute, every format's activations are quantised per 32.
// CHECK-LABEL: func.func @default
// CHECK: tfc_cpu.qgemm %{{.*}}, %{{.*}} format "q4_k" outs(%{{.*}}) :
func.func @default(%x: tensor<?x256xf32>) -> tensor<?x16xf32> {
  %w = tfc.weight "w" {quant = "q4_k"} : tensor<16x256xf32>
  %0 = tfc.linear %x, %w : (tensor<?x256xf32>, tensor<16x256xf32>) -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

// expected-error @+1 {{tfc.activation_block must be 32 or 256 (elements per activation scale), got 64 : i64}}
module attributes {tfc.activation_block = 64 : i64} {
func.func @bad(%x: tensor<?x256xf32>) -> tensor<?x16xf32> {
  %w = tfc.weight "w" {quant = "q4_k"} : tensor<16x256xf32>
  %0 = tfc.linear %x, %w : (tensor<?x256xf32>, tensor<16x256xf32>) -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}
}

// -----

// The op's own check: 256 only for a format of 256-element blocks.
func.func @q8_0_256(%x: tensor<?x64xf32>, %w: tensor<2x2x272xi8>, %o: tensor<?x16xf32>) -> tensor<?x16xf32> {
  // expected-error @+1 {{activation_block must be 32, or 256 for a format of 256-element blocks (the K-quants); got 256 for q8_0}}
  %0 = tfc_cpu.qgemm %x, %w format "q8_0" outs(%o) {activation_block = 256 : i64} : (tensor<?x64xf32>, tensor<2x2x272xi8>, tensor<?x16xf32>) -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

