//===- Attention.cpp - Attention on the CPU -------------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// softmax(Q·Kᵀ·scale + mask)·V on one of three paths chosen at run time
// (emitAttention): at most kAttentionDecodeRows query rows, the decode C
// micro-kernel (flash-decoding over splits of the keys); else the prefill C
// micro-kernel (a block of query rows keeps the scores of a chunk of
// TFC_UK_ATTENTION_PREFILL_KEYS keys in L1: register-blocked products, an
// online softmax across chunks; lib/Target/CPU/MicroKernels/Attention.c);
// both need run-time head counts that divide, and where they do not, flash
// attention, the loop nest below, which maps any count. None materialises
// the Tq x Tk scores.
// One parallel task per (batch, head, block of kAttentionBlockQ query rows).
// The task walks the keys in tiles of kAttentionBlockK = 16 (one vector of
// scores per query row) keeping, per row, the running maximum m, the running
// sum l and the unnormalised output o:
//   s = q·K_tileᵀ·scale + mask   (K transposed once per call into tiles of
//                                 D x 16, so the scores of the block's rows
//                                 are D steps of one tile load and one FMA
//                                 per row, in independent chains; blocks of
//                                 1-2 rows, i.e. decoding, take 16 dot
//                                 products of contiguous rows instead)
//   m' = max(m, max(s)); α = exp(m − m'); p = exp(s − m')
//   l = l·α + Σp;  o = o·α + p·V_tile  (for all rows of the block at once:
//                                       one load of V per key and chunk)
// and writes o / l at the end. Memory is O(block · D) per task, linear in
// the sequence length overall. With `causal` the key loop of a block stops
// at the last key its last row may see (tiles above the diagonal are never
// visited) and lanes past a row's diagonal are -inf (the position terms and
// the online softmax step are the ones the GPU kernel uses too:
// emitPositionTerms, emitOnlineSoftmaxStep in RowKernels.h). A row whose keys
// are all masked keeps l = 0 and yields zeros. Grouped-query attention maps
// query head h to key/value head h / (H / Hkv).
//
//===----------------------------------------------------------------------===//

#include "KernelConfig.h"
#include "KernelUtils.h"
#include "Kernels.h"

#include "tfc/Conversion/RowKernels.h"
#include "tfc/Dialect/Tfc/IR/PositionBias.h"
#include "tfc/Target/CPU/MicroKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <limits>

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::cpu;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Value dim(OpBuilder &b, Location loc, Value m, int64_t d) {
  return memref::DimOp::create(b, loc, m, d);
}

Value addI(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::AddIOp::create(b, loc, x, y);
}

Value subI(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::SubIOp::create(b, loc, x, y);
}

/// A row's scores of a key tile as one vector of lanes.
struct VectorLanes final : ScoreLanes {
  Value reduce(OpBuilder &b, Location loc, RowReduction kind,
               Value scores) override {
    return kind == RowReduction::Add ? reduceAdd(b, loc, scores)
                                     : reduceMax(b, loc, scores);
  }
  Value broadcast(OpBuilder &b, Location loc, Value scalar) override {
    return splat(b, loc, scalar);
  }
  Value broadcastInt(OpBuilder &b, Location loc, Value scalar) override {
    return vector::BroadcastOp::create(
        b, loc, VectorType::get({kAttentionBlockK}, b.getI32Type()), scalar);
  }
  Value gather(OpBuilder &b, Location loc, Value table, Value row,
               Value cols) override {
    auto all = VectorType::get({kAttentionBlockK}, b.getI1Type());
    Value zero = indexConst(b, loc, 0);
    return vector::GatherOp::create(
        b, loc, VectorType::get({kAttentionBlockK}, b.getF32Type()), table,
        ValueRange{row, zero}, cols,
        arith::ConstantOp::create(b, loc, all,
                                  DenseElementsAttr::get(all, true)),
        splatConst(b, loc, 0.0));
  }
};

void forRange(OpBuilder &b, Location loc, Value lb, Value ub, Value step,
              function_ref<void(OpBuilder &, Location, Value)> body) {
  scf::ForOp::create(b, loc, lb, ub, step, ValueRange{},
                     [&](OpBuilder &b, Location l, Value iv, ValueRange) {
                       body(b, l, iv);
                       scf::YieldOp::create(b, l);
                     });
}

} // namespace

namespace {

/// The sizes both kernels read, computed once before choosing one:
/// q [batch, heads, tq, d], k [batch, kvHeads, tk, d], v [.., .., tk, dv].
/// `runHeads` is 0 without key/value heads (then no task runs and no key is
/// read: run-time head counts are not checked against each other).
struct AttentionSizes {
  Value batch, heads, tq, d, kvHeads, tk, dv, runHeads;

