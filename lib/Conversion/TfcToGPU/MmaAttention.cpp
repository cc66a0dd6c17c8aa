//===- MmaAttention.cpp - Flash attention on the tensor cores -------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// softmax(Q·Kᵀ·scale + terms)·V for f16 and bf16 operands with both
// products on mma.sync.m16n8k16 (sm_80 and later), in the manner of
// FlashAttention-2. One block per (kBlockQ = 64 query rows, head, batch): 4
// warps, each owning 16 consecutive rows. With groupID g = lane / 4 and
// t = lane % 4, a lane holds, of its warp's rows, rows g and g + 8:
//
//  0. Each key tile's K and V land in shared memory by cp.async.cg (16
//     bytes per copy, zero-filled past the keys), pipelined with one
//     buffer per operand: the next tile's K is issued as soon as every warp
//     has its S (it lands during the softmax and P·V), the next tile's V as
//     soon as P·V is done (it lands during the next Q·Kᵀ and softmax); each
//     wait_group leaves only the newest group in flight. Operands whose
//     rows do not start on 16 bytes (checked once per block from the
//     strided metadata) are staged by loads and stores instead, in the
//     same places. (Two buffers per operand would take d = 128 past the
//     48 KB of static shared memory.)
//  1. Q·Kᵀ: the warp's Q rows stay in registers as mma A fragments for the
//     whole key loop (loaded once: rows g, g+8 x columns 2t, 2t+1, 2t+8,
//     2t+9 of each 16 columns of d: d/4 registers, dv/2 more for O; at
//     d = dv = 128, 168-228 registers by ptxas and no spills). Keys advance
//     in tiles of 64, K and V staged in shared memory in their own type
//     (rows padded by 8 elements: the 8 rows a fragment load touches start
//     in different banks). S for 16 rows x 64 keys is 8 m16n8 tiles; each
//     B fragment is K row g of the tile (keys 8j + g) at columns 2t.. and
//     2t+8.. of d, two steps of d loaded by one ldmatrix.x4.
//  2. The softmax runs on the fragments: a lane's 16 scores of a row
//     (tile j, columns 2t and 2t+1) are one vector<16xf32>, the key index
//     of element e being 8·(e/2) + 2t + e%2; the row's max and sum are the
//     lane's, combined over the 4 lanes of its quad (shfl.xor 1, 2). The
//     position terms (mask, T5 buckets, ALiBi, causal, window, lengths) are
//     the other kernels' (emitPositionTerms); p = exp2(s·log2 e − m·log2 e),
//     one FMA and one ex2.approx per score (libdevice's exp2f, not expf).
//  3. P·V: P never leaves registers. The C fragments of S tiles 2k and
//     2k+1 (rows g, g+8 x columns 2t, 2t+1 of each) are exactly the A
//     fragment of keys 16k..16k+15, rounded to the operand type; each B
//     fragment is V column 8n + g at keys 2t.. and 2t+8.. of the 16, two
//     tiles of dv loaded by one ldmatrix.x4.trans.
//  4. At the end, O / l is written (0 for a row whose keys were all
//     masked).
//
// Causal blocks stop at the last key their last row sees; windows start at
// the tile of the first key their first row sees. Only the tiles that a
// limit crosses (the causal diagonal, the window's edge, the end of the
// keys) apply the limits to their scores: a uniform branch per tile.
// Grouped-query attention reads key/value head h / (H / Hkv). Head sizes: d a
// multiple of 16, dv of 8, both at most 128 (emitAttention's SIMT kernel takes
// the others).
//
//===----------------------------------------------------------------------===//

#include "AttentionCommon.h"
#include "GpuKernelUtils.h"
#include "GpuKernels.h"

#include "tfc/Conversion/RowKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::gpuk;

