//===- RowKernels.cpp - Softmax, LayerNorm and RMSNorm, once --------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The math of the row kernels over RowKernelTarget (include/tfc/Conversion/
// RowKernels.h). Passes over a row run back to back:
//   softmax:    max; Σ exp(x - max) (kept in the output or recomputed);
//               exp(x - max) / Σ
//   layer_norm: mean; variance of (x - mean); normalise, scale, shift
//   rms_norm:   mean of squares; normalise, scale
// A residual operand is added on every read (x = input + residual).
//
//===----------------------------------------------------------------------===//

#include "tfc/Conversion/RowKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <limits>

using namespace mlir;
using namespace mlir::tfc;

namespace {

using Row = RowKernelTarget::Row;
using At = RowKernelTarget::At;

constexpr double kInf = std::numeric_limits<double>::infinity();

Value f32(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}

/// The row's length as f32.
Value lengthF32(OpBuilder &b, Location loc, Value length) {
  Value i = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), length);
  return arith::UIToFPOp::create(b, loc, b.getF32Type(), i);
}

/// x = input (+ residual) at the position; `fill` past the row.
Value readX(RowKernelTarget &t, OpBuilder &b, Location loc, const Row &row,
            Value input, Value residual, const At &at, double fill) {
  Value x = t.load(b, loc, row, input, at, /*perRow=*/true, fill);
  if (residual)
    x = arith::AddFOp::create(
        b, loc, x, t.load(b, loc, row, residual, at, /*perRow=*/true, 0.0));
  return x;
}

} // namespace

SmallVector<Value> RowKernelTarget::indices(const Row &row, const At &at,
                                            bool perRow) {
  SmallVector<Value> idx;
  if (perRow)
    idx.assign(row.lead.begin(), row.lead.end());
  idx.push_back(at.index);
  return idx;
}

void tfc::emitRowSoftmax(RowKernelTarget &t, OpBuilder &b, Location loc,
                         Value input, Value out) {
  input = t.prepare(b, loc, input);
  t.forEachRow(b, loc, input, [&](OpBuilder &b, Location loc, const Row &row) {
    Value max =
        t.reduce(b, loc, row, RowReduction::Max, -kInf,
                 [&](OpBuilder &b, Location l, const At &at) {
                   return readX(t, b, l, row, input, Value(), at, -kInf);
                 });
    // An all -inf row: subtract 0 so that every exp is 0, not NaN.
    Value allMasked = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                            max, f32(b, loc, -kInf));
    max = arith::SelectOp::create(b, loc, allMasked, f32(b, loc, 0.0), max);
    Value maxB = t.broadcast(b, loc, max);
    auto expAt = [&](OpBuilder &b, Location l, const At &at) -> Value {
      Value x = readX(t, b, l, row, input, Value(), at, -kInf);
      return math::ExpOp::create(b, l, arith::SubFOp::create(b, l, x, maxB));
    };
    bool keep = t.keepsExponentials();
    Value sum = t.reduce(b, loc, row, RowReduction::Add, 0.0,
                         [&](OpBuilder &b, Location l, const At &at) {
                           Value e = expAt(b, l, at);
                           if (keep)
                             t.store(b, l, row, e, out, at);
                           return e;
                         });
    Value invB = t.broadcast(b, loc, emitSafeReciprocal(b, loc, sum));
    t.forEach(b, loc, row, [&](OpBuilder &b, Location l, const At &at) {
      Value e = keep ? t.load(b, l, row, out, at, /*perRow=*/true, 0.0)
                     : expAt(b, l, at);
      t.store(b, l, row, arith::MulFOp::create(b, l, e, invB), out, at);
    });
  });
}

void tfc::emitRowLayerNorm(RowKernelTarget &t, OpBuilder &b, Location loc,
                           double eps, Value input, Value scale, Value bias,
                           Value residual, Value out) {
  input = t.prepare(b, loc, input);
  if (residual)
    residual = t.prepare(b, loc, residual);
  if (scale)
    scale = t.prepare(b, loc, scale);
  if (bias)
    bias = t.prepare(b, loc, bias);
  t.forEachRow(b, loc, input, [&](OpBuilder &b, Location loc, const Row &row) {
    Value n = lengthF32(b, loc, row.length);
    Value sum = t.reduce(b, loc, row, RowReduction::Add, 0.0,
                         [&](OpBuilder &b, Location l, const At &at) {
                           return readX(t, b, l, row, input, residual, at, 0.0);
                         });
    Value mean = arith::DivFOp::create(b, loc, sum, n);
    Value meanB = t.broadcast(b, loc, mean);
    auto centred = [&](OpBuilder &b, Location l, const At &at) -> Value {
      Value x = readX(t, b, l, row, input, residual, at, 0.0);
      return arith::SubFOp::create(b, l, x, meanB);
    };
    // Positions past the row read 0 and must not add mean².
    Value sq = t.reduceSquares(b, loc, row,
                               [&](OpBuilder &b, Location l, const At &at) {
                                 return t.zeroTail(b, l, at, centred(b, l, at));
                               });
    Value var = arith::DivFOp::create(b, loc, sq, n);
    Value rstd = math::RsqrtOp::create(
        b, loc, arith::AddFOp::create(b, loc, var, f32(b, loc, eps)));
    Value rstdB = t.broadcast(b, loc, rstd);
    t.forEach(b, loc, row, [&](OpBuilder &b, Location l, const At &at) {
      Value y = arith::MulFOp::create(b, l, centred(b, l, at), rstdB);
      if (scale)
        y = arith::MulFOp::create(b, l, y,
                                  t.load(b, l, row, scale, at, false, 1.0));
      if (bias)
        y = arith::AddFOp::create(b, l, y,
                                  t.load(b, l, row, bias, at, false, 0.0));
      t.store(b, l, row, y, out, at);
    });
  });
}