  AttentionSizes(OpBuilder &b, Location loc, Value query, Value key,
                 Value value)
      : batch(dim(b, loc, query, 0)), heads(dim(b, loc, query, 1)),
        tq(dim(b, loc, query, 2)), d(dim(b, loc, query, 3)),
        kvHeads(dim(b, loc, key, 1)), tk(dim(b, loc, key, 2)),
        dv(dim(b, loc, value, 3)) {
    Value zero = indexConst(b, loc, 0);
    runHeads = arith::SelectOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, kvHeads, zero),
        zero, heads);
  }
};

/// The flash-attention loop nest (the file comment); operands with unit
/// innermost strides.
void emitFlashAttention(OpBuilder &b, Location loc, kernel::AttentionOp op,
                        const AttentionSizes &sizes, Value query, Value key,
                        Value value, Value mask, Value relBias, Value out) {
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type();
  VectorType vt = vecType(ctx);
  double scale = op.getScale().convertToDouble();
  bool causal = op.getCausal();
  int64_t window = op.getWindow() ? static_cast<int64_t>(*op.getWindow()) : 0;
  int64_t relative = op.getRelativeDistance();
  double alibi = op.getAlibi() ? op.getAlibi()->convertToDouble() : 0.0;

  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  Value batch = sizes.batch, heads = sizes.heads, tq = sizes.tq, d = sizes.d;
  Value kvHeads = sizes.kvHeads, tk = sizes.tk, dv = sizes.dv;
  // Run-time head counts are not checked against each other: no division
  // by 0 and no key/value head past the last.
  Value group = arith::MaxUIOp::create(
      b, loc,
      arith::DivUIOp::create(b, loc, heads,
                             arith::MaxUIOp::create(b, loc, kvHeads, one)),
      one);
  Value lastKvHead = subI(b, loc, kvHeads, one);
  Value runHeads = sizes.runHeads;
  Value shift = subI(b, loc, tk, tq);
  Value blockQ = indexConst(b, loc, kAttentionBlockQ);
  Value blockK = indexConst(b, loc, kAttentionBlockK);
  Value qBlocks = ceilDiv(b, loc, tq, kAttentionBlockQ);

  // The mask's indices for (b, h, i, j0): aligned to the trailing dims of
  // [B, H, Tq, Tk]; a static 1 broadcasts.
  auto maskType = mask ? cast<MemRefType>(mask.getType()) : MemRefType();
  auto maskIndex = [&](OpBuilder &b, Location l, ValueRange full) {
    SmallVector<Value> idx;
    int64_t offset = 4 - maskType.getRank();
    for (int64_t k = 0; k < maskType.getRank(); ++k)
      idx.push_back(maskType.getDimSize(k) == 1 ? indexConst(b, l, 0)
                                                : full[k + offset]);
    return idx;
  };
  bool maskBroadcastsKeys =
      mask && maskType.getDimSize(maskType.getRank() - 1) == 1;

  // Kᵀ in tiles, [batch, kvHeads, tiles, d, kAttentionBlockK], zero past
  // the last key: transposed once per call (scalar copies, as many as K
  // has elements) and read by every block of query rows, instead of once
  // per block and tile. Memory as K's, linear in the sequence length; empty
  // when every block is a direct one (at most kAttentionDirectRows rows).
  int64_t dyn = ShapedType::kDynamic;
  Value kTiles = arith::SelectOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, tq,
                            indexConst(b, loc, kAttentionDirectRows)),
      ceilDiv(b, loc, tk, kAttentionBlockK), zero);
  Value ktAll = memref::AllocOp::create(
      b, loc, MemRefType::get({dyn, dyn, dyn, dyn, kAttentionBlockK}, f32),
      ValueRange{batch, kvHeads, kTiles, d}, b.getI64IntegerAttr(64));
  scf::ParallelOp::create(
      b, loc, ValueRange{zero, zero, zero}, ValueRange{batch, kvHeads, kTiles},
      ValueRange{one, one, one}, [&](OpBuilder &b, Location l, ValueRange ivs) {
        Value j0 = arith::MulIOp::create(b, l, ivs[2], blockK);
        Value tileKeys =
            arith::MinUIOp::create(b, l, blockK, subI(b, l, tk, j0));
        forRange(
            b, l, zero, blockK, one, [&](OpBuilder &b, Location l, Value jj) {
              Value inside = arith::CmpIOp::create(
                  b, l, arith::CmpIPredicate::ult, jj, tileKeys);
              Value jSafe =
                  arith::SelectOp::create(b, l, inside, addI(b, l, j0, jj), j0);
              forRange(b, l, zero, d, one,
                       [&](OpBuilder &b, Location l, Value dd) {
                         Value v = memref::LoadOp::create(
                             b, l, key, ValueRange{ivs[0], ivs[1], jSafe, dd});
                         v = arith::SelectOp::create(b, l, inside, v,
                                                     f32Const(b, l, 0.0));
                         memref::StoreOp::create(
                             b, l, v, ktAll,
                             ValueRange{ivs[0], ivs[1], ivs[2], dd, jj});
                       });
            });
      });

  scf::ParallelOp::create(
      b, loc, ValueRange{zero, zero, zero},
      ValueRange{batch, runHeads, qBlocks}, ValueRange{one, one, one},
      [&](OpBuilder &b, Location loc, ValueRange ivs) {
        // Scratch lives for one task: stack memory released per iteration.
        auto scope =
            memref::AllocaScopeOp::create(b, loc, TypeRange{}, ValueRange{});
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(&scope.getBodyRegion().emplaceBlock());
          Value bi = ivs[0], h = ivs[1];
          PositionTerms terms;
          terms.causal = causal;
          terms.window = window;
          terms.alibiSlope =
              alibi > 0.0 ? buildAlibiSlope(b, loc, h, heads, alibi) : Value();
          terms.relativeBias = relBias;
          terms.relative = relative;
          terms.head = h;
          Value hk = arith::MinUIOp::create(
              b, loc, arith::DivUIOp::create(b, loc, h, group), lastKvHead);
          Value q0 = arith::MulIOp::create(b, loc, ivs[2], blockQ);
          Value rows =
              arith::MinUIOp::create(b, loc, blockQ, subI(b, loc, tq, q0));
          // Keys [0, kEnd) can be seen by some row of the block.
          Value kEnd = tk;
          if (causal) {
            // last row q0 + rows - 1 sees keys <= q0 + rows - 1 + shift.
            Value lim = addI(b, loc, addI(b, loc, q0, rows), shift);
            Value pos = arith::MaxSIOp::create(b, loc, lim, zero);
            kEnd = arith::MinSIOp::create(b, loc, pos, tk);
          }
          // With a window, keys before the first row's window are skipped:
          // the tiles start at the tile holding key q0 + shift - window + 1.
          Value kStart = zero;
          if (window > 0) {
            Value lo = subI(b, loc, addI(b, loc, q0, shift),
                            indexConst(b, loc, window - 1));
            lo = arith::MaxSIOp::create(b, loc, lo, zero);
            kStart = arith::MulIOp::create(
                b, loc, arith::DivUIOp::create(b, loc, lo, blockK), blockK);
          }
          auto scratch = [&](ArrayRef<int64_t> shape, ValueRange dynamic) {
            return memref::AllocaOp::create(b, loc, MemRefType::get(shape, f32),
                                            dynamic, b.getI64IntegerAttr(64))
                .getResult();
          };
          Value acc = scratch({kAttentionBlockQ, dyn}, dv);
          Value mRow = scratch({kAttentionBlockQ}, {});
          Value lRow = scratch({kAttentionBlockQ}, {});
          Value pRow = scratch({kAttentionBlockQ, kAttentionBlockK}, {});
          Value sBlock = scratch({kAttentionBlockQ, kAttentionBlockK}, {});
          Value alphaRow = scratch({kAttentionBlockQ}, {});
          // Every row of the scratch, also those past `rows`: the block
          // P·V below runs all kAttentionBlockQ rows (p = 0 and α = 1 keep
          // the unused ones at 0, never NaN or denormal garbage).
          forRange(
              b, loc, zero, blockQ, one,
              [&](OpBuilder &b, Location l, Value r) {
                memref::StoreOp::create(b, l, f32Const(b, l, -kInf), mRow, r);
                memref::StoreOp::create(b, l, f32Const(b, l, 0.0), lRow, r);
                memref::StoreOp::create(b, l, f32Const(b, l, 1.0), alphaRow, r);
                vector::StoreOp::create(b, l, splatConst(b, l, 0.0), pRow,
                                        ValueRange{r, zero});
                forChunks(b, l, dv,
                          [&](OpBuilder &b, Location l, Value c, Value m) {
                            maskedStore(b, l, splatConst(b, l, 0.0), acc,
                                        ValueRange{r, c}, m);
                          });
              });
          // Register groups of rows for the block loops: each row is one
          // FMA chain, and a group's chains run side by side (16 zmm of 32;
          // with AVX2 a 16-wide vector is two ymm, so 4 rows of 16).
          int64_t rowGroup =
              gemmConfigFor(op).vectorWidth >= kVectorWidth ? 8 : 4;
          Value lastRow = subI(b, loc, tq, one);
          // Lane j of the key tile.
          SmallVector<int32_t> lanes;
          for (int64_t j = 0; j < kAttentionBlockK; ++j)
            lanes.push_back(j);
          auto laneType = VectorType::get({kAttentionBlockK}, b.getI32Type());
          Value laneIds = arith::ConstantOp::create(
              b, loc, laneType,
              DenseElementsAttr::get(laneType, ArrayRef(lanes)));

          // Blocks of at most kAttentionDirectRows rows (decoding: one new
          // token per step) take each score as a dot product of contiguous
          // rows of Q and K, without transposing the key tile: the
          // transpose (D x 16 scalar copies) is only worth it when many
          // rows share it.
          Value direct =
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, rows,
                                    indexConst(b, loc, kAttentionDirectRows));
          forRange(
              b, loc, kStart, kEnd, blockK,
              [&](OpBuilder &b, Location l, Value j0) {
                Value tileKeys =
                    arith::MinUIOp::create(b, l, blockK, subI(b, l, kEnd, j0));
                // Scores of every row of the block from the transposed tile:
                // per dd one load of the tile feeds one FMA per row, in
                // independent chains (rows past `rows` read the last query row
                // and are never used).
                auto blockScores = scf::IfOp::create(
                    b, l,
                    arith::XOrIOp::create(
                        b, l, direct, arith::ConstantIntOp::create(b, l, 1, 1)),
                    /*withElseRegion=*/false);
                {
                  OpBuilder::InsertionGuard guard(b);
                  b.setInsertionPointToStart(
                      &blockScores.getThenRegion().front());
                  Value tile = arith::DivUIOp::create(b, l, j0, blockK);
                  for (int64_t g0 = 0; g0 < kAttentionBlockQ; g0 += rowGroup) {
                    SmallVector<Value> qRows;
                    for (int64_t r = g0; r < g0 + rowGroup; ++r)
                      qRows.push_back(arith::MinUIOp::create(
                          b, l, addI(b, l, q0, indexConst(b, l, r)), lastRow));
                    SmallVector<Value> init(rowGroup, splatConst(b, l, 0.0));
                    auto sLoop = scf::ForOp::create(
                        b, l, zero, d, one, init,
                        [&](OpBuilder &b, Location l, Value dd,
                            ValueRange acc) {
                          Value kv = vector::LoadOp::create(
                              b, l, vt, ktAll,
                              ValueRange{bi, hk, tile, dd, zero});
                          SmallVector<Value> next;
                          for (int64_t r = 0; r < rowGroup; ++r) {
                            Value qv = memref::LoadOp::create(
                                b, l, query, ValueRange{bi, h, qRows[r], dd});
                            next.push_back(math::FmaOp::create(
                                b, l, splat(b, l, qv), kv, acc[r]));
                          }
                          scf::YieldOp::create(b, l, next);
                        });
                    for (int64_t r = 0; r < rowGroup; ++r)
                      vector::StoreOp::create(
                          b, l, sLoop.getResult(r), sBlock,
                          ValueRange{indexConst(b, l, g0 + r), zero});
                  }
                }
                Value j0i32 =
                    arith::IndexCastOp::create(b, l, b.getI32Type(), j0);
                Value keyIds = arith::AddIOp::create(
                    b, l, laneIds,
                    vector::BroadcastOp::create(b, l, laneType, j0i32));
                Value inTile = laneMask(b, l, tileKeys);
                forRange(
                    b, l, zero, rows, one,
                    [&](OpBuilder &b, Location l, Value r) {
                      Value i = addI(b, l, q0, r);
                      // Scores of row i against the tile: from the transposed
                      // tile (one FMA of 16 scores per dd), or key by key as
                      // dot products (lanes past the tile score 0 and are
                      // masked below).
                      auto scores =
                          scf::IfOp::create(b, l, TypeRange{vt}, direct,
                                            /*withElseRegion=*/true);
                      {
                        OpBuilder::InsertionGuard guard(b);
                        b.setInsertionPointToStart(
                            &scores.getThenRegion().front());
                        auto perKey = scf::ForOp::create(
                            b, l, zero, blockK, one,
                            ValueRange{splatConst(b, l, 0.0)},
                            [&](OpBuilder &b, Location l, Value jj,
                                ValueRange s) {
                              Value inside = arith::CmpIOp::create(
                                  b, l, arith::CmpIPredicate::ult, jj,
                                  tileKeys);
                              Value jSafe = arith::SelectOp::create(
                                  b, l, inside, addI(b, l, j0, jj), j0);
                              SmallVector<Value> dot = forChunksReduce(
                                  b, l, d, ValueRange{splatConst(b, l, 0.0)},
                                  [&](OpBuilder &b, Location l, Value c,
                                      Value m,
                                      ValueRange acc) -> SmallVector<Value> {
                                    Value qv = maskedLoad(
                                        b, l, query, ValueRange{bi, h, i, c}, m,
                                        splatConst(b, l, 0.0));
                                    Value kv = maskedLoad(
                                        b, l, key, ValueRange{bi, hk, jSafe, c},
                                        m, splatConst(b, l, 0.0));
                                    return {math::FmaOp::create(b, l, qv, kv,
                                                                acc[0])};
                                  });
                              Value sj = reduceAdd(b, l, dot[0]);
                              Value next = vector::InsertOp::create(
                                  b, l, sj, s[0], OpFoldResult(jj));
                              scf::YieldOp::create(b, l, ValueRange{next});
                            });
                        scf::YieldOp::create(b, l, perKey.getResults());
                        b.setInsertionPointToStart(
                            &scores.getElseRegion().front());
                        scf::YieldOp::create(
                            b, l,
                            ValueRange{vector::LoadOp::create(
                                b, l, vt, sBlock, ValueRange{r, zero})});
                      }
                      Value s = arith::MulFOp::create(b, l, scores.getResult(0),
                                                      splatConst(b, l, scale));
                      if (mask) {
                        SmallVector<Value> idx =
                            maskIndex(b, l, ValueRange{bi, h, i, j0});
                        Value mv;
                        if (maskBroadcastsKeys)
                          mv = splat(b, l,
                                     memref::LoadOp::create(b, l, mask, idx));
                        else
                          mv = maskedLoad(b, l, mask, idx, inTile,
                                          splatConst(b, l, 0.0));
                        s = arith::AddFOp::create(b, l, s, mv);
                      }
                      VectorLanes lanes;
                      s = emitPositionTerms(
                          lanes, b, l, {keyIds, inTile, addI(b, l, i, shift)},
                          terms, s);
                      OnlineSoftmaxStep step = emitOnlineSoftmaxStep(
                          lanes, b, l, memref::LoadOp::create(b, l, mRow, r),
                          memref::LoadOp::create(b, l, lRow, r), s);
                      memref::StoreOp::create(b, l, step.sum, lRow, r);
                      memref::StoreOp::create(b, l, step.max, mRow, r);
                      vector::StoreOp::create(b, l, step.probs, pRow,
                                              ValueRange{r, zero});
                      memref::StoreOp::create(b, l, step.alpha, alphaRow, r);
                    });
                // o = o·α + p·V_tile for the whole block: per key one load of a
                // chunk of V feeds one FMA per row, in independent chains.
                forChunks(
                    b, l, dv, [&](OpBuilder &b, Location l, Value c, Value m) {
                      for (int64_t g0 = 0; g0 < kAttentionBlockQ;
                           g0 += rowGroup) {
                        SmallVector<Value> init;
                        for (int64_t r = g0; r < g0 + rowGroup; ++r) {
                          Value ri = indexConst(b, l, r);
                          Value o = maskedLoad(b, l, acc, ValueRange{ri, c}, m,
                                               splatConst(b, l, 0.0));
                          init.push_back(arith::MulFOp::create(
                              b, l, o,
                              splat(
                                  b, l,
                                  memref::LoadOp::create(b, l, alphaRow, ri))));
                        }
                        auto pv = scf::ForOp::create(
                            b, l, zero, tileKeys, one, init,
                            [&](OpBuilder &b, Location l, Value jj,
                                ValueRange o) {
                              Value vv = maskedLoad(
                                  b, l, value,
                                  ValueRange{bi, hk, addI(b, l, j0, jj), c}, m,
                                  splatConst(b, l, 0.0));
                              SmallVector<Value> next;
                              for (int64_t r = 0; r < rowGroup; ++r) {
                                Value pj = memref::LoadOp::create(
                                    b, l, pRow,
                                    ValueRange{indexConst(b, l, g0 + r), jj});
                                next.push_back(math::FmaOp::create(
                                    b, l, splat(b, l, pj), vv, o[r]));
                              }
                              scf::YieldOp::create(b, l, next);
                            });
                        for (int64_t r = 0; r < rowGroup; ++r)
                          maskedStore(b, l, pv.getResult(r), acc,
                                      ValueRange{indexConst(b, l, g0 + r), c},
                                      m);
                      }
                    });
              });
          // out = o / l, or 0 for a row that saw no key.
          forRange(
              b, loc, zero, rows, one, [&](OpBuilder &b, Location l, Value r) {
                Value invSplat =
                    splat(b, l,
                          emitSafeReciprocal(
                              b, l, memref::LoadOp::create(b, l, lRow, r)));
                Value i = addI(b, l, q0, r);
                forChunks(
                    b, l, dv, [&](OpBuilder &b, Location l, Value c, Value m) {
                      Value o = maskedLoad(b, l, acc, ValueRange{r, c}, m,
                                           splatConst(b, l, 0.0));
                      maskedStore(b, l,
                                  arith::MulFOp::create(b, l, o, invSplat), out,
                                  ValueRange{bi, h, i, c}, m);
                    });
              });
          memref::AllocaScopeReturnOp::create(b, loc, ValueRange{});
        }
      });
}

