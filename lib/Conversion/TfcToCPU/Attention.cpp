//===- Attention.cpp - Attention on the CPU -------------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// softmax(Q·Kᵀ·scale + mask)·V as calls of the C micro-kernels of
// lib/Target/CPU/MicroKernels/Attention.c (compiled per instruction set and
// linked into the model), on one of two paths chosen at run time by the
// query rows:
//  - at most kAttentionDecodeRows (decode steps): flash-decoding, tasks of
//    (batch, key/value head, split of the keys) that serve every query head
//    of the key/value head, then a combine per (batch, head);
//  - more (prefills): K transposed once per call, then tasks of (batch,
//    head, block of query rows) that keep the scores of a chunk of
//    TFC_UK_ATTENTION_PREFILL_KEYS keys in L1 (register-blocked products,
//    an online softmax across chunks).
// None materialises the Tq x Tk scores: memory is linear in the sequence
// length. Keys and values of f16 (a KV cache in half precision) go to the
// *_f16 entry points, which widen them as they read them. The sizes and strides
// travel in a shape array (MicroKernels.h); the micro-kernels map query head h
// to key/value head h / (H / Hkv) and never read past the last key/value head
// whatever the run-time head counts (the verifiers reject static ones that do
// not divide).
//
//===----------------------------------------------------------------------===//

#include "KernelConfig.h"
#include "KernelUtils.h"
#include "Kernels.h"

#include "tfc/Dialect/Tfc/IR/PositionBias.h"
#include "tfc/Target/CPU/MicroKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::cpu;

namespace {

Value dim(OpBuilder &b, Location loc, Value m, int64_t d) {
  return memref::DimOp::create(b, loc, m, d);
}

void forRange(OpBuilder &b, Location loc, Value lb, Value ub, Value step,
              function_ref<void(OpBuilder &, Location, Value)> body) {
  scf::ForOp::create(b, loc, lb, ub, step, ValueRange{},
                     [&](OpBuilder &b, Location l, Value iv, ValueRange) {
                       body(b, l, iv);
                       scf::YieldOp::create(b, l);
                     });
}

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

/// What the C micro-kernels of lib/Target/CPU/MicroKernels/Attention.c take
/// besides the operands: the shape array (MicroKernels.h), the scale, the
/// soft cap (0 for none) and the ALiBi slopes (or null). Prepared once before
/// the choice of kernel; each path stores its split count (setSplits).
struct MicroKernelArgs {
  Value shape, scale, softcap, slopes;

  /// The shape array's `splits` slot.
  static constexpr int64_t kSplitsSlot = 7;
  void setSplits(OpBuilder &b, Location loc, Value splits) const {
    memref::StoreOp::create(b, loc, toI64(b, loc, splits), shape,
                            indexConst(b, loc, kSplitsSlot));
  }
};

MicroKernelArgs prepareMicroKernelArgs(OpBuilder &b, Location loc,
                                       kernel::AttentionOp op,
                                       const AttentionSizes &sizes, Value query,
                                       Value key, Value value, Value mask,
                                       Value relBias, Value out) {
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
                  sizes.d, sizes.dv})
    put(v);
  ++slot; // the splits: setSplits
  assert(slot == MicroKernelArgs::kSplitsSlot + 1 && "shape array layout");
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
  args.softcap = f32Const(
      b, loc, op.getSoftcap() ? op.getSoftcap()->convertToDouble() : 0);
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
/// (k, or its transpose), v, mask, relBias, slopes, rowPast, the
/// destination, the shape array, the scale, the soft cap (0: none) and the
/// task.
LLVM::LLVMFuncOp declareScoringKernel(OpBuilder &b, Operation *op,
                                      StringRef name) {
  Type ptr = LLVM::LLVMPointerType::get(b.getContext());
  return declareMicroKernel(b, op, name,
                            LLVM::LLVMVoidType::get(b.getContext()),
                            {ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr,
                             b.getF32Type(), b.getF32Type(), b.getI64Type()});
}

/// The name of micro-kernel `name` for keys and values of `key`'s element
/// type: the *_f16 entry points widen a KV cache kept in half precision.
std::string kvKernel(StringRef name, Value key) {
  bool half = cast<MemRefType>(key.getType()).getElementType().isF16();
  return (name + (half ? "_f16" : "")).str();
}

/// Their operands but the task.
SmallVector<Value> scoringOperands(OpBuilder &b, Location l, Value query,
                                   Value keys, Value value, Value mask,
                                   Value relBias, Value rowPast,
                                   const MicroKernelArgs &args, Value dest) {
  return {pointerTo(b, l, query),
          pointerTo(b, l, keys),
          pointerTo(b, l, value),
          pointerOrNull(b, l, mask),
          pointerOrNull(b, l, relBias),
          pointerOrNull(b, l, args.slopes),
          pointerOrNull(b, l, rowPast),
          pointerTo(b, l, dest),
          pointerTo(b, l, args.shape),
          args.scale,
          args.softcap};
}

