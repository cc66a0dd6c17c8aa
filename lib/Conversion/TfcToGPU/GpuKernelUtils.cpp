//===- GpuKernelUtils.cpp - Building blocks of the GPU kernels ------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "GpuKernelUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::gpuk;

Value gpuk::indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value gpuk::f32Const(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}

Value gpuk::i32Const(OpBuilder &b, Location loc, int32_t v) {
  return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
}

MemRefType gpuk::sharedType(MLIRContext *ctx, ArrayRef<int64_t> shape,
                            Type element) {
  auto space = gpu::AddressSpaceAttr::get(
      ctx, gpu::GPUDialect::getWorkgroupAddressSpace());
  return MemRefType::get(shape, element ? element : Float32Type::get(ctx),
                         MemRefLayoutAttrInterface(), space);
}

gpu::LaunchOp gpuk::launch(
    OpBuilder &b, Location loc, std::array<Value, 3> grid, int64_t threads,
    ArrayRef<MemRefType> shared,
    function_ref<void(OpBuilder &, Location, const LaunchIds &)> body) {
  Value one = indexConst(b, loc, 1);
  auto op = gpu::LaunchOp::create(b, loc, grid[0], grid[1], grid[2],
                                  indexConst(b, loc, threads), one, one);
  OpBuilder::InsertionGuard guard(b);
  Block &entry = op.getBody().front();
  b.setInsertionPointToStart(&entry);
  LaunchIds ids;
  gpu::KernelDim3 blockIds = op.getBlockIds();
  ids.block = {blockIds.x, blockIds.y, blockIds.z};
  ids.thread = op.getThreadIds().x;
  // Shared buffers start as workgroup allocas: kernels are emitted during
  // bufferisation, and the deallocation pipeline that follows would give a
  // memref block argument (a workgroup attribution) an ownership argument.
  // tfc-map-loops-to-gpu turns them into attributions afterwards.
  for (MemRefType type : shared)
    ids.shared.push_back(memref::AllocaOp::create(b, loc, type));
  body(b, loc, ids);
  gpu::TerminatorOp::create(b, loc);
  return op;
}

void gpuk::promoteSharedAllocas(gpu::LaunchOp launch) {
  SmallVector<memref::AllocaOp> allocas;
  for (auto alloca : launch.getBody().front().getOps<memref::AllocaOp>())
    if (gpu::GPUDialect::hasWorkgroupMemoryAddressSpace(alloca.getType()))
      allocas.push_back(alloca);
  for (memref::AllocaOp alloca : allocas) {
    BlockArgument arg =
        launch.addWorkgroupAttribution(alloca.getType(), alloca.getLoc());
    alloca.replaceAllUsesWith(arg);
    alloca.erase();
  }
}

Value gpuk::loadF32(OpBuilder &b, Location loc, Value memref,
                    ValueRange indices) {
  Value v = memref::LoadOp::create(b, loc, memref, indices);
  if (!v.getType().isF32())
    v = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
  return v;
}

void gpuk::storeF32(OpBuilder &b, Location loc, Value value, Value memref,
                    ValueRange indices) {
  Type element = cast<MemRefType>(memref.getType()).getElementType();
  if (element != value.getType())
    value = arith::TruncFOp::create(b, loc, element, value);
  memref::StoreOp::create(b, loc, value, memref, indices);
}

void gpuk::forLoop(OpBuilder &b, Location loc, Value begin, Value end,
                   Value step,
                   function_ref<void(OpBuilder &, Location, Value)> body) {
  scf::ForOp::create(b, loc, begin, end, step, ValueRange{},
                     [&](OpBuilder &b, Location l, Value iv, ValueRange) {
                       body(b, l, iv);
                       scf::YieldOp::create(b, l);
                     });
}

