//===- KernelUtils.cpp - Building blocks of the CPU kernels ---------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "KernelConfig.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::tfc::cpu;

VectorType tfc::cpu::vecType(MLIRContext *ctx, int64_t width) {
  return VectorType::get({width}, Float32Type::get(ctx));
}

Value tfc::cpu::indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value tfc::cpu::f32Const(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}

Value tfc::cpu::splat(OpBuilder &b, Location loc, Value scalar,
                      int64_t width) {
  return vector::BroadcastOp::create(b, loc, vecType(b.getContext(), width),
                                     scalar);
}

Value tfc::cpu::splatConst(OpBuilder &b, Location loc, double v,
                           int64_t width) {
  VectorType t = vecType(b.getContext(), width);
  return arith::ConstantOp::create(
      b, loc, t, DenseElementsAttr::get(t, b.getF32FloatAttr(v)));
}

Value tfc::cpu::laneMask(OpBuilder &b, Location loc, Value remaining,
                         int64_t width) {
  auto t = VectorType::get({width}, b.getI1Type());
  return vector::CreateMaskOp::create(b, loc, t, ValueRange{remaining});
}

Value tfc::cpu::maskedLoad(OpBuilder &b, Location loc, Value memref,
                           ValueRange indices, Value mask, Value passthru) {
  return vector::MaskedLoadOp::create(
      b, loc, cast<VectorType>(passthru.getType()), memref, indices, mask,
      passthru);
}

void tfc::cpu::maskedStore(OpBuilder &b, Location loc, Value value,
                           Value memref, ValueRange indices, Value mask) {
  vector::MaskedStoreOp::create(b, loc, memref, indices, mask, value);
}

// In lane order, not reassociated: a tree of halves (LLVM's form for a
// reassociable sum) moved SmolLM2's Q8_0 perplexity by 0.19 % (6.0753 ->
// 6.0866; its activations' int8 rounding amplifies the last bits of the
// RMSNorm), past test/Import/perplexity.test's limit against f32.
Value tfc::cpu::reduceAdd(OpBuilder &b, Location loc, Value vec) {
  return vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD, vec);
}

/// `vec` reduced to one lane as a tree of halves, `Combine` (an arith op)
/// joining the low and high half at each step, then `kind` over that lane.
template <typename Combine>
static Value reduceByHalves(OpBuilder &b, Location loc, Value vec,
                            vector::CombiningKind kind) {
  auto type = cast<VectorType>(vec.getType());
  for (int64_t w = type.getNumElements(); w > 1 && w % 2 == 0; w /= 2) {
    Value lo =
        vector::ExtractStridedSliceOp::create(b, loc, vec, {0}, {w / 2}, {1});
    Value hi = vector::ExtractStridedSliceOp::create(b, loc, vec, {w / 2},
                                                     {w / 2}, {1});
    vec = Combine::create(b, loc, lo, hi);
  }
  return vector::ReductionOp::create(b, loc, kind, vec);
}

Value tfc::cpu::reduceAddTree(OpBuilder &b, Location loc, Value vec) {
  return reduceByHalves<arith::AddFOp>(b, loc, vec, vector::CombiningKind::ADD);
}

Value tfc::cpu::reduceMax(OpBuilder &b, Location loc, Value vec) {
  // Halves, as a tree: LLVM expands llvm.vector.reduce.fmax (maxnum, NaNs
  // possible) one lane at a time, a chain of 15 maxss each with its NaN
  // fix-up, even when told it may reassociate.
  return reduceByHalves<arith::MaxNumFOp>(b, loc, vec,
                                          vector::CombiningKind::MAXNUMF);
}

namespace {
/// The end of the whole chunks of [0, n): n rounded down to the width.
Value wholeChunksEnd(OpBuilder &b, Location loc, Value n) {
  Value step = indexConst(b, loc, kVectorWidth);
  return arith::SubIOp::create(b, loc, n,
                               arith::RemUIOp::create(b, loc, n, step));
}

/// A mask of every lane: the masked loads and stores of whole chunks fold
/// to plain ones (InstCombine, or MLIR's folders). A masked store costs
/// many times a plain one on AMD's cores (VMASKMOVPS to memory is
/// microcoded), and every chunk of a row paid it.
Value allLanes(OpBuilder &b, Location loc) {
  auto type = VectorType::get({kVectorWidth}, b.getI1Type());
  return arith::ConstantOp::create(b, loc,
                                   DenseElementsAttr::get(type, true));
}
} // namespace

