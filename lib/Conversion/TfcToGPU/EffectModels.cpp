//===- EffectModels.cpp - Memory effects of gpu.barrier, mma.sync, cvt ----===//
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

/// nvvm.mma.sync and nvvm.convert.float.to.tf32 declare no memory effects
/// either; they only compute on registers.
template <typename Op>
struct RegisterOnlyEffects
    : MemoryEffectOpInterface::ExternalModel<RegisterOnlyEffects<Op>, Op> {
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
    NVVM::MmaOp::attachInterface<RegisterOnlyEffects<NVVM::MmaOp>>(*ctx);
    NVVM::ConvertFloatToTF32Op::attachInterface<
        RegisterOnlyEffects<NVVM::ConvertFloatToTF32Op>>(*ctx);
  });
}
