//===- TfcDialect.h - The tfc dialect ---------------------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_DIALECT_TFC_IR_TFCDIALECT_H
#define TFC_DIALECT_TFC_IR_TFCDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Dialect.h"

#include "tfc/Dialect/Tfc/IR/TfcDialect.h.inc"

#endif // TFC_DIALECT_TFC_IR_TFCDIALECT_H
