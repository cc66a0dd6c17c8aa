//===- HoistBlockInvariants.cpp - The tfc-hoist-block-invariants pass -----===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The ops of one block call (a layer) should be the same as those of every
// other call of the block, up to the values they read, for
// tfc-outline-blocks to make them one function. What depends on weights only
// (a pack, a merged projection's concat, a transposed weight) is computed
// once at load by tfc_model_init, which tfc-model-abi arranges; the read of
// its slot that it leaves behind names the slot by a constant, different in
// each layer. Moved out of the calls first, such ops leave their slot reads
// outside them too.
//
// Shape arithmetic on values from before a call (the sizes of its input,
// of the entry's) moves out of it too: CSE shares it between the calls that
// compute it alike, and the first would have it as an extra result.
//
// A tensor.empty (a destination, no computation) gets one copy per use,
// right before it: CSE had made one of every equal destination of the
// function, in whichever call used it first, and bufferisation allocates a
// destination's buffer where the tensor.empty is.
//
//===----------------------------------------------------------------------===//

#include "tfc/Dialect/Tfc/IR/TfcOps.h"
#include "tfc/Target/Host/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_HOISTBLOCKINVARIANTS
#include "tfc/Target/Host/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

struct HoistBlockInvariantsPass
    : tfc::impl::HoistBlockInvariantsBase<HoistBlockInvariantsPass> {
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp f) {
      for (Block &block : f.getBody())
        if (!block.getOps<BlockBeginOp>().empty())
          hoist(block);
    });
  }

  /// An op with no regions whose results are all integers or indices.
  static bool isScalar(Operation *op) {
    return op->getNumRegions() == 0 && op->getNumResults() > 0 &&
           llvm::all_of(op->getResultTypes(),
                        [](Type t) { return t.isIntOrIndex(); });
  }

  /// Whether `v` is available before `marker`: defined before it in its
  /// block, or outside the block.
  static bool definedBefore(Value v, Operation *marker) {
    Block *block = marker->getBlock();
    Operation *def = v.getDefiningOp();
    if (!def)
      def = cast<BlockArgument>(v).getOwner()->getParentOp();
    Operation *top = block->findAncestorOpInBlock(*def);
    return !top || top->isBeforeInBlock(marker);
  }

  static void hoist(Block &block) {
    // One tensor.empty per use, right before it (see the file comment).
    for (auto empty :
         llvm::make_early_inc_range(block.getOps<tensor::EmptyOp>())) {
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : empty->getUses())
        if (use.getOwner()->getBlock() == &block)
          uses.push_back(&use);
      for (OpOperand *use : uses) {
        OpBuilder b(use->getOwner());
        use->set(b.clone(*empty)->getResult(0));
      }
      if (empty->use_empty())
        empty->erase();
    }
    // Values computed from weights and constants only.
    llvm::DenseSet<Value> constant;
    auto isConstant = [&](Value v) {
      if (constant.contains(v))
        return true;
      Operation *def = v.getDefiningOp();
      return def &&
             (isa<WeightOp>(def) || (def->hasTrait<OpTrait::ConstantLike>() &&
                                     def->getNumOperands() == 0));
    };
    SmallVector<Operation *> open;
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (isa<BlockBeginOp>(op)) {
        open.push_back(&op);
        continue;
      }
      if (isa<BlockEndOp>(op)) {
        if (!open.empty())
          open.pop_back();
        continue;
      }
      if (!isPure(&op) || op.hasTrait<OpTrait::IsTerminator>())
        continue;
      llvm::SetVector<Value> read(op.operand_begin(), op.operand_end());
      getUsedValuesDefinedAbove(op.getRegions(), read);
      // A destination (a tensor.empty of static shape) counts as constant.
      SmallVector<Operation *> carried;
      bool weightOnly = llvm::all_of(read, [&](Value v) {
        if (isConstant(v))
          return true;
        auto empty = v.getDefiningOp<tensor::EmptyOp>();
        if (empty && empty->hasOneUse() && empty.getDynamicSizes().empty()) {
          carried.push_back(empty);
          return true;
        }
        return false;
      });
      if (!weightOnly || isa<tensor::EmptyOp>(op)) {
        // Shape arithmetic (a tensor.dim, an index computed from sizes) on
        // values from before a call moves before it: CSE shares it between
        // calls that compute it alike, giving the first an extra result.
        if (isScalar(&op))
          for (Operation *begin : open)
            if (llvm::all_of(
                    read, [&](Value v) { return definedBefore(v, begin); })) {
              op.moveBefore(begin);
              break;
            }
        continue;
      }
      for (Value r : op.getResults())
        constant.insert(r);
      if (open.empty())
        continue;
      for (Operation *empty : carried)
        empty->moveBefore(open.front());
      op.moveBefore(open.front());
    }
  }
};

} // namespace
