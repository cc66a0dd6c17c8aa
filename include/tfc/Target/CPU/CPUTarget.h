//===- CPUTarget.h - Compiling tfc modules for x86-64 CPUs ------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The CPU backend: its tensor pipeline (GEMMs packed for the CPU's
// instruction set, kernel ops), its lowering (the host pipelines of
// HostTarget.h around tfc-cpu-lower-kernels), emission with its
// micro-kernels linked in, and multi-versioned libraries. See docs/architecture.md for the stages and docs/abi.md for what
// the library exports.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TARGET_CPU_CPUTARGET_H
#define TFC_TARGET_CPU_CPUTARGET_H

#include "tfc/Target/Host/HostTarget.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::tfc {

/// The instruction set the CPU kernels are tiled for on this target: "avx512"
/// when it has AVX512F, else "avx2" (KernelConfig.h).
std::string cpuKernelIsa(const CpuTargetOptions &options);

/// Dialects, interfaces and bufferisation/translation models the CPU
/// pipeline needs.
void registerCpuTargetDialects(DialectRegistry &registry);

/// Stage 1: fused tfc -> linalg/tensor + CPU kernel ops (`--emit=linalg`),
/// the kernels tiled for `isa` (cpuKernelIsa; empty: the module's
/// tfc.cpu_isa attribute, else avx512).
/// `l1dBytes` and `l2Bytes` (0: leave the module's) set the L1 data and L2
/// caches the GEMM's k blocks are chosen for; `gemmTuning` (the textual
/// form of include/tfc/Tuning/GemmTuning.h; empty: none) a measured
/// blocking of the GEMM over the ISA's.
void buildCpuTensorPipeline(OpPassManager &pm, llvm::StringRef isa = "",
                            int64_t l1dBytes = 0, int64_t l2Bytes = 0,
                            llvm::StringRef gemmTuning = "");
/// Stage 2: model ABI, bufferisation, kernels, threads, LLVM dialect
/// (HostTarget.h's pipelines around tfc-cpu-lower-kernels).
void buildCpuLoweringPipeline(OpPassManager &pm,
                              const CpuTargetOptions &options);

/// HostTarget.h's emission with the CPU's micro-kernels (their build for
/// the instruction set of `options`) linked in.
LogicalResult emitCpuLLVMIR(ModuleOp module, const CpuTargetOptions &options,
                            std::string &out, std::string &error);
LogicalResult emitCpuObject(ModuleOp module, const CpuTargetOptions &options,
                            llvm::SmallVectorImpl<char> &object,
                            std::string &error);
LogicalResult emitCpuObjects(ModuleOp module, const CpuTargetOptions &options,
                             std::vector<llvm::SmallVector<char, 0>> &objects,
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
