//===- Reductions.cpp - Reductions, argmax and axis softmax to linalg -----===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// A reduction over one axis is a linalg.generic with that axis as its
// reduction iterator into a filled accumulator; keepdim re-inserts the unit
// axis with tensor.expand_shape. Softmax over the last axis is a kernel op
// the target lowers itself; over any other axis it is decomposed here.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "tfc/Dialect/Tfc/IR/TfcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::lowering;

namespace {

using Combine = function_ref<Value(OpBuilder &, Location, Value elem,
                                   Value acc)>;

/// Reduces `input` over `axis` into a tensor without that axis, starting from
/// `initValue`.
Value reduceAxis(OpBuilder &b, Location loc, Value input, int64_t axis,
                 Value initValue, Combine combine) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<OpFoldResult> dims = getDims(b, loc, input);
  SmallVector<int64_t> shape;
  SmallVector<OpFoldResult> sizes;
  SmallVector<AffineExpr> outExprs;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (d == axis)
      continue;
    shape.push_back(type.getDimSize(d));
    sizes.push_back(dims[d]);
    outExprs.push_back(b.getAffineDimExpr(d));
  }
  auto outType = RankedTensorType::get(shape, initValue.getType());
  Value empty = emptyLike(b, loc, outType, sizes);
  Value init = linalg::FillOp::create(b, loc, initValue, empty).getResult(0);
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  iterators[axis] = utils::IteratorType::reduction;
  SmallVector<AffineMap> maps = {
      b.getMultiDimIdentityMap(type.getRank()),
      AffineMap::get(type.getRank(), 0, outExprs, b.getContext())};
  auto generic = linalg::GenericOp::create(
      b, loc, outType, input, init, maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(nb, l, combine(nb, l, args[0], args[1]));
      });
  return generic.getResult(0);
}

/// Inserts a unit axis at `axis` into `value` (the keepdim form).
Value insertUnitAxis(OpBuilder &b, Location loc, Value value, int64_t axis,
                     RankedTensorType resultType) {
  int64_t rank = cast<RankedTensorType>(value.getType()).getRank();
  // Source dim d maps to result dim d (before the axis) or d + 1 (after it);
  // the unit axis joins the group of its right neighbour, or of its left one
  // when it is last. A rank-0 source expands with no groups.
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < rank; ++d) {
    ReassociationIndices g;
    if (d == axis)
      g.push_back(axis);
    g.push_back(d < axis ? d : d + 1);
    groups.push_back(g);
  }
  if (rank > 0 && axis == rank)
    groups.back().push_back(rank);
  SmallVector<OpFoldResult> dims = getDims(b, loc, value);
  dims.insert(dims.begin() + axis, b.getIndexAttr(1));
  return tensor::ExpandShapeOp::create(b, loc, resultType, value, groups, dims);
}

/// Broadcasts a reduced tensor (without `axis`) back over `like`.
Value mapWithReduced(OpBuilder &b, Location loc, Value like, Value reduced,
                     int64_t axis,
                     function_ref<Value(OpBuilder &, Location, Value x,
                                        Value r)> fn) {
  auto type = cast<RankedTensorType>(like.getType());
  int64_t rank = type.getRank();
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      exprs.push_back(b.getAffineDimExpr(d));
  SmallVector<AffineMap> maps = {
      b.getMultiDimIdentityMap(rank),
      AffineMap::get(rank, 0, exprs, b.getContext()),
      b.getMultiDimIdentityMap(rank)};
  Value empty = emptyLike(b, loc, type, getDims(b, loc, like));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, type, ValueRange{like, reduced}, empty, maps, iterators,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l, fn(nb, l, args[0], args[1]));
             })
      .getResult(0);
}

Value negInf(OpBuilder &b, Location loc, Type t) {
  return floatConst(b, loc, t, -std::numeric_limits<double>::infinity());
}

