//===- Gemm.cpp - Packing, the GEMM micro-kernel and batched matmul -------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// C[M, N] = A[M, K] · B[K, N] is computed in register tiles sized per
// instruction set (KernelConfig.h: AVX-512 6 rows x 2 panels of 32 columns =
// 24 zmm accumulators; AVX2 4 x 24 = 12 ymm). For each k the tile loads its
// columns of B (one vector per chunk) and broadcasts one value of A per row,
// then issues rows x chunks FMAs; bias and activation are applied to the
// tile in registers before it is stored (masked at the right edge).
//
// For tfc_cpu.gemm, B is a weight packed at load time into column panels
// [N/NR, K, NR] so each tile streams contiguous panels. Parallel tasks are
// blocks of rows x panelsPerTask panels; within a task the depth goes in k
// blocks of kc (the tile's kc-deep panel slices in L1 while the task's row
// tiles stream past them, or, for AVX-512, in L2), the partial sums going
// through C
// between blocks, added to a block's sums after its k loop (one loop over
// the blocks, the first and last known at run time, so that each
// micro-kernel is emitted once). Rows go in tiles of mr and mr - 1 rows
// where each tile can have one of those heights, else rows left over after
// the mr-row tiles go in 2-row tiles, then a single row. Tiles of mr and
// mr - 1 rows ("whole" tiles below) prefetch the slices the
// task reads next into L2 while they compute, each row tile a part of
// them (and, per ISA, the next row tile's A). A task calls a function
// shared by every GEMM of the module with the same tile, activation and
// bias/no bias, so that a model compiles its micro-kernels once per
// configuration rather than once per op. tfc.matmul (activations
// times activations, e.g. unfused attention) uses the same micro-kernel
// reading B in place with masked loads. The k loop is unrolled per ISA
// (GemmConfig::kUnroll), its one prefetch per iteration first.
//
//===----------------------------------------------------------------------===//

#include "KernelConfig.h"
#include "KernelUtils.h"
#include "Kernels.h"

#include "tfc/Conversion/KernelCommon.h"
#include "tfc/Conversion/TfcToLinalg/TfcToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <algorithm>
#include <functional>

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::cpu;

namespace {

/// Floats in a 64-byte cache line: the unit of the software prefetches.
constexpr int64_t kLineFloats = 16;
/// Lines of each row of the next row tile's A that a whole tile prefetches
/// per k block. All of them (8 at k blocks of 128), prefetched at once
/// before the tile's k loop, slowed a hot 128 x 768 x 384 GEMM (A already
/// in L2) the most, 4 lines less, 2 lines least; BERT-base needs 4 (8 was
/// no faster, 2, 1 or none slower). Spread over the k loop instead, a line
/// on 6 of every 16 steps, they slowed the hot GEMM far more: the per-step
/// row selection and branch issue on the FMA ports (figures: commit
/// 9d895c2).
constexpr int64_t kAPrefetchLines = 4;

/// How a micro-kernel instance reads its operands and writes its tile.
struct MicroKernelIO {
  /// A[row r of the tile, k] as a scalar.
  std::function<Value(OpBuilder &, Location, int64_t r, Value k)> loadA;
  /// B[k, chunk c of the tile's columns] as a vector.
  std::function<Value(OpBuilder &, Location, Value k, int64_t c)> loadB;
  /// Stores the finished vector of row r, chunk c.
  std::function<void(OpBuilder &, Location, int64_t r, int64_t c, Value)> store;
  /// The partial sums of earlier k blocks for row r, chunk c, added to the
  /// block's own after its k loop. Null when there are none.
  std::function<Value(OpBuilder &, Location, int64_t r, int64_t c)> loadC;
  /// A software prefetch at each k step (optional): `prefetch(at)`, where
  /// `at` starts at prefetchFrom and grows by prefetchStep per step. The
  /// index is carried through the loop, so that the address costs an add
  /// rather than a multiply or shift by the run-time step (a shift issues
  /// only on the ports of the AVX-512 FMAs, and takes an FMA's slot when it
  /// does: a small but measurable cost; figures: commit 9d895c2).
  std::function<void(OpBuilder &, Location, Value at)> prefetch = nullptr;
  Value prefetchFrom = nullptr, prefetchStep = nullptr;
};

/// The end of the whole steps of `step` from `begin` toward `end`: begin +
/// floor((end - begin) / step) x step.
Value wholeStepsEnd(OpBuilder &b, Location loc, Value begin, Value end,
                    Value step) {
  return arith::AddIOp::create(
      b, loc, begin,
      arith::MulIOp::create(
          b, loc,
          arith::DivUIOp::create(
              b, loc, arith::SubIOp::create(b, loc, end, begin), step),
          step));
}

/// One rows x (kChunks x vectorWidth) tile over k in [kBegin, kEnd): the k
/// loop with the accumulators in registers, then the store.
void emitMicroKernel(OpBuilder &b, Location loc, const GemmConfig &cfg,
                     int64_t rows, int64_t kChunks, Value kBegin, Value kEnd,
                     const MicroKernelIO &io) {
  // The accumulators start at zero and the partial sums of earlier blocks
  // are added after the loop: C's addresses are then live only after it
  // (loaded before it, they were kept across the loop in spilled
  // registers), and the first FMAs need not wait for C's loads.
  SmallVector<Value> init(rows * kChunks,
                          splatConst(b, loc, 0.0, cfg.vectorWidth));
  int64_t accumulators = init.size();
  if (io.prefetch)
    init.push_back(io.prefetchFrom);
  // `steps` k steps from k: the loads of B, then per row a broadcast of A
  // and its FMAs. One prefetch per iteration, first, the stream's index
  // then moving `steps` x prefetchStep floats (a line at most: the caller
  // unrolls only then). More prefetches per iteration slowed the unrolled
  // loop even where they were of lines already requested (figures: commit
  // 9d895c2), and
  // prefetches between the steps (or at offsets computed from the run-time
  // step) made LLVM schedule the broadcasts early and spill them.
  auto body = [&](OpBuilder &b, Location l, Value k, ValueRange acc,
                  int64_t steps) {
    SmallVector<Value> sums(acc.take_front(accumulators));
    Value at;
    if (io.prefetch) {
      at = acc[accumulators];
      io.prefetch(b, l, at);
      at = arith::AddIOp::create(
          b, l, at,
          steps > 1 ? arith::MulIOp::create(b, l, io.prefetchStep,
                                            indexConst(b, l, steps))
                          .getResult()
                    : io.prefetchStep);
    }
    for (int64_t u = 0; u < steps; ++u) {
      Value ku =
          u ? arith::AddIOp::create(b, l, k, indexConst(b, l, u)).getResult()
            : k;
      SmallVector<Value> bv;
      for (int64_t c = 0; c < kChunks; ++c)
        bv.push_back(io.loadB(b, l, ku, c));
      for (int64_t r = 0; r < rows; ++r) {
        Value a = splat(b, l, io.loadA(b, l, r, ku), cfg.vectorWidth);
        for (int64_t c = 0; c < kChunks; ++c)
          sums[r * kChunks + c] =
              math::FmaOp::create(b, l, a, bv[c], sums[r * kChunks + c]);
      }
    }
    if (io.prefetch)
      sums.push_back(at);
    scf::YieldOp::create(b, l, sums);
  };
  ValueRange state = init;
  scf::ForOp loop;
  Value from = kBegin;
  if (int64_t unroll = cfg.kUnroll; unroll > 1) {
    // The whole groups of `unroll` steps, then the steps left one by one
    // (all of them where the prefetches move more than a line per group).
    Value u = indexConst(b, loc, unroll);
    Value whole = wholeStepsEnd(b, loc, kBegin, kEnd, u);
    if (io.prefetch)
      whole = arith::SelectOp::create(
          b, loc,
          arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::ule,
              arith::MulIOp::create(b, loc, io.prefetchStep, u),
              indexConst(b, loc, kLineFloats)),
          whole, kBegin);
    loop =
        scf::ForOp::create(b, loc, kBegin, whole, u, state,
                           [&](OpBuilder &b, Location l, Value k,
                               ValueRange acc) { body(b, l, k, acc, unroll); });
    state = loop.getResults();
    from = whole;
  }
  loop = scf::ForOp::create(b, loc, from, kEnd, indexConst(b, loc, 1), state,
                            [&](OpBuilder &b, Location l, Value k,
                                ValueRange acc) { body(b, l, k, acc, 1); });
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < kChunks; ++c) {
      Value v = loop.getResult(r * kChunks + c);
      if (io.loadC)
        v = arith::AddFOp::create(b, loc, io.loadC(b, loc, r, c), v);
      io.store(b, loc, r, c, v);
    }
}

