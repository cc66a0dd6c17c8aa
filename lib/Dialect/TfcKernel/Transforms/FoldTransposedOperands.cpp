//===- FoldTransposedOperands.cpp - tfc-kernel-fold-transposed-operands ---===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// A transposed copy that only attention and strided readers (generic
// inputs, loads, copy sources) read becomes a transposed view, and so does
// one that only copies attention's output elsewhere (Passes.td has the
// conditions).
//
//===----------------------------------------------------------------------===//

#include "tfc/Dialect/TfcKernel/Transforms/Passes.h"

#include "tfc/Dialect/Tfc/IR/TfcOps.h"
#include "tfc/Dialect/TfcKernel/IR/TfcKernel.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::tfc::kernel {
#define GEN_PASS_DEF_KERNELFOLDTRANSPOSEDOPERANDS
#include "tfc/Dialect/TfcKernel/Transforms/Passes.h.inc"
} // namespace mlir::tfc::kernel

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// The buffer `v` is a view of: an allocation, a block argument or the
/// result of an op that is not a view (memref.transpose is one, though not
/// a ViewLikeOpInterface).
Value rootOf(Value v) {
  while (true) {
    if (auto view = v.getDefiningOp<ViewLikeOpInterface>())
      v = view.getViewSource();
    else if (auto transpose = v.getDefiningOp<memref::TransposeOp>())
      v = transpose.getIn();
    else
      return v;
  }
}

bool isAllocation(Value v) {
  return v.getDefiningOp<memref::AllocOp>() ||
         v.getDefiningOp<memref::AllocaOp>();
}

bool isFunctionArgument(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && arg.getOwner()->isEntryBlock() &&
         isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
}

/// Whether the buffers `a` and `b` (roots) are known to be different
/// memory: two different allocations, or an allocation and an argument of
/// the function. Anything else (a region's block argument, the result of a
/// select, an if or a call) may be either.
bool distinct(Value a, Value b) {
  if (a == b)
    return false;
  if (isAllocation(a))
    return isAllocation(b) || isFunctionArgument(b);
  return isAllocation(b) && isFunctionArgument(a);
}

/// Whether `op` (with what it nests) may write the buffer `root`.
bool mayWrite(Operation *op, Value root) {
  std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
      getEffectsRecursively(op);
  if (!effects)
    return true;
  for (const MemoryEffects::EffectInstance &e : *effects) {
    if (!isa<MemoryEffects::Write, MemoryEffects::Free>(e.getEffect()))
      continue;
    // The block markers write only their own order (tfc.block_begin).
    if (isa<tfc::BlockBoundaryResource>(e.getResource()))
      continue;
    Value target = e.getValue();
    if (!target || !distinct(rootOf(target), root))
      return true;
  }
  return false;
}

/// Whether `use` is a query, key or value operand of an attention kernel.
bool isAttentionInput(OpOperand &use) {
  auto attention = dyn_cast<kernel::AttentionOp>(use.getOwner());
  return attention && (&use == &attention.getQueryMutable() ||
                       &use == &attention.getKeyMutable() ||
                       &use == &attention.getValueMutable());
}

/// Whether `use` only reads its buffer through memref indexing, which any
/// strided layout serves: a generic's input, a load, a copy's source.
bool isStridedReader(OpOperand &use) {
  Operation *user = use.getOwner();
  if (auto generic = dyn_cast<linalg::GenericOp>(user))
    return generic.isDpsInput(&use);
  if (auto load = dyn_cast<memref::LoadOp>(user))
    return use.get() == load.getMemRef();
  if (auto copy = dyn_cast<memref::CopyOp>(user))
    return use.get() == copy.getSource() && use.get() != copy.getTarget();
  // A size (the view has the buffer's shape).
  return isa<memref::DimOp>(user);
}

/// Folds `copy` when it qualifies; returns whether it did.
bool fold(linalg::TransposeOp copy) {
  if (!copy.hasPureBufferSemantics())
    return false;
  Value src = copy.getInput(), dst = copy.getInit();
  auto alloc = dst.getDefiningOp<memref::AllocOp>();
  auto srcType = dyn_cast<MemRefType>(src.getType());
  ArrayRef<int64_t> perm = copy.getPermutation();
  if (!alloc || !srcType || perm.empty() ||
      perm.back() != static_cast<int64_t>(perm.size()) - 1)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(srcType.getStridesAndOffset(strides, offset)) ||
      strides.back() != 1)
    return false;
  // Every other use: an attention input or a strided reader after the
  // copy, in its block or nested in an op of it.
  Block *block = copy->getBlock();
  Operation *last = copy;
  for (OpOperand &use : dst.getUses()) {
    Operation *user = use.getOwner();
    if (user == copy)
      continue;
    Operation *at = block->findAncestorOpInBlock(*user);
    if (!at || !copy->isBeforeInBlock(at) ||
        !(isAttentionInput(use) || isStridedReader(use)))
      return false;
    if (last->isBeforeInBlock(at))
      last = at;
  }
  if (last == copy)
    return false;
  // The source's buffer keeps its contents until the last reader is done.
  Value root = rootOf(src);
  for (Operation *op = copy->getNextNode(); op; op = op->getNextNode()) {
    if (mayWrite(op, root))
      return false;
    if (op == last)
      break;
  }
  OpBuilder b(copy);
  auto permutation = AffineMap::getPermutationMap(
      SmallVector<unsigned>(perm.begin(), perm.end()), b.getContext());
  Value view = memref::TransposeOp::create(b, copy.getLoc(), src,
                                           AffineMapAttr::get(permutation));
  dst.replaceUsesWithIf(view,
                        [&](OpOperand &use) { return use.getOwner() != copy; });
  copy->erase();
  if (alloc->use_empty())
    alloc->erase();
  return true;
}

