//===- BufferizationModels.cpp - Kernel ops bufferise into CPU loops ------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// One external BufferizableOpInterface model for all kernel ops: the op
// reads its operands, writes nothing in place, and its result is a new
// allocation that the kernel emitter (Kernels.h) fills. The emitters see
// memrefs, so the kernels are written once, at the level where vector loads
// and parallel loops are natural.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "tfc/Conversion/TfcToCPU/TfcToCPU.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::tfc;
using namespace mlir::tfc::cpu;

namespace {

/// Where each dynamic result size comes from: (operand index, dimension).
using SizeSource = std::pair<unsigned, int64_t>;

/// Per-op knowledge: where dynamic result sizes come from, and the emitter.
template <typename OpTy>
struct KernelTraits;

template <>
struct KernelTraits<SoftmaxOp> {
  static SizeSource size(SoftmaxOp, int64_t d) { return {0, d}; }
  static void emit(OpBuilder &b, Location loc, SoftmaxOp, ArrayRef<Value> in,
                   Value out) {
    emitSoftmax(b, loc, in[0], out);
  }
};

template <>
struct KernelTraits<LayerNormOp> {
  static SizeSource size(LayerNormOp, int64_t d) { return {0, d}; }
  static void emit(OpBuilder &b, Location loc, LayerNormOp op,
                   ArrayRef<Value> in, Value out) {
    emitLayerNorm(b, loc, op, in[0], in[1], in[2], in[3], out);
  }
};

template <>
struct KernelTraits<RmsNormOp> {
  static SizeSource size(RmsNormOp, int64_t d) { return {0, d}; }
  static void emit(OpBuilder &b, Location loc, RmsNormOp op, ArrayRef<Value> in,
                   Value out) {
    emitRmsNorm(b, loc, op, in[0], in[1], in[2], out);
  }
};

template <>
struct KernelTraits<AttentionOp> {
  // [B, H, Tq, Dv]: B, H, Tq from the query, Dv from the value.
  static SizeSource size(AttentionOp, int64_t d) {
    return d == 3 ? SizeSource{2, 3} : SizeSource{0, d};
  }
  static void emit(OpBuilder &b, Location loc, AttentionOp op,
                   ArrayRef<Value> in, Value out) {
    emitAttention(b, loc, op, in[0], in[1], in[2], in[3], out);
  }
};

template <>
struct KernelTraits<MatmulOp> {
  static SizeSource size(MatmulOp op, int64_t d) {
    auto out = cast<RankedTensorType>(op.getType());
    auto lhs = cast<RankedTensorType>(op.getLhs().getType());
    auto rhs = cast<RankedTensorType>(op.getRhs().getType());
    int64_t rank = out.getRank();
    if (d == rank - 2)
      return {0, lhs.getRank() - 2};
    if (d == rank - 1)
      return {1, rhs.getRank() - 1};
    // A batch dim: from whichever operand has it dynamic.
    int64_t ld = d - (rank - lhs.getRank());
    if (ld >= 0 && lhs.isDynamicDim(ld))
      return {0, ld};
    return {1, d - (rank - rhs.getRank())};
  }
  static void emit(OpBuilder &b, Location loc, MatmulOp op, ArrayRef<Value> in,
                   Value out) {
    emitMatmul(b, loc, op, in[0], in[1], out);
  }
};

template <>
struct KernelTraits<GemmOp> {
  static SizeSource size(GemmOp, int64_t d) { return {0, d}; }
  static void emit(OpBuilder &b, Location loc, GemmOp op, ArrayRef<Value> in,
                   Value out) {
    emitGemm(b, loc, op, in[0], in[1], in[2], out);
  }
};

template <>
struct KernelTraits<PackOp> {
  static SizeSource size(PackOp, int64_t d) { return {0, d}; }
  static void emit(OpBuilder &b, Location loc, PackOp op, ArrayRef<Value> in,
                   Value out) {
    emitPack(b, loc, op, in[0], out);
  }
};

template <typename OpTy>
struct KernelModel
    : BufferizableOpInterface::ExternalModel<KernelModel<OpTy>, OpTy> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }
  AliasingValueList getAliasingValues(Operation *, OpOperand &,
                                      const AnalysisState &) const {
    return {};
  }
  bool bufferizesToAllocation(Operation *, Value) const { return true; }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto kernel = cast<OpTy>(op);
    Location loc = op->getLoc();
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    for (Type t : op->getOperandTypes())
      if (auto tt = dyn_cast<RankedTensorType>(t);
          tt && !tt.getElementType().isF32())
        return op->emitError("the CPU kernels support f32 only; got ") << tt;
    if (!resultType.getElementType().isF32())
      return op->emitError("the CPU kernels support f32 only; got ")
             << resultType;

    SmallVector<Value> operandBuffers;
    for (OpOperand &operand : op->getOpOperands()) {
      FailureOr<Value> buffer =
          getBuffer(rewriter, operand.get(), options, state);
      if (failed(buffer))
        return failure();
      operandBuffers.push_back(*buffer);
    }
    // One buffer per ODS operand (null for an absent optional one).
    SmallVector<Value> buffers;
    for (unsigned group = 0; group < expectedGroups(); ++group) {
      auto [start, length] = kernel.getODSOperandIndexAndLength(group);
      buffers.push_back(length ? operandBuffers[start] : Value());
    }

    SmallVector<Value> dynamicSizes;
    for (int64_t d = 0; d < resultType.getRank(); ++d) {
      if (!resultType.isDynamicDim(d))
        continue;
      auto [operand, dim] = KernelTraits<OpTy>::size(kernel, d);
      dynamicSizes.push_back(
          memref::DimOp::create(rewriter, loc, buffers[operand], dim));
    }
    auto memrefType = MemRefType::get(resultType.getShape(),
                                      resultType.getElementType());
    FailureOr<Value> alloc =
        options.createAlloc(rewriter, loc, memrefType, dynamicSizes);
    if (failed(alloc))
      return failure();
    KernelTraits<OpTy>::emit(rewriter, loc, kernel, buffers, *alloc);
    replaceOpWithBufferizedValues(rewriter, op, *alloc);
    return success();
  }

  /// The number of ODS operand groups of OpTy.
  static unsigned expectedGroups();
};

