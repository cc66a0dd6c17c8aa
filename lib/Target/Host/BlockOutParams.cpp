//===- BlockOutParams.cpp - The tfc-block-out-params pass -----------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// tfc-outline-blocks makes a model's layers functions on tensors, before
// bufferisation; bufferised with the function boundaries, a layer returns
// the buffers it made (the new hidden state) and those it wrote in place
// (a cache it appended to, the same buffer as an argument). Left so, the
// deallocation pipeline could tell neither kind from the caller's other
// buffers: it would clone each in-place result inside the function (a copy
// of the whole cache per layer and step) and, not knowing where a call's
// result comes from, keep every buffer of the entry to its end behind run
// time aliasing checks.
//
// Here, on the functions tfc-outline-blocks made (`tfc.block_function`),
// before deallocation:
//   * a result that is an argument (or a cast of one) is dropped, and the
//     call's operand used in its place;
//   * a result the function allocates (a `memref.alloc` whose sizes are
//     arguments) becomes an out-parameter that the caller allocates before
//     the call, with the call's operands as sizes and the same alignment.
// Every buffer of the caller is then one it allocated itself, which the
// deallocation pipeline frees statically after its last use, as it did when
// the layers were inline. A function whose results are neither is left as
// it is (correct, its results freed at the end of the caller).
//
//===----------------------------------------------------------------------===//

#include "tfc/Target/Host/Descriptors.h"
#include "tfc/Target/Host/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_BLOCKOUTPARAMS
#include "tfc/Target/Host/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

bool isBlockFunction(func::FuncOp f) {
  return !f.isDeclaration() && f->hasAttr(cpu::kBlockFunctionAttr) &&
         f.getBody().hasOneBlock();
}

/// The argument `v` is, through casts, or null.
BlockArgument argumentOf(Value v, func::FuncOp f) {
  while (auto cast = v.getDefiningOp<memref::CastOp>())
    v = cast.getSource();
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && arg.getOwner() == &f.front() ? arg : BlockArgument();
}