/// What the C micro-kernels of lib/Target/CPU/MicroKernels/Attention.c take
/// besides the operands: the shape array (MicroKernels.h), the scale and
/// the ALiBi slopes (or null).
struct MicroKernelArgs {
  Value shape, scale, slopes;
};

MicroKernelArgs prepareMicroKernelArgs(OpBuilder &b, Location loc,
                                       kernel::AttentionOp op,
                                       const AttentionSizes &sizes, Value query,
                                       Value key, Value value, Value mask,
                                       Value relBias, Value out, Value splits) {
  Type i64 = b.getI64Type(), f32 = b.getF32Type();
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  // A static stack slot of the function (its entry block), so that running
  // this code in a loop does not grow the stack.
  Value shape;
  {
    OpBuilder::InsertionGuard guard(b);
    Block *entry = &b.getInsertionBlock()
                        ->getParent()
                        ->getParentOfType<FunctionOpInterface>()
                        .getFunctionBody()
                        .front();
    b.setInsertionPointToStart(entry);
    shape = memref::AllocaOp::create(
        b, loc, MemRefType::get({TFC_UK_ATTENTION_SHAPE}, i64));
  }
  // Sizes, then the strides of q, k, v, the mask and the output as
  // [B, H, T, D] (0 where the mask broadcasts).
  int64_t slot = 0;
  auto put = [&](Value v) {
    if (v.getType().isIndex())
      v = toI64(b, loc, v);
    memref::StoreOp::create(b, loc, v, shape, indexConst(b, loc, slot++));
  };
  for (Value v : {sizes.batch, sizes.heads, sizes.kvHeads, sizes.tq, sizes.tk,
                  sizes.d, sizes.dv, splits})
    put(v);
  put(arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(op.getCausal())));
  put(arith::ConstantOp::create(
      b, loc, b.getI64IntegerAttr(op.getWindow() ? *op.getWindow() : 0)));
  put(arith::ConstantOp::create(b, loc,
                                b.getI64IntegerAttr(op.getRelativeDistance())));
  put(arith::ConstantOp::create(
      b, loc,
      b.getI64IntegerAttr(
          relBias ? cast<MemRefType>(relBias.getType()).getDimSize(0) : 0)));
  for (Value m : {query, key, value}) {
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, m);
    for (Value stride : meta.getStrides())
      put(stride);
  }
  if (mask) {
    auto maskType = cast<MemRefType>(mask.getType());
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, mask);
    int64_t missing = 4 - maskType.getRank();
    for (int64_t k = 0; k < 4; ++k) {
      int64_t md = k - missing;
      bool broadcast = md < 0 || maskType.getDimSize(md) == 1;
      put(broadcast ? zero : meta.getStrides()[md]);
    }
  } else {
    for (int64_t k = 0; k < 4; ++k)
      put(zero);
  }
  for (Value stride :
       memref::ExtractStridedMetadataOp::create(b, loc, out).getStrides())
    put(stride);

  MicroKernelArgs args;
  args.shape = shape;
  args.scale = f32Const(b, loc, op.getScale().convertToDouble());
  // ALiBi: the slope of every head, computed once per call.
  if (std::optional<APFloat> alibi = op.getAlibi()) {
    Value heads = sizes.heads;
    args.slopes = memref::AllocOp::create(
        b, loc, MemRefType::get({ShapedType::kDynamic}, f32), heads,
        b.getI64IntegerAttr(64));
    forRange(b, loc, zero, heads, one, [&](OpBuilder &b, Location l, Value h) {
      memref::StoreOp::create(
          b, l, buildAlibiSlope(b, l, h, heads, alibi->convertToDouble()),
          args.slopes, h);
    });
  }
  return args;
}

