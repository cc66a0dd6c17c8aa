//===- OutlineParallelLoops.cpp - scf.parallel on the runtime's threads ---===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// An outermost scf.parallel with iteration space n_0 x ... x n_k becomes
//
//   ctx = {captured values}                       (a struct on the stack)
//   if (hooks) hooks->parallel_for(N, @body, &ctx) else @body(&ctx, 0, N)
//
// where N = n_0 · ... · n_k and @body(ctx, begin, end) is an internal
// llvm.func that reloads the captured values and runs the linearised
// iterations [begin, end) of the original body serially, each iteration
// between llvm.intr.stacksave and stackrestore: scf.parallel's body is an
// automatic allocation scope (stack memory of one iteration is released at
// its end, and the kernels' scratch allocas rely on it), an scf.for's is
// not, so without them a task running many iterations grows the stack by
// its scratch each iteration and overflows it on long sequences. (A
// memref.alloca_scope would say the same, but the canonicalizer hoists or
// inlines scopes whose allocas do not depend on the iteration.) Captured
// memrefs
// travel as their LLVM descriptors and indices as i64; the casts between
// the two forms are unrealized_conversion_casts that the LLVM lowering
// folds away. The body keeps its memref/scf/vector ops: the later
// conversions lower them inside the llvm.func like anywhere else.
//
//===----------------------------------------------------------------------===//

#include "tfc/Target/Host/Descriptors.h"

#include "tfc/Target/Host/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

#include <unordered_map>

#include <algorithm>

namespace mlir::tfc {
#define GEN_PASS_DEF_OUTLINEPARALLELLOOPS
#include "tfc/Target/Host/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::cpu;

namespace {

/// The work (elements x ops of the loop body per element, opCost) below which a
/// flat loop nest runs on the calling thread instead of the pool. A
/// parallel region on 2 threads (publishing the job, the other thread's
/// wake-up and the join) costs about the time of a few thousand elements of
/// elementwise code (figures: commit 6759fab); decoding runs hundreds of
/// such regions per token over one row (a residual add of 576 elements,
/// RoPE of 9 heads).
constexpr int64_t kSerialWork = 1 << 15;

/// The LLVM type a captured value travels as, or null if unsupported.
Type transportType(Type t) {
  MLIRContext *ctx = t.getContext();
  if (auto m = dyn_cast<MemRefType>(t))
    return descriptorType(ctx, m.getRank());
  if (t.isIndex())
    return IntegerType::get(ctx, 64);
  if (isa<IntegerType, FloatType, LLVM::LLVMPointerType>(t))
    return t;
  if (auto v = dyn_cast<VectorType>(t); v && v.getRank() == 1)
    return t;
  return {};
}

Value toTransport(OpBuilder &b, Location loc, Value v, Type transport) {
  if (v.getType() == transport)
    return v;
  if (v.getType().isIndex())
    return arith::IndexCastOp::create(b, loc, transport, v);
  return UnrealizedConversionCastOp::create(b, loc, transport, v).getResult(0);
}

Value fromTransport(OpBuilder &b, Location loc, Value v, Type original) {
  if (v.getType() == original)
    return v;
  if (original.isIndex())
    return arith::IndexCastOp::create(b, loc, original, v);
  return UnrealizedConversionCastOp::create(b, loc, original, v).getResult(0);
}

struct OutlineParallelLoopsPass
    : tfc::impl::OutlineParallelLoopsBase<OutlineParallelLoopsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    tasks.clear();
    SmallVector<scf::ParallelOp> loops;
    module.walk([&](scf::ParallelOp loop) {
      if (!loop->getParentOfType<scf::ParallelOp>() &&
          loop.getNumResults() == 0)
        loops.push_back(loop);
    });
    unsigned counter = 0;
    for (scf::ParallelOp loop : loops) {
      FlatNest flat = serializeInnermostDim(loop);
      if (failed(outline(module, flat, counter++)))
        return signalPassFailure();
    }
    mergeIdenticalTasks(module);
  }

  /// The task functions made so far, in order.
  SmallVector<LLVM::LLVMFuncOp> tasks;