/// Few query rows (decoding): the C micro-kernels' flash-decoding (tasks of
/// (batch, key/value head, split of the keys) serving every query head of
/// the group, then a combine per (batch, head)).
void emitDecodeAttention(OpBuilder &b, Location loc, kernel::AttentionOp op,
                         const AttentionSizes &sizes,
                         const MicroKernelArgs &args, Value query, Value key,
                         Value value, Value mask, Value relBias, Value rowPast,
                         Value out) {
  MLIRContext *ctx = b.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  Type i64 = b.getI64Type();
  Type voidType = LLVM::LLVMVoidType::get(ctx);
  auto split =
      declareScoringKernel(b, op, kvKernel("tfc_uk_attention_split", key));
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
  args.setSplits(b, loc, splits);
  Value partial = allocFloats(b, loc, partialFloats, args.shape);
  // Without key/value heads no task runs (and no key is read).
  Value splitTasks = arith::MulIOp::create(
      b, loc, arith::MulIOp::create(b, loc, sizes.batch, sizes.kvHeads),
      splits);
  parallelCalls(b, loc, splitTasks, split, [&](OpBuilder &b, Location l) {
    return scoringOperands(b, l, query, key, value, mask, relBias, rowPast,
                           args, partial);
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
                          const AttentionSizes &sizes,
                          const MicroKernelArgs &args, Value query, Value key,
                          Value value, Value mask, Value relBias, Value rowPast,
                          Value out) {
  MLIRContext *ctx = b.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  Type i64 = b.getI64Type();
  Type voidType = LLVM::LLVMVoidType::get(ctx);
  auto ktFloats =
      declareMicroKernel(b, op, "tfc_uk_attention_kt_floats", i64, {ptr});
  auto transpose =
      declareMicroKernel(b, op, kvKernel("tfc_uk_attention_transpose_k", key),
                         voidType, {ptr, ptr, ptr, i64});
  auto prefillTasks =
      declareMicroKernel(b, op, "tfc_uk_attention_prefill_tasks", i64, {ptr});
  auto prefill =
      declareScoringKernel(b, op, kvKernel("tfc_uk_attention_prefill", key));

  args.setSplits(b, loc, indexConst(b, loc, 1));
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
    return scoringOperands(b, l, query, kt, value, mask, relBias, rowPast, args,
                           out);
  });
}

/// Lowers `op` writing `out`, whose rows are contiguous.
void emitAttentionInto(OpBuilder &b, Location loc, kernel::AttentionOp op,
                       Value query, Value key, Value value, Value mask,
                       Value relBias, Value rowPast, Value out);

} // namespace

void tfc::cpu::emitAttention(OpBuilder &b, Location loc, kernel::AttentionOp op,
                             Value query, Value key, Value value, Value mask,
                             Value relBias, Value rowPast, Value out) {
  query = contiguous(b, loc, query);
  key = contiguous(b, loc, key);
  value = contiguous(b, loc, value);
  if (mask)
    mask = contiguous(b, loc, mask);
  if (relBias) // dense rows: the decode micro-kernel indexes them itself
    relBias = contiguous(b, loc, relBias, /*identity=*/true);
  if (rowPast) // one count per batch row, indexed by the micro-kernels
    rowPast = contiguous(b, loc, rowPast, /*identity=*/true);
  // The output may be a strided view (the heads merged in place,
  // tfc-kernel-fold-transposed-operands) as long as its rows are
  // contiguous; otherwise it is computed into a fresh buffer and copied.
  Value dest = hasUnitInnerStride(cast<MemRefType>(out.getType()))
                   ? out
                   : allocContiguousLike(b, loc, out);
  emitAttentionInto(b, loc, op, query, key, value, mask, relBias, rowPast,
                    dest);
  if (dest != out) // (tfc-early-dealloc frees dest after the copy)
    memref::CopyOp::create(b, loc, dest, out);
}

namespace {

/// emitAttention with an output whose innermost stride is 1.
void emitAttentionInto(OpBuilder &b, Location loc, kernel::AttentionOp op,
                       Value query, Value key, Value value, Value mask,
                       Value relBias, Value rowPast, Value out) {
  // A few query rows (decode steps): the decode micro-kernel; more: the
  // prefill micro-kernel, in chunks of TFC_UK_ATTENTION_PREFILL_KEYS keys
  // whose scores fit in L1.
  AttentionSizes sizes(b, loc, query, key, value);
  MicroKernelArgs args = prepareMicroKernelArgs(b, loc, op, sizes, query, key,
                                                value, mask, relBias, out);
  Value few = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, sizes.tq,
                                    indexConst(b, loc, kAttentionDecodeRows));
  auto choice = scf::IfOp::create(b, loc, few, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&choice.getThenRegion().front());
  emitDecodeAttention(b, loc, op, sizes, args, query, key, value, mask, relBias,
                      rowPast, out);
  b.setInsertionPointToStart(&choice.getElseRegion().front());
  emitPrefillAttention(b, loc, op, sizes, args, query, key, value, mask,
                       relBias, rowPast, out);
}

} // namespace
