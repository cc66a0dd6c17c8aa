//===- KernelConfig.h - Tile sizes of the CPU kernels -----------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The register and cache blocking of the CPU kernels, in one place: the pack
// layout of weights and the GEMM micro-kernel must agree on NR.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_LIB_CONVERSION_TFCTOCPU_KERNELCONFIG_H
#define TFC_LIB_CONVERSION_TFCTOCPU_KERNELCONFIG_H

#include <cstdint>

namespace mlir::tfc::cpu {

/// f32 lanes of one AVX-512 register.
constexpr int64_t kVectorWidth = 16;

/// GEMM register tile: MR rows of A times NR columns of B, accumulated in
/// MR * NR / kVectorWidth vector registers (8 x 2 = 16 of the 32 zmm).
constexpr int64_t kGemmMR = 8;
constexpr int64_t kGemmNR = 32;
/// Rows of A per parallel task (a block of MR-row tiles sharing B panels).
constexpr int64_t kGemmMC = 64;
/// Column panels per parallel task.
constexpr int64_t kGemmPanelsPerTask = 4;

/// Flash attention: query rows per tile, keys per tile (one vector of scores).
constexpr int64_t kAttentionBlockQ = 8;
constexpr int64_t kAttentionBlockK = kVectorWidth;

} // namespace mlir::tfc::cpu

#endif // TFC_LIB_CONVERSION_TFCTOCPU_KERNELCONFIG_H
