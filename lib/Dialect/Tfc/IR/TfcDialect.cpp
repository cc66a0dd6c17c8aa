//===- TfcDialect.cpp - The tfc dialect -------------------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Dialect/Tfc/IR/TfcDialect.h"
#include "tfc/Dialect/Tfc/IR/TfcOps.h"

using namespace mlir;
using namespace mlir::tfc;

#include "tfc/Dialect/Tfc/IR/TfcDialect.cpp.inc"

void TfcDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tfc/Dialect/Tfc/IR/TfcOps.cpp.inc"
      >();
}

Operation *TfcDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  return arith::ConstantOp::materialize(builder, value, type, loc);
}
