//===- EffectModels.cpp - Memory effects of gpu.barrier and mma.sync ------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Conversion/TfcToGPU/TfcToGPU.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {
/// gpu.barrier declares no memory effects, which the ownership-based
/// deallocation pipeline rejects as unknown. A barrier orders the block's
/// reads and writes of shared memory: it is modelled as reading and writing
/// memory in general (so it is never erased or moved either).
struct BarrierEffects
    : MemoryEffectOpInterface::ExternalModel<BarrierEffects, gpu::BarrierOp> {
  void
  getEffects(Operation *,
             SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                 &effects) const {
    effects.emplace_back(MemoryEffects::Read::get());
    effects.emplace_back(MemoryEffects::Write::get());
  }
};

/// nvvm.mma.sync declares no memory effects either; it only computes on
/// registers.
struct MmaEffects
    : MemoryEffectOpInterface::ExternalModel<MmaEffects, NVVM::MmaOp> {
  void
  getEffects(Operation *,
             SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                 &) const {}
};
} // namespace

void tfc::registerGpuKernelEffectModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, gpu::GPUDialect *) {
    gpu::BarrierOp::attachInterface<BarrierEffects>(*ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, NVVM::NVVMDialect *) {
    NVVM::MmaOp::attachInterface<MmaEffects>(*ctx);
  });
}