/// Runs `body(m0, rows)` over [begin, end) in tiles of cfg.mr and cfg.mr - 1
/// rows where every tile can have one of those heights (ceil(R / mr) tiles,
/// the last mr x tiles - R of them a row short: M = 128 is 18 tiles of 6
/// and 4 of 5), else in tiles of cfg.mr rows, then what is left in tiles of
/// 2 rows and a last single row. A tile a row short does almost the work
/// per load of a whole one (AVX-512: 20 FMAs per 9 loads against 24 per
/// 10); 2 rows do a third of it, and M = 128 as 21 tiles of 6 and one of 2
/// took measurably longer than M = 126 (figures: commit 378569d). A single
/// row has too few accumulators to hide the FMA latency (AVX-512: 4 chains
/// for 2 ports of 4 cycles, half the peak).
void forRowTiles(OpBuilder &b, Location loc, const GemmConfig &cfg,
                 Value begin, Value end,
                 function_ref<void(OpBuilder &, Location, Value, int64_t)>
                     body) {
  auto tiles = [&](Value from, Value to, int64_t h) {
    scf::ForOp::create(b, loc, from, to, indexConst(b, loc, h), ValueRange{},
                       [&](OpBuilder &b, Location l, Value m0, ValueRange) {
                         body(b, l, m0, h);
                         scf::YieldOp::create(b, l);
                       });
  };
  Value mr = indexConst(b, loc, cfg.mr);
  Value from = begin;
  Value whole = wholeStepsEnd(b, loc, begin, end, mr);
  if (cfg.mr > 3) {
    Value rows = arith::SubIOp::create(b, loc, end, begin);
    Value count = arith::CeilDivUIOp::create(b, loc, rows, mr);
    Value shortTiles = arith::SubIOp::create(
        b, loc, arith::MulIOp::create(b, loc, count, mr), rows);
    Value fits = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                       shortTiles, count);
    Value split = arith::AddIOp::create(
        b, loc, begin,
        arith::MulIOp::create(
            b, loc, arith::SubIOp::create(b, loc, count, shortTiles), mr));
    whole = arith::SelectOp::create(b, loc, fits, split, whole);
    tiles(begin, whole, cfg.mr);
    from = arith::SelectOp::create(b, loc, fits, end, whole);
    tiles(whole, from, cfg.mr - 1);
  } else {
    tiles(begin, whole, cfg.mr);
    from = whole;
  }
  for (int64_t h : {int64_t(2), int64_t(1)}) {
    if (h >= cfg.mr)
      continue;
    Value to =
        h == 1 ? end : wholeStepsEnd(b, loc, from, end, indexConst(b, loc, h));
    tiles(from, to, h);
    from = to;
  }
}

} // namespace

