//===- MergeQkv.cpp - Pack linears that read the same input into one ------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Separate Q, K and V projections of one input (and SwiGLU's gate and up
// projections) are one GEMM with the weights stacked: fewer, larger kernels
// that read the input once. The packed weight is `tfc.concat` of the
// originals (a constant the runtime computes once at load time) and each
// original result becomes a `tfc.slice` of the packed one.
//
//===----------------------------------------------------------------------===//

#include "FusionUtils.h"

#include "tfc/Dialect/Tfc/IR/TfcDialect.h"
#include "tfc/Dialect/Tfc/IR/TfcOps.h"
#include "tfc/Dialect/Tfc/Transforms/Passes.h"

#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCMERGEQKV
#include "tfc/Dialect/Tfc/Transforms/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::fusion;

namespace {

/// The block format a weight is stored in ("q4_k"), or "" for any other
/// value.
StringRef storageFormat(Value weight) {
  if (auto w = weight.getDefiningOp<WeightOp>())
    if (auto quant = w.getQuant())
      return *quant;
  return "";
}

/// Why `b` cannot join a group led by `a`, or empty if it can.
std::string incompatibility(LinearOp a, LinearOp b) {
  auto wa = cast<RankedTensorType>(a.getWeight().getType());
  auto wb = cast<RankedTensorType>(b.getWeight().getType());
  if (wb.getNumDynamicDims() != 0)
    return "its weight " + typeString(wb) + " has a dynamic shape";
  if (wa.getShape()[1] != wb.getShape()[1])
    return "its weight " + typeString(wb) + " has another input size than " +
           typeString(wa);
  if (a.getActivation() != b.getActivation())
    return std::string("its activation ") +
           stringifyActivation(b.getActivation()).str() + " differs from " +
           stringifyActivation(a.getActivation()).str();
  if (static_cast<bool>(a.getBias()) != static_cast<bool>(b.getBias()))
    return "one has a bias and the other not";
  // Weights stored in different block formats stay apart: each keeps its
  // own int8 kernel (a concatenation of two formats has none).
  StringRef fa = storageFormat(a.getWeight()), fb = storageFormat(b.getWeight());
  if (fa != fb)
    return "its weight is stored as " + (fb.empty() ? "floats" : fb.str()) +
           ", the other's as " + (fa.empty() ? "floats" : fa.str());
  return "";
}

struct MergeQkvPass : public tfc::impl::TfcMergeQkvBase<MergeQkvPass> {
  using TfcMergeQkvBase::TfcMergeQkvBase;

  void runOnOperation() override {
    Reporter reporter(remarks);
    DominanceInfo dominance(getOperation());
    IRRewriter rewriter(&getContext());

    // Linears grouped by input, in program order.
    llvm::MapVector<Value, SmallVector<LinearOp>> byInput;
    getOperation()->walk([&](LinearOp op) {
      if (cast<RankedTensorType>(op.getWeight().getType())
              .getNumDynamicDims() == 0)
        byInput[op.getInput()].push_back(op);
    });

    for (auto &[input, linears] : byInput) {
      if (linears.size() < 2)
        continue;
      // The group: linears compatible with the first one, in one block,
      // whose weights and biases are available before the first.
      LinearOp first = linears.front();
      SmallVector<LinearOp> group = {first};
      for (LinearOp l : ArrayRef(linears).drop_front()) {
        std::string why = incompatibility(first, l);
        if (why.empty() && l->getBlock() != first->getBlock())
          why = "it is in another block";
        if (why.empty())
          for (Value v : {l.getWeight(), l.getBias()})
            if (v && !dominance.properlyDominates(v, first))
              why = "its weight or bias is computed after " +
                    describeLoc(first.getLoc());
        if (!why.empty()) {
          reporter.notFused(l, "not packed with the linear at " +
                                   describeLoc(first.getLoc()) +
                                   " that reads the same input: " + why);
          continue;
        }
        group.push_back(l);
      }
      if (group.size() < 2)
        continue;

      // The packed projection, placed at the first linear.
      rewriter.setInsertionPoint(first);
      SmallVector<Value> weights, biases;
      SmallVector<Location> locs;
      int64_t total = 0;
      for (LinearOp l : group) {
        weights.push_back(l.getWeight());
        if (l.getBias())
          biases.push_back(l.getBias());
        locs.push_back(l.getLoc());
        total += cast<RankedTensorType>(l.getWeight().getType()).getDimSize(0);
      }
      Location loc = rewriter.getFusedLoc(locs);
      auto weightType = cast<RankedTensorType>(first.getWeight().getType());
      Type et = weightType.getElementType();
      Value weight = ConcatOp::create(
          rewriter, loc,
          RankedTensorType::get({total, weightType.getDimSize(1)}, et),
          weights, 0);
      Value bias;
      if (!biases.empty())
        bias = ConcatOp::create(rewriter, loc,
                                RankedTensorType::get({total}, et), biases, 0);
      auto packed = LinearOp::create(rewriter, loc, input, weight, bias,
                                     first.getActivation());
      int64_t axis = cast<RankedTensorType>(packed.getType()).getRank() - 1;

      int64_t offset = 0;
      for (LinearOp l : group) {
        int64_t n =
            cast<RankedTensorType>(l.getWeight().getType()).getDimSize(0);
        reporter.fused(l, "one packed tfc.linear with " + Twine(total) +
                              " outputs (" + Twine(group.size()) +
                              " projections of the same input)");
        auto slice = SliceOp::create(rewriter, l.getLoc(), packed, axis,
                                     offset, n);
        rewriter.replaceOp(l, slice);
        offset += n;
      }
    }
  }
};

} // namespace
