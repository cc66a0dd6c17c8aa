// The GPU products in f32 on CUDA cores. linear (both operands contiguous
// along k): 128 x 128 tiles where they fill the GPU, else 64 x 64 ones,
// else 64 x 64 ones with K split and a kernel adding the partial sums in
// order; the operand tiles land by cp.async in two buffers, [tile][16 + 4],
// and are read as float4 along k; the linear's bias and GELU are applied to
// the accumulators (or the sums) before the store. matmul: 64x64 tiles of
// 16x16 threads, 4x4 accumulators each, K staged k-major. The batched
// matmul broadcasts the weight's missing batch dims. A linear of 1 to 4 rows
// (a decode step) is a matrix-vector product first: a warp per output
// column, 16-byte loads of the weight row and the input rows (4 per lane in
// flight, f32 vector sums), a shuffle reduction, the epilogue in lane 0;
// rows not whole 16-byte copies take one element per lane.
// REQUIRES: libdevice
// RUN: tfc-opt %s --convert-tfc-to-kernels --one-shot-bufferize="bufferize-function-boundaries" --tfc-cuda-lower-kernels | FileCheck %s --check-prefix=GPU
// RUN: tfc-compile %s --target=cuda --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %if ptxas %{ %check_ptx %t.ptx | FileCheck %s --check-prefix=ASM %}

module attributes {tfc.target = #tfc.target<cuda>, tfc.model = "mm"} {
  // GPU-LABEL: func.func @linear
  // GPU: memref.collapse_shape
  // GPU: arith.cmpi ule, %{{.*}}, %c4
  // GPU: scf.if
  // GPU: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c128{{.*}} function(@tfc_linear_gemv_f32)
  // GPU: scf.if {{.*}} -> (f32, f32, f32, f32)
  // GPU: scf.for
  // GPU-COUNT-4: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
  // GPU: math.fma {{.*}} : vector<4xf32>
  // GPU: vector.reduction <add>
  // GPU: } else {
  // GPU: scf.for
  // GPU: memref.load
  // GPU: gpu.shuffle  xor
  // GPU: arith.addf
  // GPU: math.tanh
  // GPU: memref.store
  // GPU: } else {
  // GPU: scf.if
  // GPU: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c256{{.*}} function(@tfc_linear_f32)
  // GPU: memref.alloca() : memref<2x128x20xf32, #gpu.address_space<workgroup>>
  // GPU: nvvm.cp.async.shared.global {{.*}}, 16, cache = cg
  // GPU: nvvm.cp.async.commit.group
  // GPU: scf.for
  // GPU: nvvm.cp.async.commit.group
  // GPU-NEXT: nvvm.cp.async.wait.group 1
  // GPU-NEXT: gpu.barrier
  // GPU: scf.for
  // GPU-COUNT-16: vector.load {{.*}} vector<4xf32>
  // GPU-COUNT-256: math.fma
  // GPU: gpu.barrier
  // GPU: arith.addf
  // GPU: math.tanh
  // GPU: memref.store
  // GPU: } else {
  // GPU: scf.if
  // GPU: gpu.launch
  // GPU: memref.alloca() : memref<2x64x20xf32, #gpu.address_space<workgroup>>
  // GPU: scf.for
  // GPU-COUNT-8: vector.load {{.*}} vector<4xf32>
  // GPU-COUNT-64: math.fma
  // GPU: math.tanh
  // GPU: } else {
  // GPU: memref.alloc({{.*}}) : memref<?x?x?xf32>
  // GPU: gpu.launch
  // GPU: memref.alloca() : memref<2x64x20xf32, #gpu.address_space<workgroup>>
  // GPU-NOT: math.tanh
  // GPU: memref.store {{.*}} : memref<?x?x?xf32>
  // GPU: gpu.launch {{.*}} function(@tfc_linear_splitk_sum_f32)
  // GPU: scf.for
  // GPU: memref.load {{.*}} : memref<?x?x?xf32>
  // GPU: arith.addf
  // GPU: math.tanh
  // GPU: memref.store
  func.func @linear(%x: tensor<?x?x768xf32> {tfc.name = "x", tfc.dims = ["b", "t", 768]},
                    %w: tensor<3072x768xf32> {tfc.name = "w", tfc.dims = [3072, 768]},
                    %bias: tensor<3072xf32> {tfc.name = "bias", tfc.dims = [3072]})
      -> (tensor<?x?x3072xf32> {tfc.name = "y"}) {
    %y = tfc.linear %x, %w, %bias activation(gelu_tanh)
        : (tensor<?x?x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>) -> tensor<?x?x3072xf32>
    return %y : tensor<?x?x3072xf32>
  }

  // GPU-LABEL: func.func @batched
  // GPU: gpu.launch
  // GPU: memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<64x32xf32
  func.func @batched(%a: tensor<?x12x?x64xf32> {tfc.name = "a", tfc.dims = ["b", 12, "t", 64]},
                     %w: tensor<64x32xf32> {tfc.name = "w", tfc.dims = [64, 32]})
      -> (tensor<?x12x?x32xf32> {tfc.name = "y"}) {
    %y = tfc.matmul %a, %w : (tensor<?x12x?x64xf32>, tensor<64x32xf32>) -> tensor<?x12x?x32xf32>
    return %y : tensor<?x12x?x32xf32>
  }
}

// PTX: // tfc: arch sm_80
// PTX: bar.sync
// PTX: fma.rn.f32
// ASM: ptxas sm_80 ok
// ASM: ptxas sm_90 ok
