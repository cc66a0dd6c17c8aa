// The CPU attention kernel's two ways of scoring a key tile
// (Attention.cpp): a block of more than kAttentionDirectRows (2) query rows
// transposes the 16-key tile once into scratch and scores a row with D
// FMAs of 16 lanes; a block of 1-2 rows (a decode step; the last rows of a
// prompt) skips the transpose and takes each of the 16 scores as a dot
// product of contiguous rows of Q and K (masked chunks of the head
// dimension, one horizontal sum, inserted at its lane).
// RUN: tfc-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s

// CHECK-LABEL: func @attention_decode
// CHECK: %[[DIRECT:.*]] = arith.cmpi ule, %{{.*}}, %c2{{.*}} : index
// The transpose runs only when not direct.
// CHECK: %[[NOT:.*]] = arith.xori %[[DIRECT]], %true
// CHECK-NEXT: scf.if %[[NOT]] {
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x16xf32>
// CHECK: scf.if %[[DIRECT]] -> (vector<16xf32>) {
// CHECK: scf.for %[[JJ:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<16xf32>) {
// CHECK: vector.maskedload %{{.*}} : memref<1x9x?x64xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK: vector.maskedload %{{.*}} : memref<1x3x?x64xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK: math.fma
// CHECK: vector.reduction <add>
// CHECK: vector.insert %{{.*}}, %{{.*}} [%[[JJ]]] : f32 into vector<16xf32>
// CHECK: } else {
// CHECK: vector.load %{{.*}} : memref<?x16xf32>, vector<16xf32>
func.func @attention_decode(%q: tensor<1x9x?x64xf32>, %k: tensor<1x3x?x64xf32>, %v: tensor<1x3x?x64xf32>) -> tensor<1x9x?x64xf32> {
  %0 = tfc.attention %q, %k, %v {causal} : (tensor<1x9x?x64xf32>, tensor<1x3x?x64xf32>, tensor<1x3x?x64xf32>) -> tensor<1x9x?x64xf32>
  return %0 : tensor<1x9x?x64xf32>
}
