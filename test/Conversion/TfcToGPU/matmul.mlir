// The GPU products: 64x64 output tiles per block of 16x16 threads, 4x4
// accumulators per thread, K in steps of 16 staged in shared memory; the
// linear's bias and GELU are applied to the accumulators before the store.
// The batched matmul broadcasts the weight's missing batch dims.
// REQUIRES: libdevice
// RUN: tfc-opt %s --convert-tfc-to-kernels --one-shot-bufferize="bufferize-function-boundaries" --tfc-cuda-lower-kernels | FileCheck %s --check-prefix=GPU
// RUN: tfc-compile %s --target=cuda --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %if ptxas %{ %check_ptx %t.ptx | FileCheck %s --check-prefix=ASM %}

module attributes {tfc.target = #tfc.target<cuda>, tfc.model = "mm"} {
  // GPU-LABEL: func.func @linear
  // GPU: memref.collapse_shape
  // GPU: gpu.launch
  // GPU-SAME: in (%{{.*}} = %c256
  // GPU-DAG: memref.alloca() : memref<16x64xf32, #gpu.address_space<workgroup>>
  // GPU: scf.for
  // GPU: gpu.barrier
  // GPU-COUNT-16: math.fma
  // GPU: gpu.barrier
  // GPU: scf.if
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
