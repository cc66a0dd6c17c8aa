//===- KernelUtils.h - Building blocks of the CPU kernels -------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Memref-level helpers used by every CPU kernel: masked vector loads and
// stores over a row, chunked loops over a dimension with a masked tail,
// horizontal reductions and parallel loops over leading dimensions.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_LIB_CONVERSION_TFCTOCPU_KERNELUTILS_H
#define TFC_LIB_CONVERSION_TFCTOCPU_KERNELUTILS_H

#include "KernelConfig.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::tfc::cpu {

/// vector<width x f32> (by default kVectorWidth, the row kernels' width; the
/// GEMM passes its ISA's).
VectorType vecType(MLIRContext *ctx, int64_t width = kVectorWidth);
Value indexConst(OpBuilder &b, Location loc, int64_t v);
Value f32Const(OpBuilder &b, Location loc, double v);
Value splat(OpBuilder &b, Location loc, Value scalar, int64_t width = kVectorWidth);
Value splatConst(OpBuilder &b, Location loc, double v, int64_t width = kVectorWidth);

/// The mask of the first min(remaining, width) lanes.
Value laneMask(OpBuilder &b, Location loc, Value remaining,
               int64_t width = kVectorWidth);
/// A vector of the passthru's type.
Value maskedLoad(OpBuilder &b, Location loc, Value memref, ValueRange indices,
                 Value mask, Value passthru);
void maskedStore(OpBuilder &b, Location loc, Value value, Value memref,
                 ValueRange indices, Value mask);
/// The sum of a vector's lanes in lane order, and their maximum (maxnum) as
/// a tree of halves: LLVM's expansion of the plain max reduction was a chain
/// of 15 dependent maxss, each with its NaN fix-up, as long as the rest of a
/// 128-wide softmax row; the tree made softmax measurably faster (figures:
/// commit 5656afb).
Value reduceAdd(OpBuilder &b, Location loc, Value vec);
Value reduceMax(OpBuilder &b, Location loc, Value vec);
/// The sum of a vector's lanes as a tree of halves: 4 dependent adds instead
/// of reduceAdd's 16 (and no less accurate). Softmax's and LayerNorm's sums
/// take it; RMSNorm's sum of squares and attention's keep the lane order,
/// whose rounding SmolLM2's Q8_0 perplexity test was calibrated on (trees
/// there moved it 0.19 %).
Value reduceAddTree(OpBuilder &b, Location loc, Value vec);

using ChunkFn = function_ref<void(OpBuilder &, Location, Value offset,
                                  Value mask)>;
using ChunkReduceFn = function_ref<SmallVector<Value>(
    OpBuilder &, Location, Value offset, Value mask, ValueRange acc)>;

/// for (d = 0; d < n; d += width) fn(d, mask of the valid lanes): the whole
/// chunks in a loop with a constant mask of every lane (their masked loads
/// and stores fold to plain ones), then the partial chunk, if any, once.
void forChunks(OpBuilder &b, Location loc, Value n, ChunkFn fn);
/// The same loops carrying `init` through `fn` (each lane's terms combined
/// in the order of the chunks); returns the final values.
SmallVector<Value> forChunksReduce(OpBuilder &b, Location loc, Value n,
                                   ValueRange init, ChunkReduceFn fn);

/// Runs `fn` for every index tuple of the first `count` dimensions of
/// `memref`, as one scf.parallel (serially inline when count == 0).
void parallelOverLeading(OpBuilder &b, Location loc, Value memref,
                         int64_t count,
                         function_ref<void(OpBuilder &, Location, ValueRange)>
                             fn);

/// Whether `type` has a known innermost stride of 1 (rank > 0).
bool hasUnitInnerStride(MemRefType type);
/// A fresh 64-byte-aligned buffer of `memref`'s shape and element type with
/// the identity layout (its dynamic sizes read from `memref`), uninitialised.
Value allocContiguousLike(OpBuilder &b, Location loc, Value memref);
/// `memref` itself when its innermost stride is 1 (and, with `identity`, when
/// its layout is the identity), else a fresh contiguous copy.
Value contiguous(OpBuilder &b, Location loc, Value memref,
                 bool identity = false);

/// ceil(a / b) for index values.
Value ceilDiv(OpBuilder &b, Location loc, Value a, int64_t d);
/// min(a, b) for index values (unsigned).
Value minIndex(OpBuilder &b, Location loc, Value a, Value c);

/// Calling the C micro-kernels (include/tfc/Target/CPU/MicroKernels.h):
/// the declaration of kernel `name`, added to the module of `at` once; an
/// index as i64; the address of element 0 of a memref (its offset
/// included) as !llvm.ptr. tfc-early-dealloc follows such addresses to the
/// calls that use them.
LLVM::LLVMFuncOp declareMicroKernel(OpBuilder &b, Operation *at,
                                    StringRef name, Type result,
                                    ArrayRef<Type> args);
Value toI64(OpBuilder &b, Location loc, Value index);
Value pointerTo(OpBuilder &b, Location loc, Value memref);

} // namespace mlir::tfc::cpu

#endif // TFC_LIB_CONVERSION_TFCTOCPU_KERNELUTILS_H
