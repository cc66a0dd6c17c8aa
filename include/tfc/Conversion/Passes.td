//===- Passes.td - tfc conversion passes --------------------*- tablegen -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CONVERSION_PASSES_TD
#define TFC_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTfcToLinalg : Pass<"convert-tfc-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lowers the data-movement, elementwise and reduction ops of "
                "tfc to linalg, tensor, arith and math";
  let description = [{
    Rewrites every tfc op except the *kernel* ops (`tfc.linear`,
    `tfc.matmul`, `tfc.attention`, `tfc.softmax` over the last axis,
    `tfc.layer_norm`, `tfc.rms_norm`) and `tfc.weight` into target-independent
    tensor code: `linalg.generic` with NumPy broadcasting for elementwise ops,
    reductions, `linalg.transpose`, `tensor.expand_shape`/`collapse_shape`/
    `extract_slice`/`insert_slice` for data movement, and index-driven
    generics for positions and masks. Kernel ops are left to the target (the
    CPU backend bufferises them into its own loop nests). A softmax over
    another axis is decomposed into reductions here.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::math::MathDialect"];
}

def ConvertTfcToKernels : Pass<"convert-tfc-to-kernels", "mlir::ModuleOp"> {
  let summary = "Rewrites the tfc ops that targets lower by hand into "
                "tfc_kernel ops in destination-passing style";
  let description = [{
    `tfc.softmax` over the last axis, `tfc.layer_norm`, `tfc.rms_norm`,
    `tfc.attention`, `tfc.matmul` and `tfc.linear` become the `tfc_kernel`
    op of the same name writing into a `tensor.empty` destination (dynamic
    sizes read from the operands); attributes are resolved (the attention
    scale is explicit). Run after `convert-tfc-to-linalg`, which decomposes
    a softmax over another axis; such a softmax left here is an error.
    Bufferisation then handles the kernel ops like any destination-style
    op, and a target's lower-kernels pass emits their code.
  }];
  let dependentDialects = ["mlir::tfc::kernel::TfcKernelDialect",
                           "mlir::tensor::TensorDialect"];
}

def CpuLowerKernels : Pass<"tfc-cpu-lower-kernels", "mlir::ModuleOp"> {
  let summary = "Replaces kernel ops on buffers by the CPU kernels";
  let description = [{
    Every `tfc_kernel` and `tfc_cpu` op on memrefs (after bufferisation)
    becomes the loop nest of its CPU kernel (lib/Conversion/TfcToCPU:
    Gemm.cpp, QuantGemm.cpp, Attention.cpp, RowKernels.cpp), writing its
    destination buffer: scf/vector/memref code, parallel loops that the
    runtime's thread pool runs, and calls of the C micro-kernels. The
    kernels' tiling follows the module's `tfc.cpu_isa`. The CPU kernels
    compute in f32; other element types, kernel ops still on tensors and
    `tfc_kernel.linear` (which the CPU packs into tfc_cpu.gemm first) are
    errors.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::math::MathDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::vector::VectorDialect"];
}

def CudaLowerKernels : Pass<"tfc-cuda-lower-kernels", "mlir::ModuleOp"> {
  let summary = "Replaces kernel ops on buffers by CUDA kernels";
  let description = [{
    Every `tfc_kernel` op on memrefs becomes the `gpu.launch` of its GPU
    kernel (lib/Conversion/TfcToGPU: RowKernels.cpp, Attention.cpp,
    Matmul.cpp), reading and writing device buffers; f32, f16 and bf16 data,
    computed in f32. The CPU's own kernel ops (`tfc_cpu`) are errors.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::NVVM::NVVMDialect",
                           "mlir::math::MathDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::vector::VectorDialect"];
}

def ConvertLinearToGemm : Pass<"convert-tfc-linear-to-cpu-gemm", "mlir::ModuleOp"> {
  let summary = "Rewrites tfc.linear into the CPU gemm kernel over a packed weight";
  let description = [{
    `tfc.linear(x, W[N,K], b)` becomes `tfc_cpu.gemm(x, tfc_cpu.pack(W), b)`.
    When W is itself a transpose of a [K,N] tensor the pack reads that tensor
    directly (GPT-2's Conv1D weights). A block-quantised weight
    (`tfc.weight {quant = "q4_1"}`, or an axis-0 concat of such weights of
    one format) becomes its raw form (the stored blocks), which
    `tfc_cpu.qpack` regroups at load for `tfc_cpu.qgemm`; an embedding
    lookup reads it through `tfc_cpu.qembedding`, other uses through
    `tfc_cpu.dequantize`. The pack depends on weights only, so
    the model ABI pass hoists it into the load-time initialiser. `tfc.matmul`
    with transposed operands gets explicit transposes so that its kernel
    only sees [..., M, K] x [..., K, N].

    The panels' width NR is that of the kernels' instruction set: `isa`
    (avx512 or avx2) when given, which is also recorded as the module's
    `tfc.cpu_isa` attribute for the kernel emitters, else the module's
    attribute, else avx512.
  }];
  let options = [
    Option<"isa", "isa", "std::string", /*default=*/"\"\"",
           "The kernels' instruction set: avx512 or avx2 (default: the "
           "module's tfc.cpu_isa, else avx512)">,
  ];
  let dependentDialects = ["mlir::tfc::cpu::TfcCpuDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def OutlineParallelLoops : Pass<"tfc-outline-parallel-loops", "mlir::ModuleOp"> {
  let summary = "Runs scf.parallel loops on the runtime's thread pool";
  let description = [{
    Each outermost `scf.parallel` (after bufferisation) becomes a call of the
    runtime hook `parallel_for(n, fn, ctx)` (see
    include/tfc/Runtime/ModelABI.h): the loop body is outlined into a function
    `fn(ctx, begin, end)` that runs the linearised iterations [begin, end),
    and the values the body uses from outside are passed through a context
    struct on the stack. When no runtime is attached the loop runs serially.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect",
                           "mlir::func::FuncDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect"];
}

def LowerCpuModelABI : Pass<"tfc-cpu-model-abi", "mlir::ModuleOp"> {
  let summary = "Gives a tfc module the model-library ABI of the CPU runtime";
  let description = [{
    Binds `tfc.weight` ops to the runtime's weight table, hoists every
    computation that depends on weights only (packing, transposes, merged
    projections) into `tfc_model_init`, whose results become derived
    constants in the same table, renames each entry `E` to a private
    implementation and adds the C entry point `tfc_entry_E(table, inputs,
    outputs)`, and records the model metadata (weights, constants, entries,
    dims) as the module attribute `tfc.abi_metadata`.
  }];
  let options = [
    Option<"cpu", "cpu", "std::string", /*default=*/"\"\"",
           "The target CPU recorded in the metadata">,
    Option<"features", "features", "std::string", /*default=*/"\"\"",
           "The target features recorded in the metadata">,
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect",
                           "mlir::func::FuncDialect",
                           "mlir::bufferization::BufferizationDialect",
                           "mlir::tensor::TensorDialect",
                           "mlir::memref::MemRefDialect"];
}

def LowerCpuEntryPoints : Pass<"tfc-cpu-entry-points", "mlir::ModuleOp"> {
  let summary = "Adds the C entry points and runtime globals of a model library";
  let description = [{
    Runs after bufferisation. For each private implementation `__tfc_impl_E`
    made by `tfc-cpu-model-abi`, adds `tfc_entry_E(table, inputs, outputs)`
    which reads the input descriptors, calls the implementation and writes
    the output descriptors (see include/tfc/Runtime/ModelABI.h). Also emits
    the `tfc_model_metadata` string, the `tfc_model_hooks` pointer and the
    allocation functions the memref lowering calls, which go through the
    hooks (or malloc/free when no runtime is attached).
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect",
                           "mlir::func::FuncDialect"];
}

def CheckAllocations : Pass<"tfc-check-allocations", "mlir::ModuleOp"> {
  let summary = "Returns from a model's functions when an allocation fails";
  let description = [{
    Runs on the LLVM dialect, last. After every call of the memref
    lowering's allocation functions, a null result for a non-zero size
    branches to a block that returns from the function (a poison result);
    in a parallel task that block first sets the task's failure flag
    (`__tfc_failure_flag`, from tfc-outline-parallel-loops), and each
    `__tfc_fail_if(c)` after a parallel_for becomes `if (c) return`. The
    runtime reports the failed allocation as TFC_ERR_OUT_OF_MEMORY.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def ApproximateMath : Pass<"tfc-approximate-math", "mlir::ModuleOp"> {
  let summary = "Replaces f32 transcendental math ops by inline polynomials";
  let description = [{
    exp, log, tanh, erf, sin, cos, rsqrt, ... on f32 scalars and vectors
    become the vectorisable polynomial approximations of the math dialect,
    so that kernels never call libm per lane. Other types keep their ops
    (lowered to LLVM intrinsics or libm later).
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::math::MathDialect",
                           "mlir::vector::VectorDialect"];
}

def LowerStridedCopies : Pass<"tfc-lower-strided-copies", "mlir::ModuleOp"> {
  let summary = "Turns memref.copy between non-contiguous buffers into loops";
  let description = [{
    The LLVM lowering turns a memref.copy whose operands are not both
    contiguous into a call of `memrefCopy` from MLIR's C runner utilities,
    which a model library must not depend on. This pass rewrites such copies
    into `linalg.copy`, which the loop lowering then turns into (parallel)
    loops. Contiguous copies stay memref.copy (a memcpy).
  }];
  let options = [
    Option<"all", "all", "bool", /*default=*/"false",
           "Rewrite contiguous copies too (device buffers: no host memcpy)">,
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def EarlyDealloc : Pass<"tfc-early-dealloc", "mlir::ModuleOp"> {
  let summary = "Moves each memref.dealloc right after the last use of its buffer";
  let description = [{
    The ownership-based deallocation pipeline frees buffers at the end of
    the block that owns them, so every intermediate of a straight-line model
    function would stay live until the function returns. This pass moves a
    `memref.dealloc` in a function's body up to just after the last op of
    that block that uses the buffer or one of its views (subview, reshape,
    cast, ...), nested uses counting at their ancestor in the block. The
    runtime's memory planner then reuses the freed memory.
  }];
}

def MapLoopsToGPU : Pass<"tfc-map-loops-to-gpu", "mlir::ModuleOp"> {
  let summary = "Runs the remaining host loops of a CUDA model as GPU kernels";
  let description = [{
    Runs after bufferisation and linalg-to-parallel-loops on a module whose
    kernel ops already became `gpu.launch`. Each outermost `scf.parallel`
    outside a launch (elementwise ops, data movement, reductions of linalg)
    becomes a `gpu.launch` of 256-thread blocks over its linearised
    iteration space: thread `id` delinearises into the loop's induction
    variables and runs the body (inner loops stay sequential per thread).
    Then every op that would touch device memory on the host
    (`memref.load`, `memref.store`, `memref.copy`, vector transfers, linalg
    ops) outside a launch is an error: buffers of a CUDA model live on the
    device.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect"];
}

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
    The host side of a CUDA model (see include/tfc/Runtime/ModelABI.h):
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

#endif // TFC_CONVERSION_PASSES_TD
