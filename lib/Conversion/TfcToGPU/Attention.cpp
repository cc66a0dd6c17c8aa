//===- Attention.cpp - Flash attention on the GPU -------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// softmax(Q·Kᵀ·scale + mask)·V as one kernel that never materialises the
// Tq x Tk scores, on f32 FMAs: the kernel for what the tensor-core one
// (MmaAttention.cpp: f16/bf16, head sizes multiples of 16) does not take,
// f32 among them. One block per (tile of kBlockQ query rows, head, batch):
// kWarps warps of which each owns kRowsPerWarp query rows. The block walks
// the keys in tiles of 32 (one key per lane):
//
//  1. the K and V tiles are staged in shared memory (K rows padded by one
//     float so that lane j reading row j hits distinct banks), the Q tile,
//     pre-multiplied by the scale, once before the loop;
//  2. lane j computes the score of key j for each of its warp's rows
//     (D FMAs, K read once for all rows), adds the mask and the position
//     biases of its distance to the row (T5's bias by distance, ALiBi's
//     slope times distance) and applies the causal, window and length
//     limits (−inf): emitPositionTerms (RowKernels.h);
//  3. the online softmax per row (emitOnlineSoftmaxStep, RowKernels.h):
//     m' = max(m, warp-max(s)),
//     α = exp(m − m'), p = exp(s − m'), l = l·α + warp-sum(p), o = o·α,
//     in registers, with butterfly shuffles;
//  4. o += p·V_tile: for each key j, p_j is broadcast from lane j
//     (shfl.sync.idx) and each lane accumulates its 32-column slices of Dv.
//
// At the end each lane writes o / l (0 for a row whose keys were all
// masked). With `causal` the key loop of a block ends at the last key its
// last row may see: tiles above the diagonal are never loaded; with a
// window it starts at the tile of the first key its first row may see.
// Grouped-query attention reads key/value head h / (H / Hkv). Memory is
// O(kBlockQ · D) of shared memory per block, linear in the sequence length
// overall.
//
//===----------------------------------------------------------------------===//

#include "AttentionCommon.h"
#include "GpuKernelUtils.h"
#include "GpuKernels.h"

#include "tfc/Conversion/RowKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <limits>

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::gpuk;

namespace {

constexpr int64_t kWarps = 4;
constexpr int64_t kRowsPerWarp = 4;
constexpr int64_t kBlockQ = kWarps * kRowsPerWarp;
constexpr int64_t kBlockK = kWarpSize;
constexpr int64_t kThreads = kWarps * kWarpSize;
/// The largest head size the kernel's static shared tiles are sized for.
constexpr int64_t kMaxHeadDim = 128;

Value addI(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::AddIOp::create(b, loc, x, y);
}
Value mulI(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::MulIOp::create(b, loc, x, y);
}
Value cmpI(OpBuilder &b, Location loc, arith::CmpIPredicate p, Value x,
           Value y) {
  return arith::CmpIOp::create(b, loc, p, x, y);
}
Value select(OpBuilder &b, Location loc, Value c, Value x, Value y) {
  return arith::SelectOp::create(b, loc, c, x, y);
}

/// A row's scores, one key per lane of the warp.
struct WarpLanes final : ScoreLanes {
  Value reduce(OpBuilder &b, Location loc, RowReduction kind,
               Value scores) override {
    return warpReduce(b, loc, scores,
                      kind == RowReduction::Add ? Reduction::Add
                                                : Reduction::Max);
  }
  Value broadcast(OpBuilder &, Location, Value scalar) override {
    return scalar;
  }
  Value broadcastInt(OpBuilder &, Location, Value scalar) override {
    return scalar;
  }
  Value gather(OpBuilder &b, Location loc, Value table, Value row,
               Value col) override {
    return loadF32(
        b, loc, table,
        {row, arith::IndexCastOp::create(b, loc, b.getIndexType(), col)});
  }
};

/// Cooperatively copies a tile of `rows` x `cols` elements into `shared`
/// ([rows][>= cols]): element (r, c) is `load(r, c)` (an f32, zero where out
/// of range).
void stage(OpBuilder &b, Location loc, Value thread, Value shared, int64_t rows,
           int64_t cols,
           function_ref<Value(OpBuilder &, Location, Value, Value)> load) {
  Value count = indexConst(b, loc, rows * cols);
  forLoop(b, loc, thread, count, indexConst(b, loc, kThreads),
          [&](OpBuilder &b, Location l, Value e) {
            Value r = arith::DivUIOp::create(b, l, e, indexConst(b, l, cols));
            Value c = arith::RemUIOp::create(b, l, e, indexConst(b, l, cols));
            memref::StoreOp::create(b, l, load(b, l, r, c), shared,
                                    ValueRange{r, c});
          });
}

} // namespace

