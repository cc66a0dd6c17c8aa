//===- Activations.cpp - Activation math shared by every lowering ---------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Conversion/TfcToLinalg/TfcToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;

Value tfc::buildFloatConstant(OpBuilder &b, Location loc, Type type,
                              double value) {
  Type elementType = getElementTypeOrSelf(type);
  auto scalar = b.getFloatAttr(elementType, value);
  if (auto vector = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(b, loc, vector,
                                     DenseElementsAttr::get(vector, scalar));
  return arith::ConstantOp::create(b, loc, elementType, scalar);
}

Value tfc::buildGelu(OpBuilder &b, Location loc, Value x,
                     GeluApproximation approximation) {
  Type t = x.getType();
  Value half = buildFloatConstant(b, loc, t, 0.5);
  Value one = buildFloatConstant(b, loc, t, 1.0);
  Value inner;
  if (approximation == GeluApproximation::Erf) {
    Value scaled = arith::MulFOp::create(
        b, loc, x, buildFloatConstant(b, loc, t, M_SQRT1_2));
    inner = math::ErfOp::create(b, loc, scaled);
  } else {
    // tanh(sqrt(2/pi) * (x + 0.044715 x^3))
    Value x2 = arith::MulFOp::create(b, loc, x, x);
    Value x3 = arith::MulFOp::create(b, loc, x2, x);
    Value poly = arith::AddFOp::create(
        b, loc, x,
        arith::MulFOp::create(b, loc, x3,
                              buildFloatConstant(b, loc, t, 0.044715)));
    Value arg = arith::MulFOp::create(
        b, loc, poly, buildFloatConstant(b, loc, t, std::sqrt(2.0 / M_PI)));
    inner = math::TanhOp::create(b, loc, arg);
  }
  Value sum = arith::AddFOp::create(b, loc, one, inner);
  return arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, half, x),
                               sum);
}

Value tfc::buildSilu(OpBuilder &b, Location loc, Value x) {
  Type t = x.getType();
  Value negX = arith::NegFOp::create(b, loc, x);
  Value denom = arith::AddFOp::create(b, loc, buildFloatConstant(b, loc, t, 1.0),
                                      math::ExpOp::create(b, loc, negX));
  return arith::DivFOp::create(b, loc, x, denom);
}

Value tfc::buildActivation(OpBuilder &b, Location loc, Value x,
                           Activation activation) {
  switch (activation) {
  case Activation::None:
    return x;
  case Activation::Relu:
    return arith::MaximumFOp::create(
        b, loc, x, buildFloatConstant(b, loc, x.getType(), 0.0));
  case Activation::GeluErf:
    return buildGelu(b, loc, x, GeluApproximation::Erf);
  case Activation::GeluTanh:
    return buildGelu(b, loc, x, GeluApproximation::Tanh);
  case Activation::Silu:
    return buildSilu(b, loc, x);
  }
  llvm_unreachable("unknown activation");
}
