// f16 and bf16 products run on the tensor cores: mma.sync.m16n8k16 with f32
// accumulators, operand tiles staged in shared memory in their own type, two
// buffers each (a linear's row-major operands by cp.async, the next step's
// landing during this one's products; other products by loads and stores),
// fragments loaded by ldmatrix.x4 (2 for A, 2 for B per k step).
// REQUIRES: libdevice
// RUN: tfc-opt %s --convert-tfc-to-kernels --one-shot-bufferize="bufferize-function-boundaries" --tfc-cuda-lower-kernels | FileCheck %s --check-prefix=GPU
// RUN: tfc-compile %s --target=cuda --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %if ptxas %{ %check_ptx %t.ptx | FileCheck %s --check-prefix=ASM %}

// GPU-LABEL: func.func @linear
// GPU: gpu.launch
// GPU-SAME: in (%{{.*}} = %c128
// GPU-DAG: memref.alloca() : memref<2x64x24xf16, #gpu.address_space<workgroup>>
// GPU: nvvm.cp.async.shared.global {{.*}}, 16, cache = cg
// GPU: nvvm.cp.async.commit.group
// GPU: nvvm.cp.async.wait.group 1
// GPU: gpu.barrier
// GPU-COUNT-4: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<64x24xf16, strided<[24, 1], offset: ?>, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// GPU-COUNT-8: nvvm.mma.sync {{.*}}layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32)
// GPU: gpu.barrier
// GPU: math.tanh
// GPU: arith.truncf %{{.*}} : f32 to f16
// GPU-LABEL: func.func @batched
// GPU: memref.alloca() : memref<2x64x24xbf16, #gpu.address_space<workgroup>>
// GPU-NOT: nvvm.cp.async.shared.global
// GPU: nvgpu.ldmatrix %{{.*}} : memref<64x24xbf16, strided<[24, 1], offset: ?>, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// GPU: vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// GPU-COUNT-8: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>{{.*}} : (i32, i32, f32)

// PTX: // tfc: arch sm_80
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// ASM: ptxas sm_80 ok
// ASM: ptxas sm_90 ok

module attributes {tfc.target = #tfc.target<cuda>, tfc.model = "mm"} {
  func.func @linear(%x: tensor<?x?x768xf16> {tfc.name = "x", tfc.dims = ["b", "t", 768]},
                    %w: tensor<3072x768xf16> {tfc.name = "w", tfc.dims = [3072, 768]},
                    %bias: tensor<3072xf16> {tfc.name = "bias", tfc.dims = [3072]})
      -> (tensor<?x?x3072xf16> {tfc.name = "y"}) {
    %y = tfc.linear %x, %w, %bias activation(gelu_tanh)
        : (tensor<?x?x768xf16>, tensor<3072x768xf16>, tensor<3072xf16>) -> tensor<?x?x3072xf16>
    return %y : tensor<?x?x3072xf16>
  }
  func.func @batched(%a: tensor<?x12x?x64xbf16> {tfc.name = "a", tfc.dims = ["b", 12, "t", 64]},
                     %c: tensor<?x12x?x64xbf16> {tfc.name = "c", tfc.dims = ["b", 12, "s", 64]})
      -> (tensor<?x12x?x?xbf16> {tfc.name = "y"}) {
    %y = tfc.matmul %a, %c {transpose_rhs} : (tensor<?x12x?x64xbf16>, tensor<?x12x?x64xbf16>) -> tensor<?x12x?x?xbf16>
    return %y : tensor<?x12x?x?xbf16>
  }
}
