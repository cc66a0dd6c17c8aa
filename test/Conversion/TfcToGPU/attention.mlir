// The GPU flash-attention kernels. f16/bf16 with head sizes that are
// multiples of 16 take the tensor-core kernel (MmaAttention.cpp): one block
// of 4 warps per (64 query rows, head, batch), K/V tiles of 64 keys in
// shared memory in their own type (rows padded by 8), Q·Kᵀ and P·V on
// mma.sync m16n8k16, the online softmax on the fragments (quad shuffles,
// exp2). Causal with GQA (8 query heads on 2 key/value heads). Other types
// take the SIMT kernel (Attention.cpp): one block of 4 warps per (16 query
// rows, head, batch); K/V tiles of 32 keys in shared memory; the online
// softmax with butterfly shuffles; p_j broadcast with an indexed shuffle;
// with a padding mask.
// REQUIRES: libdevice
// RUN: tfc-opt %s --convert-tfc-to-kernels --one-shot-bufferize="bufferize-function-boundaries" --tfc-cuda-lower-kernels | FileCheck %s --check-prefix=GPU
// RUN: tfc-compile %s --target=cuda --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %if ptxas %{ %check_ptx %t.ptx | FileCheck %s --check-prefix=ASM %}

module attributes {tfc.target = #tfc.target<cuda>, tfc.model = "attn"} {
  // GPU-LABEL: func.func @causal
  // GPU: %[[QB:.*]] = arith.ceildivui %{{.*}}, %c64
  // GPU: gpu.launch blocks(%{{.*}}) in (%{{.*}} = %[[QB]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%{{.*}}) in (%{{.*}} = %c128
  // GPU-COUNT-2: memref.alloca() : memref<64x72xf16, #gpu.address_space<workgroup>>
  // GPU: gpu.barrier
  // GPU: nvvm.mma.sync {{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>
  // GPU: gpu.shuffle {{ *}}xor
  // GPU: math.exp2
  // GPU: arith.truncf %{{.*}} : f32 to f16
  // GPU: nvvm.mma.sync
  // GPU: gpu.barrier
  // GPU-NOT: math.exp
  // GPU: arith.truncf %{{.*}} : f32 to f16
  // GPU-LABEL: func.func @causal_f32
  // GPU: %[[QB:.*]] = arith.ceildivui %{{.*}}, %c16
  // GPU: gpu.launch blocks(%{{.*}}) in (%{{.*}} = %[[QB]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%{{.*}}) in (%{{.*}} = %c128
  // GPU-DAG: memref.alloca() : memref<16x64xf32, #gpu.address_space<workgroup>>
  // GPU-DAG: memref.alloca() : memref<32x65xf32, #gpu.address_space<workgroup>>
  // GPU-DAG: memref.alloca() : memref<32x64xf32, #gpu.address_space<workgroup>>
  // GPU: gpu.barrier
  // GPU: gpu.shuffle {{ *}}xor
  // GPU: math.exp
  // GPU: gpu.shuffle {{ *}}idx
  func.func @causal(%q: tensor<?x8x?x64xf16> {tfc.name = "q", tfc.dims = ["b", 8, "t", 64]},
                    %k: tensor<?x2x?x64xf16> {tfc.name = "k", tfc.dims = ["b", 2, "t", 64]},
                    %v: tensor<?x2x?x64xf16> {tfc.name = "v", tfc.dims = ["b", 2, "t", 64]})
      -> (tensor<?x8x?x64xf16> {tfc.name = "o"}) {
    %o = tfc.attention %q, %k, %v {causal}
        : (tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16>) -> tensor<?x8x?x64xf16>
    return %o : tensor<?x8x?x64xf16>
  }

  func.func @causal_f32(%q: tensor<?x8x?x64xf32> {tfc.name = "q", tfc.dims = ["b", 8, "t", 64]},
                        %k: tensor<?x2x?x64xf32> {tfc.name = "k", tfc.dims = ["b", 2, "t", 64]},
                        %v: tensor<?x2x?x64xf32> {tfc.name = "v", tfc.dims = ["b", 2, "t", 64]})
      -> (tensor<?x8x?x64xf32> {tfc.name = "o"}) {
    %o = tfc.attention %q, %k, %v {causal}
        : (tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>) -> tensor<?x8x?x64xf32>
    return %o : tensor<?x8x?x64xf32>
  }

  // GPU-LABEL: func.func @masked
  // GPU: gpu.launch
  // GPU: memref.load %{{.*}}[%{{.*}}, %c0{{.*}}, %c0{{.*}}, %{{.*}}] : memref<?x1x1x?xf32
  func.func @masked(%q: tensor<?x12x?x64xf32> {tfc.name = "q", tfc.dims = ["b", 12, "t", 64]},
                    %k: tensor<?x12x?x64xf32> {tfc.name = "k", tfc.dims = ["b", 12, "s", 64]},
                    %v: tensor<?x12x?x64xf32> {tfc.name = "v", tfc.dims = ["b", 12, "s", 64]},
                    %m: tensor<?x1x1x?xf32> {tfc.name = "m", tfc.dims = ["b", 1, 1, "s"]})
      -> (tensor<?x12x?x64xf32> {tfc.name = "o"}) {
    %o = tfc.attention %q, %k, %v mask(%m)
        : (tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>, tensor<?x1x1x?xf32>) -> tensor<?x12x?x64xf32>
    return %o : tensor<?x12x?x64xf32>
  }

}

// PTX: // tfc: arch sm_80
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX: ex2.approx
// PTX: shfl.sync.bfly.b32
// PTX: shfl.sync.idx.b32
// PTX: ld.shared
// PTX: bar.sync
// ASM: ptxas sm_80 ok
// ASM: ptxas sm_90 ok
