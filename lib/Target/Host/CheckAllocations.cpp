//===- CheckAllocations.cpp - The tfc-check-allocations pass --------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Out of memory in a model library: the runtime's alloc hook returns null
// (ModelABI.h), and the model must not write through it. After the LLVM
// lowering, every call of the memref lowering's allocation functions is
// followed by
//
//   if (p == null && size != 0) goto fail;
//
// and `fail` returns from the function at once (a poison result where the
// function has one: the entry's outputs are then undefined, and the runtime,
// which saw its hook fail, reports TFC_ERR_OUT_OF_MEMORY and ignores them).
// A parallel task cannot return to its caller's caller: its `fail` first
// sets an i32 of the caller's frame (the operand of the `__tfc_failure_flag`
// marker that tfc-outline-parallel-loops puts in tasks that allocate: its
// context points to it), and the caller checks it after the parallel_for
// through an `__tfc_fail_if` marker, which becomes a branch to the caller's
// own `fail`.
// So a failed allocation anywhere ends the entry without touching the
// memory it did not get, and without computing on the results of a task
// that stopped early. Memory allocated before the failure is the runtime's
// to release (its planner tracks every allocation of a run).
//
//===----------------------------------------------------------------------===//

#include "Descriptors.h"

#include "tfc/Target/Host/Passes.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_CHECKALLOCATIONS
#include "tfc/Target/Host/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::cpu;

namespace {

struct CheckAllocationsPass
    : tfc::impl::CheckAllocationsBase<CheckAllocationsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>())
      if (!fn.isExternal() && fn.getName() != kAllocFunction &&
          fn.getName() != kAlignedAllocFunction)
        if (failed(check(fn)))
          return signalPassFailure();
    // The markers are gone; so are their declarations.
    for (StringRef marker : {kFailIfMarker, kFailureFlagMarker})
      if (auto decl = module.lookupSymbol<LLVM::LLVMFuncOp>(marker))
        decl.erase();
  }

  LogicalResult check(LLVM::LLVMFuncOp fn) {
    SmallVector<LLVM::CallOp> allocs, failIfs, flags;
    fn.walk([&](LLVM::CallOp call) {
      std::optional<StringRef> callee = call.getCallee();
      if (!callee)
        return;
      if (*callee == kAllocFunction || *callee == kAlignedAllocFunction)
        allocs.push_back(call);
      else if (*callee == kFailIfMarker)
        failIfs.push_back(call);
      else if (*callee == kFailureFlagMarker)
        flags.push_back(call);
    });
    if (flags.size() > 1)
      return fn.emitError("more than one ") << kFailureFlagMarker;
    Value flag;
    if (!flags.empty()) {
      flag = flags.front().getArgOperands()[0];
      if (flags.front()->getBlock() != &fn.getBody().front())
        return fn.emitError()
               << kFailureFlagMarker << " must be in the entry block";
      flags.front().erase();
    }
    if (allocs.empty() && failIfs.empty())
      return success();

    Block *fail = failBlock(fn, flag);
    MLIRContext *ctx = fn.getContext();
    auto i64 = IntegerType::get(ctx, 64);
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    for (LLVM::CallOp call : allocs) {
      Location loc = call.getLoc();
      OpBuilder b(call);
      b.setInsertionPointAfter(call);
      // (size) or (alignment, size).
      Value size = call.getArgOperands().back();
      Value isNull = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq,
                                          call.getResult(),
                                          LLVM::ZeroOp::create(b, loc, ptr));
      Value nonEmpty = LLVM::ICmpOp::create(
          b, loc, LLVM::ICmpPredicate::ne, size,
          LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(0)));
      Value failed = LLVM::AndOp::create(b, loc, isNull, nonEmpty);
      branchAfter(failed.getDefiningOp(), failed, fail);
    }
    for (LLVM::CallOp call : failIfs) {
      Value failed = call.getArgOperands()[0];
      Operation *before = call->getPrevNode();
      Block *block = call->getBlock();
      call.erase();
      if (before)
        branchAfter(before, failed, fail);
      else
        branchAtStart(block, failed, fail);
    }
    return success();
  }

  /// The block every failure branches to.
  Block *failBlock(LLVM::LLVMFuncOp fn, Value flag) {
    Location loc = fn.getLoc();
    Block *fail = new Block();
    fn.getBody().push_back(fail);
    OpBuilder b = OpBuilder::atBlockEnd(fail);
    if (flag) {
      // Chunks of the task may fail concurrently.
      Value one = LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                           b.getI32IntegerAttr(1));
      LLVM::StoreOp::create(b, loc, one, flag, /*alignment=*/4,
                            /*isVolatile=*/false, /*isNonTemporal=*/false,
                            /*isInvariantGroup=*/false,
                            LLVM::AtomicOrdering::monotonic);
    }
    Type result = fn.getFunctionType().getReturnType();
    if (isa<LLVM::LLVMVoidType>(result))
      LLVM::ReturnOp::create(b, loc, ValueRange{});
    else
      LLVM::ReturnOp::create(
          b, loc, LLVM::PoisonOp::create(b, loc, result).getResult());
    return fail;
  }

  /// Ends the block of `op` after it with `if (failed) goto fail`; the rest
  /// of the block continues in a new one.
  void branchAfter(Operation *op, Value failed, Block *fail) {
    Block *block = op->getBlock();
    Block *rest = block->splitBlock(op->getNextNode());
    OpBuilder b = OpBuilder::atBlockEnd(block);
    condBranch(b, op->getLoc(), failed, fail, rest);
  }

  void branchAtStart(Block *block, Value failed, Block *fail) {
    Block *rest = block->splitBlock(block->begin());
    OpBuilder b = OpBuilder::atBlockEnd(block);
    condBranch(b, failed.getLoc(), failed, fail, rest);
  }

  void condBranch(OpBuilder &b, Location loc, Value failed, Block *fail,
                  Block *rest) {
    // Failure is rare: weights keep the fast path straight.
    LLVM::CondBrOp::create(b, loc, failed, fail, ValueRange{}, rest,
                           ValueRange{},
                           std::make_pair(uint32_t(1), uint32_t(1u << 20)));
  }
};

} // namespace
