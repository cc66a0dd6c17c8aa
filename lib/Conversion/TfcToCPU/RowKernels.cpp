//===- RowKernels.cpp - Softmax, LayerNorm and RMSNorm over rows ----------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Each row (the last axis) is processed by one task of a parallel loop over
// the leading dimensions, 16 lanes at a time with a masked tail. The passes
// over a row run back to back, so the row stays in L1:
//   softmax:    max; exp(x - max) stored and summed; scale by 1/sum
//   layer_norm: mean; variance of (x - mean); normalise, scale, shift
//   rms_norm:   mean of squares; normalise, scale
// A residual operand is added on every read (x = input + residual).
//
//===----------------------------------------------------------------------===//

#include "KernelConfig.h"
#include "KernelUtils.h"
#include "Kernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <limits>

using namespace mlir;
using namespace mlir::tfc::cpu;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// Indices of element `d` of the row at `lead`.
SmallVector<Value> rowIndex(ValueRange lead, Value d) {
  SmallVector<Value> idx(lead);
  idx.push_back(d);
  return idx;
}

/// Reads 16 lanes of x = input (+ residual) at `lead`, `d`.
Value readX(OpBuilder &b, Location loc, Value input, Value residual,
            ValueRange lead, Value d, Value mask, Value passthru) {
  Value x = maskedLoad(b, loc, input, rowIndex(lead, d), mask, passthru);
  if (residual) {
    Value r = maskedLoad(b, loc, residual, rowIndex(lead, d), mask,
                         splatConst(b, loc, 0.0));
    x = arith::AddFOp::create(b, loc, x, r);
  }
  return x;
}

/// The parameter vector `p` (or `dflt` when absent) at `d`.
Value readParam(OpBuilder &b, Location loc, Value p, Value d, Value mask,
                double dflt) {
  if (!p)
    return splatConst(b, loc, dflt);
  return maskedLoad(b, loc, p, ValueRange{d}, mask, splatConst(b, loc, dflt));
}

int64_t rankOf(Value memref) { return cast<MemRefType>(memref.getType()).getRank(); }

} // namespace

void tfc::cpu::emitSoftmax(OpBuilder &b, Location loc, Value input,
                           Value out) {
  input = contiguous(b, loc, input);
  int64_t rank = rankOf(input);
  Value n = memref::DimOp::create(b, loc, input, rank - 1);
  parallelOverLeading(b, loc, input, rank - 1, [&](OpBuilder &b, Location loc,
                                                   ValueRange lead) {
    Value negInf = splatConst(b, loc, -kInf);
    Value maxVec = forChunksReduce(
        b, loc, n, negInf,
        [&](OpBuilder &b, Location l, Value d, Value mask, ValueRange acc) {
          Value x = maskedLoad(b, l, input, rowIndex(lead, d), mask, negInf);
          return SmallVector<Value>{arith::MaximumFOp::create(b, l, acc[0], x)};
        })[0];
    Value max = reduceMax(b, loc, maxVec);
    // All -inf: subtract 0 so that exp gives 0 rather than NaN.
    Value allMasked = arith::CmpFOp::create(
        b, loc, arith::CmpFPredicate::OEQ, max, f32Const(b, loc, -kInf));
    max = arith::SelectOp::create(b, loc, allMasked, f32Const(b, loc, 0.0), max);
    Value maxSplat = splat(b, loc, max);
    Value sumVec = forChunksReduce(
        b, loc, n, splatConst(b, loc, 0.0),
        [&](OpBuilder &b, Location l, Value d, Value mask, ValueRange acc) {
          Value x = maskedLoad(b, l, input, rowIndex(lead, d), mask, negInf);
          Value e = math::ExpOp::create(
              b, l, arith::SubFOp::create(b, l, x, maxSplat));
          maskedStore(b, l, e, out, rowIndex(lead, d), mask);
          return SmallVector<Value>{arith::AddFOp::create(b, l, acc[0], e)};
        })[0];
    Value sum = reduceAdd(b, loc, sumVec);
    Value zero = f32Const(b, loc, 0.0);
    Value isZero =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sum, zero);
    Value inv = arith::SelectOp::create(
        b, loc, isZero, zero,
        arith::DivFOp::create(b, loc, f32Const(b, loc, 1.0), sum));
    Value invSplat = splat(b, loc, inv);
    forChunks(b, loc, n, [&](OpBuilder &b, Location l, Value d, Value mask) {
      Value e = maskedLoad(b, l, out, rowIndex(lead, d), mask,
                           splatConst(b, l, 0.0));
      maskedStore(b, l, arith::MulFOp::create(b, l, e, invSplat), out,
                  rowIndex(lead, d), mask);
    });
  });
}

