//===- OwnDestinations.cpp - The tfc-kernel-own-destinations pass ---------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Dialect/TfcKernel/Transforms/Passes.h"

#include "tfc/Dialect/TfcKernel/IR/TfcKernel.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tfc::kernel {
#define GEN_PASS_DEF_KERNELOWNDESTINATIONS
#include "tfc/Dialect/TfcKernel/Transforms/Passes.h.inc"
} // namespace mlir::tfc::kernel

using namespace mlir;

namespace {

/// A kernel op or a transpose (which tfc-kernel-fold-transposed-operands
/// folds into views when its destination is its own) on tensors.
bool isTensorKernel(Operation *op) {
  auto dps = dyn_cast<DestinationStyleOpInterface>(op);
  return dps &&
         (op->hasTrait<tfc::kernel::KernelOp>() ||
          isa<linalg::TransposeOp>(op)) &&
         dps.hasPureTensorSemantics();
}

/// Gives each kernel using `empty` a copy right before it; the other users
/// keep `empty`, moved to just before the first of them (where it was before
/// CSE merged it with the kernels' destinations).
void splitEmpty(tensor::EmptyOp empty) {
  Block *block = empty->getBlock();
  for (OpOperand &use : llvm::make_early_inc_range(empty->getUses())) {
    Operation *user = use.getOwner();
    if (!isTensorKernel(user) || user->getBlock() != block)
      continue;
    OpBuilder b(user);
    use.set(b.clone(*empty)->getResult(0));
  }
  if (empty->use_empty()) {
    empty->erase();
    return;
  }
  Operation *first = nullptr;
  for (Operation *user : empty->getUsers()) {
    Operation *top = block->findAncestorOpInBlock(*user);
    if (!top)
      return; // a use outside this block: leave it where it dominates.
    if (!first || top->isBeforeInBlock(first))
      first = top;
  }
  empty->moveBefore(first);
}

struct KernelOwnDestinationsPass
    : tfc::kernel::impl::KernelOwnDestinationsBase<KernelOwnDestinationsPass> {
  void runOnOperation() override {
    SmallVector<tensor::EmptyOp> empties;
    getOperation().walk([&](tensor::EmptyOp empty) {
      if (llvm::any_of(empty->getUsers(), isTensorKernel))
        empties.push_back(empty);
    });
    for (tensor::EmptyOp empty : empties)
      splitEmpty(empty);
  }
};
} // namespace
