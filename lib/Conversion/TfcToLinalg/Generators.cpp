//===- Generators.cpp - Index-driven tfc ops to linalg.generic ------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Ops whose values follow from positions: embedding gathers, arange, causal
// and padding masks, sinusoidal position tables and rotary embeddings. Each
// is one parallel linalg.generic reading linalg.index.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "tfc/Conversion/TfcToLinalg/TfcToLinalg.h"
#include "tfc/Dialect/Tfc/IR/PositionBias.h"
#include "tfc/Dialect/Tfc/IR/TfcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::lowering;

namespace {

using Body = function_ref<Value(OpBuilder &, Location, ValueRange args)>;

/// A parallel generic producing `type` (sizes from `sizes`) from `inputs`
/// read through `inputMaps`.
Value generate(OpBuilder &b, Location loc, RankedTensorType type,
               ArrayRef<OpFoldResult> sizes, ValueRange inputs,
               ArrayRef<AffineMap> inputMaps, Body body) {
  Value init = emptyLike(b, loc, type, sizes);
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(b.getMultiDimIdentityMap(type.getRank()));
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, type, inputs, init, maps, iterators,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l, body(nb, l, args));
             })
      .getResult(0);
}

Value indexToF64(OpBuilder &b, Location loc, Value index) {
  Value i = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  return arith::SIToFPOp::create(b, loc, b.getF64Type(), i);
}

/// sin and cos of an f64 angle in element type `et`. For f32 and narrower the
/// angle is first reduced to [0, 2π) in f64 so that the single-precision
/// polynomial stays accurate for large positions.
std::pair<Value, Value> sinCos(OpBuilder &b, Location loc, Value angle,
                               Type et) {
  if (et.isF64())
    return {math::SinOp::create(b, loc, angle),
            math::CosOp::create(b, loc, angle)};
  Value twoPi = floatConst(b, loc, b.getF64Type(), 2.0 * M_PI);
  Value turns = math::FloorOp::create(
      b, loc, arith::DivFOp::create(b, loc, angle, twoPi));
  Value reduced = arith::SubFOp::create(
      b, loc, angle, arith::MulFOp::create(b, loc, turns, twoPi));
  Value a32 = arith::TruncFOp::create(b, loc, b.getF32Type(), reduced);
  Value s = math::SinOp::create(b, loc, a32);
  Value c = math::CosOp::create(b, loc, a32);
  return {castScalar(b, loc, s, et), castScalar(b, loc, c, et)};
}

/// The inverse frequencies base^(-2i / n) of pairs i < count, each times
/// scale[i] when given, as an f64 constant table: computed here, with the
/// f64 operations (and the C library's exp) the generated code used to
/// repeat for every element (a libm call per element of q and k, a
/// measurable share of SmolLM2's prefill and decode; figures: commit
/// 862fd7b).
Value inverseFrequencyTable(OpBuilder &b, Location loc, double base, int64_t n,
                            int64_t count,
                            std::optional<ArrayRef<double>> scale = {}) {
  double step = -2.0 * std::log(base) / n;
  SmallVector<double> table;
  for (int64_t i = 0; i < count; ++i) {
    double f = std::exp(static_cast<double>(i) * step);
    table.push_back(scale ? f * (*scale)[i] : f);
  }
  auto type = RankedTensorType::get({count}, b.getF64Type());
  return arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, ArrayRef(table)));
}

} // namespace

void mlir::tfc::recordIdBound(Value ids, int64_t rows) {
  auto arg = dyn_cast<BlockArgument>(ids);
  if (!arg || ShapedType::isDynamic(rows))
    return;
  auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  if (!func || arg.getOwner() != &func.front())
    return;
  unsigned i = arg.getArgNumber();
  if (auto old = func.getArgAttrOfType<IntegerAttr>(i, "tfc.id_bound"))
    rows = std::min(rows, old.getInt());
  func.setArgAttr(i, "tfc.id_bound",
                  IntegerAttr::get(IntegerType::get(func.getContext(), 64),
                                   rows));
}

