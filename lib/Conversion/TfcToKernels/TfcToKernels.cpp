//===- TfcToKernels.cpp - The convert-tfc-to-kernels pass -----------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Each tfc op that targets lower by hand becomes its tfc_kernel op writing
// into a fresh `tensor.empty`, whose dynamic sizes are read (tensor.dim) from
// the operand that determines them: each pattern's `destination` callback.
//
//===----------------------------------------------------------------------===//

#include "tfc/Conversion/Passes.h"
#include "tfc/Dialect/Tfc/IR/TfcOps.h"
#include "tfc/Dialect/TfcKernel/IR/TfcKernel.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_CONVERTTFCTOKERNELS
#include "tfc/Conversion/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;
using kernel::SizeSource;

namespace {

RankedTensorType resultType(Operation *op) {
  return cast<RankedTensorType>(op->getResult(0).getType());
}

/// The destination of `op`'s result, its dynamic sizes from `sizeOf`.
Value destination(OpBuilder &b, Operation *op,
                  function_ref<SizeSource(int64_t)> sizeOf) {
  return kernel::createDestination(b, op->getLoc(), resultType(op), sizeOf);
}

struct SoftmaxToKernel : OpRewritePattern<SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxOp op,
                                PatternRewriter &rewriter) const override {
    int64_t rank = op.getType().getRank();
    if (static_cast<int64_t>(op.getAxis()) != rank - 1)
      return rewriter.notifyMatchFailure(op, "not over the last axis");
    Value init = destination(rewriter, op, [&](int64_t d) {
      return SizeSource{op.getInput(), d};
    });
    rewriter.replaceOpWithNewOp<kernel::SoftmaxOp>(op, op.getType(),
                                                   op.getInput(), init);
    return success();
  }
};

struct LayerNormToKernel : OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormOp op,
                                PatternRewriter &rewriter) const override {
    Value init = destination(rewriter, op, [&](int64_t d) {
      return SizeSource{op.getInput(), d};
    });
    rewriter.replaceOpWithNewOp<kernel::LayerNormOp>(
        op, op.getType(), op.getInput(), op.getScale(), op.getBias(),
        op.getResidual(), init, op.getEpsilonAttr());
    return success();
  }
};

struct RmsNormToKernel : OpRewritePattern<RmsNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RmsNormOp op,
                                PatternRewriter &rewriter) const override {
    Value init = destination(rewriter, op, [&](int64_t d) {
      return SizeSource{op.getInput(), d};
    });
    rewriter.replaceOpWithNewOp<kernel::RmsNormOp>(
        op, op.getType(), op.getInput(), op.getScale(), op.getResidual(), init,
        op.getEpsilonAttr());
    return success();
  }
};

struct AttentionToKernel : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    // [B, H, Tq, Dv]: B, H, Tq from the query, Dv from the value.
    Value init = destination(rewriter, op, [&](int64_t d) {
      return d == 3 ? SizeSource{op.getValue(), 3}
                    : SizeSource{op.getQuery(), d};
    });
    rewriter.replaceOpWithNewOp<kernel::AttentionOp>(
        op, op.getType(), op.getQuery(), op.getKey(), op.getValue(),
        op.getMask(), op.getRelativeBias(), op.getRowPast(), init,
        op.getCausalAttr(), rewriter.getF64FloatAttr(op.getEffectiveScale()),
        op.getWindowAttr(), op.getAlibiAttr(), op.getSoftcapAttr());
    return success();
  }
};

struct MatmulToKernel : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    auto lhs = cast<RankedTensorType>(op.getLhs().getType());
    auto rhs = cast<RankedTensorType>(op.getRhs().getType());
    int64_t rank = op.getType().getRank();
    Value init = destination(rewriter, op, [&](int64_t d) -> SizeSource {
      if (d == rank - 2)
        return {op.getLhs(), lhs.getRank() - (op.getTransposeLhs() ? 1 : 2)};
      if (d == rank - 1)
        return {op.getRhs(), rhs.getRank() - (op.getTransposeRhs() ? 2 : 1)};
      // A batch dim: from whichever operand has it dynamic.
      int64_t ld = d - (rank - lhs.getRank());
      if (ld >= 0 && lhs.isDynamicDim(ld))
        return {op.getLhs(), ld};
      return {op.getRhs(), d - (rank - rhs.getRank())};
    });
    rewriter.replaceOpWithNewOp<kernel::MatmulOp>(
        op, op.getType(), op.getLhs(), op.getRhs(), init, op.getTransposeLhs(),
        op.getTransposeRhs());
    return success();
  }
};

struct LinearToKernel : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    int64_t rank = op.getType().getRank();
    Value init = destination(rewriter, op, [&](int64_t d) {
      return d == rank - 1 ? SizeSource{op.getWeight(), 0}
                           : SizeSource{op.getInput(), d};
    });
    rewriter.replaceOpWithNewOp<kernel::LinearOp>(
        op, op.getType(), op.getInput(), op.getWeight(), op.getBias(), init,
        op.getActivation());
    return success();
  }
};

struct ConvertTfcToKernelsPass
    : tfc::impl::ConvertTfcToKernelsBase<ConvertTfcToKernelsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SoftmaxToKernel, LayerNormToKernel, RmsNormToKernel,
                 AttentionToKernel, MatmulToKernel, LinearToKernel>(
        &getContext());
    walkAndApplyPatterns(getOperation(), std::move(patterns));
    WalkResult r = getOperation().walk([](SoftmaxOp op) {
      op.emitError("the softmax kernel normalises the last axis (")
          << op.getType().getRank() - 1 << "), not axis " << op.getAxis()
          << ": run convert-tfc-to-linalg first, which decomposes it";
      return WalkResult::interrupt();
    });
    if (r.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
