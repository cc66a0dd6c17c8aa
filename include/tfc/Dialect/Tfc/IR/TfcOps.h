//===- TfcOps.h - Operations of the tfc dialect -----------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_DIALECT_TFC_IR_TFCOPS_H
#define TFC_DIALECT_TFC_IR_TFCOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tfc/Dialect/Tfc/IR/TfcDialect.h"

#include "tfc/Dialect/Tfc/IR/TfcEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tfc/Dialect/Tfc/IR/TfcAttrs.h.inc"

namespace mlir::tfc {

/// The module attribute naming a module's target (`#tfc.target<cpu|cuda>`).
constexpr llvm::StringLiteral kTargetAttrName = "tfc.target";

/// The target of `op`'s module: its `tfc.target`, CPU when it has none.
TargetKind getTargetKind(Operation *op);

/// Whether `op`'s module targets CUDA.
inline bool isCudaTarget(Operation *op) {
  return getTargetKind(op) == TargetKind::Cuda;
}

/// Returns the NumPy broadcast of two shapes, where `ShapedType::kDynamic`
/// marks a dynamic size: a dynamic size against 1 stays dynamic, against a
/// static size N != 1 becomes N. Fails if two static sizes differ and neither
/// is 1.
FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> lhs,
                                                ArrayRef<int64_t> rhs);

/// True if both ranges hold ranked tensors pairwise of the same element type
/// and rank whose sizes agree wherever both are static. This is how tfc ops
/// accept a declared result type that is more (or less) refined than the one
/// inferred from their operands.
bool areCompatibleTensorTypes(TypeRange lhs, TypeRange rhs);

/// A block-quantised weight format (GGUF's): blocks of `blockElements`
/// values along the last dim, `blockBytes` bytes each: the compiler's view
/// of a quantised row of the one dtype table (tfc/Formats/DType.h), which
/// the runtime reads too.
struct QuantFormat {
  StringRef name;
  int64_t blockElements, blockBytes;
};
/// q8_0, q4_0 or q4_1 (the table's quantised rows); null for any other name.
const QuantFormat *lookupQuantFormat(StringRef name);

/// The element types a model's values have, by the dtype table's names
/// (tfc/Formats/DType.h): "f32", "f16", "bf16", "f64", "i64", "i32", "bool".
/// The MLIR type of such a name, or null for any other name (the block
/// formats included: they are storage, not element types).
Type elementTypeOf(MLIRContext *context, StringRef name);
/// The name of a model element type, or "" if it has none.
StringRef elementTypeName(Type type);
/// Every name elementTypeOf knows, in the table's order.
SmallVector<StringRef> elementTypeNames();

/// Reports a shape error; a null function reports nothing.
using EmitErrorFn = llvm::function_ref<InFlightDiagnostic()>;

/// Result-type inference of the ops whose result follows from their operands.
/// The verifiers call these with an error reporter, the builders without one.
/// Each returns the inferred type, or failure when the operands do not fit.
namespace infer {
/// NumPy broadcast of elementwise operands; the element type is that of the
/// last operand (for `tfc.where`, the condition comes first).
FailureOr<RankedTensorType> broadcast(ArrayRef<Type> operands,
                                      EmitErrorFn emitError = nullptr);
FailureOr<RankedTensorType> embedding(Type table, Type ids,
                                      EmitErrorFn emitError = nullptr);
/// `bias` may be null.
FailureOr<RankedTensorType> linear(Type input, Type weight, Type bias,
                                   EmitErrorFn emitError = nullptr);
FailureOr<RankedTensorType> matmul(Type lhs, Type rhs, bool transposeLhs,
                                   bool transposeRhs,
                                   EmitErrorFn emitError = nullptr);
/// `mask` may be null.
FailureOr<RankedTensorType> attention(Type query, Type key, Type value,
                                      Type mask,
                                      EmitErrorFn emitError = nullptr);
/// A null `elementType` keeps the input's.
FailureOr<RankedTensorType> reduction(Type input, int64_t axis, bool keepdim,
                                      Type elementType = {},
                                      EmitErrorFn emitError = nullptr);
FailureOr<RankedTensorType> transpose(Type input,
                                      ArrayRef<int64_t> permutation,
                                      EmitErrorFn emitError = nullptr);
FailureOr<RankedTensorType> splitHeads(Type input, int64_t heads,
                                       EmitErrorFn emitError = nullptr);
FailureOr<RankedTensorType> slice(Type input, int64_t axis, int64_t start,
                                  int64_t size, EmitErrorFn emitError = {});
FailureOr<RankedTensorType> mergeHeads(Type input,
                                       EmitErrorFn emitError = nullptr);

/// What a builder without an explicit result type uses: the inferred type, or
/// when inference failed a rank-0 tensor of `like`'s element type, so that the
/// op is still created and the verifier reports the precise reason.
Type resultOrPlaceholder(FailureOr<RankedTensorType> inferred, Value like);
} // namespace infer

/// Assembly of the broadcasting elementwise ops:
///   `op %a, %b attr-dict : T`            all operands and the result are T
///   `op %a, %b attr-dict : (A, B) -> R`  otherwise
ParseResult parseBroadcastOp(OpAsmParser &parser, OperationState &result,
                             unsigned numOperands);
void printBroadcastOp(OpAsmPrinter &printer, Operation *op);

/// What `tfc.block_begin` and `tfc.block_end` write: nothing but their own
/// order (TfcOps.td).
struct BlockBoundaryResource
    : public SideEffects::Resource::Base<BlockBoundaryResource> {
  llvm::StringRef getName() final { return "tfc.block_boundary"; }
};

} // namespace mlir::tfc

#define GET_OP_CLASSES
#include "tfc/Dialect/Tfc/IR/TfcOps.h.inc"

#endif // TFC_DIALECT_TFC_IR_TFCOPS_H