SmallVector<Value> gpuk::forLoopReduce(
    OpBuilder &b, Location loc, Value begin, Value end, Value step,
    ValueRange init,
    function_ref<SmallVector<Value>(OpBuilder &, Location, Value, ValueRange)>
        body) {
  auto loop = scf::ForOp::create(
      b, loc, begin, end, step, init,
      [&](OpBuilder &b, Location l, Value iv, ValueRange acc) {
        scf::YieldOp::create(b, l, body(b, l, iv, acc));
      });
  return SmallVector<Value>(loop.getResults());
}

void gpuk::ifThen(OpBuilder &b, Location loc, Value cond,
                  function_ref<void(OpBuilder &, Location)> body) {
  scf::IfOp::create(b, loc, cond, [&](OpBuilder &b, Location l) {
    body(b, l);
    scf::YieldOp::create(b, l);
  });
}

Value gpuk::combine(OpBuilder &b, Location loc, Reduction kind, Value x,
                    Value y) {
  if (kind == Reduction::Add)
    return arith::AddFOp::create(b, loc, x, y);
  return arith::MaximumFOp::create(b, loc, x, y);
}

Value gpuk::warpReduce(OpBuilder &b, Location loc, Value value,
                       Reduction kind) {
  for (int32_t offset = kWarpSize / 2; offset > 0; offset /= 2) {
    Value other = gpu::ShuffleOp::create(b, loc, value, offset, kWarpSize,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    value = combine(b, loc, kind, value, other);
  }
  return value;
}

Value gpuk::blockReduce(OpBuilder &b, Location loc, Value value, Reduction kind,
                        Value scratch, Value thread, int64_t threads) {
  value = warpReduce(b, loc, value, kind);
  int64_t warps = threads / kWarpSize;
  if (warps == 1)
    return value;
  Value warpSize = indexConst(b, loc, kWarpSize);
  Value lane = arith::RemUIOp::create(b, loc, thread, warpSize);
  Value warp = arith::DivUIOp::create(b, loc, thread, warpSize);
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                                      indexConst(b, loc, 0));
  ifThen(b, loc, first, [&](OpBuilder &b, Location l) {
    memref::StoreOp::create(b, l, value, scratch, ValueRange{warp});
  });
  gpu::BarrierOp::create(b, loc);
  Value result = memref::LoadOp::create(b, loc, scratch,
                                        ValueRange{indexConst(b, loc, 0)});
  for (int64_t w = 1; w < warps; ++w)
    result = combine(b, loc, kind, result,
                     memref::LoadOp::create(b, loc, scratch,
                                            ValueRange{indexConst(b, loc, w)}));
  // Every thread has read the partials before anyone writes new ones.
  gpu::BarrierOp::create(b, loc);
  return result;
}

Value gpuk::ceilDiv(OpBuilder &b, Location loc, Value a, int64_t d) {
  return arith::CeilDivUIOp::create(b, loc, a, indexConst(b, loc, d));
}

Value gpuk::minIndex(OpBuilder &b, Location loc, Value a, Value c) {
  return arith::MinUIOp::create(b, loc, a, c);
}

SmallVector<Value> gpuk::delinearize(OpBuilder &b, Location loc, Value index,
                                     ArrayRef<Value> sizes) {
  SmallVector<Value> coords(sizes.size());
  Value rest = index;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    if (d == 0) {
      coords[d] = rest;
      break;
    }
    coords[d] = arith::RemUIOp::create(b, loc, rest, sizes[d]);
    rest = arith::DivUIOp::create(b, loc, rest, sizes[d]);
  }
  return coords;
}

SmallVector<Value> gpuk::dimSizes(OpBuilder &b, Location loc, Value memref,
                                  int64_t begin, int64_t end) {
  SmallVector<Value> sizes;
  for (int64_t d = begin; d < end; ++d)
    sizes.push_back(memref::DimOp::create(b, loc, memref, d));
  return sizes;
}

Value gpuk::product(OpBuilder &b, Location loc, ArrayRef<Value> sizes) {
  Value p = indexConst(b, loc, 1);
  for (Value s : sizes)
    p = arith::MulIOp::create(b, loc, p, s);
  return p;
}

