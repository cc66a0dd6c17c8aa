//===- RowKernels.h - Row kernels written once, per-target hooks -*- C++
//-*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Softmax, LayerNorm and RMSNorm over the last axis, and the online softmax
// of the GPU's flash attention, are the same math on every target: reductions
// over a row, then an elementwise pass. The math is written once
// (lib/Conversion/KernelCommon/RowKernels.cpp) against RowKernelTarget, which
// each target implements the way Triton's TargetInfoBase serves its shared
// lowering: how rows are spread over the hardware, what a value of the row is
// (a vector of lanes on the CPU, one element per thread on the GPU), how it is
// loaded, stored and reduced. The CPU's implementation is in
// lib/Conversion/TfcToCPU/RowKernels.cpp, the GPU's in
// lib/Conversion/TfcToGPU/RowKernels.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CONVERSION_ROWKERNELS_H
#define TFC_CONVERSION_ROWKERNELS_H

#include "mlir/IR/Builders.h"

namespace mlir::tfc {

enum class RowReduction { Add, Max };

class RowKernelTarget {
public:
  virtual ~RowKernelTarget() = default;

  /// One row: the indices of its leading dims and its length. Targets
  /// extend it with what their hooks need (threads, shared scratch).
  struct Row {
    SmallVector<Value> lead;
    Value length;
  };
  /// A position in the row: an element (GPU) or a chunk of lanes starting
  /// at `index` with `mask` marking those inside the row (CPU).
  struct At {
    Value index;
    Value mask;
  };
  using RowFn = function_ref<void(OpBuilder &, Location, const Row &)>;
  using TermFn = function_ref<Value(OpBuilder &, Location, const At &)>;
  using VisitFn = function_ref<void(OpBuilder &, Location, const At &)>;

  /// An operand as the target's loops read it (the CPU copies a strided
  /// one into a contiguous buffer), before the rows.
  virtual Value prepare(OpBuilder &b, Location loc, Value memref) {
    return memref;
  }
  /// Runs `body` for every row of `input` [..., D], rows in parallel.
  virtual void forEachRow(OpBuilder &b, Location loc, Value input,
                          RowFn body) = 0;
  /// The f32 scalar reduction of `term` over the row, from `init`.
  virtual Value reduce(OpBuilder &b, Location loc, const Row &row,
                       RowReduction kind, double init, TermFn term) = 0;
  /// Σ term² over the row (fused multiply-adds where the target has them).
  virtual Value reduceSquares(OpBuilder &b, Location loc, const Row &row,
                              TermFn term) = 0;
  /// Runs `body` over the row's positions.
  virtual void forEach(OpBuilder &b, Location loc, const Row &row,
                       VisitFn body) = 0;
  /// `memref` at the position as f32: [lead..., index] for a row operand,
  /// [index] for a [D] parameter (`perRow` false); `fill` past the row.
  virtual Value load(OpBuilder &b, Location loc, const Row &row, Value memref,
                     const At &at, bool perRow, double fill) = 0;
  virtual void store(OpBuilder &b, Location loc, const Row &row, Value value,
                     Value memref, const At &at) = 0;
  /// A row scalar as a value of the row (a splat on the CPU).
  virtual Value broadcast(OpBuilder &b, Location loc, Value scalar) = 0;
  /// `value` with the positions past the row zeroed (the CPU's tail lanes).
  virtual Value zeroTail(OpBuilder &b, Location loc, const At &at,
                         Value value) = 0;
  /// The indices of the position in `memref`: [lead..., index] for a row
  /// operand, [index] for a [D] parameter (`perRow` false).
  static SmallVector<Value> indices(const Row &row, const At &at, bool perRow);

