//===- TfcToGPU.h - What the CUDA kernels need registered -------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CONVERSION_TFCTOGPU_TFCTOGPU_H
#define TFC_CONVERSION_TFCTOGPU_TFCTOGPU_H

namespace mlir {
class DialectRegistry;
namespace tfc {

/// Memory-effect models the GPU kernels' ops lack upstream and the
/// ownership-based deallocation pipeline needs: gpu.barrier reads and writes
/// memory (it orders a block's shared-memory accesses), nvvm.mma.sync has no
/// effects (it computes on registers).
void registerGpuKernelEffectModels(DialectRegistry &registry);

} // namespace tfc
} // namespace mlir

#endif // TFC_CONVERSION_TFCTOGPU_TFCTOGPU_H
