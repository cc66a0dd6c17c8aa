// tfc-cuda-lower-kernels on kernel ops over buffers (LowerKernels.cpp and the
// emitters in RowKernels.cpp, Attention.cpp, Matmul.cpp): each op becomes
// the gpu.launch of its kernel, reading its operand buffers and writing its
// destination; nothing else of the function changes.
// RUN: tfc-opt %s -split-input-file -verify-diagnostics --tfc-cuda-lower-kernels | FileCheck %s

// Row kernels: softmax over 768 (a block of 256 threads per row, shuffles
// and a shared buffer across warps); RMSNorm over 64 (one warp, no shared
// memory).
// CHECK-LABEL: func @rows
// CHECK-SAME: (%[[X:.*]]: memref<?x768xf32>, %[[S:.*]]: memref<?x768xf32>, %[[Y:.*]]: memref<?x64xf32>, %[[G:.*]]: memref<64xf32>, %[[M:.*]]: memref<?x64xf32>)
// CHECK: gpu.launch
// CHECK-SAME: threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c256
// CHECK: memref.alloca() : memref<8xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.shuffle {{ *}}xor
// CHECK: math.exp
// CHECK: memref.store %{{.*}}, %[[S]]
// CHECK: gpu.launch
// CHECK-SAME: in (%{{.*}} = %c32
// CHECK-NOT: gpu.barrier
// CHECK: math.rsqrt
// CHECK: memref.store %{{.*}}, %[[M]]
// CHECK-NOT: tfc_kernel
// CHECK: return
func.func @rows(%x: memref<?x768xf32>, %s: memref<?x768xf32>, %y: memref<?x64xf32>, %g: memref<64xf32>, %m: memref<?x64xf32>) {
  tfc_kernel.softmax %x outs(%s) : (memref<?x768xf32>, memref<?x768xf32>) -> ()
  tfc_kernel.rms_norm %y scale(%g) outs(%m) {epsilon = 1.0e-6} : (memref<?x64xf32>, memref<64xf32>, memref<?x64xf32>) -> ()
  return
}

// -----

// Flash attention, causal GQA. f16 on the tensor cores: a block of 4 warps
// per 64 query rows; K and V tiles of 64 keys in shared memory as f16
// (rows padded by 8); both products on mma.sync. f32 (and head sizes the
// tensor-core kernel does not take, 40 here) on FMAs: a block per 16 query
// rows; K (padded) and V tiles of 32 keys as f32.
// CHECK-LABEL: func @attention
// CHECK: %[[QB:.*]] = arith.ceildivui %{{.*}}, %c64
// CHECK: gpu.launch blocks(%{{.*}}) in (%{{.*}} = %[[QB]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%{{.*}}) in (%{{.*}} = %c128
// CHECK-COUNT-2: memref.alloca() : memref<64x72xf16, #gpu.address_space<workgroup>>
// CHECK: nvvm.mma.sync
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK-LABEL: func @attention_simt
// CHECK: %[[QB:.*]] = arith.ceildivui %{{.*}}, %c16
// CHECK: gpu.launch blocks(%{{.*}}) in (%{{.*}} = %[[QB]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%{{.*}}) in (%{{.*}} = %c128
// CHECK-DAG: memref.alloca() : memref<32x65xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.shuffle {{ *}}idx
// CHECK: gpu.launch blocks(%{{.*}}) in (%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%{{.*}}) in (%{{.*}} = %c128
// CHECK-DAG: memref.alloca() : memref<32x41xf32, #gpu.address_space<workgroup>>
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: gpu.shuffle {{ *}}idx
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @attention(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>, %v: memref<?x2x?x64xf16>, %o: memref<?x8x?x64xf16>) {
  tfc_kernel.attention %q, %k, %v outs(%o) {causal, scale = 0.125} : (memref<?x8x?x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16>, memref<?x8x?x64xf16>) -> ()
  return
}
func.func @attention_simt(%q: memref<?x8x?x64xf32>, %k: memref<?x2x?x64xf32>, %v: memref<?x2x?x64xf32>, %o: memref<?x8x?x64xf32>,
                          %q2: memref<?x8x?x40xf16>, %k2: memref<?x2x?x40xf16>, %v2: memref<?x2x?x40xf16>, %o2: memref<?x8x?x40xf16>) {
  tfc_kernel.attention %q, %k, %v outs(%o) {causal, scale = 0.125} : (memref<?x8x?x64xf32>, memref<?x2x?x64xf32>, memref<?x2x?x64xf32>, memref<?x8x?x64xf32>) -> ()
  tfc_kernel.attention %q2, %k2, %v2 outs(%o2) {causal, scale = 0.125} : (memref<?x8x?x40xf16>, memref<?x2x?x40xf16>, memref<?x2x?x40xf16>, memref<?x8x?x40xf16>) -> ()
  return
}

// -----

// Products: the f32 linear (1 to 4 rows: a warp per column; else in tiles)
// with its GELU epilogue, the bf16 batched matmul on the tensor cores.
// CHECK-LABEL: func @products
// CHECK: gpu.launch
// CHECK-SAME: in (%{{.*}} = %c128
// CHECK: gpu.shuffle
// CHECK: math.tanh
// CHECK: gpu.launch
// CHECK-SAME: in (%{{.*}} = %c256
// CHECK-COUNT-16: math.fma
// CHECK: math.tanh
// CHECK: gpu.launch
// CHECK-COUNT-8: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>
func.func @products(%x: memref<?x768xf32>, %w: memref<3072x768xf32>, %b: memref<3072xf32>, %y: memref<?x3072xf32>,
                    %a: memref<?x12x?x64xbf16>, %c: memref<?x12x?x64xbf16>, %z: memref<?x12x?x?xbf16>) {
  tfc_kernel.linear %x, %w, %b outs(%y) activation(gelu_tanh) : (memref<?x768xf32>, memref<3072x768xf32>, memref<3072xf32>, memref<?x3072xf32>) -> ()
  tfc_kernel.matmul %a, %c outs(%z) {transpose_rhs} : (memref<?x12x?x64xbf16>, memref<?x12x?x64xbf16>, memref<?x12x?x?xbf16>) -> ()
  return
}

// -----

// The CPU's own kernels have no GPU form.
func.func @gemm(%x: memref<4x64xf32>, %w: memref<1x64x32xf32>, %y: memref<4x32xf32>) {
  // expected-error @+1 {{is not a kernel the CUDA target knows}}
  tfc_cpu.gemm %x, %w outs(%y) : (memref<4x64xf32>, memref<1x64x32xf32>, memref<4x32xf32>) -> ()
  return
}

// -----

func.func @softmax_f64(%x: memref<4x8xf64>, %y: memref<4x8xf64>) {
  // expected-error @+1 {{the GPU kernels support f32, f16 and bf16; got 'memref<4x8xf64>'}}
  tfc_kernel.softmax %x outs(%y) : (memref<4x8xf64>, memref<4x8xf64>) -> ()
  return
}
