//===- Matmul.cpp - Tiled matrix products on the GPU ----------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// f32 linear (A [M, K] and W [N, K], both contiguous along k; most of a
// model's FLOPs) runs in emitLinearGemm: 128 x 128 or 64 x 64 blocks of
// 256 threads, 8 x 8 or 4 x 4 accumulators per thread, the operand tiles
// landing by cp.async in two buffers as [tile][16 + 4] and read as float4
// along k; where even 64 x 64 blocks are fewer than the SMs, K is split
// and a second kernel adds the partial sums in split order (deterministic)
// before the epilogue.
//
// Other f32 products with enough work (emitWideGemm: at least 132 blocks)
// run in 128 x 128 blocks with 8 x 8 accumulators per thread, read from
// shared memory as float4; the others as follows.
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
// f16 and bf16 products run on the tensor cores instead (emitMmaGemm):
// 64 x 64 blocks of 4 warps, each warp a 32 x 32 quarter as 2 x 4 tiles of
// mma.sync.m16n8k16 (row.col, f32 accumulators); the operand tiles are
// staged in shared memory in their own type, [64][k] for both A and B (rows
// padded by 8 elements: ldmatrix's 8 row addresses fall in different banks),
// and the fragments are loaded by ldmatrix.x4 as the PTX ISA lays them out
// (groupID = lane / 4, t = lane % 4: A rows g, g+8 x cols 2t, 2t+1, 2t+8,
// 2t+9; B cols g x rows 2t.., 2t+8..; C rows g, g+8 x cols 2t, 2t+1). The
// epilogue is the SIMT one. Other element types use the f32 SIMT kernel.
// Where its blocks are fewer than the SMs, K is split as for f32 linear
// (emitSplitK).
//
// A linear of 1 to 4 rows (a decode step) is a matrix-vector product in any
// element type (emitGemv): a warp per output column reading the weight row
// in 16-byte loads; chosen on the host from the run's row count.
//
// f32 products with tf32 (tfc-compile --gpu-fp32-matmul=tf32, as PyTorch's
// allow_tf32) take the tensor-core kernel too: the tiles stay f32 in shared
// memory (rows padded by 4 floats: the lanes' fragment reads, rows g and
// columns t, fall in 32 different banks), each value is rounded to tf32
// (cvt.rna) as a fragment takes it, and each k step of 16 is two
// mma.sync.m16n8k8.tf32 (A: rows g, g+8 x cols t, t+4; B: cols g x rows t,
// t+4; C as for f16).
//
//===----------------------------------------------------------------------===//

#include "GpuKernelUtils.h"
#include "GpuKernels.h"

#include "tfc/Conversion/KernelCommon.h"
#include "tfc/Conversion/TfcToLinalg/TfcToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

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

constexpr int64_t kMmaWarps = 4;
constexpr int64_t kMmaThreads = kMmaWarps * kWarpSize;
constexpr int64_t kMmaTileM = 64, kMmaTileN = 64, kMmaTileK = 16;
/// Shared rows are padded so that consecutive rows start in other banks:
/// by 8 16-bit elements, or 4 f32 ones (tf32).
constexpr int64_t kMmaRowPad = 8, kMmaRowPadF32 = 4;
/// Each warp: 2 x 4 tiles of m16n8 (a 32 x 32 quarter of the block).
constexpr int64_t kWarpTilesM = 2, kWarpTilesN = 4;

/// How one product reads its operands and writes its result.
struct GemmIO {
  Value m, n, k;
  SmallVector<Value> batchSizes;
  /// The operands' element type (f32, f16 or bf16).
  Type element;
  /// A[batch, m, k] / B[batch, k, n] in the element type (indices in range).
  std::function<Value(OpBuilder &, Location, ValueRange, Value, Value)> loadA,
      loadB;
  /// Whether consecutive k are adjacent in memory (else m resp. n are).
  bool aKContiguous = true, bKContiguous = false;
  /// f32 operands multiplied on the tensor cores as tf32.
  bool tf32 = false;
  /// Where A is a row-major [M, K] buffer and B one of [N, K] (a linear's
  /// input and weight): the tensor-core kernel copies their tiles by
  /// cp.async when the rows start on 16 bytes. Null otherwise.
  Value aRows, bRows;
  /// The op ("linear", "matmul"): names the split-K sum kernel.
  StringRef opName;
  /// Set on the split-K pass (emitSplitK): `store` gets the block's z
  /// (batch · splits + split) as its only batch index.
  bool partials = false;
  /// Writes the finished f32 value of C[batch, m, n].
  std::function<void(OpBuilder &, Location, ValueRange, Value, Value, Value)>
      store;
};

/// Whether `k` elements of `bytes` each are whole 16-byte copies.
Value wholeCopies(OpBuilder &b, Location loc, Value k, int64_t bytes) {
  return arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      arith::RemUIOp::create(b, loc, k, indexConst(b, loc, 16 / bytes)),
      indexConst(b, loc, 0));
}

Value cmpLt(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
}

Value addI(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::AddIOp::create(b, loc, x, y);
}

/// Buffer `slot` of `all` ([2][rows][pitch] in shared memory), as a
/// [rows][pitch] view.
Value bufferSlot(OpBuilder &b, Location l, Value all, Value slot) {
  auto type = cast<MemRefType>(all.getType());
  int64_t rows = type.getDimSize(1), pitch = type.getDimSize(2);
  SmallVector<OpFoldResult> offsets = {slot, b.getIndexAttr(0),
                                       b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(rows),
                                     b.getIndexAttr(pitch)};
  SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
  auto viewType = memref::SubViewOp::inferRankReducedResultType(
      {rows, pitch}, type, offsets, sizes, strides);
  return memref::SubViewOp::create(b, l, cast<MemRefType>(viewType), all,
                                   offsets, sizes, strides);
}

