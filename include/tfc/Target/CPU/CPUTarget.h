//===- CPUTarget.h - Compiling tfc modules for x86-64 CPUs ------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The CPU backend end to end: the pass pipeline from fused tfc IR to the
// LLVM dialect, translation to LLVM IR, optimisation and object emission for
// a target machine, and linking the model shared library with lld, all in
// process. See docs/architecture.md for the stages and docs/abi.md for what
// the library exports.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TARGET_CPU_CPUTARGET_H
#define TFC_TARGET_CPU_CPUTARGET_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::tfc {

struct CpuTargetOptions {
  /// LLVM CPU name ("sapphirerapids", ...); empty means the host CPU.
  std::string cpu;
  /// LLVM feature string ("+avx512f,-avx512vnni"); empty means the host's
  /// (for the host CPU) or the CPU's defaults.
  std::string features;
  /// LLVM optimisation level 0-3.
  unsigned optLevel = 3;
};

/// The host CPU and its features as LLVM spells them.
std::string hostCpuName();
std::string hostCpuFeatures();
/// Fills in the host CPU/features where `options` leaves them empty.
CpuTargetOptions resolveCpuTarget(CpuTargetOptions options);
/// The instruction set the CPU kernels are tiled for on this target: "avx512"
/// when it has AVX512F, else "avx2" (KernelConfig.h).
std::string cpuKernelIsa(const CpuTargetOptions &options);

/// Dialects, interfaces and bufferisation/translation models the CPU
/// pipeline needs.
void registerCpuTargetDialects(DialectRegistry &registry);

/// Stage 1: fused tfc -> linalg/tensor + CPU kernel ops (`--emit=linalg`),
/// the kernels tiled for `isa` (cpuKernelIsa; empty: the module's
/// tfc.cpu_isa attribute, else avx512).
void buildCpuTensorPipeline(OpPassManager &pm, llvm::StringRef isa = "");
/// Stage 2: model ABI, bufferisation, kernels, threads, LLVM dialect.
/// The model ABI (weights table, init, entries) for `host`, one-shot
/// bufferisation, `lowerKernels` (the target's tfc-<target>-lower-kernels:
/// kernel ops on buffers become its kernels), ownership
/// deallocation moved to last uses, and linalg as parallel loops. With
/// `copiesAsLoops` every memref.copy becomes a loop (device buffers).
void buildModelBufferizationPipeline(OpPassManager &pm,
                                     const CpuTargetOptions &host,
                                     std::unique_ptr<Pass> lowerKernels,
                                     bool copiesAsLoops);
/// Host code (after the entry points) down to the LLVM dialect.
void buildHostToLLVMPipeline(OpPassManager &pm);
void buildCpuLoweringPipeline(OpPassManager &pm,
                              const CpuTargetOptions &options);

/// Translates an LLVM-dialect module to optimised LLVM IR text, or to an
/// object file for the target. Errors go to `error`.
LogicalResult emitLLVMIR(ModuleOp module, const CpuTargetOptions &options,
                         std::string &out, std::string &error);
LogicalResult emitObject(ModuleOp module, const CpuTargetOptions &options,
                         llvm::SmallVectorImpl<char> &object,
                         std::string &error);
/// Links `object` (or several) into the shared library `outputPath` with lld.
LogicalResult linkSharedLibrary(llvm::ArrayRef<char> object,
                                llvm::StringRef outputPath,
                                std::string &error);
LogicalResult linkSharedLibrary(llvm::ArrayRef<llvm::ArrayRef<char>> objects,
                                llvm::StringRef outputPath,
                                std::string &error);

/// Multi-versioned libraries (docs/abi.md, "CPU variants"): appends `suffix`
/// to every symbol an LLVM-dialect model module defines for the outside
/// (the ABI's metadata, hooks, init and entries, and helpers with external
/// linkage), so that several builds of one model link into one library.
void suffixExportedSymbols(ModuleOp module, llvm::StringRef suffix);
/// The suffix of a variant compiled for `cpu`: "__" and the name with every
/// character outside [A-Za-z0-9] as '_'.
std::string cpuVariantSuffix(llvm::StringRef cpu);
/// An LLVM-dialect module that defines only `tfc_model_variants`: the
/// variants' suffixes, comma-separated, preferred first.
OwningOpRef<ModuleOp> buildVariantsModule(MLIRContext &context,
                                          llvm::ArrayRef<std::string> suffixes);

} // namespace mlir::tfc

#endif // TFC_TARGET_CPU_CPUTARGET_H
