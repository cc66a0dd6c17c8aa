//===- KernelCommon.cpp - Memref helpers of every kernel emitter ----------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Conversion/KernelCommon.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

Value tfc::collapseToMatrix(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  int64_t rank = type.getRank();
  if (rank == 2)
    return memref;
  if (rank == 1) {
    SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1),
                                       memref::getMixedSize(b, loc, memref, 0)};
    SmallVector<int64_t> shape = {1, type.getDimSize(0)};
    return memref::ExpandShapeOp::create(
        b, loc, MemRefType::get(shape, type.getElementType()), memref,
        ArrayRef<ReassociationIndices>{{0, 1}}, sizes);
  }
  ReassociationIndices lead;
  for (int64_t d = 0; d + 1 < rank; ++d)
    lead.push_back(d);
  return memref::CollapseShapeOp::create(
      b, loc, memref, ArrayRef<ReassociationIndices>{lead, {rank - 1}});
}

SmallVector<Value> tfc::operandBatchIndices(OpBuilder &b, Location loc,
                                            MemRefType operand,
                                            MemRefType result,
                                            ValueRange batch) {
  SmallVector<Value> idx;
  int64_t offset = (result.getRank() - 2) - (operand.getRank() - 2);
  for (int64_t d = 0; d < operand.getRank() - 2; ++d) {
    bool broadcast =
        operand.getDimSize(d) == 1 && result.getDimSize(d + offset) != 1;
    idx.push_back(broadcast ? arith::ConstantIndexOp::create(b, loc, 0)
                            : batch[d + offset]);
  }
  return idx;
}
