//===- Emit.cpp - The CPU target's instruction sets and emission ----------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Which kernels a CPU gets (the tiling of the generated kernels, the build
// of the C micro-kernels), and HostTarget.h's emission with those
// micro-kernels linked in.
//
//===----------------------------------------------------------------------===//

#include "tfc/Target/CPU/CPUTarget.h"

#include "LinkMicroKernels.h"

#include "llvm/IR/Module.h"

using namespace mlir;

std::string tfc::cpuKernelIsa(const CpuTargetOptions &options) {
  // What the CPU (with its explicit feature changes) has, as LLVM's subtarget
  // tables say: the AVX-512 kernels need AVX512F, the AVX2 ones AVX2 + FMA
  // (LLVM lowers their vectors to whatever the CPU has otherwise). A CPU
  // LLVM does not know gets the AVX-512 tiling (emission reports it).
  return cpuHasFeatures(options, "+avx512f").value_or(true) ? "avx512" : "avx2";
}

namespace {

/// The build of the C micro-kernels the target can run: AVX-512 VNNI (on
/// 256-bit vectors), AVX2 + FMA + F16C, or scalar x86-64.
std::string microKernelIsa(const tfc::CpuTargetOptions &options) {
  if (tfc::cpuHasFeatures(options,
                          "+avx512vnni,+avx512vl,+avx512bw,+avx2,+fma,+f16c")
          .value_or(false))
    return "avx512vnni";
  if (tfc::cpuHasFeatures(options, "+avx2,+fma,+f16c").value_or(false))
    return "avx2";
  return "generic";
}

} // namespace

LogicalResult tfc::emitCpuLLVMIR(ModuleOp module,
                                 const CpuTargetOptions &options,
                                 std::string &out, std::string &error) {
  std::string isa = microKernelIsa(options);
  return emitLLVMIR(module, options, out, error,
                    [&](llvm::Module &m, std::string &e) {
                      return linkMicroKernels(m, isa, e);
                    });
}

LogicalResult
tfc::emitCpuObjects(ModuleOp module, const CpuTargetOptions &options,
                    std::vector<llvm::SmallVector<char, 0>> &objects,
                    std::string &error) {
  std::string isa = microKernelIsa(options);
  return emitObjects(module, options, objects, error,
                     [&](llvm::Module &m, std::string &e) {
                       return linkMicroKernels(m, isa, e);
                     });
}

LogicalResult tfc::emitCpuObject(ModuleOp module,
                                 const CpuTargetOptions &options,
                                 llvm::SmallVectorImpl<char> &object,
                                 std::string &error) {
  std::string isa = microKernelIsa(options);
  return emitObject(module, options, object, error,
                    [&](llvm::Module &m, std::string &e) {
                      return linkMicroKernels(m, isa, e);
                    });
}