template <typename OpTy>
struct ReductionLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput();
    Type et = cast<RankedTensorType>(input.getType()).getElementType();
    int64_t axis = op.getAxis();
    Value r;
    if constexpr (std::is_same_v<OpTy, ReduceMaxOp>) {
      r = reduceAxis(rewriter, loc, input, axis, negInf(rewriter, loc, et),
                     [](OpBuilder &b, Location l, Value x, Value acc) {
                       return arith::MaximumFOp::create(b, l, x, acc)
                           .getResult();
                     });
    } else {
      r = reduceAxis(rewriter, loc, input, axis,
                     floatConst(rewriter, loc, et, 0.0),
                     [](OpBuilder &b, Location l, Value x, Value acc) {
                       return arith::AddFOp::create(b, l, x, acc).getResult();
                     });
      if constexpr (std::is_same_v<OpTy, ReduceMeanOp>) {
        Value n = tensor::DimOp::create(rewriter, loc, input, axis);
        Value nInt = arith::IndexCastOp::create(rewriter, loc,
                                                rewriter.getI64Type(), n);
        Value nf = arith::SIToFPOp::create(rewriter, loc, et, nInt);
        auto rt = cast<RankedTensorType>(r.getType());
        Value empty = emptyLike(rewriter, loc, rt, getDims(rewriter, loc, r));
        SmallVector<AffineMap> maps(
            2, rewriter.getMultiDimIdentityMap(rt.getRank()));
        SmallVector<utils::IteratorType> iterators(
            rt.getRank(), utils::IteratorType::parallel);
        r = linalg::GenericOp::create(
                rewriter, loc, rt, r, empty, maps, iterators,
                [&](OpBuilder &b, Location l, ValueRange args) {
                  linalg::YieldOp::create(
                      b, l, arith::DivFOp::create(b, l, args[0], nf)
                                .getResult());
                })
                .getResult(0);
      }
    }
    auto resultType = cast<RankedTensorType>(op.getType());
    if (op.getKeepdim())
      r = insertUnitAxis(rewriter, loc, r, axis, resultType);
    else if (r.getType() != resultType)
      r = tensor::CastOp::create(rewriter, loc, resultType, r);
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// argmax: a two-result reduction (best value, its index); the first maximum
/// wins ties; NaN never wins.
struct ArgmaxLowering : OpRewritePattern<ArgmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ArgmaxOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput();
    auto type = cast<RankedTensorType>(input.getType());
    int64_t axis = op.getAxis(), rank = type.getRank();
    Type et = type.getElementType();
    SmallVector<OpFoldResult> dims = getDims(rewriter, loc, input);
    SmallVector<int64_t> shape;
    SmallVector<OpFoldResult> sizes;
    SmallVector<AffineExpr> outExprs;
    for (int64_t d = 0; d < rank; ++d) {
      if (d == axis)
        continue;
      shape.push_back(type.getDimSize(d));
      sizes.push_back(dims[d]);
      outExprs.push_back(rewriter.getAffineDimExpr(d));
    }
    auto valType = RankedTensorType::get(shape, et);
    auto idxType = RankedTensorType::get(shape, rewriter.getI64Type());
    Value vals = linalg::FillOp::create(
                     rewriter, loc, negInf(rewriter, loc, et),
                     emptyLike(rewriter, loc, valType, sizes))
                     .getResult(0);
    Value zero = arith::ConstantOp::create(rewriter, loc,
                                           rewriter.getI64IntegerAttr(0));
    Value idxs = linalg::FillOp::create(
                     rewriter, loc, zero,
                     emptyLike(rewriter, loc, idxType, sizes))
                     .getResult(0);
    AffineMap outMap = AffineMap::get(rank, 0, outExprs, getContext());
    SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(rank),
                                   outMap, outMap};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators[axis] = utils::IteratorType::reduction;
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{valType, idxType}, input,
        ValueRange{vals, idxs}, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value i = linalg::IndexOp::create(b, l, axis);
          Value i64 = arith::IndexCastOp::create(b, l, b.getI64Type(), i);
          Value better = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT,
                                               args[0], args[1]);
          // The first element always initialises the result, even -inf.
          Value first = arith::CmpIOp::create(
              b, l, arith::CmpIPredicate::eq, i,
              arith::ConstantIndexOp::create(b, l, 0));
          Value take = arith::OrIOp::create(b, l, better, first);
          linalg::YieldOp::create(
              b, l,
              ValueRange{
                  arith::SelectOp::create(b, l, take, args[0], args[1]),
                  arith::SelectOp::create(b, l, take, i64, args[2])});
        });
    Value r = generic.getResult(1);
    auto resultType = cast<RankedTensorType>(op.getType());
    if (op.getKeepdim())
      r = insertUnitAxis(rewriter, loc, r, axis, resultType);
    else if (r.getType() != resultType)
      r = tensor::CastOp::create(rewriter, loc, resultType, r);
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// Softmax over an axis other than the last: max, exp-sum, divide.
struct AxisSoftmaxLowering : OpRewritePattern<SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    int64_t axis = op.getAxis();
    if (axis == type.getRank() - 1)
      return rewriter.notifyMatchFailure(op, "a last-axis softmax is a kernel");
    Location loc = op.getLoc();
    Type et = type.getElementType();
    Value x = op.getInput();
    Value max = reduceAxis(rewriter, loc, x, axis, negInf(rewriter, loc, et),
                           [](OpBuilder &b, Location l, Value v, Value acc) {
                             return arith::MaximumFOp::create(b, l, v, acc)
                                 .getResult();
                           });
    // A row of -inf has max -inf: subtract 0 instead so exp gives 0, not NaN.
    Value e = mapWithReduced(
        rewriter, loc, x, max, axis,
        [&](OpBuilder &b, Location l, Value v, Value m) {
          Value isInf = arith::CmpFOp::create(
              b, l, arith::CmpFPredicate::OEQ, m, negInf(b, l, et));
          Value safe = arith::SelectOp::create(b, l, isInf,
                                               floatConst(b, l, et, 0.0), m);
          return math::ExpOp::create(b, l, arith::SubFOp::create(b, l, v, safe))
              .getResult();
        });
    Value sum = reduceAxis(rewriter, loc, e, axis,
                           floatConst(rewriter, loc, et, 0.0),
                           [](OpBuilder &b, Location l, Value v, Value acc) {
                             return arith::AddFOp::create(b, l, v, acc)
                                 .getResult();
                           });
    Value r = mapWithReduced(
        rewriter, loc, e, sum, axis,
        [&](OpBuilder &b, Location l, Value v, Value s) {
          Value zero = floatConst(b, l, et, 0.0);
          Value isZero =
              arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, s, zero);
          Value q = arith::DivFOp::create(b, l, v, s);
          return arith::SelectOp::create(b, l, isZero, zero, q).getResult();
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

} // namespace

void tfc::lowering::populateReductionPatterns(RewritePatternSet &patterns) {
  patterns.add<ReductionLowering<ReduceSumOp>, ReductionLowering<ReduceMaxOp>,
               ReductionLowering<ReduceMeanOp>, ArgmaxLowering,
               AxisSoftmaxLowering>(patterns.getContext());
}
