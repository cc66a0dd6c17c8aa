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
    include/tfc/Schemas/ModelABI.h): the loop body is outlined into a function
    `fn(ctx, begin, end)` that runs the linearised iterations [begin, end),
    and the values the body uses from outside are passed through a context
    struct on the stack. When no runtime is attached the loop runs serially.
    Tasks that come out the same (each layer's weight packing in the
    model's init, a loop repeated in several entries) are kept once.
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
    the output descriptors (see include/tfc/Schemas/ModelABI.h). Also emits
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
    runtime's memory planner then reuses the freed memory. A layer function
    (`tfc.block_function`) whose every call frees a buffer operand right
    after the call (the hidden state the layer reads) frees that argument
    itself after its last use inside, and the callers no longer do.
  }];
}

def HoistBlockInvariants
    : Pass<"tfc-hoist-block-invariants", "mlir::ModuleOp"> {
  let summary = "Moves what depends on weights only out of block calls";
  let description = [{
    Runs on tensors, before `tfc-model-abi`. A side-effect-free op between a
    `tfc.block_begin` and its `tfc.block_end` that reads only weights,
    constants and what is computed from them alone (a pack, a merged
    projection's concat, a transpose of a weight) moves before the outermost
    pair: `tfc-model-abi` moves it into `tfc_model_init` and leaves a read of
    its slot there, outside every call, so that the calls of a block differ
    in the values they read, not in their ops (`tfc-outline-blocks`). Each
    use of a `tensor.empty` gets its own copy right before it (CSE had made
    one of all equal destinations), so that bufferisation allocates a
    destination where it is written, in every call alike.
  }];
}

def ExpandTableSlots : Pass<"tfc-expand-table-slots", "mlir::ModuleOp"> {
  let summary = "Builds the memref descriptor of each tfc.table_slot";
  let description = [{
    First in the host's LLVM lowering: each `tfc.table_slot %table[i]` (a
    weight or derived constant read by `tfc-model-abi`) becomes a load of
    the table's pointer i and a descriptor of the op's static shape over it
    (row-major, offset 0), which the memref lowering then consumes.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def BlockOutParams : Pass<"tfc-block-out-params", "mlir::ModuleOp"> {
  let summary = "Makes the results of a model's layer functions the caller's buffers";
  let description = [{
    Runs right after bufferisation on the functions `tfc-outline-blocks`
    made (`tfc.block_function`), before the deallocation pipeline. A result
    that is one of the function's arguments (a cache written in place) is
    dropped and each call reads its operand instead; a result the function
    allocates with sizes that are arguments becomes an out-parameter the
    caller allocates before the call, with the call's operands as sizes and
    the alignment it had. Every buffer of
    the caller is then its own allocation, freed statically after its last
    use; nothing is cloned or kept to the end of the entry.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect",
                           "mlir::func::FuncDialect"];
}

def OutlineBlocks : Pass<"tfc-outline-blocks", "mlir::ModuleOp"> {
  let summary = "Compiles the block calls that compute the same thing once";
  let description = [{
    Runs on tensors, first in the lowering (after
    `tfc-hoist-block-invariants`, before `tfc-model-abi` and
    bufferisation; it also works on buffers). Each pair of
    `tfc.block_begin`/`tfc.block_end` markers (one call of a
    description's block, inlined by the frontend) is a candidate: the ops
    between them, the values they read from before (arguments; constants are
    defined again inside) and those the rest reads (results). Calls whose
    ops are the same up to those values (the layers of a model, which differ
    in their weights) become calls of one private function, made from the
    first; outer calls are tried before inner ones, and a call that is the
    only one of its kind stays inline (its inner calls are tried). Each
    function is `noinline`, so that bufferisation, the lowering, LLVM's
    optimisation and code generation see one layer instead of all of them:
    compile time no longer grows with depth (`tfc-block-out-params` then
    keeps the deallocation of the callers static). Every marker is erased. With `inline-only`
    nothing is outlined (the markers are only erased).
  }];
  let options = [
    Option<"inlineOnly", "inline-only", "bool", /*default=*/"false",
           "Only erase the markers">,
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect",
                           "mlir::func::FuncDialect"];
}

#endif // TFC_TARGET_HOST_PASSES_TD
