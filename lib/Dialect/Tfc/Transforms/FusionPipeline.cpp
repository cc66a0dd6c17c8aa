//===- FusionPipeline.cpp - The fusion pipeline and pass registration ----===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Dialect/Tfc/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::tfc;

namespace {
#define GEN_PASS_REGISTRATION
#include "tfc/Dialect/Tfc/Transforms/Passes.h.inc"

struct FusionPipelineCLOptions
    : public PassPipelineOptions<FusionPipelineCLOptions> {
  Option<bool> remarks{*this, "remarks",
                       llvm::cl::desc("Every fusion pass reports each "
                                      "candidate it looked at"),
                       llvm::cl::init(false)};
};
} // namespace

void mlir::tfc::buildFusionPipeline(OpPassManager &pm,
                                    const FusionPipelineOptions &options) {
  // Canonical, de-duplicated primitives first: CSE merges the repeated
  // `x - mean(x)` that exporters emit, canonicalisation folds identities.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createTfcFuseSoftmax(TfcFuseSoftmaxOptions{options.remarks}));
  pm.addPass(
      createTfcFuseAttention(TfcFuseAttentionOptions{options.remarks}));
  pm.addPass(createTfcFuseLayerNorm(TfcFuseLayerNormOptions{options.remarks}));
  // Producer/epilogue fusion last: the norms must be whole before their
  // residual adds are folded in.
  pm.addPass(createTfcFuseEpilogue(TfcFuseEpilogueOptions{options.remarks}));
  pm.addPass(createTfcMergeQkv(TfcMergeQkvOptions{options.remarks}));
  // On the fused ops: a slice moves above a whole linear or norm.
  pm.addPass(createTfcBubbleUpSlices());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::tfc::registerTfcPasses() {
  registerTfcTransformsPasses();
  PassPipelineRegistration<FusionPipelineCLOptions>(
      "tfc-fusion-pipeline",
      "Canonicalise, then fuse softmax, attention, LayerNorm/RMSNorm, "
      "epilogues and Q/K/V projections: the "
      "compiler's fusion pipeline",
      [](OpPassManager &pm, const FusionPipelineCLOptions &cl) {
        FusionPipelineOptions options;
        options.remarks = cl.remarks;
        buildFusionPipeline(pm, options);
      });
}
