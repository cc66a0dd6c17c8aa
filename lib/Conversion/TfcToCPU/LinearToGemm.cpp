//===- LinearToGemm.cpp - tfc.linear to the CPU GEMM over packed weights --===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "KernelConfig.h"
#include "KernelUtils.h"

#include "tfc/Conversion/Passes.h"
#include "tfc/Dialect/Tfc/IR/TfcOps.h"
#include "tfc/Dialect/TfcCpu/IR/TfcCpu.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_CONVERTLINEARTOGEMM
#include "tfc/Conversion/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

struct LinearToGemm : OpRewritePattern<LinearOp> {
  LinearToGemm(MLIRContext *ctx, int64_t nr)
      : OpRewritePattern<LinearOp>(ctx), nr(nr) {}
  int64_t nr;
  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    auto wType = cast<RankedTensorType>(op.getWeight().getType());
    if (!wType.getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "the CPU GEMM is f32");
    Value source = op.getWeight();
    bool transposed = false;
    // linear(x, transpose(V)) reads V [K, N] directly.
    if (auto t = source.getDefiningOp<TransposeOp>()) {
      if (t.getPermutation() == ArrayRef<int64_t>{1, 0}) {
        source = t.getInput();
        transposed = true;
      }
    }
    auto sType = cast<RankedTensorType>(source.getType());
    if (!sType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "the weight shape is dynamic");
    int64_t n = wType.getDimSize(0), k = wType.getDimSize(1);
    auto packedType =
        RankedTensorType::get({(n + nr - 1) / nr, k, nr}, wType.getElementType());
    Value packed =
        cpu::PackOp::create(rewriter, op.getLoc(), packedType, source,
                            transposed);
    rewriter.replaceOpWithNewOp<cpu::GemmOp>(op, op.getType(), op.getInput(),
                                             packed, op.getBias(),
                                             op.getActivation());
    return success();
  }
};

/// matmul with transpose flags -> explicit transposes of the operands.
struct ExplicitMatmulTransposes : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getTransposeLhs() && !op.getTransposeRhs())
      return failure();
    auto swapLast = [&](Value v) -> Value {
      int64_t rank = cast<RankedTensorType>(v.getType()).getRank();
      SmallVector<int64_t> perm;
      for (int64_t d = 0; d < rank; ++d)
        perm.push_back(d);
      std::swap(perm[rank - 1], perm[rank - 2]);
      return TransposeOp::create(rewriter, op.getLoc(), v, perm);
    };
    Value lhs = op.getTransposeLhs() ? swapLast(op.getLhs()) : op.getLhs();
    Value rhs = op.getTransposeRhs() ? swapLast(op.getRhs()) : op.getRhs();
    rewriter.replaceOpWithNewOp<MatmulOp>(op, op.getType(), lhs, rhs, false,
                                          false);
    return success();
  }
};

struct ConvertLinearToGemmPass
    : tfc::impl::ConvertLinearToGemmBase<ConvertLinearToGemmPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!isa.empty()) {
      if (!cpu::gemmConfigForIsa(isa)) {
        module.emitError("unknown CPU kernel instruction set '")
            << isa << "' (expected avx512 or avx2)";
        return signalPassFailure();
      }
      module->setAttr(cpu::kCpuIsaAttr,
                      StringAttr::get(&getContext(), isa));
    }
    RewritePatternSet patterns(&getContext());
    patterns.add<LinearToGemm>(&getContext(), cpu::gemmConfigFor(module).nr);
    patterns.add<ExplicitMatmulTransposes>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    WalkResult r = getOperation().walk([](LinearOp op) {
      op.emitError("the CPU backend cannot lower this linear: it needs an f32 "
                   "weight of static shape, got ")
          << op.getWeight().getType();
      return WalkResult::interrupt();
    });
    if (r.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
