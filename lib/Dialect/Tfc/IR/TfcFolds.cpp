//===- TfcFolds.cpp - Folders and canonicalisations of tfc ops --*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Dialect/Tfc/IR/TfcOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::tfc;

/// True if `attr` is a floating-point splat equal to `value`.
static bool isSplatOf(Attribute attr, double value) {
  auto dense = dyn_cast_or_null<DenseFPElementsAttr>(attr);
  return dense && dense.isSplat() &&
         dense.getSplatValue<APFloat>().isExactlyValue(value);
}

/// Folds `op(x, identity)` to `x` when that does not change the type, i.e.
/// when the identity constant does not broadcast `x` to a bigger shape.
static OpFoldResult foldRightIdentity(Operation *op, Attribute rhs,
                                      double identity) {
  Value lhs = op->getOperand(0);
  if (isSplatOf(rhs, identity) && lhs.getType() == op->getResult(0).getType())
    return lhs;
  return {};
}

/// The commutative variant: the identity may sit on either side.
static OpFoldResult foldIdentity(Operation *op, Attribute lhs, Attribute rhs,
                                 double identity) {
  if (OpFoldResult r = foldRightIdentity(op, rhs, identity))
    return r;
  Value other = op->getOperand(1);
  if (isSplatOf(lhs, identity) &&
      other.getType() == op->getResult(0).getType())
    return other;
  return {};
}

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  return foldIdentity(*this, adaptor.getLhs(), adaptor.getRhs(), 0.0);
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  return foldRightIdentity(*this, adaptor.getRhs(), 0.0);
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  return foldIdentity(*this, adaptor.getLhs(), adaptor.getRhs(), 1.0);
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  return foldRightIdentity(*this, adaptor.getRhs(), 1.0);
}

OpFoldResult PowOp::fold(FoldAdaptor adaptor) {
  return foldRightIdentity(*this, adaptor.getRhs(), 1.0);
}

OpFoldResult NegOp::fold(FoldAdaptor) {
  if (auto inner = getInput().getDefiningOp<NegOp>())
    return inner.getInput();
  return {};
}

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  if (llvm::equal(getPermutation(),
                  llvm::seq<int64_t>(0, getPermutation().size())) &&
      getInput().getType() == getType())
    return getInput();
  return {};
}

namespace {
/// transpose(transpose(x, p), q) -> transpose(x, p∘q).
struct ComposeTransposes : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<TransposeOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(op, "input is not a transpose");
    ArrayRef<int64_t> outerPerm = op.getPermutation();
    ArrayRef<int64_t> innerPerm = inner.getPermutation();
    SmallVector<int64_t> composed;
    for (int64_t p : outerPerm)
      composed.push_back(innerPerm[p]);
    rewriter.replaceOpWithNewOp<TransposeOp>(op, op.getType(),
                                             inner.getInput(), composed);
    return success();
  }
};
} // namespace

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<ComposeTransposes>(context);
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType() && getType().hasStaticShape())
    return getInput();
  // reshape(reshape(x)) -> reshape(x): the outer op's sizes describe its
  // result completely, so the inner op is not needed.
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  return {};
}

OpFoldResult SplitHeadsOp::fold(FoldAdaptor) {
  auto merge = getInput().getDefiningOp<MergeHeadsOp>();
  if (merge && merge.getInput().getType() == getType() &&
      getType().getDimSize(1) == static_cast<int64_t>(getHeads()))
    return merge.getInput();
  return {};
}

OpFoldResult SliceOp::fold(FoldAdaptor) {
  // Slicing a whole axis is the identity.
  if (getStart() == 0 && getInput().getType() == getType())
    return getInput();
  return {};
}

OpFoldResult MergeHeadsOp::fold(FoldAdaptor) {
  auto split = getInput().getDefiningOp<SplitHeadsOp>();
  if (split && split.getInput().getType() == getType())
    return split.getInput();
  return {};
}
