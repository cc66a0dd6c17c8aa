//===- Pipeline.cpp - The CUDA pass pipelines -----------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Target/NVPTX/NVPTXTarget.h"

#include "tfc/Conversion/Passes.h"
#include "tfc/Dialect/Tfc/IR/TfcOps.h"
#include "tfc/Dialect/Tfc/Transforms/Passes.h"
#include "tfc/Dialect/TfcKernel/Transforms/Passes.h"
#include "tfc/Target/Host/Passes.h"
#include "tfc/Target/NVPTX/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/TargetParser/Triple.h"

#include <cstdlib>

using namespace mlir;

LogicalResult tfc::checkCudaArch(StringRef arch, std::string &error) {
  StringRef rest = arch;
  unsigned version = 0;
  bool wellFormed =
      rest.consume_front("sm_") && !rest.empty() && llvm::isDigit(rest.front());
  if (wellFormed) {
    StringRef digits = rest.take_while(llvm::isDigit);
    StringRef suffix = rest.drop_front(digits.size());
    wellFormed = !digits.getAsInteger(10, version) &&
                 (suffix.empty() || suffix == "a" || suffix == "f");
  }
  auto unsupported = [&](const Twine &why) {
    error = ("unsupported GPU architecture '" + arch + "': " + why).str();
    return failure();
  };
  if (!wellFormed)
    return unsupported("expected sm_<N>, sm_<N>a or sm_<N>f, e.g. sm_80, "
                       "sm_90 or sm_90a");
  // The f16/bf16 products use mma.sync.m16n8k16 (Ampere and newer).
  if (version < 80)
    return unsupported("tfc's kernels need sm_80 or newer (mma.sync)");
  // What LLVM's NVPTX backend cannot compile for would abort the compiler.
  initializeNvptxBackend();
  llvm::Triple triple("nvptx64-nvidia-cuda");
  std::string lookupError;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, lookupError);
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      // (Created for a known chip: an unknown one would print a warning.)
      target ? target->createMCSubtargetInfo(triple, "sm_80", "") : nullptr);
  if (!info || !info->isCPUStringValid(arch))
    return unsupported("LLVM's NVPTX backend does not know it");
  return success();
}

LogicalResult tfc::resolveCudaTarget(CudaTargetOptions &options,
                                     std::string &error) {
  if (options.archs.empty()) {
    error = "no GPU architecture given (--gpu-arch=sm_80,sm_90)";
    return failure();
  }
  for (const std::string &arch : options.archs)
    if (failed(checkCudaArch(arch, error)))
      return failure();
  if (options.emulate)
    return success(); // the emulator's kernels call the C library
  std::string root = options.cudaPath;
  if (root.empty())
    if (const char *env = std::getenv("CUDA_HOME"); env && *env)
      root = env;
  if (root.empty())
    root = "/usr/local/cuda";
  llvm::SmallString<256> path(root);
  llvm::sys::path::append(path, "nvvm", "libdevice", "libdevice.10.bc");
  if (!llvm::sys::fs::exists(path)) {
    error = "libdevice not found at " + path.str().str() +
            ": the CUDA toolkit provides it (set --cuda-path or CUDA_HOME)";
    return failure();
  }
  options.libdevice = path.str().str();
  return success();
}

void tfc::setCudaTarget(ModuleOp module) {
  module->setAttr(kTargetAttrName,
                  TargetKindAttr::get(module.getContext(), TargetKind::Cuda));
}

