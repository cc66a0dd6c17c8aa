//===- ApproximateMath.cpp - The tfc-approximate-math pass ----------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Target/CPU/Passes.h"

#include "tfc/Conversion/TfcToLinalg/TfcToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_APPROXIMATEMATH
#include "tfc/Target/CPU/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;

namespace {
// erf on f32 as one odd rational function of the clamped argument,
//   erf(x) ~= x P(x^2) / Q(x^2),  x clamped to [-4, 4],
// P of degree 7 and Q of degree 4 in x^2 (Q > 0 on the interval). The
// coefficients are the minimax fit of scripts/fit-erf.py (absolute error
// 5.5e-8 in exact arithmetic; evaluated in f32 with FMAs, 3.0e-7 at worst,
// near |x| = 3.8, where the ulp of erf is 6e-8; erf(4) is 1 - 1.5e-8).
//
// The math dialect's own approximation (2.5e-7) picks its coefficients from
// three intervals, a select per coefficient: ~45 instructions a vector
// against 16 here. In the GELU epilogue of BERT-base's AVX2 GEMMs that was
// a noticeable share of their time, now a small one (figures: commit
// dce2b7c; scripts/fit-erf.py has the measurement).
struct RationalErf : OpRewritePattern<math::ErfOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::ErfOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return failure();
    static constexpr double kP[] = {
        1.1283792588214152,    0.12232428026866962,    0.04201897853452005,
        0.0008529477753340298, 0.00012594939266231286, -3.950623802785411e-06,
        9.177932248727085e-08, -9.757450916912062e-10};
    static constexpr double kQ[] = {1.0, 0.4417415482998332, 0.0844811753503663,
                                    0.008558359799769771,
                                    0.00039905679901236924};
    static constexpr double kClamp = 4.0;
    Location loc = op.getLoc();
    auto constant = [&](double v) {
      return tfc::buildFloatConstant(rewriter, loc, type, v);
    };
    // Horner's rule with FMAs, highest coefficient first.
    auto horner = [&](ArrayRef<double> coefficients, Value s) {
      Value acc = constant(coefficients.back());
      for (double c : llvm::reverse(coefficients.drop_back()))
        acc = math::FmaOp::create(rewriter, loc, acc, s, constant(c));
      return acc;
    };
    Value x = arith::MinimumFOp::create(
        rewriter, loc,
        arith::MaximumFOp::create(rewriter, loc, op.getOperand(),
                                  constant(-kClamp)),
        constant(kClamp));
    Value s = arith::MulFOp::create(rewriter, loc, x, x);
    Value numerator = arith::MulFOp::create(rewriter, loc, x, horner(kP, s));
    rewriter.replaceOpWithNewOp<arith::DivFOp>(op, numerator, horner(kQ, s));
    return success();
  }
};

struct ApproximateMathPass
    : tfc::impl::ApproximateMathBase<ApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    auto all = [](StringRef) { return true; };
    // Ahead of the math dialect's erf (benefit 1).
    patterns.add<RationalErf>(&getContext(), /*benefit=*/2);
    populateMathF32ExpansionPatterns(patterns, all);
    populateMathPolynomialApproximationPatterns(patterns, all);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
