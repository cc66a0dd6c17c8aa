//===- Passes.h - Passes of the tfc dialect ---------------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_DIALECT_TFC_TRANSFORMS_PASSES_H
#define TFC_DIALECT_TFC_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class OpPassManager;
namespace tfc {

#define GEN_PASS_DECL
#include "tfc/Dialect/Tfc/Transforms/Passes.h.inc"

/// Options of the fusion pipeline.
struct FusionPipelineOptions {
  /// Every fusion pass reports each candidate it looked at.
  bool remarks = false;
};

/// canonicalize, cse, then the fusion passes in dependency order (softmax
/// before attention, norms), then canonicalize and cse again. tfc-compile
/// runs this; tfc-opt has it as `--tfc-fusion-pipeline`.
void buildFusionPipeline(OpPassManager &pm,
                         const FusionPipelineOptions &options = {});

/// Registers every tfc pass and the `tfc-fusion-pipeline` pipeline.
void registerTfcPasses();

} // namespace tfc
} // namespace mlir

#endif // TFC_DIALECT_TFC_TRANSFORMS_PASSES_H
