//===- EarlyDealloc.cpp - The tfc-early-dealloc pass ----------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Target/Host/Descriptors.h"
#include "tfc/Target/Host/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

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
    consumeArguments(getOperation());
  }

  /// A layer function (tfc-outline-blocks) reads the hidden state its
  /// caller allocated, and the caller frees it right after the call: the
  /// buffer then lives through the whole layer although the layer is done
  /// with it early (after its residual add). When every call of the
  /// function frees its operand k right after it, the function frees its
  /// argument k itself, after its last use there, and the callers do not:
  /// the layer's peak no longer holds its input as well as its output.
  static void consumeArguments(ModuleOp module) {
    SymbolTable symbols(module);
    llvm::DenseMap<Operation *, SmallVector<func::CallOp>> calls;
    module.walk([&](func::CallOp call) {
      if (auto f = symbols.lookup<func::FuncOp>(call.getCallee()))
        calls[f].push_back(call);
    });
    for (auto f : module.getOps<func::FuncOp>()) {
      if (f.isDeclaration() || !f->hasAttr(tfc::cpu::kBlockFunctionAttr) ||
          !f.getBody().hasOneBlock())
        continue;
      SmallVector<func::CallOp> sites = calls.lookup(f);
      if (sites.empty())
        continue;
      Block &body = f.front();
      for (BlockArgument arg : body.getArguments()) {
        if (!isa<MemRefType>(arg.getType()) ||
            llvm::any_of(arg.getUsers(), [](Operation *user) {
              return isa<CallOpInterface, memref::DeallocOp>(user);
            }))
          continue;
        SmallVector<memref::DeallocOp> freed;
        for (func::CallOp call : sites) {
          memref::DeallocOp d = freedRightAfter(call, arg.getArgNumber());
          if (!d)
            break;
          freed.push_back(d);
        }
        if (freed.size() != sites.size())
          continue;
        for (memref::DeallocOp d : freed)
          d->erase();
        OpBuilder b(body.getTerminator());
        auto own = memref::DeallocOp::create(b, f.getLoc(), arg);
        hoist(body, own);
      }
    }
  }

  /// The dealloc of `call`'s operand `index` among the deallocs right after
  /// it, when that operand is a buffer of the caller that the call reads
  /// once (not also as another operand); else null.
  static memref::DeallocOp freedRightAfter(func::CallOp call, unsigned index) {
    Value v = call.getOperand(index);
    if (!v.getDefiningOp<memref::AllocOp>() ||
        llvm::count(call.getOperands(), v) != 1)
      return nullptr;
    for (Operation *op = call->getNextNode(); op; op = op->getNextNode()) {
      auto d = dyn_cast<memref::DeallocOp>(op);
      if (!d)
        return nullptr;
      if (d.getMemref() == v)
        return d;
    }
    return nullptr;
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
