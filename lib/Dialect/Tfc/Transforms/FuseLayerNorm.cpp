//===- FuseLayerNorm.cpp - Recognise LayerNorm and RMSNorm ----------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Every `tfc.rsqrt` and `tfc.sqrt` is a candidate: normalisation divides by
// the root of a mean square plus epsilon. The remark goes on that op.
//
//===----------------------------------------------------------------------===//

#include "FusionUtils.h"

#include "tfc/Dialect/Tfc/IR/TfcDialect.h"
#include "tfc/Dialect/Tfc/IR/TfcOps.h"
#include "tfc/Dialect/Tfc/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Format.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCFUSELAYERNORM
#include "tfc/Dialect/Tfc/Transforms/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::fusion;

namespace {

/// If `value` is `v * v` or `v ^ 2`, returns v and the op.
static std::optional<std::pair<Value, Operation *>> matchSquare(Value value) {
  if (auto mul = value.getDefiningOp<MulOp>())
    if (mul.getLhs() == mul.getRhs())
      return std::make_pair(mul.getLhs(), mul.getOperation());
  if (auto pow = value.getDefiningOp<PowOp>())
    if (getSplatValue(pow.getRhs()) == 2.0)
      return std::make_pair(pow.getLhs(), pow.getOperation());
  return std::nullopt;
}

/// If `value` is `x - mean(x)` over `axis`, returns x and the ops.
static std::optional<std::pair<Value, SmallVector<Operation *>>>
matchCentred(Value value, int64_t axis) {
  auto sub = value.getDefiningOp<SubOp>();
  if (!sub)
    return std::nullopt;
  auto mean = matchKeepdimReduction<ReduceMeanOp>(sub.getRhs());
  if (!mean || mean->input != sub.getLhs() || mean->axis != axis)
    return std::nullopt;
  SmallVector<Operation *> ops{sub};
  ops.append(mean->ops.begin(), mean->ops.end());
  return std::make_pair(sub.getLhs(), ops);
}

struct NormMatch {
  bool isLayerNorm = false;
  Value input;
  Value scale, bias;
  double epsilon = 0.0;
  /// The op whose result the fused op replaces.
  Operation *root = nullptr;
  /// The absorbed `* gamma` and `+ beta`, in that order.
  SmallVector<Operation *, 2> affine;
  /// The normalisation chain, uses before definitions; front() is the op
  /// that normalises (before gamma and beta).
  SmallVector<Operation *> ops;
};

/// Matches the normalisation around `root` (an rsqrt or sqrt). Returns
/// std::nullopt and sets `why` when it does not fuse.
static std::optional<NormMatch> matchNorm(Operation *rootOp, std::string &why) {
  NormMatch m;
  Value ve = rootOp->getOperand(0);
  bool isRsqrt = isa<RsqrtOp>(rootOp);

  // var + eps, eps a constant scalar.
  auto add = ve.getDefiningOp<AddOp>();
  if (!add) {
    why = "the root is not taken of 'variance + epsilon'";
    return std::nullopt;
  }
  Value var = add.getLhs();
  std::optional<double> eps = getSplatValue(add.getRhs());
  if (!eps) {
    var = add.getRhs();
    eps = getSplatValue(add.getLhs());
  }
  if (!eps) {
    why = "epsilon is not a constant";
    return std::nullopt;
  }
  if (!(*eps >= 0.0)) {
    why = "epsilon is negative";
    return std::nullopt;
  }
  m.epsilon = *eps;

  // The variance: mean(d²) with d = x - mean(x); mean(x²) - mean(x)²; or, for
  // RMSNorm, mean(x²).
  SmallVector<Operation *> varOps;
  Value x;
  std::optional<Value> centred; // d, for the first LayerNorm form
  int64_t axis = -1;
  if (auto meanSq = matchKeepdimReduction<ReduceMeanOp>(var)) {
    auto sq = matchSquare(meanSq->input);
    if (!sq) {
      why = "the variance is not a mean of squares";
      return std::nullopt;
    }
    axis = meanSq->axis;
    varOps.append(meanSq->ops.begin(), meanSq->ops.end());
    varOps.push_back(sq->second);
    if (auto c = matchCentred(sq->first, axis)) {
      m.isLayerNorm = true;
      x = c->first;
      centred = sq->first;
      varOps.append(c->second.begin(), c->second.end());
    } else {
      x = sq->first; // RMSNorm
    }
  } else if (auto sub = var.getDefiningOp<SubOp>()) {
    // E[x²] - E[x]².
    auto meanSq = matchKeepdimReduction<ReduceMeanOp>(sub.getLhs());
    auto sqMean = matchSquare(sub.getRhs());
    std::optional<KeepdimReduction> mean;
    if (sqMean)
      mean = matchKeepdimReduction<ReduceMeanOp>(sqMean->first);
    std::optional<std::pair<Value, Operation *>> sq;
    if (meanSq)
      sq = matchSquare(meanSq->input);
    if (!meanSq || !sq || !mean || sq->first != mean->input ||
        meanSq->axis != mean->axis) {
      why = "the variance is neither mean((x - mean(x))^2) nor "
            "mean(x^2) - mean(x)^2";
      return std::nullopt;
    }
    m.isLayerNorm = true;
    x = sq->first;
    axis = mean->axis;
    varOps.push_back(sub);
    varOps.append(meanSq->ops.begin(), meanSq->ops.end());
    varOps.push_back(sq->second);
    varOps.push_back(sqMean->second);
    varOps.append(mean->ops.begin(), mean->ops.end());
  } else {
    why = "the variance is not a mean over an axis";
    return std::nullopt;
  }

  auto xType = cast<RankedTensorType>(x.getType());
  if (axis != xType.getRank() - 1) {
    why = "the reduction axis " + std::to_string(axis) +
          " is not the last axis " + std::to_string(xType.getRank() - 1);
    return std::nullopt;
  }

  // The normalisation: d * rsqrt(.) or d / sqrt(.), with d = x - mean(x)
  // (or x itself for RMSNorm).
  Operation *norm = nullptr;
  Value numerator;
  for (Operation *user : rootOp->getUsers()) {
    if (isRsqrt) {
      if (auto mul = dyn_cast<MulOp>(user)) {
        numerator = mul.getLhs() == rootOp->getResult(0) ? mul.getRhs()
                                                         : mul.getLhs();
        norm = mul;
      }
    } else if (auto div = dyn_cast<DivOp>(user)) {
      if (div.getRhs() == rootOp->getResult(0)) {
        numerator = div.getLhs();
        norm = div;
      }
    }
    if (norm)
      break;
  }
  if (!norm) {
    why = isRsqrt ? "nothing is multiplied by the reciprocal root"
                  : "nothing is divided by the root";
    return std::nullopt;
  }
  SmallVector<Operation *> numeratorOps;
  if (m.isLayerNorm) {
    if (centred && numerator == *centred) {
      // d is shared with the variance: already in varOps.
    } else if (auto c = matchCentred(numerator, axis);
               c && c->first == x) {
      numeratorOps = c->second;
    } else {
      why = "the normalised value is not x - mean(x)";
      return std::nullopt;
    }
  } else if (numerator != x) {
    why = "the normalised value is not the input of the mean square";
    return std::nullopt;
  }

  // Intermediates may only be used inside the pattern.
  SmallVector<Operation *> inner{norm, rootOp, add};
  inner.append(varOps.begin(), varOps.end());
  inner.append(numeratorOps.begin(), numeratorOps.end());
  for (Operation *op : ArrayRef(inner).drop_front())
    if (std::optional<std::string> other = anotherUse(
            op->getResult(0), inner,
            "'" + op->getName().getStringRef() + "' has")) {
      why = *other;
      return std::nullopt;
    }
  if (norm->getResult(0).getType() != x.getType()) {
    why = "the result type " + typeString(norm->getResult(0).getType()) +
          " differs from the input type " + typeString(x.getType());
    return std::nullopt;
  }

  // Absorb `* gamma` and (LayerNorm) `+ beta` where they are vectors of the
  // feature size and the normalised value has no other use.
  int64_t features = xType.getShape().back();
  auto isFeatureVector = [&](Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t && t.getRank() == 1 && t.getElementType() == xType.getElementType() &&
           (t.getDimSize(0) == features || ShapedType::isDynamic(features));
  };
  auto otherOperand = [](Operation *op, Value v) {
    return op->getOperand(0) == v ? op->getOperand(1) : op->getOperand(0);
  };
  m.root = norm;
  if (norm->hasOneUse()) {
    Operation *user = *norm->getUsers().begin();
    Value other = otherOperand(user, norm->getResult(0));
    if (isa<MulOp>(user) && isFeatureVector(other)) {
      m.scale = other;
      m.root = user;
      m.affine.push_back(user);
    }
  }
  if (m.isLayerNorm && m.root->hasOneUse()) {
    Operation *user = *m.root->getUsers().begin();
    Value other = otherOperand(user, m.root->getResult(0));
    if (isa<AddOp>(user) && isFeatureVector(other)) {
      m.bias = other;
      m.root = user;
      m.affine.push_back(user);
    }
  }

  m.input = x;
  m.ops = inner;
  return m;
}

struct FuseLayerNormPass
    : public tfc::impl::TfcFuseLayerNormBase<FuseLayerNormPass> {
  using TfcFuseLayerNormBase::TfcFuseLayerNormBase;

  void runOnOperation() override {
    Reporter reporter(remarks);
    SmallVector<Operation *> candidates;
    getOperation()->walk([&](Operation *op) {
      if (isa<RsqrtOp, SqrtOp>(op))
        candidates.push_back(op);
    });

    IRRewriter rewriter(&getContext());
    for (Operation *candidate : candidates) {
      std::string why;
      std::optional<NormMatch> m = matchNorm(candidate, why);
      if (!m) {
        reporter.notFused(candidate, why);
        continue;
      }
      std::string what;
      llvm::raw_string_ostream os(what);
      os << (m->isLayerNorm ? "tfc.layer_norm" : "tfc.rms_norm")
         << " (epsilon " << llvm::format("%g", m->epsilon)
         << (m->scale ? ", scale" : "") << (m->bias ? ", bias" : "") << ")";
      reporter.fused(candidate, what);

      rewriter.setInsertionPoint(m->root);
      Location loc = rewriter.getFusedLoc({candidate->getLoc(),
                                           m->root->getLoc()});
      FloatAttr eps = rewriter.getF64FloatAttr(m->epsilon);
      Type type = m->input.getType();
      Operation *fused;
      if (m->isLayerNorm)
        fused = LayerNormOp::create(rewriter, loc, type, m->input, m->scale,
                                    m->bias, /*residual=*/Value(), eps);
      else
        fused = RmsNormOp::create(rewriter, loc, type, m->input, m->scale,
                                  /*residual=*/Value(), eps);
      rewriter.replaceOp(m->root, fused->getResults());
      // Everything else the decomposition computed is dead now.
      SmallVector<Operation *> dead(llvm::reverse(m->affine));
      dead.append(m->ops.begin(), m->ops.end());
      llvm::erase(dead, m->root);
      eraseIfDead(rewriter, dead);
    }
  }
};

} // namespace