/// A buffer of f32 of the length a micro-kernel's size function returns.
Value allocFloats(OpBuilder &b, Location loc, LLVM::LLVMFuncOp sizeOf,
                  Value shape) {
  Value floats =
      LLVM::CallOp::create(b, loc, sizeOf, ValueRange{pointerTo(b, loc, shape)})
          .getResult();
  return memref::AllocOp::create(
      b, loc, MemRefType::get({ShapedType::kDynamic}, b.getF32Type()),
      ValueRange{arith::IndexCastOp::create(b, loc, b.getIndexType(), floats)},
      b.getI64IntegerAttr(64));
}

/// One scf.parallel of `tasks` calls of `fn` with `operands` and the task.
void parallelCalls(
    OpBuilder &b, Location loc, Value tasks, LLVM::LLVMFuncOp fn,
    function_ref<SmallVector<Value>(OpBuilder &, Location)> operands) {
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  scf::ParallelOp::create(b, loc, ValueRange{zero}, ValueRange{tasks},
                          ValueRange{one},
                          [&](OpBuilder &b, Location l, ValueRange ivs) {
                            SmallVector<Value> args = operands(b, l);
                            args.push_back(toI64(b, l, ivs[0]));
                            LLVM::CallOp::create(b, l, fn, args);
                            scf::ReduceOp::create(b, l);
                          });
}

