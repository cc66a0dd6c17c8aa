//===- RowKernels.cpp - Softmax, LayerNorm and RMSNorm on the GPU ---------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// One block per row of the last axis. Each thread walks the row with a
// stride of the block size; sums and maxima are reduced within each warp by
// butterfly shuffles (shfl.sync.bfly) and across warps through a small
// shared buffer. Rows of at most 128 elements get a single warp, so their
// reductions never touch shared memory.
//
//  * softmax: max, then Σ exp(x − max), then exp(x − max) / Σ; a row that is
//    entirely −inf yields zeros.
//  * layer_norm: mean, then the centred variance, then
//    (x − mean) · rsqrt(var + eps) · scale + bias.
//  * rms_norm: x · rsqrt(mean(x²) + eps) · scale.
// With a residual operand, x = input + residual is recomputed on every read.
//
//===----------------------------------------------------------------------===//

#include "GpuKernelUtils.h"
#include "GpuKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <limits>

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::gpuk;

namespace {

/// The threads of a row's block: a warp for short rows, else up to 256.
int64_t rowThreads(Value input) {
  auto type = cast<MemRefType>(input.getType());
  int64_t d = type.getShape().back();
  if (ShapedType::isDynamic(d))
    return 256;
  if (d <= 4 * kWarpSize)
    return kWarpSize;
  return std::min<int64_t>(256, (d + kWarpSize - 1) / kWarpSize * kWarpSize);
}

/// The per-row context a row kernel body works with.
struct Row {
  SmallVector<Value> lead; // indices of the leading dims
  Value thread, threads, length, scratch;
  int64_t numThreads;
};

/// Launches one block per row of `input` ([..., D]) and calls `body`.
void forEachRow(OpBuilder &b, Location loc, Value input,
                function_ref<void(OpBuilder &, Location, const Row &)> body) {
  auto type = cast<MemRefType>(input.getType());
  int64_t rank = type.getRank();
  SmallVector<Value> leadSizes = dimSizes(b, loc, input, 0, rank - 1);
  Value rows = product(b, loc, leadSizes);
  Value length = memref::DimOp::create(b, loc, input, rank - 1);
  int64_t threads = rowThreads(input);
  Value one = indexConst(b, loc, 1);
  launch(b, loc, {rows, one, one}, threads,
         {sharedType(b.getContext(), {threads / kWarpSize})},
         [&](OpBuilder &b, Location l, const LaunchIds &ids) {
           Row row;
           row.lead = delinearize(b, l, ids.block[0], leadSizes);
           row.thread = ids.thread;
           row.threads = indexConst(b, l, threads);
           row.numThreads = threads;
           row.length = length;
           row.scratch = ids.shared[0];
           body(b, l, row);
         });
}

SmallVector<Value> at(ArrayRef<Value> lead, Value j) {
  SmallVector<Value> idx(lead);
  idx.push_back(j);
  return idx;
}

/// input[row, j] (+ residual[row, j]) as f32.
Value readX(OpBuilder &b, Location loc, const Row &row, Value input,
            Value residual, Value j) {
  Value x = loadF32(b, loc, input, at(row.lead, j));
  if (residual)
    x = arith::AddFOp::create(b, loc, x,
                              loadF32(b, loc, residual, at(row.lead, j)));
  return x;
}

/// Σ over the row of f(j), reduced over the block.
Value rowReduce(OpBuilder &b, Location loc, const Row &row, Reduction kind,
                double init,
                function_ref<Value(OpBuilder &, Location, Value)> f) {
  Value partial = forLoopReduce(
      b, loc, row.thread, row.length, row.threads,
      ValueRange{f32Const(b, loc, init)},
      [&](OpBuilder &b, Location l, Value j, ValueRange acc) {
        return SmallVector<Value>{combine(b, l, kind, acc[0], f(b, l, j))};
      })[0];
  return blockReduce(b, loc, partial, kind, row.scratch, row.thread,
                     row.numThreads);
}

Value lengthF32(OpBuilder &b, Location loc, Value length) {
  Value i = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), length);
  return arith::UIToFPOp::create(b, loc, b.getF32Type(), i);
}

} // namespace

