// --convert-tfc-linear-to-cpu-gemm{isa=...} (LinearToGemm.cpp, KernelConfig.h):
// the panels are as wide as the instruction set's micro-kernel reads them,
// 32 columns for AVX-512 (8 x 32 tiles of 16-lane vectors), 24 for AVX2
// (4 x 24 tiles of 8-lane vectors), and the choice is recorded on the module
// (tfc.cpu_isa) for the kernel emitters. Without the option the module's
// attribute decides; an unknown ISA is an error.
// RUN: tfc-opt %s --convert-tfc-linear-to-cpu-gemm="isa=avx2" | FileCheck %s --check-prefix=AVX2
// RUN: tfc-opt %s --convert-tfc-linear-to-cpu-gemm="isa=avx512" | FileCheck %s --check-prefix=AVX512
// RUN: tfc-opt %s --convert-tfc-linear-to-cpu-gemm | FileCheck %s --check-prefix=AVX512
// RUN: not tfc-opt %s --convert-tfc-linear-to-cpu-gemm="isa=sse" 2>&1 | FileCheck %s --check-prefix=BAD
// The L1 data cache the GEMM's k blocks are for (l1d-bytes) is recorded
// likewise (tfc.cpu_l1d_bytes); a negative or absurd size is an error.
// RUN: tfc-opt %s --convert-tfc-linear-to-cpu-gemm="l1d-bytes=32768" | FileCheck %s --check-prefix=L1D
// RUN: not tfc-opt %s --convert-tfc-linear-to-cpu-gemm="l1d-bytes=-1" 2>&1 | FileCheck %s --check-prefix=BADL1D
// The L2 (l2-bytes) likewise (tfc.cpu_l2_bytes).
// RUN: tfc-opt %s --convert-tfc-linear-to-cpu-gemm="l1d-bytes=32768 l2-bytes=1048576" | FileCheck %s --check-prefix=L2
// RUN: not tfc-opt %s --convert-tfc-linear-to-cpu-gemm="l2-bytes=-4" 2>&1 | FileCheck %s --check-prefix=BADL2

// AVX2: module attributes {tfc.cpu_isa = "avx2"}
// AVX2: tfc_cpu.pack %{{.*}} outs(%{{.*}}) : (tensor<100x64xf32>, tensor<5x64x24xf32>) -> tensor<5x64x24xf32>
// AVX512: module attributes {tfc.cpu_isa = "avx512"}
// AVX512: tfc_cpu.pack %{{.*}} outs(%{{.*}}) : (tensor<100x64xf32>, tensor<4x64x32xf32>) -> tensor<4x64x32xf32>
// BAD: error: unknown CPU kernel instruction set 'sse' (expected avx512 or avx2)
// L1D: module attributes {tfc.cpu_isa = "avx512", tfc.cpu_l1d_bytes = 32768 : i64}
// BADL1D: error: l1d-bytes: -1 is not a cache size
// L2: module attributes {tfc.cpu_isa = "avx512", tfc.cpu_l1d_bytes = 32768 : i64, tfc.cpu_l2_bytes = 1048576 : i64}
// BADL2: error: l2-bytes: -4 is not a cache size
module attributes {tfc.cpu_isa = "avx512"} {
  func.func @linear(%x: tensor<?x64xf32>, %w: tensor<100x64xf32>) -> tensor<?x100xf32> {
    %0 = tfc.linear %x, %w : (tensor<?x64xf32>, tensor<100x64xf32>) -> tensor<?x100xf32>
    return %0 : tensor<?x100xf32>
  }
}
