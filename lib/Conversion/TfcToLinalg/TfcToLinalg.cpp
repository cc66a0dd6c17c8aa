//===- TfcToLinalg.cpp - The convert-tfc-to-linalg pass -------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "tfc/Conversion/Passes.h"
#include "tfc/Dialect/Tfc/IR/TfcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_CONVERTTFCTOLINALG
#include "tfc/Conversion/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// The ops a target lowers itself (and the block markers, which
/// tfc-outline-blocks consumes).
bool isKernelOp(Operation *op) {
  if (isa<BlockBeginOp, BlockEndOp>(op))
    return true;
  if (auto softmax = dyn_cast<SoftmaxOp>(op))
    return static_cast<int64_t>(softmax.getAxis()) ==
           cast<RankedTensorType>(softmax.getType()).getRank() - 1;
  return isa<LinearOp, MatmulOp, AttentionOp, LayerNormOp, RmsNormOp, WeightOp>(
      op);
}

struct ConvertTfcToLinalgPass
    : tfc::impl::ConvertTfcToLinalgBase<ConvertTfcToLinalgPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    lowering::populateElementwisePatterns(patterns);
    lowering::populateReductionPatterns(patterns);
    lowering::populateDataMovementPatterns(patterns);
    lowering::populateGeneratorPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      getOperation().emitError("tfc to linalg lowering did not converge");
      return signalPassFailure();
    }
    WalkResult r = getOperation().walk([&](Operation *op) {
      if (isa<TfcDialect>(op->getDialect()) && !isKernelOp(op)) {
        op->emitError("no lowering for '")
            << op->getName() << "' with these operand types";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (r.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
