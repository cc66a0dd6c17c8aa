// End to end through tfc-compile on a small tfc function (a linear with
// bias and GELU, a LayerNorm, a softmax): the fusion pipeline, the CPU
// tensor pipeline and the CPU lowering pipeline leave only the LLVM
// dialect, with the ABI symbols, the outlined parallel tasks and the 16-lane
// kernels; the LLVM IR has <16 x float> FMAs. The CPU is pinned so that the
// IR does not depend on the host.
// RUN: tfc-compile %s --emit=llvm-dialect --cpu=x86-64-v4 -o %t
// RUN: FileCheck %s < %t
// RUN: FileCheck %s --check-prefix=ONLY-LLVM < %t
// RUN: tfc-compile %s --emit=llvm --cpu=x86-64-v4 | FileCheck %s --check-prefix=IR

// No op of another dialect is left anywhere (llvm.intr.vector.* are LLVM
// ops; the module keeps its tfc.model and tfc.cpu_isa attributes, which
// follow a '{' or ', ', where ops follow '= ', indentation or '"').
// ONLY-LLVM-NOT: {{(^ *|= |")(memref|scf|vector|arith|math|linalg|tensor|bufferization|cf|func|tfc|tfc_cpu|builtin)\.[a-z_]+}}
// CHECK: llvm.mlir.global external @tfc_model_hooks()
// CHECK: llvm.mlir.global external constant @tfc_model_metadata("{\22abi\22:1,\22constants\22:[{\22align\22:64,\22bytes\22:16384}]
// CHECK-SAME: \22model\22:\22smoke\22
// CHECK-SAME: \22weights\22:[{\22dtype\22:\22f32\22,\22init_only\22:true,\22name\22:\22proj.weight\22,\22shape\22:[48,64]},
// CHECK: llvm.func {{(internal |private )?}}@__tfc_impl_forward(
// Every allocation is checked: null returns a poison result at once
// (tfc-check-allocations).
// CHECK: %[[P:.*]] = llvm.call @_mlir_memref_to_llvm_alloc(%[[SIZE:.*]]) :
// CHECK-NEXT: %[[NULL:.*]] = llvm.icmp "eq" %[[P]], %{{.*}} : !llvm.ptr
// CHECK-NEXT: %[[SIZED:.*]] = llvm.icmp "ne" %[[SIZE]], %{{.*}} : i64
// CHECK-NEXT: %[[FAILED:.*]] = llvm.and %[[NULL]], %[[SIZED]] : i1
// CHECK-NEXT: llvm.cond_br %[[FAILED]] weights([1, 1048576]), ^[[FAIL:bb[0-9]+]], ^
// CHECK: ^[[FAIL]]:
// CHECK-NEXT: llvm.return %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK: llvm.func @tfc_model_init(%{{.*}}: !llvm.ptr) attributes {passthrough = ["noinline", "optnone"]} {
// CHECK: llvm.func @tfc_entry_forward(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) {
// CHECK: llvm.call @__tfc_impl_forward(
// CHECK: llvm.func internal @_mlir_memref_to_llvm_alloc(
// CHECK: llvm.func internal @__tfc_impl_forward__par0(%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64) attributes {passthrough = ["noinline"]} {
// CHECK: llvm.intr.fma({{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// (The rows of 48 are whole chunks of 16: their stores are plain, no masked
// store is left in the tasks; the GEMM's task masks its right edge.)
// CHECK: llvm.func internal @tfc_model_init__par{{[0-9]+}}(

// IR: define void @tfc_model_init(ptr
// IR: define void @tfc_entry_forward(ptr
// IR: define internal void @__tfc_impl_forward__par0(ptr
// IR: call <16 x float> @llvm.fma.v16f32(<16 x float>
// The rows' length (48) is a constant in the task (constants are not passed
// through the context), so their masked tails fold to plain stores.
// IR: store <16 x float>
// IR: "target-cpu"="x86-64-v4"
module attributes {tfc.model = "smoke"} {
  func.func @forward(%x: tensor<?x64xf32> {tfc.name = "x", tfc.dims = ["tokens", 64]}) -> (tensor<?x48xf32> {tfc.name = "probs"}) {
    %w = tfc.weight "proj.weight" : tensor<48x64xf32>
    %b = tfc.weight "proj.bias" : tensor<48xf32>
    %g = tfc.weight "ln.weight" : tensor<48xf32>
    %be = tfc.weight "ln.bias" : tensor<48xf32>
    %h = tfc.linear %x, %w, %b activation(gelu_tanh) : (tensor<?x64xf32>, tensor<48x64xf32>, tensor<48xf32>) -> tensor<?x48xf32>
    %n = tfc.layer_norm %h scale(%g) bias(%be) : (tensor<?x48xf32>, tensor<48xf32>, tensor<48xf32>) -> tensor<?x48xf32>
    %s = tfc.softmax %n {axis = 1} : tensor<?x48xf32>
    return %s : tensor<?x48xf32>
  }
}