/// A private function `name` of type `type` at the end of the module that
/// holds `at`, internal to the library and never inlined (called from each
/// op's parallel loop, so that its body is compiled once per module), with
/// an empty entry block for the caller to fill; `created` says whether it
/// is new, or the module's function of that name to reuse.
static func::FuncOp getOrCreateKernelFunction(OpBuilder &builder, Operation *at,
                                              StringRef name, FunctionType type,
                                              bool &created) {
  auto module = at->getParentOfType<ModuleOp>();
  created = false;
  if (auto fn = module.lookupSymbol<func::FuncOp>(name))
    return fn;
  created = true;
  MLIRContext *ctx = builder.getContext();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(module.getBody());
  auto fn = func::FuncOp::create(builder, at->getLoc(), name, type);
  fn.setPrivate();
  fn->setAttr("llvm.linkage",
              LLVM::LinkageAttr::get(ctx, LLVM::Linkage::Internal));
  fn->setAttr("passthrough",
              builder.getArrayAttr({builder.getStringAttr("noinline")}));
  fn.addEntryBlock();
  return fn;
}

/// The packing of one panel, in a function of its own shared by every
/// tfc_cpu.pack of the module with the same NR and orientation:
///
///   pack(W, packed [P, K, NR], p, N)
///
/// writes panel p: packed[p, k, j] = W[p NR + j, k] (W^T's when
/// transposed), zero for columns at or past N. Called from each pack's
/// parallel loop over panels, it is compiled once: with the loop bounds
/// constants, LLVM unrolls the NR-column loop, and a copy of it per weight
/// made BERT-base's library 40 % larger and its compilation markedly
/// slower (figures: commit 0f31573).
static func::FuncOp getOrCreatePackTask(OpBuilder &builder, Operation *at,
                                        int64_t nr, bool transposed) {
  std::string name =
      "__tfc_cpu_pack_nr" + std::to_string(nr) + (transposed ? "_t" : "");
  MLIRContext *ctx = builder.getContext();
  Location loc = at->getLoc();
  int64_t dyn = ShapedType::kDynamic;
  Type f32 = Float32Type::get(ctx), index = IndexType::get(ctx);
  auto weightType = MemRefType::get(
      {dyn, dyn}, f32, StridedLayoutAttr::get(ctx, dyn, {dyn, dyn}));
  auto panelsType = MemRefType::get(
      {dyn, dyn, nr}, f32, StridedLayoutAttr::get(ctx, dyn, {dyn, nr, 1}));
  bool created;
  func::FuncOp fn = getOrCreateKernelFunction(
      builder, at, name,
      builder.getFunctionType({weightType, panelsType, index, index}, {}),
      created);
  if (!created)
    return fn;
  Block *entry = &fn.front();
  OpBuilder b = OpBuilder::atBlockBegin(entry);
  Location l = loc;
  Value input = entry->getArgument(0), out = entry->getArgument(1);
  Value p = entry->getArgument(2), n = entry->getArgument(3);
  Value zero = indexConst(b, l, 0), one = indexConst(b, l, 1);
  Value k = memref::DimOp::create(b, l, out, 1);
  Value n0 = arith::MulIOp::create(b, l, p, indexConst(b, l, nr));
  scf::ForOp::create(
      b, l, zero, k, one, ValueRange{},
      [&](OpBuilder &b, Location l, Value kk, ValueRange) {
        scf::ForOp::create(
            b, l, zero, indexConst(b, l, nr), one, ValueRange{},
            [&](OpBuilder &b, Location l, Value j, ValueRange) {
              Value col = arith::AddIOp::create(b, l, n0, j);
              Value inside = arith::CmpIOp::create(
                  b, l, arith::CmpIPredicate::ult, col, n);
              Value safe = arith::SelectOp::create(b, l, inside, col, zero);
              Value v = transposed
                            ? memref::LoadOp::create(b, l, input,
                                                     ValueRange{kk, safe})
                            : memref::LoadOp::create(b, l, input,
                                                     ValueRange{safe, kk});
              v = arith::SelectOp::create(b, l, inside, v, f32Const(b, l, 0.0));
              memref::StoreOp::create(b, l, v, out, ValueRange{p, kk, j});
              scf::YieldOp::create(b, l);
            });
        scf::YieldOp::create(b, l);
      });
  func::ReturnOp::create(b, l);
  return fn;
}

void tfc::cpu::emitPack(OpBuilder &b, Location loc, PackOp op, Value input,
                        Value out) {
  auto outType = cast<MemRefType>(out.getType());
  int64_t panels = outType.getDimSize(0), nr = outType.getDimSize(2);
  auto inType = cast<MemRefType>(input.getType());
  bool transposed = op.getTransposed();
  int64_t n = transposed ? inType.getDimSize(1) : inType.getDimSize(0);
  func::FuncOp task = getOrCreatePackTask(b, op, nr, transposed);
  Type weightType = task.getFunctionType().getInput(0);
  Type panelsType = task.getFunctionType().getInput(1);
  Value w = memref::CastOp::create(b, loc, weightType, input);
  Value packed = memref::CastOp::create(b, loc, panelsType, out);
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  scf::ParallelOp::create(
      b, loc, ValueRange{zero}, ValueRange{indexConst(b, loc, panels)},
      ValueRange{one}, [&](OpBuilder &b, Location l, ValueRange ivs) {
        func::CallOp::create(
            b, l, task, ValueRange{w, packed, ivs[0], indexConst(b, l, n)});
      });
}

