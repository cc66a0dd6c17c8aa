//===- FuseSoftmax.cpp - Recognise softmax written with primitives -------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Every `tfc.exp` whose result is summed over an axis is a candidate; the
// remark goes on that exp.
//
//===----------------------------------------------------------------------===//

#include "FusionUtils.h"

#include "tfc/Dialect/Tfc/IR/TfcDialect.h"
#include "tfc/Dialect/Tfc/IR/TfcOps.h"
#include "tfc/Dialect/Tfc/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCFUSESOFTMAX
#include "tfc/Dialect/Tfc/Transforms/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::fusion;

namespace {

/// A decomposed softmax found around one exp.
struct SoftmaxMatch {
  Value input;
  int64_t axis;
  /// The op whose result the softmax replaces.
  Operation *root;
  /// Ops of the decomposition, erased when dead after the rewrite (uses
  /// first).
  SmallVector<Operation *> ops;
};

/// The sum of `exp` over one axis, in keepdim form, if `exp` has one.
static std::optional<KeepdimReduction> findSum(ExpOp exp) {
  for (Operation *user : exp->getUsers()) {
    auto sum = dyn_cast<ReduceSumOp>(user);
    if (!sum)
      continue;
    if (sum.getKeepdim())
      return matchKeepdimReduction<ReduceSumOp>(sum);
    if (sum->hasOneUse())
      if (auto r = matchKeepdimReduction<ReduceSumOp>(
              sum->getUses().begin()->getOwner()->getResult(0)))
        return r;
  }
  return std::nullopt;
}

/// Matches the softmax around `exp`. Returns std::nullopt when `exp` is not a
/// candidate at all; sets `why` when it is one that cannot fuse.
static std::optional<SoftmaxMatch> matchSoftmax(ExpOp exp, std::string &why) {
  std::optional<KeepdimReduction> sum = findSum(exp);
  if (!sum)
    return std::nullopt;
  Value sumValue = sum->ops.front()->getResult(0);

  // The normaliser: e / s, e * (1 / s), e * s^-1.
  Operation *root = nullptr, *reciprocal = nullptr;
  for (Operation *user : sumValue.getUsers()) {
    if (auto div = dyn_cast<DivOp>(user)) {
      if (div.getLhs() == exp && div.getRhs() == sumValue) {
        root = div;
        break;
      }
      if (getSplatValue(div.getLhs()) == 1.0 && div.getRhs() == sumValue)
        reciprocal = div;
    } else if (auto pow = dyn_cast<PowOp>(user)) {
      if (pow.getLhs() == sumValue && getSplatValue(pow.getRhs()) == -1.0)
        reciprocal = pow;
    }
    if (reciprocal) {
      for (Operation *recipUser : reciprocal->getUsers()) {
        auto mul = dyn_cast<MulOp>(recipUser);
        if (mul && ((mul.getLhs() == exp &&
                     mul.getRhs() == reciprocal->getResult(0)) ||
                    (mul.getRhs() == exp &&
                     mul.getLhs() == reciprocal->getResult(0)))) {
          root = mul;
          break;
        }
      }
      if (root)
        break;
    }
  }
  if (!root) {
    why = "the sum of the exponentials does not divide them";
    return std::nullopt;
  }

  // No intermediate may be needed elsewhere.
  Operation *sumOp = sum->ops.back();
  std::optional<std::string> other =
      anotherUse(exp, {sumOp, root}, "the exponentials have");
  if (!other)
    other = anotherUse(sumValue, {reciprocal ? reciprocal : root},
                       "the sum has");
  if (!other && reciprocal)
    other = anotherUse(reciprocal->getResult(0), {root},
                       "the reciprocal of the sum has");
  if (other) {
    why = *other;
    return std::nullopt;
  }

  SoftmaxMatch match;
  match.axis = sum->axis;
  match.root = root;
  match.input = exp.getInput();
  match.ops.push_back(root);
  if (reciprocal)
    match.ops.push_back(reciprocal);
  match.ops.append(sum->ops.begin(), sum->ops.end());
  match.ops.push_back(exp);

  // Drop the stabilising max: softmax(x - max(x)) = softmax(x), and the fused
  // op subtracts the maximum itself.
  if (auto sub = exp.getInput().getDefiningOp<SubOp>()) {
    auto max = matchKeepdimReduction<ReduceMaxOp>(sub.getRhs());
    if (max && max->input == sub.getLhs() && max->axis == match.axis) {
      match.input = sub.getLhs();
      match.ops.push_back(sub);
      match.ops.append(max->ops.begin(), max->ops.end());
    }
  }

  Type resultType = root->getResult(0).getType();
  if (match.input.getType() != resultType) {
    why = "the division broadcasts: the input type " +
          typeString(match.input.getType()) + " differs from the result "
          "type " + typeString(resultType);
    return std::nullopt;
  }
  return match;
}

struct FuseSoftmaxPass
    : public tfc::impl::TfcFuseSoftmaxBase<FuseSoftmaxPass> {
  using TfcFuseSoftmaxBase::TfcFuseSoftmaxBase;

  void runOnOperation() override {
    Reporter reporter(remarks);
    SmallVector<ExpOp> candidates;
    getOperation()->walk([&](ExpOp exp) { candidates.push_back(exp); });

    IRRewriter rewriter(&getContext());
    for (ExpOp exp : candidates) {
      std::string why;
      std::optional<SoftmaxMatch> match = matchSoftmax(exp, why);
      if (!match) {
        if (!why.empty())
          reporter.notFused(exp, why);
        continue;
      }
      reporter.fused(exp, "tfc.softmax over axis " +
                              llvm::Twine(match->axis));
      rewriter.setInsertionPoint(match->root);
      Location loc =
          rewriter.getFusedLoc({exp.getLoc(), match->root->getLoc()});
      auto softmax = SoftmaxOp::create(rewriter, loc, match->input.getType(),
                                       match->input,
                                       static_cast<uint64_t>(match->axis));
      rewriter.replaceOp(match->root, softmax);
      match->ops.erase(match->ops.begin()); // the root is gone
      eraseIfDead(rewriter, match->ops);
    }
  }
};

} // namespace