template <>
unsigned KernelModel<SoftmaxOp>::expectedGroups() { return 1; }
template <>
unsigned KernelModel<LayerNormOp>::expectedGroups() { return 4; }
template <>
unsigned KernelModel<RmsNormOp>::expectedGroups() { return 3; }
template <>
unsigned KernelModel<AttentionOp>::expectedGroups() { return 4; }
template <>
unsigned KernelModel<MatmulOp>::expectedGroups() { return 2; }
template <>
unsigned KernelModel<GemmOp>::expectedGroups() { return 3; }
template <>
unsigned KernelModel<PackOp>::expectedGroups() { return 1; }

} // namespace

namespace {
/// The dialects the kernels are written in: loaded with the kernel ops so
/// that bufferisation can build their ops.
void loadKernelDialects(MLIRContext *ctx) {
  ctx->loadDialect<arith::ArithDialect, math::MathDialect,
                   memref::MemRefDialect, scf::SCFDialect,
                   vector::VectorDialect>();
}

struct TfcKernelModels : DialectExtension<TfcKernelModels, TfcDialect> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TfcKernelModels)
  void apply(MLIRContext *ctx, TfcDialect *) const final {
    loadKernelDialects(ctx);
    SoftmaxOp::attachInterface<KernelModel<SoftmaxOp>>(*ctx);
    LayerNormOp::attachInterface<KernelModel<LayerNormOp>>(*ctx);
    RmsNormOp::attachInterface<KernelModel<RmsNormOp>>(*ctx);
    AttentionOp::attachInterface<KernelModel<AttentionOp>>(*ctx);
    MatmulOp::attachInterface<KernelModel<MatmulOp>>(*ctx);
  }
};

struct TfcCpuKernelModels
    : DialectExtension<TfcCpuKernelModels, TfcCpuDialect> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TfcCpuKernelModels)
  void apply(MLIRContext *ctx, TfcCpuDialect *) const final {
    loadKernelDialects(ctx);
    GemmOp::attachInterface<KernelModel<GemmOp>>(*ctx);
    PackOp::attachInterface<KernelModel<PackOp>>(*ctx);
  }
};
} // namespace

void tfc::registerCpuKernelBufferizationModels(DialectRegistry &registry) {
  registry.addExtensions<TfcKernelModels, TfcCpuKernelModels>();
}
