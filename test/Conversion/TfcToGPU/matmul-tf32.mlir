// --gpu-fp32-matmul=tf32 (tfc-cuda-lower-kernels{fp32-matmul=tf32}): f32
// products on the tensor cores, as PyTorch's allow_tf32. The tiles stay f32
// in shared memory (rows of 16 + 4 floats), every fragment value is rounded
// to tf32 (cvt.rna) and each k step of 16 is two mma.sync.m16n8k8 per warp
// tile (2 x 4 tiles: 16 per step). Without the option the same products are
// the f32 SIMT kernel. A value other than ieee or tf32 is an error.
// REQUIRES: libdevice
// RUN: tfc-opt %s --convert-tfc-to-kernels --one-shot-bufferize="bufferize-function-boundaries" --tfc-cuda-lower-kernels=fp32-matmul=tf32 | FileCheck %s --check-prefix=GPU
// RUN: tfc-opt %s --convert-tfc-to-kernels --one-shot-bufferize="bufferize-function-boundaries" --tfc-cuda-lower-kernels | FileCheck %s --check-prefix=IEEE
// RUN: not tfc-opt %s --convert-tfc-to-kernels --one-shot-bufferize="bufferize-function-boundaries" --tfc-cuda-lower-kernels=fp32-matmul=f16 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: tfc-compile %s --target=cuda --gpu-fp32-matmul=tf32 --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %if ptxas %{ %check_ptx %t.ptx | FileCheck %s --check-prefix=ASM %}

// GPU-LABEL: func.func @linear
// GPU: gpu.launch
// GPU-SAME: in (%{{.*}} = %c128
// GPU-DAG: memref.alloca() : memref<2x64x20xf32, #gpu.address_space<workgroup>>
// GPU: gpu.barrier
// GPU: nvvm.convert.float.to.tf32 %{{.*}} {rnd = #nvvm.fp_rnd_mode<rna>}
// GPU-COUNT-16: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>} : (i32, i32, f32)
// GPU: gpu.barrier
// GPU: math.tanh
// GPU-LABEL: func.func @batched
// GPU-COUNT-16: nvvm.mma.sync {{.*}}#nvvm.mma_type<tf32>{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 8>
// IEEE-LABEL: func.func @linear
// IEEE-NOT: nvvm.mma.sync
// IEEE: math.fma
// BAD: error: fp32-matmul takes ieee or tf32, not 'f16'

// PTX: // tfc: arch sm_80
// PTX-DAG: cvt.rna.tf32.f32
// PTX-DAG: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// ASM: ptxas sm_80 ok
// ASM: ptxas sm_90 ok

module attributes {tfc.target = #tfc.target<cuda>, tfc.model = "mm"} {
  func.func @linear(%x: tensor<?x?x768xf32> {tfc.name = "x", tfc.dims = ["b", "t", 768]},
                    %w: tensor<3072x768xf32> {tfc.name = "w", tfc.dims = [3072, 768]},
                    %bias: tensor<3072xf32> {tfc.name = "bias", tfc.dims = [3072]})
      -> (tensor<?x?x3072xf32> {tfc.name = "y"}) {
    %y = tfc.linear %x, %w, %bias activation(gelu_tanh)
        : (tensor<?x?x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>) -> tensor<?x?x3072xf32>
    return %y : tensor<?x?x3072xf32>
  }
  func.func @batched(%a: tensor<?x12x?x64xf32> {tfc.name = "a", tfc.dims = ["b", 12, "t", 64]},
                     %c: tensor<?x12x?x64xf32> {tfc.name = "c", tfc.dims = ["b", 12, "s", 64]})
      -> (tensor<?x12x?x?xf32> {tfc.name = "y"}) {
    %y = tfc.matmul %a, %c {transpose_rhs} : (tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>) -> tensor<?x12x?x?xf32>
    return %y : tensor<?x12x?x?xf32>
  }
}
