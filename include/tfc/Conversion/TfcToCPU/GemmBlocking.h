//===- GemmBlocking.h - The CPU GEMM's blocking, for tuning -----*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// What tfc-tune needs to know of the GEMM's configuration per instruction
// set (lib/Conversion/TfcToCPU/KernelConfig.h) without the emitter's
// internals: the analytic default as a tuning (the textual form of
// include/tfc/Tuning/GemmTuning.h, every field set) and whether a tuning
// can be built at all.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CONVERSION_TFCTOCPU_GEMMBLOCKING_H
#define TFC_CONVERSION_TFCTOCPU_GEMMBLOCKING_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace mlir::tfc::cpu {

/// The blocking `isa`'s kernels ("avx512", "avx2") get by default for an L1
/// data cache of `l1dBytes` (0: the configuration's own k block), every
/// field set; "" for an unknown ISA.
std::string defaultGemmTuningText(llvm::StringRef isa, int64_t l1dBytes);
/// The f32 lanes and the vector registers of `isa`'s kernels.
int64_t gemmVectorWidth(llvm::StringRef isa);
int64_t vectorRegistersForIsa(llvm::StringRef isa);
/// Why `tuning` over `isa`'s default cannot be built ("" if it can).
std::string checkGemmTuningText(llvm::StringRef isa, llvm::StringRef tuning);

} // namespace mlir::tfc::cpu

#endif // TFC_CONVERSION_TFCTOCPU_GEMMBLOCKING_H