Value pointerOrNull(OpBuilder &b, Location loc, Value m) {
  return m ? pointerTo(b, loc, m)
           : LLVM::ZeroOp::create(b, loc,
                                  LLVM::LLVMPointerType::get(b.getContext()))
                 .getResult();
}

/// The micro-kernels that score keys (tfc_uk_attention_split and
/// tfc_uk_attention_prefill) share a signature (MicroKernels.h): q, the keys
/// (k, or its transpose), v, mask, relBias, slopes, the destination, the
/// shape array, the scale and the task.
LLVM::LLVMFuncOp declareScoringKernel(OpBuilder &b, Operation *op,
                                      StringRef name) {
  Type ptr = LLVM::LLVMPointerType::get(b.getContext());
  return declareMicroKernel(
      b, op, name, LLVM::LLVMVoidType::get(b.getContext()),
      {ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr, b.getF32Type(), b.getI64Type()});
}

/// Their operands but the task.
SmallVector<Value> scoringOperands(OpBuilder &b, Location l, Value query,
                                   Value keys, Value value, Value mask,
                                   Value relBias, const MicroKernelArgs &args,
                                   Value dest) {
  return {pointerTo(b, l, query),
          pointerTo(b, l, keys),
          pointerTo(b, l, value),
          pointerOrNull(b, l, mask),
          pointerOrNull(b, l, relBias),
          pointerOrNull(b, l, args.slopes),
          pointerTo(b, l, dest),
          pointerTo(b, l, args.shape),
          args.scale};
}

