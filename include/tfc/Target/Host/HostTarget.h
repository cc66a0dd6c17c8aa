//===- HostTarget.h - Host code: options, pipelines, emission ---*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// What every target's model library shares, whatever runs its kernels: the
// host CPU it is compiled for, the model ABI and bufferisation pipeline, the
// host code's lowering to the LLVM dialect, translation to LLVM IR with
// optimisation and object emission, and linking the shared library with
// lld, all in process. The CPU target (CPUTarget.h) and the CUDA target
// (NVPTXTarget.h) build on it; docs/architecture.md has the stages and
// docs/abi.md what the library exports.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TARGET_HOST_HOSTTARGET_H
#define TFC_TARGET_HOST_HOSTTARGET_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>
#include <vector>

namespace llvm {
class Module;
} // namespace llvm

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::tfc {

/// The x86-64 CPU the host code (and a CPU target's kernels) is compiled for.
struct CpuTargetOptions {
  /// LLVM CPU name ("sapphirerapids", ...); empty means the host CPU.
  std::string cpu;
  /// LLVM feature string ("+avx512f,-avx512vnni"); empty means the host's
  /// (for the host CPU) or the CPU's defaults.
  std::string features;
  /// LLVM optimisation level 0-3.
  unsigned optLevel = 3;
  /// The CPU's L1 data cache per core in bytes, which the kernels' cache
  /// blocking follows (KernelConfig.h); 0: resolveCpuTarget fills it in.
  int64_t l1dBytes = 0;
  /// The CPU's L2 cache per core in bytes, which deepens the k blocks of
  /// the kernels that stream from L2 (KernelConfig.h, kcForL2); 0:
  /// resolveCpuTarget fills it in.
  int64_t l2Bytes = 0;
  /// Compile the block calls that compute the same thing (a model's layers)
  /// once, as calls of one function (tfc-outline-blocks).
  bool outlineBlocks = true;
  /// Threads for LLVM's code generation of a library (emitObjects): a large
  /// optimised module is split into parts of about codegenPartInstructions
  /// each, generated on up to that many threads (0: one per core this
  /// process may use). The parts, and so the library's bytes, do not depend
  /// on it, except that 1 generates the module in one piece. emitObject,
  /// which makes one object, always uses one.
  unsigned codegenThreads = 1;
  /// The instructions per part of a split code generation: splitting a
  /// smaller module (cloning, a bitcode round trip, a thread) costs more
  /// than it saves. An outlined 30-layer decoder has ~60,000 after
  /// optimisation, a test's model a few thousand. (Lowered by a test to
  /// split small ones.)
  unsigned codegenPartInstructions = 10000;
};

/// The host CPU and its features as LLVM spells them. With TFC_HOST_CPU set
/// to an x86-64 level (include/tfc/Schemas/CpuLevels.h), the level's name
/// and the host's features that the level implies (every other one off).
std::string hostCpuName();
std::string hostCpuFeatures();
/// Whether TFC_HOST_CPU masks the host to a level.
bool hostCpuMasked();
/// A message when TFC_HOST_CPU is set but names no level, else "".
std::string hostCpuMaskError();
/// The L1 data cache of one core of the host in bytes (sysconf, else
/// /sys/devices/system/cpu); 0 if neither says.
int64_t hostL1dBytes();
/// The L2 cache of one core of the host in bytes, likewise; 0 if neither
/// says.
int64_t hostL2Bytes();
/// The L1 data cache per core of an LLVM CPU name (Intel and AMD server and
/// desktop cores since Haswell and Zen); 0 for names not in the table,
/// generic ones (x86-64-v3, ...) included.
int64_t knownL1dBytes(llvm::StringRef cpu);
/// The L2 cache per core of an LLVM CPU name (the same CPUs; the P-cores'
/// of hybrid parts); 0 for names not in the table.
int64_t knownL2Bytes(llvm::StringRef cpu);
/// The L1 data cache tfc assumes where neither the host nor the table says:
/// the smallest of the x86-64 cores it targets (32 KiB: Haswell to Skylake,
/// Zen 1-4).
constexpr int64_t kDefaultL1dBytes = 32 * 1024;
/// The L2 tfc assumes likewise: the smallest of those cores' (256 KiB:
/// Haswell to Skylake client), which leaves every kernel's k block at its
/// L1's.
constexpr int64_t kDefaultL2Bytes = 256 * 1024;
/// Fills in the host CPU/features where `options` leaves them empty, and the
/// L1 data and L2 caches: the host's when compiling for the host (no CPU
/// named, or the host's own name), else the tables', else kDefaultL1dBytes
/// and kDefaultL2Bytes.
CpuTargetOptions resolveCpuTarget(CpuTargetOptions options);
/// Whether the CPU of `options` (with its explicit feature changes) has
/// every feature of `features` ("+avx2,+fma"), as LLVM's subtarget tables
/// say; none for a CPU LLVM does not know.
std::optional<bool> cpuHasFeatures(const CpuTargetOptions &options,
                                   llvm::StringRef features);

/// Dialects, interfaces and bufferisation/translation models the host
/// pipelines need (a target adds its own).
void registerHostTargetDialects(DialectRegistry &registry);

/// The layers compiled once (with `outlineBlocks`: tfc-outline-blocks, on
/// tensors, the block calls that compute the same thing become calls of one
/// function; else the frontend's block markers are only erased), the model
/// ABI (weights table, init, entries) for `host`, one-shot bufferisation
/// (the layer functions' results then made the callers' buffers,
/// tfc-block-out-params), `onBuffers` (if any: the target's rewrites of kernel
/// ops on buffers, before deallocation exists), `lowerKernels` (the target's
/// tfc-<target>-lower-kernels: kernel ops on buffers become its kernels),
/// ownership deallocation moved to last uses, and linalg as parallel loops.
/// With `copiesAsLoops` every memref.copy becomes a loop (device buffers).
void buildModelBufferizationPipeline(OpPassManager &pm,
                                     const CpuTargetOptions &host,
                                     std::unique_ptr<Pass> lowerKernels,
                                     bool copiesAsLoops, bool outlineBlocks,
                                     std::unique_ptr<Pass> onBuffers = nullptr);
/// Host code (after the entry points) down to the LLVM dialect.
void buildHostToLLVMPipeline(OpPassManager &pm);

/// Links a target's own code (bitcode of its micro-kernels, say) into the
/// translated module before optimisation; false with `error` set.
using LinkTargetCodeFn =
    llvm::function_ref<bool(llvm::Module &module, std::string &error)>;

/// Translates an LLVM-dialect module to optimised LLVM IR text, or to an
/// object file for `options`' CPU, after `linkTargetCode` (if any). Errors
/// go to `error`.
LogicalResult emitLLVMIR(ModuleOp module, const CpuTargetOptions &options,
                         std::string &out, std::string &error,
                         LinkTargetCodeFn linkTargetCode = {});
LogicalResult emitObject(ModuleOp module, const CpuTargetOptions &options,
                         llvm::SmallVectorImpl<char> &object,
                         std::string &error,
                         LinkTargetCodeFn linkTargetCode = {});
/// The same as object files to link together: one, or one per part of the
/// module when `options.codegenThreads` allows and the module is large
/// enough to gain from it (each part defines its share of the functions and
/// declares the others; local symbols become hidden ones). Appended to
/// `objects`. The bytes depend on the number of parts, never on timing.
LogicalResult emitObjects(ModuleOp module, const CpuTargetOptions &options,
                          std::vector<llvm::SmallVector<char, 0>> &objects,
                          std::string &error,
                          LinkTargetCodeFn linkTargetCode = {});
/// The same for LLVM IR made elsewhere (the CUDA emulator's kernels): its
/// triple and data layout become `options`' CPU's, then it is optimised and
/// compiled.
LogicalResult emitObject(llvm::Module &module, const CpuTargetOptions &options,
                         llvm::SmallVectorImpl<char> &object,
                         std::string &error);
/// Links `object` (or several) into the shared library `outputPath` with lld.
LogicalResult linkSharedLibrary(llvm::ArrayRef<char> object,
                                llvm::StringRef outputPath, std::string &error);
LogicalResult linkSharedLibrary(llvm::ArrayRef<llvm::ArrayRef<char>> objects,
                                llvm::StringRef outputPath, std::string &error);

} // namespace mlir::tfc

#endif // TFC_TARGET_HOST_HOSTTARGET_H
