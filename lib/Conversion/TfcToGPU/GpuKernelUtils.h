//===- GpuKernelUtils.h - Building blocks of the GPU kernels ----*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Memref-level helpers of the GPU kernel emitters: gpu.launch with shared
// (workgroup) buffers, loads and stores that compute in f32 whatever the
// element type (f32, f16, bf16), strided per-thread loops, and warp- and
// block-wide reductions through gpu.shuffle and shared memory.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_LIB_CONVERSION_TFCTOGPU_GPUKERNELUTILS_H
#define TFC_LIB_CONVERSION_TFCTOGPU_GPUKERNELUTILS_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <array>

namespace mlir::gpu {
class LaunchOp;
} // namespace mlir::gpu

namespace mlir::tfc::gpuk {

/// Threads of a warp.
constexpr int64_t kWarpSize = 32;

Value indexConst(OpBuilder &b, Location loc, int64_t v);
Value f32Const(OpBuilder &b, Location loc, double v);
Value i32Const(OpBuilder &b, Location loc, int32_t v);

/// A static buffer in the workgroup (shared) address space (f32 unless
/// `element` is given).
MemRefType sharedType(MLIRContext *ctx, ArrayRef<int64_t> shape,
                      Type element = {});

/// What a kernel body sees of its launch.
struct LaunchIds {
  std::array<Value, 3> block;
  Value thread;
  SmallVector<Value> shared;
};

/// gpu.launch over `grid` blocks of `threads` threads (x only), with one
/// shared buffer per `shared` type (a workgroup-space memref.alloca at the
/// start of the body until promoteSharedAllocas); `body` fills the launch
/// region. Returns the launch.
gpu::LaunchOp
launch(OpBuilder &b, Location loc, std::array<Value, 3> grid, int64_t threads,
       ArrayRef<MemRefType> shared,
       function_ref<void(OpBuilder &, Location, const LaunchIds &)> body);

/// Turns the workgroup-space allocas at the start of `launch`'s body into
/// workgroup attributions.
void promoteSharedAllocas(gpu::LaunchOp launch);

/// Two consecutive 16-bit elements as one mma.sync operand register: a
/// vector<2xf16>, or an i32 holding two bf16 (the first in the low half).
Value packPair(OpBuilder &b, Location loc, Value lo, Value hi);

/// ldmatrix.sync.aligned.m8n8.x<count>[.trans] from the 16-bit `tile` in
/// shared memory, this lane giving the row at [row, col] (lanes 8i..8i+7
/// the rows of matrix i): `count` registers as mma.sync takes them
/// (packPair's forms).
SmallVector<Value> loadMatrices(OpBuilder &b, Location loc, Value tile,
                                Value row, Value col, int64_t count,
                                bool transpose);

/// mma.sync.aligned.m16n8k<shape[2]>.row.col with f32 accumulators on
/// `type` operands (f16, bf16 or tf32): D = A·B + C, the four f32 of D.
SmallVector<Value> mmaSync(OpBuilder &b, Location loc, NVVM::MMATypes type,
                           ArrayRef<Value> a, ArrayRef<Value> bFrag,
                           ValueRange c, ArrayRef<int64_t> shape);

/// A global operand as cp.async copies it: the byte address of its element
/// 0 (aligned pointer + offset), its strides in elements, and `aligned`:
/// whether every row (the innermost dim, contiguous) starts on 16 bytes, so
/// that whole 16-byte copies may be taken from it. Checked at run time from
/// the strided metadata.
struct AsyncSource {
  Value address;
  SmallVector<Value> strides;
  Value aligned;
  int64_t bytes = 0;
};
AsyncSource asyncSource(OpBuilder &b, Location loc, Value memref);

/// Copies the tile of rows [row0, row0 + tileRows) x columns [col0, col0 +
/// tileCols) of `src` (at the leading indices `lead`) into the shared 2-D
/// `shared` (rows of any pitch; a subview is fine) by cp.async.cg 16-byte
/// copies, cooperatively over `threads` threads; copies of rows >= rowEnd
/// or columns >= colEnd read nothing and zero-fill. Needs src.aligned, and
/// tileCols, col0 and colEnd whole copies (multiples of 16 bytes). The
/// copies still have to be committed and waited for.
void copyTileAsync(OpBuilder &b, Location loc, const AsyncSource &src,
                   ArrayRef<Value> lead, Value row0, Value rowEnd, Value col0,
                   Value colEnd, Value shared, int64_t tileRows,
                   int64_t tileCols, Value thread, int64_t threads);

/// The 16 bytes at src[indices] from global memory as one vector of
/// `type` (a single 16-byte load: src.aligned, the last index a multiple of
/// 16 / src.bytes).
Value loadGlobalVector(OpBuilder &b, Location loc, const AsyncSource &src,
                       ValueRange indices, VectorType type);

/// memref[indices] as f32 (extended from f16/bf16).
Value loadF32(OpBuilder &b, Location loc, Value memref, ValueRange indices);
/// Stores the f32 `value` into memref[indices] in the memref's element type.
void storeF32(OpBuilder &b, Location loc, Value value, Value memref,
              ValueRange indices);

/// for (iv = begin; iv < end; iv += step) body(iv).
void forLoop(OpBuilder &b, Location loc, Value begin, Value end, Value step,
             function_ref<void(OpBuilder &, Location, Value)> body);
/// The same loop carrying `init`; returns the final values.
SmallVector<Value> forLoopReduce(
    OpBuilder &b, Location loc, Value begin, Value end, Value step,
    ValueRange init,
    function_ref<SmallVector<Value>(OpBuilder &, Location, Value, ValueRange)>
        body);
/// if (cond) body().
void ifThen(OpBuilder &b, Location loc, Value cond,
            function_ref<void(OpBuilder &, Location)> body);

enum class Reduction { Add, Max };
Value combine(OpBuilder &b, Location loc, Reduction kind, Value x, Value y);
/// The reduction of `value` over the 32 lanes of the warp, in every lane
/// (butterfly shuffles).
Value warpReduce(OpBuilder &b, Location loc, Value value, Reduction kind);
/// The reduction of `value` over the block's `threads` threads (a multiple
/// of the warp size), in every thread. `scratch` is a shared buffer of at
/// least threads / 32 f32; it may be reused right after the call.
Value blockReduce(OpBuilder &b, Location loc, Value value, Reduction kind,
                  Value scratch, Value thread, int64_t threads);

/// ceil(a / d) for an index value.
Value ceilDiv(OpBuilder &b, Location loc, Value a, int64_t d);
Value minIndex(OpBuilder &b, Location loc, Value a, Value c);
/// Splits the linear `index` into coordinates of `sizes` (row-major).
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value index,
                               ArrayRef<Value> sizes);
/// The sizes of `memref`'s dims [begin, end) as index values.
SmallVector<Value> dimSizes(OpBuilder &b, Location loc, Value memref,
                            int64_t begin, int64_t end);
/// The product of `sizes` (1 if empty).
Value product(OpBuilder &b, Location loc, ArrayRef<Value> sizes);

} // namespace mlir::tfc::gpuk

#endif // TFC_LIB_CONVERSION_TFCTOGPU_GPUKERNELUTILS_H
