//===- LinearToGemm.cpp - tfc.linear to the CPU GEMM over packed weights --===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "KernelConfig.h"
#include "KernelUtils.h"

#include "tfc/Conversion/Passes.h"
#include "tfc/Conversion/TfcToLinalg/TfcToLinalg.h"
#include "tfc/Dialect/Tfc/IR/TfcOps.h"
#include "tfc/Dialect/TfcCpu/IR/TfcCpu.h"
#include "tfc/Dialect/TfcKernel/IR/TfcKernel.h"

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

/// For destinations of static shape.
kernel::SizeSource noDynamicSizes(int64_t) {
  llvm_unreachable("the destination has a static shape");
}

/// The destination of a kernel whose result `type` is [lead..., N]: the
/// dynamic leading sizes are those of `lead` ([lead..., K] or ids).
Value destinationOf(OpBuilder &b, Location loc, Type type, Value lead) {
  return kernel::createDestination(b, loc, cast<RankedTensorType>(type),
                                   [&](int64_t d) {
                                     return kernel::SizeSource{lead, d};
                                   });
}

/// The quantised weight (f32 values with a `quant` format) `v` is, or null.
WeightOp quantizedWeight(Value v) {
  auto w = v.getDefiningOp<WeightOp>();
  if (w && w.getQuant() && w.getType().getElementType().isF32())
    return w;
  return nullptr;
}

