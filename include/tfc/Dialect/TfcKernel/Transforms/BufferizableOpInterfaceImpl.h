//===- BufferizableOpInterfaceImpl.h - Kernel ops bufferise -----*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_DIALECT_TFCKERNEL_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
#define TFC_DIALECT_TFCKERNEL_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H

namespace mlir {
class DialectRegistry;
namespace tfc::kernel {

/// Makes every kernel op (tfc_kernel and tfc_cpu) bufferisable: the op on
/// tensors becomes the same op on the buffers of its operands, writing the
/// destination's buffer in place.
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);

} // namespace tfc::kernel
} // namespace mlir

#endif // TFC_DIALECT_TFCKERNEL_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
