//===- Matmul.cpp - Tiled matrix products on the GPU ----------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// C[M, N] = A[M, K] · B[K, N] in blocks of kTileM x kTileN outputs (grid x
// over column tiles, y over row tiles, z over the batch). 256 threads as a
// 16 x 16 grid each accumulate 4 x 4 outputs in registers: thread (ty, tx)
// owns rows ty + 16i and columns tx + 16j, so stores are coalesced and the
// shared-memory reads of a warp are broadcasts (A) or consecutive banks (B).
// K advances in steps of kTileK: both operand tiles are staged in shared
// memory, stored k-major ([kTileK][kTileM] and [kTileK][kTileN]), with the
// global reads ordered along whichever axis is contiguous in memory. Edges
// are handled by clamped reads replaced with zeros and guarded stores.
// tfc.linear applies its bias and activation to the accumulators before the
// store (the epilogue never round-trips through memory).
//
// The arithmetic is f32 (f16/bf16 operands are extended on load); tensor-core
// MMA for f16/bf16 is the next step (docs/architecture.md).
//
//===----------------------------------------------------------------------===//

#include "GpuKernelUtils.h"
#include "GpuKernels.h"

#include "tfc/Conversion/TfcToLinalg/TfcToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <functional>

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::gpuk;

namespace {

constexpr int64_t kTileM = 64, kTileN = 64, kTileK = 16;
constexpr int64_t kThreadsX = 16, kThreadsY = 16;
constexpr int64_t kThreads = kThreadsX * kThreadsY;
constexpr int64_t kPerThreadM = kTileM / kThreadsY; // 4
constexpr int64_t kPerThreadN = kTileN / kThreadsX; // 4

/// How one product reads its operands and writes its result.
struct GemmIO {
  Value m, n, k;
  SmallVector<Value> batchSizes;
  /// A[batch, m, k] / B[batch, k, n] as f32 (indices in range).
  std::function<Value(OpBuilder &, Location, ValueRange, Value, Value)> loadA,
      loadB;
  /// Whether consecutive k are adjacent in memory (else m resp. n are).
  bool aKContiguous = true, bKContiguous = false;
  /// Writes the finished f32 value of C[batch, m, n].
  std::function<void(OpBuilder &, Location, ValueRange, Value, Value, Value)>
      store;
};

Value cmpLt(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
}

Value addI(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::AddIOp::create(b, loc, x, y);
}

/// Stages the kTileK x `tile` slice of one operand starting at (k0, x0) into
/// `shared` ([kTileK][tile]); `load(x, k)` reads an in-range element.
void stageTile(OpBuilder &b, Location loc, Value thread, Value shared,
               int64_t tile, Value k0, Value x0, Value kSize, Value xSize,
               bool kContiguous,
               function_ref<Value(OpBuilder &, Location, Value, Value)> load) {
  int64_t perThread = kTileK * tile / kThreads;
  Value one = indexConst(b, loc, 1);
  for (int64_t i = 0; i < perThread; ++i) {
    Value e = addI(b, loc, thread, indexConst(b, loc, i * kThreads));
    // Consecutive threads read consecutive addresses of the contiguous axis.
    Value kk, xx;
    if (kContiguous) {
      kk = arith::RemUIOp::create(b, loc, e, indexConst(b, loc, kTileK));
      xx = arith::DivUIOp::create(b, loc, e, indexConst(b, loc, kTileK));
    } else {
      xx = arith::RemUIOp::create(b, loc, e, indexConst(b, loc, tile));
      kk = arith::DivUIOp::create(b, loc, e, indexConst(b, loc, tile));
    }
    Value k = addI(b, loc, k0, kk), x = addI(b, loc, x0, xx);
    Value inside = arith::AndIOp::create(b, loc, cmpLt(b, loc, k, kSize),
                                         cmpLt(b, loc, x, xSize));
    // Clamped indices keep the read in bounds; the value is replaced by 0.
    Value kc = minIndex(b, loc, k, arith::SubIOp::create(b, loc, kSize, one));
    Value xc = minIndex(b, loc, x, arith::SubIOp::create(b, loc, xSize, one));
    Value v = arith::SelectOp::create(b, loc, inside, load(b, loc, xc, kc),
                                      f32Const(b, loc, 0.0));
    memref::StoreOp::create(b, loc, v, shared, ValueRange{kk, xx});
  }
}

void emitTiledGemm(OpBuilder &b, Location loc, const GemmIO &io) {
  Value batch = product(b, loc, io.batchSizes);
  std::array<Value, 3> grid = {ceilDiv(b, loc, io.n, kTileN),
                               ceilDiv(b, loc, io.m, kTileM), batch};
  MLIRContext *ctx = b.getContext();
  launch(
      b, loc, grid, kThreads,
      {sharedType(ctx, {kTileK, kTileM}), sharedType(ctx, {kTileK, kTileN})},
      [&](OpBuilder &b, Location l, const LaunchIds &ids) {
        Value as = ids.shared[0], bs = ids.shared[1];
        Value t = ids.thread;
        Value tx = arith::RemUIOp::create(b, l, t, indexConst(b, l, kThreadsX));
        Value ty = arith::DivUIOp::create(b, l, t, indexConst(b, l, kThreadsX));
        SmallVector<Value> bIdx = delinearize(b, l, ids.block[2], io.batchSizes);
        Value n0 = arith::MulIOp::create(b, l, ids.block[0],
                                         indexConst(b, l, kTileN));
        Value m0 = arith::MulIOp::create(b, l, ids.block[1],
                                         indexConst(b, l, kTileM));
        SmallVector<Value> init(kPerThreadM * kPerThreadN, f32Const(b, l, 0.0));
        SmallVector<Value> acc = forLoopReduce(
            b, l, indexConst(b, l, 0), io.k, indexConst(b, l, kTileK), init,
            [&](OpBuilder &b, Location l, Value k0, ValueRange acc) {
              stageTile(b, l, t, as, kTileM, k0, m0, io.k, io.m,
                        io.aKContiguous,
                        [&](OpBuilder &b, Location l, Value m, Value k) {
                          return io.loadA(b, l, bIdx, m, k);
                        });
              stageTile(b, l, t, bs, kTileN, k0, n0, io.k, io.n,
                        io.bKContiguous,
                        [&](OpBuilder &b, Location l, Value n, Value k) {
                          return io.loadB(b, l, bIdx, k, n);
                        });
              gpu::BarrierOp::create(b, l);
              SmallVector<Value> next = forLoopReduce(
                  b, l, indexConst(b, l, 0), indexConst(b, l, kTileK),
                  indexConst(b, l, 1), acc,
                  [&](OpBuilder &b, Location l, Value kk, ValueRange acc) {
                    SmallVector<Value> av, bv;
                    for (int64_t i = 0; i < kPerThreadM; ++i)
                      av.push_back(memref::LoadOp::create(
                          b, l, as,
                          ValueRange{kk, addI(b, l, ty,
                                              indexConst(b, l, i * kThreadsY))}));
                    for (int64_t j = 0; j < kPerThreadN; ++j)
                      bv.push_back(memref::LoadOp::create(
                          b, l, bs,
                          ValueRange{kk, addI(b, l, tx,
                                              indexConst(b, l, j * kThreadsX))}));
                    SmallVector<Value> out;
                    for (int64_t i = 0; i < kPerThreadM; ++i)
                      for (int64_t j = 0; j < kPerThreadN; ++j)
                        out.push_back(math::FmaOp::create(
                            b, l, av[i], bv[j], acc[i * kPerThreadN + j]));
                    return out;
                  });
              // The tiles are not overwritten before every thread used them.
              gpu::BarrierOp::create(b, l);
              return next;
            });
        for (int64_t i = 0; i < kPerThreadM; ++i) {
          Value m = addI(b, l, m0, addI(b, l, ty, indexConst(b, l, i * kThreadsY)));
          for (int64_t j = 0; j < kPerThreadN; ++j) {
            Value n =
                addI(b, l, n0, addI(b, l, tx, indexConst(b, l, j * kThreadsX)));
            Value inside = arith::AndIOp::create(b, l, cmpLt(b, l, m, io.m),
                                                 cmpLt(b, l, n, io.n));
            Value v = acc[i * kPerThreadN + j];
            ifThen(b, l, inside, [&](OpBuilder &b, Location l) {
              io.store(b, l, bIdx, m, n, v);
            });
          }
        }
      });
}

/// `memref` as a 2-D [rows, last] view, copied first if its layout is not
/// the identity (only identity layouts collapse safely).
Value as2D(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  if (!type.getLayout().isIdentity()) {
    auto identity = MemRefType::get(type.getShape(), type.getElementType());
    SmallVector<Value> dynamic;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        dynamic.push_back(memref::DimOp::create(b, loc, memref, d));
    Value copy = memref::AllocOp::create(b, loc, identity, dynamic);
    memref::CopyOp::create(b, loc, memref, copy);
    memref = copy;
    type = identity;
  }
  int64_t rank = type.getRank();
  if (rank == 2)
    return memref;
  if (rank == 1) {
    SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1),
                                       memref::getMixedSize(b, loc, memref, 0)};
    return memref::ExpandShapeOp::create(
        b, loc,
        MemRefType::get({1, type.getDimSize(0)}, type.getElementType()),
        memref, ArrayRef<ReassociationIndices>{{0, 1}}, sizes);
  }
  ReassociationIndices lead;
  for (int64_t d = 0; d + 1 < rank; ++d)
    lead.push_back(d);
  return memref::CollapseShapeOp::create(
      b, loc, memref, ArrayRef<ReassociationIndices>{lead, {rank - 1}});
}

} // namespace

