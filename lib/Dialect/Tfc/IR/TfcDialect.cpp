//===- TfcDialect.cpp - The tfc dialect -------------------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Dialect/Tfc/IR/TfcDialect.h"
#include "tfc/Dialect/Tfc/IR/TfcOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tfc;

#include "tfc/Dialect/Tfc/IR/TfcDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tfc/Dialect/Tfc/IR/TfcAttrs.cpp.inc"

void TfcDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tfc/Dialect/Tfc/IR/TfcOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tfc/Dialect/Tfc/IR/TfcAttrs.cpp.inc"
      >();
}

LogicalResult TfcDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  if (attr.getName() != kTargetAttrName)
    return success();
  if (!isa<ModuleOp>(op))
    return op->emitError("'tfc.target' belongs on the module, not on '")
           << op->getName() << "'";
  if (!isa<TargetKindAttr>(attr.getValue()))
    return op->emitError("'tfc.target' must be #tfc.target<cpu> or "
                         "#tfc.target<cuda>, got ")
           << attr.getValue();
  return success();
}

TargetKind tfc::getTargetKind(Operation *op) {
  auto module =
      isa<ModuleOp>(op) ? cast<ModuleOp>(op) : op->getParentOfType<ModuleOp>();
  auto target = module ? module->getAttrOfType<TargetKindAttr>(kTargetAttrName)
                       : TargetKindAttr();
  return target ? target.getValue() : TargetKind::Cpu;
}

Operation *TfcDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  return arith::ConstantOp::materialize(builder, value, type, loc);
}
