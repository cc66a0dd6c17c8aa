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
// A function of a model's layers (tfc-outline-blocks, `__tfc_block_*`,
// attribute `tfc.block_function`) is called directly: it gets a pointer to an
// i32 of its caller's frame as a last parameter, set by its `fail` like a
// task's flag, and its caller checks the flag after each call the same way. So
// a failed allocation anywhere ends the entry without touching the memory it
// did not get, and without computing on the results of a task or a layer that
// stopped early. Memory allocated before the failure is the runtime's to
// release (its planner tracks every allocation of a run).
//
//===----------------------------------------------------------------------===//

#include "tfc/Target/Host/Descriptors.h"

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
    reportFromBlockFunctions(module);
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

  /// Whether `fn` calls the allocation functions or checks a flag.
  static bool allocates(LLVM::LLVMFuncOp fn) {
    return fn
        .walk([](LLVM::CallOp call) {
          std::optional<StringRef> callee = call.getCallee();
          return callee && (*callee == kAllocFunction ||
                            *callee == kAlignedAllocFunction ||
                            *callee == kFailIfMarker)
                     ? WalkResult::interrupt()
                     : WalkResult::advance();
        })
        .wasInterrupted();
  }

  /// Gives each block function that may fail (it allocates, or calls one
  /// that may) a flag parameter and its `__tfc_failure_flag` marker, and
  /// each of its calls a flag in the caller's frame, checked after the call
  /// by a `__tfc_fail_if` marker. check() then does the rest.
  void reportFromBlockFunctions(ModuleOp module) {
    llvm::SmallSetVector<LLVM::LLVMFuncOp, 8> failing;
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>())
      if (!fn.isExternal() && fn->hasAttr(kBlockFunctionAttr) && allocates(fn))
        failing.insert(fn);
    // Block functions that call failing ones fail too (nested calls).
    for (bool changed = true; changed;) {
      changed = false;
      for (auto fn : module.getOps<LLVM::LLVMFuncOp>()) {
        if (fn.isExternal() || failing.contains(fn) ||
            !fn->hasAttr(kBlockFunctionAttr))
          continue;
        bool calls =
            fn.walk([&](LLVM::CallOp call) {
                std::optional<StringRef> callee = call.getCallee();
                auto target =
                    callee ? module.lookupSymbol<LLVM::LLVMFuncOp>(*callee)
                           : LLVM::LLVMFuncOp();
                return target && failing.contains(target)
                           ? WalkResult::interrupt()
                           : WalkResult::advance();
              }).wasInterrupted();
        if (calls) {
          failing.insert(fn);
          changed = true;
        }
      }
    }
    if (failing.empty())
      return;
    MLIRContext *ctx = module.getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i32 = IntegerType::get(ctx, 32);
    OpBuilder mb(ctx);
    mb.setInsertionPointToEnd(module.getBody());
    for (LLVM::LLVMFuncOp fn : failing) {
      LLVM::LLVMFunctionType type = fn.getFunctionType();
      SmallVector<Type> params(type.getParams());
      params.push_back(ptr);
      fn.setFunctionType(LLVM::LLVMFunctionType::get(type.getReturnType(),
                                                     params, type.isVarArg()));
      Value flag = fn.front().addArgument(ptr, fn.getLoc());
      OpBuilder b = OpBuilder::atBlockBegin(&fn.front());
      LLVM::CallOp::create(b, fn.getLoc(),
                           getOrCreateMarker(mb, module, kFailureFlagMarker),
                           ValueRange{flag});
    }
    // The calls: one flag per calling function, cleared on entry.
    llvm::DenseMap<Operation *, Value> flags;
    SmallVector<LLVM::CallOp> calls;
    module.walk([&](LLVM::CallOp call) {
      std::optional<StringRef> callee = call.getCallee();
      if (!callee)
        return;
      auto target = module.lookupSymbol<LLVM::LLVMFuncOp>(*callee);
      if (target && failing.contains(target))
        calls.push_back(call);
    });
    for (LLVM::CallOp call : calls) {
      auto caller = call->getParentOfType<LLVM::LLVMFuncOp>();
      Location loc = call.getLoc();
      Value &flag = flags[caller];
      if (!flag) {
        OpBuilder b = OpBuilder::atBlockBegin(&caller.front());
        Value one = LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                             b.getI64IntegerAttr(1));
        flag = LLVM::AllocaOp::create(b, loc, ptr, i32, one, /*alignment=*/4);
        LLVM::StoreOp::create(
            b, loc,
            LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(0)),
            flag);
      }
      SmallVector<Value> operands(call.getArgOperands());
      operands.push_back(flag);
      OpBuilder b(call);
      auto target = module.lookupSymbol<LLVM::LLVMFuncOp>(*call.getCallee());
      auto flagged = LLVM::CallOp::create(b, loc, target, operands);
      call.replaceAllUsesWith(flagged.getResults());
      call.erase();
      b.setInsertionPointAfter(flagged);
      Value set = LLVM::LoadOp::create(b, loc, i32, flag);
      Value failed = LLVM::ICmpOp::create(
          b, loc, LLVM::ICmpPredicate::ne, set,
          LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(0)));
      LLVM::CallOp::create(b, loc, getOrCreateMarker(mb, module, kFailIfMarker),
                           ValueRange{failed});
    }
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
