//===- TfcToCPU.h - The CPU kernels of tfc ----------------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The kernel ops (tfc.softmax, tfc.layer_norm, tfc.rms_norm, tfc.attention,
// tfc.matmul, tfc_cpu.gemm, tfc_cpu.pack) bufferise straight into the CPU
// backend's loop nests: vectorised (vector dialect, 16 x f32) and split
// across threads with scf.parallel. Registering these models is what makes a
// context's one-shot bufferisation produce CPU code for them.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CONVERSION_TFCTOCPU_TFCTOCPU_H
#define TFC_CONVERSION_TFCTOCPU_TFCTOCPU_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::tfc {

void registerCpuKernelBufferizationModels(DialectRegistry &registry);

} // namespace mlir::tfc

#endif // TFC_CONVERSION_TFCTOCPU_TFCTOCPU_H
