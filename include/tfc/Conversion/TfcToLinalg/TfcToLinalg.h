//===- TfcToLinalg.h - Lowering tfc to linalg/tensor ------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CONVERSION_TFCTOLINALG_TFCTOLINALG_H
#define TFC_CONVERSION_TFCTOLINALG_TFCTOLINALG_H

#include "mlir/IR/Builders.h"
#include "tfc/Dialect/Tfc/IR/TfcOps.h"

namespace mlir::tfc {

/// Math shared by every backend: each takes and returns a float scalar or a
/// vector of floats, built from arith and math ops.
Value buildGelu(OpBuilder &b, Location loc, Value x,
                GeluApproximation approximation);
Value buildSilu(OpBuilder &b, Location loc, Value x);
/// `x` after `activation` (None returns x).
Value buildActivation(OpBuilder &b, Location loc, Value x,
                      Activation activation);
/// Ids read straight from a function argument must be below the table's
/// row count: recorded as the argument attribute `tfc.id_bound`, which the
/// runtime checks before running the model (every embedding lowering calls
/// this).
void recordIdBound(Value ids, int64_t rows);
/// A float scalar, or a splat vector, of `type` holding `value`.
Value buildFloatConstant(OpBuilder &b, Location loc, Type type, double value);

} // namespace mlir::tfc

#endif // TFC_CONVERSION_TFCTOLINALG_TFCTOLINALG_H