/// The k loop of the cp.async kernels, over [kBegin, kEnd) in steps of
/// `kStep` with two buffers: `stage(slot, k0)` issues the copies of step k0
/// into buffer `slot`; `multiply(slot, acc)` uses buffer `slot` and returns
/// the new accumulators. Step k0's tiles are issued one step ahead, into the
/// buffer every thread finished with at the previous step's closing
/// barrier; one commit group per step (empty after the last), so waiting for
/// all but the newest lands this step's tiles and leaves the next step's in
/// flight.
SmallVector<Value> doubleBufferedKLoop(
    OpBuilder &b, Location loc, Value kBegin, Value kEnd, int64_t kStep,
    ValueRange init,
    function_ref<void(OpBuilder &, Location, Value slot, Value k0)> stage,
    function_ref<SmallVector<Value>(OpBuilder &, Location, Value slot,
                                    ValueRange acc)>
        multiply) {
  ifThen(b, loc, cmpLt(b, loc, kBegin, kEnd), [&](OpBuilder &b, Location l) {
    stage(b, l, indexConst(b, l, 0), kBegin);
  });
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
  return forLoopReduce(
      b, loc, kBegin, kEnd, indexConst(b, loc, kStep), init,
      [&](OpBuilder &b, Location l, Value k0, ValueRange acc) {
        Value step = arith::DivUIOp::create(
            b, l, arith::SubIOp::create(b, l, k0, kBegin),
            indexConst(b, l, kStep));
        Value slot = arith::RemUIOp::create(b, l, step, indexConst(b, l, 2));
        Value other = arith::SubIOp::create(b, l, indexConst(b, l, 1), slot);
        Value k1 = addI(b, l, k0, indexConst(b, l, kStep));
        ifThen(b, l, cmpLt(b, l, k1, kEnd),
               [&](OpBuilder &b, Location l) { stage(b, l, other, k1); });
        NVVM::CpAsyncCommitGroupOp::create(b, l);
        NVVM::CpAsyncWaitGroupOp::create(b, l, 1);
        gpu::BarrierOp::create(b, l);
        SmallVector<Value> next = multiply(b, l, slot, acc);
        // The buffer is not overwritten before every thread used it.
        gpu::BarrierOp::create(b, l);
        return next;
      });
}

/// Stages the `tileK` x `tile` slice of one operand starting at (k0, x0)
/// into `shared`, cooperatively over `threads` threads: element (k, x) is
/// `load(x, k)` (an in-range read), extended to f32 when `shared` holds f32,
/// and zero outside the operand; it lands at [k][x] with `kMajor`, else at
/// [x][k]. Consecutive threads read consecutive addresses of the operand's
/// contiguous axis.
void stageTile(OpBuilder &b, Location loc, Value thread, int64_t threads,
               Value shared, int64_t tileK, int64_t tile, Value k0, Value x0,
               Value kSize, Value xSize, bool kContiguous, bool kMajor,
               function_ref<Value(OpBuilder &, Location, Value, Value)> load) {
  Type stored = cast<MemRefType>(shared.getType()).getElementType();
  int64_t perThread = tileK * tile / threads;
  Value one = indexConst(b, loc, 1);
  Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(stored, 0.0));
  for (int64_t i = 0; i < perThread; ++i) {
    Value e = addI(b, loc, thread, indexConst(b, loc, i * threads));
    Value kk, xx;
    if (kContiguous) {
      kk = arith::RemUIOp::create(b, loc, e, indexConst(b, loc, tileK));
      xx = arith::DivUIOp::create(b, loc, e, indexConst(b, loc, tileK));
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
    Value loaded = load(b, loc, xc, kc);
    if (loaded.getType() != stored)
      loaded = arith::ExtFOp::create(b, loc, stored, loaded);
    Value v = arith::SelectOp::create(b, loc, inside, loaded, zero);
    memref::StoreOp::create(b, loc, v, shared,
                            kMajor ? ValueRange{kk, xx} : ValueRange{xx, kk});
  }
}

void emitMmaGemm(OpBuilder &b, Location loc, const GemmIO &io, Value splits,
                 Value kPerSplit);

constexpr int64_t kWideTile = 128, kWideTileK = 8, kWidePad = 4;
constexpr int64_t kWideHalf = kWideTile / 2;
/// The wide kernel is taken when it still gives this many blocks (an H100
/// has 132 SMs, an A100 108): below it, the 64x64 tiles' 4x more blocks
/// keep more of the GPU busy than the wide tiles' reuse gains.
constexpr int64_t kWideMinBlocks = 132;

/// f32 C = A·B in 128 x 128 blocks: 256 threads as 16 x 16, each with 8 x 8
/// accumulators, rows ty*4 + {0..3} and 64 + ty*4 + {0..3}, columns likewise
/// from tx, so that each k step reads two float4 of A and two of B from
/// shared memory for 64 FMAs (the 64 x 64 kernel: 8 scalar reads for 16).
/// Both operands are staged k-major, [8][128 + 4]: the padding puts the
/// transposing stores of a warp in 32 different banks; the float4 reads of
/// B are 16 consecutive chunks and those of A broadcasts.
void emitWideGemm(OpBuilder &b, Location loc, const GemmIO &io) {
  Value batch = product(b, loc, io.batchSizes);
  std::array<Value, 3> grid = {ceilDiv(b, loc, io.n, kWideTile),
                               ceilDiv(b, loc, io.m, kWideTile), batch};
  MLIRContext *ctx = b.getContext();
  auto tileType = sharedType(ctx, {kWideTileK, kWideTile + kWidePad});
  launch(
      b, loc, grid, kThreads, {tileType, tileType},
      [&](OpBuilder &b, Location l, const LaunchIds &ids) {
        Value as = ids.shared[0], bs = ids.shared[1];
        Value t = ids.thread;
        Value tx = arith::RemUIOp::create(b, l, t, indexConst(b, l, kThreadsX));
        Value ty = arith::DivUIOp::create(b, l, t, indexConst(b, l, kThreadsX));
        Value tx4 = arith::MulIOp::create(b, l, tx, indexConst(b, l, 4));
        Value ty4 = arith::MulIOp::create(b, l, ty, indexConst(b, l, 4));
        SmallVector<Value> bIdx =
            delinearize(b, l, ids.block[2], io.batchSizes);
        Value n0 = arith::MulIOp::create(b, l, ids.block[0],
                                         indexConst(b, l, kWideTile));
        Value m0 = arith::MulIOp::create(b, l, ids.block[1],
                                         indexConst(b, l, kWideTile));
        // The i-th of a thread's 8 rows (or columns) from its base.
        auto at = [&](Value base4, int64_t i) {
          return addI(b, l, base4,
                      indexConst(b, l, (i / 4) * kWideHalf + i % 4));
        };
        auto vec4 = VectorType::get({4}, b.getF32Type());
        SmallVector<Value> init(64, f32Const(b, l, 0.0));
        SmallVector<Value> acc = forLoopReduce(
            b, l, indexConst(b, l, 0), io.k, indexConst(b, l, kWideTileK), init,
            [&](OpBuilder &b, Location l, Value k0, ValueRange acc) {
              stageTile(b, l, t, kThreads, as, kWideTileK, kWideTile, k0, m0,
                        io.k, io.m, io.aKContiguous, /*kMajor=*/true,
                        [&](OpBuilder &b, Location l, Value m, Value k) {
                          return io.loadA(b, l, bIdx, m, k);
                        });
              stageTile(b, l, t, kThreads, bs, kWideTileK, kWideTile, k0, n0,
                        io.k, io.n, io.bKContiguous, /*kMajor=*/true,
                        [&](OpBuilder &b, Location l, Value n, Value k) {
                          return io.loadB(b, l, bIdx, k, n);
                        });
              gpu::BarrierOp::create(b, l);
              SmallVector<Value> next = forLoopReduce(
                  b, l, indexConst(b, l, 0), indexConst(b, l, kWideTileK),
                  indexConst(b, l, 1), acc,
                  [&](OpBuilder &b, Location l, Value kk, ValueRange acc) {
                    auto quad = [&](Value tile, Value base4) {
                      SmallVector<Value> v;
                      for (int64_t h = 0; h < 2; ++h) {
                        Value x = vector::LoadOp::create(
                            b, l, vec4, tile, ValueRange{kk, at(base4, 4 * h)},
                            /*nontemporal=*/false, llvm::MaybeAlign(16));
                        for (int64_t i = 0; i < 4; ++i)
                          v.push_back(vector::ExtractOp::create(b, l, x, i));
                      }
                      return v;
                    };
                    SmallVector<Value> av = quad(as, ty4), bv = quad(bs, tx4);
                    SmallVector<Value> out;
                    for (int64_t i = 0; i < 8; ++i)
                      for (int64_t j = 0; j < 8; ++j)
                        out.push_back(math::FmaOp::create(b, l, av[i], bv[j],
                                                          acc[i * 8 + j]));
                    return out;
                  });
              gpu::BarrierOp::create(b, l);
              return next;
            });
        for (int64_t i = 0; i < 8; ++i) {
          Value m = addI(b, l, m0, at(ty4, i));
          for (int64_t j = 0; j < 8; ++j) {
            Value n = addI(b, l, n0, at(tx4, j));
            Value inside = arith::AndIOp::create(b, l, cmpLt(b, l, m, io.m),
                                                 cmpLt(b, l, n, io.n));
            Value v = acc[i * 8 + j];
            ifThen(b, l, inside, [&](OpBuilder &b, Location l) {
              io.store(b, l, bIdx, m, n, v);
            });
          }
        }
      });
}

