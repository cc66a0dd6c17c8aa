// The GEMM kernels of a module whose kernels are tiled for AVX2
// (tfc.cpu_isa = "avx2", KernelConfig.h): 4 x 24 register tiles of 8-lane
// vectors, 12 accumulators (+ 3 vectors of B + 1 broadcast of A: 16 ymm),
// tasks of up to 64 rows x 6 panels (one panel when there is one block of
// rows), k blocks of 256; tfc.matmul uses the same tile with masked loads of
// B. (lower-kernels.mlir has the AVX-512 ones.)
// RUN: tfc-opt %s -split-input-file -verify-diagnostics --tfc-cpu-lower-kernels | FileCheck %s

// N = 60 in 3 panels of 24: three 8-lane chunks per tile, the masks cut at 60.
// CHECK-LABEL: func @gemm_avx2
// CHECK-SAME: (%[[X:.*]]: memref<?x64xf32>, %[[W:.*]]: memref<3x64x24xf32>, %{{.*}}: memref<?x60xf32>)
// CHECK: %[[MB:.*]] = arith.ceildivui %{{.*}}, %c64 : index
// Row blocks as equal as 4-row tiles allow.
// CHECK: %[[MB1:.*]] = arith.maxui %[[MB]], %c1 : index
// CHECK: %[[PER:.*]] = arith.ceildivui %{{.*}}, %[[MB1]] : index
// CHECK: %[[TILES:.*]] = arith.ceildivui %[[PER]], %c4 : index
// CHECK: %[[ROWS:.*]] = arith.muli %[[TILES]], %c4 : index
// CHECK: %[[ONE:.*]] = arith.cmpi ule, %[[MB]], %c1{{.*}} : index
// CHECK: %[[PPT:.*]] = arith.select %[[ONE]], %c1{{.*}}, %c6{{.*}} : index
// One panel per tile: groups in units of a panel.
// CHECK: %[[UNITS:.*]] = arith.ceildivui %c3{{.*}}, %c1{{.*}} : index
// CHECK: %[[UPT:.*]] = arith.divui %[[PPT]], %c1{{.*}} : index
// CHECK: %[[PG:.*]] = arith.ceildivui %[[UNITS]], %[[UPT]] : index
// Column groups outermost: each thread a contiguous slice of the weight.
// CHECK: scf.parallel (%{{.*}}, %[[BI:.*]]) = (%{{.*}}, %{{.*}}) to (%[[PG]], %[[MB]])
// CHECK: %[[MBEGIN:.*]] = arith.muli %[[BI]], %[[ROWS]] : index
// Each task calls the module's one task function of this configuration (4 x
// 1 x 24, 8 lanes, no activation, no bias); K = 64 is one k block (of at
// most 256).
// CHECK: func.call @[[TASK:__tfc_cpu_gemm_4x1x24_v8_none]](%{{.*}}, %{{.*}}, %{{.*}}, %c60{{.*}}, %[[MBEGIN]], %{{.*}}, %{{.*}}, %{{.*}}, %c64{{.*}}, %c64{{.*}})
// CHECK: func.func private @[[TASK]](%[[A:.*]]: memref<?x?xf32, strided<[?, 1], offset: ?>>, %[[W:.*]]: memref<?x?x24xf32, strided<[?, 24, 1], offset: ?>>, %[[C:.*]]: memref<?x?xf32, strided<[?, 1], offset: ?>>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index)
// CHECK-SAME: llvm.linkage = #llvm.linkage<internal>
// CHECK-SAME: passthrough = ["noinline"]
// CHECK: %[[N0:.*]] = arith.muli %{{.*}}, %c24{{.*}} : index
// CHECK: vector.create_mask %{{.*}} : vector<8xi1>
// CHECK: vector.create_mask %{{.*}} : vector<8xi1>
// CHECK: vector.create_mask %{{.*}} : vector<8xi1>
// No prefetch of A (the loop is front-end bound; KernelConfig.h).
// CHECK: scf.for %{{.*}} step %c4
// CHECK-NOT: memref.prefetch %[[A]]
// CHECK: %[[ACC:.*]]:13 = scf.for
// CHECK: vector.load %[[W]][%{{.*}}, %{{.*}}, %c0{{.*}}] : memref<?x?x24xf32, strided<[?, 24, 1], offset: ?>>, vector<8xf32>
// CHECK: vector.load %[[W]][%{{.*}}, %{{.*}}, %c8{{.*}}] : memref<?x?x24xf32, strided<[?, 24, 1], offset: ?>>, vector<8xf32>
// CHECK: vector.load %[[W]][%{{.*}}, %{{.*}}, %c16{{.*}}] : memref<?x?x24xf32, strided<[?, 24, 1], offset: ?>>, vector<8xf32>
// CHECK-COUNT-12: math.fma %{{.*}} : vector<8xf32>
// CHECK-COUNT-12: vector.maskedstore %[[C]]{{.*}} : memref<?x?xf32, strided<[?, 1], offset: ?>>, vector<8xi1>, vector<8xf32>
// The remainder rows, one at a time: 3 accumulators.
// CHECK: %{{.*}}:3 = scf.for
module attributes {tfc.cpu_isa = "avx2"} {
  func.func @gemm_avx2(%x: memref<?x64xf32>, %w: memref<3x64x24xf32>, %out: memref<?x60xf32>) {
    tfc_cpu.gemm %x, %w outs(%out) : (memref<?x64xf32>, memref<3x64x24xf32>, memref<?x60xf32>) -> ()
    return
  }
}

// -----

// Activations times activations: 24-column strips read with masked loads.
// CHECK-LABEL: func @matmul_avx2
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c24
// CHECK: %{{.*}}:12 = scf.for
// CHECK-COUNT-3: vector.maskedload %{{.*}} : memref<?x?x?xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK-COUNT-12: math.fma
module attributes {tfc.cpu_isa = "avx2"} {
  func.func @matmul_avx2(%a: memref<?x?x?xf32>, %b: memref<?x?x?xf32>, %out: memref<?x?x?xf32>) {
    tfc_kernel.matmul %a, %b outs(%out) : (memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>) -> ()
    return
  }
}