namespace {

struct EmbeddingLowering : OpRewritePattern<EmbeddingOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(EmbeddingOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value table = op.getTable(), ids = op.getIds();
    auto type = cast<RankedTensorType>(op.getType());
    int64_t rank = type.getRank();
    SmallVector<OpFoldResult> sizes = getDims(rewriter, loc, ids);
    sizes.push_back(getDims(rewriter, loc, table)[1]);
    SmallVector<AffineExpr> idExprs;
    for (int64_t d = 0; d + 1 < rank; ++d)
      idExprs.push_back(rewriter.getAffineDimExpr(d));
    AffineMap idMap = AffineMap::get(rank, 0, idExprs, getContext());
    Value rows = tensor::DimOp::create(rewriter, loc, table, 0);
    recordIdBound(ids, cast<RankedTensorType>(table.getType()).getDimSize(0));
    Value r = generate(
        rewriter, loc, type, sizes, ids, idMap,
        [&](OpBuilder &b, Location l, ValueRange args) {
          // Ids are validated by the runtime; clamping keeps a bad id from
          // reading outside the table.
          Value id = arith::IndexCastOp::create(b, l, b.getIndexType(), args[0]);
          Value zero = arith::ConstantIndexOp::create(b, l, 0);
          Value last = arith::SubIOp::create(
              b, l, rows, arith::ConstantIndexOp::create(b, l, 1));
          id = arith::MaxSIOp::create(b, l, id, zero);
          id = arith::MinSIOp::create(b, l, id, last);
          Value d = linalg::IndexOp::create(b, l, rank - 1);
          return tensor::ExtractOp::create(b, l, table, ValueRange{id, d})
              .getResult();
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct ArangeLowering : OpRewritePattern<ArangeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ArangeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    Value offset = op.getOffset();
    Value r = generate(rewriter, loc, type, {OpFoldResult(op.getLength())}, {},
                       {}, [&](OpBuilder &b, Location l, ValueRange) {
                         Value i = linalg::IndexOp::create(b, l, 0);
                         if (offset)
                           i = arith::AddIOp::create(b, l, i, offset);
                         return arith::IndexCastOp::create(
                                    b, l, type.getElementType(), i)
                             .getResult();
                       });
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct CausalMaskLowering : OpRewritePattern<CausalMaskOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CausalMaskOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    Value tq = op.getQueryLength(), tk = op.getKeyLength();
    Type et = type.getElementType();
    Value r = generate(
        rewriter, loc, type, {OpFoldResult(tq), OpFoldResult(tk)}, {}, {},
        [&](OpBuilder &b, Location l, ValueRange) {
          Value i = linalg::IndexOp::create(b, l, 0);
          Value j = linalg::IndexOp::create(b, l, 1);
          // j <= i + (Tk - Tq)  <=>  j + Tq <= i + Tk
          Value lhs = arith::AddIOp::create(b, l, j, tq);
          Value rhs = arith::AddIOp::create(b, l, i, tk);
          Value keep =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::sle, lhs, rhs);
          return arith::SelectOp::create(
                     b, l, keep, floatConst(b, l, et, 0.0),
                     floatConst(b, l, et,
                                -std::numeric_limits<double>::infinity()))
              .getResult();
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct PaddingMaskLowering : OpRewritePattern<PaddingMaskOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PaddingMaskOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput();
    auto inType = cast<RankedTensorType>(input.getType());
    auto type = cast<RankedTensorType>(op.getType());
    Type et = type.getElementType();
    auto flatType = RankedTensorType::get(inType.getShape(), et);
    // An integer 1/0 mask read straight from an entry input holds only 0 and
    // 1: the runtime rejects other values (HF transformers treats them
    // differently across versions) rather than take them as "keep".
    if (inType.getElementType().isSignlessInteger() &&
        inType.getElementType().getIntOrFloatBitWidth() > 1)
      recordIdBound(input, 2);
    SmallVector<OpFoldResult> sizes = getDims(rewriter, loc, input);
    Value flat = generate(
        rewriter, loc, flatType, sizes, input,
        rewriter.getMultiDimIdentityMap(2),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value keep = castScalar(b, l, args[0], b.getI1Type());
          return arith::SelectOp::create(
                     b, l, keep, floatConst(b, l, et, 0.0),
                     floatConst(b, l, et,
                                -std::numeric_limits<double>::infinity()))
              .getResult();
        });
    SmallVector<OpFoldResult> outSizes = {sizes[0], rewriter.getIndexAttr(1),
                                          rewriter.getIndexAttr(1), sizes[1]};
    SmallVector<ReassociationIndices> groups = {{0, 1, 2}, {3}};
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, type, flat, groups,
                                                       outSizes);
    return success();
  }
};

struct SinusoidalPositionsLowering : OpRewritePattern<SinusoidalPositionsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SinusoidalPositionsOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    Type et = type.getElementType();
    int64_t width = type.getDimSize(1);
    double base = op.getBase().convertToDouble();
    Value offset = op.getOffset();
    // (pairs d / 2 or d mod D/2: at most (D - 1) / 2)
    Value invFreqs =
        inverseFrequencyTable(rewriter, loc, base, width, (width + 1) / 2);
    Value r = generate(
        rewriter, loc, type,
        {OpFoldResult(op.getLength()), rewriter.getIndexAttr(width)}, {}, {},
        [&](OpBuilder &b, Location l, ValueRange) {
          Value t = linalg::IndexOp::create(b, l, 0);
          if (offset)
            t = arith::AddIOp::create(b, l, t, offset);
          Value d = linalg::IndexOp::create(b, l, 1);
          Value two = arith::ConstantIndexOp::create(b, l, 2);
          // interleaved: feature d is pair d/2, cos when odd; halves: pair
          // d mod D/2, cos in the second half.
          Value pair, useCos;
          if (op.getHalves()) {
            Value half = arith::ConstantIndexOp::create(b, l, width / 2);
            pair = arith::RemUIOp::create(b, l, d, half);
            useCos = arith::CmpIOp::create(b, l, arith::CmpIPredicate::uge, d,
                                           half);
          } else {
            pair = arith::DivUIOp::create(b, l, d, two);
            useCos = arith::CmpIOp::create(
                b, l, arith::CmpIPredicate::ne,
                arith::RemUIOp::create(b, l, d, two),
                arith::ConstantIndexOp::create(b, l, 0));
          }
          Value angle = arith::MulFOp::create(
              b, l, indexToF64(b, l, t),
              tensor::ExtractOp::create(b, l, invFreqs, ValueRange{pair}));
          auto [s, c] = sinCos(b, l, angle, et);
          return arith::SelectOp::create(b, l, useCos, c, s).getResult();
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// Rotary embedding: each feature d < R is rotated with its partner.
/// adjacent: pairs (2i, 2i+1); rotate_half: pairs (i, i + R/2).
///   first of a pair:  x·cos θ − x_partner·sin θ
///   second of a pair: x·cos θ + x_partner·sin θ
struct RopeLowering : OpRewritePattern<RopeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RopeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput();
    auto type = cast<RankedTensorType>(input.getType());
    int64_t rank = type.getRank();
    int64_t width = type.getDimSize(rank - 1);
    if (ShapedType::isDynamic(width) && !op.getRotaryDim())
      return rewriter.notifyMatchFailure(op, "rope needs a static head size");
    int64_t rotary = op.getRotaryDim() ? *op.getRotaryDim() : width;
    bool adjacent = op.getMode() == RopeMode::Adjacent;
    double base = op.getBase().convertToDouble();
    Value offset = op.getOffset();
    // Per-row positions (rows of a serving batch): the tables get the batch
    // dim, row b's positions starting at rowOffsets[b].
    Value rowOffsets = op.getRowOffsets();
    Type et = type.getElementType();
    // The pairs' inverse frequencies (times their freq_scale multipliers),
    // a constant table.
    std::optional<ArrayRef<double>> scale = op.getFreqScale();
    if (scale && static_cast<int64_t>(scale->size()) != rotary / 2)
      return rewriter.notifyMatchFailure(op, "freq_scale size mismatch");
    int64_t pairs = std::max<int64_t>(rotary / 2, 1);
    Value invFreqs =
        inverseFrequencyTable(rewriter, loc, base, rotary, pairs, scale);
    // cos θ and sin θ of every (position, pair), [T, pairs] each, once: the
    // rotation reads them instead of evaluating both per element (for every
    // head, and twice per pair). Per element in SmolLM2-135M they were a
    // sizeable share of a 128-token forward (figures: commit a95582d).
    SmallVector<OpFoldResult> dims = getDims(rewriter, loc, input);
    SmallVector<int64_t> tableShape = {type.getDimSize(rank - 2), pairs};
    SmallVector<OpFoldResult> tableSizes = {dims[rank - 2],
                                            rewriter.getIndexAttr(pairs)};
    if (rowOffsets) {
      tableShape.insert(tableShape.begin(), type.getDimSize(0));
      tableSizes.insert(tableSizes.begin(), dims[0]);
    }
    int64_t tableRank = static_cast<int64_t>(tableShape.size());
    auto tableType = RankedTensorType::get(tableShape, et);
    AffineMap idT = rewriter.getMultiDimIdentityMap(tableRank);
    auto tables = linalg::GenericOp::create(
        rewriter, loc, TypeRange{tableType, tableType}, ValueRange{},
        ValueRange{emptyLike(rewriter, loc, tableType, tableSizes),
                   emptyLike(rewriter, loc, tableType, tableSizes)},
        ArrayRef<AffineMap>{idT, idT},
        SmallVector<utils::IteratorType>(tableRank,
                                         utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange) {
          Value t = linalg::IndexOp::create(b, l, tableRank - 2);
          Value i = linalg::IndexOp::create(b, l, tableRank - 1);
          if (offset)
            t = arith::AddIOp::create(b, l, t, offset);
          if (rowOffsets) {
            Value row = linalg::IndexOp::create(b, l, 0);
            Value first =
                tensor::ExtractOp::create(b, l, rowOffsets, ValueRange{row});
            t = arith::AddIOp::create(
                b, l, t,
                arith::IndexCastOp::create(b, l, b.getIndexType(), first));
          }
          Value invFreq =
              tensor::ExtractOp::create(b, l, invFreqs, ValueRange{i});
          Value angle =
              arith::MulFOp::create(b, l, indexToF64(b, l, t), invFreq);
          auto [s, c] = sinCos(b, l, angle, et);
          linalg::YieldOp::create(b, l, ValueRange{c, s});
        });
    Value cosTable = tables.getResult(0), sinTable = tables.getResult(1);
    Value r = generate(
        rewriter, loc, type, dims, input,
        rewriter.getMultiDimIdentityMap(rank),
        [&](OpBuilder &b, Location l, ValueRange args) {
          SmallVector<Value> idx;
          for (int64_t d = 0; d < rank; ++d)
            idx.push_back(linalg::IndexOp::create(b, l, d));
          Value t = idx[rank - 2], d = idx[rank - 1];
          auto cst = [&](int64_t v) {
            return arith::ConstantIndexOp::create(b, l, v).getResult();
          };
          Value inRotary =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, d,
                                    cst(rotary));
          Value pair, partner, isSecond;
          if (adjacent) {
            pair = arith::DivUIOp::create(b, l, d, cst(2));
            isSecond = arith::CmpIOp::create(
                b, l, arith::CmpIPredicate::ne,
                arith::RemUIOp::create(b, l, d, cst(2)), cst(0));
            partner = arith::SelectOp::create(
                b, l, isSecond, arith::SubIOp::create(b, l, d, cst(1)),
                arith::AddIOp::create(b, l, d, cst(1)));
          } else {
            int64_t half = rotary / 2;
            isSecond = arith::CmpIOp::create(b, l, arith::CmpIPredicate::uge,
                                             d, cst(half));
            pair = arith::SelectOp::create(
                b, l, isSecond, arith::SubIOp::create(b, l, d, cst(half)), d);
            partner = arith::SelectOp::create(
                b, l, isSecond, pair, arith::AddIOp::create(b, l, d, cst(half)));
          }
          // Outside the rotary part the partner index is unused; keep it in
          // bounds anyway.
          partner = arith::SelectOp::create(b, l, inRotary, partner, d);
          SmallVector<Value> pidx(idx);
          pidx[rank - 1] = partner;
          Value xp = tensor::ExtractOp::create(b, l, input, pidx);
          // Outside the rotary part `pair` may run past the tables.
          Value row = arith::SelectOp::create(b, l, inRotary, pair, cst(0));
          SmallVector<Value> at = {t, row};
          if (rowOffsets)
            at.insert(at.begin(), idx[0]);
          Value c = tensor::ExtractOp::create(b, l, cosTable, at);
          Value s = tensor::ExtractOp::create(b, l, sinTable, at);
          Value x = args[0];
          Value xc = arith::MulFOp::create(b, l, x, c);
          Value ps = arith::MulFOp::create(b, l, xp, s);
          Value rotated = arith::SelectOp::create(
              b, l, isSecond, arith::AddFOp::create(b, l, xc, ps),
              arith::SubFOp::create(b, l, xc, ps));
          return arith::SelectOp::create(b, l, inRotary, rotated, x)
              .getResult();
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// T5's bias by distance: column c of head h is table[bucket(c - R), h].
/// The bucket of a distance is integer arithmetic on the distance: exact
/// below half the buckets, then one comparison per logarithmic bucket
/// against the distance where it starts (computed here in single precision
/// as transformers does, PositionBias.h).
struct RelativePositionBiasLowering : OpRewritePattern<RelativePositionBiasOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RelativePositionBiasOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    Value table = op.getTable();
    int64_t numBuckets = static_cast<int64_t>(op.getNumBuckets());
    int64_t R = static_cast<int64_t>(op.getMaxDistance());
    bool bidirectional = op.getBidirectional();
    int64_t buckets = bidirectional ? numBuckets / 2 : numBuckets;
    SmallVector<int64_t> starts = relativeBucketStarts(buckets, R);
    SmallVector<OpFoldResult> sizes = {getDims(rewriter, loc, table)[1],
                                       rewriter.getIndexAttr(2 * R + 1)};
    Value r = generate(
        rewriter, loc, type, sizes, {}, {},
        [&](OpBuilder &b, Location l, ValueRange) {
          auto c = [&](int64_t v) {
            return arith::ConstantIndexOp::create(b, l, v).getResult();
          };
          Value h = linalg::IndexOp::create(b, l, 0);
          Value dist = arith::SubIOp::create(
              b, l, linalg::IndexOp::create(b, l, 1), c(R));
          Value zero = c(0);
          Value after = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt,
                                              dist, zero);
          Value back = arith::SubIOp::create(b, l, zero, dist);
          Value d, offset = zero;
          if (bidirectional) {
            d = arith::SelectOp::create(b, l, after, dist, back);
            offset = arith::SelectOp::create(b, l, after, c(buckets), zero);
          } else {
            d = arith::MaxSIOp::create(b, l, back, zero);
          }
          Value large = c(buckets / 2);
          for (int64_t start : starts)
            large = arith::AddIOp::create(
                b, l, large,
                arith::IndexCastUIOp::create(
                    b, l, b.getIndexType(),
                    arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, d,
                                          c(start))));
          Value small = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt,
                                              d, c(buckets / 2));
          Value bucket = arith::AddIOp::create(
              b, l, offset, arith::SelectOp::create(b, l, small, d, large));
          return tensor::ExtractOp::create(b, l, table, ValueRange{bucket, h})
              .getResult();
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

} // namespace

void tfc::lowering::populateGeneratorPatterns(RewritePatternSet &patterns) {
  patterns.add<EmbeddingLowering, ArangeLowering, CausalMaskLowering,
               RelativePositionBiasLowering,
               PaddingMaskLowering, SinusoidalPositionsLowering, RopeLowering>(
      patterns.getContext());
}
