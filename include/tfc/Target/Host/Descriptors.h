//===- Descriptors.h - Memref descriptors and runtime hooks -----*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The CPU model ABI passes build LLVM-dialect code next to not-yet-lowered
// memref code: memref descriptors made from raw pointers (bridged with
// unrealized_conversion_cast, which the LLVM lowering folds away) and calls
// through the runtime's hook table.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TARGET_HOST_DESCRIPTORS_H
#define TFC_TARGET_HOST_DESCRIPTORS_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tfc::cpu {

/// Symbol names of the model library ABI (include/tfc/Schemas/ModelABI.h).
inline constexpr llvm::StringLiteral kMetadataSymbol = "tfc_model_metadata";
inline constexpr llvm::StringLiteral kHooksSymbol = "tfc_model_hooks";
inline constexpr llvm::StringLiteral kInitSymbol = "tfc_model_init";
inline constexpr llvm::StringLiteral kEntryPrefix = "tfc_entry_";
inline constexpr llvm::StringLiteral kImplPrefix = "__tfc_impl_";
/// The module attribute holding the metadata JSON until it is emitted.
inline constexpr llvm::StringLiteral kMetadataAttr = "tfc.abi_metadata";
/// The allocation functions of the memref lowering (defined by
/// tfc-entry-points).
inline constexpr llvm::StringLiteral kAllocFunction =
    "_mlir_memref_to_llvm_alloc";
inline constexpr llvm::StringLiteral kAlignedAllocFunction =
    "_mlir_memref_to_llvm_aligned_alloc";
/// Markers that tfc-check-allocations replaces (they are never linked):
/// `__tfc_fail_if(i1)` returns from the enclosing function when its operand
/// is true; `__tfc_failure_flag(ptr)` names the i32 a parallel task sets
/// before it returns that way.
inline constexpr llvm::StringLiteral kFailIfMarker = "__tfc_fail_if";
inline constexpr llvm::StringLiteral kFailureFlagMarker = "__tfc_failure_flag";
/// The functions tfc-outline-blocks makes of a model's block calls (its
/// layers) are named with this prefix and carry this unit attribute: called
/// directly, they report a failed allocation to their caller through a flag
/// (tfc-check-allocations). The attribute, not the name, identifies them:
/// their parallel tasks are `<name>__parN`.
inline constexpr llvm::StringLiteral kBlockFunctionPrefix = "__tfc_block_";
inline constexpr llvm::StringLiteral kBlockFunctionAttr = "tfc.block_function";

/// Field indices of tfc_rt_hooks.
enum class Hook : int {
  Alloc = 0,
  Free = 1,
  ParallelFor = 2,
  Launch = 3,
  Release = 4
};

/// The LLVM struct of a rank-`rank` strided memref descriptor.
LLVM::LLVMStructType descriptorType(MLIRContext *ctx, int64_t rank);

/// A memref of `type` (identity layout, contiguous) over `data`, with the
/// dynamic sizes `dynamicSizes` (i64 values, one per dynamic dimension).
Value memrefFromPointer(OpBuilder &b, Location loc, Value data,
                        MemRefType type, ValueRange dynamicSizes);

/// Loads the i-th pointer of a pointer array.
Value loadPointer(OpBuilder &b, Location loc, Value array, int64_t i);

/// The `tfc_model_hooks` global of `module`, created on first use.
LLVM::GlobalOp getOrCreateHooksGlobal(OpBuilder &b, ModuleOp module);

/// The hook table pointer (loaded from the global) and whether it is null.
struct HookTable {
  Value table;
  Value isNull;
};
HookTable loadHookTable(OpBuilder &b, Location loc, ModuleOp module);
/// The function pointer of `hook` in a non-null table.
Value loadHookFunction(OpBuilder &b, Location loc, Value table, Hook hook);

/// The declaration of marker `name` (kFailIfMarker: i1, kFailureFlagMarker:
/// ptr), created on first use.
LLVM::LLVMFuncOp getOrCreateMarker(OpBuilder &b, ModuleOp module,
                                   llvm::StringRef name);

} // namespace mlir::tfc::cpu

#endif // TFC_TARGET_HOST_DESCRIPTORS_H