void tfc::emitRowRmsNorm(RowKernelTarget &t, OpBuilder &b, Location loc,
                         double eps, Value input, Value scale, Value residual,
                         Value out) {
  input = t.prepare(b, loc, input);
  if (residual)
    residual = t.prepare(b, loc, residual);
  if (scale)
    scale = t.prepare(b, loc, scale);
  t.forEachRow(b, loc, input, [&](OpBuilder &b, Location loc, const Row &row) {
    Value n = lengthF32(b, loc, row.length);
    Value sq = t.reduceSquares(
        b, loc, row, [&](OpBuilder &b, Location l, const At &at) {
          return readX(t, b, l, row, input, residual, at, 0.0);
        });
    Value rstd = math::RsqrtOp::create(
        b, loc,
        arith::AddFOp::create(b, loc, arith::DivFOp::create(b, loc, sq, n),
                              f32(b, loc, eps)));
    Value rstdB = t.broadcast(b, loc, rstd);
    t.forEach(b, loc, row, [&](OpBuilder &b, Location l, const At &at) {
      Value x = readX(t, b, l, row, input, residual, at, 0.0);
      Value y = arith::MulFOp::create(b, l, x, rstdB);
      if (scale)
        y = arith::MulFOp::create(b, l, y,
                                  t.load(b, l, row, scale, at, false, 1.0));
      t.store(b, l, row, y, out, at);
    });
  });
}

OnlineSoftmaxStep tfc::emitOnlineSoftmaxStep(ScoreLanes &lanes, OpBuilder &b,
                                             Location loc, Value max, Value sum,
                                             Value scores) {
  Value negInf = f32(b, loc, -kInf);
  OnlineSoftmaxStep step;
  step.max = arith::MaximumFOp::create(
      b, loc, max, lanes.reduce(b, loc, RowReduction::Max, scores));
  Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                     step.max, negInf);
  Value safeMax =
      arith::SelectOp::create(b, loc, none, f32(b, loc, 0.0), step.max);
  step.alpha = arith::SelectOp::create(
      b, loc, none, f32(b, loc, 1.0),
      math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, max, safeMax)));
  step.probs = math::ExpOp::create(
      b, loc,
      arith::SubFOp::create(b, loc, scores, lanes.broadcast(b, loc, safeMax)));
  step.sum = arith::AddFOp::create(
      b, loc, arith::MulFOp::create(b, loc, sum, step.alpha),
      lanes.reduce(b, loc, RowReduction::Add, step.probs));
  return step;
}

Value tfc::emitPositionTerms(ScoreLanes &lanes, OpBuilder &b, Location loc,
                             const ScorePositions &pos,
                             const PositionTerms &terms, Value scores) {
  Type i32 = b.getI32Type();
  auto lanesOf = [&](Value index) {
    return lanes.broadcastInt(
        b, loc, arith::IndexCastOp::create(b, loc, i32, index));
  };
  auto intLanes = [&](int64_t v) {
    return lanes.broadcastInt(
        b, loc, arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v)));
  };
  Value s = scores;
  // Relative biases of the distance r = j - query.
  Value dist;
  if (terms.relativeBias || terms.alibiSlope)
    dist = arith::SubIOp::create(b, loc, pos.keys, lanesOf(pos.query));
  if (terms.relativeBias) {
    int64_t r = terms.relative;
    Value col = arith::MinSIOp::create(
        b, loc, arith::MaxSIOp::create(b, loc, dist, intLanes(-r)),
        intLanes(r));
    col = arith::AddIOp::create(b, loc, col, intLanes(r));
    // Run-time heads past the table's rows read its last.
    int64_t rows = cast<MemRefType>(terms.relativeBias.getType()).getDimSize(0);
    Value row = arith::MinUIOp::create(
        b, loc, terms.head, arith::ConstantIndexOp::create(b, loc, rows - 1));
    s = arith::AddFOp::create(b, loc, s,
                              lanes.gather(b, loc, terms.relativeBias, row,
                                           col));
  }
  if (terms.alibiSlope) {
    Type f32Lanes = b.getF32Type();
    if (auto v = dyn_cast<VectorType>(dist.getType()))
      f32Lanes = v.clone(b.getF32Type());
    Value r = arith::SIToFPOp::create(b, loc, f32Lanes, dist);
    s = math::FmaOp::create(b, loc, lanes.broadcast(b, loc, terms.alibiSlope),
                            r, s);
  }
  // The keys the row sees.
  Value keep = pos.valid;
  if (terms.causal) // j <= query
    keep = arith::AndIOp::create(
        b, loc, keep,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, pos.keys,
                              lanesOf(pos.query)));
  if (terms.window > 0) { // j > query - window
    Value first = arith::SubIOp::create(
        b, loc, pos.query,
        arith::ConstantIndexOp::create(b, loc, terms.window));
    keep = arith::AndIOp::create(
        b, loc, keep,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, pos.keys,
                              lanesOf(first)));
  }
  return arith::SelectOp::create(b, loc, keep, s,
                                 lanes.broadcast(b, loc, f32(b, loc, -kInf)));
}

Value tfc::emitSafeReciprocal(OpBuilder &b, Location loc, Value sum) {
  Value zero = f32(b, loc, 0.0);
  Value notPositive =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, sum, zero);
  return arith::SelectOp::create(
      b, loc, notPositive, zero,
      arith::DivFOp::create(b, loc, f32(b, loc, 1.0), sum));
}