LogicalResult gpuk::emitLinear(OpBuilder &b, Location loc, LinearOp op,
                               Value input, Value weight, Value bias,
                               Value out) {
  Value a = as2D(b, loc, input);
  Value c = as2D(b, loc, out);
  Activation activation = op.getActivation();
  GemmIO io;
  io.m = memref::DimOp::create(b, loc, a, 0);
  io.k = memref::DimOp::create(b, loc, a, 1);
  io.n = memref::DimOp::create(b, loc, weight, 0);
  io.loadA = [&](OpBuilder &b, Location l, ValueRange, Value m, Value k) {
    return loadF32(b, l, a, ValueRange{m, k});
  };
  // B[k, n] = W[n, k]: contiguous along k.
  io.loadB = [&](OpBuilder &b, Location l, ValueRange, Value k, Value n) {
    return loadF32(b, l, weight, ValueRange{n, k});
  };
  io.aKContiguous = true;
  io.bKContiguous = true;
  io.store = [&](OpBuilder &b, Location l, ValueRange, Value m, Value n,
                 Value v) {
    if (bias)
      v = arith::AddFOp::create(b, l, v, loadF32(b, l, bias, ValueRange{n}));
    v = buildActivation(b, l, v, activation);
    storeF32(b, l, v, c, ValueRange{m, n});
  };
  emitTiledGemm(b, loc, io);
  return success();
}