/// The f32 kernel for linear's operands (A [M, K] and W [N, K], both
/// contiguous along k): `tile` x `tile` outputs per block (64 or 128), 256
/// threads as 16 x 16, thread (ty, tx) accumulating rows ty + 16i and
/// columns tx + 16j (i, j < tile / 16). The operand tiles are staged as
/// they lie, [tile][16 + 4] per k step of 16, by cp.async 16-byte copies
/// into two buffers (the next step's land while this one is multiplied;
/// operands whose rows do not start on 16 bytes are staged by loads and
/// stores). Each 4 k are read as float4 along k: a row of A is a
/// broadcast within the 16 threads of a ty; the 8 rows of W that a
/// quarter-warp reads start 20 floats apart, in 8 different groups of 4
/// banks. With `splits` > 1, block z = batch · splits + s multiplies only
/// k in [s · kPerSplit, (s + 1) · kPerSplit) and `store` receives its
/// partial sums (the caller reduces them).
constexpr int64_t kAsyncTileK = 16, kAsyncPitch = kAsyncTileK + 4;
void emitAsyncGemm(OpBuilder &b, Location loc, const GemmIO &io, int64_t tile,
                   Value splits, Value kPerSplit) {
  int64_t per = tile / kThreadsX;
  Value batch = product(b, loc, io.batchSizes);
  std::array<Value, 3> grid = {ceilDiv(b, loc, io.n, tile),
                               ceilDiv(b, loc, io.m, tile),
                               arith::MulIOp::create(b, loc, batch, splits)};
  MLIRContext *ctx = b.getContext();
  auto tileType = sharedType(ctx, {2, tile, kAsyncPitch});
  launch(
      b, loc, grid, kThreads, {tileType, tileType},
      [&](OpBuilder &b, Location l, const LaunchIds &ids) {
        Value aBuffers = ids.shared[0], bBuffers = ids.shared[1];
        Value t = ids.thread;
        Value tx = arith::RemUIOp::create(b, l, t, indexConst(b, l, kThreadsX));
        Value ty = arith::DivUIOp::create(b, l, t, indexConst(b, l, kThreadsX));
        Value z = ids.block[2];
        Value split = arith::RemUIOp::create(b, l, z, splits);
        SmallVector<Value> bIdx = delinearize(
            b, l, arith::DivUIOp::create(b, l, z, splits), io.batchSizes);
        Value kBegin = arith::MulIOp::create(b, l, split, kPerSplit);
        Value kEnd = minIndex(b, l, addI(b, l, kBegin, kPerSplit), io.k);
        Value n0 =
            arith::MulIOp::create(b, l, ids.block[0], indexConst(b, l, tile));
        Value m0 =
            arith::MulIOp::create(b, l, ids.block[1], indexConst(b, l, tile));
        auto buffer = [&](Value all, Value slot) {
          return bufferSlot(b, l, all, slot);
        };
        AsyncSource aSource = asyncSource(b, l, io.aRows);
        AsyncSource bSource = asyncSource(b, l, io.bRows);
        // (K whole 16-byte copies too: the last copy of a row must not
        // reach past K into a strided view's next values.)
        Value async = arith::AndIOp::create(
            b, l, arith::AndIOp::create(b, l, aSource.aligned, bSource.aligned),
            wholeCopies(b, l, io.k, aSource.bytes));
        auto stage = [&](OpBuilder &b, Location l, Value slot, Value k0) {
          auto branch = scf::IfOp::create(b, l, async, /*withElse=*/true);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(branch.thenBlock());
          copyTileAsync(b, l, aSource, {}, m0, io.m, k0, kEnd,
                        buffer(aBuffers, slot), tile, kAsyncTileK, t, kThreads);
          copyTileAsync(b, l, bSource, {}, n0, io.n, k0, kEnd,
                        buffer(bBuffers, slot), tile, kAsyncTileK, t, kThreads);
          b.setInsertionPointToStart(branch.elseBlock());
          stageTile(b, l, t, kThreads, buffer(aBuffers, slot), kAsyncTileK,
                    tile, k0, m0, kEnd, io.m, /*kContiguous=*/true,
                    /*kMajor=*/false,
                    [&](OpBuilder &b, Location l, Value m, Value k) {
                      return io.loadA(b, l, bIdx, m, k);
                    });
          stageTile(b, l, t, kThreads, buffer(bBuffers, slot), kAsyncTileK,
                    tile, k0, n0, kEnd, io.n, /*kContiguous=*/true,
                    /*kMajor=*/false,
                    [&](OpBuilder &b, Location l, Value n, Value k) {
                      return io.loadB(b, l, bIdx, k, n);
                    });
        };
        auto vec4 = VectorType::get({4}, b.getF32Type());
        SmallVector<Value> init(per * per, f32Const(b, l, 0.0));
        SmallVector<Value> acc = doubleBufferedKLoop(
            b, l, kBegin, kEnd, kAsyncTileK, init, stage,
            [&](OpBuilder &b, Location l, Value slot, ValueRange acc) {
              Value as = buffer(aBuffers, slot), bs = buffer(bBuffers, slot);
              SmallVector<Value> next = forLoopReduce(
                  b, l, indexConst(b, l, 0), indexConst(b, l, kAsyncTileK),
                  indexConst(b, l, 4), acc,
                  [&](OpBuilder &b, Location l, Value kk, ValueRange acc) {
                    auto rowsOf = [&](Value tileBuf, Value first) {
                      SmallVector<SmallVector<Value>> rows;
                      for (int64_t i = 0; i < per; ++i) {
                        Value x = vector::LoadOp::create(
                            b, l, vec4, tileBuf,
                            ValueRange{addI(b, l, first,
                                            indexConst(b, l, i * kThreadsY)),
                                       kk},
                            /*nontemporal=*/false, llvm::MaybeAlign(16));
                        SmallVector<Value> v;
                        for (int64_t e = 0; e < 4; ++e)
                          v.push_back(vector::ExtractOp::create(b, l, x, e));
                        rows.push_back(v);
                      }
                      return rows;
                    };
                    auto av = rowsOf(as, ty), bv = rowsOf(bs, tx);
                    SmallVector<Value> out(acc);
                    for (int64_t e = 0; e < 4; ++e)
                      for (int64_t i = 0; i < per; ++i)
                        for (int64_t j = 0; j < per; ++j)
                          out[i * per + j] = math::FmaOp::create(
                              b, l, av[i][e], bv[j][e], out[i * per + j]);
                    return out;
                  });
              return next;
            });
        for (int64_t i = 0; i < per; ++i) {
          Value m = addI(b, l, m0, addI(b, l, ty, indexConst(b, l, i * 16)));
          for (int64_t j = 0; j < per; ++j) {
            Value n = addI(b, l, n0, addI(b, l, tx, indexConst(b, l, j * 16)));
            Value inside = arith::AndIOp::create(b, l, cmpLt(b, l, m, io.m),
                                                 cmpLt(b, l, n, io.n));
            Value v = acc[i * per + j];
            // Partial sums go by the block's z (batch · splits + s).
            SmallVector<Value> target =
                io.partials ? SmallVector<Value>{z} : bIdx;
            ifThen(b, l, inside, [&](OpBuilder &b, Location l) {
              io.store(b, l, target, m, n, v);
            });
          }
        }
      });
}

