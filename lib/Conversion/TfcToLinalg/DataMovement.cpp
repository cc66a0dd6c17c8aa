//===- DataMovement.cpp - Layout tfc ops to tensor/linalg -----------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Reshapes become collapse/expand (views after bufferisation), slices and
// concatenation become extract/insert_slice, transposes linalg.transpose.
// split_heads / merge_heads are a reshape plus a transpose.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "tfc/Dialect/Tfc/IR/TfcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::lowering;

namespace {

Value transpose(OpBuilder &b, Location loc, Value input,
                ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<OpFoldResult> dims = getDims(b, loc, input);
  SmallVector<int64_t> shape;
  SmallVector<OpFoldResult> sizes;
  for (int64_t p : perm) {
    shape.push_back(type.getDimSize(p));
    sizes.push_back(dims[p]);
  }
  auto outType = RankedTensorType::get(shape, type.getElementType());
  Value init = emptyLike(b, loc, outType, sizes);
  return linalg::TransposeOp::create(b, loc, input, init, perm).getResult()[0];
}

struct TransposeLowering : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    Value t = transpose(rewriter, op.getLoc(), op.getInput(),
                        op.getPermutation());
    if (t.getType() != op.getType())
      t = tensor::CastOp::create(rewriter, op.getLoc(), op.getType(), t);
    rewriter.replaceOp(op, t);
    return success();
  }
};

/// Row-major reshape. Into rank 1 it is a collapse; from rank 1 into a shape
/// with at most one dynamic size an expand (both views after
/// bufferisation); otherwise tensor.reshape with the sizes as a shape tensor
/// (also a view of a contiguous buffer).
struct ReshapeLowering : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput();
    auto inType = cast<RankedTensorType>(input.getType());
    auto outType = cast<RankedTensorType>(op.getType());
    if (outType.getRank() == 0 || inType.getRank() == 0) {
      SmallVector<Value> zeros(inType.getRank(),
                               arith::ConstantIndexOp::create(rewriter, loc, 0));
      Value v = tensor::ExtractOp::create(rewriter, loc, input, zeros);
      if (outType.getRank() == 0) {
        rewriter.replaceOpWithNewOp<tensor::FromElementsOp>(op, outType, v);
        return success();
      }
      // A scalar into [1, ..., 1].
      rewriter.replaceOpWithNewOp<tensor::SplatOp>(op, outType, v,
                                                   op.getDynamicSizes());
      return success();
    }
    ReassociationIndices all;
    if (outType.getRank() == 1 && inType.getRank() > 1) {
      for (int64_t d = 0; d < inType.getRank(); ++d)
        all.push_back(d);
      Value c = tensor::CollapseShapeOp::create(rewriter, loc, input,
                                                ArrayRef{all});
      if (c.getType() != outType)
        c = tensor::CastOp::create(rewriter, loc, outType, c);
      rewriter.replaceOp(op, c);
      return success();
    }
    SmallVector<OpFoldResult> sizes;
    auto dynamic = op.getDynamicSizes().begin();
    for (int64_t s : outType.getShape())
      sizes.push_back(ShapedType::isDynamic(s) ? OpFoldResult(*dynamic++)
                                               : rewriter.getIndexAttr(s));
    if (inType.getRank() == 1 && outType.getNumDynamicDims() <= 1) {
      for (int64_t d = 0; d < outType.getRank(); ++d)
        all.push_back(d);
      rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, outType, input,
                                                         ArrayRef{all}, sizes);
      return success();
    }
    SmallVector<Value> shape;
    for (OpFoldResult s : sizes)
      shape.push_back(arith::IndexCastOp::create(
          rewriter, loc, rewriter.getI64Type(),
          getValueOrCreateConstantIndexOp(rewriter, loc, s)));
    Value shapeTensor = tensor::FromElementsOp::create(rewriter, loc, shape);
    rewriter.replaceOpWithNewOp<tensor::ReshapeOp>(op, outType, input,
                                                   shapeTensor);
    return success();
  }
};

struct SliceLowering : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getInput().getType());
    SmallVector<OpFoldResult> sizes = getDims(rewriter, loc, op.getInput());
    SmallVector<OpFoldResult> offsets(type.getRank(), rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> strides(type.getRank(), rewriter.getIndexAttr(1));
    int64_t axis = op.getAxis();
    offsets[axis] = rewriter.getIndexAttr(op.getStart());
    if (op.getFromEnd()) {
      // n - start - size, n the axis' size (static or at run time).
      Value n = getValueOrCreateConstantIndexOp(rewriter, loc, sizes[axis]);
      offsets[axis] = arith::SubIOp::create(
                          rewriter, loc, n,
                          arith::ConstantIndexOp::create(
                              rewriter, loc, op.getStart() + op.getSize()))
                          .getResult();
    }
    sizes[axis] = rewriter.getIndexAttr(op.getSize());
    auto resultType = cast<RankedTensorType>(op.getType());
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, resultType, op.getInput(), offsets, sizes, strides);
    return success();
  }
};