  /// Softmax keeps exp(x - max) in the output between its passes (the row
  /// stays in cache), or recomputes it from the input (saving a global
  /// write and read).
  virtual bool keepsExponentials() const = 0;
};

/// out = softmax(input) over the last axis; a row of -inf gives zeros.
void emitRowSoftmax(RowKernelTarget &target, OpBuilder &b, Location loc,
                    Value input, Value out);
/// out = (x - mean) · rsqrt(var + eps) · scale + bias, x = input + residual.
void emitRowLayerNorm(RowKernelTarget &target, OpBuilder &b, Location loc,
                      double eps, Value input, Value scale, Value bias,
                      Value residual, Value out);
/// out = x · rsqrt(mean(x²) + eps) · scale, x = input + residual.
void emitRowRmsNorm(RowKernelTarget &target, OpBuilder &b, Location loc,
                    double eps, Value input, Value scale, Value residual,
                    Value out);

/// How a target holds one query row's scores of a tile of keys in flash
/// attention: one key per lane of a warp on the GPU. (The CPU's attention is
/// the C micro-kernels of lib/Target/CPU/MicroKernels/Attention.c, which
/// apply the same terms.)
class ScoreLanes {
public:
  virtual ~ScoreLanes() = default;
  /// The reduction of `scores` over the tile, as an f32 scalar.
  virtual Value reduce(OpBuilder &b, Location loc, RowReduction kind,
                       Value scores) = 0;
  /// A row scalar as a value of the lanes.
  virtual Value broadcast(OpBuilder &b, Location loc, Value scalar) = 0;
  /// An i32 scalar as a value of the integer lanes (the tile's key indices:
  /// a vector of i32 on the CPU, one i32 per thread on the GPU).
  virtual Value broadcastInt(OpBuilder &b, Location loc, Value scalar) = 0;
  /// table[row, cols[lane]] for each lane: f32 lanes from an f32 memref,
  /// `row` an index, `cols` i32 lanes in range.
  virtual Value gather(OpBuilder &b, Location loc, Value table, Value row,
                       Value cols) = 0;
};

/// Where one query row's scores of a key tile sit.
struct ScorePositions {
  /// The tile's key indices j, as i32 lanes.
  Value keys;
  /// Lanes that hold a key (j < Tk, inside the tile), as i1 lanes.
  Value valid;
  /// The key index aligned with the query row: i + (Tk - Tq), an index.
  Value query;
};

/// tfc.attention's position terms (TfcOps.td): limits and relative biases.
struct PositionTerms {
  bool causal = false;
  /// Keys j > query - window only; 0 for no window.
  int64_t window = 0;
  /// ALiBi: slope · (j - query), the head's f32 slope; null for none.
  Value alibiSlope;
  /// T5: relativeBias[min(head, rows - 1), clamp(j - query, -R, R) + R], an
  /// f32 memref [rows, 2R + 1] with R = `relative`; null for none.
  Value relativeBias;
  int64_t relative = 0;
  /// The query head (an index): the bias table's row.
  Value head;
};

/// Adds the relative biases to one row's `scores` (f32 lanes: q·k·scale plus
/// the mask) and sets the keys the row may not see (past the keys, after it
/// when causal, before its window) to -inf, with the distance j - query in
/// 32 bits.
Value emitPositionTerms(ScoreLanes &lanes, OpBuilder &b, Location loc,
                        const ScorePositions &pos, const PositionTerms &terms,
                        Value scores);

/// One row's online-softmax state after a tile of scores.
struct OnlineSoftmaxStep {
  Value max;   // m' = max(m, max_j s_j)
  Value alpha; // the factor of what was accumulated: exp(m - m')
  Value probs; // p_j = exp(s_j - m')
  Value sum;   // l' = l·α + Σ_j p_j
};

/// The online softmax of flash attention, per row and tile: from the
/// running max `max` and sum `sum`, and the tile's (masked: -inf) `scores`.
/// While every key so far is masked (m' = -inf) nothing accumulates: α = 1,
/// p = 0.
OnlineSoftmaxStep emitOnlineSoftmaxStep(ScoreLanes &lanes, OpBuilder &b,
                                        Location loc, Value max, Value sum,
                                        Value scores);

/// 1 / sum, or 0 when the sum is zero or less (a row whose keys were all
/// masked): how softmax and attention normalise. A NaN sum (a NaN or +inf
/// score) gives NaN, so that the whole row is NaN, as PyTorch's is, rather
/// than zeros around the NaN lane.
Value emitSafeReciprocal(OpBuilder &b, Location loc, Value sum);

} // namespace mlir::tfc

#endif // TFC_CONVERSION_ROWKERNELS_H
