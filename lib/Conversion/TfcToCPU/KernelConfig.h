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

#include "tfc/Conversion/TfcToCPU/GemmBlocking.h"
#include "tfc/Target/CPU/MicroKernels.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace mlir::tfc::cpu {

/// f32 lanes of the row kernels' and attention's vectors (one zmm; two ymm
/// where the target has AVX2 only, which LLVM splits without spilling).
constexpr int64_t kVectorWidth = 16;

/// The GEMM micro-kernel's register and cache blocking for one instruction
/// set. Weights are packed in panels of nr columns, [ceil(N / nr), K, nr];
/// a register tile is mr rows x tilePanels adjacent panels: mr x chunks()
/// x tilePanels accumulators, plus chunks() x tilePanels vectors of B and
/// one broadcast of A.
struct GemmConfig {
  /// f32 lanes of one vector register.
  int64_t vectorWidth;
  /// Register tile: mr rows of A times tilePanels panels of nr columns.
  int64_t mr, nr, tilePanels;
  /// Rows of A per parallel task (a block of mr-row tiles sharing B panels;
  /// a multiple of mr; the rows are split into blocks as equal as the tiles
  /// allow) and panels per task.
  int64_t mc, panelsPerTask;
  /// Depth of a k block: the tile's panels' kc-deep slices stay in L1
  /// while the task's row tiles stream past them; partial sums go through C
  /// between blocks. The value here is for a 48 KiB L1 (where it was
  /// measured); gemmConfigFor derives it from the target's L1 (kcForL1d).
  int64_t kc;
  /// Whether whole row tiles prefetch the first lines of the next row
  /// tile's rows of A into L2 (Gemm.cpp): worth it where A comes from L3 or
  /// another core (a model's activations) and the loop has issue slots to
  /// spare.
  bool prefetchA;
  /// k steps per iteration of the micro-kernel's loop (the rest in a loop of
  /// single steps). Unrolled, the loads of A and B address with constant
  /// displacements, and the loop's increments, compare and branch come once
  /// per kUnroll steps: scalar ops that would otherwise take FMA slots.
  int64_t kUnroll;
  /// Whether tasks of many row tiles (kDeepBlockRowTiles) take a k block
  /// deeper than L1 holds, up to what the target's L2 does (kcForL2): the
  /// tile's panels' slices then stream from L2 through L1, and C's partial
  /// sums go through memory fewer times.
  bool kcFromL2;

  /// Vectors of one panel's row.
  int64_t chunks() const { return nr / vectorWidth; }
};

/// AVX-512 (32 zmm): 6 x 64 (two panels of 32), 24 accumulators + 4 B
/// vectors + 1 broadcast, 10 loads per 24 FMAs (an 8 x 32 tile needs 10 per
/// 16, and measured slower; figures: commit 36bd92a); tasks of up to 132
/// rows x 128 columns, so that a 128-row A (a sequence of 128) is one block
/// of rows: each slice of the weight is then fetched once and used by 21 row
/// tiles that share its prefetch (with two blocks of 66 and 62 rows, the
/// first block's tasks streamed the weight over 8 tiles and ran slower than
/// with warm weights; one block made BERT-base, GPT-2 and 128- and 512-row
/// GEMMs faster with these kernels, while with AVX2's tile the same change
/// was slower; figures: commit 1ae6db8); k blocks of 128 (32 KiB of B). The
/// first lines of the next row tile's A are prefetched (BERT-base runs
/// faster; Gemm.cpp's kAPrefetchLines says more). The k loop unrolled 4
/// times (a hot GEMM, BERT-base and GPT-2 faster; figures: commit 9d895c2).
/// Tasks of 16 row tiles or more take a k block grown with the L2 (kcForL2:
/// 512 for 2 MiB, K = 3072 in six blocks, 768 in one: deepKcFor): the B
/// slices streaming from L2 cost less than the C round trips and tile
/// switches they save (BERT-base, GPT-2 and GEMMs faster than with 128-deep
/// blocks; figures: commit dbd88be).
constexpr GemmConfig kGemmAvx512{16, 6, 32, 2, 132, 4, 128, true, 4, true};
/// AVX2 (16 ymm): 4 x 24, 12 accumulators + 3 B vectors + 1 broadcast (7
/// loads per 12 FMAs; a 6 x 16 tile needs 8); tasks of 64 rows x 144
/// columns; k blocks of 256 (24 KiB of B). No prefetch of A: its loop is
/// front-end bound (the same prefetch made 128 and 512 rows x 768 x 768
/// slower; figures: commit 481bcf3). The k loop unrolled twice: hot GEMMs
/// took the same time, BERT-base and GPT-2 slightly less, in most of the
/// alternating rounds (figures: commit 738f5f6); 4 times, LLVM spilled 14
/// ymm. The k block stays within L1: slices streaming from L2 (kc 512) made
/// 128 x 3072 x 768 slower (figures: commit dbd88be).
constexpr GemmConfig kGemmAvx2{8, 4, 24, 1, 64, 6, 256, false, 2, false};