  /// Tasks that came out the same (the packing of each layer's weights in
  /// the model's init, one per layer and weight; a loop repeated in an
  /// entry) are kept once, the first: every reference to another goes to
  /// it. The passes after this one, LLVM's optimiser and its code
  /// generation then see each once (SmolLM2's 225 functions were 56
  /// distinct ones, 17 % of the LLVM IR repeated).
  void mergeIdenticalTasks(ModuleOp module) {
    auto hashOf = [](LLVM::LLVMFuncOp fn) {
      llvm::hash_code hash =
          llvm::hash_value(fn.getFunctionType().getAsOpaquePointer());
      fn.getBody().walk([&](Operation *op) {
        hash = llvm::hash_combine(hash,
                                  OperationEquivalence::computeHash(
                                      op, OperationEquivalence::ignoreHashValue,
                                      OperationEquivalence::ignoreHashValue,
                                      OperationEquivalence::IgnoreLocations));
      });
      return static_cast<size_t>(hash);
    };
    auto sameAttributes = [](LLVM::LLVMFuncOp a, LLVM::LLVMFuncOp b) {
      NamedAttrList x(a->getAttrDictionary()), y(b->getAttrDictionary());
      x.erase(a.getSymNameAttrName());
      y.erase(b.getSymNameAttrName());
      return x.getDictionary(a.getContext()) == y.getDictionary(b.getContext());
    };
    std::unordered_map<size_t, SmallVector<LLVM::LLVMFuncOp>> kept;
    llvm::StringMap<FlatSymbolRefAttr> replacement;
    SmallVector<LLVM::LLVMFuncOp> duplicates;
    for (LLVM::LLVMFuncOp fn : tasks) {
      SmallVector<LLVM::LLVMFuncOp> &same = kept[hashOf(fn)];
      auto first = llvm::find_if(same, [&](LLVM::LLVMFuncOp other) {
        return sameAttributes(fn, other) &&
               OperationEquivalence::isRegionEquivalentTo(
                   &fn.getBody(), &other.getBody(),
                   OperationEquivalence::IgnoreLocations);
      });
      if (first == same.end()) {
        same.push_back(fn);
        continue;
      }
      replacement[fn.getName()] = FlatSymbolRefAttr::get(*first);
      duplicates.push_back(fn);
    }
    tasks.clear();
    if (duplicates.empty())
      return;
    // One walk: the references are the call sites' llvm.call and
    // llvm.mlir.addressof (the hook's argument).
    auto redirect = [&](FlatSymbolRefAttr ref) -> FlatSymbolRefAttr {
      if (!ref)
        return nullptr;
      auto it = replacement.find(ref.getValue());
      return it == replacement.end() ? nullptr : it->second;
    };
    module.walk([&](Operation *op) {
      if (auto call = dyn_cast<LLVM::CallOp>(op)) {
        if (FlatSymbolRefAttr to = redirect(call.getCalleeAttr()))
          call.setCalleeAttr(to);
      } else if (auto address = dyn_cast<LLVM::AddressOfOp>(op)) {
        if (FlatSymbolRefAttr to = redirect(address.getGlobalNameAttr()))
          address.setGlobalNameAttr(to);
      }
    });
    for (LLVM::LLVMFuncOp fn : duplicates)
      fn.erase();
  }

  /// A loop to outline and, for a flat nest, what its call site needs to
  /// estimate the work: the elements each parallel iteration covers (its
  /// serial innermost loop's trip count, or 1) and the ops per element.
  struct FlatNest {
    scf::ParallelOp loop;
    Value elementsPerIteration; // null: not flat (a kernel's loop)
    int64_t opsPerElement = 0;
  };

  /// Whether `loop` is a flat nest: no region, alloca or call in its body.
  static bool isFlat(scf::ParallelOp loop) {
    return !loop.getBody()
                ->walk([](Operation *op) {
                  return op->getNumRegions() != 0 ||
                                 isa<memref::AllocaOp>(op) ||
                                 isa<CallOpInterface>(op)
                             ? WalkResult::interrupt()
                             : WalkResult::advance();
                })
                .wasInterrupted();
  }