/// Blocks that fill an H100 (132 SMs; an A100 has 108).
constexpr int64_t kFillBlocks = 132;
/// Split-K leaves each split at least this many k (and only splits products
/// with K >= 2 · kMinSplitK).
constexpr int64_t kMinSplitK = 128;

/// A kernel of a product that multiplies, in block z = batch · splits + s,
/// k in [s · kPerSplit, min(K, (s + 1) · kPerSplit)).
using SplitKernel =
    function_ref<void(const GemmIO &, Value splits, Value kPerSplit)>;

/// `kernel` on `io` with K split where its `tile` x `tile` blocks are fewer
/// than kFillBlocks: splits = min(ceil(kFillBlocks / blocks), K /
/// kMinSplitK), each a multiple of 16 k; the partial sums land in a
/// [batch · splits, M, N] f32 buffer and a second kernel,
/// tfc_<op>_splitk_sum_<type>, adds them in split order (deterministic)
/// and applies the epilogue.
void emitSplitK(OpBuilder &b, Location loc, const GemmIO &io, int64_t tile,
                SplitKernel kernel) {
  Value batch = product(b, loc, io.batchSizes);
  Value blocks = arith::MulIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, ceilDiv(b, loc, io.m, tile),
                            ceilDiv(b, loc, io.n, tile)),
      batch);
  Value one = indexConst(b, loc, 1);
  Value fill = indexConst(b, loc, kFillBlocks);
  // splits = max(1, min(ceil(fill / blocks), K / kMinSplitK)).
  Value wanted = arith::CeilDivUIOp::create(
      b, loc, fill, arith::MaxUIOp::create(b, loc, blocks, one));
  Value splits = arith::MaxUIOp::create(
      b, loc, one,
      arith::MinUIOp::create(
          b, loc, wanted,
          arith::DivUIOp::create(b, loc, io.k,
                                 indexConst(b, loc, kMinSplitK))));
  // Each split a whole number of k steps of 16; splits recounted from it.
  Value steps = ceilDiv(b, loc, io.k, 16);
  Value kPerSplit = arith::MulIOp::create(
      b, loc, arith::CeilDivUIOp::create(b, loc, steps, splits),
      indexConst(b, loc, 16));
  splits = arith::MaxUIOp::create(
      b, loc, one,
      arith::CeilDivUIOp::create(
          b, loc, io.k, arith::MaxUIOp::create(b, loc, kPerSplit, one)));
  Value kAll = arith::MaxUIOp::create(b, loc, io.k, one);

  auto split = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, splits, one),
      /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(split.thenBlock());
  kernel(io, one, kAll);
  b.setInsertionPointToStart(split.elseBlock());
  MLIRContext *ctx = b.getContext();
  auto partialType = MemRefType::get(
      {ShapedType::kDynamic, ShapedType::kDynamic, ShapedType::kDynamic},
      Float32Type::get(ctx));
  Value rows = arith::MulIOp::create(b, loc, batch, splits);
  Value partial = memref::AllocOp::create(b, loc, partialType,
                                          ValueRange{rows, io.m, io.n});
  GemmIO parts = io;
  parts.partials = true;
  parts.store = [&](OpBuilder &b, Location l, ValueRange z, Value m, Value n,
                    Value v) {
    memref::StoreOp::create(b, l, v, partial, ValueRange{z[0], m, n});
  };
  kernel(parts, splits, kPerSplit);
  // out[b, m, n] = epilogue(sum over s in order of partial[b·splits + s]).
  Value outputs = arith::MulIOp::create(
      b, loc, batch, arith::MulIOp::create(b, loc, io.m, io.n));
  gpu::LaunchOp sum = launch(
      b, loc, {ceilDiv(b, loc, outputs, kThreads), one, one}, kThreads, {},
      [&](OpBuilder &b, Location l, const LaunchIds &ids) {
        Value e = addI(b, l,
                       arith::MulIOp::create(b, l, ids.block[0],
                                             indexConst(b, l, kThreads)),
                       ids.thread);
        ifThen(b, l, cmpLt(b, l, e, outputs), [&](OpBuilder &b, Location l) {
          Value n = arith::RemUIOp::create(b, l, e, io.n);
          Value rest = arith::DivUIOp::create(b, l, e, io.n);
          Value m = arith::RemUIOp::create(b, l, rest, io.m);
          Value bz = arith::DivUIOp::create(b, l, rest, io.m);
          Value first = arith::MulIOp::create(b, l, bz, splits);
          SmallVector<Value> sum = forLoopReduce(
              b, l, indexConst(b, l, 0), splits, indexConst(b, l, 1),
              {f32Const(b, l, 0.0)},
              [&](OpBuilder &b, Location l, Value s,
                  ValueRange acc) -> SmallVector<Value> {
                Value v = memref::LoadOp::create(
                    b, l, partial, ValueRange{addI(b, l, first, s), m, n});
                return {arith::AddFOp::create(b, l, acc[0], v)};
              });
          io.store(b, l, delinearize(b, l, bz, io.batchSizes), m, n, sum[0]);
        });
      });
  // Named apart from the product's kernels (TFC_CUDA_PROFILE, SASS).
  std::string name = ("tfc_" + io.opName + "_splitk_sum_").str();
  llvm::raw_string_ostream(name) << io.element;
  sum.setFunctionAttr(FlatSymbolRefAttr::get(ctx, name));
}

