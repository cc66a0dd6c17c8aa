//===- Patterns.h - tfc to linalg patterns, by op family --------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Internal to the TfcToLinalg conversion: each op family lives in its own
// file and contributes its patterns through one of these functions; the
// helpers are shared by all of them.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_LIB_CONVERSION_TFCTOLINALG_PATTERNS_H
#define TFC_LIB_CONVERSION_TFCTOLINALG_PATTERNS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tfc::lowering {

/// Elementwise primitives, activations, `where` and `cast` (Elementwise.cpp).
void populateElementwisePatterns(RewritePatternSet &patterns);
/// Reductions, `argmax` and softmax over a non-last axis (Reductions.cpp).
void populateReductionPatterns(RewritePatternSet &patterns);
/// Transpose, reshape, slice, concat, split/merge heads (DataMovement.cpp).
void populateDataMovementPatterns(RewritePatternSet &patterns);
/// Embedding, arange, masks, positions, rope (Generators.cpp).
void populateGeneratorPatterns(RewritePatternSet &patterns);

/// The sizes of `value` (a ranked tensor) as index values (tensor.dim for the
/// dynamic ones) or constant attributes.
SmallVector<OpFoldResult> getDims(OpBuilder &b, Location loc, Value value);

/// An empty tensor of `type` whose dynamic sizes are taken from `sizes` (one
/// OpFoldResult per dimension, of which only the dynamic ones are used).
Value emptyLike(OpBuilder &b, Location loc, RankedTensorType type,
                ArrayRef<OpFoldResult> sizes);

/// The sizes of a result of NumPy-broadcast `operands`: static sizes from
/// `type`, each dynamic one from an operand whose aligned size is dynamic.
SmallVector<OpFoldResult> broadcastDims(OpBuilder &b, Location loc,
                                        RankedTensorType type,
                                        ValueRange operands);

/// The indexing map reading `operand` (rank r) inside a loop nest of rank
/// `resultRank` under NumPy broadcasting: aligned to the trailing dims, a
/// static size 1 against a larger result reads index 0.
AffineMap broadcastMap(MLIRContext *ctx, RankedTensorType operand,
                       RankedTensorType result);

/// lhs + rhs, folded when both are constants.
OpFoldResult addSizes(OpBuilder &b, Location loc, OpFoldResult lhs,
                      OpFoldResult rhs);

/// A float constant of `type` (f16/bf16/f32/f64).
Value floatConst(OpBuilder &b, Location loc, Type type, double value);

/// Converts a scalar between element types with tfc.cast semantics (floats
/// to integers truncate toward zero, to i1 means "non-zero").
Value castScalar(OpBuilder &b, Location loc, Value v, Type to);

} // namespace mlir::tfc::lowering

#endif // TFC_LIB_CONVERSION_TFCTOLINALG_PATTERNS_H