void tfc::cpu::forChunks(OpBuilder &b, Location loc, Value n, ChunkFn fn) {
  Value zero = indexConst(b, loc, 0);
  Value step = indexConst(b, loc, kVectorWidth);
  Value whole = wholeChunksEnd(b, loc, n);
  scf::ForOp::create(b, loc, zero, whole, step, ValueRange{},
                     [&](OpBuilder &nb, Location l, Value d, ValueRange) {
                       fn(nb, l, d, allLanes(nb, l));
                       scf::YieldOp::create(nb, l);
                     });
  Value tail =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, whole, n);
  scf::IfOp::create(b, loc, tail, [&](OpBuilder &nb, Location l) {
    fn(nb, l, whole,
       laneMask(nb, l, arith::SubIOp::create(nb, l, n, whole)));
    scf::YieldOp::create(nb, l);
  });
}

SmallVector<Value> tfc::cpu::forChunksReduce(OpBuilder &b, Location loc,
                                             Value n, ValueRange init,
                                             ChunkReduceFn fn) {
  Value zero = indexConst(b, loc, 0);
  Value step = indexConst(b, loc, kVectorWidth);
  Value whole = wholeChunksEnd(b, loc, n);
  auto loop = scf::ForOp::create(
      b, loc, zero, whole, step, init,
      [&](OpBuilder &nb, Location l, Value d, ValueRange acc) {
        scf::YieldOp::create(nb, l, fn(nb, l, d, allLanes(nb, l), acc));
      });
  // The last, partial chunk after the whole ones: each lane's values are
  // combined in the same order as before.
  Value tail =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, whole, n);
  auto last = scf::IfOp::create(
      b, loc, tail,
      [&](OpBuilder &nb, Location l) {
        scf::YieldOp::create(
            nb, l,
            fn(nb, l, whole,
               laneMask(nb, l, arith::SubIOp::create(nb, l, n, whole)),
               loop.getResults()));
      },
      [&](OpBuilder &nb, Location l) {
        scf::YieldOp::create(nb, l, loop.getResults());
      });
  return SmallVector<Value>(last.getResults());
}

void tfc::cpu::parallelOverLeading(
    OpBuilder &b, Location loc, Value memref, int64_t count,
    function_ref<void(OpBuilder &, Location, ValueRange)> fn) {
  if (count == 0) {
    fn(b, loc, {});
    return;
  }
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t d = 0; d < count; ++d) {
    lbs.push_back(indexConst(b, loc, 0));
    ubs.push_back(memref::DimOp::create(b, loc, memref, d));
    steps.push_back(indexConst(b, loc, 1));
  }
  scf::ParallelOp::create(b, loc, lbs, ubs, steps,
                          [&](OpBuilder &nb, Location l, ValueRange ivs) {
                            fn(nb, l, ivs);
                          });
}

bool tfc::cpu::hasUnitInnerStride(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return type.getRank() > 0 &&
         succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

Value tfc::cpu::allocContiguousLike(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<Value> dynamic;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dynamic.push_back(memref::DimOp::create(b, loc, memref, d));
  return memref::AllocOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), dynamic,
      b.getI64IntegerAttr(64));
}

Value tfc::cpu::contiguous(OpBuilder &b, Location loc, Value memref,
                           bool identity) {
  auto type = cast<MemRefType>(memref.getType());
  if (type.getLayout().isIdentity() || (!identity && hasUnitInnerStride(type)))
    return memref;
  Value copy = allocContiguousLike(b, loc, memref);
  memref::CopyOp::create(b, loc, memref, copy);
  return copy;
}

