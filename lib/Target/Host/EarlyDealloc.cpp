//===- EarlyDealloc.cpp - The tfc-early-dealloc pass ----------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Target/Host/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_EARLYDEALLOC
#include "tfc/Target/Host/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;

namespace {

struct EarlyDeallocPass : tfc::impl::EarlyDeallocBase<EarlyDeallocPass> {
  void runOnOperation() override {
    getOperation().walk([](func::FuncOp f) {
      if (f.isDeclaration())
        return;
      Block &block = f.front();
      for (auto dealloc :
           llvm::make_early_inc_range(block.getOps<memref::DeallocOp>()))
        hoist(block, dealloc);
    });
  }

  /// The last op of `block` that uses `buffer`, a memref made from it (a
  /// view, cast or transpose), or a value computed from its address
  /// (memref.extract_aligned_pointer_as_index and whatever is computed from
  /// that: the pointers the CPU kernels pass to their C micro-kernels).
  static Operation *lastUse(Block &block, Value buffer,
                            memref::DeallocOp dealloc) {
    Operation *last = nullptr;
    if (Operation *def = buffer.getDefiningOp())
      if (def->getBlock() == &block)
        last = def;
    SmallVector<Value> worklist = {buffer};
    llvm::SmallPtrSet<Value, 8> seen;
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      if (!seen.insert(v).second)
        continue;
      for (Operation *user : v.getUsers()) {
        if (user == dealloc)
          continue;
        // A memref an op makes from this one may alias it (views, casts,
        // memref.transpose, which is not a ViewLikeOpInterface): its uses
        // are the buffer's. At worst a dealloc stays later than needed.
        for (Value r : user->getResults())
          if (isa<BaseMemRefType>(r.getType()))
            worklist.push_back(r);
        if (isa<memref::ExtractAlignedPointerAsIndexOp>(user) ||
            !isa<BaseMemRefType>(v.getType()))
          for (Value r : user->getResults())
            worklist.push_back(r);
        Operation *top = block.findAncestorOpInBlock(*user);
        if (!top)
          return nullptr; // used outside the block: leave it alone
        if (!last || last->isBeforeInBlock(top))
          last = top;
      }
    }
    return last;
  }

  static void hoist(Block &block, memref::DeallocOp dealloc) {
    Operation *last = lastUse(block, dealloc.getMemref(), dealloc);
    if (!last || !last->isBeforeInBlock(dealloc) ||
        last->hasTrait<OpTrait::IsTerminator>())
      return;
    dealloc->moveAfter(last);
  }
};

} // namespace