  /// A flat loop nest (elementwise code and copies from linalg: no loop,
  /// alloca or region inside) of two or more dims keeps its innermost dim
  /// as a serial scf.for inside each parallel iteration: otherwise every
  /// element decodes its linear index with a division per dim and the
  /// contiguous innermost run is never vectorised (a head-splitting copy of
  /// BERT-base ran far below memory bandwidth; figures: commit 6cd8489).
  /// The kernels' loops (which hold loops, or call a task function such as
  /// the GEMM's) keep all their dims parallel.
  ///
  /// Flat nests also report their work per iteration (FlatNest), so that a
  /// small one runs on the calling thread (outline).
  FlatNest serializeInnermostDim(scf::ParallelOp loop) {
    if (!isFlat(loop))
      return {loop, Value(), 0};
    OpBuilder b(loop);
    Location loc = loop.getLoc();
    int64_t ops = 0;
    for (Operation &op : loop.getBody()->without_terminator())
      ops += opCost(&op);
    ops = std::max<int64_t>(ops, 1);
    if (loop.getNumLoops() < 2)
      return {loop, arith::ConstantIndexOp::create(b, loc, 1), ops};
    Value inner = tripCount(b, loc, loop.getLowerBound().back(),
                            loop.getUpperBound().back(), loop.getStep().back());
    auto dropLast = [](ValueRange r) { return r.drop_back(); };
    SmallVector<Value> oldIvs(loop.getInductionVars());
    auto outer = scf::ParallelOp::create(
        b, loc, dropLast(loop.getLowerBound()), dropLast(loop.getUpperBound()),
        dropLast(loop.getStep()),
        [&](OpBuilder &b, Location l, ValueRange ivs) {
          scf::ForOp::create(
              b, l, loop.getLowerBound().back(), loop.getUpperBound().back(),
              loop.getStep().back(), ValueRange{},
              [&](OpBuilder &b, Location l, Value iv, ValueRange) {
                IRMapping map;
                map.map(ArrayRef<Value>(oldIvs).drop_back(), ivs);
                map.map(oldIvs.back(), iv);
                for (Operation &op : loop.getBody()->without_terminator())
                  b.clone(op, map);
                scf::YieldOp::create(b, l);
              });
        });
    loop.erase();
    return {outer, inner, ops};
  }

  /// The cost of one op of a flat body per element, in ops: a vector op
  /// counts its lanes, a math op (exp, erf, tanh, ...: the polynomials of
  /// tfc-approximate-math, which runs later) 20.
  static int64_t opCost(Operation *op) {
    int64_t lanes = 1;
    for (Type t :
         llvm::concat<Type>(op->getResultTypes(), op->getOperandTypes()))
      if (auto v = dyn_cast<VectorType>(t); v && v.hasStaticShape())
        lanes = std::max<int64_t>(lanes, v.getNumElements());
    int64_t perLane = op->getName().getDialectNamespace() == "math" ? 20 : 1;
    return lanes * perLane;
  }