LogicalResult gpuk::emitMatmul(OpBuilder &b, Location loc, MatmulOp op,
                               Value lhs, Value rhs, Value out) {
  auto outType = cast<MemRefType>(out.getType());
  auto lType = cast<MemRefType>(lhs.getType());
  auto rType = cast<MemRefType>(rhs.getType());
  int64_t rank = outType.getRank();
  bool tl = op.getTransposeLhs(), tr = op.getTransposeRhs();
  GemmIO io;
  io.m = memref::DimOp::create(b, loc, out, rank - 2);
  io.n = memref::DimOp::create(b, loc, out, rank - 1);
  io.k = memref::DimOp::create(b, loc, lhs, tl ? lType.getRank() - 2
                                                : lType.getRank() - 1);
  io.batchSizes = dimSizes(b, loc, out, 0, rank - 2);
  // An operand's batch indices: aligned to the trailing batch dims; a static
  // 1 against a larger batch reads index 0.
  auto batchIndex = [&](OpBuilder &b, Location l, MemRefType t,
                        ValueRange batch) {
    SmallVector<Value> idx;
    int64_t offset = (rank - 2) - (t.getRank() - 2);
    for (int64_t d = 0; d < t.getRank() - 2; ++d) {
      bool broadcast =
          t.getDimSize(d) == 1 && outType.getDimSize(d + offset) != 1;
      idx.push_back(broadcast ? indexConst(b, l, 0) : batch[d + offset]);
    }
    return idx;
  };
  io.loadA = [&](OpBuilder &b, Location l, ValueRange batch, Value m,
                 Value k) {
    SmallVector<Value> idx = batchIndex(b, l, lType, batch);
    idx.push_back(tl ? k : m);
    idx.push_back(tl ? m : k);
    return loadF32(b, l, lhs, idx);
  };
  io.loadB = [&](OpBuilder &b, Location l, ValueRange batch, Value k,
                 Value n) {
    SmallVector<Value> idx = batchIndex(b, l, rType, batch);
    idx.push_back(tr ? n : k);
    idx.push_back(tr ? k : n);
    return loadF32(b, l, rhs, idx);
  };
  io.aKContiguous = !tl;
  io.bKContiguous = tr;
  io.store = [&](OpBuilder &b, Location l, ValueRange batch, Value m, Value n,
                 Value v) {
    SmallVector<Value> idx(batch);
    idx.push_back(m);
    idx.push_back(n);
    storeF32(b, l, v, out, idx);
  };
  emitTiledGemm(b, loc, io);
  return success();
}
