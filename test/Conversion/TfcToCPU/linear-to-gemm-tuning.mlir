// --convert-tfc-linear-to-cpu-gemm{gemm-tuning=...} (LinearToGemm.cpp,
// KernelTuning.cpp): a measured blocking (tfc-tune's, or --gemm-tuning)
// replaces the ISA's fields it sets; it is checked against what the emitter
// can build for the ISA and recorded on the module in its canonical text
// (tfc.cpu_gemm_tuning), which the pack's NR and the kernels then follow.
// RUN: tfc-opt %s --convert-tfc-linear-to-cpu-gemm="isa=avx2 gemm-tuning=kc=64,nr=16,mr=6" | FileCheck %s --check-prefix=AVX2
// RUN: tfc-opt %s --convert-tfc-linear-to-cpu-gemm="isa=avx512 gemm-tuning=nr=48,mr=8,tile-panels=1" | FileCheck %s --check-prefix=AVX512
// An empty tuning is no tuning.
// RUN: tfc-opt %s --convert-tfc-linear-to-cpu-gemm="isa=avx2 gemm-tuning=default" | FileCheck %s --check-prefix=NONE
// What cannot be built is an error naming the field and the bound.
// RUN: not tfc-opt %s --convert-tfc-linear-to-cpu-gemm="isa=avx2 gemm-tuning=mr=8,nr=24" 2>&1 | FileCheck %s --check-prefix=REGS
// RUN: not tfc-opt %s --convert-tfc-linear-to-cpu-gemm="isa=avx2 gemm-tuning=nr=20" 2>&1 | FileCheck %s --check-prefix=NR
// RUN: not tfc-opt %s --convert-tfc-linear-to-cpu-gemm="isa=avx512 gemm-tuning=mc=100" 2>&1 | FileCheck %s --check-prefix=MC
// RUN: not tfc-opt %s --convert-tfc-linear-to-cpu-gemm="isa=avx2 gemm-tuning=k-unroll=3" 2>&1 | FileCheck %s --check-prefix=UNROLL
// RUN: not tfc-opt %s --convert-tfc-linear-to-cpu-gemm="isa=avx2 gemm-tuning=rows=4" 2>&1 | FileCheck %s --check-prefix=FIELD
// A module whose own ISA attribute names no kernels is an error, not a crash.
// RUN: sed 's/^module {/module attributes {tfc.cpu_isa = "sse"} {/' %s | not tfc-opt --convert-tfc-linear-to-cpu-gemm="gemm-tuning=mr=4" 2>&1 | FileCheck %s --check-prefix=BADISA

// AVX2: module attributes {tfc.cpu_gemm_tuning = "mr=6,nr=16,kc=64", tfc.cpu_isa = "avx2"}
// AVX2: tfc_cpu.pack %{{.*}} outs(%{{.*}}) : (tensor<100x64xf32>, tensor<7x64x16xf32>) -> tensor<7x64x16xf32>
// AVX512: module attributes {tfc.cpu_gemm_tuning = "mr=8,nr=48,tile-panels=1", tfc.cpu_isa = "avx512"}
// AVX512: tfc_cpu.pack %{{.*}} outs(%{{.*}}) : (tensor<100x64xf32>, tensor<3x64x48xf32>) -> tensor<3x64x48xf32>
// NONE: module attributes {tfc.cpu_isa = "avx2"}
// NONE: tfc_cpu.pack %{{.*}} : (tensor<100x64xf32>, tensor<5x64x24xf32>) -> tensor<5x64x24xf32>
// REGS: error: gemm-tuning 'mr=8,nr=24' for the avx2 kernels: a register tile of mr=8 x 3 vectors needs 28 vector registers (accumulators, B and a broadcast); avx2 has 16
// NR: error: gemm-tuning 'nr=20' for the avx2 kernels: nr=20: expected a multiple of 8 (the f32 lanes of avx2's vectors), at most 32
// MC: error: gemm-tuning 'mc=100' for the avx512 kernels: mc=100: expected a multiple of mr=6 up to 4096
// UNROLL: error: gemm-tuning 'k-unroll=3' for the avx2 kernels: k-unroll=3: expected 1, 2, 4 or 8
// BADISA: error: unknown CPU kernel instruction set 'sse' (expected avx512 or avx2)
// FIELD: error: gemm-tuning 'rows=4' for the avx2 kernels: unknown field 'rows' (expected one of mr, nr, tile-panels, mc, panels-per-task, kc, k-unroll, prefetch-a, deep-kc)
module {
  func.func @linear(%x: tensor<?x64xf32>, %w: tensor<100x64xf32>) -> tensor<?x100xf32> {
    %0 = tfc.linear %x, %w : (tensor<?x64xf32>, tensor<100x64xf32>) -> tensor<?x100xf32>
    return %0 : tensor<?x100xf32>
  }
}