/// Few query rows (decoding): the C micro-kernels' flash-decoding (tasks of
/// (batch, key/value head, split of the keys) serving every query head of
/// the group, then a combine per (batch, head)).
void emitDecodeAttention(OpBuilder &b, Location loc, kernel::AttentionOp op,
                         const AttentionSizes &sizes, Value query, Value key,
                         Value value, Value mask, Value relBias, Value out) {
  MLIRContext *ctx = b.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  Type i64 = b.getI64Type();
  Type voidType = LLVM::LLVMVoidType::get(ctx);
  auto split = declareScoringKernel(b, op, "tfc_uk_attention_split");
  auto combine = declareMicroKernel(b, op, "tfc_uk_attention_combine", voidType,
                                    {ptr, ptr, ptr, i64});
  auto partialFloats =
      declareMicroKernel(b, op, "tfc_uk_attention_partial_floats", i64, {ptr});

  // Keys per split: enough splits that one sequence has work for every
  // thread, few enough that each reads a long run of keys.
  Value one = indexConst(b, loc, 1);
  Value splits = arith::MinUIOp::create(
      b, loc,
      arith::MaxUIOp::create(
          b, loc, ceilDiv(b, loc, sizes.tk, kAttentionKeysPerSplit), one),
      indexConst(b, loc, kAttentionMaxSplits));
  MicroKernelArgs args = prepareMicroKernelArgs(
      b, loc, op, sizes, query, key, value, mask, relBias, out, splits);
  Value partial = allocFloats(b, loc, partialFloats, args.shape);
  // Without key/value heads no task runs (and no key is read).
  Value splitTasks = arith::MulIOp::create(
      b, loc, arith::MulIOp::create(b, loc, sizes.batch, sizes.kvHeads),
      splits);
  parallelCalls(b, loc, splitTasks, split, [&](OpBuilder &b, Location l) {
    return scoringOperands(b, l, query, key, value, mask, relBias, args,
                           partial);
  });
  parallelCalls(b, loc,
                arith::MulIOp::create(b, loc, sizes.batch, sizes.runHeads),
                combine, [&](OpBuilder &b, Location l) {
                  return SmallVector<Value>{pointerTo(b, l, partial),
                                            pointerTo(b, l, out),
                                            pointerTo(b, l, args.shape)};
                });
}

