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
    a model has one device module per architecture, loaded once. A kernel
    identical to one already moved (the same op in another layer) is dropped
    and its launches call that one: a model's PTX holds each distinct kernel
    once, whatever its depth. Every
    kernel's workgroup (shared) buffers are aligned to 16 bytes
    (`llvm.align`), as ldmatrix rows and cp.async copies need.
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

def EmulateGpuModules : Pass<"tfc-emulate-gpu-modules", "mlir::ModuleOp"> {
  let summary = "Compiles gpu.modules for the host CPU, for the CUDA emulator";
  let description = [{
    In place of gpu-module-to-binary (`tfc-compile --gpu-emulate`): each
    `gpu.module`, in the LLVM and NVVM dialects, is translated to LLVM IR,
    made host code (shared memory as ordinary globals, every NVVM intrinsic
    a call of the emulator's handler, libdevice functions the C library's,
    an entry point per kernel taking cuLaunchKernel's parameter array),
    compiled for the host CPU and linked into a shared object. That image
    (include/tfc/Schemas/CudaEmulatorABI.h) becomes the `gpu.binary`'s
    object, format `bin`, for each of the module's NVVM targets;
    libtfc_cuda_emulator.so runs it with one fiber per GPU thread. An NVVM
    intrinsic the emulator does not implement is an error naming it.
  }];
  let options = [
    Option<"cpu", "cpu", "std::string", /*default=*/"\"x86-64\"",
           "The host CPU to compile the kernels for (LLVM's name)">,
    Option<"features", "features", "std::string", /*default=*/"\"\"",
           "The host CPU features (LLVM's +feature list)">,
    Option<"optLevel", "opt-level", "unsigned", /*default=*/"2",
           "LLVM optimisation level of the kernels' host code">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

#endif // TFC_TARGET_NVPTX_PASSES_TD
