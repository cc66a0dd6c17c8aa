//===- KernelBufferization.h - Kernel ops bufferise into target code --*- C++
//-*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The kernel ops (tfc.softmax, tfc.layer_norm, tfc.rms_norm, tfc.attention,
// tfc.matmul, tfc.linear, tfc_cpu.gemm, tfc_cpu.pack) bufferise straight
// into the loop nests of the module's target: the CPU backend's vectorised,
// thread-parallel loops (lib/Conversion/TfcToCPU), or gpu.launch kernels
// when the module carries `tfc.target = #tfc.target<cuda>`
// (lib/Conversion/TfcToGPU).
// Registering these models is what makes a context's one-shot
// bufferisation produce target code for them.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CONVERSION_KERNELBUFFERIZATION_H
#define TFC_CONVERSION_KERNELBUFFERIZATION_H

#include "llvm/ADT/StringRef.h"

namespace mlir {
class DialectRegistry;
class Operation;
} // namespace mlir

namespace mlir::tfc {

/// The module attribute naming the target of a module's kernels.
constexpr llvm::StringLiteral kTargetAttrName = "tfc.target";

/// Whether `op`'s module targets CUDA (`tfc.target = #tfc.target<cuda>`).
bool isCudaTarget(Operation *op);

void registerKernelBufferizationModels(DialectRegistry &registry);

} // namespace mlir::tfc

#endif // TFC_CONVERSION_KERNELBUFFERIZATION_H
