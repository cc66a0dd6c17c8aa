//===- AttentionCommon.h - What the GPU attention kernels share -*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The sizes, key ranges, position terms and mask reads of tfc.attention as
// both GPU flash-attention kernels need them: the SIMT one (Attention.cpp)
// and the tensor-core one (MmaAttention.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_LIB_CONVERSION_TFCTOGPU_ATTENTIONCOMMON_H
#define TFC_LIB_CONVERSION_TFCTOGPU_ATTENTIONCOMMON_H

#include "tfc/Conversion/RowKernels.h"
#include "tfc/Dialect/TfcKernel/IR/TfcKernel.h"

#include "mlir/IR/Builders.h"

namespace mlir::tfc::gpuk {

/// [B, H, Tq, D] queries on [B, Hkv, Tk, D] keys, read on the host.
/// Run-time head counts are not checked against each other: `group`
/// (H / Hkv) never divides by 0, `lastKvHead` bounds the key/value head a
/// query head reads, and without key/value heads `runHeads` is 0 (no block
/// runs).
struct AttentionShape {
  Value batch, heads, tq, kvHeads, tk, group, lastKvHead, runHeads;
};
AttentionShape attentionShape(OpBuilder &b, Location loc, Value query,
                              Value key);

/// The key/value head of query head `h`.
Value kvHeadOf(OpBuilder &b, Location loc, const AttentionShape &shape,
               Value h);

/// The keys [start, end) that query rows [q0, q0 + rows) may see: with
/// `causal`, row i sees keys j <= i + Tk - Tq (tiles above the diagonal are
/// never loaded); with a window, keys j > i + Tk - Tq - window, `start`
/// rounded down to a multiple of `keyTile`.
struct KeyRange {
  Value start, end;
};
KeyRange attentionKeyRange(OpBuilder &b, Location loc, kernel::AttentionOp op,
                           const AttentionShape &shape, Value q0, int64_t rows,
                           int64_t keyTile);

/// The op's position terms for query head `h`.
PositionTerms attentionTerms(OpBuilder &b, Location loc, kernel::AttentionOp op,
                             const AttentionShape &shape, Value h,
                             Value relBias);

/// The additive mask's f32 value for (batch bi, head h, query row, key),
/// row and key clamped into range, the mask's size-1 dims broadcast.
Value loadMaskTerm(OpBuilder &b, Location loc, Value mask,
                   const AttentionShape &shape, Value bi, Value h, Value row,
                   Value key);

} // namespace mlir::tfc::gpuk

#endif // TFC_LIB_CONVERSION_TFCTOGPU_ATTENTIONCOMMON_H
