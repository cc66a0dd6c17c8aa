//===- BufferizableOpInterfaceImpl.cpp - Kernel ops bufferise -------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// One model for every kernel op, as upstream bufferises destination-style
// ops: inputs are read, the destination is written (and not read: every
// kernel overwrites all of it, so a `tensor.empty` destination needs no
// copy), the result is the destination's buffer. Bufferising rebuilds the op
// on buffers; it knows nothing of any kernel. The kernels' code comes later,
// from a target's lower-kernels pass.
//
//===----------------------------------------------------------------------===//

#include "tfc/Dialect/TfcKernel/Transforms/BufferizableOpInterfaceImpl.h"

#include "tfc/Dialect/TfcCpu/IR/TfcCpu.h"
#include "tfc/Dialect/TfcKernel/IR/TfcKernel.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/IR/DstBufferizableOpInterfaceImpl.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::bufferization;

namespace {

template <typename OpTy>
struct KernelOpModel
    : DstBufferizableOpInterfaceExternalModel<KernelOpModel<OpTy>, OpTy> {
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const AnalysisState &) const {
    return !cast<DestinationStyleOpInterface>(op).isDpsInit(&operand);
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto dps = cast<DestinationStyleOpInterface>(op);
    if (dps.hasPureBufferSemantics())
      return success();
    if (!dps.hasPureTensorSemantics())
      return op->emitOpError("mixes tensor and buffer operands");
    SmallVector<Value> buffers;
    for (OpOperand &operand : op->getOpOperands()) {
      FailureOr<Value> buffer =
          getBuffer(rewriter, operand.get(), options, state);
      if (failed(buffer))
        return failure();
      buffers.push_back(*buffer);
    }
    rewriter.setInsertionPoint(op);
    Operation *onBuffers = Operation::create(
        op->getLoc(), op->getName(), /*resultTypes=*/TypeRange(), buffers,
        NamedAttrList(op->getAttrDictionary()), op->getPropertiesStorage());
    rewriter.insert(onBuffers);
    SmallVector<Value> results;
    for (OpOperand &init : dps.getDpsInitsMutable())
      results.push_back(buffers[init.getOperandNumber()]);
    replaceOpWithBufferizedValues(rewriter, op, results);
    return success();
  }
};

template <typename... Ops> void attach(MLIRContext *ctx) {
  (Ops::template attachInterface<KernelOpModel<Ops>>(*ctx), ...);
}

} // namespace

void mlir::tfc::kernel::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, TfcKernelDialect *) {
    ctx->loadDialect<bufferization::BufferizationDialect>();
    attach<SoftmaxOp, LayerNormOp, RmsNormOp, AttentionOp, MatmulOp, LinearOp>(
        ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, cpu::TfcCpuDialect *) {
    ctx->loadDialect<bufferization::BufferizationDialect>();
    attach<cpu::PackOp, cpu::GemmOp, cpu::QPackOp, cpu::QGemmOp,
           cpu::QEmbeddingOp, cpu::DequantizeOp>(ctx);
  });
}
