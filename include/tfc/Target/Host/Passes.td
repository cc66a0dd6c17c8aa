//===- Passes.td - Passes of the host layer --------- -*- tablegen -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TARGET_HOST_PASSES_TD
#define TFC_TARGET_HOST_PASSES_TD

include "mlir/Pass/PassBase.td"

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

def LowerModelABI : Pass<"tfc-model-abi", "mlir::ModuleOp"> {
  let summary = "Gives a tfc module the model-library ABI of the runtime";
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

def LowerEntryPoints : Pass<"tfc-entry-points", "mlir::ModuleOp"> {
  let summary = "Adds the C entry points and runtime globals of a model library";
  let description = [{
    Runs after bufferisation. For each private implementation `__tfc_impl_E`
    made by `tfc-model-abi`, adds `tfc_entry_E(table, inputs, outputs)`
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

#endif // TFC_TARGET_HOST_PASSES_TD