LLVM::LLVMFuncOp tfc::cpu::declareMicroKernel(OpBuilder &b, Operation *at,
                                              StringRef name, Type result,
                                              ArrayRef<Type> args) {
  auto module = at->getParentOfType<ModuleOp>();
  if (auto f = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return f;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  return LLVM::LLVMFuncOp::create(b, module.getLoc(), name,
                                  LLVM::LLVMFunctionType::get(result, args));
}

Value tfc::cpu::toI64(OpBuilder &b, Location loc, Value index) {
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
}

Value tfc::cpu::pointerTo(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  int64_t elementBytes = type.getElementTypeBitWidth() / 8;
  Value offset = arith::MulIOp::create(b, loc, meta.getOffset(),
                                       indexConst(b, loc, elementBytes));
  Value address = arith::AddIOp::create(b, loc, base, offset);
  return LLVM::IntToPtrOp::create(b, loc,
                                  LLVM::LLVMPointerType::get(b.getContext()),
                                  toI64(b, loc, address));
}

Value tfc::cpu::minIndex(OpBuilder &b, Location loc, Value a, Value c) {
  return arith::MinUIOp::create(b, loc, a, c);
}

Value tfc::cpu::ceilDiv(OpBuilder &b, Location loc, Value a, int64_t d) {
  return arith::CeilDivUIOp::create(b, loc, a, indexConst(b, loc, d));
}

const tfc::cpu::GemmConfig *tfc::cpu::gemmConfigForIsa(StringRef isa) {
  if (isa == "avx512")
    return &kGemmAvx512;
  if (isa == "avx2")
    return &kGemmAvx2;
  return nullptr;
}

int64_t tfc::cpu::kcForL1d(const GemmConfig &config, int64_t l1dBytes) {
  int64_t bytesPerK = config.tilePanels * config.nr * 4;
  int64_t budget = l1dBytes * 2 / 3;
  int64_t kc = 16;
  while (kc < 1024 && 2 * kc * bytesPerK <= budget)
    kc *= 2;
  return kc;
}

int64_t tfc::cpu::kcForL2(const GemmConfig &config, int64_t l2Bytes) {
  int64_t bytesPerK = (config.mc + config.tilePanels * config.nr) * 4;
  int64_t budget = l2Bytes / 4;
  if (16 * bytesPerK > budget)
    return 0;
  int64_t kc = 16;
  while (kc < 1024 && 2 * kc * bytesPerK <= budget)
    kc *= 2;
  return kc;
}

int64_t tfc::cpu::l1KcFor(const GemmConfig &config, Operation *op) {
  int64_t l1d = l1dBytesFor(op);
  return l1d > 0 ? kcForL1d(config, l1d) : config.kc;
}

int64_t tfc::cpu::deepKcFor(const GemmConfig &config, int64_t l2Bytes,
                            int64_t depth) {
  if (!config.kcFromL2 || l2Bytes <= 0)
    return config.kc;
  int64_t kc = kcForL2(config, l2Bytes);
  if (kc <= config.kc)
    return config.kc;
  return depth <= 2 * kc ? std::max(depth, config.kc) : kc;
}

namespace {
/// The non-negative integer attribute `name` of the module that holds `op`;
/// 0 if it has none.
int64_t moduleBytes(Operation *op, StringRef name) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    module = op->getParentOfType<ModuleOp>();
  if (module)
    if (auto bytes = module->getAttrOfType<IntegerAttr>(name))
      return std::max<int64_t>(bytes.getInt(), 0);
  return 0;
}
} // namespace

int64_t tfc::cpu::l1dBytesFor(Operation *op) {
  return moduleBytes(op, kCpuL1dAttr);
}

int64_t tfc::cpu::l2BytesFor(Operation *op) {
  return moduleBytes(op, kCpuL2Attr);
}

tfc::cpu::GemmConfig tfc::cpu::gemmConfigFor(Operation *op) {
  auto module = dyn_cast<ModuleOp>(op);
  if (!module)
    module = op->getParentOfType<ModuleOp>();
  GemmConfig config = kGemmAvx512;
  if (!module)
    return config;
  if (auto isa = module->getAttrOfType<StringAttr>(kCpuIsaAttr))
    if (const GemmConfig *named = gemmConfigForIsa(isa.getValue()))
      config = *named;
  config.kc = l1KcFor(config, module);
  // A measured tuning (validated where the attribute was set).
  if (auto tuning = module->getAttrOfType<StringAttr>(kCpuGemmTuningAttr)) {
    auto isa = module->getAttrOfType<StringAttr>(kCpuIsaAttr);
    std::string error;
    GemmConfig tuned = config;
    if (applyGemmTuning(tuned, tuning.getValue(),
                        isa ? isa.getValue() : StringRef("avx512"), error))
      config = tuned;
  }
  return config;
}