/// Whether `use` is the output of an attention kernel.
bool isAttentionOutput(OpOperand &use) {
  auto attention = dyn_cast<kernel::AttentionOp>(use.getOwner());
  return attention && &use == &attention.getInitMutable();
}

/// Whether `v`, an operand of an op in `op`'s block, is available before
/// `op`: defined in an enclosing block (it dominates the whole block), as
/// a block argument, or by an op before `op`.
bool availableBefore(Value v, Operation *op) {
  Operation *def = v.getDefiningOp();
  return !def || def->getBlock() != op->getBlock() || def->isBeforeInBlock(op);
}

/// Folds `copy` when it copies attention's output (an allocation only that
/// attention writes and only the copy reads) into another allocation that
/// nothing uses before the copy: attention then writes that allocation
/// through a transposed view. Returns whether it did.
bool foldResult(linalg::TransposeOp copy) {
  Value src = copy.getInput(), dst = copy.getInit();
  auto srcAlloc = src.getDefiningOp<memref::AllocOp>();
  auto dstAlloc = dst.getDefiningOp<memref::AllocOp>();
  ArrayRef<int64_t> perm = copy.getPermutation();
  if (!srcAlloc || !dstAlloc || perm.empty() ||
      perm.back() != static_cast<int64_t>(perm.size()) - 1 ||
      !cast<MemRefType>(dst.getType()).getLayout().isIdentity())
    return false;
  Block *block = copy->getBlock();
  kernel::AttentionOp attention;
  SmallVector<memref::DimOp> sizes;
  for (OpOperand &use : src.getUses()) {
    if (use.getOwner() == copy)
      continue;
    // Sizes read from the buffer (shape resolution makes some) are read
    // from the view instead.
    if (auto dim = dyn_cast<memref::DimOp>(use.getOwner())) {
      sizes.push_back(dim);
      continue;
    }
    if (attention || !isAttentionOutput(use))
      return false;
    attention = cast<kernel::AttentionOp>(use.getOwner());
  }
  if (!attention || attention->getBlock() != block ||
      !attention->isBeforeInBlock(copy))
    return false;
  for (memref::DimOp dim : sizes) {
    Operation *at = block->findAncestorOpInBlock(*dim);
    if (!at || !attention->isBeforeInBlock(at))
      return false;
  }
  // Nothing reads or writes the destination before the copy.
  for (OpOperand &use : dst.getUses()) {
    if (use.getOwner() == copy)
      continue;
    Operation *at = block->findAncestorOpInBlock(*use.getOwner());
    if (!at || !copy->isBeforeInBlock(at))
      return false;
  }
  // The destination exists before attention writes it.
  if (dstAlloc->getBlock() == block && attention->isBeforeInBlock(dstAlloc)) {
    if (!llvm::all_of(dstAlloc->getOperands(),
                      [&](Value v) { return availableBefore(v, attention); }))
      return false;
    dstAlloc->moveBefore(attention);
  }
  SmallVector<unsigned> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  OpBuilder b(attention);
  Value view = memref::TransposeOp::create(
      b, copy.getLoc(), dst,
      AffineMapAttr::get(
          AffineMap::getPermutationMap(inverse, b.getContext())));
  attention.getInitMutable().assign(view);
  for (memref::DimOp dim : sizes)
    dim.getSourceMutable().assign(view);
  copy->erase();
  srcAlloc->erase();
  return true;
}

struct KernelFoldTransposedOperandsPass
    : tfc::kernel::impl::KernelFoldTransposedOperandsBase<
          KernelFoldTransposedOperandsPass> {
  void runOnOperation() override {
    SmallVector<linalg::TransposeOp> copies;
    getOperation().walk([&](linalg::TransposeOp op) { copies.push_back(op); });
    for (linalg::TransposeOp copy : copies)
      if (copy.hasPureBufferSemantics() && !fold(copy))
        foldResult(copy);
  }
};

} // namespace
