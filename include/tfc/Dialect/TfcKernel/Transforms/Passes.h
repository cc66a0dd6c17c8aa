//===- Passes.h - Passes on kernel ops --------------------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_DIALECT_TFCKERNEL_TRANSFORMS_PASSES_H
#define TFC_DIALECT_TFCKERNEL_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::tfc::kernel {

#define GEN_PASS_DECL
#include "tfc/Dialect/TfcKernel/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tfc/Dialect/TfcKernel/Transforms/Passes.h.inc"

} // namespace mlir::tfc::kernel

#endif // TFC_DIALECT_TFCKERNEL_TRANSFORMS_PASSES_H