Value gpuk::packPair(OpBuilder &b, Location loc, Value lo, Value hi) {
  if (lo.getType().isF16())
    return vector::FromElementsOp::create(
        b, loc, VectorType::get({2}, lo.getType()), ValueRange{lo, hi});
  auto bits = [&](Value v) -> Value {
    Value i16 = arith::BitcastOp::create(b, loc, b.getI16Type(), v);
    return arith::ExtUIOp::create(b, loc, b.getI32Type(), i16);
  };
  Value high = arith::ShLIOp::create(
      b, loc, bits(hi),
      arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(16)));
  return arith::OrIOp::create(b, loc, bits(lo), high);
}

SmallVector<Value> gpuk::mmaSync(OpBuilder &b, Location loc,
                                 NVVM::MMATypes type, ArrayRef<Value> a,
                                 ArrayRef<Value> bFrag, ValueRange c,
                                 ArrayRef<int64_t> shape) {
  auto f32 = b.getF32Type();
  auto resultType =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  auto mma = NVVM::MmaOp::create(
      b, loc, resultType, a, bFrag, c, shape, std::nullopt, std::nullopt,
      std::array<NVVM::MMATypes, 2>{type, type},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> d;
  for (int64_t i = 0; i < 4; ++i)
    d.push_back(LLVM::ExtractValueOp::create(b, loc, mma.getResult(),
                                             ArrayRef<int64_t>{i}));
  return d;
}

SmallVector<Value> gpuk::loadMatrices(OpBuilder &b, Location loc, Value tile,
                                      Value row, Value col, int64_t count,
                                      bool transpose) {
  Type element = cast<MemRefType>(tile.getType()).getElementType();
  auto type = VectorType::get({count, 2}, element);
  Value loaded =
      nvgpu::LdMatrixOp::create(b, loc, type, tile, ValueRange{row, col},
                                transpose, static_cast<uint32_t>(count));
  SmallVector<Value> regs;
  for (int64_t i = 0; i < count; ++i) {
    Value pair = vector::ExtractOp::create(b, loc, loaded, i);
    if (!element.isF16()) // bf16 pairs travel as i32
      pair = vector::ExtractOp::create(
          b, loc,
          vector::BitCastOp::create(b, loc,
                                    VectorType::get({1}, b.getI32Type()), pair),
          0);
    regs.push_back(pair);
  }
  return regs;
}

AsyncSource gpuk::asyncSource(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  AsyncSource s;
  s.bytes = type.getElementTypeBitWidth() / 8;
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value pointer =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  auto mul = [&](Value x, int64_t y) -> Value {
    return arith::MulIOp::create(b, loc, x, indexConst(b, loc, y));
  };
  s.address =
      arith::AddIOp::create(b, loc, pointer, mul(meta.getOffset(), s.bytes));
  s.strides.assign(meta.getStrides().begin(), meta.getStrides().end());
  auto isMultiple = [&](Value v, int64_t m) -> Value {
    return arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::RemUIOp::create(b, loc, v, indexConst(b, loc, m)),
        indexConst(b, loc, 0));
  };
  int64_t rank = type.getRank();
  Value ok = isMultiple(s.address, 16);
  for (int64_t d = 0; d + 1 < rank; ++d)
    ok = arith::AndIOp::create(b, loc, ok,
                               isMultiple(s.strides[d], 16 / s.bytes));
  s.aligned = arith::AndIOp::create(
      b, loc, ok,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                            s.strides[rank - 1], indexConst(b, loc, 1)));
  return s;
}

/// The integer `address` as an LLVM pointer in address space `space`.
static Value toPointer(OpBuilder &b, Location loc, Value address,
                       unsigned space) {
  Value i64 = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), address);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), space), i64);
}

