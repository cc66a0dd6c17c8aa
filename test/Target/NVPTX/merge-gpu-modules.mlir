// RUN: tfc-opt %s --tfc-merge-gpu-modules | FileCheck %s

// Kernels of every gpu.module end up in one @tfc_kernels (a clashing name
// is renamed) and the launches follow them; shared buffers are aligned to
// 16 bytes (ldmatrix and cp.async need it). A kernel identical to one
// already moved, whatever its name (@c::@k is @a::@k; @d::@other is
// @b::@k: the same op in another layer), is kept once and its launches call
// that one; @e::@k differs in one constant and stays apart.
// CHECK: gpu.launch_func @tfc_kernels::@k blocks
// CHECK: gpu.launch_func @tfc_kernels::@[[K2:k_[0-9]+]] blocks
// CHECK: gpu.launch_func @tfc_kernels::@k blocks
// CHECK: gpu.launch_func @tfc_kernels::@[[K2]] blocks
// CHECK: gpu.launch_func @tfc_kernels::@[[K3:k_[0-9]+]] blocks
// CHECK-NOT: gpu.module @a
// CHECK-NOT: gpu.module @b
// CHECK: gpu.module @tfc_kernels
// CHECK-DAG: gpu.func @k(%{{.*}}: memref<4xf32>) kernel
// CHECK-DAG: gpu.func @[[K2]]() workgroup(%{{.*}} : memref<64x72xf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK-DAG: gpu.func @[[K3]](%{{.*}}: memref<4xf32>) kernel
// CHECK-NOT: gpu.func
module attributes {gpu.container_module} {
  func.func @f(%m: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @a::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @b::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @c::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @d::@other blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @e::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    return
  }
  gpu.module @a {
    gpu.func @k(%x: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = arith.constant 1.0 : f32
      memref.store %v, %x[%c0] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @b {
    gpu.func @k() workgroup(%tile : memref<64x72xf16, #gpu.address_space<workgroup>>) kernel { gpu.return }
  }
  gpu.module @c {
    gpu.func @k(%x: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = arith.constant 1.0 : f32
      memref.store %v, %x[%c0] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @d {
    gpu.func @other() workgroup(%tile : memref<64x72xf16, #gpu.address_space<workgroup>>) kernel { gpu.return }
  }
  gpu.module @e {
    gpu.func @k(%x: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = arith.constant 2.0 : f32
      memref.store %v, %x[%c0] : memref<4xf32>
      gpu.return
    }
  }
}
