//===- OutlineBlocks.cpp - The tfc-outline-blocks pass --------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The frontend inlines every block call, so that fusion sees whole graphs,
// and brackets each call's ops with tfc.block_begin/tfc.block_end. Here, on
// tensors (fused, the CPU kernels chosen, what depends on weights alone
// hoisted out of the calls by tfc-hoist-block-invariants), the calls that
// compute the same thing become calls of one function: a model's layers
// differ only in the values they read (their weights, the hidden state,
// their caches), so 30 layers are bufferised, lowered, optimised and
// compiled as one, and no pass after this one grows with depth.
//
// A call's candidate function is made by cloning its ops: the values they
// read from before the call are its arguments, in the order of first use
// (constants are defined again inside: kernels want them constant), and the
// values read after the call its results, in program order. Two calls are
// of a kind when their candidates have the same type and the same body up
// to locations (OperationEquivalence). The outermost calls are decided
// first: each kind of two or more calls becomes a function, made from its
// first call's candidate, and each call is replaced by a func.call; a call
// that is the only one of its kind stays inline and its inner calls are
// decided next. The order of the operations the model executes does not
// change: a call runs the ops that were between its markers, where they
// were.
//
// Bufferisation then crosses the calls (function boundaries bufferised);
// tfc-block-out-params makes a layer's results buffers its caller
// allocates (or, for a cache written in place, the caller's own), so that
// the deallocation pipeline frees every buffer of an entry statically, as
// when the layers were inline. The pass also runs on buffers (tfc-opt
// tests): sizes and views that CSE shared between calls are made again in
// each (rematerialize) either way. An allocation that fails inside a
// function is reported to its caller by tfc-check-allocations.
//
//===----------------------------------------------------------------------===//

#include "tfc/Target/Host/Descriptors.h"

#include "tfc/Dialect/Tfc/IR/TfcOps.h"
#include "tfc/Target/Host/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/SetVector.h"

#include <functional>
#include <memory>

namespace mlir::tfc {
#define GEN_PASS_DEF_OUTLINEBLOCKS
#include "tfc/Target/Host/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// One call of a block: the ops between its markers.
struct Call {
  BlockBeginOp begin;
  BlockEndOp end;
  std::vector<std::unique_ptr<Call>> inner;
  /// What the ops read from before the call, and what the rest reads.
  SmallVector<Value> inputs, outputs;
  /// The candidate function (not in the module until it is chosen).
  func::FuncOp candidate;
  llvm::hash_code hash;