/// The module attribute naming the kernels' instruction set ("avx512" or
/// "avx2"), set by convert-tfc-linear-to-cpu-gemm from the target; modules
/// without it get the AVX-512 kernels.
constexpr const char *kCpuIsaAttr = "tfc.cpu_isa";
/// The module's elements per int8 scale of the activations that multiply
/// K-quant weights (tfc_cpu.qgemm's activation_block): 32 when absent, or
/// 256 (llama.cpp's Q8_K; tfc-compile --activation-block).
constexpr const char *kActivationBlockAttr = "tfc.activation_block";
/// The module attribute holding a measured tuning of the GEMM (the textual
/// form of include/tfc/Tuning/GemmTuning.h, canonical), set by
/// convert-tfc-linear-to-cpu-gemm from its gemm-tuning option: its fields
/// replace the ISA's configuration's (kc the L1's), gemmConfigFor applies
/// them.
constexpr const char *kCpuGemmTuningAttr = "tfc.cpu_gemm_tuning";
/// The module attribute holding the target's L1 data cache per core in
/// bytes (i64), set by the same pass; modules without it keep each
/// configuration's kc (a 48 KiB L1's).
constexpr const char *kCpuL1dAttr = "tfc.cpu_l1d_bytes";
/// The module attribute holding the target's L2 cache per core in bytes
/// (i64), set by the same pass; modules without it keep the k block of the
/// L1 (or the configuration's).
constexpr const char *kCpuL2Attr = "tfc.cpu_l2_bytes";

/// The k block for an L1 data cache of `l1dBytes`: the largest power of two
/// (16 to 1024) whose slices of the tile's panels take at most two thirds
/// of it, the rest left to the rows of A and the tile of C passing through
/// (48 KiB: AVX-512 128, AVX2 256, the measured best; 32 KiB: 64 and 128).
int64_t kcForL1d(const GemmConfig &config, int64_t l1dBytes);
/// Row tiles per task from which the GEMM takes the deeper k block of
/// deepKcFor. Fewer tiles re-read each slice from L2 fewer times than they
/// save C round trips, and short tiles (decoding: 2 rows) are bound by
/// their loads of B: with 384-deep blocks 4 x 768 x 3072 and 64 x 768 x 768
/// took longer, 96 x 768 x 3072 less (figures: commit 22c81ce).
constexpr int64_t kDeepBlockRowTiles = 16;

/// The k block for an L2 of `l2Bytes`: the largest power of two (16 to
/// 1024) for which a task's block of A (mc rows) and its tile's slice of B
/// take at most a quarter of it, the rest left to C, the slices being
/// prefetched and the other operands of a model; 0 if not even 16 fits.
/// (2 MiB: 512; 1 MiB: 256; 512 KiB: 128. Measured on a 2 MiB L2: half of
/// it, kc 1024, made BERT-base slower than a quarter and hot 768-deep GEMMs
/// barely faster; figures: commit dbd88be.)
int64_t kcForL2(const GemmConfig &config, int64_t l2Bytes);
/// The k block for the L1 data cache of the module that holds `op`
/// (kcForL1d), or config.kc if the module does not say.
int64_t l1KcFor(const GemmConfig &config, Operation *op);
/// The k block of tasks of at least kDeepBlockRowTiles row tiles for an L2
/// of `l2Bytes` (0: unknown) and a GEMM of `depth`: config.kc (the L1's),
/// or the L2's where the configuration streams slices from L2 (kcFromL2)
/// and that is deeper; a depth of at most two of the L2's blocks goes in one
/// (its block of A and slice then take at most half of the L2), saving the
/// partial sums' round trip through C: 512 x 768 x 768, 128 x 768 x 768
/// and 128 x 768 x 2304 ran faster as one block of 768 than as two of 384
/// (figures: commit fc7ba8d).
int64_t deepKcFor(const GemmConfig &config, int64_t l2Bytes, int64_t depth);
/// The L1 data cache of the module that holds `op` (kCpuL1dAttr); 0 if it
/// does not say.
int64_t l1dBytesFor(Operation *op);
/// The L2 cache per core of the module that holds `op` (kCpuL2Attr); 0 if it
/// does not say.
int64_t l2BytesFor(Operation *op);
/// The GEMM configuration of the module that holds `op`: its ISA's, with kc
/// for its L1 data cache.
GemmConfig gemmConfigFor(Operation *op);
/// The configuration of an instruction set name; null if unknown.
const GemmConfig *gemmConfigForIsa(StringRef isa);
/// `config` with the fields a tuning sets (the textual form of
/// include/tfc/Tuning/GemmTuning.h) replaced, and kc the tuning's if it
/// sets one. Returns false with `error` if the text does not parse or the
/// result is not a configuration the GEMM emitter can build for `isa`
/// (checkGemmConfig).
bool applyGemmTuning(GemmConfig &config, StringRef tuning, StringRef isa,
                     std::string &error);
/// The canonical text of a tuning that parses (its set fields in their
/// fixed order; "" for none).
std::string canonicalGemmTuning(StringRef tuning);
/// Why `config` cannot be built for `isa`'s kernels ("" if it can): nr a
/// multiple of the vector width of at most 4 vectors, the register tile
/// (accumulators, B vectors and a broadcast) within the ISA's registers, mc
/// a multiple of mr, counts within bounds.
std::string checkGemmConfig(const GemmConfig &config, StringRef isa);

/// Attention of at most this many query rows runs the decode micro-kernel
/// (lib/Target/CPU/MicroKernels/Attention.c): tasks of (batch, key/value
/// head, split of kAttentionKeysPerSplit keys, at most kAttentionMaxSplits).
constexpr int64_t kAttentionDecodeRows = 4;
constexpr int64_t kAttentionKeysPerSplit = TFC_UK_ATTENTION_KEYS_PER_SPLIT;
constexpr int64_t kAttentionMaxSplits = TFC_UK_ATTENTION_MAX_SPLITS;

} // namespace mlir::tfc::cpu

#endif // TFC_LIB_CONVERSION_TFCTOCPU_KERNELCONFIG_H
