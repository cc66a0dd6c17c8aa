//===- GpuKernels.h - The GPU kernel emitters -------------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Each emitter writes one kernel op as a gpu.launch at the memref level:
// `operands` are the buffers of the op's tensor operands (any strided
// layout; null for an absent optional operand) and `out` the freshly
// allocated identity-layout result buffer. Arithmetic is f32 whatever the
// element type (f16/bf16 are extended on load and truncated on store).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_LIB_CONVERSION_TFCTOGPU_GPUKERNELS_H
#define TFC_LIB_CONVERSION_TFCTOGPU_GPUKERNELS_H

#include "tfc/Dialect/TfcKernel/IR/TfcKernel.h"

#include "mlir/IR/Builders.h"

namespace mlir::tfc::gpuk {

// RowKernels.cpp: one block per row, shuffle + shared-memory reductions.
LogicalResult emitSoftmax(OpBuilder &b, Location loc, kernel::SoftmaxOp op, Value input,
                          Value out);
LogicalResult emitLayerNorm(OpBuilder &b, Location loc, kernel::LayerNormOp op,
                            Value input, Value scale, Value bias,
                            Value residual, Value out);
LogicalResult emitRmsNorm(OpBuilder &b, Location loc, kernel::RmsNormOp op, Value input,
                          Value scale, Value residual, Value out);

// Matmul.cpp: shared-memory tiled products with fused epilogues; `tf32`:
// f32 products on the tensor cores as tf32 (--gpu-fp32-matmul=tf32).
LogicalResult emitLinear(OpBuilder &b, Location loc, kernel::LinearOp op,
                         Value input, Value weight, Value bias, Value out,
                         bool tf32);
LogicalResult emitMatmul(OpBuilder &b, Location loc, kernel::MatmulOp op,
                         Value lhs, Value rhs, Value out, bool tf32);

// Attention.cpp: flash attention, one block per (query tile, head, batch):
// on the tensor cores (MmaAttention.cpp) where mmaAttentionApplies, else
// on f32 FMAs.
LogicalResult emitAttention(OpBuilder &b, Location loc, kernel::AttentionOp op,
                            Value query, Value key, Value value, Value mask,
                            Value relBias, Value out);

// MmaAttention.cpp: flash attention with Q·Kᵀ and P·V on mma.sync, for f16
// and bf16 operands whose head sizes are multiples of 16 (d) and 8 (dv), at
// most 128.
bool mmaAttentionApplies(kernel::AttentionOp op, Value query, Value key,
                         Value value);
LogicalResult emitMmaAttention(OpBuilder &b, Location loc,
                               kernel::AttentionOp op, Value query, Value key,
                               Value value, Value mask, Value relBias,
                               Value out);

} // namespace mlir::tfc::gpuk

#endif // TFC_LIB_CONVERSION_TFCTOGPU_GPUKERNELS_H