/// A linear of at most kGemvRows rows (a decode step's) reads every weight
/// once and does two FLOPs per weight: it is bound by memory, so it runs as
/// a matrix-vector product. One warp per output column n: the lanes read
/// W[n, :] and the rows of A in 16-byte loads (kGemvUnroll per lane in
/// flight), accumulate in f32 vectors, sum them across the warp by shuffles;
/// lane 0 applies the epilogue and stores the column for each row. Rows
/// that are not whole 16-byte copies (K, or an unaligned start) take the
/// same loop one element per lane.
constexpr int64_t kGemvRows = 4, kGemvWarps = 4, kGemvUnroll = 4;

void emitGemv(OpBuilder &b, Location loc, const GemmIO &io) {
  MLIRContext *ctx = b.getContext();
  Type element = io.element, f32 = Float32Type::get(ctx);
  AsyncSource a = asyncSource(b, loc, io.aRows),
              w = asyncSource(b, loc, io.bRows);
  int64_t perCopy = 16 / a.bytes;
  Value zeroIdx = indexConst(b, loc, 0);
  Value vectorized = arith::AndIOp::create(
      b, loc, arith::AndIOp::create(b, loc, a.aligned, w.aligned),
      arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::eq,
          arith::RemUIOp::create(b, loc, io.k, indexConst(b, loc, perCopy)),
          zeroIdx));
  Value chunks =
      arith::DivUIOp::create(b, loc, io.k, indexConst(b, loc, perCopy));
  Value one = indexConst(b, loc, 1);
  gpu::LaunchOp kernel = launch(
      b, loc, {ceilDiv(b, loc, io.n, kGemvWarps), one, one},
      kGemvWarps * kWarpSize, {},
      [&](OpBuilder &b, Location l, const LaunchIds &ids) {
        Value lane = arith::RemUIOp::create(b, l, ids.thread,
                                            indexConst(b, l, kWarpSize));
        Value warp = arith::DivUIOp::create(b, l, ids.thread,
                                            indexConst(b, l, kWarpSize));
        Value n = addI(b, l,
                       arith::MulIOp::create(b, l, ids.block[0],
                                             indexConst(b, l, kGemvWarps)),
                       warp);
        // The warp's column exists (uniform across the warp).
        ifThen(b, l, cmpLt(b, l, n, io.n), [&](OpBuilder &b, Location l) {
          Value lastRow =
              arith::SubIOp::create(b, l, io.m, indexConst(b, l, 1));
          SmallVector<Value> rows;
          for (int64_t r = 0; r < kGemvRows; ++r)
            rows.push_back(minIndex(b, l, indexConst(b, l, r), lastRow));
          SmallVector<Type> sumTypes(kGemvRows, f32);
          auto paths = scf::IfOp::create(b, l, sumTypes, vectorized,
                                         /*withElseRegion=*/true);
          {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(paths.thenBlock());
            auto stored = VectorType::get({perCopy}, element);
            auto wide = VectorType::get({perCopy}, f32);
            Value zeros = arith::ConstantOp::create(
                b, l, wide,
                DenseElementsAttr::get(wide, b.getF32FloatAttr(0.0)));
            auto widen = [&](Value v) -> Value {
              return element.isF32()
                         ? v
                         : arith::ExtFOp::create(b, l, wide, v).getResult();
            };
            Value lastChunk =
                arith::SubIOp::create(b, l, chunks, indexConst(b, l, 1));
            SmallVector<Value> init(kGemvRows, zeros);
            SmallVector<Value> acc = forLoopReduce(
                b, l, lane, chunks, indexConst(b, l, kWarpSize * kGemvUnroll),
                init, [&](OpBuilder &b, Location l, Value c0, ValueRange acc) {
                  SmallVector<Value> next(acc);
                  for (int64_t u = 0; u < kGemvUnroll; ++u) {
                    Value c = addI(b, l, c0, indexConst(b, l, u * kWarpSize));
                    // Past the row: a valid read, weighted by zero.
                    Value k = arith::MulIOp::create(
                        b, l, minIndex(b, l, c, lastChunk),
                        indexConst(b, l, perCopy));
                    Value wv = arith::SelectOp::create(
                        b, l, cmpLt(b, l, c, chunks),
                        widen(loadGlobalVector(b, l, w, {n, k}, stored)),
                        zeros);
                    for (int64_t r = 0; r < kGemvRows; ++r)
                      next[r] = math::FmaOp::create(
                          b, l,
                          widen(
                              loadGlobalVector(b, l, a, {rows[r], k}, stored)),
                          wv, next[r]);
                  }
                  return next;
                });
            SmallVector<Value> sums;
            for (Value v : acc)
              sums.push_back(vector::ReductionOp::create(
                  b, l, vector::CombiningKind::ADD, v));
            scf::YieldOp::create(b, l, sums);
          }
          {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(paths.elseBlock());
            SmallVector<Value> init(kGemvRows, f32Const(b, l, 0.0));
            SmallVector<Value> sums = forLoopReduce(
                b, l, lane, io.k, indexConst(b, l, kWarpSize), init,
                [&](OpBuilder &b, Location l, Value k, ValueRange acc) {
                  Value wk = loadF32(b, l, io.bRows, ValueRange{n, k});
                  SmallVector<Value> next;
                  for (int64_t r = 0; r < kGemvRows; ++r)
                    next.push_back(math::FmaOp::create(
                        b, l, loadF32(b, l, io.aRows, ValueRange{rows[r], k}),
                        wk, acc[r]));
                  return next;
                });
            scf::YieldOp::create(b, l, sums);
          }
          Value first = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                              lane, indexConst(b, l, 0));
          for (int64_t r = 0; r < kGemvRows; ++r) {
            Value sum = warpReduce(b, l, paths.getResult(r), Reduction::Add);
            Value m = indexConst(b, l, r);
            ifThen(b, l,
                   arith::AndIOp::create(b, l, first, cmpLt(b, l, m, io.m)),
                   [&](OpBuilder &b, Location l) {
                     io.store(b, l, ValueRange{}, m, n, sum);
                   });
          }
        });
      });
  std::string name = ("tfc_" + io.opName + "_gemv_").str();
  llvm::raw_string_ostream(name) << element;
  kernel.setFunctionAttr(FlatSymbolRefAttr::get(ctx, name));
}

