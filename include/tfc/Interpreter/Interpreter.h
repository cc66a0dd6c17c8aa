//===- Interpreter.h - Reference interpreter for the tfc dialect -*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// A slow, obviously-correct evaluator of functions made of tfc ops (plus the
// arith/tensor glue the frontend emits). It is the oracle of the test suite:
// fusion passes are checked by evaluating a function before and after them,
// and compiled code is checked against it. It favours clarity over speed:
// every op is a plain loop nest over row-major data, accumulating in double
// and rounding each result to its element type.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_INTERPRETER_INTERPRETER_H
#define TFC_INTERPRETER_INTERPRETER_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace mlir {
class ModuleOp;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace mlir::tfc::interp {

/// A dense row-major tensor. Every element type is held as double: floats
/// are rounded to their type after each op, integers and booleans are exact
/// (|value| < 2^53).
struct Tensor {
  Type elementType;
  SmallVector<int64_t> shape;
  std::vector<double> data;

  Tensor() = default;
  Tensor(Type elementType, ArrayRef<int64_t> shape);

  int64_t numElements() const;
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
};

/// Supplies the contents of `tfc.weight "name" : type`.
using WeightProvider =
    std::function<FailureOr<Tensor>(StringRef name, RankedTensorType type)>;

/// Deterministic pseudo-random weights: each name seeds its own generator, so
/// a weight has the same value wherever (and in whichever IR) it appears.
/// Matrices are uniform in [-1/sqrt(fan-in), 1/sqrt(fan-in)]; vectors named
/// `*bias`/`*beta`/`*.b` in [-0.1, 0.1]; other vectors (normalisation scales)
/// in [0.9, 1.1].
WeightProvider randomWeights(uint64_t seed);

/// Evaluates `func` on `args`. Errors (an unsupported op, an id out of range,
/// an argument of the wrong shape) are emitted on the op at fault and give
/// failure.
FailureOr<SmallVector<Tensor>> run(func::FuncOp func, ArrayRef<Tensor> args,
                                   const WeightProvider &weights);

/// Concrete sizes for the dynamic dims of `func`'s arguments: a dim named in
/// the `tfc.dims` argument attribute takes `named[name]` if given, otherwise
/// a distinct small default per name (so `seq` and `src_seq` differ);
/// unnamed dynamic dims take `unnamed`.
struct ShapeChoice {
  llvm::StringMap<int64_t> named;
  int64_t unnamed = 3;
};

/// Deterministic random inputs for `func` with shapes from `choice`. Float
/// arguments are uniform in [-1, 1]; integer arguments used as embedding ids
/// are valid ids; other integer and boolean arguments are 1/0 masks whose
/// first position along the last axis is always 1 (no fully masked rows).
FailureOr<SmallVector<Tensor>> randomInputs(func::FuncOp func,
                                            const ShapeChoice &choice,
                                            uint64_t seed);

/// The largest |a - b| over two tensors of the same shape: NaN if either has
/// a NaN anywhere (two NaNs do not agree, so no tolerance accepts it);
/// infinities must match exactly; +inf when the shapes differ.
double maxAbsDifference(const Tensor &a, const Tensor &b);

/// The largest |x| of the finite elements of a tensor (its scale, for
/// relative tolerances).
double maxAbs(const Tensor &t);

/// How a result agrees with its reference, element by element (the criterion
/// of the end-to-end tests, tfc-interpret --elementwise):
///
///   |got_i - want_i| <= tolerance * max(|want_i|, rms(want))
///
/// for every element i, where rms(want) = sqrt(mean(want_i^2)) over the whole
/// tensor: relative to the element itself, floored at the tensor's typical
/// magnitude (an element near zero carries the rounding error of the O(rms)
/// terms that cancelled in it). Fails regardless of the tolerance when the
/// shapes differ, any element of either side is not finite (NaN or inf), or
/// either side is constant (all elements equal, with more than one element).
struct ElementwiseAgreement {
  /// max_i |got_i - want_i| / max(|want_i|, floor); NaN if `problem` is set.
  double worst = 0.0;
  /// rms(want).
  double floor = 0.0;
  /// max_i |got_i - want_i|.
  double maxAbsError = 0.0;
  /// The row-major index of the worst element (-1 if none).
  int64_t worstIndex = -1;
  /// Why the tensors disagree whatever the tolerance; empty if they may agree.
  std::string problem;

  bool within(double tolerance) const {
    return problem.empty() && worst <= tolerance;
  }
};
ElementwiseAgreement compareElementwise(const Tensor &want, const Tensor &got);

} // namespace mlir::tfc::interp

#endif // TFC_INTERPRETER_INTERPRETER_H