void tfc::cpu::emitLayerNorm(OpBuilder &b, Location loc, kernel::LayerNormOp op,
                             Value input, Value scale, Value bias,
                             Value residual, Value out) {
  input = contiguous(b, loc, input);
  if (residual)
    residual = contiguous(b, loc, residual);
  if (scale)
    scale = contiguous(b, loc, scale);
  if (bias)
    bias = contiguous(b, loc, bias);
  double eps = op.getEpsilon().convertToDouble();
  int64_t rank = rankOf(input);
  Value n = memref::DimOp::create(b, loc, input, rank - 1);
  parallelOverLeading(b, loc, input, rank - 1, [&](OpBuilder &b, Location loc,
                                                   ValueRange lead) {
    Value zeroVec = splatConst(b, loc, 0.0);
    Value nf = arith::UIToFPOp::create(
        b, loc, b.getF32Type(),
        arith::IndexCastUIOp::create(b, loc, b.getI64Type(), n));
    Value sum = reduceAdd(
        b, loc,
        forChunksReduce(b, loc, n, zeroVec,
                        [&](OpBuilder &b, Location l, Value d, Value mask,
                            ValueRange acc) {
                          Value x = readX(b, l, input, residual, lead, d, mask,
                                          zeroVec);
                          return SmallVector<Value>{
                              arith::AddFOp::create(b, l, acc[0], x)};
                        })[0]);
    Value mean = arith::DivFOp::create(b, loc, sum, nf);
    Value meanSplat = splat(b, loc, mean);
    Value sq = reduceAdd(
        b, loc,
        forChunksReduce(
            b, loc, n, zeroVec,
            [&](OpBuilder &b, Location l, Value d, Value mask, ValueRange acc) {
              Value x = readX(b, l, input, residual, lead, d, mask, zeroVec);
              Value c = arith::SubFOp::create(b, l, x, meanSplat);
              // Lanes past the row read 0 and must not add mean².
              c = arith::SelectOp::create(b, l, mask, c, zeroVec);
              return SmallVector<Value>{
                  math::FmaOp::create(b, l, c, c, acc[0])};
            })[0]);
    Value var = arith::DivFOp::create(b, loc, sq, nf);
    Value rstd = math::RsqrtOp::create(
        b, loc, arith::AddFOp::create(b, loc, var, f32Const(b, loc, eps)));
    Value rstdSplat = splat(b, loc, rstd);
    forChunks(b, loc, n, [&](OpBuilder &b, Location l, Value d, Value mask) {
      Value x = readX(b, l, input, residual, lead, d, mask, zeroVec);
      Value y = arith::MulFOp::create(
          b, l, arith::SubFOp::create(b, l, x, meanSplat), rstdSplat);
      y = arith::MulFOp::create(b, l, y, readParam(b, l, scale, d, mask, 1.0));
      y = arith::AddFOp::create(b, l, y, readParam(b, l, bias, d, mask, 0.0));
      maskedStore(b, l, y, out, rowIndex(lead, d), mask);
    });
  });
}

void tfc::cpu::emitRmsNorm(OpBuilder &b, Location loc, kernel::RmsNormOp op,
                           Value input, Value scale, Value residual,
                           Value out) {
  input = contiguous(b, loc, input);
  if (residual)
    residual = contiguous(b, loc, residual);
  if (scale)
    scale = contiguous(b, loc, scale);
  double eps = op.getEpsilon().convertToDouble();
  int64_t rank = rankOf(input);
  Value n = memref::DimOp::create(b, loc, input, rank - 1);
  parallelOverLeading(b, loc, input, rank - 1, [&](OpBuilder &b, Location loc,
                                                   ValueRange lead) {
    Value zeroVec = splatConst(b, loc, 0.0);
    Value nf = arith::UIToFPOp::create(
        b, loc, b.getF32Type(),
        arith::IndexCastUIOp::create(b, loc, b.getI64Type(), n));
    Value sq = reduceAdd(
        b, loc,
        forChunksReduce(
            b, loc, n, zeroVec,
            [&](OpBuilder &b, Location l, Value d, Value mask, ValueRange acc) {
              Value x = readX(b, l, input, residual, lead, d, mask, zeroVec);
              return SmallVector<Value>{
                  math::FmaOp::create(b, l, x, x, acc[0])};
            })[0]);
    Value rstd = math::RsqrtOp::create(
        b, loc,
        arith::AddFOp::create(b, loc, arith::DivFOp::create(b, loc, sq, nf),
                              f32Const(b, loc, eps)));
    Value rstdSplat = splat(b, loc, rstd);
    forChunks(b, loc, n, [&](OpBuilder &b, Location l, Value d, Value mask) {
      Value x = readX(b, l, input, residual, lead, d, mask, zeroVec);
      Value y = arith::MulFOp::create(b, l, x, rstdSplat);
      y = arith::MulFOp::create(b, l, y, readParam(b, l, scale, d, mask, 1.0));
      maskedStore(b, l, y, out, rowIndex(lead, d), mask);
    });
  });
}