/// linear in f32 on CUDA cores: emitAsyncGemm in 128 x 128 tiles where they
/// give kFillBlocks blocks, else in 64 x 64 tiles, split along K where even
/// those are too few (emitSplitK).
void emitLinearGemm(OpBuilder &b, Location loc, const GemmIO &io) {
  Value batch = product(b, loc, io.batchSizes);
  Value wideBlocks = arith::MulIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, ceilDiv(b, loc, io.m, kWideTile),
                            ceilDiv(b, loc, io.n, kWideTile)),
      batch);
  auto wide = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, wideBlocks,
                            indexConst(b, loc, kFillBlocks)),
      /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(wide.thenBlock());
  Value one = indexConst(b, loc, 1);
  emitAsyncGemm(b, loc, io, kWideTile, one,
                arith::MaxUIOp::create(b, loc, io.k, one));
  b.setInsertionPointToStart(wide.elseBlock());
  emitSplitK(b, loc, io, kTileM,
             [&](const GemmIO &io, Value splits, Value kPerSplit) {
               emitAsyncGemm(b, loc, io, kTileM, splits, kPerSplit);
             });
}

void emitSmallGemm(OpBuilder &b, Location loc, const GemmIO &io);

void emitTiledGemm(OpBuilder &b, Location loc, const GemmIO &io) {
  if (io.element.isF16() || io.element.isBF16() ||
      (io.tf32 && io.element.isF32()))
    return emitSplitK(b, loc, io, kMmaTileM,
                      [&](const GemmIO &io, Value splits, Value kPerSplit) {
                        emitMmaGemm(b, loc, io, splits, kPerSplit);
                      });
  if (io.aRows && io.bRows)
    return emitLinearGemm(b, loc, io);
  // The wide kernel where it still fills the GPU (sizes are known on the
  // host at run time), else the 64 x 64 one.
  Value wideBlocks = arith::MulIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, ceilDiv(b, loc, io.m, kWideTile),
                            ceilDiv(b, loc, io.n, kWideTile)),
      product(b, loc, io.batchSizes));
  Value wide =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, wideBlocks,
                            indexConst(b, loc, kWideMinBlocks));
  auto branch = scf::IfOp::create(b, loc, wide, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(branch.thenBlock());
  emitWideGemm(b, loc, io);
  b.setInsertionPointToStart(branch.elseBlock());
  emitSmallGemm(b, loc, io);
}