struct ConcatLowering : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(op.getType());
    int64_t axis = op.getAxis();
    SmallVector<OpFoldResult> sizes = getDims(rewriter, loc, op.getInputs()[0]);
    OpFoldResult total = rewriter.getIndexAttr(0);
    SmallVector<OpFoldResult> offsets;
    for (Value in : op.getInputs()) {
      offsets.push_back(total);
      OpFoldResult n = getDims(rewriter, loc, in)[axis];
      total = addSizes(rewriter, loc, total, n);
    }
    sizes[axis] = total;
    Value acc = emptyLike(rewriter, loc, resultType, sizes);
    for (auto [in, offset] : llvm::zip(op.getInputs(), offsets)) {
      int64_t rank = resultType.getRank();
      SmallVector<OpFoldResult> offs(rank, rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
      offs[axis] = offset;
      acc = tensor::InsertSliceOp::create(rewriter, loc, in, acc, offs,
                                          getDims(rewriter, loc, in), strides);
    }
    rewriter.replaceOp(op, acc);
    return success();
  }
};

/// [..., T, H·D] -> [..., H, T, D].
struct SplitHeadsLowering : OpRewritePattern<SplitHeadsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SplitHeadsOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput();
    auto inType = cast<RankedTensorType>(input.getType());
    auto outType = cast<RankedTensorType>(op.getType());
    int64_t r = inType.getRank(), heads = op.getHeads();
    int64_t features = inType.getDimSize(r - 1);
    SmallVector<OpFoldResult> dims = getDims(rewriter, loc, input);
    OpFoldResult headDim;
    int64_t staticHeadDim = ShapedType::kDynamic;
    if (!ShapedType::isDynamic(features)) {
      staticHeadDim = features / heads;
      headDim = rewriter.getIndexAttr(staticHeadDim);
    } else {
      Value f = getValueOrCreateConstantIndexOp(rewriter, loc, dims[r - 1]);
      headDim = arith::DivUIOp::create(
                    rewriter, loc, f,
                    arith::ConstantIndexOp::create(rewriter, loc, heads))
                    .getResult();
    }
    SmallVector<int64_t> shape(inType.getShape());
    shape.back() = heads;
    shape.push_back(staticHeadDim);
    SmallVector<OpFoldResult> sizes(dims);
    sizes.back() = rewriter.getIndexAttr(heads);
    sizes.push_back(headDim);
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0; d < r - 1; ++d)
      groups.push_back({d});
    groups.push_back({r - 1, r});
    auto expandedType = RankedTensorType::get(shape, inType.getElementType());
    Value expanded = tensor::ExpandShapeOp::create(rewriter, loc, expandedType,
                                                   input, groups, sizes);
    SmallVector<int64_t> perm;
    for (int64_t d = 0; d < r - 2; ++d)
      perm.push_back(d);
    perm.append({r - 1, r - 2, r});
    Value t = transpose(rewriter, loc, expanded, perm);
    if (t.getType() != outType)
      t = tensor::CastOp::create(rewriter, loc, outType, t);
    rewriter.replaceOp(op, t);
    return success();
  }
};

/// [..., H, T, D] -> [..., T, H·D].
struct MergeHeadsLowering : OpRewritePattern<MergeHeadsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MergeHeadsOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput();
    int64_t r = cast<RankedTensorType>(input.getType()).getRank();
    SmallVector<int64_t> perm;
    for (int64_t d = 0; d < r - 3; ++d)
      perm.push_back(d);
    perm.append({r - 2, r - 3, r - 1});
    Value t = transpose(rewriter, loc, input, perm);
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0; d < r - 2; ++d)
      groups.push_back({d});
    groups.push_back({r - 2, r - 1});
    auto outType = cast<RankedTensorType>(op.getType());
    Value c = tensor::CollapseShapeOp::create(rewriter, loc, t, groups);
    if (c.getType() != outType)
      c = tensor::CastOp::create(rewriter, loc, outType, c);
    rewriter.replaceOp(op, c);
    return success();
  }
};

} // namespace

void tfc::lowering::populateDataMovementPatterns(RewritePatternSet &patterns) {
  patterns.add<TransposeLowering, ReshapeLowering, SliceLowering,
               ConcatLowering, SplitHeadsLowering, MergeHeadsLowering>(
      patterns.getContext());
}