  bool contains(Operation *top) const {
    return begin->isBeforeInBlock(top) && top->isBeforeInBlock(end);
  }
};

struct OutlineBlocksPass : tfc::impl::OutlineBlocksBase<OutlineBlocksPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> markers;
    module.walk([&](Operation *op) {
      if (isa<BlockBeginOp, BlockEndOp>(op))
        markers.push_back(op);
    });
    if (markers.empty())
      return;
    if (!inlineOnly) {
      std::vector<std::unique_ptr<Call>> calls;
      for (auto f : module.getOps<func::FuncOp>())
        if (!f.isDeclaration() && f.getBody().hasOneBlock())
          if (failed(parseCalls(f.front(), calls)))
            return signalPassFailure();
      for (auto &c : calls)
        rematerialize(*c);
      outline(module, calls);
    }
    // Whatever was not outlined stays inline: its markers go (those of
    // outlined calls went with their ops or were never cloned).
    module.walk([&](Operation *op) {
      if (isa<BlockBeginOp, BlockEndOp>(op))
        op->erase();
    });
  }

  /// The calls of `block` as a tree of nested marker pairs.
  static LogicalResult parseCalls(Block &block,
                                  std::vector<std::unique_ptr<Call>> &roots) {
    SmallVector<Call *> open;
    std::vector<std::unique_ptr<Call>> top;
    for (Operation &op : block) {
      if (auto begin = dyn_cast<BlockBeginOp>(op)) {
        auto call = std::make_unique<Call>();
        call->begin = begin;
        Call *raw = call.get();
        (open.empty() ? top : open.back()->inner).push_back(std::move(call));
        open.push_back(raw);
      } else if (auto end = dyn_cast<BlockEndOp>(op)) {
        if (open.empty())
          return end.emitError("tfc.block_end \"")
                 << end.getBlockName() << "\" without its tfc.block_begin";
        if (open.back()->begin.getBlockName() != end.getBlockName())
          return end.emitError("tfc.block_end \"")
                 << end.getBlockName() << "\" closes tfc.block_begin \""
                 << open.back()->begin.getBlockName() << "\"";
        open.back()->end = end;
        open.pop_back();
      }
    }
    if (!open.empty())
      return open.back()->begin.emitError("tfc.block_begin \"")
             << open.back()->begin.getBlockName()
             << "\" without its tfc.block_end";
    for (auto &c : top)
      roots.push_back(std::move(c));
    return success();
  }

  /// A pure op without regions that computes sizes (integers, indices) or
  /// a view of a buffer: no arithmetic on the model's values.
  static bool isCheap(Operation *op) {
    return op->getNumRegions() == 0 && isPure(op) &&
           llvm::all_of(op->getResultTypes(), [](Type t) {
             return t.isIntOrIndex() || isa<BaseMemRefType>(t);
           });
  }

  /// A value of `call` that is read after it, computed from values from
  /// before it by ops that are pure and cheap (views of a state, sizes and
  /// strides: what CSE shares between calls that compute it alike) is
  /// computed again where it is read, so that the first call does not have
  /// it as an extra result. Inner calls first.
  static void rematerialize(Call &call) {
    for (auto &inner : call.inner)
      rematerialize(*inner);
    Block *block = call.begin->getBlock();
    SmallVector<Operation *> ops;
    for (Operation *op = call.begin->getNextNode(); op != call.end;
         op = op->getNextNode())
      ops.push_back(op);
    // Whether `v` can be computed anywhere after the call from values from
    // before it (memoised: index arithmetic reuses values).
    std::function<bool(Value)> computeCheap;
    llvm::DenseMap<Value, bool> known;
    std::function<bool(Value)> cheap = [&](Value v) -> bool {
      auto it = known.find(v);
      if (it != known.end())
        return it->second;
      bool result = computeCheap(v);
      known[v] = result;
      return result;
    };
    computeCheap = [&](Value v) -> bool {
      Operation *def = v.getDefiningOp();
      if (!def) {
        Operation *parent = cast<BlockArgument>(v).getOwner()->getParentOp();
        Operation *top = block->findAncestorOpInBlock(*parent);
        return !top || !call.contains(top);
      }
      Operation *top = block->findAncestorOpInBlock(*def);
      if (!top || !call.contains(top))
        return true;
      return def == top && isCheap(def) &&
             llvm::all_of(def->getOperands(), cheap);
    };
    for (Operation *op : ops) {
      if (!isCheap(op))
        continue;
      for (OpOperand &use : llvm::make_early_inc_range(op->getUses())) {
        Operation *top = block->findAncestorOpInBlock(*use.getOwner());
        if (!top || call.contains(top) ||
            !llvm::all_of(op->getOperands(), cheap))
          continue;
        OpBuilder b(top);
        IRMapping mapping;
        std::function<Value(Value)> clone = [&](Value v) -> Value {
          if (Value done = mapping.lookupOrNull(v))
            return done;
          Operation *def = v.getDefiningOp();
          Operation *vtop = def ? block->findAncestorOpInBlock(*def) : nullptr;
          if (!vtop || !call.contains(vtop))
            return v;
          for (Value operand : def->getOperands())
            mapping.map(operand, clone(operand));
          Operation *copy = b.clone(*def, mapping);
          return copy->getResult(cast<OpResult>(v).getResultNumber());
        };
        use.set(clone(use.get()));
      }
    }
    // What only the calls after this one read is gone from it.
    for (Operation *op : llvm::reverse(ops))
      if (isOpTriviallyDead(op))
        op->erase();
  }

  /// Builds `call`'s candidate function (see the file comment).
  static void makeCandidate(Call &call, MLIRContext *ctx) {
    Block *block = call.begin->getBlock();
    llvm::SetVector<Value> inputs;
    llvm::SetVector<Operation *> constants;
    SmallVector<Operation *> ops;
    for (Operation *op = call.begin->getNextNode(); op != call.end;
         op = op->getNextNode())
      if (!isa<BlockBeginOp, BlockEndOp>(op))
        ops.push_back(op);
    auto inside = [&](Value v) {
      Operation *def = v.getDefiningOp();
      if (!def)
        def = cast<BlockArgument>(v).getOwner()->getParentOp();
      Operation *top = block->findAncestorOpInBlock(*def);
      return top && call.contains(top);
    };
    for (Operation *op : ops)
      op->walk([&](Operation *nested) {
        for (Value v : nested->getOperands()) {
          if (inside(v))
            continue;
          Operation *def = v.getDefiningOp();
          if (def && def->hasTrait<OpTrait::ConstantLike>() &&
              def->getNumOperands() == 0 && def->getNumRegions() == 0)
            constants.insert(def);
          else
            inputs.insert(v);
        }
      });
    SmallVector<Value> outputs;
    for (Operation *op : ops)
      for (Value r : op->getResults())
        if (llvm::any_of(r.getUsers(), [&](Operation *user) {
              Operation *top = block->findAncestorOpInBlock(*user);
              return !top || !call.contains(top);
            }))
          outputs.push_back(r);

    OpBuilder b(ctx);
    auto type = b.getFunctionType(ValueRange(inputs.getArrayRef()).getTypes(),
                                  ValueRange(outputs).getTypes());
    auto fn = func::FuncOp::create(call.begin.getLoc(), "__tfc_block", type);
    Block *body = fn.addEntryBlock();
    b.setInsertionPointToStart(body);
    IRMapping mapping;
    for (auto [v, arg] : llvm::zip(inputs, body->getArguments()))
      mapping.map(v, arg);
    for (Operation *c : constants)
      b.clone(*c, mapping);
    for (Operation *op : ops)
      b.clone(*op, mapping);
    SmallVector<Value> results;
    for (Value v : outputs)
      results.push_back(mapping.lookup(v));
    func::ReturnOp::create(b, call.end.getLoc(), results);
    // Inner calls' markers are not cloned (`ops` skips them): the function
    // holds the computation only.
    call.inputs.assign(inputs.begin(), inputs.end());
    call.outputs = std::move(outputs);
    call.candidate = fn;
    llvm::hash_code hash = llvm::hash_value(type.getAsOpaquePointer());
    fn.getBody().walk([&](Operation *op) {
      hash = llvm::hash_combine(hash,
                                OperationEquivalence::computeHash(
                                    op, OperationEquivalence::ignoreHashValue,
                                    OperationEquivalence::ignoreHashValue,
                                    OperationEquivalence::IgnoreLocations));
    });
    call.hash = hash;
  }

  static bool sameKind(Call &a, Call &b) {
    if (a.hash != b.hash ||
        a.candidate.getFunctionType() != b.candidate.getFunctionType())
      return false;
    return OperationEquivalence::isRegionEquivalentTo(
        &a.candidate.getBody(), &b.candidate.getBody(),
        OperationEquivalence::IgnoreLocations);
  }

  void outline(ModuleOp module, std::vector<std::unique_ptr<Call>> &roots) {
    MLIRContext *ctx = module.getContext();
    SymbolTable symbols(module);
    // The calls still to decide, outermost first.
    SmallVector<Call *> frontier;
    for (auto &c : roots)
      frontier.push_back(c.get());
    SmallVector<func::FuncOp> discarded;
    while (!frontier.empty()) {
      replaced.clear();
      for (Call *c : frontier)
        makeCandidate(*c, ctx);
      // Kinds, in order of their first call.
      SmallVector<SmallVector<Call *>> kinds;
      for (Call *c : frontier) {
        auto it = llvm::find_if(kinds, [&](const SmallVector<Call *> &k) {
          return sameKind(*k.front(), *c);
        });
        if (it == kinds.end())
          kinds.push_back({c});
        else
          it->push_back(c);
      }
      SmallVector<Call *> next;
      for (SmallVector<Call *> &kind : kinds) {
        // A call alone of its kind, or one with nothing left to compute
        // (everything hoisted or shared), stays inline.
        if (kind.size() < 2 ||
            kind.front()->candidate.front().getOperations().size() <= 1) {
          for (auto &inner : kind.front()->inner)
            next.push_back(inner.get());
          for (Call *c : kind)
            discarded.push_back(c->candidate);
          continue;
        }
        func::FuncOp fn = kind.front()->candidate;
        std::string name =
            (cpu::kBlockFunctionPrefix + kind.front()->begin.getBlockName())
                .str();
        fn.setName(name);
        fn.setPrivate();
        // Internal and never inlined: one copy of the layer is the point.
        fn->setAttr("llvm.linkage",
                    LLVM::LinkageAttr::get(ctx, LLVM::Linkage::Internal));
        fn->setAttr("passthrough",
                    OpBuilder(ctx).getArrayAttr(
                        {OpBuilder(ctx).getStringAttr("noinline")}));
        // What tfc-check-allocations recognises (the name alone would also
        // match the parallel tasks outlined from it, `<name>__parN`).
        fn->setAttr(cpu::kBlockFunctionAttr, UnitAttr::get(ctx));
        symbols.insert(fn); // renames it on a clash
        for (Call *c : kind) {
          if (c != kind.front())
            discarded.push_back(c->candidate);
          replaceWithCall(*c, fn);
        }
      }
      frontier = std::move(next);
    }
    for (func::FuncOp fn : discarded)
      fn->destroy();
  }

  /// Outputs of calls replaced so far, by the results that replaced them
  /// (a later call's inputs were computed before the earlier one was
  /// replaced).
  llvm::DenseMap<Value, Value> replaced;

  void replaceWithCall(Call &call, func::FuncOp fn) {
    OpBuilder b(call.begin);
    SmallVector<Value> inputs;
    for (Value v : call.inputs)
      inputs.push_back(replaced.lookup(v) ? replaced.lookup(v) : v);
    auto callOp = func::CallOp::create(b, call.begin.getLoc(), fn, inputs);
    for (auto [v, r] : llvm::zip(call.outputs, callOp.getResults())) {
      v.replaceAllUsesWith(r);
      replaced[v] = r;
    }
    // The ops, inner markers included, last first: each one's users are gone
    // before it is.
    SmallVector<Operation *> ops;
    for (Operation *op = call.begin->getNextNode(); op != call.end;
         op = op->getNextNode())
      ops.push_back(op);
    for (Operation *op : llvm::reverse(ops)) {
      op->dropAllUses();
      op->erase();
    }
    call.begin->erase();
    call.end->erase();
  }
};

} // namespace
