// The GPU lowering of softmax, LayerNorm and RMSNorm: one block per row,
// butterfly shuffles within warps, a shared buffer across warps.
// REQUIRES: libdevice
// RUN: tfc-opt %s --convert-tfc-to-kernels --one-shot-bufferize="bufferize-function-boundaries" --tfc-cuda-lower-kernels | FileCheck %s --check-prefix=GPU
// RUN: tfc-compile %s --target=cuda --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %if ptxas %{ %check_ptx %t.ptx | FileCheck %s --check-prefix=ASM %}

module attributes {tfc.target = #tfc.target<cuda>, tfc.model = "rows"} {
  // GPU-LABEL: func.func @forward
  // Softmax over 768: a block of 256 threads (8 warps) per row.
  // GPU: gpu.launch
  // GPU-SAME: threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c256
  // GPU: memref.alloca() : memref<8xf32, #gpu.address_space<workgroup>>
  // GPU: gpu.shuffle {{ *}}xor %{{.*}}, %c16_i32, %c32_i32{{.*}} : f32
  // GPU: arith.maximumf
  // GPU: gpu.barrier
  // GPU: math.exp
  // LayerNorm with a residual: mean, centred variance, rsqrt.
  // GPU: gpu.launch
  // GPU: math.rsqrt
  // RMSNorm over 64 features: a single warp, no shared memory.
  // GPU: gpu.launch
  // GPU-SAME: in (%{{.*}} = %c32
  // GPU-NOT: gpu.barrier
  // GPU: math.rsqrt
  // GPU: return
  func.func @forward(%x: tensor<?x768xf32> {tfc.name = "x", tfc.dims = ["rows", 768]},
                     %r: tensor<?x768xf32> {tfc.name = "r", tfc.dims = ["rows", 768]},
                     %y: tensor<?x64xf32> {tfc.name = "y", tfc.dims = ["rows2", 64]},
                     %g: tensor<768xf32> {tfc.name = "g", tfc.dims = [768]},
                     %b: tensor<768xf32> {tfc.name = "b", tfc.dims = [768]},
                     %g2: tensor<64xf32> {tfc.name = "g2", tfc.dims = [64]})
      -> (tensor<?x768xf32> {tfc.name = "s"}, tensor<?x768xf32> {tfc.name = "n"},
          tensor<?x64xf32> {tfc.name = "m"}) {
    %s = tfc.softmax %x {axis = 1} : tensor<?x768xf32>
    %n = tfc.layer_norm %x scale(%g) bias(%b) residual(%r) {epsilon = 1.0e-5}
        : (tensor<?x768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<?x768xf32>) -> tensor<?x768xf32>
    %m = tfc.rms_norm %y scale(%g2) : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    return %s, %n, %m : tensor<?x768xf32>, tensor<?x768xf32>, tensor<?x64xf32>
  }
}

// PTX: // tfc: arch sm_80
// PTX: .target sm_80
// PTX: shfl.sync.bfly.b32
// PTX: st.shared
// PTX: bar.sync
// PTX: ld.shared
// PTX: // tfc: arch sm_90
// PTX: .target sm_90
// ASM: ptxas sm_80 ok
// ASM: ptxas sm_90 ok
