//===- KernelConfig.h - Tile sizes of the CPU kernels -----------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The register and cache blocking of the CPU kernels, in one place, per
// instruction set: the pack layout of weights and the GEMM micro-kernel must
// agree on NR, which is why the ISA is a module attribute both read.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_LIB_CONVERSION_TFCTOCPU_KERNELCONFIG_H
#define TFC_LIB_CONVERSION_TFCTOCPU_KERNELCONFIG_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace mlir::tfc::cpu {

/// f32 lanes of the row kernels' and attention's vectors (one zmm; two ymm
/// where the target has AVX2 only, which LLVM splits without spilling).
constexpr int64_t kVectorWidth = 16;

/// The GEMM micro-kernel's register and cache blocking for one instruction
/// set. The pack layout [ceil(N / nr), K, nr] and the micro-kernel agree on
/// nr; a register tile holds mr x nr / vectorWidth accumulators, plus
/// nr / vectorWidth vectors of B and one broadcast of A.
struct GemmConfig {
  /// f32 lanes of one vector register.
  int64_t vectorWidth;
  /// Register tile: mr rows of A times nr columns of B.
  int64_t mr, nr;
  /// Rows of A per parallel task (a block of mr-row tiles sharing B panels;
  /// a multiple of mr) and column panels per task.
  int64_t mc, panelsPerTask;

  /// Vectors of B per k step.
  int64_t chunks() const { return nr / vectorWidth; }
};

/// AVX-512 (32 zmm): 8 x 32, 16 accumulators + 2 B vectors + 1 broadcast;
/// tasks of 64 rows x 128 columns.
constexpr GemmConfig kGemmAvx512{16, 8, 32, 64, 4};
/// AVX2 (16 ymm): 4 x 24, 12 accumulators + 3 B vectors + 1 broadcast (7
/// loads per 12 FMAs; a 6 x 16 tile needs 8); tasks of 64 rows x 144
/// columns.
constexpr GemmConfig kGemmAvx2{8, 4, 24, 64, 6};

/// The module attribute naming the kernels' instruction set ("avx512" or
/// "avx2"), set by convert-tfc-linear-to-cpu-gemm from the target; modules
/// without it get the AVX-512 kernels.
constexpr const char *kCpuIsaAttr = "tfc.cpu_isa";

/// The GEMM configuration of the module that holds `op`.
const GemmConfig &gemmConfigFor(Operation *op);
/// The configuration of an instruction set name; null if unknown.
const GemmConfig *gemmConfigForIsa(StringRef isa);

/// Flash attention: query rows per tile, keys per tile (one vector of scores).
constexpr int64_t kAttentionBlockQ = 8;
constexpr int64_t kAttentionBlockK = kVectorWidth;
/// Blocks of at most this many query rows (decode steps) compute scores as
/// dot products instead of transposing each key tile.
constexpr int64_t kAttentionDirectRows = 2;
/// Attention of at most this many query rows runs the decode micro-kernel
/// (lib/Target/CPU/MicroKernels/Attention.c): tasks of (batch, key/value
/// head, split of kAttentionKeysPerSplit keys, at most kAttentionMaxSplits).
constexpr int64_t kAttentionDecodeRows = 4;
constexpr int64_t kAttentionKeysPerSplit = 256;
constexpr int64_t kAttentionMaxSplits = 32;

} // namespace mlir::tfc::cpu

#endif // TFC_LIB_CONVERSION_TFCTOCPU_KERNELCONFIG_H