namespace {

/// The name of the shared task function of a GEMM configuration.
std::string gemmTaskName(const GemmConfig &cfg, Activation activation,
                         bool hasBias) {
  return ("__tfc_cpu_gemm_" + std::to_string(cfg.mr) + "x" +
          std::to_string(cfg.tilePanels) + "x" + std::to_string(cfg.nr) +
          "_v" + std::to_string(cfg.vectorWidth) + "_" +
          stringifyActivation(activation) + (hasBias ? "_bias" : ""))
      .str();
}

/// One task of a GEMM, in a function of its own shared by every tfc_cpu.gemm
/// of the module with the same tile, activation and bias/no bias (the
/// micro-kernels are then compiled once per configuration, not once per
/// op):
///
///   task(A [M, K], packed [P, K, NR], bias [N]?, C [M, N], N,
///        mBegin, mEnd, pBegin, pEnd, K, kBlock)
///
/// computes rows [mBegin, mEnd) of C for the columns of panels [pBegin,
/// pEnd): whole register tiles of tilePanels panels, then the panels left
/// over one at a time, the depth in blocks of kBlock.
func::FuncOp getOrCreateGemmTask(OpBuilder &builder, Operation *at,
                                 const GemmConfig &cfg, Activation activation,
                                 bool hasBias) {
  std::string name = gemmTaskName(cfg, activation, hasBias);
  MLIRContext *ctx = builder.getContext();
  Location loc = at->getLoc();
  int64_t dyn = ShapedType::kDynamic;
  Type f32 = Float32Type::get(ctx), index = IndexType::get(ctx);
  auto matrix = MemRefType::get({dyn, dyn}, f32,
                                StridedLayoutAttr::get(ctx, dyn, {dyn, 1}));
  // Each panel's K x NR floats contiguous (what tfc_cpu.pack makes).
  auto panelsType =
      MemRefType::get({dyn, dyn, cfg.nr}, f32,
                      StridedLayoutAttr::get(ctx, dyn, {dyn, cfg.nr, 1}));
  auto vectorType =
      MemRefType::get({dyn}, f32, StridedLayoutAttr::get(ctx, dyn, {1}));
  SmallVector<Type> args{matrix, panelsType};
  if (hasBias)
    args.push_back(vectorType);
  args.push_back(matrix);
  args.append(7, index);
  bool created;
  func::FuncOp fn = getOrCreateKernelFunction(
      builder, at, name, builder.getFunctionType(args, {}), created);
  if (!created)
    return fn;
  Block *entry = &fn.front();
  OpBuilder b = OpBuilder::atBlockBegin(entry);
  Location l = loc;
  unsigned arg = 0;
  Value a = entry->getArgument(arg++);
  Value packed = entry->getArgument(arg++);
  Value bias = hasBias ? entry->getArgument(arg++) : Value();
  Value c = entry->getArgument(arg++);
  Value n = entry->getArgument(arg++);
  Value mBegin = entry->getArgument(arg++), mEnd = entry->getArgument(arg++);
  Value pBegin = entry->getArgument(arg++), pEnd = entry->getArgument(arg++);
  Value kEnd = entry->getArgument(arg++), step = entry->getArgument(arg++);
  int64_t panelChunks = cfg.chunks(), width = cfg.vectorWidth;
  Value one = indexConst(b, l, 1), zero = indexConst(b, l, 0);
  // The last panel, a bound of the prefetched slices.
  Value panelCount = memref::DimOp::create(b, l, packed, 0);
  Value lastPanel = arith::SubIOp::create(b, l, panelCount, one);
  // The packed panels as one vector of floats (each panel's K x NR floats
  // contiguous: the task's type says so), for the prefetches, which walk a
  // panel's slice line by line.
  auto meta = memref::ExtractStridedMetadataOp::create(b, l, packed);
  Value panelStride = meta.getStrides()[0];
  Value flat = memref::ReinterpretCastOp::create(
      b, l, MemRefType::get({dyn}, f32, StridedLayoutAttr::get(ctx, dyn, {1})),
      packed, OpFoldResult(meta.getOffset()),
      ArrayRef<OpFoldResult>{
          arith::MulIOp::create(b, l, panelCount, panelStride).getResult()},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  // How far apart (in floats) a whole tile's successive prefetches are.
  // Every slice read next is prefetched once, line by line, spread over as
  // many of the task's row tiles as it has: a prefetch that misses to DRAM
  // holds one of the core's few L1 miss buffers for the whole latency, and
  // four row tiles each prefetching a line per k step stalled their FMAs
  // (timed per row tile, 12 layers of BERT's FFN with cold weights: those
  // four took far longer than the others; figures: commit 807613d).
  // Each step then moves 16 floats (a line), 8 (a line per 2 steps),
  // 4, ...: the smallest of these dividing NR whose parts (NR / s per
  // panel) do not outnumber the row tiles.
  SmallVector<int64_t, 4> prefetchSteps;
  for (int64_t s : {kLineFloats, kLineFloats / 2, kLineFloats / 4,
                    kLineFloats / 8, int64_t(1)})
    if (cfg.nr % s == 0)
      prefetchSteps.push_back(s);
  Value rowTiles =
      arith::DivUIOp::create(b, l, arith::SubIOp::create(b, l, mEnd, mBegin),
                             indexConst(b, l, cfg.mr));
  Value prefetchStep = indexConst(b, l, prefetchSteps.front());
  for (int64_t s : ArrayRef(prefetchSteps).drop_front())
    prefetchStep = arith::SelectOp::create(
        b, l,
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::uge, rowTiles,
                              indexConst(b, l, cfg.tilePanels * (cfg.nr / s))),
        indexConst(b, l, s), prefetchStep);
  Value partsPerPanel =
      arith::DivUIOp::create(b, l, indexConst(b, l, cfg.nr), prefetchStep);
  // The tiles of `tilePanels` adjacent panels starting at panel p, over the
  // depth [k0, k1). Later blocks add the partial sums in C to their own;
  // the first does not read C at all (a branch, not a load with an empty
  // mask: such a load still waits for its line, from L3 or DRAM where C
  // is a model's activations, and made the first block's tiles wait for
  // lines their stores were about to replace); only the last
  // applies bias and activation. The flags are
  // run-time values, so the micro-kernels are emitted once for every block.
  //
  // The register tiles of whole tiles' panels also prefetch the panel slices
  // the task reads next (`nextP`, from `nextK0`) into L2, spread over the
  // row tiles (prefetchStep above): in a model the weights come from L3 or
  // DRAM, and a slice the first row tile had to wait for stalled the FMAs
  // for longer than that tile computes.
  auto tiles = [&](OpBuilder &b, Location l, Value p, int64_t tilePanels,
                   Value k0, Value k1, Value first, Value last, Value nextP,
                   Value nextK0) {
    int64_t kChunks = tilePanels * panelChunks;
    Value n0 = arith::MulIOp::create(b, l, p, indexConst(b, l, cfg.nr));
    Value valid = arith::SubIOp::create(b, l, n, n0);
    SmallVector<Value> masks, cols, panel, chunkOffset;
    for (int64_t ch = 0; ch < kChunks; ++ch) {
      Value off = indexConst(b, l, ch * width);
      masks.push_back(laneMask(
          b, l, arith::SubIOp::create(b, l, valid, off), width));
      cols.push_back(arith::AddIOp::create(b, l, n0, off));
      if (ch % panelChunks == 0)
        panel.push_back(ch == 0 ? p
                                : arith::AddIOp::create(
                                      b, l, p,
                                      indexConst(b, l, ch / panelChunks))
                                      .getResult());
      chunkOffset.push_back(indexConst(b, l, (ch % panelChunks) * width));
    }
    SmallVector<Value> biasVecs;
    for (int64_t ch = 0; ch < kChunks; ++ch)
      biasVecs.push_back(
          bias ? maskedLoad(b, l, bias, ValueRange{cols[ch]}, masks[ch],
                            splatConst(b, l, 0.0, width))
               : Value());
    forRowTiles(
        b, l, cfg, mBegin, mEnd,
        [&](OpBuilder &b, Location l, Value m0, int64_t rows) {
          SmallVector<Value> rowIdx;
          for (int64_t r = 0; r < rows; ++r)
            rowIdx.push_back(
                arith::AddIOp::create(b, l, m0, indexConst(b, l, r)));
          auto store = [&](OpBuilder &b, Location l, int64_t r, int64_t ch,
                           Value v) {
            maskedStore(b, l, v, c, ValueRange{rowIdx[r], cols[ch]},
                        masks[ch]);
          };
          auto epilogue = [&](OpBuilder &b, Location l, int64_t r,
                              int64_t ch, Value v) {
            if (bias)
              v = arith::AddFOp::create(b, l, v, biasVecs[ch]);
            store(b, l, r, ch, buildActivation(b, l, v, activation));
          };
          MicroKernelIO io{
              [&](OpBuilder &b, Location l, int64_t r, Value kk) {
                return memref::LoadOp::create(b, l, a,
                                              ValueRange{rowIdx[r], kk})
                    .getResult();
              },
              [&](OpBuilder &b, Location l, Value kk, int64_t ch) {
                return vector::LoadOp::create(
                           b, l, vecType(b.getContext(), width), packed,
                           ValueRange{panel[ch / panelChunks], kk,
                                      chunkOffset[ch]})
                    .getResult();
              },
              [&](OpBuilder &b, Location l, int64_t r, int64_t ch, Value v) {
                if (!bias && activation == Activation::None) {
                  store(b, l, r, ch, v);
                  return;
                }
                scf::IfOp::create(
                    b, l, last,
                    [&](OpBuilder &b, Location l) {
                      epilogue(b, l, r, ch, v);
                      scf::YieldOp::create(b, l);
                    },
                    [&](OpBuilder &b, Location l) {
                      store(b, l, r, ch, v);
                      scf::YieldOp::create(b, l);
                    });
              },
              [&](OpBuilder &b, Location l, int64_t r, int64_t ch) {
                auto ifOp = scf::IfOp::create(
                    b, l, TypeRange{vecType(b.getContext(), width)}, first,
                    /*withElseRegion=*/true);
                OpBuilder::InsertionGuard guard(b);
                b.setInsertionPointToStart(&ifOp.getThenRegion().front());
                scf::YieldOp::create(b, l, splatConst(b, l, 0.0, width));
                b.setInsertionPointToStart(&ifOp.getElseRegion().front());
                scf::YieldOp::create(
                    b, l,
                    maskedLoad(b, l, c, ValueRange{rowIdx[r], cols[ch]},
                               masks[ch], splatConst(b, l, 0.0, width)));
                return ifOp.getResult(0);
              }};
          if (nextP && rows >= cfg.mr - 1) {
            // Row tile t takes part t mod (tilePanels x partsPerPanel) of
            // the slices: panel nextP + u / partsPerPanel, floats
            // [part x len x step, (part + 1) x len x step) of its window of
            // len k rows, one prefetch per k step.
            Value t = arith::DivUIOp::create(
                b, l, arith::SubIOp::create(b, l, m0, mBegin),
                indexConst(b, l, cfg.mr));
            Value u = arith::RemUIOp::create(
                b, l, t,
                arith::MulIOp::create(b, l, partsPerPanel,
                                      indexConst(b, l, tilePanels)));
            Value q =
                minIndex(b, l,
                         arith::AddIOp::create(
                             b, l, nextP,
                             arith::DivUIOp::create(b, l, u, partsPerPanel)),
                         lastPanel);
            Value part = arith::RemUIOp::create(b, l, u, partsPerPanel);
            // The window of the slice read next starts early enough to end
            // within K (a shorter last block re-reads a few rows of the
            // block before it).
            Value len = arith::SubIOp::create(b, l, k1, k0);
            Value start =
                minIndex(b, l, nextK0, arith::SubIOp::create(b, l, kEnd, len));
            Value nr = indexConst(b, l, cfg.nr);
            Value from = arith::AddIOp::create(
                b, l,
                arith::AddIOp::create(
                    b, l, arith::MulIOp::create(b, l, q, panelStride),
                    arith::MulIOp::create(b, l, start, nr)),
                arith::MulIOp::create(b, l,
                                      arith::MulIOp::create(b, l, part, len),
                                      prefetchStep));
            // Linear in k: one increment per step (a clamp per step
            // measurably slowed AVX2's front-end-bound loop; figures:
            // commit 1548adc).
            io.prefetchFrom = from;
            io.prefetchStep = prefetchStep;
            io.prefetch = [&](OpBuilder &b, Location l, Value at) {
              memref::PrefetchOp::create(b, l, flat, ValueRange{at},
                                         /*isWrite=*/false,
                                         /*localityHint=*/2,
                                         /*isDataCache=*/true);
            };
          }
          // Whole row tiles (mr or mr - 1 rows) also prefetch the first
          // kAPrefetchLines lines
          // of the next row tile's rows of A in this block into L2 (the
          // hardware's streams take over from there): in a model, where A
          // was just written (much of it by another core), BERT-base runs
          // faster (kAPrefetchLines; KernelConfig.h says per ISA whether).
          if (rows >= cfg.mr - 1 && cfg.prefetchA) {
            Value lastRow = arith::SubIOp::create(b, l, mEnd, one);
            SmallVector<Value> nextRows;
            for (int64_t r = 0; r < cfg.mr; ++r)
              nextRows.push_back(minIndex(
                  b, l,
                  arith::AddIOp::create(b, l, m0, indexConst(b, l, rows + r)),
                  lastRow));
            Value prefetchEnd = minIndex(
                b, l, k1,
                arith::AddIOp::create(
                    b, l, k0, indexConst(b, l, kAPrefetchLines * kLineFloats)));
            scf::ForOp::create(
                b, l, k0, prefetchEnd, indexConst(b, l, kLineFloats),
                ValueRange{},
                [&](OpBuilder &b, Location l, Value kk, ValueRange) {
                  for (Value row : nextRows)
                    memref::PrefetchOp::create(b, l, a, ValueRange{row, kk},
                                               /*isWrite=*/false,
                                               /*localityHint=*/2,
                                               /*isDataCache=*/true);
                  scf::YieldOp::create(b, l);
                });
          }
          emitMicroKernel(b, l, cfg, rows, kChunks, k0, k1, io);
        });
  };
  // One pass of the task's tiles over [k0, k1): whole register tiles,
  // then the panels left over one at a time.
  auto pass = [&](OpBuilder &b, Location l, Value k0, Value k1,
                  Value first, Value last) {
    Value tp = indexConst(b, l, cfg.tilePanels);
    Value whole = pEnd;
    if (cfg.tilePanels > 1)
      whole = wholeStepsEnd(b, l, pBegin, pEnd, tp);
    scf::ForOp::create(
        b, l, pBegin, whole, tp, ValueRange{},
        [&](OpBuilder &b, Location l, Value p, ValueRange) {
          // The slices read next: the next tile's panels in this block,
          // else the first tile's in the next block, else (the task's last
          // slice) the first of the panels after the task's, if any: the
          // next column group's, whose tasks follow this group's row blocks
          // (the outliner runs the row block fastest; the other row blocks
          // of this group re-read this task's panels, still in L2).
          Value following = arith::AddIOp::create(b, l, p, tp);
          Value sameBlock = arith::CmpIOp::create(
              b, l, arith::CmpIPredicate::ult, following, whole);
          Value nextBlock = arith::CmpIOp::create(
              b, l, arith::CmpIPredicate::ult, k1, kEnd);
          Value afterTask = arith::SelectOp::create(
              b, l,
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, pEnd,
                                    panelCount),
              pEnd, p);
          Value nextP = arith::SelectOp::create(
              b, l, sameBlock, following,
              arith::SelectOp::create(b, l, nextBlock, pBegin, afterTask));
          Value nextK0 = arith::SelectOp::create(
              b, l, sameBlock, k0,
              arith::SelectOp::create(b, l, nextBlock, k1, zero));
          tiles(b, l, p, cfg.tilePanels, k0, k1, first, last, nextP, nextK0);
          scf::YieldOp::create(b, l);
        });
    if (cfg.tilePanels > 1)
      scf::ForOp::create(
          b, l, whole, pEnd, one, ValueRange{},
          [&](OpBuilder &b, Location l, Value p, ValueRange) {
            tiles(b, l, p, 1, k0, k1, first, last, Value(), Value());
            scf::YieldOp::create(b, l);
          });
  };
  // The k blocks: the first starts from zero, the last applies the epilogue.
  // K = 0 is one empty block, so that C still gets the epilogue of zero
  // sums (bias and activation).
  scf::ForOp::create(
      b, l, zero, arith::MaxUIOp::create(b, l, kEnd, one), step, ValueRange{},
      [&](OpBuilder &b, Location l, Value k0, ValueRange) {
        Value k1 = minIndex(b, l, arith::AddIOp::create(b, l, k0, step), kEnd);
        Value first =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, k0, zero);
        Value last =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, k1, kEnd);
        pass(b, l, k0, k1, first, last);
        scf::YieldOp::create(b, l);
      });
  func::ReturnOp::create(b, l);
  return fn;
}