void emitSmallGemm(OpBuilder &b, Location loc, const GemmIO &io) {
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
        SmallVector<Value> bIdx =
            delinearize(b, l, ids.block[2], io.batchSizes);
        Value n0 =
            arith::MulIOp::create(b, l, ids.block[0], indexConst(b, l, kTileN));
        Value m0 =
            arith::MulIOp::create(b, l, ids.block[1], indexConst(b, l, kTileM));
        SmallVector<Value> init(kPerThreadM * kPerThreadN, f32Const(b, l, 0.0));
        SmallVector<Value> acc = forLoopReduce(
            b, l, indexConst(b, l, 0), io.k, indexConst(b, l, kTileK), init,
            [&](OpBuilder &b, Location l, Value k0, ValueRange acc) {
              stageTile(b, l, t, kThreads, as, kTileK, kTileM, k0, m0, io.k,
                        io.m, io.aKContiguous, /*kMajor=*/true,
                        [&](OpBuilder &b, Location l, Value m, Value k) {
                          return io.loadA(b, l, bIdx, m, k);
                        });
              stageTile(b, l, t, kThreads, bs, kTileK, kTileN, k0, n0, io.k,
                        io.n, io.bKContiguous, /*kMajor=*/true,
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
                          ValueRange{kk,
                                     addI(b, l, ty,
                                          indexConst(b, l, i * kThreadsY))}));
                    for (int64_t j = 0; j < kPerThreadN; ++j)
                      bv.push_back(memref::LoadOp::create(
                          b, l, bs,
                          ValueRange{kk,
                                     addI(b, l, tx,
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
          Value m =
              addI(b, l, m0, addI(b, l, ty, indexConst(b, l, i * kThreadsY)));
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

void emitMmaGemm(OpBuilder &b, Location loc, const GemmIO &io, Value splits,
                 Value kPerSplit) {
  Value batch = product(b, loc, io.batchSizes);
  std::array<Value, 3> grid = {ceilDiv(b, loc, io.n, kMmaTileN),
                               ceilDiv(b, loc, io.m, kMmaTileM),
                               arith::MulIOp::create(b, loc, batch, splits)};
  MLIRContext *ctx = b.getContext();
  Type element = io.element;
  bool tf32 = element.isF32();
  NVVM::MMATypes ptxType = tf32              ? NVVM::MMATypes::tf32
                           : element.isF16() ? NVVM::MMATypes::f16
                                             : NVVM::MMATypes::bf16;
  int64_t pitch = kMmaTileK + (tf32 ? kMmaRowPadF32 : kMmaRowPad);
  // Two buffers per operand: the next k step's tiles land while this one's
  // are multiplied.
  auto tileType = sharedType(ctx, {2, kMmaTileM, pitch}, element);
  launch(
      b, loc, grid, kMmaThreads, {tileType, tileType},
      [&](OpBuilder &b, Location l, const LaunchIds &ids) {
        Value aBuffers = ids.shared[0], bBuffers = ids.shared[1];
        Value t = ids.thread;
        Value lane =
            arith::RemUIOp::create(b, l, t, indexConst(b, l, kWarpSize));
        Value warp =
            arith::DivUIOp::create(b, l, t, indexConst(b, l, kWarpSize));
        Value group = arith::DivUIOp::create(b, l, lane, indexConst(b, l, 4));
        Value tig = arith::RemUIOp::create(b, l, lane, indexConst(b, l, 4));
        Value tig2 = arith::MulIOp::create(b, l, tig, indexConst(b, l, 2));
        // ldmatrix addressing (half-precision operands).
        Value laneMod8 = arith::RemUIOp::create(b, l, lane, indexConst(b, l, 8));
        Value lane8Mod2 = arith::RemUIOp::create(
            b, l, arith::DivUIOp::create(b, l, lane, indexConst(b, l, 8)),
            indexConst(b, l, 2));
        Value lane16 = arith::DivUIOp::create(b, l, lane, indexConst(b, l, 16));
        auto times8 = [&](Value v) {
          return arith::MulIOp::create(b, l, v, indexConst(b, l, 8));
        };
        Value aRowInTile = addI(b, l, laneMod8, times8(lane8Mod2));
        Value aColInTile = times8(lane16);
        Value bRowInTile = addI(b, l, laneMod8, times8(lane16));
        Value bColInTile = times8(lane8Mod2);
        // Warp (wm, wn) of the 2 x 2 warp grid owns rows wm*32, cols wn*32.
        Value wm = arith::DivUIOp::create(b, l, warp, indexConst(b, l, 2));
        Value wn = arith::RemUIOp::create(b, l, warp, indexConst(b, l, 2));
        Value rowBase = arith::MulIOp::create(b, l, wm, indexConst(b, l, 32));
        Value colBase = arith::MulIOp::create(b, l, wn, indexConst(b, l, 32));
        Value z = ids.block[2];
        SmallVector<Value> bIdx = delinearize(
            b, l, arith::DivUIOp::create(b, l, z, splits), io.batchSizes);
        Value kBegin = arith::MulIOp::create(
            b, l, arith::RemUIOp::create(b, l, z, splits), kPerSplit);
        Value kEnd = minIndex(b, l, addI(b, l, kBegin, kPerSplit), io.k);
        Value n0 = arith::MulIOp::create(b, l, ids.block[0],
                                         indexConst(b, l, kMmaTileN));
        Value m0 = arith::MulIOp::create(b, l, ids.block[1],
                                         indexConst(b, l, kMmaTileM));
        auto at = [&](Value base, int64_t off) {
          return addI(b, l, base, indexConst(b, l, off));
        };
        constexpr int64_t kAcc = kWarpTilesM * kWarpTilesN * 4;
        SmallVector<Value> init(kAcc, f32Const(b, l, 0.0));
        // Buffer `slot` ([64][k], k innermost, in the element type).
        auto buffer = [&](Value all, Value slot) {
          return bufferSlot(b, l, all, slot);
        };
        // cp.async where both operands are row-major buffers whose rows
        // start on 16 bytes (checked once per block), else loads and stores.
        Value async;
        AsyncSource aSource, bSource;
        if (io.aRows && io.bRows) {
          aSource = asyncSource(b, l, io.aRows);
          bSource = asyncSource(b, l, io.bRows);
          async = arith::AndIOp::create(
              b, l,
              arith::AndIOp::create(b, l, aSource.aligned, bSource.aligned),
              wholeCopies(b, l, io.k, aSource.bytes));
        }
        // Stages the tiles of k step k0 into buffer `slot`.
        auto stage = [&](OpBuilder &b, Location l, Value slot, Value k0) {
          auto sync = [&](OpBuilder &b, Location l) {
            stageTile(b, l, t, kMmaThreads, buffer(aBuffers, slot), kMmaTileK,
                      kMmaTileM, k0, m0, kEnd, io.m, io.aKContiguous,
                      /*kMajor=*/false,
                      [&](OpBuilder &b, Location l, Value m, Value k) {
                        return io.loadA(b, l, bIdx, m, k);
                      });
            stageTile(b, l, t, kMmaThreads, buffer(bBuffers, slot), kMmaTileK,
                      kMmaTileN, k0, n0, kEnd, io.n, io.bKContiguous,
                      /*kMajor=*/false,
                      [&](OpBuilder &b, Location l, Value n, Value k) {
                        return io.loadB(b, l, bIdx, k, n);
                      });
          };
          if (!async) {
            sync(b, l);
          } else {
            auto branch = scf::IfOp::create(b, l, async, /*withElse=*/true);
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(branch.thenBlock());
            for (auto [source, buffers, x0, size] :
                 {std::tuple(&aSource, aBuffers, m0, io.m),
                  std::tuple(&bSource, bBuffers, n0, io.n)})
              copyTileAsync(b, l, *source, {}, x0, size, k0, kEnd,
                            buffer(buffers, slot), kMmaTileM, kMmaTileK, t,
                            kMmaThreads);
            b.setInsertionPointToStart(branch.elseBlock());
            sync(b, l);
          }
        };
        // (No product of K = 0 reads its operands.)
        SmallVector<Value> acc = doubleBufferedKLoop(
            b, l, kBegin, kEnd, kMmaTileK, init, stage,
            [&](OpBuilder &b, Location l, Value slot,
                ValueRange acc) -> SmallVector<Value> {
              Value as = buffer(aBuffers, slot), bs = buffer(bBuffers, slot);
              auto mmaTile = [&](ArrayRef<Value> aFrag, ArrayRef<Value> bFrag,
                                 ValueRange c, ArrayRef<int64_t> shape) {
                return mmaSync(b, l, ptxType, aFrag, bFrag, c, shape);
              };
              if (tf32) {
                // A value of a tile rounded to tf32 (an i32 register).
                auto frag = [&](Value tile, Value row, Value col) -> Value {
                  Value v =
                      memref::LoadOp::create(b, l, tile, ValueRange{row, col});
                  return NVVM::ConvertFloatToTF32Op::create(
                      b, l, b.getI32Type(), v, NVVM::FPRoundingMode::RNA,
                      NVVM::SaturationMode::NONE, /*relu=*/false);
                };
                SmallVector<Value> cur(acc.begin(), acc.end());
                for (int64_t kk = 0; kk < kMmaTileK; kk += 8) {
                  Value k1 = at(tig, kk), k2 = at(tig, kk + 4);
                  SmallVector<SmallVector<Value>> aFrags, bFrags;
                  for (int64_t mi = 0; mi < kWarpTilesM; ++mi) {
                    Value r = addI(b, l, at(rowBase, mi * 16), group);
                    aFrags.push_back({frag(as, r, k1), frag(as, at(r, 8), k1),
                                      frag(as, r, k2), frag(as, at(r, 8), k2)});
                  }
                  for (int64_t ni = 0; ni < kWarpTilesN; ++ni) {
                    Value c = addI(b, l, at(colBase, ni * 8), group);
                    bFrags.push_back({frag(bs, c, k1), frag(bs, c, k2)});
                  }
                  for (int64_t mi = 0; mi < kWarpTilesM; ++mi)
                    for (int64_t ni = 0; ni < kWarpTilesN; ++ni) {
                      int64_t base = (mi * kWarpTilesN + ni) * 4;
                      SmallVector<Value> d =
                          mmaTile(aFrags[mi], bFrags[ni],
                                  ValueRange(cur).slice(base, 4), {16, 8, 8});
                      for (int64_t c = 0; c < 4; ++c)
                        cur[base + c] = d[c];
                    }
                }
                return cur;
              }
              // Fragments by ldmatrix.x4: A's four 8x8 quarters of a 16x16
              // tile (lane L gives row L%8 + 8((L/8)%2) at column 8(L/16)),
              // B's two k halves of two n tiles (row L%8 + 8(L/16) at
              // column 8((L/8)%2)).
              SmallVector<SmallVector<Value>> aFrags, bFrags;
              for (int64_t mi = 0; mi < kWarpTilesM; ++mi)
                aFrags.push_back(loadMatrices(
                    b, l, as, addI(b, l, at(rowBase, mi * 16), aRowInTile),
                    aColInTile, 4, /*transpose=*/false));
              for (int64_t ni = 0; ni < kWarpTilesN; ni += 2) {
                SmallVector<Value> regs = loadMatrices(
                    b, l, bs, addI(b, l, at(colBase, ni * 8), bRowInTile),
                    bColInTile, 4, /*transpose=*/false);
                bFrags.push_back({regs[0], regs[1]});
                bFrags.push_back({regs[2], regs[3]});
              }
              SmallVector<Value> next;
              for (int64_t mi = 0; mi < kWarpTilesM; ++mi)
                for (int64_t ni = 0; ni < kWarpTilesN; ++ni) {
                  int64_t base = (mi * kWarpTilesN + ni) * 4;
                  SmallVector<Value> d = mmaTile(
                      aFrags[mi], bFrags[ni], acc.slice(base, 4), {16, 8, 16});
                  next.append(d.begin(), d.end());
                }
              return next;
            });
        for (int64_t mi = 0; mi < kWarpTilesM; ++mi)
          for (int64_t ni = 0; ni < kWarpTilesN; ++ni)
            for (int64_t c = 0; c < 4; ++c) {
              Value m = addI(
                  b, l, m0,
                  addI(b, l, at(rowBase, mi * 16 + (c >= 2 ? 8 : 0)), group));
              Value n = addI(b, l, n0,
                             addI(b, l, at(colBase, ni * 8 + (c & 1)), tig2));
              Value inside = arith::AndIOp::create(b, l, cmpLt(b, l, m, io.m),
                                                   cmpLt(b, l, n, io.n));
              Value v = acc[(mi * kWarpTilesN + ni) * 4 + c];
              // Partial sums go by the block's z (batch · splits + s).
              SmallVector<Value> target =
                  io.partials ? SmallVector<Value>{z} : bIdx;
              ifThen(b, l, inside, [&](OpBuilder &b, Location l) {
                io.store(b, l, target, m, n, v);
              });
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
  }
  return collapseToMatrix(b, loc, memref);
}

} // namespace

LogicalResult gpuk::emitLinear(OpBuilder &b, Location loc, kernel::LinearOp op,
                               Value input, Value weight, Value bias, Value out,
                               bool tf32) {
  Value a = as2D(b, loc, input);
  Value c = as2D(b, loc, out);
  Activation activation = op.getActivation();
  GemmIO io;
  io.m = memref::DimOp::create(b, loc, a, 0);
  io.k = memref::DimOp::create(b, loc, a, 1);
  io.n = memref::DimOp::create(b, loc, weight, 0);
  io.element = cast<MemRefType>(a.getType()).getElementType();
  io.opName = "linear";
  io.loadA = [&](OpBuilder &b, Location l, ValueRange, Value m, Value k) {
    return memref::LoadOp::create(b, l, a, ValueRange{m, k}).getResult();
  };
  // B[k, n] = W[n, k]: contiguous along k.
  io.loadB = [&](OpBuilder &b, Location l, ValueRange, Value k, Value n) {
    return memref::LoadOp::create(b, l, weight, ValueRange{n, k}).getResult();
  };
  io.aKContiguous = true;
  io.bKContiguous = true;
  io.tf32 = tf32;
  io.aRows = a;
  io.bRows = weight;
  io.store = [&](OpBuilder &b, Location l, ValueRange, Value m, Value n,
                 Value v) {
    if (bias)
      v = arith::AddFOp::create(b, l, v, loadF32(b, l, bias, ValueRange{n}));
    v = buildActivation(b, l, v, activation);
    storeF32(b, l, v, c, ValueRange{m, n});
  };
  // 1 to kGemvRows rows: the matrix-vector kernel; else the tiled GEMMs.
  Value few = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, io.m,
                            indexConst(b, loc, kGemvRows)),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, io.m,
                            indexConst(b, loc, 1)));
  auto branch = scf::IfOp::create(b, loc, few, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(branch.thenBlock());
  emitGemv(b, loc, io);
  b.setInsertionPointToStart(branch.elseBlock());
  emitTiledGemm(b, loc, io);
  return success();
}

LogicalResult gpuk::emitMatmul(OpBuilder &b, Location loc, kernel::MatmulOp op,
                               Value lhs, Value rhs, Value out, bool tf32) {
  auto outType = cast<MemRefType>(out.getType());
  auto lType = cast<MemRefType>(lhs.getType());
  auto rType = cast<MemRefType>(rhs.getType());
  int64_t rank = outType.getRank();
  bool tl = op.getTransposeLhs(), tr = op.getTransposeRhs();
  GemmIO io;
  io.m = memref::DimOp::create(b, loc, out, rank - 2);
  io.n = memref::DimOp::create(b, loc, out, rank - 1);
  io.k = memref::DimOp::create(b, loc, lhs,
                               tl ? lType.getRank() - 2 : lType.getRank() - 1);
  io.batchSizes = dimSizes(b, loc, out, 0, rank - 2);
  io.loadA = [&](OpBuilder &b, Location l, ValueRange batch, Value m, Value k) {
    SmallVector<Value> idx = operandBatchIndices(b, l, lType, outType, batch);
    idx.push_back(tl ? k : m);
    idx.push_back(tl ? m : k);
    return memref::LoadOp::create(b, l, lhs, idx).getResult();
  };
  io.loadB = [&](OpBuilder &b, Location l, ValueRange batch, Value k, Value n) {
    SmallVector<Value> idx = operandBatchIndices(b, l, rType, outType, batch);
    idx.push_back(tr ? n : k);
    idx.push_back(tr ? k : n);
    return memref::LoadOp::create(b, l, rhs, idx).getResult();
  };
  io.element = lType.getElementType();
  io.opName = "matmul";
  io.aKContiguous = !tl;
  io.bKContiguous = tr;
  io.tf32 = tf32;
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
