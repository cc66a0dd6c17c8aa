//===- Passes.td - Passes on kernel ops --------------------*- tablegen -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_DIALECT_TFCKERNEL_TRANSFORMS_PASSES_TD
#define TFC_DIALECT_TFCKERNEL_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def KernelOwnDestinations : Pass<"tfc-kernel-own-destinations", "mlir::ModuleOp"> {
  let summary = "Gives every kernel op a tensor.empty destination of its own, "
                "placed right before it";
  let description = [{
    CSE merges equal `tensor.empty` ops, so kernels of one shape come to share
    a destination (with each other and with linalg ops), defined at the first
    of them; one-shot bufferisation would then resolve the conflicts with
    allocations of its own choosing, and allocate the others' buffers early.
    Run just before bufferisation, this pass gives each kernel op on tensors
    whose destination is a `tensor.empty` a copy of it right before the op;
    the other users keep the original, moved to just before the first of
    them. So each result is allocated where it is computed, as it was before
    CSE, and bufferisation needs no copies.
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect"];
}

#endif // TFC_DIALECT_TFCKERNEL_TRANSFORMS_PASSES_TD