LogicalResult gpuk::emitAttention(OpBuilder &b, Location loc,
                                  kernel::AttentionOp op, Value query,
                                  Value key, Value value, Value mask,
                                  Value relBias, Value out) {
  if (mmaAttentionApplies(op, query, key, value))
    return emitMmaAttention(b, loc, op, query, key, value, mask, relBias, out);
  double softcap = op.getSoftcap() ? op.getSoftcap()->convertToDouble() : 0.0;
  auto qType = cast<MemRefType>(query.getType());
  auto vType = cast<MemRefType>(value.getType());
  int64_t headDim = qType.getDimSize(3), valueDim = vType.getDimSize(3);
  if (ShapedType::isDynamic(headDim) || ShapedType::isDynamic(valueDim) ||
      headDim > kMaxHeadDim || valueDim > kMaxHeadDim)
    return op.emitError("the GPU attention kernel needs static head sizes of "
                        "at most ")
           << kMaxHeadDim << "; got query " << qType << " and value " << vType;
  int64_t chunks = (valueDim + kWarpSize - 1) / kWarpSize;
  int64_t paddedValueDim = chunks * kWarpSize;
  double scale = op.getScale().convertToDouble();
  MLIRContext *ctx = b.getContext();
  const double negInf = -std::numeric_limits<double>::infinity();

  Value one = indexConst(b, loc, 1);
  AttentionShape shape = attentionShape(b, loc, query, key);
  Value tq = shape.tq, tk = shape.tk;

  launch(
      b, loc, {ceilDiv(b, loc, tq, kBlockQ), shape.runHeads, shape.batch},
      kThreads,
      {sharedType(ctx, {kBlockQ, headDim}),
       sharedType(ctx, {kBlockK, headDim + 1}),
       sharedType(ctx, {kBlockK, paddedValueDim})},
      [&](OpBuilder &b, Location l, const LaunchIds &ids) {
        Value qs = ids.shared[0], ks = ids.shared[1], vs = ids.shared[2];
        Value t = ids.thread;
        Value warpSize = indexConst(b, l, kWarpSize);
        Value lane = arith::RemUIOp::create(b, l, t, warpSize);
        Value warp = arith::DivUIOp::create(b, l, t, warpSize);
        Value h = ids.block[1], bi = ids.block[2];
        Value hk = kvHeadOf(b, l, shape, h);
        Value q0 = mulI(b, l, ids.block[0], indexConst(b, l, kBlockQ));
        Value tqLast = arith::SubIOp::create(b, l, tq, one);
        Value tkLast = arith::SubIOp::create(b, l, tk, one);
        Value zeroF = f32Const(b, l, 0.0);
        PositionTerms terms = attentionTerms(b, l, op, shape, h, relBias);

        // Q tile, scaled once.
        stage(b, l, t, qs, kBlockQ, headDim,
              [&](OpBuilder &b, Location l, Value r, Value d) {
                Value i = addI(b, l, q0, r);
                Value inside = cmpI(b, l, arith::CmpIPredicate::ult, i, tq);
                Value v =
                    loadF32(b, l, query, {bi, h, minIndex(b, l, i, tqLast), d});
                v = arith::MulFOp::create(b, l, v, f32Const(b, l, scale));
                return select(b, l, inside, v, zeroF);
              });

        // The keys some row of the block sees (AttentionCommon.h).
        KeyRange keys =
            attentionKeyRange(b, l, op, shape, q0, kBlockQ, kBlockK);

        // State per row: m, l, then o per 32-column chunk.
        SmallVector<Value> init;
        for (int64_t r = 0; r < kRowsPerWarp; ++r) {
          init.push_back(f32Const(b, l, negInf));
          init.push_back(zeroF);
        }
        for (int64_t r = 0; r < kRowsPerWarp * chunks; ++r)
          init.push_back(zeroF);
        auto mAt = [](int64_t r) { return 2 * r; };
        auto lAt = [](int64_t r) { return 2 * r + 1; };
        auto oAt = [&](int64_t r, int64_t c) {
          return 2 * kRowsPerWarp + r * chunks + c;
        };
        SmallVector<Value> rowIdx;
        for (int64_t r = 0; r < kRowsPerWarp; ++r)
          rowIdx.push_back(
              addI(b, l, q0,
                   addI(b, l, mulI(b, l, warp, indexConst(b, l, kRowsPerWarp)),
                        indexConst(b, l, r))));

        SmallVector<Value> state = forLoopReduce(
            b, l, keys.start, keys.end, indexConst(b, l, kBlockK), init,
            [&](OpBuilder &b, Location l, Value kt, ValueRange state) {
              SmallVector<Value> next(state);
              stage(b, l, t, ks, kBlockK, headDim,
                    [&](OpBuilder &b, Location l, Value j, Value d) {
                      Value kj = addI(b, l, kt, j);
                      Value inside =
                          cmpI(b, l, arith::CmpIPredicate::ult, kj, tk);
                      Value v = loadF32(
                          b, l, key, {bi, hk, minIndex(b, l, kj, tkLast), d});
                      return select(b, l, inside, v, zeroF);
                    });
              stage(b, l, t, vs, kBlockK, paddedValueDim,
                    [&](OpBuilder &b, Location l, Value j, Value d) {
                      Value kj = addI(b, l, kt, j);
                      Value inside = arith::AndIOp::create(
                          b, l, cmpI(b, l, arith::CmpIPredicate::ult, kj, tk),
                          cmpI(b, l, arith::CmpIPredicate::ult, d,
                               indexConst(b, l, valueDim)));
                      Value dc =
                          minIndex(b, l, d, indexConst(b, l, valueDim - 1));
                      Value v =
                          loadF32(b, l, value,
                                  {bi, hk, minIndex(b, l, kj, tkLast), dc});
                      return select(b, l, inside, v, zeroF);
                    });
              gpu::BarrierOp::create(b, l);

              // Scores of key kt + lane for the warp's rows.
              Value kj = addI(b, l, kt, lane);
              SmallVector<Value> scoreInit(kRowsPerWarp, zeroF);
              SmallVector<Value> scores = forLoopReduce(
                  b, l, indexConst(b, l, 0), indexConst(b, l, headDim), one,
                  scoreInit,
                  [&](OpBuilder &b, Location l, Value d, ValueRange acc) {
                    Value kv =
                        memref::LoadOp::create(b, l, ks, ValueRange{lane, d});
                    SmallVector<Value> s;
                    for (int64_t r = 0; r < kRowsPerWarp; ++r) {
                      Value qr = arith::SubIOp::create(b, l, rowIdx[r], q0);
                      Value qv =
                          memref::LoadOp::create(b, l, qs, ValueRange{qr, d});
                      s.push_back(math::FmaOp::create(b, l, qv, kv, acc[r]));
                    }
                    return s;
                  });

              SmallVector<Value> probs;
              for (int64_t r = 0; r < kRowsPerWarp; ++r) {
                Value i = rowIdx[r];
                Value s = scores[r];
                if (softcap > 0.0) // Gemma 2: softcap · tanh(s / softcap)
                  s = arith::MulFOp::create(
                      b, l,
                      math::TanhOp::create(
                          b, l,
                          arith::MulFOp::create(b, l, s,
                                                f32Const(b, l, 1.0 / softcap))),
                      f32Const(b, l, softcap));
                if (mask)
                  s = arith::AddFOp::create(
                      b, l, s, loadMaskTerm(b, l, mask, shape, bi, h, i, kj));
                WarpLanes lanes;
                ScorePositions positions;
                positions.keys =
                    arith::IndexCastOp::create(b, l, b.getI32Type(), kj);
                positions.valid =
                    cmpI(b, l, arith::CmpIPredicate::ult, kj, tk);
                positions.query = arith::SubIOp::create(b, l, addI(b, l, i, tk),
                                                        tq);
                s = emitPositionTerms(lanes, b, l, positions, terms, s);
                OnlineSoftmaxStep step = emitOnlineSoftmaxStep(
                    lanes, b, l, state[mAt(r)], state[lAt(r)], s);
                probs.push_back(step.probs);
                next[mAt(r)] = step.max;
                next[lAt(r)] = step.sum;
                for (int64_t c = 0; c < chunks; ++c)
                  next[oAt(r, c)] =
                      arith::MulFOp::create(b, l, state[oAt(r, c)], step.alpha);
              }

              // o += p · V_tile, p_j broadcast from lane j.
              SmallVector<Value> oInit;
              for (int64_t r = 0; r < kRowsPerWarp; ++r)
                for (int64_t c = 0; c < chunks; ++c)
                  oInit.push_back(next[oAt(r, c)]);
              SmallVector<Value> o = forLoopReduce(
                  b, l, indexConst(b, l, 0), indexConst(b, l, kBlockK), one,
                  oInit,
                  [&](OpBuilder &b, Location l, Value j, ValueRange acc) {
                    SmallVector<Value> vv;
                    for (int64_t c = 0; c < chunks; ++c)
                      vv.push_back(memref::LoadOp::create(
                          b, l, vs,
                          ValueRange{j,
                                     addI(b, l, lane,
                                          indexConst(b, l, c * kWarpSize))}));
                    Value j32 =
                        arith::IndexCastOp::create(b, l, b.getI32Type(), j);
                    SmallVector<Value> res;
                    for (int64_t r = 0; r < kRowsPerWarp; ++r) {
                      Value pj =
                          gpu::ShuffleOp::create(b, l, probs[r], j32,
                                                 i32Const(b, l, kWarpSize),
                                                 gpu::ShuffleMode::IDX)
                              .getShuffleResult();
                      for (int64_t c = 0; c < chunks; ++c)
                        res.push_back(math::FmaOp::create(b, l, pj, vv[c],
                                                          acc[r * chunks + c]));
                    }
                    return res;
                  });
              for (int64_t r = 0; r < kRowsPerWarp; ++r)
                for (int64_t c = 0; c < chunks; ++c)
                  next[oAt(r, c)] = o[r * chunks + c];
              // The tiles are not overwritten before every warp used them.
              gpu::BarrierOp::create(b, l);
              return next;
            });

        for (int64_t r = 0; r < kRowsPerWarp; ++r) {
          Value i = rowIdx[r];
          Value inv = emitSafeReciprocal(b, l, state[lAt(r)]);
          for (int64_t c = 0; c < chunks; ++c) {
            Value d = addI(b, l, lane, indexConst(b, l, c * kWarpSize));
            Value inside = arith::AndIOp::create(
                b, l, cmpI(b, l, arith::CmpIPredicate::ult, i, tq),
                cmpI(b, l, arith::CmpIPredicate::ult, d,
                     indexConst(b, l, valueDim)));
            Value v = arith::MulFOp::create(b, l, state[oAt(r, c)], inv);
            ifThen(b, l, inside, [&](OpBuilder &b, Location l) {
              storeF32(b, l, v, out, ValueRange{bi, h, i, d});
            });
          }
        }
      });
  return success();
}
