//===- BubbleUpSlices.cpp - Compute only the slice that is used -----------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// A `tfc.slice` of a result that nothing else reads moves above the op that
// computes it: the op then runs on slices of its operands and computes only
// the rows that are used. A BERT classifier reads the [CLS] token's final
// state (a slice of one position): the last layer's output projection,
// both LayerNorms and its FFN then run on one position instead of all of
// them, up to the attention, whose keys and values need every position.
//
// An op moves when every use of its result is the same slice (after one
// move, two branches of a residual often slice one value the same way).
// Row-wise ops move for slices of any axis but their last (the features a
// linear reduces over and a norm normalises over); elementwise ops for any
// axis, operands broadcast along it staying whole; softmax for any axis but
// its own.
//
//===----------------------------------------------------------------------===//

#include "tfc/Dialect/Tfc/IR/TfcDialect.h"
#include "tfc/Dialect/Tfc/IR/TfcOps.h"
#include "tfc/Dialect/Tfc/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCBUBBLEUPSLICES
#include "tfc/Dialect/Tfc/Transforms/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// The operand numbers of a norm's input and (if it has one) residual.
template <typename NormOp>
std::pair<unsigned, std::optional<unsigned>> rowOperands(NormOp norm) {
  std::optional<unsigned> residual;
  if (norm.getResidual())
    residual = norm.getResidualMutable()[0].getOperandNumber();
  return {norm.getInputMutable().getOperandNumber(), residual};
}

/// Whether `a` and `b` take the same part of their inputs.
bool sameSlice(SliceOp a, SliceOp b) {
  return a.getAxis() == b.getAxis() && a.getStart() == b.getStart() &&
         a.getSize() == b.getSize() && a.getFromEnd() == b.getFromEnd() &&
         a.getType() == b.getType();
}

struct BubbleUpSlice : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SliceOp slice,
                                PatternRewriter &rewriter) const override {
    Value source = slice.getInput();
    Operation *op = source.getDefiningOp();
    if (!op || op->getNumResults() != 1 || op->getNumRegions() != 0)
      return failure();
    auto resultType = dyn_cast<RankedTensorType>(source.getType());
    if (!resultType)
      return failure();
    // The slices' first in the block: the narrow op replaces all of them,
    // so it goes before every one.
    Operation *first = slice;
    for (Operation *user : source.getUsers()) {
      auto other = dyn_cast<SliceOp>(user);
      if (!other || !sameSlice(other, slice))
        return rewriter.notifyMatchFailure(slice, "the value has other uses");
      if (other->getBlock() != slice->getBlock())
        return rewriter.notifyMatchFailure(slice, "slices in other blocks");
      if (other->isBeforeInBlock(first))
        first = other;
    }
    rewriter.setInsertionPoint(first);
    int64_t axis = slice.getAxis(), rank = resultType.getRank();
    // Which operands to slice, and along which of their axes; decided in
    // full before any IR is created (a pattern that fails must leave the IR
    // as it found it).
    SmallVector<std::pair<unsigned, int64_t>> toSlice;
    if (isa<LinearOp>(op)) {
      if (axis == rank - 1)
        return failure();
      toSlice.push_back({0, axis});
    } else if (isa<LayerNormOp, RmsNormOp>(op)) {
      if (axis == rank - 1)
        return failure();
      // The input and the residual; scale and bias are per feature.
      auto [input, residual] = isa<LayerNormOp>(op)
                                   ? rowOperands(cast<LayerNormOp>(op))
                                   : rowOperands(cast<RmsNormOp>(op));
      toSlice.push_back({input, axis});
      if (residual)
        toSlice.push_back({*residual, axis});
    } else if (auto softmax = dyn_cast<SoftmaxOp>(op)) {
      if (static_cast<uint64_t>(axis) == softmax.getAxis())
        return failure();
      toSlice.push_back({0, axis});
    } else if (isa<GeluOp, ReluOp, SiluOp, ExpOp, LogOp, SqrtOp, RsqrtOp,
                   TanhOp, ErfOp, NegOp>(op)) {
      toSlice.push_back({0, axis});
    } else if (isa<AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp, PowOp>(op)) {
      // NumPy broadcasting aligns the trailing dims: an operand of lower
      // rank lacks the leading axes, one of size 1 along the axis is
      // broadcast along it; both stay whole.
      for (OpOperand &use : op->getOpOperands()) {
        auto type = dyn_cast<RankedTensorType>(use.get().getType());
        if (!type)
          return failure();
        int64_t at = axis - (rank - type.getRank());
        if (at < 0 || type.getDimSize(at) == 1)
          continue;
        if (type.getDimSize(at) != resultType.getDimSize(axis))
          return rewriter.notifyMatchFailure(
              slice, "an operand's size along the axis is not the result's");
        toSlice.push_back({use.getOperandNumber(), at});
      }
    } else {
      return failure();
    }
    // The same part of each of those operands.
    SmallVector<Value> operands(op->getOperands());
    for (auto [index, at] : toSlice)
      operands[index] = SliceOp::create(rewriter, slice.getLoc(),
                                        operands[index], at, slice.getStart(),
                                        slice.getSize(), slice.getFromEnd());
    // The op again (its attributes and properties), on the slices.
    Operation *narrow = rewriter.clone(*op);
    rewriter.modifyOpInPlace(narrow, [&] {
      narrow->setOperands(operands);
      narrow->getResult(0).setType(slice.getType());
    });
    // Every use of the result is this same slice: all of them become the
    // narrow op.
    for (Operation *user : llvm::make_early_inc_range(source.getUsers()))
      rewriter.replaceOp(user, narrow->getResults());
    return success();
  }
};

struct BubbleUpSlicesPass
    : tfc::impl::TfcBubbleUpSlicesBase<BubbleUpSlicesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<BubbleUpSlice>(&getContext());
    // Every rewrite moves a slice above the op it narrows, so the rewriting
    // ends; but a slice waits at a value until its every use is the same
    // slice, and a model whose branches meet late (Gemma's norms after
    // attention and the MLP) needs more than the driver's default of 10
    // sweeps to get there. A pass that stopped early would leave the IR
    // correct but fail the compile.
    GreedyRewriteConfig config;
    config.setMaxIterations(GreedyRewriteConfig::kNoLimit);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace
