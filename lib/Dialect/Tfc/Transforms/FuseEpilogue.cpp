//===- FuseEpilogue.cpp - Fold bias, activation and residual into producers ===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Three rewrites, in this order, each reported on the op it absorbs:
//
//   1. matmul(x, W) with a 2-D W of static shape ([K, N], the `x @ w` of
//      exported graphs and GPT-2's Conv1D) becomes linear(x, transpose(W)):
//      one op family for the backends, with W's transpose a load-time
//      constant (a W of dynamic shape, an activation, stays a matmul);
//   2. linear(...) + b with b a vector of the output features becomes the
//      linear's bias; then relu / gelu / silu / max(·, 0) of it becomes its
//      activation;
//   3. layer_norm(a + r) / rms_norm(a + r) takes the residual add.
//
//===----------------------------------------------------------------------===//

#include "FusionUtils.h"

#include "tfc/Dialect/Tfc/IR/TfcDialect.h"
#include "tfc/Dialect/Tfc/IR/TfcOps.h"
#include "tfc/Dialect/Tfc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCFUSEEPILOGUE
#include "tfc/Dialect/Tfc/Transforms/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::fusion;

namespace {

StringRef activationName(Activation a) { return stringifyActivation(a); }

/// 1. matmul(x, W[K, N]) -> linear(x, Wᵀ) when W has a static shape, as a
/// linear's weight has (a weight, or a value the backends pack per call); a
/// W of dynamic shape (a product of two activations) stays a matmul.
void matmulToLinear(RewriterBase &rewriter, MatmulOp mm,
                    const Reporter &reporter) {
  auto rhsType = cast<RankedTensorType>(mm.getRhs().getType());
  auto lhsType = cast<RankedTensorType>(mm.getLhs().getType());
  if (rhsType.getRank() != 2 || lhsType.getRank() < 2 ||
      mm.getTransposeLhs() || !rhsType.hasStaticShape())
    return;
  Value weight = mm.getRhs();
  if (!mm.getTransposeRhs()) {
    // The transpose sits with the weight (usually a tfc.weight at the top),
    // not at its use: it is a load-time constant, and tfc-merge-qkv can then
    // pack the linears that share it.
    if (Operation *def = weight.getDefiningOp())
      rewriter.setInsertionPointAfter(def);
    else
      rewriter.setInsertionPointToStart(
          cast<BlockArgument>(weight).getOwner());
    weight = TransposeOp::create(rewriter, weight.getLoc(), weight,
                                 ArrayRef<int64_t>{1, 0});
  }
  rewriter.setInsertionPoint(mm);
  auto linear = LinearOp::create(rewriter, mm.getLoc(), mm.getType(),
                                 mm.getLhs(), weight, Value(),
                                 Activation::None);
  reporter.fused(mm, "tfc.linear (weight [K, N] read transposed)");
  rewriter.replaceOp(mm, linear);
}

/// Is `type` a vector of N features: [N] or [1, ..., 1, N]?
bool isFeatureVector(RankedTensorType type, int64_t n) {
  return type.getRank() >= 1 && type.getShape().back() == n &&
         llvm::all_of(type.getShape().drop_back(),
                      [](int64_t d) { return d == 1; });
}

/// A feature vector `v` (see isFeatureVector) as [N].
Value asVector(RewriterBase &rewriter, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getRank() == 1)
    return v;
  return ReshapeOp::create(
      rewriter, v.getLoc(),
      RankedTensorType::get({type.getShape().back()}, type.getElementType()),
      v, ValueRange());
}

/// 2a. linear(...) + b -> linear(..., b).
void fuseBias(RewriterBase &rewriter, AddOp add, const Reporter &reporter) {
  for (int side = 0; side < 2; ++side) {
    Value mine = add->getOperand(side), other = add->getOperand(1 - side);
    auto linear = mine.getDefiningOp<LinearOp>();
    if (!linear)
      continue;
    auto type = cast<RankedTensorType>(linear.getType());
    if (add.getType() != type)
      continue;
    int64_t n = type.getShape().back();
    if (ShapedType::isDynamic(n))
      continue;
    if (!isFeatureVector(cast<RankedTensorType>(other.getType()), n))
      continue; // a residual or another tensor, not a bias
    if (linear.getBias() ||
        linear.getActivation() != Activation::None) {
      reporter.notFused(add, linear.getBias()
                                 ? "the linear already has a bias"
                                 : "the linear already has an activation");
      return;
    }
    if (std::optional<std::string> other =
            anotherUse(linear, {add}, "the linear's result has")) {
      reporter.notFused(add, *other);
      return;
    }
    rewriter.setInsertionPoint(add);
    Value bias = asVector(rewriter, other);
    auto fused = LinearOp::create(
        rewriter, rewriter.getFusedLoc({linear.getLoc(), add.getLoc()}),
        type, linear.getInput(), linear.getWeight(), bias, Activation::None);
    reporter.fused(add, "the bias of tfc.linear");
    rewriter.replaceOp(add, fused);
    rewriter.eraseOp(linear);
    return;
  }
}