namespace {

constexpr int64_t kWarps = 4;
constexpr int64_t kRowsPerWarp = 16;
constexpr int64_t kBlockQ = kWarps * kRowsPerWarp;
constexpr int64_t kThreads = kWarps * kWarpSize;
/// Elements of padding per shared row.
constexpr int64_t kPad = 8;
constexpr int64_t kMaxHeadDim = 128;
constexpr int64_t kBlockK = 64;
/// m16n8 tiles of S per key tile, and scores per row per lane.
constexpr int64_t kKeyTiles = kBlockK / 8;
constexpr int64_t kScores = 2 * kKeyTiles;

Value addI(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::AddIOp::create(b, loc, x, y);
}
Value addI(OpBuilder &b, Location loc, Value x, int64_t y) {
  return y == 0 ? x : addI(b, loc, x, indexConst(b, loc, y));
}
Value mulI(OpBuilder &b, Location loc, Value x, int64_t y) {
  return arith::MulIOp::create(b, loc, x, indexConst(b, loc, y));
}
Value ult(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
}

/// One row's scores of a key tile as the four lanes of a quad hold them: a
/// vector<16xf32> per lane.
struct QuadLanes final : ScoreLanes {
  explicit QuadLanes(int64_t scores) : scores(scores) {}
  int64_t scores;

