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
    computed in f32. The CPU's own kernel ops (`tfc_cpu`) are errors. With
    `fp32-matmul=tf32` the f32 products (linear, matmul) run on the tensor
    cores with their operands rounded to tf32, as PyTorch's allow_tf32.
  }];
  let options = [
    Option<"fp32Matmul", "fp32-matmul", "std::string", /*default=*/"\"ieee\"",
           "How f32 products are computed: ieee (f32 FMAs) or tf32 (tensor "
           "cores, operands rounded to tf32)">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::NVVM::NVVMDialect",
                           "mlir::nvgpu::NVGPUDialect",
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
    attribute, else avx512. `l1d-bytes` and `l2-bytes` likewise become
    `tfc.cpu_l1d_bytes` and `tfc.cpu_l2_bytes`, from which the GEMM takes
    the depth of its k blocks (KernelConfig.h: kcForL1d, deepKcFor).
    `gemm-tuning` (tfc-tune's measured blocking for the host) becomes
    `tfc.cpu_gemm_tuning`, whose fields replace the ISA's configuration's;
    a tuning the emitter cannot build (a tile that needs more registers
    than the ISA has, say) is an error.
  }];
  let options = [
    Option<"isa", "isa", "std::string", /*default=*/"\"\"",
           "The kernels' instruction set: avx512 or avx2 (default: the "
           "module's tfc.cpu_isa, else avx512)">,
    Option<"l1dBytes", "l1d-bytes", "int64_t", /*default=*/"0",
           "The target's L1 data cache per core in bytes, recorded as the "
           "module's tfc.cpu_l1d_bytes for the GEMM's k blocks (default: "
           "the module's attribute, else each ISA's kc for 48 KiB)">,
    Option<"l2Bytes", "l2-bytes", "int64_t", /*default=*/"0",
           "The target's L2 cache per core in bytes, recorded as the "
           "module's tfc.cpu_l2_bytes, which deepens the k blocks of the "
           "ISAs that stream them from L2 (default: the module's attribute, "
           "else none)">,
    Option<"gemmTuning", "gemm-tuning", "std::string", /*default=*/"\"\"",
           "A measured tuning of the GEMM's blocking over the ISA's "
           "(mr=4,nr=24,...: include/tfc/Tuning/GemmTuning.h), checked and "
           "recorded as the module's tfc.cpu_gemm_tuning (default: the "
           "module's attribute, else none)">,
  ];
  let dependentDialects = ["mlir::tfc::cpu::TfcCpuDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
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

#endif // TFC_CONVERSION_PASSES_TD
