//===- RowKernels.cpp - The GPU's row-kernel target -----------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// RowKernelTarget for CUDA (the math is shared:
// lib/Conversion/KernelCommon/RowKernels.cpp). One block per row of the
// last axis; a value of the row is one element per thread, each thread
// walking the row with a stride of the block size. Sums and maxima are
// reduced within each warp by butterfly shuffles (shfl.sync.bfly) and
// across warps through a small shared buffer. Rows of at most 128 elements
// get a single warp, so their reductions never touch shared memory.
// Softmax recomputes exp(x - max) in its last pass rather than writing it
// to global memory and reading it back.
//
//===----------------------------------------------------------------------===//

#include "GpuKernelUtils.h"
#include "GpuKernels.h"

#include "tfc/Conversion/RowKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

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

struct GpuRowTarget final : RowKernelTarget {
  /// A row's block: its threads and the shared buffer of its reductions.
  struct GpuRow : Row {
    Value thread, threads, scratch;
    int64_t numThreads;
  };

  void forEachRow(OpBuilder &b, Location loc, Value input,
                  RowFn body) override {
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
             GpuRow row;
             row.lead = delinearize(b, l, ids.block[0], leadSizes);
             row.length = length;
             row.thread = ids.thread;
             row.threads = indexConst(b, l, threads);
             row.numThreads = threads;
             row.scratch = ids.shared[0];
             body(b, l, row);
           });
  }

  Value reduce(OpBuilder &b, Location loc, const Row &row, RowReduction kind,
               double init, TermFn term) override {
    Reduction k = kind == RowReduction::Add ? Reduction::Add : Reduction::Max;
    return reduceOver(b, loc, gpuRow(row), k, init,
                      [&](OpBuilder &b, Location l, Value j) {
                        return term(b, l, At{j, Value()});
                      });
  }

  Value reduceSquares(OpBuilder &b, Location loc, const Row &row,
                      TermFn term) override {
    return reduceOver(b, loc, gpuRow(row), Reduction::Add, 0.0,
                      [&](OpBuilder &b, Location l, Value j) -> Value {
                        Value x = term(b, l, At{j, Value()});
                        return arith::MulFOp::create(b, l, x, x);
                      });
  }

  void forEach(OpBuilder &b, Location loc, const Row &row,
               VisitFn body) override {
    const GpuRow &r = gpuRow(row);
    forLoop(b, loc, r.thread, r.length, r.threads,
            [&](OpBuilder &b, Location l, Value j) {
              body(b, l, At{j, Value()});
            });
  }

  Value load(OpBuilder &b, Location loc, const Row &row, Value memref,
             const At &at, bool perRow, double) override {
    return loadF32(b, loc, memref, indices(row, at, perRow));
  }

  void store(OpBuilder &b, Location loc, const Row &row, Value value,
             Value memref, const At &at) override {
    storeF32(b, loc, value, memref, indices(row, at, true));
  }

  Value broadcast(OpBuilder &, Location, Value scalar) override {
    return scalar;
  }

  Value zeroTail(OpBuilder &, Location, const At &, Value value) override {
    return value; // every thread reads inside the row
  }

  bool keepsExponentials() const override { return false; }

private:
  static const GpuRow &gpuRow(const Row &row) {
    return static_cast<const GpuRow &>(row);
  }

  /// Each thread's partial reduction of f(j) over its strided elements,
  /// then the block's.
  static Value reduceOver(OpBuilder &b, Location loc, const GpuRow &row,
                          Reduction kind, double init,
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
};

} // namespace

LogicalResult gpuk::emitSoftmax(OpBuilder &b, Location loc, kernel::SoftmaxOp,
                                Value input, Value out) {
  GpuRowTarget target;
  emitRowSoftmax(target, b, loc, input, out);
  return success();
}

LogicalResult gpuk::emitLayerNorm(OpBuilder &b, Location loc,
                                  kernel::LayerNormOp op, Value input,
                                  Value scale, Value bias, Value residual,
                                  Value out) {
  GpuRowTarget target;
  emitRowLayerNorm(target, b, loc, op.getEpsilon().convertToDouble(), input,
                   scale, bias, residual, out);
  return success();
}

LogicalResult gpuk::emitRmsNorm(OpBuilder &b, Location loc,
                                kernel::RmsNormOp op, Value input, Value scale,
                                Value residual, Value out) {
  GpuRowTarget target;
  emitRowRmsNorm(target, b, loc, op.getEpsilon().convertToDouble(), input,
                 scale, residual, out);
  return success();
}
