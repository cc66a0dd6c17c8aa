//===- TfcCpu.h - The tfc_cpu dialect ---------------------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_DIALECT_TFCCPU_IR_TFCCPU_H
#define TFC_DIALECT_TFCCPU_IR_TFCCPU_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tfc/Dialect/Tfc/IR/TfcOps.h"

#include "tfc/Dialect/TfcCpu/IR/TfcCpuDialect.h.inc"

#define GET_OP_CLASSES
#include "tfc/Dialect/TfcCpu/IR/TfcCpuOps.h.inc"

#endif // TFC_DIALECT_TFCCPU_IR_TFCCPU_H
