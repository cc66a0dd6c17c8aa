// RUN: tfc-opt %s --tfc-merge-gpu-modules | FileCheck %s

// Kernels of every gpu.module end up in one @tfc_kernels (a clashing name
// is renamed) and the launches follow them; shared buffers are aligned to
// 16 bytes (ldmatrix and cp.async need it).
// CHECK: gpu.launch_func @tfc_kernels::@k blocks
// CHECK: gpu.launch_func @tfc_kernels::@[[K2:k_[0-9]+]] blocks
// CHECK-NOT: gpu.module @a
// CHECK-NOT: gpu.module @b
// CHECK: gpu.module @tfc_kernels
// CHECK-DAG: gpu.func @k()
// CHECK-DAG: gpu.func @[[K2]]() workgroup(%{{.*}} : memref<64x72xf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
module attributes {gpu.container_module} {
  func.func @f() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @a::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @b::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
  gpu.module @a {
    gpu.func @k() kernel { gpu.return }
  }
  gpu.module @b {
    gpu.func @k() workgroup(%tile : memref<64x72xf16, #gpu.address_space<workgroup>>) kernel { gpu.return }
  }
}
