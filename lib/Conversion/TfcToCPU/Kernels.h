//===- Kernels.h - The CPU kernel emitters ----------------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Each emitter writes the loop nest of one kernel op at the memref level:
// `operands` are the buffers of the op's tensor operands (in operand order,
// null for an absent optional operand) and `out` the freshly allocated,
// identity-layout result buffer.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_LIB_CONVERSION_TFCTOCPU_KERNELS_H
#define TFC_LIB_CONVERSION_TFCTOCPU_KERNELS_H

#include "tfc/Dialect/Tfc/IR/TfcOps.h"
#include "tfc/Dialect/TfcCpu/IR/TfcCpu.h"
#include "tfc/Dialect/TfcKernel/IR/TfcKernel.h"

#include "mlir/IR/Builders.h"

namespace mlir::tfc::cpu {

// RowKernels.cpp
void emitSoftmax(OpBuilder &b, Location loc, Value input, Value out);
void emitLayerNorm(OpBuilder &b, Location loc, kernel::LayerNormOp op, Value input,
                   Value scale, Value bias, Value residual, Value out);
void emitRmsNorm(OpBuilder &b, Location loc, kernel::RmsNormOp op, Value input,
                 Value scale, Value residual, Value out);

// Gemm.cpp
void emitPack(OpBuilder &b, Location loc, PackOp op, Value input, Value out);
LogicalResult emitGemm(OpBuilder &b, Location loc, GemmOp op, Value input,
                       Value packed, Value bias, Value out);
void emitMatmul(OpBuilder &b, Location loc, kernel::MatmulOp op, Value lhs, Value rhs,
                Value out);

// QuantGemm.cpp
void emitQPack(OpBuilder &b, Location loc, QPackOp op, Value input, Value out);
void emitQGemm(OpBuilder &b, Location loc, QGemmOp op, Value input,
               Value weight, Value bias, Value out);
void emitDequantize(OpBuilder &b, Location loc, DequantizeOp op, Value input,
                    Value out);
void emitQEmbedding(OpBuilder &b, Location loc, QEmbeddingOp op, Value table,
                    Value ids, Value out);

// Attention.cpp
/// `rowPast` (i64 [B], or null) gives each batch row its own keys.
void emitAttention(OpBuilder &b, Location loc, kernel::AttentionOp op,
                   Value query, Value key, Value value, Value mask,
                   Value relBias, Value rowPast, Value out);

} // namespace mlir::tfc::cpu

#endif // TFC_LIB_CONVERSION_TFCTOCPU_KERNELS_H
