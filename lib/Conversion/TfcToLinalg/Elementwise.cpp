//===- Elementwise.cpp - Elementwise tfc ops to linalg.generic ------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Every elementwise op (binary with NumPy broadcasting, unary, activations,
// where, cast) becomes one parallel linalg.generic; chains of them are fused
// later by linalg's elementwise fusion.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "tfc/Conversion/TfcToLinalg/TfcToLinalg.h"
#include "tfc/Dialect/Tfc/IR/TfcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::lowering;

namespace {

/// Builds the scalar result from the block arguments (one per operand).
using ScalarFn =
    function_ref<Value(OpBuilder &, Location, ValueRange, Type resultElement)>;

/// Replaces `op` by a parallel generic over its result with broadcast reads
/// of `operands`.
void lowerElementwise(PatternRewriter &rewriter, Operation *op,
                      ValueRange operands, ScalarFn body) {
  Location loc = op->getLoc();
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  SmallVector<OpFoldResult> sizes =
      broadcastDims(rewriter, loc, resultType, operands);
  Value init = emptyLike(rewriter, loc, resultType, sizes);
  SmallVector<AffineMap> maps;
  for (Value operand : operands)
    maps.push_back(broadcastMap(rewriter.getContext(),
                                cast<RankedTensorType>(operand.getType()),
                                resultType));
  maps.push_back(rewriter.getMultiDimIdentityMap(resultType.getRank()));
  SmallVector<utils::IteratorType> iterators(resultType.getRank(),
                                             utils::IteratorType::parallel);
  Type element = resultType.getElementType();
  auto generic = linalg::GenericOp::create(
      rewriter, loc, resultType, operands, init, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value r = body(b, l, args.drop_back(), element);
        linalg::YieldOp::create(b, l, r);
      });
  rewriter.replaceOp(op, generic.getResults());
}

template <typename OpTy, typename ArithOp>
struct BinaryLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    lowerElementwise(rewriter, op, {op.getLhs(), op.getRhs()},
                     [](OpBuilder &b, Location l, ValueRange a, Type) {
                       return ArithOp::create(b, l, a[0], a[1]).getResult();
                     });
    return success();
  }
};

template <typename OpTy, typename MathOp>
struct UnaryLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    lowerElementwise(rewriter, op, {op.getInput()},
                     [](OpBuilder &b, Location l, ValueRange a, Type) {
                       return MathOp::create(b, l, a[0]).getResult();
                     });
    return success();
  }
};

/// Unary ops whose body is a function of the input.
template <typename OpTy>
struct FunctionLowering : OpRewritePattern<OpTy> {
  using Fn = Value (*)(OpBuilder &, Location, Value, OpTy);
  FunctionLowering(MLIRContext *ctx, Fn fn)
      : OpRewritePattern<OpTy>(ctx), fn(fn) {}
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    lowerElementwise(rewriter, op, {op.getInput()},
                     [&](OpBuilder &b, Location l, ValueRange a, Type) {
                       return fn(b, l, a[0], op);
                     });
    return success();
  }
  Fn fn;
};

struct WhereLowering : OpRewritePattern<WhereOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(WhereOp op,
                                PatternRewriter &rewriter) const override {
    lowerElementwise(
        rewriter, op, {op.getCondition(), op.getOnTrue(), op.getOnFalse()},
        [](OpBuilder &b, Location l, ValueRange a, Type) {
          return arith::SelectOp::create(b, l, a[0], a[1], a[2]).getResult();
        });
    return success();
  }
};

struct CastLowering : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CastOp op,
                                PatternRewriter &rewriter) const override {
    lowerElementwise(rewriter, op, {op.getInput()},
                     [](OpBuilder &b, Location l, ValueRange a, Type to) {
                       return castScalar(b, l, a[0], to);
                     });
    return success();
  }
};

} // namespace

void tfc::lowering::populateElementwisePatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<BinaryLowering<AddOp, arith::AddFOp>,
               BinaryLowering<SubOp, arith::SubFOp>,
               BinaryLowering<MulOp, arith::MulFOp>,
               BinaryLowering<DivOp, arith::DivFOp>,
               BinaryLowering<MaxOp, arith::MaximumFOp>,
               BinaryLowering<MinOp, arith::MinimumFOp>,
               BinaryLowering<PowOp, math::PowFOp>,
               UnaryLowering<ExpOp, math::ExpOp>,
               UnaryLowering<LogOp, math::LogOp>,
               UnaryLowering<SqrtOp, math::SqrtOp>,
               UnaryLowering<RsqrtOp, math::RsqrtOp>,
               UnaryLowering<TanhOp, math::TanhOp>,
               UnaryLowering<ErfOp, math::ErfOp>,
               UnaryLowering<NegOp, arith::NegFOp>, WhereLowering,
               CastLowering>(ctx);
  patterns.add<FunctionLowering<ReluOp>>(
      ctx, [](OpBuilder &b, Location l, Value x, ReluOp) {
        return buildActivation(b, l, x, Activation::Relu);
      });
  patterns.add<FunctionLowering<SiluOp>>(
      ctx, [](OpBuilder &b, Location l, Value x, SiluOp) {
        return buildSilu(b, l, x);
      });
  patterns.add<FunctionLowering<GeluOp>>(
      ctx, [](OpBuilder &b, Location l, Value x, GeluOp op) {
        return buildGelu(b, l, x, op.getApproximation());
      });
}
