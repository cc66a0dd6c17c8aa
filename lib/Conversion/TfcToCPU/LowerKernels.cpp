//===- LowerKernels.cpp - The tfc-cpu-lower-kernels pass ------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Each kernel op on buffers is replaced by its CPU kernel (Kernels.h) at its
// place, writing the op's destination; kernels on tensors have not been
// bufferised yet and are an error, as is any element type the CPU kernels
// do not compute in.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "tfc/Conversion/Passes.h"
#include "tfc/Dialect/TfcCpu/IR/TfcCpu.h"
#include "tfc/Dialect/TfcKernel/IR/TfcKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_CPULOWERKERNELS
#include "tfc/Conversion/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// The CPU kernels compute in f32; the quantised ones also read raw weights
/// (i8 blocks), the quantised embedding integer ids, and attention keys and
/// values of f16 (a KV cache in half precision; the verifier checks that
/// both are).
LogicalResult checkElementTypes(Operation *op) {
  bool rawWeights =
      isa<cpu::QGemmOp, cpu::QPackOp, cpu::DequantizeOp, cpu::QEmbeddingOp>(op);
  auto attention = dyn_cast<kernel::AttentionOp>(op);
  for (OpOperand &operand : op->getOpOperands()) {
    Type t = operand.get().getType();
    Type element = cast<ShapedType>(t).getElementType();
    bool halfKV = attention && element.isF16() &&
                  (operand.get() == attention.getKey() ||
                   operand.get() == attention.getValue());
    bool rowPast = attention && element.isInteger(64) &&
                   operand.get() == attention.getRowPast();
    if (element.isF32() || halfKV || rowPast ||
        (rawWeights && element.isInteger(8)) ||
        (isa<cpu::QEmbeddingOp>(op) &&
         (element.isInteger(32) || element.isInteger(64))))
      continue;
    return op->emitOpError("the CPU kernels support f32 (attention also f16 "
                           "keys and values) only; got ")
           << t;
  }
  return success();
}

LogicalResult lowerKernel(OpBuilder &b, Operation *op) {
  if (failed(checkElementTypes(op)))
    return failure();
  Location loc = op->getLoc();
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](kernel::SoftmaxOp k) {
        cpu::emitSoftmax(b, loc, k.getInput(), k.getInit());
        return success();
      })
      .Case([&](kernel::LayerNormOp k) {
        cpu::emitLayerNorm(b, loc, k, k.getInput(), k.getScale(), k.getBias(),
                           k.getResidual(), k.getInit());
        return success();
      })
      .Case([&](kernel::RmsNormOp k) {
        cpu::emitRmsNorm(b, loc, k, k.getInput(), k.getScale(), k.getResidual(),
                         k.getInit());
        return success();
      })
      .Case([&](kernel::AttentionOp k) {
        cpu::emitAttention(b, loc, k, k.getQuery(), k.getKey(), k.getValue(),
                           k.getMask(), k.getRelativeBias(), k.getRowPast(),
                           k.getInit());
        return success();
      })
      .Case([&](kernel::MatmulOp k) -> LogicalResult {
        if (k.getTransposeLhs() || k.getTransposeRhs())
          return k.emitOpError(
              "the CPU matmul kernel reads [..., M, K] x [..., K, N]: "
              "convert-tfc-linear-to-cpu-gemm makes transposes explicit");
        cpu::emitMatmul(b, loc, k, k.getLhs(), k.getRhs(), k.getInit());
        return success();
      })
      .Case([&](kernel::LinearOp k) -> LogicalResult {
        return k.emitOpError("has no CPU kernel of its own: "
                             "convert-tfc-linear-to-cpu-gemm packs its weight "
                             "for tfc_cpu.gemm");
      })
      .Case([&](cpu::PackOp k) {
        cpu::emitPack(b, loc, k, k.getInput(), k.getInit());
        return success();
      })
      .Case([&](cpu::GemmOp k) {
        return cpu::emitGemm(b, loc, k, k.getInput(), k.getWeight(),
                             k.getBias(), k.getInit());
      })
      .Case([&](cpu::QPackOp k) {
        cpu::emitQPack(b, loc, k, k.getInput(), k.getInit());
        return success();
      })
      .Case([&](cpu::QGemmOp k) {
        cpu::emitQGemm(b, loc, k, k.getInput(), k.getWeight(), k.getBias(),
                       k.getInit());
        return success();
      })
      .Case([&](cpu::DequantizeOp k) {
        cpu::emitDequantize(b, loc, k, k.getInput(), k.getInit());
        return success();
      })
      .Case([&](cpu::QEmbeddingOp k) {
        cpu::emitQEmbedding(b, loc, k, k.getTable(), k.getIds(), k.getInit());
        return success();
      })
      .Default([&](Operation *other) -> LogicalResult {
        return other->emitOpError("is not a kernel the CPU target knows");
      });
}

struct CpuLowerKernelsPass
    : tfc::impl::CpuLowerKernelsBase<CpuLowerKernelsPass> {
  void runOnOperation() override {
    if (failed(kernel::lowerBufferKernels(getOperation(), lowerKernel)))
      signalPassFailure();
  }
};

} // namespace
