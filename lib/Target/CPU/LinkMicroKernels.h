//===- LinkMicroKernels.h - Linking the C micro-kernels ---------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_LIB_TARGET_CPU_LINKMICROKERNELS_H
#define TFC_LIB_TARGET_CPU_LINKMICROKERNELS_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace llvm {
class Module;
} // namespace llvm

namespace mlir::tfc {

/// Links into `module` the micro-kernels (include/tfc/Target/CPU/
/// MicroKernels.h) it calls, from the bitcode built for `isa` ("avx512vnni",
/// "avx2" or "generic"), and makes them internal. Nothing happens when the
/// module calls none. False with `error` set on failure.
bool linkMicroKernels(llvm::Module &module, llvm::StringRef isa,
                      std::string &error);

} // namespace mlir::tfc

#endif // TFC_LIB_TARGET_CPU_LINKMICROKERNELS_H