  Value reduce(OpBuilder &b, Location loc, RowReduction kind,
               Value scores) override {
    bool add = kind == RowReduction::Add;
    Value v = vector::ReductionOp::create(b, loc,
                                          add ? vector::CombiningKind::ADD
                                              : vector::CombiningKind::MAXNUMF,
                                          scores);
    for (int32_t offset : {1, 2}) {
      Value other = gpu::ShuffleOp::create(b, loc, v, i32Const(b, loc, offset),
                                           i32Const(b, loc, kWarpSize),
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      v = combine(b, loc, add ? Reduction::Add : Reduction::Max, v, other);
    }
    return v;
  }
  Value broadcast(OpBuilder &b, Location loc, Value scalar) override {
    return vector::BroadcastOp::create(
        b, loc, VectorType::get({scores}, scalar.getType()), scalar);
  }
  Value broadcastInt(OpBuilder &b, Location loc, Value scalar) override {
    return broadcast(b, loc, scalar);
  }
  Value gather(OpBuilder &b, Location loc, Value table, Value row,
               Value cols) override {
    SmallVector<Value> values;
    for (int64_t e = 0; e < scores; ++e) {
      Value col = vector::ExtractOp::create(b, loc, cols, e);
      values.push_back(loadF32(
          b, loc, table,
          {row, arith::IndexCastOp::create(b, loc, b.getIndexType(), col)}));
    }
    return vector::FromElementsOp::create(
        b, loc, VectorType::get({scores}, b.getF32Type()), values);
  }
};

/// exp2 of an f32 (libdevice's exp2f: ex2.approx, no range reduction).
Value exp2(OpBuilder &b, Location loc, Value x) {
  return math::Exp2Op::create(b, loc, x);
}

} // namespace

bool gpuk::mmaAttentionApplies(kernel::AttentionOp op, Value query, Value key,
                               Value value) {
  auto qType = cast<MemRefType>(query.getType());
  auto kType = cast<MemRefType>(key.getType());
  auto vType = cast<MemRefType>(value.getType());
  Type element = qType.getElementType();
  if (!(element.isF16() || element.isBF16()) ||
      kType.getElementType() != element || vType.getElementType() != element)
    return false;
  int64_t d = qType.getDimSize(3), dv = vType.getDimSize(3);
  return !ShapedType::isDynamic(d) && !ShapedType::isDynamic(dv) &&
         d % 16 == 0 && dv % 8 == 0 && d <= kMaxHeadDim && dv <= kMaxHeadDim &&
         kType.getDimSize(3) == d;
}

LogicalResult gpuk::emitMmaAttention(OpBuilder &b, Location loc,
                                     kernel::AttentionOp op, Value query,
                                     Value key, Value value, Value mask,
                                     Value relBias, Value out) {
  double softcap = op.getSoftcap() ? op.getSoftcap()->convertToDouble() : 0.0;
  auto qType = cast<MemRefType>(query.getType());
  auto vType = cast<MemRefType>(value.getType());
  Type element = qType.getElementType();
  NVVM::MMATypes ptxType =
      element.isF16() ? NVVM::MMATypes::f16 : NVVM::MMATypes::bf16;
  int64_t headDim = qType.getDimSize(3), valueDim = vType.getDimSize(3);
  int64_t dSteps = headDim / 16, vTiles = valueDim / 8;
  double scale = op.getScale().convertToDouble();
  MLIRContext *ctx = b.getContext();
  const double negInf = -std::numeric_limits<double>::infinity();

  Value one = indexConst(b, loc, 1);
  AttentionShape shape = attentionShape(b, loc, query, key);
  Value tq = shape.tq, tk = shape.tk;

  launch(
      b, loc, {ceilDiv(b, loc, tq, kBlockQ), shape.runHeads, shape.batch},
      kThreads,
      {sharedType(ctx, {kBlockK, headDim + kPad}, element),
       sharedType(ctx, {kBlockK, valueDim + kPad}, element)},
      [&](OpBuilder &b, Location l, const LaunchIds &ids) {
        Value ks = ids.shared[0], vs = ids.shared[1];
        Value t = ids.thread;
        Value lane =
            arith::RemUIOp::create(b, l, t, indexConst(b, l, kWarpSize));
        Value warp =
            arith::DivUIOp::create(b, l, t, indexConst(b, l, kWarpSize));
        Value g = arith::DivUIOp::create(b, l, lane, indexConst(b, l, 4));
        Value t2 = mulI(
            b, l, arith::RemUIOp::create(b, l, lane, indexConst(b, l, 4)), 2);
        Value h = ids.block[1], bi = ids.block[2];
        Value hk = kvHeadOf(b, l, shape, h);
        Value q0 = mulI(b, l, ids.block[0], kBlockQ);
        Value tqLast = arith::SubIOp::create(b, l, tq, one);
        Value tkLast = arith::SubIOp::create(b, l, tk, one);
        Value zeroE =
            arith::ConstantOp::create(b, l, b.getFloatAttr(element, 0.0));
        Value zeroF = f32Const(b, l, 0.0);
        // ldmatrix addressing: L % 8, L / 8, (L / 8) % 2, L / 16.
        Value laneMod8 =
            arith::RemUIOp::create(b, l, lane, indexConst(b, l, 8));
        Value lane8 = arith::DivUIOp::create(b, l, lane, indexConst(b, l, 8));
        Value lane8Mod2 =
            arith::RemUIOp::create(b, l, lane8, indexConst(b, l, 2));
        Value lane16 = arith::DivUIOp::create(b, l, lane, indexConst(b, l, 16));
        std::array<Value, 2> rows;
        rows[0] = addI(b, l, addI(b, l, q0, mulI(b, l, warp, kRowsPerWarp)), g);
        rows[1] = addI(b, l, rows[0], 8);

        // The warp's Q rows as A fragments, one set per 16 columns of d.
        auto qAt = [&](Value row, Value d) -> Value {
          Value v = memref::LoadOp::create(
              b, l, query, ValueRange{bi, h, minIndex(b, l, row, tqLast), d});
          return arith::SelectOp::create(b, l, ult(b, l, row, tq), v, zeroE);
        };
        SmallVector<SmallVector<Value>> qFrag;
        for (int64_t s = 0; s < dSteps; ++s) {
          Value d0 = addI(b, l, t2, s * 16), d8 = addI(b, l, d0, 8);
          auto pair = [&](Value row, Value d) {
            return packPair(b, l, qAt(row, d), qAt(row, addI(b, l, d, 1)));
          };
          qFrag.push_back({pair(rows[0], d0), pair(rows[1], d0),
                           pair(rows[0], d8), pair(rows[1], d8)});
        }

        KeyRange range =
            attentionKeyRange(b, l, op, shape, q0, kBlockQ, kBlockK);

        AsyncSource keyAsync = asyncSource(b, l, key);
        AsyncSource valueAsync = asyncSource(b, l, value);
        // The K or V tile of keys kt.. into its buffer, zeros past the keys:
        // by cp.async where the rows allow 16-byte copies, else by loads
        // and stores (its commit group is then empty).
        auto stage = [&](OpBuilder &b, Location l, Value shared, Value src,
                         int64_t cols, const AsyncSource &async, Value kt) {
          auto branch = scf::IfOp::create(b, l, async.aligned,
                                          /*withElseRegion=*/true);
          {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(branch.thenBlock());
            copyTileAsync(b, l, async, {bi, hk}, kt, tk, indexConst(b, l, 0),
                          indexConst(b, l, cols), shared, kBlockK, cols, t,
                          kThreads);
            b.setInsertionPointToStart(branch.elseBlock());
            forLoop(
                b, l, t, indexConst(b, l, kBlockK * cols),
                indexConst(b, l, kThreads),
                [&](OpBuilder &b, Location l, Value e) {
                  Value r =
                      arith::DivUIOp::create(b, l, e, indexConst(b, l, cols));
                  Value c =
                      arith::RemUIOp::create(b, l, e, indexConst(b, l, cols));
                  Value kj = addI(b, l, kt, r);
                  Value v = memref::LoadOp::create(
                      b, l, src,
                      ValueRange{bi, hk, minIndex(b, l, kj, tkLast), c});
                  v = arith::SelectOp::create(b, l, ult(b, l, kj, tk), v,
                                              zeroE);
                  memref::StoreOp::create(b, l, v, shared, ValueRange{r, c});
                });
          }
        };
        // The first tile's K and V, as two groups (K's first).
        ifThen(b, l, ult(b, l, range.start, range.end),
               [&](OpBuilder &b, Location l) {
                 stage(b, l, ks, key, headDim, keyAsync, range.start);
                 NVVM::CpAsyncCommitGroupOp::create(b, l);
                 stage(b, l, vs, value, valueDim, valueAsync, range.start);
                 NVVM::CpAsyncCommitGroupOp::create(b, l);
               });

        PositionTerms terms = attentionTerms(b, l, op, shape, h, relBias);
        // Interior tiles need neither the causal nor the window limit nor
        // the key count: every key of the tile is seen by every row of the
        // block. Only they skip the limits (their terms and positions).
        PositionTerms interiorTerms = terms;
        interiorTerms.causal = false;
        interiorTerms.window = 0;
        bool limited = terms.causal || terms.window > 0;
        Value lastQuery = addI(b, l, q0, kBlockQ - 1);

        // State: m and l of rows g and g+8, then O as vTiles C fragments.
        SmallVector<Value> init = {f32Const(b, l, negInf), zeroF,
                                   f32Const(b, l, negInf), zeroF};
        init.append(vTiles * 4, zeroF);
        auto oAt = [](int64_t n, int64_t c) { return 4 + n * 4 + c; };
        // Element e of a row's scores is key 8(e/2) + e%2 of the tile, past
        // the lane's 2t.
        SmallVector<int32_t> offsets;
        for (int64_t e = 0; e < kScores; ++e)
          offsets.push_back(static_cast<int32_t>(8 * (e / 2) + e % 2));
        auto i32Vec = VectorType::get({kScores}, b.getI32Type());
        auto f32Vec = VectorType::get({kScores}, b.getF32Type());
        auto i1Vec = VectorType::get({kScores}, b.getI1Type());
        const double log2e = 1.0 / std::log(2.0);

        // Pipelined: K of the next tile lands during this tile's softmax
        // and P·V, V of the next during the next tile's Q·Kᵀ and softmax.
        // Groups complete in order K0 V0 K1 V1 ...; each wait leaves just
        // the newest group in flight.
        SmallVector<Value> state = forLoopReduce(
            b, l, range.start, range.end, indexConst(b, l, kBlockK), init,
            [&](OpBuilder &b, Location l, Value kt, ValueRange state) {
              SmallVector<Value> next(state);
              Value kNext = addI(b, l, kt, kBlockK);
              Value more = ult(b, l, kNext, range.end);
              NVVM::CpAsyncWaitGroupOp::create(b, l, 1);
              gpu::BarrierOp::create(b, l);

              // S = Q·Kᵀ for the warp's 16 rows and the tile's 64 keys. The
              // B fragments of two steps of d come from one ldmatrix.x4:
              // lane L gives row 8j + L%8 at column 16s + 8(L/8).
              SmallVector<Value> acc;
              for (int64_t j = 0; j < kKeyTiles; ++j) {
                SmallVector<Value> c(4, zeroF);
                for (int64_t s = 0; s < dSteps; s += 2) {
                  int64_t count = s + 1 < dSteps ? 4 : 2;
                  Value col =
                      addI(b, l, mulI(b, l, count == 4 ? lane8 : lane8Mod2, 8),
                           s * 16);
                  SmallVector<Value> regs = loadMatrices(
                      b, l, ks, addI(b, l, laneMod8, j * 8), col, count,
                      /*transpose=*/false);
                  c = mmaSync(b, l, ptxType, qFrag[s], {regs[0], regs[1]}, c,
                              {16, 8, 16});
                  if (count == 4)
                    c = mmaSync(b, l, ptxType, qFrag[s + 1], {regs[2], regs[3]},
                                c, {16, 8, 16});
                }
                acc.append(c);
              }

              // Every warp is done with K: the next tile's may land.
              gpu::BarrierOp::create(b, l);
              ifThen(b, l, more, [&](OpBuilder &b, Location l) {
                stage(b, l, ks, key, headDim, keyAsync, kNext);
              });
              NVVM::CpAsyncCommitGroupOp::create(b, l);

              // Whether the limits apply to this tile: it ends past the
              // keys, or past what the block's first row sees (causal), or
              // starts before what its last row sees (window).
              Value edge = ult(b, l, tk, kNext);
              if (terms.causal)
                edge = arith::OrIOp::create(
                    b, l, edge,
                    ult(b, l, addI(b, l, addI(b, l, q0, tk), 1),
                        addI(b, l, kNext, tq)));
              if (terms.window > 0)
                edge = arith::OrIOp::create(
                    b, l, edge,
                    ult(b, l, addI(b, l, kt, addI(b, l, tq, terms.window)),
                        addI(b, l, lastQuery, addI(b, l, tk, 1))));

              // The online softmax of rows g and g+8 on the fragments.
              QuadLanes quad(kScores);
              Value base = arith::IndexCastOp::create(b, l, b.getI32Type(),
                                                      addI(b, l, kt, t2));
              Value keys = arith::AddIOp::create(
                  b, l, quad.broadcastInt(b, l, base),
                  arith::ConstantOp::create(
                      b, l,
                      DenseElementsAttr::get(i32Vec,
                                             ArrayRef<int32_t>(offsets))));
              Value tk32 = arith::IndexCastOp::create(b, l, b.getI32Type(), tk);
              Value valid =
                  arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, keys,
                                        quad.broadcastInt(b, l, tk32));
              std::array<SmallVector<Value>, 2> probs;
              for (int64_t r = 0; r < 2; ++r) {
                SmallVector<Value> elems;
                for (int64_t j = 0; j < kKeyTiles; ++j)
                  for (int64_t c = 0; c < 2; ++c)
                    elems.push_back(acc[j * 4 + 2 * r + c]);
                Value s = vector::FromElementsOp::create(b, l, f32Vec, elems);
                s = arith::MulFOp::create(
                    b, l, s, quad.broadcast(b, l, f32Const(b, l, scale)));
                if (softcap > 0.0) // Gemma 2: softcap · tanh(s / softcap)
                  s = arith::MulFOp::create(
                      b, l,
                      math::TanhOp::create(
                          b, l,
                          arith::MulFOp::create(
                              b, l, s,
                              quad.broadcast(b, l,
                                             f32Const(b, l, 1.0 / softcap)))),
                      quad.broadcast(b, l, f32Const(b, l, softcap)));
                Value row = rows[r];
                if (mask) {
                  SmallVector<Value> m;
                  for (int64_t e = 0; e < kScores; ++e)
                    m.push_back(loadMaskTerm(
                        b, l, mask, shape, bi, h, row,
                        addI(b, l, addI(b, l, kt, t2), 8 * (e / 2) + e % 2)));
                  s = arith::AddFOp::create(
                      b, l, s, vector::FromElementsOp::create(b, l, f32Vec, m));
                }
                ScorePositions positions;
                positions.keys = keys;
                positions.valid = valid;
                positions.query =
                    arith::SubIOp::create(b, l, addI(b, l, row, tk), tq);
                if (!limited) {
                  s = emitPositionTerms(quad, b, l, positions, terms, s);
                } else {
                  auto branch = scf::IfOp::create(b, l, f32Vec, edge,
                                                  /*withElseRegion=*/true);
                  OpBuilder::InsertionGuard guard(b);
                  b.setInsertionPointToStart(branch.thenBlock());
                  scf::YieldOp::create(
                      b, l, emitPositionTerms(quad, b, l, positions, terms, s));
                  b.setInsertionPointToStart(branch.elseBlock());
                  ScorePositions all = positions;
                  all.valid = arith::ConstantOp::create(
                      b, l, DenseElementsAttr::get(i1Vec, true));
                  scf::YieldOp::create(
                      b, l,
                      emitPositionTerms(quad, b, l, all, interiorTerms, s));
                  s = branch.getResult(0);
                }

                Value mOld = state[2 * r], lOld = state[2 * r + 1];
                Value mNew = arith::MaximumFOp::create(
                    b, l, mOld, quad.reduce(b, l, RowReduction::Max, s));
                Value none =
                    arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, mNew,
                                          f32Const(b, l, negInf));
                Value safe = arith::SelectOp::create(b, l, none, zeroF, mNew);
                Value l2e = f32Const(b, l, log2e);
                Value alpha = arith::SelectOp::create(
                    b, l, none, f32Const(b, l, 1.0),
                    exp2(b, l,
                         arith::MulFOp::create(
                             b, l, arith::SubFOp::create(b, l, mOld, safe),
                             l2e)));
                // p = exp2(s·log2 e - m·log2 e): one FMA and ex2 per score.
                Value shift = arith::MulFOp::create(b, l, safe, l2e);
                SmallVector<Value> pe;
                for (int64_t e = 0; e < kScores; ++e)
                  pe.push_back(
                      exp2(b, l,
                           math::FmaOp::create(
                               b, l, vector::ExtractOp::create(b, l, s, e), l2e,
                               arith::NegFOp::create(b, l, shift))));
                Value p = vector::FromElementsOp::create(b, l, f32Vec, pe);
                next[2 * r] = mNew;
                next[2 * r + 1] = arith::AddFOp::create(
                    b, l, arith::MulFOp::create(b, l, lOld, alpha),
                    quad.reduce(b, l, RowReduction::Add, p));
                for (int64_t n = 0; n < vTiles; ++n)
                  for (int64_t c = 0; c < 2; ++c)
                    next[oAt(n, 2 * r + c)] = arith::MulFOp::create(
                        b, l, state[oAt(n, 2 * r + c)], alpha);
                for (Value v : pe)
                  probs[r].push_back(arith::TruncFOp::create(b, l, element, v));
              }

              // V of this tile (K of the next may still be landing).
              NVVM::CpAsyncWaitGroupOp::create(b, l, 1);
              gpu::BarrierOp::create(b, l);

              // O += P·V, 16 keys per step, P as the A fragments. The B
              // fragments of two tiles of dv come from one
              // ldmatrix.x4.trans: lane L gives row (key) 16k + L%8 +
              // 8((L/8)%2) at column 8(n + L/16).
              for (int64_t k = 0; k < kBlockK / 16; ++k) {
                auto pk = [&](int64_t r, int64_t e) {
                  return packPair(b, l, probs[r][4 * k + e],
                                  probs[r][4 * k + e + 1]);
                };
                SmallVector<Value> aFrag = {pk(0, 0), pk(1, 0), pk(0, 2),
                                            pk(1, 2)};
                Value row =
                    addI(b, l, addI(b, l, laneMod8, mulI(b, l, lane8Mod2, 8)),
                         k * 16);
                for (int64_t n = 0; n < vTiles; n += 2) {
                  int64_t count = n + 1 < vTiles ? 4 : 2;
                  Value col = count == 4
                                  ? addI(b, l, mulI(b, l, lane16, 8), n * 8)
                                  : indexConst(b, l, n * 8);
                  SmallVector<Value> regs = loadMatrices(
                      b, l, vs, row, col, count, /*transpose=*/true);
                  for (int64_t half = 0; half < count / 2; ++half) {
                    SmallVector<Value> c(
                        ValueRange(next).slice(oAt(n + half, 0), 4));
                    c = mmaSync(b, l, ptxType, aFrag,
                                {regs[2 * half], regs[2 * half + 1]}, c,
                                {16, 8, 16});
                    for (int64_t i = 0; i < 4; ++i)
                      next[oAt(n + half, i)] = c[i];
                  }
                }
              }
              // Every warp is done with V: the next tile's may land.
              gpu::BarrierOp::create(b, l);
              ifThen(b, l, more, [&](OpBuilder &b, Location l) {
                stage(b, l, vs, value, valueDim, valueAsync, kNext);
              });
              NVVM::CpAsyncCommitGroupOp::create(b, l);
              return next;
            });

        for (int64_t r = 0; r < 2; ++r) {
          Value row = rows[r];
          Value inv = emitSafeReciprocal(b, l, state[2 * r + 1]);
          for (int64_t n = 0; n < vTiles; ++n)
            for (int64_t c = 0; c < 2; ++c) {
              Value col = addI(b, l, t2, n * 8 + c);
              Value v =
                  arith::MulFOp::create(b, l, state[oAt(n, 2 * r + c)], inv);
              ifThen(b, l, ult(b, l, row, tq), [&](OpBuilder &b, Location l) {
                storeF32(b, l, v, out, ValueRange{bi, h, row, col});
              });
            }
        }
      });
  return success();
}
