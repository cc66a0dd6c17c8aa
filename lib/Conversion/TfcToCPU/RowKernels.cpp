//===- RowKernels.cpp - The CPU's row-kernel target -----------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// RowKernelTarget for the CPU (the math is shared:
// lib/Conversion/KernelCommon/RowKernels.cpp). Each row (the last axis) is
// one task of a parallel loop over the leading dimensions; a value of the
// row is a vector of 16 lanes, walked with a masked tail, reduced
// horizontally at the end of each pass. Passes run back to back, so the row
// stays in L1, and softmax keeps exp(x - max) in the output between its
// passes. Strided operands are copied contiguous first.
//
//===----------------------------------------------------------------------===//

#include "KernelConfig.h"
#include "KernelUtils.h"
#include "Kernels.h"

#include "tfc/Conversion/RowKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::tfc::cpu;

namespace {

struct CpuRowTarget final : tfc::RowKernelTarget {
  Value prepare(OpBuilder &b, Location loc, Value memref) override {
    return contiguous(b, loc, memref);
  }

  void forEachRow(OpBuilder &b, Location loc, Value input,
                  RowFn body) override {
    int64_t rank = cast<MemRefType>(input.getType()).getRank();
    Value n = memref::DimOp::create(b, loc, input, rank - 1);
    parallelOverLeading(b, loc, input, rank - 1,
                        [&](OpBuilder &b, Location loc, ValueRange lead) {
                          Row row;
                          row.lead.assign(lead.begin(), lead.end());
                          row.length = n;
                          body(b, loc, row);
                        });
  }

  Value reduce(OpBuilder &b, Location loc, const Row &row,
               tfc::RowReduction kind, double init, TermFn term) override {
    bool max = kind == tfc::RowReduction::Max;
    Value vec = forChunksReduce(
        b, loc, row.length, splatConst(b, loc, init),
        [&](OpBuilder &b, Location l, Value d, Value mask, ValueRange acc) {
          Value x = term(b, l, At{d, mask});
          // The maximum as x > acc ? x : acc, one vmaxps (a NaN x is
          // passed over: it makes the row's sum NaN, and with it the row;
          // emitSafeReciprocal); arith.maximumf's NaN and signed-zero
          // handling took 4 more instructions on the row's critical path.
          // With the sum as a tree as well, softmax ran markedly faster
          // than before, and faster than PyTorch's (figures: commit
          // 06fc4db).
          Value next =
              max ? arith::SelectOp::create(
                        b, l,
                        arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT,
                                              x, acc[0]),
                        x, acc[0])
                        .getResult()
                  : arith::AddFOp::create(b, l, acc[0], x).getResult();
          return SmallVector<Value>{next};
        })[0];
    return max ? reduceMax(b, loc, vec) : reduceAddTree(b, loc, vec);
  }

  Value reduceSquares(OpBuilder &b, Location loc, const Row &row,
                      TermFn term) override {
    return reduceAdd(
        b, loc,
        forChunksReduce(
            b, loc, row.length, splatConst(b, loc, 0.0),
            [&](OpBuilder &b, Location l, Value d, Value mask, ValueRange acc) {
              Value x = term(b, l, At{d, mask});
              return SmallVector<Value>{
                  math::FmaOp::create(b, l, x, x, acc[0])};
            })[0]);
  }

  void forEach(OpBuilder &b, Location loc, const Row &row,
               VisitFn body) override {
    forChunks(b, loc, row.length,
              [&](OpBuilder &b, Location l, Value d, Value mask) {
                body(b, l, At{d, mask});
              });
  }

  Value load(OpBuilder &b, Location loc, const Row &row, Value memref,
             const At &at, bool perRow, double fill) override {
    return maskedLoad(b, loc, memref, indices(row, at, perRow), at.mask,
                      splatConst(b, loc, fill));
  }

  void store(OpBuilder &b, Location loc, const Row &row, Value value,
             Value memref, const At &at) override {
    maskedStore(b, loc, value, memref, indices(row, at, true), at.mask);
  }

  Value broadcast(OpBuilder &b, Location loc, Value scalar) override {
    return splat(b, loc, scalar);
  }

  Value zeroTail(OpBuilder &b, Location loc, const At &at,
                 Value value) override {
    return arith::SelectOp::create(b, loc, at.mask, value,
                                   splatConst(b, loc, 0.0));
  }

  bool keepsExponentials() const override { return true; }
};

} // namespace

void tfc::cpu::emitSoftmax(OpBuilder &b, Location loc, Value input, Value out) {
  CpuRowTarget target;
  emitRowSoftmax(target, b, loc, input, out);
}

void tfc::cpu::emitLayerNorm(OpBuilder &b, Location loc, kernel::LayerNormOp op,
                             Value input, Value scale, Value bias,
                             Value residual, Value out) {
  CpuRowTarget target;
  emitRowLayerNorm(target, b, loc, op.getEpsilon().convertToDouble(), input,
                   scale, bias, residual, out);
}

void tfc::cpu::emitRmsNorm(OpBuilder &b, Location loc, kernel::RmsNormOp op,
                           Value input, Value scale, Value residual,
                           Value out) {
  CpuRowTarget target;
  emitRowRmsNorm(target, b, loc, op.getEpsilon().convertToDouble(), input,
                 scale, residual, out);
}
