//===- Passes.td - Passes on kernel ops --------------------*- tablegen -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_DIALECT_TFCKERNEL_TRANSFORMS_PASSES_TD
#define TFC_DIALECT_TFCKERNEL_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def KernelOwnDestinations : Pass<"tfc-kernel-own-destinations", "mlir::ModuleOp"> {
  let summary = "Gives every kernel op (and transpose) a tensor.empty "
                "destination of its own, placed right before it";
  let description = [{
    CSE merges equal `tensor.empty` ops, so kernels of one shape come to share
    a destination (with each other and with linalg ops), defined at the first
    of them; one-shot bufferisation would then resolve the conflicts with
    allocations of its own choosing, and allocate the others' buffers early.
    Run just before bufferisation, this pass gives each kernel op on tensors
    whose destination is a `tensor.empty` a copy of it right before the op;
    the other users keep the original, moved to just before the first of
    them. So each result is allocated where it is computed, as it was before
    CSE, and bufferisation needs no copies. `linalg.transpose` gets its own
    destination too: a head split or merge whose buffer is shared with
    another layer's is not folded into attention's views
    (tfc-kernel-fold-transposed-operands: its other users are not readers).
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect"];
}

def KernelFoldTransposedOperands
    : Pass<"tfc-kernel-fold-transposed-operands", "mlir::ModuleOp"> {
  let summary = "Attention reads (and writes) a transposed view instead of "
                "a transposed copy (after bufferisation)";
  let description = [{
    Splitting the heads of a projection ([B, T, H·D] -> [B, H, T, D]) is a
    transpose that bufferisation materialises: `linalg.transpose` from a view
    of the projection's buffer into a fresh allocation, which attention then
    reads. The attention kernels read their query, key and value through
    strides (any layout whose innermost stride is 1), so the copy is not
    needed: this pass gives attention `memref.transpose` of the source view
    instead and erases the copy (and its allocation when nothing else uses
    it). It applies when the allocation's only other users are attention
    operands (query, key, value) in the same block after the copy, the
    permutation keeps the innermost dimension innermost (and the source's
    innermost stride is 1), and nothing from the copy to the last of those
    users may write the source's buffer: a write is known to miss it only
    when one of the two buffers (seen through views) is an allocation and
    the other another allocation or an argument of the function; any other
    write (through a region's block argument, a select, a call's result, a
    function argument when the source is one) or an unknown effect keeps the
    copy.

    The head merge after attention ([B, H, T, D] -> [B, T, H, D]) is folded
    the other way: when a copy's source is an allocation that one attention
    writes (its output) and nothing but the copy reads, and its destination
    is an identity-layout allocation that nothing uses before the copy (and
    whose sizes are known before the attention, where it is then
    allocated), attention writes the destination through `memref.transpose`
    (the inverse permutation, innermost dimension kept) and the copy and the
    source's allocation are erased. The attention kernels write any output
    whose innermost stride is 1.

    The same holds for other readers that index the buffer through memref
    loads, which take any layout: inputs of a `linalg.generic`, `memref.load`
    (also inside a generic's body: rotary embeddings read their input at two
    positions) and the source of a `memref.copy` (into a KV cache), each
    after the copy in its block or nested in an op that is. On the GPU each
    fold saves a kernel launch and a round trip through memory; on the CPU
    the copy's pass over the data (SmolLM2's decode step: 5 copies per layer
    fewer, no slower).

    Run after one-shot bufferisation and before buffer deallocation, which
    then keeps the source alive until the attention has read it.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

#endif // TFC_DIALECT_TFCKERNEL_TRANSFORMS_PASSES_TD