/// `v` as the memref type `type` (dynamic sizes, strides and offset, the
/// innermost stride 1), or null when its innermost stride is not statically
/// 1 (memref.cast would accept a dynamic one and assume it).
Value castTo(OpBuilder &b, Location loc, Value v, Type type) {
  auto source = cast<MemRefType>(v.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(source.getStridesAndOffset(strides, offset)) ||
      strides.empty() || strides.back() != 1 ||
      !memref::CastOp::areCastCompatible(source, type))
    return Value();
  return memref::CastOp::create(b, loc, type, v);
}

} // namespace

LogicalResult tfc::cpu::emitGemm(OpBuilder &b, Location loc, GemmOp op,
                                 Value input, Value packed, Value bias,
                                 Value out) {
  Value a = collapseToMatrix(b, loc, contiguous(b, loc, input, /*identity=*/true));
  Value c = collapseToMatrix(b, loc, out);
  if (bias)
    bias = contiguous(b, loc, bias);
  auto pType = cast<MemRefType>(packed.getType());
  int64_t panels = pType.getDimSize(0), kSize = pType.getDimSize(1);
  // The module's ISA gives the tile; the panels' NR always wins (a pack
  // made for another ISA, or by hand in a test, is still read right).
  GemmConfig cfg = gemmConfigFor(op);
  if (int64_t nr = pType.getDimSize(2); nr != cfg.nr) {
    cfg = nr == kGemmAvx512.nr ? kGemmAvx512
          : nr == kGemmAvx2.nr ? kGemmAvx2
                               : cfg;
    if (nr != cfg.nr) {
      cfg.nr = nr;
      cfg.tilePanels = 1;
      cfg.vectorWidth =
          nr % 16 == 0 ? 16 : nr % 8 == 0 ? 8 : nr % 4 == 0 ? 4 : 1;
    }
    // The k block for this tile's panels and the module's L1.
    cfg.kc = l1KcFor(cfg, op);
  }
  int64_t n = cast<MemRefType>(out.getType()).getShape().back();
  func::FuncOp task =
      getOrCreateGemmTask(b, op, cfg, op.getActivation(), bool(bias));
  // The operands as the task function's types.
  SmallVector<Value> operands;
  for (auto [v, type] :
       llvm::zip(bias ? SmallVector<Value>{a, packed, bias, c}
                      : SmallVector<Value>{a, packed, c},
                 task.getFunctionType().getInputs())) {
    Value cast = castTo(b, loc, v, type);
    if (!cast)
      return op.emitOpError("cannot view ")
             << v.getType() << " as " << type
             << " for the GEMM kernel (its innermost stride must be 1)";
    operands.push_back(cast);
  }
  Value m = memref::DimOp::create(b, loc, a, 0);
  Value one = indexConst(b, loc, 1), zero = indexConst(b, loc, 0);
  // Row blocks of at most mc rows, as equal as the mr-row tiles allow.
  Value mBlocks = ceilDiv(b, loc, m, cfg.mc);
  Value mr = indexConst(b, loc, cfg.mr);
  Value perBlock = arith::CeilDivUIOp::create(
      b, loc, m, arith::MaxUIOp::create(b, loc, mBlocks, one));
  Value blockRows = arith::MulIOp::create(
      b, loc, arith::CeilDivUIOp::create(b, loc, perBlock, mr), mr);
  // A single block of rows splits the columns finely: decoding (a tile's
  // rows or fewer) one task per panel, the weight being the whole cost and
  // every thread streaming an equal share of it; more rows one register
  // tile's panels per task. The pool cuts the tasks into contiguous chunks
  // (a few per thread, claimed dynamically).
  Value oneBlock = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                         mBlocks, one);
  Value blockPanels = one;
  if (cfg.tilePanels > 1)
    blockPanels = arith::SelectOp::create(
        b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, m, mr),
        one, indexConst(b, loc, cfg.tilePanels));
  Value panelsPerTask = arith::SelectOp::create(
      b, loc, oneBlock, blockPanels, indexConst(b, loc, cfg.panelsPerTask));
  // Column groups as equal as whole tiles allow (the pool gives each thread
  // an equal share of the tasks: AVX2's 32 panels of N = 768 in groups of
  // 6 left a last group of 2, one thread 36 panel-rows to the other's 28).
  // The unit is a register tile's panels when a task holds whole tiles,
  // else a panel.
  Value unit = one;
  if (cfg.tilePanels > 1)
    unit = arith::SelectOp::create(
        b, loc,
        arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::eq,
            arith::RemUIOp::create(b, loc, panelsPerTask,
                                   indexConst(b, loc, cfg.tilePanels)),
            zero),
        indexConst(b, loc, cfg.tilePanels), one);
  Value units =
      arith::CeilDivUIOp::create(b, loc, indexConst(b, loc, panels), unit);
  Value pGroups = arith::CeilDivUIOp::create(
      b, loc, units, arith::DivUIOp::create(b, loc, panelsPerTask, unit));
  // The depth split into blocks of at most kc, as equal as possible: the
  // L1's kc, or the L2's deeper one for row blocks of many tiles.
  auto blockOf = [&](int64_t kc) {
    int64_t kBlocks = std::max<int64_t>(1, (kSize + kc - 1) / kc);
    return std::max<int64_t>(1, (kSize + kBlocks - 1) / kBlocks);
  };
  int64_t shallow = blockOf(cfg.kc);
  int64_t deep = blockOf(deepKcFor(cfg, l2BytesFor(op), kSize));
  Value kBlock = indexConst(b, loc, shallow);
  if (deep != shallow)
    kBlock = arith::SelectOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, blockRows,
                              indexConst(b, loc, kDeepBlockRowTiles * cfg.mr)),
        indexConst(b, loc, deep), kBlock);
  // Column groups outermost: the pool hands each thread contiguous chunks
  // of tasks (a few per thread, claimed dynamically), so that a chunk reads
  // its own slice of the weight (and all of A, much smaller) instead of
  // every thread all of it.
  scf::ParallelOp::create(
      b, loc, ValueRange{zero, zero}, ValueRange{pGroups, mBlocks},
      ValueRange{one, one}, [&](OpBuilder &b, Location l, ValueRange ivs) {
        Value mBegin = arith::MulIOp::create(b, l, ivs[1], blockRows);
        Value mEnd =
            minIndex(b, l, arith::AddIOp::create(b, l, mBegin, blockRows), m);
        auto groupStart = [&](Value g) {
          Value u = arith::DivUIOp::create(
              b, l, arith::MulIOp::create(b, l, g, units), pGroups);
          return minIndex(b, l, arith::MulIOp::create(b, l, u, unit),
                          indexConst(b, l, panels));
        };
        Value pBegin = groupStart(ivs[0]);
        Value pEnd = groupStart(arith::AddIOp::create(b, l, ivs[0], one));
        SmallVector<Value> args(operands);
        args.append({indexConst(b, l, n), mBegin, mEnd, pBegin, pEnd,
                     indexConst(b, l, kSize), kBlock});
        func::CallOp::create(b, l, task, args);
      });
  return success();
}