void tfc::buildCudaTensorPipeline(OpPassManager &pm) {
  // No packing: tfc.linear stays a kernel op of its own on the GPU, and
  // there are no quantised kernels: block-quantised weights are dequantised
  // at load.
  pm.addPass(createTfcQuantizeWeights({"none"}));
  pm.addPass(createConvertTfcToLinalg());
  pm.addPass(createConvertTfcToKernels());
  pm.addPass(createLinalgElementwiseOpFusionPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Sizes read back from reshaped values (tensor.dim of an expand_shape)
  // become the sizes they were made from, so that ops computing the same
  // thing from the same sizes become one: the rotary tables of every
  // layer's queries and keys, one kernel per forward instead of two per
  // layer (the layers are inline on the GPU).
  pm.addPass(memref::createResolveShapedTypeResultDimsPass());
  pm.addPass(createCSEPass());
  // Every layer's ops alike for tfc-outline-blocks (first in the lowering):
  // what depends on weights only (a merged projection's concat) is made
  // once, at init.
  pm.addPass(createHoistBlockInvariants());
}

void tfc::buildCudaLoweringPipeline(OpPassManager &pm,
                                    const CudaTargetOptions &options,
                                    const CpuTargetOptions &host,
                                    bool deviceCodeOnly) {
  // The layers are compiled once, as on the CPU: the host code calls one
  // function per kind of layer, whose launches are those of the layers
  // compiled in place (--inline-blocks). Attention, rotary embeddings and KV
  // cache writes read split heads, and attention writes merged ones,
  // through strides (GPU kernels load and store any layout): no copy
  // kernels.
  CudaLowerKernelsOptions lowering;
  lowering.fp32Matmul = options.tf32Matmul ? "tf32" : "ieee";
  buildModelBufferizationPipeline(pm, host, createCudaLowerKernels(lowering),
                                  /*copiesAsLoops=*/true, host.outlineBlocks,
                                  kernel::createKernelFoldTransposedOperands());
  pm.addPass(createMapLoopsToGPU());
  pm.addPass(createLowerEntryPoints());
  // Warp-level matrix loads (ldmatrix) the kernels take as nvgpu ops.
  pm.addPass(createConvertNVGPUToNVVMPass());

  // Device code. Constants, sizes and comparisons of the host (where the
  // canonicaliser hoisted them from the launch bodies) are copied into the
  // kernels first: as kernel parameters they would be registers, and the
  // offsets of shared-memory accesses could not be immediates.
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createMergeGpuModules());
  for (const std::string &arch : options.archs) {
    GpuNVVMAttachTargetOptions target;
    target.chip = arch;
    target.features = options.ptxFeatures;
    target.optLevel = 3;
    if (!options.emulate)
      target.linkLibs = {options.libdevice};
    pm.addPass(createGpuNVVMAttachTarget(target));
  }
  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  device.addPass(createParallelForToNestedForsPass());
  device.addPass(createSCFToControlFlowPass());
  device.addPass(memref::createExpandStridedMetadataPass());
  device.addPass(createLowerAffinePass());
  device.addPass(createArithToLLVMConversionPass());
  device.addPass(createConvertIndexToLLVMPass());
  // Module-scoped; the host has no cf ops yet.
  pm.addPass(createConvertControlFlowToLLVMPass());
  OpPassManager &nvvm = pm.nest<gpu::GPUModuleOp>();
  nvvm.addPass(createConvertGpuOpsToNVVMOps());
  nvvm.addPass(createCanonicalizerPass());
  nvvm.addPass(createCSEPass());
  nvvm.addPass(createReconcileUnrealizedCastsPass());
  if (options.emulate) {
    EmulateGpuModulesOptions emulator;
    emulator.cpu = host.cpu;
    emulator.features = host.features;
    pm.addPass(createEmulateGpuModules(emulator));
  } else {
    GpuModuleToBinaryPassOptions binary;
    binary.compilationTarget = "isa"; // PTX text, no ptxas needed
    pm.addPass(createGpuModuleToBinaryPass(binary));
  }
  if (deviceCodeOnly)
    return;

  // Host code.
  pm.addPass(createLowerGpuLaunches());
  buildHostToLLVMPipeline(pm);
}

LogicalResult tfc::printPtx(ModuleOp module, llvm::raw_ostream &os,
                            std::string &error) {
  bool any = false;
  for (auto binary : module.getOps<gpu::BinaryOp>()) {
    for (Attribute attr : binary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(attr);
      auto target = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget());
      os << "// tfc: arch " << (target ? target.getChip() : "unknown") << "\n";
      os << object.getObject().getValue() << "\n";
      any = true;
    }
  }
  if (!any) {
    error = "the module has no device code";
    return failure();
  }
  return success();
}
