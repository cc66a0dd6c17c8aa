//===- NVPTXTarget.h - The CUDA backend of tfc ------------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// `tfc-compile --target=cuda` lowers a fused tfc module to a model library
// whose host code (x86-64) launches kernels compiled to PTX for each
// requested architecture. Kernel ops become gpu.launch kernels when they
// bufferise (lib/Conversion/TfcToGPU), the remaining loops are mapped to
// kernels, the kernels are compiled to PTX by LLVM's NVPTX backend in
// process with libdevice linked, and the launches become calls of the
// runtime's launch hook (docs/architecture.md, "The CUDA backend").
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TARGET_NVPTX_NVPTXTARGET_H
#define TFC_TARGET_NVPTX_NVPTXTARGET_H

#include "tfc/Target/Host/HostTarget.h"

#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir {
class DialectRegistry;
class ModuleOp;
} // namespace mlir

namespace mlir::tfc {

struct CudaTargetOptions {
  /// GPU architectures to compile for: sm_<N> (runs on compute capability N
  /// and newer), sm_<N>a (N's architecture-specific features, e.g. Hopper's
  /// wgmma and TMA in sm_90a: runs on exactly N) or sm_<N>f (N's family),
  /// N >= 80 and known to LLVM's NVPTX backend.
  llvm::SmallVector<std::string> archs = {"sm_80", "sm_90"};
  /// The CUDA toolkit (for libdevice); empty: $CUDA_HOME, then
  /// /usr/local/cuda.
  std::string cudaPath;
  /// The PTX ISA version feature passed to the NVPTX backend ("+ptx87");
  /// empty: the oldest PTX ISA that each architecture accepts.
  std::string ptxFeatures;
  /// f32 products on the tensor cores as tf32 (--gpu-fp32-matmul=tf32).
  bool tf32Matmul = false;
  /// Kernels compiled for the host CPU, for libtfc_cuda_emulator.so, instead
  /// of to PTX (--gpu-emulate): no CUDA toolkit needed.
  bool emulate = false;
  /// Resolved by resolveCudaTarget: libdevice's path (empty when emulating).
  std::string libdevice;
};

/// Whether tfc can compile for `arch` (CudaTargetOptions::archs' forms); a
/// message naming it on failure.
LogicalResult checkCudaArch(llvm::StringRef arch, std::string &error);

/// Validates the architectures and finds libdevice; a message on failure.
LogicalResult resolveCudaTarget(CudaTargetOptions &options, std::string &error);

/// The dialects, interfaces and LLVM targets the CUDA pipeline needs.
void registerCudaTargetDialects(DialectRegistry &registry);

/// Initialises LLVM's NVPTX backend (once; registerCudaTargetDialects does).
void initializeNvptxBackend();

/// Marks `module` as targeting CUDA (`tfc.target = #tfc.target<cuda>`, which
/// the model ABI records as the device in the metadata).
void setCudaTarget(ModuleOp module);

/// tfc after fusion -> linalg on tensors with the kernel ops kept.
void buildCudaTensorPipeline(OpPassManager &pm);

/// Bufferisation, GPU kernels, PTX. With `deviceCodeOnly` the pipeline
/// stops once the kernels are compiled (gpu.binary holds the PTX);
/// otherwise it continues to host code in the LLVM dialect, ready for the
/// host emission (HostTarget.h: emitObject, linkSharedLibrary) with `host`.
void buildCudaLoweringPipeline(OpPassManager &pm,
                               const CudaTargetOptions &options,
                               const CpuTargetOptions &host,
                               bool deviceCodeOnly = false);

/// The PTX of every object in the module's gpu.binary ops, each preceded
/// by a `// tfc: arch sm_XX` line.
LogicalResult printPtx(ModuleOp module, llvm::raw_ostream &os,
                       std::string &error);

} // namespace mlir::tfc

#endif // TFC_TARGET_NVPTX_NVPTXTARGET_H
