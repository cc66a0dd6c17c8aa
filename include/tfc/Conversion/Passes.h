//===- Passes.h - tfc conversion passes -------------------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CONVERSION_PASSES_H
#define TFC_CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::tfc {

#define GEN_PASS_DECL
#include "tfc/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tfc/Conversion/Passes.h.inc"

} // namespace mlir::tfc

#endif // TFC_CONVERSION_PASSES_H
