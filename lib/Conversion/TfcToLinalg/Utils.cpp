//===- Utils.cpp - Helpers shared by the tfc to linalg patterns -----------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "tfc/Conversion/TfcToLinalg/TfcToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"

using namespace mlir;

SmallVector<OpFoldResult> tfc::lowering::getDims(OpBuilder &b, Location loc,
                                                 Value value) {
  return tensor::getMixedSizes(b, loc, value);
}

Value tfc::lowering::emptyLike(OpBuilder &b, Location loc,
                               RankedTensorType type,
                               ArrayRef<OpFoldResult> sizes) {
  SmallVector<Value> dynamic;
  for (auto [i, size] : llvm::enumerate(type.getShape()))
    if (ShapedType::isDynamic(size))
      dynamic.push_back(getValueOrCreateConstantIndexOp(b, loc, sizes[i]));
  return tensor::EmptyOp::create(b, loc, type, dynamic);
}

SmallVector<OpFoldResult>
tfc::lowering::broadcastDims(OpBuilder &b, Location loc, RankedTensorType type,
                             ValueRange operands) {
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d < rank; ++d) {
    if (!type.isDynamicDim(d)) {
      sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
      continue;
    }
    OpFoldResult size;
    for (Value operand : operands) {
      auto t = cast<RankedTensorType>(operand.getType());
      int64_t od = d - (rank - t.getRank());
      if (od < 0 || !t.isDynamicDim(od))
        continue;
      size = tensor::DimOp::create(b, loc, operand, od).getResult();
      break;
    }
    if (!size) {
      // The declared result is less static than the operands: the size is
      // the largest aligned static size (1 if every operand broadcasts).
      int64_t n = 1;
      for (Value operand : operands) {
        auto t = cast<RankedTensorType>(operand.getType());
        int64_t od = d - (rank - t.getRank());
        if (od >= 0)
          n = std::max(n, t.getDimSize(od));
      }
      size = b.getIndexAttr(n);
    }
    sizes.push_back(size);
  }
  return sizes;
}

AffineMap tfc::lowering::broadcastMap(MLIRContext *ctx,
                                      RankedTensorType operand,
                                      RankedTensorType result) {
  int64_t rank = result.getRank(), offset = rank - operand.getRank();
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < operand.getRank(); ++d) {
    bool broadcast =
        operand.getDimSize(d) == 1 && result.getDimSize(d + offset) != 1;
    exprs.push_back(broadcast ? getAffineConstantExpr(0, ctx)
                              : getAffineDimExpr(d + offset, ctx));
  }
  return AffineMap::get(rank, 0, exprs, ctx);
}

Value tfc::lowering::floatConst(OpBuilder &b, Location loc, Type type,
                                double value) {
  return buildFloatConstant(b, loc, type, value);
}

Value tfc::lowering::castScalar(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  auto fromInt = dyn_cast<IntegerType>(from);
  auto toInt = dyn_cast<IntegerType>(to);
  auto fromFloat = dyn_cast<FloatType>(from);
  auto toFloat = dyn_cast<FloatType>(to);
  if (toInt && toInt.getWidth() == 1) {
    if (fromFloat)
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v,
                                   floatConst(b, loc, from, 0.0));
    Value zero = arith::ConstantOp::create(b, loc, b.getIntegerAttr(from, 0));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v, zero);
  }
  if (fromFloat && toFloat && fromFloat.getWidth() == toFloat.getWidth()) {
    // f16 <-> bf16: through f32, which holds both exactly.
    Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
    return arith::TruncFOp::create(b, loc, to, wide);
  }
  if (fromFloat && toFloat)
    return fromFloat.getWidth() < toFloat.getWidth()
               ? arith::ExtFOp::create(b, loc, to, v).getResult()
               : arith::TruncFOp::create(b, loc, to, v).getResult();
  if (fromInt && toFloat)
    return fromInt.getWidth() == 1
               ? arith::UIToFPOp::create(b, loc, to, v).getResult()
               : arith::SIToFPOp::create(b, loc, to, v).getResult();
  if (fromFloat && toInt)
    return arith::FPToSIOp::create(b, loc, to, v);
  // Integer to integer: i1 is unsigned (true = 1), the others signed.
  if (fromInt.getWidth() < toInt.getWidth())
    return fromInt.getWidth() == 1
               ? arith::ExtUIOp::create(b, loc, to, v).getResult()
               : arith::ExtSIOp::create(b, loc, to, v).getResult();
  return arith::TruncIOp::create(b, loc, to, v);
}

OpFoldResult tfc::lowering::addSizes(OpBuilder &b, Location loc,
                                     OpFoldResult lhs, OpFoldResult rhs) {
  std::optional<int64_t> l = getConstantIntValue(lhs);
  std::optional<int64_t> r = getConstantIntValue(rhs);
  if (l && r)
    return b.getIndexAttr(*l + *r);
  return arith::AddIOp::create(b, loc,
                               getValueOrCreateConstantIndexOp(b, loc, lhs),
                               getValueOrCreateConstantIndexOp(b, loc, rhs))
      .getResult();
}
