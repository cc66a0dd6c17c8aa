//===- TfcKernel.h - The tfc_kernel dialect ---------------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Kernel ops in destination-passing style (TfcKernelBase.td): the ops of
// this dialect and those of tfc_cpu share the helpers below.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_DIALECT_TFCKERNEL_IR_TFCKERNEL_H
#define TFC_DIALECT_TFCKERNEL_IR_TFCKERNEL_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tfc/Dialect/Tfc/IR/TfcOps.h"

namespace mlir::tfc::kernel {

/// The trait of every kernel op (TfcKernelBase.td), whatever its dialect.
template <typename ConcreteType>
class KernelOp : public OpTrait::TraitBase<ConcreteType, KernelOp> {};

/// The memory effects of a kernel op: on memrefs, every input is read and
/// the destination written; on tensors, none.
void getKernelEffects(
    Operation *op,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects);

/// Kernels on tensors are speculatable (pure), on memrefs not.
Speculation::Speculatability getKernelSpeculatability(Operation *op);

/// Checks what every kernel op needs: all shaped operands are tensors or
/// all memrefs (the destination-style interface checks the result).
LogicalResult verifyKernelOperands(Operation *op);

/// Whether `op` is a kernel op (of any dialect) on buffers.
bool isBufferKernel(Operation *op);

/// Replaces every kernel op under `root` by `lower(builder at the op, op)`
/// (a target's lower-kernels pass); a kernel op still on tensors is an
/// error, reported at the op.
LogicalResult
lowerBufferKernels(Operation *root,
                   function_ref<LogicalResult(OpBuilder &, Operation *)> lower);

/// Where a dynamic size of a destination comes from: dimension `second` of
/// `first`.
using SizeSource = std::pair<Value, int64_t>;

/// A `tensor.empty` of `type` for a kernel's destination; each dynamic
/// dimension d is read (tensor.dim) from `sizeOf(d)`.
Value createDestination(OpBuilder &b, Location loc, RankedTensorType type,
                        function_ref<SizeSource(int64_t)> sizeOf);

} // namespace mlir::tfc::kernel

#include "tfc/Dialect/TfcKernel/IR/TfcKernelDialect.h.inc"

#define GET_OP_CLASSES
#include "tfc/Dialect/TfcKernel/IR/TfcKernelOps.h.inc"

#endif // TFC_DIALECT_TFCKERNEL_IR_TFCKERNEL_H