void tfc::cpu::emitMatmul(OpBuilder &b, Location loc, kernel::MatmulOp op, Value lhs,
                          Value rhs, Value out) {
  lhs = contiguous(b, loc, lhs);
  rhs = contiguous(b, loc, rhs);
  auto outType = cast<MemRefType>(out.getType());
  auto lType = cast<MemRefType>(lhs.getType());
  auto rType = cast<MemRefType>(rhs.getType());
  int64_t rank = outType.getRank();
  GemmConfig cfg = gemmConfigFor(op);
  // One register tile's columns per step: tilePanels x nr.
  int64_t kChunks = cfg.chunks() * cfg.tilePanels, width = cfg.vectorWidth;
  Value m = memref::DimOp::create(b, loc, out, rank - 2);
  Value n = memref::DimOp::create(b, loc, out, rank - 1);
  Value k = memref::DimOp::create(b, loc, lhs, lType.getRank() - 1);
  Value one = indexConst(b, loc, 1), zero = indexConst(b, loc, 0);
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t d = 0; d < rank - 2; ++d) {
    lbs.push_back(zero);
    ubs.push_back(memref::DimOp::create(b, loc, out, d));
    steps.push_back(one);
  }
  // Rows in blocks of at most 16 row tiles: tfc.matmul has no column split,
  // and a 128-row matrix still makes two tasks.
  int64_t mc = std::min(cfg.mc, 16 * cfg.mr);
  lbs.push_back(zero);
  ubs.push_back(ceilDiv(b, loc, m, mc));
  steps.push_back(one);
  scf::ParallelOp::create(
      b, loc, lbs, ubs, steps, [&](OpBuilder &b, Location l, ValueRange ivs) {
        ValueRange batch = ivs.drop_back();
        SmallVector<Value> lb = operandBatchIndices(b, l, lType, outType, batch);
        SmallVector<Value> rb = operandBatchIndices(b, l, rType, outType, batch);
        Value mBegin =
            arith::MulIOp::create(b, l, ivs.back(), indexConst(b, l, mc));
        Value mEnd = minIndex(
            b, l, arith::AddIOp::create(b, l, mBegin, indexConst(b, l, mc)), m);
        scf::ForOp::create(
            b, l, zero, n, indexConst(b, l, kChunks * width), ValueRange{},
            [&](OpBuilder &b, Location l, Value n0, ValueRange) {
              Value valid = arith::SubIOp::create(b, l, n, n0);
              SmallVector<Value> masks, cols;
              for (int64_t ch = 0; ch < kChunks; ++ch) {
                Value off = indexConst(b, l, ch * width);
                masks.push_back(laneMask(
                    b, l, arith::SubIOp::create(b, l, valid, off), width));
                cols.push_back(arith::AddIOp::create(b, l, n0, off));
              }
              forRowTiles(b, l, cfg, mBegin, mEnd, [&](OpBuilder &b, Location l,
                                                  Value m0, int64_t rows) {
                SmallVector<Value> rowIdx;
                for (int64_t r = 0; r < rows; ++r)
                  rowIdx.push_back(
                      arith::AddIOp::create(b, l, m0, indexConst(b, l, r)));
                auto with = [](ValueRange prefix, Value x, Value y) {
                  SmallVector<Value> idx(prefix);
                  idx.push_back(x);
                  idx.push_back(y);
                  return idx;
                };
                MicroKernelIO io{
                    [&](OpBuilder &b, Location l, int64_t r, Value kk) {
                      return memref::LoadOp::create(b, l, lhs,
                                                    with(lb, rowIdx[r], kk))
                          .getResult();
                    },
                    [&](OpBuilder &b, Location l, Value kk, int64_t ch) {
                      return maskedLoad(b, l, rhs, with(rb, kk, cols[ch]),
                                        masks[ch], splatConst(b, l, 0.0, width));
                    },
                    [&](OpBuilder &b, Location l, int64_t r, int64_t ch,
                        Value v) {
                      maskedStore(b, l, v, out,
                                  with(batch, rowIdx[r], cols[ch]), masks[ch]);
                    },
                    /*loadC=*/nullptr};
                emitMicroKernel(b, l, cfg, rows, kChunks, zero, k, io);
              });
              scf::YieldOp::create(b, l);
            });
      });
}