struct BlockOutParamsPass : tfc::impl::BlockOutParamsBase<BlockOutParamsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    llvm::DenseMap<Operation *, SmallVector<func::CallOp>> calls;
    auto collectCalls = [&] {
      calls.clear();
      module.walk([&](func::CallOp call) {
        if (auto f = symbols.lookup<func::FuncOp>(call.getCallee()))
          if (isBlockFunction(f))
            calls[f].push_back(call);
      });
    };
    collectCalls();
    for (auto f : module.getOps<func::FuncOp>())
      if (isBlockFunction(f))
        dropArgumentResults(f, calls[f]);
    // The calls again: those of functions with dropped results are new.
    collectCalls();
    for (auto f : module.getOps<func::FuncOp>())
      if (isBlockFunction(f) && resultsAreOwnAllocations(f))
        allocationsToOutParams(f, calls[f]);
  }

  /// Whether every memref result of `f` is a distinct `memref.alloc` of `f`
  /// whose dynamic sizes are arguments of `f` (what a caller can allocate
  /// before the call).
  static bool resultsAreOwnAllocations(func::FuncOp f) {
    auto ret = cast<func::ReturnOp>(f.front().getTerminator());
    llvm::SmallPtrSet<Operation *, 4> seen;
    for (Value v : ret.getOperands()) {
      if (!isa<BaseMemRefType>(v.getType()))
        continue;
      auto alloc = v.getDefiningOp<memref::AllocOp>();
      if (!alloc || alloc->getBlock() != &f.front() ||
          !seen.insert(alloc).second || !alloc.getSymbolOperands().empty())
        return false;
      for (Value size : alloc.getDynamicSizes()) {
        auto arg = dyn_cast<BlockArgument>(size);
        if (!arg || arg.getOwner() != &f.front())
          return false;
      }
    }
    return true;
  }

  /// Each memref result of `f` (a `memref.alloc` of `f`, sizes from its
  /// arguments: resultsAreOwnAllocations) becomes an argument appended to
  /// `f`'s, allocated by each call before it from the call's operands.
  static void allocationsToOutParams(func::FuncOp f,
                                     ArrayRef<func::CallOp> callsOfF) {
    auto ret = cast<func::ReturnOp>(f.front().getTerminator());
    SmallVector<memref::AllocOp> allocs;
    SmallVector<Value> keptValues;
    SmallVector<unsigned> keptIndices;
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      if (auto alloc = v.getDefiningOp<memref::AllocOp>()) {
        allocs.push_back(alloc);
      } else {
        keptValues.push_back(v);
        keptIndices.push_back(i);
      }
    }
    if (allocs.empty())
      return;
    // What each call allocates: the type, the argument numbers of the
    // sizes, the alignment.
    struct OutParam {
      MemRefType type;
      SmallVector<unsigned> sizeArgs;
      IntegerAttr alignment;
    };
    SmallVector<OutParam> params;
    for (memref::AllocOp alloc : allocs) {
      OutParam p{alloc.getType(), {}, alloc.getAlignmentAttr()};
      for (Value size : alloc.getDynamicSizes())
        p.sizeArgs.push_back(cast<BlockArgument>(size).getArgNumber());
      params.push_back(std::move(p));
    }
    llvm::BitVector erased(ret.getNumOperands(), true);
    for (unsigned i : keptIndices)
      erased.reset(i);
    OpBuilder b(ret);
    func::ReturnOp::create(b, ret.getLoc(), keptValues);
    ret->erase();
    (void)f.eraseResults(erased);
    for (auto [alloc, p] : llvm::zip(allocs, params)) {
      (void)f.insertArgument(f.getNumArguments(), p.type, DictionaryAttr(),
                             alloc.getLoc());
      alloc.getResult().replaceAllUsesWith(f.getArguments().back());
      alloc->erase();
    }
    SmallVector<Type> resultTypes(f.getResultTypes());

    for (func::CallOp call : callsOfF) {
      OpBuilder cb(call);
      SmallVector<Value> operands(call.getOperands());
      SmallVector<Value> outs;
      for (const OutParam &p : params) {
        SmallVector<Value> sizes;
        for (unsigned n : p.sizeArgs)
          sizes.push_back(operands[n]);
        auto alloc = memref::AllocOp::create(cb, call.getLoc(), p.type, sizes,
                                             p.alignment);
        outs.push_back(alloc);
      }
      SmallVector<Value> all(operands);
      all.append(outs.begin(), outs.end());
      auto replacement = func::CallOp::create(cb, call.getLoc(), f.getSymName(),
                                              resultTypes, all);
      replacement->setAttrs(call->getAttrs());
      unsigned kept = 0, out = 0;
      for (auto [i, r] : llvm::enumerate(call.getResults())) {
        if (kept < keptIndices.size() && keptIndices[kept] == i)
          r.replaceAllUsesWith(replacement.getResult(kept++));
        else
          r.replaceAllUsesWith(outs[out++]);
      }
      call->erase();
    }
  }

  /// Drops the results of `f` that are its arguments; each call reads its
  /// operand (cast to the result's type) instead.
  static void dropArgumentResults(func::FuncOp f,
                                  ArrayRef<func::CallOp> callsOfF) {
    auto ret = cast<func::ReturnOp>(f.front().getTerminator());
    llvm::BitVector drop(ret.getNumOperands());
    SmallVector<int64_t> argOf(ret.getNumOperands(), -1);
    for (auto [i, v] : llvm::enumerate(ret.getOperands()))
      if (BlockArgument arg = argumentOf(v, f)) {
        drop.set(i);
        argOf[i] = arg.getArgNumber();
      }
    if (drop.none())
      return;
    for (func::CallOp call : callsOfF) {
      OpBuilder b(call);
      SmallVector<Type> kept;
      SmallVector<Value> operands(call.getOperands());
      for (auto [i, r] : llvm::enumerate(call.getResults()))
        if (!drop.test(i))
          kept.push_back(r.getType());
      b.setInsertionPointAfter(call);
      auto replacement = func::CallOp::create(b, call.getLoc(), f.getSymName(),
                                              kept, operands);
      replacement->setAttrs(call->getAttrs());
      unsigned next = 0;
      for (auto [i, r] : llvm::enumerate(call.getResults())) {
        if (!drop.test(i)) {
          r.replaceAllUsesWith(replacement.getResult(next++));
          continue;
        }
        Value operand = operands[argOf[i]];
        if (operand.getType() != r.getType())
          operand =
              memref::CastOp::create(b, call.getLoc(), r.getType(), operand);
        r.replaceAllUsesWith(operand);
      }
      call->erase();
    }
    SmallVector<Value> keptValues;
    for (auto [i, v] : llvm::enumerate(ret.getOperands()))
      if (!drop.test(i))
        keptValues.push_back(v);
    OpBuilder b(ret);
    func::ReturnOp::create(b, ret.getLoc(), keptValues);
    ret->erase();
    (void)f.eraseResults(drop);
  }
};

} // namespace