  /// ceil((ub - lb) / step), 0 for an empty range (ub <= lb).
  static Value tripCount(OpBuilder &b, Location loc, Value lb, Value ub,
                         Value step) {
    Value span = arith::SubIOp::create(b, loc, ub, lb);
    Value n = arith::CeilDivUIOp::create(b, loc, span, step);
    Value empty =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, ub, lb);
    return arith::SelectOp::create(
        b, loc, empty, arith::ConstantIndexOp::create(b, loc, 0), n);
  }

  LogicalResult outline(ModuleOp module, const FlatNest &nest,
                        unsigned number) {
    scf::ParallelOp loop = nest.loop;
    MLIRContext *ctx = module.getContext();
    Location loc = loop.getLoc();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    OpBuilder b(loop);

    // Trip counts, and the values the body needs from outside.
    SmallVector<Value> counts;
    Value total = arith::ConstantIndexOp::create(b, loc, 1);
    for (auto [lb, ub, step] :
         llvm::zip(loop.getLowerBound(), loop.getUpperBound(),
                   loop.getStep())) {
      // An empty range (ub <= lb) runs nothing.
      Value n = tripCount(b, loc, lb, ub, step);
      counts.push_back(n);
      total = arith::MulIOp::create(b, loc, total, n);
    }
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(loop.getRegion(), captured);
    for (Value v : llvm::concat<const Value>(loop.getLowerBound(),
                                             loop.getStep(), counts))
      captured.insert(v);
    // Constants travel as themselves (defined again in the task).
    SmallVector<Value> constants;
    captured.remove_if([&](Value v) {
      Operation *def = v.getDefiningOp();
      if (!def || def->getNumResults() != 1 ||
          !def->hasTrait<OpTrait::ConstantLike>())
        return false;
      constants.push_back(v);
      return true;
    });
    SmallVector<Type> fieldTypes;
    for (Value v : captured) {
      Type t = transportType(v.getType());
      if (!t)
        return loop.emitError("cannot pass a value of type ")
               << v.getType() << " to a parallel task";
      fieldTypes.push_back(t);
    }
    // A body that allocates can run out of memory: it then sets an i32 of
    // the caller's frame, to which the context's last field points, and
    // returns (tfc-check-allocations); the caller returns after the loop.
    // (The flag is outside the context, which every chunk loads whole.)
    bool mayFail = loop.getBody()
                       ->walk([](Operation *op) {
                         return isa<memref::AllocOp, memref::ReallocOp>(op)
                                    ? WalkResult::interrupt()
                                    : WalkResult::advance();
                       })
                       .wasInterrupted();
    auto i32 = IntegerType::get(ctx, 32);
    int64_t flagField = fieldTypes.size();
    if (mayFail)
      fieldTypes.push_back(ptr);
    auto ctxType = LLVM::LLVMStructType::getLiteral(ctx, fieldTypes);

    // The task function.
    auto parent = loop->getParentOfType<FunctionOpInterface>();
    std::string name =
        (parent.getName() + "__par" + std::to_string(number)).str();
    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    auto fn = LLVM::LLVMFuncOp::create(
        mb, loc, name,
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                    {ptr, i64, i64}),
        LLVM::Linkage::Internal);
    tasks.push_back(fn);
    // Not inlined into the serial fallback call below: that copy of every
    // task body (the runtime always gives the hooks) doubled the size of the
    // model functions and LLVM's time on them.
    fn.setPassthroughAttr(mb.getArrayAttr({mb.getStringAttr("noinline")}));
    Block *entry = fn.addEntryBlock(mb);
    OpBuilder fb = OpBuilder::atBlockBegin(entry);
    Value ctxPtr = entry->getArgument(0);
    Value packed = LLVM::LoadOp::create(fb, loc, ctxType, ctxPtr);
    if (mayFail)
      LLVM::CallOp::create(
          fb, loc, getOrCreateMarker(mb, module, kFailureFlagMarker),
          ValueRange{LLVM::ExtractValueOp::create(fb, loc, packed,
                                                  ArrayRef<int64_t>{flagField})
                         .getResult()});
    IRMapping mapping;
    // Constants are defined again in the task rather than loaded from the
    // context: the serial innermost loop of elementwise code then has
    // constant bounds and step, which LLVM vectorises (loaded, they made
    // a GELU run one float at a time, several times slower than PyTorch's;
    // figures: commit 0f31573).
    for (Value v : constants)
      mapping.map(v, fb.clone(*v.getDefiningOp())->getResult(0));
    for (auto [i, v] : llvm::enumerate(captured)) {
      Value field = LLVM::ExtractValueOp::create(fb, loc, packed,
                                                 ArrayRef<int64_t>{(int64_t)i});
      mapping.map(v, fromTransport(fb, loc, field, v.getType()));
    }
    Value begin = arith::IndexCastOp::create(fb, loc, fb.getIndexType(),
                                             entry->getArgument(1));
    Value end = arith::IndexCastOp::create(fb, loc, fb.getIndexType(),
                                           entry->getArgument(2));
    Value one = arith::ConstantIndexOp::create(fb, loc, 1);
    scf::ForOp::create(
        fb, loc, begin, end, one, ValueRange{},
        [&](OpBuilder &lb, Location l, Value linear, ValueRange) {
          // Delinearise, innermost dimension fastest.
          SmallVector<Value> ivs(counts.size());
          Value rest = linear;
          for (int64_t d = counts.size() - 1; d >= 0; --d) {
            Value n = mapping.lookup(counts[d]);
            Value idx = d == 0 ? rest : arith::RemUIOp::create(lb, l, rest, n);
            if (d > 0)
              rest = arith::DivUIOp::create(lb, l, rest, n);
            Value step = mapping.lookup(loop.getStep()[d]);
            Value lower = mapping.lookup(loop.getLowerBound()[d]);
            ivs[d] = arith::AddIOp::create(
                lb, l, lower, arith::MulIOp::create(lb, l, idx, step));
          }
          IRMapping bodyMap = mapping;
          for (auto [iv, v] : llvm::zip(loop.getInductionVars(), ivs))
            bodyMap.map(iv, v);
          Value stack = LLVM::StackSaveOp::create(lb, l, ptr);
          for (Operation &op : loop.getBody()->without_terminator())
            lb.clone(op, bodyMap);
          LLVM::StackRestoreOp::create(lb, l, stack);
          scf::YieldOp::create(lb, l);
        });
    LLVM::ReturnOp::create(fb, loc, ValueRange{});

    // The call site.
    // The context slot is a static alloca in the function's entry block (a
    // frame slot): one in a later block would be a dynamic allocation that
    // grows the stack each time the call site runs.
    Value slot, flagSlot;
    {
      OpBuilder eb = OpBuilder::atBlockBegin(
          &parent.getFunctionBody().front());
      Value one64 =
          LLVM::ConstantOp::create(eb, loc, i64, eb.getI64IntegerAttr(1));
      slot = LLVM::AllocaOp::create(eb, loc, ptr, ctxType, one64);
      if (mayFail)
        flagSlot = LLVM::AllocaOp::create(eb, loc, ptr, i32, one64);
    }
    Value ctxValue = LLVM::UndefOp::create(b, loc, ctxType);
    for (auto [i, v] : llvm::enumerate(captured))
      ctxValue = LLVM::InsertValueOp::create(
          b, loc, ctxValue, toTransport(b, loc, v, fieldTypes[i]),
          ArrayRef<int64_t>{(int64_t)i});
    if (mayFail) {
      LLVM::StoreOp::create(
          b, loc, LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(0)),
          flagSlot);
      ctxValue = LLVM::InsertValueOp::create(b, loc, ctxValue, flagSlot,
                                             ArrayRef<int64_t>{flagField});
    }
    LLVM::StoreOp::create(b, loc, ctxValue, slot);
    Value n = arith::IndexCastOp::create(b, loc, i64, total);
    Value fnAddr = LLVM::AddressOfOp::create(b, loc, fn);
    HookTable hooks = loadHookTable(b, loc, module);
    // One task, or no runtime: call the body directly.
    Value single = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::sle, n,
        arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(1)));
    Value serial = arith::OrIOp::create(b, loc, hooks.isNull, single);
    // A flat nest with less work than a parallel region costs: the calling
    // thread runs it (elements x ops per element below kSerialWork).
    if (nest.elementsPerIteration) {
      Value elements =
          arith::MulIOp::create(b, loc, total, nest.elementsPerIteration);
      Value work = arith::MulIOp::create(
          b, loc, arith::IndexCastOp::create(b, loc, i64, elements),
          arith::ConstantOp::create(b, loc,
                                    b.getI64IntegerAttr(nest.opsPerElement)));
      // (Unsigned: the work is a count, never negative.)
      Value small = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ult, work,
          arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(kSerialWork)));
      serial = arith::OrIOp::create(b, loc, serial, small);
    }
    scf::IfOp::create(
        b, loc, serial,
        [&](OpBuilder &tb, Location l) {
          Value zero = LLVM::ConstantOp::create(tb, l, i64, tb.getI64IntegerAttr(0));
          LLVM::CallOp::create(tb, l, fn, ValueRange{slot, zero, n});
          scf::YieldOp::create(tb, l);
        },
        [&](OpBuilder &eb, Location l) {
          Value pf = loadHookFunction(eb, l, hooks.table, Hook::ParallelFor);
          auto pfType = LLVM::LLVMFunctionType::get(
              LLVM::LLVMVoidType::get(ctx), {i64, ptr, ptr});
          LLVM::CallOp::create(eb, l, pfType, ValueRange{pf, n, fnAddr, slot});
          scf::YieldOp::create(eb, l);
        });
    if (mayFail) {
      Value flag = LLVM::LoadOp::create(b, loc, i32, flagSlot);
      Value failed = LLVM::ICmpOp::create(
          b, loc, LLVM::ICmpPredicate::ne, flag,
          LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(0)));
      LLVM::CallOp::create(b, loc, getOrCreateMarker(b, module, kFailIfMarker),
                           ValueRange{failed});
    }
    loop.erase();
    return success();
  }
};

} // namespace