/// Quantised weights on the CPU. Each `tfc.weight {quant}` (its f32 values)
/// gets its raw form (the stored blocks, i8); a linear whose weight is such
/// a weight, or an axis-0 concat of weights of one format (tfc-merge-qkv's
/// merged projections: the blocks run along K, so rows concatenate as they
/// are), becomes tfc_cpu.qgemm over tfc_cpu.qpack of the raw form (the
/// kernels' layout, made at load); an embedding lookup
/// becomes tfc_cpu.qembedding (only the rows read are dequantised); every
/// other use reads
/// tfc_cpu.dequantize(raw), which depends on weights only and so is computed
/// once at load (the model ABI's derived constants).
void lowerQuantizedWeights(ModuleOp module, int64_t activationBlock) {
  SmallVector<WeightOp> quantized;
  module.walk([&](WeightOp w) {
    if (quantizedWeight(w.getResult()))
      quantized.push_back(w);
  });
  if (quantized.empty())
    return;
  llvm::DenseMap<Operation *, Value> raw;
  auto rawOf = [&](WeightOp w) -> Value {
    Value &r = raw[w];
    if (!r) {
      const QuantFormat *format = lookupQuantFormat(*w.getQuant());
      auto type = w.getType();
      SmallVector<int64_t> shape(type.getShape().drop_back());
      shape.push_back(type.getShape().back() / format->blockElements);
      shape.push_back(format->blockBytes);
      OpBuilder b(w);
      b.setInsertionPointAfter(w);
      r = WeightOp::create(b, w.getLoc(),
                           RankedTensorType::get(shape, b.getI8Type()),
                           w.getNameAttr(), w.getQuantAttr());
    }
    return r;
  };

  SmallVector<LinearOp> linears;
  module.walk([&](LinearOp op) { linears.push_back(op); });
  for (LinearOp op : linears) {
    Value weight = op.getWeight();
    SmallVector<WeightOp> parts;
    auto concat = weight.getDefiningOp<ConcatOp>();
    if (WeightOp w = quantizedWeight(weight)) {
      parts.push_back(w);
    } else if (concat && concat.getAxis() == 0) {
      for (Value in : concat.getInputs()) {
        WeightOp w = quantizedWeight(in);
        if (!w) {
          parts.clear();
          break;
        }
        parts.push_back(w);
      }
    }
    if (parts.empty() || !cpu::hasQGemmKernel(*parts.front().getQuant()) ||
        llvm::any_of(parts, [&](WeightOp w) {
          return *w.getQuant() != *parts.front().getQuant();
        }))
      continue;
    OpBuilder b(op);
    SmallVector<Value> raws;
    for (WeightOp w : parts)
      raws.push_back(rawOf(w));
    Value rawWeight = raws.front();
    if (raws.size() > 1) {
      auto first = cast<RankedTensorType>(raws.front().getType());
      SmallVector<int64_t> shape(first.getShape());
      shape[0] = 0;
      for (Value r : raws)
        shape[0] += cast<RankedTensorType>(r.getType()).getDimSize(0);
      rawWeight = ConcatOp::create(b, concat.getLoc(),
                                   RankedTensorType::get(shape, b.getI8Type()),
                                   raws, b.getI64IntegerAttr(0));
    }
    auto format = b.getStringAttr(*parts.front().getQuant());
    auto rawType = cast<RankedTensorType>(rawWeight.getType());
    int64_t groups = (rawType.getDimSize(0) + cpu::kQuantGroupRows - 1) /
                     cpu::kQuantGroupRows;
    auto packedType = RankedTensorType::get(
        {groups, rawType.getDimSize(1),
         cpu::quantGroupBlockBytes(*lookupQuantFormat(format.getValue()))},
        b.getI8Type());
    Value packed =
        cpu::QPackOp::create(b, op.getLoc(), packedType, rawWeight,
                             kernel::createDestination(
                                 b, op.getLoc(), packedType, noDynamicSizes),
                             format)
            .getResult();
    int64_t elements = lookupQuantFormat(format.getValue())->blockElements;
    Value q =
        cpu::QGemmOp::create(
            b, op.getLoc(), op.getType(), op.getInput(), packed, op.getBias(),
            destinationOf(b, op.getLoc(), op.getType(), op.getInput()), format,
            op.getActivation(), elements == 256 ? activationBlock : 32)
            .getResult();
    op.replaceAllUsesWith(q);
    op.erase();
    if (concat && concat->use_empty())
      concat.erase();
  }
  // Embedding lookups read and dequantise only their rows.
  SmallVector<EmbeddingOp> lookups;
  module.walk([&](EmbeddingOp op) {
    if (quantizedWeight(op.getTable()))
      lookups.push_back(op);
  });
  for (EmbeddingOp op : lookups) {
    WeightOp table = quantizedWeight(op.getTable());
    recordIdBound(op.getIds(), table.getType().getDimSize(0));
    OpBuilder b(op);
    Value rows = cpu::QEmbeddingOp::create(
                     b, op.getLoc(), op.getType(), rawOf(table), op.getIds(),
                     destinationOf(b, op.getLoc(), op.getType(), op.getIds()),
                     table.getQuantAttr())
                     .getResult();
    op.replaceAllUsesWith(rows);
    op.erase();
  }
  for (WeightOp w : quantized) {
    if (!w.use_empty()) {
      Value r = rawOf(w);
      OpBuilder b(w);
      b.setInsertionPointAfter(r.getDefiningOp());
      Value values = cpu::DequantizeOp::create(
                         b, w.getLoc(), w.getType(), r,
                         kernel::createDestination(b, w.getLoc(), w.getType(),
                                                   noDynamicSizes),
                         w.getQuantAttr())
                         .getResult();
      w.replaceAllUsesWith(values);
    }
    w.erase();
  }
}

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
    auto packedType = RankedTensorType::get({(n + nr - 1) / nr, k, nr},
                                            wType.getElementType());
    Value packed = cpu::PackOp::create(
                       rewriter, op.getLoc(), packedType, source,
                       kernel::createDestination(rewriter, op.getLoc(),
                                                 packedType, noDynamicSizes),
                       transposed)
                       .getResult();
    rewriter.replaceOpWithNewOp<cpu::GemmOp>(
        op, op.getType(), op.getInput(), packed, op.getBias(),
        destinationOf(rewriter, op.getLoc(), op.getType(), op.getInput()),
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
      module->setAttr(cpu::kCpuIsaAttr, StringAttr::get(&getContext(), isa));
    }
    for (auto [option, bytes, attr] :
         {std::tuple<const char *, int64_t, const char *>{"l1d-bytes", l1dBytes,
                                                          cpu::kCpuL1dAttr},
          {"l2-bytes", l2Bytes, cpu::kCpuL2Attr}}) {
      if (bytes < 0 || bytes > (int64_t(1) << 30)) {
        module.emitError(option) << ": " << bytes << " is not a cache size";
        return signalPassFailure();
      }
      if (bytes > 0)
        module->setAttr(
            attr, IntegerAttr::get(IntegerType::get(&getContext(), 64), bytes));
    }
    if (!gemmTuning.empty()) {
      auto isaAttr = module->getAttrOfType<StringAttr>(cpu::kCpuIsaAttr);
      StringRef kernels = isaAttr ? isaAttr.getValue() : StringRef("avx512");
      const cpu::GemmConfig *base = cpu::gemmConfigForIsa(kernels);
      if (!base) {
        module.emitError("unknown CPU kernel instruction set '")
            << kernels << "' (expected avx512 or avx2)";
        return signalPassFailure();
      }
      cpu::GemmConfig config = *base;
      std::string error;
      if (!cpu::applyGemmTuning(config, gemmTuning, kernels, error)) {
        module.emitError("gemm-tuning '")
            << gemmTuning << "' for the " << kernels << " kernels: " << error;
        return signalPassFailure();
      }
      // The canonical text: one tuning, one attribute, the same code.
      std::string canonical = cpu::canonicalGemmTuning(gemmTuning);
      if (canonical.empty())
        module->removeAttr(cpu::kCpuGemmTuningAttr);
      else
        module->setAttr(cpu::kCpuGemmTuningAttr,
                        StringAttr::get(&getContext(), canonical));
    }
    int64_t activationBlock = 32;
    if (Attribute a = module->getAttr(cpu::kActivationBlockAttr)) {
      auto i = dyn_cast<IntegerAttr>(a);
      if (!i || (i.getInt() != 32 && i.getInt() != 256)) {
        module.emitError(cpu::kActivationBlockAttr)
            << " must be 32 or 256 (elements per activation scale), got " << a;
        return signalPassFailure();
      }
      activationBlock = i.getInt();
    }
    lowerQuantizedWeights(module, activationBlock);
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
