//===- AttentionCommon.cpp - What the GPU attention kernels share ---------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "AttentionCommon.h"
#include "GpuKernelUtils.h"

#include "tfc/Dialect/Tfc/IR/PositionBias.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::gpuk;

AttentionShape gpuk::attentionShape(OpBuilder &b, Location loc, Value query,
                                    Value key) {
  AttentionShape s;
  Value one = indexConst(b, loc, 1), zero = indexConst(b, loc, 0);
  s.batch = memref::DimOp::create(b, loc, query, 0);
  s.heads = memref::DimOp::create(b, loc, query, 1);
  s.tq = memref::DimOp::create(b, loc, query, 2);
  s.kvHeads = memref::DimOp::create(b, loc, key, 1);
  s.tk = memref::DimOp::create(b, loc, key, 2);
  s.group = arith::MaxUIOp::create(
      b, loc,
      arith::DivUIOp::create(b, loc, s.heads,
                             arith::MaxUIOp::create(b, loc, s.kvHeads, one)),
      one);
  s.lastKvHead = arith::SubIOp::create(b, loc, s.kvHeads, one);
  s.runHeads = arith::SelectOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, s.kvHeads, zero),
      zero, s.heads);
  return s;
}

Value gpuk::kvHeadOf(OpBuilder &b, Location loc, const AttentionShape &shape,
                     Value h) {
  return arith::MinUIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, h, shape.group), shape.lastKvHead);
}

KeyRange gpuk::attentionKeyRange(OpBuilder &b, Location loc,
                                 kernel::AttentionOp op,
                                 const AttentionShape &shape, Value q0,
                                 int64_t rows, int64_t keyTile) {
  auto add = [&](Value x, Value y) -> Value {
    return arith::AddIOp::create(b, loc, x, y);
  };
  Value zero = indexConst(b, loc, 0);
  KeyRange range{zero, shape.tk};
  if (op.getCausal()) {
    // last row + 1 + Tk
    Value reach = add(add(q0, indexConst(b, loc, rows)), shape.tk);
    Value positive = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                           reach, shape.tq);
    range.end = arith::SelectOp::create(
        b, loc, positive,
        minIndex(b, loc, arith::SubIOp::create(b, loc, reach, shape.tq),
                 shape.tk),
        zero);
  }
  if (int64_t window = op.getWindow() ? *op.getWindow() : 0; window > 0) {
    // The tile of the first key row q0 sees: q0 + Tk + 1 - (Tq + window).
    Value reach = add(add(q0, shape.tk), indexConst(b, loc, 1));
    Value back = add(shape.tq, indexConst(b, loc, window));
    Value first = arith::SelectOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, reach, back),
        arith::SubIOp::create(b, loc, reach, back), zero);
    Value tile = indexConst(b, loc, keyTile);
    range.start = arith::MulIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, first, tile), tile);
  }
  return range;
}

PositionTerms gpuk::attentionTerms(OpBuilder &b, Location loc,
                                   kernel::AttentionOp op,
                                   const AttentionShape &shape, Value h,
                                   Value relBias) {
  PositionTerms terms;
  terms.causal = op.getCausal();
  terms.window = op.getWindow() ? static_cast<int64_t>(*op.getWindow()) : 0;
  double alibi = op.getAlibi() ? op.getAlibi()->convertToDouble() : 0.0;
  terms.alibiSlope =
      alibi > 0.0 ? buildAlibiSlope(b, loc, h, shape.heads, alibi) : Value();
  terms.relativeBias = relBias;
  terms.relative = op.getRelativeDistance();
  terms.head = h;
  return terms;
}

Value gpuk::loadMaskTerm(OpBuilder &b, Location loc, Value mask,
                         const AttentionShape &shape, Value bi, Value h,
                         Value row, Value key) {
  auto maskType = cast<MemRefType>(mask.getType());
  Value one = indexConst(b, loc, 1);
  SmallVector<Value> full = {
      bi, h,
      minIndex(b, loc, row, arith::SubIOp::create(b, loc, shape.tq, one)),
      minIndex(b, loc, key, arith::SubIOp::create(b, loc, shape.tk, one))};
  SmallVector<Value> idx;
  int64_t offset = 4 - maskType.getRank();
  for (int64_t k = 0; k < maskType.getRank(); ++k)
    idx.push_back(maskType.getDimSize(k) == 1 ? indexConst(b, loc, 0)
                                              : full[k + offset]);
  return loadF32(b, loc, mask, idx);
}
