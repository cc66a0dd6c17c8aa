//===- FusionUtils.h - Matchers and remarks for fusion passes ---*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Private to lib/Dialect/Tfc/Transforms.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_LIB_DIALECT_TFC_TRANSFORMS_FUSIONUTILS_H
#define TFC_LIB_DIALECT_TFC_TRANSFORMS_FUSIONUTILS_H

#include "tfc/Dialect/Tfc/IR/TfcOps.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/Twine.h"

#include <optional>
#include <string>

namespace mlir::tfc::fusion {

/// Reports on fusion candidates when remarks are enabled.
class Reporter {
public:
  explicit Reporter(bool enabled) : enabled(enabled) {}

  void fused(Operation *anchor, const llvm::Twine &what) const {
    if (enabled)
      anchor->emitRemark() << "fused into " << what;
  }
  void notFused(Operation *anchor, const llvm::Twine &why) const {
    if (enabled)
      anchor->emitRemark() << "not fused: " << why;
  }

private:
  bool enabled;
};

/// `loc` as `file:line:col` (or MLIR's own rendering when it is not a file
/// location), for remarks that point at another op.
std::string describeLoc(Location loc);

/// `type` as MLIR prints it, for remarks.
std::string typeString(Type type);

/// The value of a scalar-like floating-point splat constant (any shape, all
/// elements equal), if `value` is one.
std::optional<double> getSplatValue(Value value);

/// A reduction over one axis whose result keeps that axis as size 1: either
/// `op(input) {keepdim}` or `reshape(op(input))` to the keepdim shape.
struct KeepdimReduction {
  Value input;
  int64_t axis = 0;
  /// The reduction and, for the reshape form, the reshape.
  SmallVector<Operation *, 2> ops;
};

template <typename ReductionOp>
std::optional<KeepdimReduction> matchKeepdimReduction(Value value);

/// The first user of `value` that is not in `allowed`, if any.
Operation *findOtherUser(Value value, ArrayRef<Operation *> allowed);

/// If `value` has a user outside `allowed`, the reason a fusion cannot use it:
/// "<subject> another use at <file:line:col>", e.g. with subject "the sum
/// has".
std::optional<std::string> anotherUse(Value value,
                                      ArrayRef<Operation *> allowed,
                                      const llvm::Twine &subject);

/// Erases `ops` (in order) where they have become dead.
void eraseIfDead(RewriterBase &rewriter, ArrayRef<Operation *> ops);

} // namespace mlir::tfc::fusion

#endif // TFC_LIB_DIALECT_TFC_TRANSFORMS_FUSIONUTILS_H