/// The global pointer to src[indices].
static Value elementPointer(OpBuilder &b, Location loc, const AsyncSource &src,
                            ValueRange indices) {
  Value element = indexConst(b, loc, 0);
  for (auto [i, v] : llvm::enumerate(indices))
    element = arith::AddIOp::create(
        b, loc, element, arith::MulIOp::create(b, loc, v, src.strides[i]));
  Value address = arith::AddIOp::create(
      b, loc, src.address,
      arith::MulIOp::create(b, loc, element, indexConst(b, loc, src.bytes)));
  return toPointer(b, loc, address, /*global=*/1);
}

Value gpuk::loadGlobalVector(OpBuilder &b, Location loc, const AsyncSource &src,
                             ValueRange indices, VectorType type) {
  return LLVM::LoadOp::create(b, loc, type,
                              elementPointer(b, loc, src, indices),
                              /*alignment=*/16);
}

void gpuk::copyTileAsync(OpBuilder &b, Location loc, const AsyncSource &src,
                         ArrayRef<Value> lead, Value row0, Value rowEnd,
                         Value col0, Value colEnd, Value shared,
                         int64_t tileRows, int64_t tileCols, Value thread,
                         int64_t threads) {
  int64_t perCopy = 16 / src.bytes, chunks = tileCols / perCopy;
  auto add = [&](OpBuilder &b, Location l, Value x, Value y) -> Value {
    return arith::AddIOp::create(b, l, x, y);
  };
  auto mul = [&](OpBuilder &b, Location l, Value x, Value y) -> Value {
    return arith::MulIOp::create(b, l, x, y);
  };
  auto lt = [&](OpBuilder &b, Location l, Value x, Value y) -> Value {
    return arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, x, y);
  };
  auto to = memref::ExtractStridedMetadataOp::create(b, loc, shared);
  Value sharedBase = arith::AddIOp::create(
      b, loc, memref::ExtractAlignedPointerAsIndexOp::create(b, loc, shared),
      arith::MulIOp::create(b, loc, to.getOffset(),
                            indexConst(b, loc, src.bytes)));
  Value pitch = to.getStrides()[0];
  Value lastRow = arith::SubIOp::create(b, loc, rowEnd, indexConst(b, loc, 1));
  forLoop(
      b, loc, thread, indexConst(b, loc, tileRows * chunks),
      indexConst(b, loc, threads), [&](OpBuilder &b, Location l, Value e) {
        Value r = arith::DivUIOp::create(b, l, e, indexConst(b, l, chunks));
        Value c = arith::MulIOp::create(
            b, l, arith::RemUIOp::create(b, l, e, indexConst(b, l, chunks)),
            indexConst(b, l, perCopy));
        Value row = add(b, l, row0, r), col = add(b, l, col0, c);
        Value colInside = lt(b, l, col, colEnd);
        Value inside =
            arith::AndIOp::create(b, l, lt(b, l, row, rowEnd), colInside);
        // Outside: nothing is read (size 0), from a valid address.
        SmallVector<Value> idx(lead.begin(), lead.end());
        idx.push_back(minIndex(b, l, row, lastRow));
        idx.push_back(
            arith::SelectOp::create(b, l, colInside, col, indexConst(b, l, 0)));
        Value bytes = indexConst(b, l, src.bytes);
        Value from = elementPointer(b, l, src, idx);
        Value dst =
            toPointer(b, l,
                      add(b, l, sharedBase,
                          mul(b, l, add(b, l, mul(b, l, r, pitch), c), bytes)),
                      /*shared=*/3);
        Value size = arith::SelectOp::create(b, l, inside, i32Const(b, l, 16),
                                             i32Const(b, l, 0));
        NVVM::CpAsyncOp::create(
            b, l, dst, from, b.getI32IntegerAttr(16),
            NVVM::LoadCacheModifierKindAttr::get(
                b.getContext(), NVVM::LoadCacheModifierKind::CG),
            size);
      });
}
