//===- KernelCommon.h - Memref helpers of every kernel emitter --*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Small memref-level pieces that the CPU (lib/Conversion/TfcToCPU) and GPU
// (lib/Conversion/TfcToGPU) kernel emitters share.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CONVERSION_KERNELCOMMON_H
#define TFC_CONVERSION_KERNELCOMMON_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::tfc {

/// An identity-layout `memref` of shape [..., K] viewed as [M, K] (rank 1
/// becomes [1, K]).
Value collapseToMatrix(OpBuilder &b, Location loc, Value memref);

/// The indices into the batch dims of a batched-matmul operand of type
/// `operand`, for the batch coordinates `batch` of the result of type
/// `result` (both [..., rows, cols]): aligned to the trailing batch dims; a
/// static 1 against a larger result dim (NumPy broadcasting) reads index 0.
SmallVector<Value> operandBatchIndices(OpBuilder &b, Location loc,
                                       MemRefType operand, MemRefType result,
                                       ValueRange batch);

} // namespace mlir::tfc

#endif // TFC_CONVERSION_KERNELCOMMON_H
