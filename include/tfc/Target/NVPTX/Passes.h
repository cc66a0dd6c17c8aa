//===- Passes.h - Passes of the CUDA target ------------------------------*- C++
//-*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TARGET_NVPTX_PASSES_H
#define TFC_TARGET_NVPTX_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::tfc {

#define GEN_PASS_DECL
#include "tfc/Target/NVPTX/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tfc/Target/NVPTX/Passes.h.inc"

} // namespace mlir::tfc

#endif // TFC_TARGET_NVPTX_PASSES_H