/// Many query rows: the C micro-kernels' prefill path (K transposed once per
/// call, then tasks of (batch, head, block of query rows) with the scores of
/// a chunk of TFC_UK_ATTENTION_PREFILL_KEYS keys in L1).
void emitPrefillAttention(OpBuilder &b, Location loc, kernel::AttentionOp op,
                          const AttentionSizes &sizes, Value query, Value key,
                          Value value, Value mask, Value relBias, Value out) {
  MLIRContext *ctx = b.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  Type i64 = b.getI64Type();
  Type voidType = LLVM::LLVMVoidType::get(ctx);
  auto ktFloats =
      declareMicroKernel(b, op, "tfc_uk_attention_kt_floats", i64, {ptr});
  auto transpose = declareMicroKernel(b, op, "tfc_uk_attention_transpose_k",
                                      voidType, {ptr, ptr, ptr, i64});
  auto prefillTasks =
      declareMicroKernel(b, op, "tfc_uk_attention_prefill_tasks", i64, {ptr});
  auto prefill = declareScoringKernel(b, op, "tfc_uk_attention_prefill");

  MicroKernelArgs args =
      prepareMicroKernelArgs(b, loc, op, sizes, query, key, value, mask,
                             relBias, out, /*splits=*/indexConst(b, loc, 1));
  Value kt = allocFloats(b, loc, ktFloats, args.shape);
  parallelCalls(
      b, loc, arith::MulIOp::create(b, loc, sizes.batch, sizes.kvHeads),
      transpose, [&](OpBuilder &b, Location l) {
        return SmallVector<Value>{pointerTo(b, l, key), pointerTo(b, l, kt),
                                  pointerTo(b, l, args.shape)};
      });
  // Without key/value heads no task runs (and no key is read).
  Value tasks = arith::IndexCastOp::create(
      b, loc, b.getIndexType(),
      LLVM::CallOp::create(b, loc, prefillTasks,
                           ValueRange{pointerTo(b, loc, args.shape)})
          .getResult());
  tasks = arith::SelectOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, sizes.runHeads,
                            indexConst(b, loc, 0)),
      indexConst(b, loc, 0), tasks);
  parallelCalls(b, loc, tasks, prefill, [&](OpBuilder &b, Location l) {
    return scoringOperands(b, l, query, kt, value, mask, relBias, args, out);
  });
}