LogicalResult gpuk::emitSoftmax(OpBuilder &b, Location loc, kernel::SoftmaxOp op,
                                Value input, Value out) {
  forEachRow(b, loc, input, [&](OpBuilder &b, Location l, const Row &row) {
    double negInf = -std::numeric_limits<double>::infinity();
    Value max = rowReduce(b, l, row, Reduction::Max, negInf,
                          [&](OpBuilder &b, Location l, Value j) {
                            return readX(b, l, row, input, Value(), j);
                          });
    // An all -inf row: subtract 0 so that every exp is 0, not NaN.
    Value isInf = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, max,
                                        f32Const(b, l, negInf));
    max = arith::SelectOp::create(b, l, isInf, f32Const(b, l, 0.0), max);
    auto expAt = [&](OpBuilder &b, Location l, Value j) -> Value {
      Value x = readX(b, l, row, input, Value(), j);
      return math::ExpOp::create(b, l, arith::SubFOp::create(b, l, x, max));
    };
    Value sum = rowReduce(b, l, row, Reduction::Add, 0.0, expAt);
    Value positive = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, sum,
                                           f32Const(b, l, 0.0));
    Value inv = arith::SelectOp::create(
        b, l, positive, arith::DivFOp::create(b, l, f32Const(b, l, 1.0), sum),
        f32Const(b, l, 0.0));
    forLoop(b, l, row.thread, row.length, row.threads,
            [&](OpBuilder &b, Location l, Value j) {
              Value y = arith::MulFOp::create(b, l, expAt(b, l, j), inv);
              storeF32(b, l, y, out, at(row.lead, j));
            });
  });
  return success();
}

LogicalResult gpuk::emitLayerNorm(OpBuilder &b, Location loc, kernel::LayerNormOp op,
                                  Value input, Value scale, Value bias,
                                  Value residual, Value out) {
  double eps = op.getEpsilon().convertToDouble();
  forEachRow(b, loc, input, [&](OpBuilder &b, Location l, const Row &row) {
    Value n = lengthF32(b, l, row.length);
    Value sum = rowReduce(b, l, row, Reduction::Add, 0.0,
                          [&](OpBuilder &b, Location l, Value j) {
                            return readX(b, l, row, input, residual, j);
                          });
    Value mean = arith::DivFOp::create(b, l, sum, n);
    auto centred = [&](OpBuilder &b, Location l, Value j) -> Value {
      return arith::SubFOp::create(b, l, readX(b, l, row, input, residual, j),
                                   mean);
    };
    Value sq = rowReduce(b, l, row, Reduction::Add, 0.0,
                         [&](OpBuilder &b, Location l, Value j) -> Value {
                           Value c = centred(b, l, j);
                           return arith::MulFOp::create(b, l, c, c);
                         });
    Value var = arith::DivFOp::create(b, l, sq, n);
    Value rstd = math::RsqrtOp::create(
        b, l, arith::AddFOp::create(b, l, var, f32Const(b, l, eps)));
    forLoop(b, l, row.thread, row.length, row.threads,
            [&](OpBuilder &b, Location l, Value j) {
              Value y = arith::MulFOp::create(b, l, centred(b, l, j), rstd);
              if (scale)
                y = arith::MulFOp::create(b, l, y,
                                          loadF32(b, l, scale, ValueRange{j}));
              if (bias)
                y = arith::AddFOp::create(b, l, y,
                                          loadF32(b, l, bias, ValueRange{j}));
              storeF32(b, l, y, out, at(row.lead, j));
            });
  });
  return success();
}

LogicalResult gpuk::emitRmsNorm(OpBuilder &b, Location loc, kernel::RmsNormOp op,
                                Value input, Value scale, Value residual,
                                Value out) {
  double eps = op.getEpsilon().convertToDouble();
  forEachRow(b, loc, input, [&](OpBuilder &b, Location l, const Row &row) {
    Value n = lengthF32(b, l, row.length);
    Value sq = rowReduce(b, l, row, Reduction::Add, 0.0,
                         [&](OpBuilder &b, Location l, Value j) -> Value {
                           Value x = readX(b, l, row, input, residual, j);
                           return arith::MulFOp::create(b, l, x, x);
                         });
    Value rms = math::RsqrtOp::create(
        b, l,
        arith::AddFOp::create(b, l, arith::DivFOp::create(b, l, sq, n),
                              f32Const(b, l, eps)));
    forLoop(b, l, row.thread, row.length, row.threads,
            [&](OpBuilder &b, Location l, Value j) {
              Value y = arith::MulFOp::create(
                  b, l, readX(b, l, row, input, residual, j), rms);
              if (scale)
                y = arith::MulFOp::create(b, l, y,
                                          loadF32(b, l, scale, ValueRange{j}));
              storeF32(b, l, y, out, at(row.lead, j));
            });
  });
  return success();
}
