// --tfc-check-allocations (CheckAllocations.cpp) on the functions
// tfc-outline-blocks makes of a model's layers, which are called directly.
// RUN: tfc-opt %s --tfc-check-allocations | FileCheck %s --check-prefix=BLOCKS

// A function of a model's layers (tfc-outline-blocks) that allocates gets a
// flag parameter that its failure sets; each caller clears a flag of its own
// frame on entry, passes it, and returns after a call that set it.
// BLOCKS-LABEL: llvm.func internal @__tfc_block_layer
// BLOCKS-SAME: (%[[N:.*]]: i64, %[[FLAG:.*]]: !llvm.ptr) -> !llvm.ptr
// BLOCKS: llvm.call @_mlir_memref_to_llvm_alloc(%[[N]])
// BLOCKS: llvm.cond_br %{{.*}} weights([1, 1048576]), ^[[FAIL:.*]], ^
// BLOCKS: ^[[FAIL]]:
// BLOCKS-NEXT: %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// BLOCKS-NEXT: llvm.store %[[ONE]], %[[FLAG]] atomic monotonic
// BLOCKS-NEXT: %[[P:.*]] = llvm.mlir.poison : !llvm.ptr
// BLOCKS-NEXT: llvm.return %[[P]]
// BLOCKS-LABEL: llvm.func internal @impl
// BLOCKS: %[[SLOT:.*]] = llvm.alloca %{{.*}} x i32
// BLOCKS: llvm.store %{{.*}}, %[[SLOT]] : i32, !llvm.ptr
// BLOCKS: llvm.call @__tfc_block_layer(%{{.*}}, %[[SLOT]])
// BLOCKS-NEXT: %[[SET:.*]] = llvm.load %[[SLOT]] : !llvm.ptr -> i32
// BLOCKS-NEXT: %[[ZERO:.*]] = llvm.mlir.constant(0 : i32) : i32
// BLOCKS-NEXT: %[[FAILED:.*]] = llvm.icmp "ne" %[[SET]], %[[ZERO]] : i32
// BLOCKS-NEXT: llvm.cond_br %[[FAILED]] weights([1, 1048576]), ^[[CFAIL:.*]], ^[[CONT:.*]]
// BLOCKS: ^[[CONT]]:
// BLOCKS-NEXT: llvm.call @__tfc_block_layer(%{{.*}}, %[[SLOT]])
// BLOCKS: ^[[CFAIL]]:
// BLOCKS-NEXT: llvm.return
// A block function that neither allocates nor calls one that does is left
// alone, and so is a task outlined from one (named like it, without the
// attribute: parallel_for calls it through a pointer, with its own flag).
// BLOCKS-LABEL: llvm.func internal @__tfc_block_pure
// BLOCKS-SAME: (%{{.*}}: i64) -> i64
// BLOCKS-LABEL: llvm.func internal @__tfc_block_layer__par0
// BLOCKS-SAME: (%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64)
// BLOCKS-NOT: llvm.call @__tfc_block_layer__par0
llvm.func internal @_mlir_memref_to_llvm_alloc(%size: i64) -> !llvm.ptr {
  %0 = llvm.mlir.zero : !llvm.ptr
  llvm.return %0 : !llvm.ptr
}
llvm.func internal @__tfc_block_layer(%n: i64) -> !llvm.ptr attributes {tfc.block_function} {
  %p = llvm.call @_mlir_memref_to_llvm_alloc(%n) : (i64) -> !llvm.ptr
  llvm.return %p : !llvm.ptr
}
llvm.func internal @impl(%n: i64) {
  %a = llvm.call @__tfc_block_layer(%n) : (i64) -> !llvm.ptr
  %b = llvm.call @__tfc_block_layer(%n) : (i64) -> !llvm.ptr
  %c = llvm.call @__tfc_block_pure(%n) : (i64) -> i64
  llvm.return
}
llvm.func internal @__tfc_block_pure(%n: i64) -> i64 attributes {tfc.block_function} {
  llvm.return %n : i64
}
llvm.func internal @__tfc_block_layer__par0(%ctx: !llvm.ptr, %b: i64, %e: i64) {
  %p = llvm.call @_mlir_memref_to_llvm_alloc(%b) : (i64) -> !llvm.ptr
  llvm.return
}