/// The activation `op` applies to its first operand, if it is one.
std::optional<Activation> activationOf(Operation *op) {
  if (isa<ReluOp>(op))
    return Activation::Relu;
  if (isa<SiluOp>(op))
    return Activation::Silu;
  if (auto g = dyn_cast<GeluOp>(op))
    return g.getApproximation() == GeluApproximation::Erf
               ? Activation::GeluErf
               : Activation::GeluTanh;
  if (auto m = dyn_cast<MaxOp>(op))
    if (getSplatValue(m.getRhs()) == 0.0 || getSplatValue(m.getLhs()) == 0.0)
      return Activation::Relu;
  return std::nullopt;
}

/// 2b. act(linear(...)) -> linear(...) activation(act).
void fuseActivation(RewriterBase &rewriter, Operation *op,
                    const Reporter &reporter) {
  std::optional<Activation> act = activationOf(op);
  if (!act || op->getNumResults() != 1)
    return;
  LinearOp linear;
  for (Value operand : op->getOperands())
    if ((linear = operand.getDefiningOp<LinearOp>()))
      break;
  if (!linear || op->getResult(0).getType() != linear.getType())
    return;
  if (linear.getActivation() != Activation::None) {
    reporter.notFused(op, "the linear already has the activation " +
                              activationName(linear.getActivation()));
    return;
  }
  if (std::optional<std::string> other =
          anotherUse(linear, {op}, "the linear's result has")) {
    reporter.notFused(op, *other);
    return;
  }
  rewriter.setInsertionPoint(op);
  auto fused = LinearOp::create(
      rewriter, rewriter.getFusedLoc({linear.getLoc(), op->getLoc()}),
      linear.getType(), linear.getInput(), linear.getWeight(),
      linear.getBias(), *act);
  reporter.fused(op, "the activation " + activationName(*act) +
                         " of tfc.linear");
  rewriter.replaceOp(op, fused);
  rewriter.eraseOp(linear);
}

/// 3. norm(a + r) -> norm(a) residual(r).
template <typename NormOp>
void fuseResidual(RewriterBase &rewriter, NormOp norm,
                  const Reporter &reporter) {
  auto add = norm.getInput().template getDefiningOp<AddOp>();
  if (!add || norm.getResidual())
    return;
  Type type = norm.getInput().getType();
  if (add.getLhs().getType() != type || add.getRhs().getType() != type)
    return; // a broadcasting add (e.g. a position table) is not a residual
  if (std::optional<std::string> other =
          anotherUse(add, {norm}, "the residual sum has")) {
    reporter.notFused(norm, *other + " (pre-norm: it feeds the next residual)");
    return;
  }
  reporter.fused(norm, "the residual add of " +
                           norm->getName().getStringRef());
  rewriter.modifyOpInPlace(norm, [&] {
    norm.getInputMutable().assign(add.getLhs());
    norm.getResidualMutable().assign(add.getRhs());
    norm->setLoc(rewriter.getFusedLoc({norm.getLoc(), add.getLoc()}));
  });
  rewriter.eraseOp(add);
}

struct FuseEpiloguePass
    : public tfc::impl::TfcFuseEpilogueBase<FuseEpiloguePass> {
  using TfcFuseEpilogueBase::TfcFuseEpilogueBase;

  void runOnOperation() override {
    Reporter reporter(remarks);
    IRRewriter rewriter(&getContext());
    Operation *root = getOperation();

    SmallVector<MatmulOp> matmuls;
    root->walk([&](MatmulOp op) { matmuls.push_back(op); });
    for (MatmulOp mm : matmuls)
      matmulToLinear(rewriter, mm, reporter);

    SmallVector<AddOp> adds;
    root->walk([&](AddOp op) { adds.push_back(op); });
    for (AddOp add : adds)
      fuseBias(rewriter, add, reporter);

    SmallVector<Operation *> activations;
    root->walk([&](Operation *op) {
      if (activationOf(op))
        activations.push_back(op);
    });
    for (Operation *op : activations)
      fuseActivation(rewriter, op, reporter);

    SmallVector<Operation *> norms;
    root->walk([&](Operation *op) {
      if (isa<LayerNormOp, RmsNormOp>(op))
        norms.push_back(op);
    });
    for (Operation *op : norms) {
      if (auto ln = dyn_cast<LayerNormOp>(op))
        fuseResidual(rewriter, ln, reporter);
      else
        fuseResidual(rewriter, cast<RmsNormOp>(op), reporter);
    }
  }
};

} // namespace
