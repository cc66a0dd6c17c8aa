// The CPU attention kernel's two ways of scoring a key tile
// (Attention.cpp): a block of more than kAttentionDirectRows (2) query rows
// reads K transposed once per call into tiles of D x 16 and scores all its
// rows with D steps of one tile load and one FMA per row; a block of 1-2
// rows (a decode step; the last rows of a prompt) takes each of the 16
// scores as a dot product of contiguous rows of Q and K (masked chunks of
// the head dimension, one horizontal sum, inserted at its lane).
// RUN: tfc-opt %s --tfc-cpu-lower-kernels | FileCheck %s

// CHECK-LABEL: func @attention_decode
// The transposed tiles exist only when some block has more than 2 rows.
// CHECK: %[[MANY:.*]] = arith.cmpi ugt, %{{.*}}, %c2{{.*}} : index
// CHECK: %[[TILES:.*]] = arith.select %[[MANY]], %{{.*}}, %c0{{.*}} : index
// CHECK: %[[KT:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %[[TILES]], %{{.*}}) {alignment = 64 : i64} : memref<?x?x?x?x16xf32>
// CHECK: %[[DIRECT:.*]] = arith.cmpi ule, %{{.*}}, %c2{{.*}} : index
// The block's scores from the tiles only when not direct.
// CHECK: %[[NOT:.*]] = arith.xori %[[DIRECT]], %true
// CHECK-NEXT: scf.if %[[NOT]] {
// CHECK: vector.load %[[KT]]
// CHECK: scf.if %[[DIRECT]] -> (vector<16xf32>) {
// CHECK: scf.for %[[JJ:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<16xf32>) {
// CHECK: vector.maskedload %{{.*}} : memref<1x9x?x64xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK: vector.maskedload %{{.*}} : memref<1x3x?x64xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK: math.fma
// CHECK: vector.reduction <add>
// CHECK: vector.insert %{{.*}}, %{{.*}} [%[[JJ]]] : f32 into vector<16xf32>
// CHECK: } else {
// CHECK: vector.load %{{.*}} : memref<8x16xf32>, vector<16xf32>
func.func @attention_decode(%q: memref<1x9x?x64xf32>, %k: memref<1x3x?x64xf32>, %v: memref<1x3x?x64xf32>, %out: memref<1x9x?x64xf32>) {
  tfc_kernel.attention %q, %k, %v outs(%out) {causal, scale = 0.125} : (memref<1x9x?x64xf32>, memref<1x3x?x64xf32>, memref<1x3x?x64xf32>, memref<1x9x?x64xf32>) -> ()
  return
}
