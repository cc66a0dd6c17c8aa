//===- Passes.td - Passes of the CUDA target -------- -*- tablegen -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TARGET_NVPTX_PASSES_TD
#define TFC_TARGET_NVPTX_PASSES_TD

include "mlir/Pass/PassBase.td"

def MergeGpuModules : Pass<"tfc-merge-gpu-modules", "mlir::ModuleOp"> {
  let summary = "Puts every outlined kernel into one gpu.module";
  let description = [{
    gpu-kernel-outlining makes one `gpu.module` per launch. This pass moves
    every kernel into a single `gpu.module @tfc_kernels` (renaming kernels
    whose names clash) and updates the `gpu.launch_func` references, so that
    a model has one device module per architecture, loaded once.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def LowerGpuLaunches : Pass<"tfc-lower-gpu-launches", "mlir::ModuleOp"> {
  let summary = "Turns gpu.launch_func and gpu.binary into runtime calls and data";
  let description = [{
    The host side of a CUDA model (see include/tfc/Schemas/ModelABI.h):
    each `gpu.launch_func` becomes a call of the runtime hook
    `launch(kernel, grid, block, shared_bytes, args)` with the kernel's
    index in the exported name table `tfc_cuda_kernels` and an array of
    pointers to its arguments, expanded as the NVVM kernel expects (memref
    descriptors field by field). Each object of the `gpu.binary` (PTX text
    for one architecture) becomes the exported string
    `tfc_cuda_ptx_<arch>`, and `tfc_cuda_archs` lists them.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

#endif // TFC_TARGET_NVPTX_PASSES_TD
