//===- EffectModels.cpp - Memory effects of barriers, mma.sync, cp.async --===//
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
/// memory in general (so it is never erased or moved either). So are
/// cp.async (a copy between raw pointers into shared memory), its commit and
/// its wait (which make the copies land).
template <typename Op>
struct BarrierEffects
    : MemoryEffectOpInterface::ExternalModel<BarrierEffects<Op>, Op> {
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
    gpu::BarrierOp::attachInterface<BarrierEffects<gpu::BarrierOp>>(*ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, NVVM::NVVMDialect *) {
    NVVM::MmaOp::attachInterface<RegisterOnlyEffects<NVVM::MmaOp>>(*ctx);
    NVVM::ConvertFloatToTF32Op::attachInterface<
        RegisterOnlyEffects<NVVM::ConvertFloatToTF32Op>>(*ctx);
    NVVM::CpAsyncOp::attachInterface<BarrierEffects<NVVM::CpAsyncOp>>(*ctx);
    NVVM::CpAsyncCommitGroupOp::attachInterface<
        BarrierEffects<NVVM::CpAsyncCommitGroupOp>>(*ctx);
    NVVM::CpAsyncWaitGroupOp::attachInterface<
        BarrierEffects<NVVM::CpAsyncWaitGroupOp>>(*ctx);
  });
}