/// Lowers `op` writing `out`, whose rows are contiguous.
void emitAttentionInto(OpBuilder &b, Location loc, kernel::AttentionOp op,
                       Value query, Value key, Value value, Value mask,
                       Value relBias, Value out);

} // namespace

void tfc::cpu::emitAttention(OpBuilder &b, Location loc, kernel::AttentionOp op,
                             Value query, Value key, Value value, Value mask,
                             Value relBias, Value out) {
  query = contiguous(b, loc, query);
  key = contiguous(b, loc, key);
  value = contiguous(b, loc, value);
  if (mask)
    mask = contiguous(b, loc, mask);
  if (relBias) // dense rows: the decode micro-kernel indexes them itself
    relBias = contiguous(b, loc, relBias, /*identity=*/true);
  // The output may be a strided view (the heads merged in place,
  // tfc-kernel-fold-transposed-operands) as long as its rows are
  // contiguous; otherwise it is computed into a fresh buffer and copied.
  Value dest = hasUnitInnerStride(cast<MemRefType>(out.getType()))
                   ? out
                   : allocContiguousLike(b, loc, out);
  emitAttentionInto(b, loc, op, query, key, value, mask, relBias, dest);
  if (dest != out) // (tfc-early-dealloc frees dest after the copy)
    memref::CopyOp::create(b, loc, dest, out);
}

namespace {

/// emitAttention with an output whose innermost stride is 1.
void emitAttentionInto(OpBuilder &b, Location loc, kernel::AttentionOp op,
                       Value query, Value key, Value value, Value mask,
                       Value relBias, Value out) {
  // A few query rows (decode steps): the micro-kernel; else flash attention.
  // The micro-kernel serves the query heads of each key/value head as one
  // group, so it also needs run-time head counts that divide (the verifier
  // checks static ones; the flash path maps any count).
  AttentionSizes sizes(b, loc, query, key, value);
  Value tq = sizes.tq, heads = sizes.heads, kvHeads = sizes.kvHeads;
  Value one = indexConst(b, loc, 1);
  Value divides = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      arith::RemUIOp::create(b, loc, heads,
                             arith::MaxUIOp::create(b, loc, kvHeads, one)),
      indexConst(b, loc, 0));
  Value few = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, tq,
                            indexConst(b, loc, kAttentionDecodeRows)),
      divides);
  // More rows (and heads that divide): the prefill micro-kernel, in chunks
  // of TFC_UK_ATTENTION_PREFILL_KEYS keys whose scores fit in L1 (linear in
  // memory); heads that do not divide (a run-time mismatch): flash
  // attention, which maps any count.
  auto choice = scf::IfOp::create(b, loc, few, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&choice.getThenRegion().front());
  emitDecodeAttention(b, loc, op, sizes, query, key, value, mask, relBias, out);
  b.setInsertionPointToStart(&choice.getElseRegion().front());
  auto prefillChoice =
      scf::IfOp::create(b, loc, divides, /*withElseRegion=*/true);
  b.setInsertionPointToStart(&prefillChoice.getThenRegion().front());
  emitPrefillAttention(b, loc, op, sizes, query, key, value, mask, relBias,
                       out);
  b.setInsertionPointToStart(&prefillChoice.getElseRegion().front());
  emitFlashAttention(b, loc, op, sizes, query, key, value, mask, relBias, out);
}

} // namespace
