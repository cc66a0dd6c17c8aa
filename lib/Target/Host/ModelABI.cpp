//===- ModelABI.cpp - The tfc-model-abi pass --------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Tensor-level half of the model library ABI (include/tfc/Schemas/ModelABI.h):
//  * every distinct tfc.weight becomes slot i of the runtime's table, read
//    by `tfc.table_slot` (one op; tfc-expand-table-slots builds its memref
//    descriptor in the LLVM lowering);
//  * computations that depend on weights only (packed GEMM panels, weight
//    transposes, merged QKV projections) move into `tfc_model_init`, which
//    writes them into derived-constant slots after the weights, so that
//    entries read them like weights;
//  * each entry E becomes the private `__tfc_impl_E(table, inputs...)`; the
//    C wrapper is added after bufferisation (EntryPoints.cpp);
//  * the metadata JSON is recorded as a module attribute.
//
//===----------------------------------------------------------------------===//

#include "tfc/Target/Host/Descriptors.h"

#include "tfc/Dialect/Tfc/IR/TfcOps.h"
#include "tfc/Schemas/ModelABI.h"
#include "tfc/Target/Host/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_LOWERMODELABI
#include "tfc/Target/Host/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::cpu;

namespace {

std::string dtypeName(Type t) {
  StringRef name = elementTypeName(t);
  return name.empty() ? "unknown" : name.str();
}

int64_t byteSize(Type t) {
  return t.isInteger(1) ? 1 : t.getIntOrFloatBitWidth() / 8;
}

/// Ops that only re-view their operand: a derived constant is taken at the
/// computed value under them, not at the view.
bool isView(Operation *op) {
  return isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
             tensor::CollapseShapeOp, tensor::CastOp>(op);
}

/// Values an op reads: operands and values its regions capture.
SmallVector<Value> readValues(Operation *op) {
  SmallVector<Value> values(op->getOperands());
  if (op->getNumRegions()) {
    llvm::SetVector<Value> captured;
    for (Region &r : op->getRegions())
      getUsedValuesDefinedAbove(r, captured);
    values.append(captured.begin(), captured.end());
  }
  return values;
}

struct LowerModelABIPass : tfc::impl::LowerModelABIBase<LowerModelABIPass> {
  using Base::Base;

  struct Weight {
    std::string name;
    /// The slot's type: for a quantised weight its raw form (i8 blocks).
    RankedTensorType type;
    /// The block format of a quantised weight ("q4_1"), else "".
    std::string quant;
  };

  SmallVector<Weight> weights;
  llvm::StringMap<unsigned> weightIndex;
  SmallVector<int64_t> constantBytes;
  /// Derived constants by what they compute (structuralKey): their slot.
  llvm::StringMap<int64_t> constantSlots;
  /// Weights some entry reads after hoisting; the others are read by init
  /// only ("init_only" in the metadata: the runtime releases them once the
  /// derived constants exist).
  llvm::StringSet<> entryWeights;
  /// Init's reads of the weights: the tensor, its slot and byte size.
  struct InitWeight {
    Value tensor;
    unsigned slot;
    int64_t bytes;
  };
  SmallVector<InitWeight> initWeights;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(collectWeights(module)))
      return signalPassFailure();
    SmallVector<func::FuncOp> entries;
    for (auto f : module.getOps<func::FuncOp>())
      if (f.isPublic() && !f.isDeclaration())
        entries.push_back(f);
    if (entries.empty()) {
      module.emitError("the module has no entry point (a public function)");
      return signalPassFailure();
    }

    OpBuilder b(module.getContext());
    auto ptrType = LLVM::LLVMPointerType::get(module.getContext());
    b.setInsertionPointToEnd(module.getBody());
    auto init = func::FuncOp::create(b, module.getLoc(), kInitSymbol,
                                     b.getFunctionType({ptrType}, {}));
    // Init runs once, at load: its own code (reads of the table, the
    // calls of the packing tasks, which are functions of their own and
    // optimised as usual) is not worth LLVM's optimisation, which grew with
    // the number of layers.
    init->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("noinline"),
                                                 b.getStringAttr("optnone")}));
    Block *initBlock = init.addEntryBlock();
    b.setInsertionPointToEnd(initBlock);
    func::ReturnOp::create(b, module.getLoc());

    llvm::json::Array entryJson;
    for (func::FuncOp entry : entries) {
      for (Type t : llvm::concat<const Type>(entry.getArgumentTypes(),
                                             entry.getResultTypes()))
        if (!isa<RankedTensorType>(t)) {
          entry.emitError("entry point arguments and results must be ranked "
                          "tensors, got ")
              << t;
          return signalPassFailure();
        }
      if (failed(checkNames(entry)))
        return signalPassFailure();
      entryJson.push_back(describeEntry(module, entry));
      lowerStates(entry);
      // The names and dims now live in the metadata; `tfc.host` stays for
      // the GPU lowering (a scalar the host reads, e.g. `past`).
      llvm::SmallVector<unsigned> host;
      for (unsigned i = 0; i < entry.getNumArguments(); ++i)
        if (entry.getArgAttr(i, "tfc.host"))
          host.push_back(i);
      entry.removeArgAttrsAttr();
      entry.removeResAttrsAttr();
      if (failed(entry.insertArgument(0u, ptrType, DictionaryAttr(),
                                      entry.getLoc())))
        return signalPassFailure();
      for (unsigned i : host)
        entry.setArgAttr(i + 1, "tfc.host", b.getUnitAttr());
      Value table = entry.getArgument(0);
      hoistWeightComputations(entry, table, init);
      entry.setName((kImplPrefix + entry.getName()).str());
      entry.setPrivate();
    }
    lowerWeights(init, init.getArgument(0), /*isEntry=*/false);
    releaseConsumedWeights(module, init);
    for (func::FuncOp entry : entries)
      lowerWeights(entry, entry.getArgument(0), /*isEntry=*/true);

    module->setAttr(kMetadataAttr,
                    b.getStringAttr(metadata(module, std::move(entryJson))));
  }

  /// State arguments (`tfc.state`, the key/value caches of a cached entry)
  /// are buffers the runtime owns and the entry updates in place: the
  /// argument becomes a memref read through a writable to_tensor, and the
  /// result that carries its new value (`tfc.state_for`) is materialised
  /// into it instead of being returned. Bufferisation then writes the new
  /// rows straight into the caller's buffer (no copy of the cache).
  void lowerStates(func::FuncOp entry) {
    auto ret = cast<func::ReturnOp>(entry.front().getTerminator());
    llvm::SmallDenseMap<unsigned, Value> stateMemref;
    OpBuilder b(entry.getContext());
    b.setInsertionPointToStart(&entry.front());
    for (unsigned i = 0; i < entry.getNumArguments(); ++i) {
      if (!entry.getArgAttr(i, "tfc.state"))
        continue;
      BlockArgument arg = entry.getArgument(i);
      auto type = cast<RankedTensorType>(arg.getType());
      arg.setType(MemRefType::get(type.getShape(), type.getElementType()));
      Value t = bufferization::ToTensorOp::create(b, arg.getLoc(), type, arg,
                                                  /*restrict=*/true,
                                                  /*writable=*/true);
      arg.replaceAllUsesExcept(t, t.getDefiningOp());
      stateMemref[i] = arg;
    }
    if (stateMemref.empty())
      return;
    SmallVector<Value> kept;
    llvm::BitVector erase(entry.getNumResults());
    b.setInsertionPoint(ret);
    for (unsigned r = 0; r < entry.getNumResults(); ++r) {
      auto stateFor =
          entry.getResultAttrOfType<IntegerAttr>(r, "tfc.state_for");
      if (!stateFor) {
        kept.push_back(ret.getOperand(r));
        continue;
      }
      bufferization::MaterializeInDestinationOp::create(
          b, ret.getLoc(), TypeRange{}, ret.getOperand(r),
          stateMemref.lookup(stateFor.getInt()), /*restrict=*/true,
          /*writable=*/true);
      erase.set(r);
    }
    ret->setOperands(kept);
    (void)entry.eraseResults(erase);
    SmallVector<Type> argTypes(entry.front().getArgumentTypes());
    entry.setFunctionType(FunctionType::get(entry.getContext(), argTypes,
                                            ValueRange(kept).getTypes()));
  }

  LogicalResult collectWeights(ModuleOp module) {
    WalkResult r = module.walk([&](WeightOp w) {
      auto type = cast<RankedTensorType>(w.getType());
      auto [it, inserted] =
          weightIndex.try_emplace(w.getName(), weights.size());
      if (inserted) {
        if (w.getQuant() && !type.getElementType().isInteger(8)) {
          w.emitError("quantised weight '")
              << w.getName()
              << "' reached the model ABI as values; the CPU backend reads "
                 "it through its raw form (convert-tfc-linear-to-cpu-gemm)";
          return WalkResult::interrupt();
        }
        weights.push_back(
            {w.getName().str(), type, w.getQuant() ? w.getQuant()->str() : ""});
        return WalkResult::advance();
      }
      if (weights[it->second].type != type) {
        w.emitError("weight '") << w.getName() << "' is used as " << type
                                << " and as " << weights[it->second].type;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    return failure(r.wasInterrupted());
  }

  /// Moves what depends on weights only into `init` (see the file comment).
  void hoistWeightComputations(func::FuncOp entry, Value table,
                               func::FuncOp init) {
    llvm::DenseSet<Operation *> constant;
    for (Operation &op : entry.front()) {
      if (isa<WeightOp>(op)) {
        constant.insert(&op);
        continue;
      }
      if (!isPure(&op) || op.getNumResults() == 0)
        continue;
      bool allConstant = llvm::all_of(readValues(&op), [&](Value v) {
        Operation *def = v.getDefiningOp();
        return def && constant.contains(def);
      });
      if (allConstant)
        constant.insert(&op);
    }
    // The values to materialise: constant results read by the rest.
    llvm::SetVector<Value> roots;
    for (Operation &op : entry.front()) {
      if (!constant.contains(&op))
        continue;
      for (Value result : op.getResults()) {
        bool usedOutside = llvm::any_of(result.getUsers(), [&](Operation *u) {
          Operation *top = entry.front().findAncestorOpInBlock(*u);
          return !top || !constant.contains(top);
        });
        if (!usedOutside)
          continue;
        Value root = result;
        while (Operation *def = root.getDefiningOp()) {
          if (!isView(def))
            break;
          root = def->getOperand(0);
        }
        Operation *def = root.getDefiningOp();
        if (!def || isa<WeightOp, arith::ConstantOp, tensor::EmptyOp>(def))
          continue;
        auto type = dyn_cast<RankedTensorType>(root.getType());
        if (!type || !type.hasStaticShape())
          continue;
        roots.insert(root);
      }
    }
    if (roots.empty())
      return;

    // A root computed the same way as one of an earlier entry (the same
    // weights through the same ops: e.g. `forward` and `forward_cached`
    // packing the same matrix) reads that entry's slot: every derived
    // constant is computed and held once.
    llvm::DenseMap<Operation *, std::string> keys;
    SmallVector<int64_t> rootSlots;
    for (Value root : roots) {
      std::string key = structuralKey(root, keys);
      auto it = constantSlots.find(key);
      rootSlots.push_back(it == constantSlots.end() ? -1 : it->second);
      if (it == constantSlots.end())
        constantSlots[key] = weights.size() + constantBytes.size() +
                             llvm::count(rootSlots, -1) - 1;
    }

    // Clone the backward slices of the new roots into init, the largest
    // constant's first, each slice in program order. Init's resident memory
    // peaks at its end: every constant made so far plus the weights the
    // last ones read. Made first, the largest (a tied embedding's packed
    // copy for the output projection: a fifth of SmolLM2-135M) has its
    // weight released before the rest are made, not beside all of them.
    SmallVector<unsigned> order;
    for (auto [i, slot] : llvm::enumerate(rootSlots))
      if (slot < 0)
        order.push_back(i);
    auto bytesOf = [&](unsigned i) {
      auto type = cast<RankedTensorType>(roots[i].getType());
      return type.getNumElements() * byteSize(type.getElementType());
    };
    llvm::stable_sort(
        order, [&](unsigned a, unsigned b) { return bytesOf(a) > bytesOf(b); });
    llvm::DenseMap<Operation *, unsigned> position;
    for (auto [i, op] : llvm::enumerate(entry.front()))
      position[&op] = i;
    OpBuilder b(init.getContext());
    b.setInsertionPoint(init.front().getTerminator());
    IRMapping mapping;
    llvm::DenseSet<Operation *> cloned;
    for (unsigned i : order) {
      llvm::DenseSet<Operation *> slice;
      SmallVector<Operation *> worklist = {roots[i].getDefiningOp()};
      while (!worklist.empty()) {
        Operation *op = worklist.pop_back_val();
        if (cloned.contains(op) || !slice.insert(op).second)
          continue;
        for (Value v : readValues(op))
          if (Operation *def = v.getDefiningOp())
            worklist.push_back(def);
      }
      SmallVector<Operation *> ops(slice.begin(), slice.end());
      llvm::sort(ops, [&](Operation *x, Operation *y) {
        return position.lookup(x) < position.lookup(y);
      });
      for (Operation *op : ops) {
        b.clone(*op, mapping);
        cloned.insert(op);
      }
    }

    Value initTable = init.getArgument(0);
    for (auto [rootRef, shared] : llvm::zip(roots, rootSlots)) {
      Value root = rootRef;
      auto type = cast<RankedTensorType>(root.getType());
      auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
      Location loc = root.getLoc();
      int64_t slot = shared;
      if (slot < 0) {
        slot = weights.size() + constantBytes.size();
        constantBytes.push_back(type.getNumElements() *
                                byteSize(type.getElementType()));
        // init: compute and store into the slot, right after the value is
        // computed, so that its temporary buffer is freed before the next
        // constant is computed (init's peak is one temporary, not all).
        Value value = mapping.lookup(root);
        OpBuilder::InsertionGuard guard(b);
        Value dst;
        // An op with a fresh destination computes straight into the slot
        // (the copy below is then of the slot onto itself, and folds
        // away): no temporary as large as the constant.
        auto dps = value.getDefiningOp<DestinationStyleOpInterface>();
        OpOperand *tied =
            dps ? dps.getTiedOpOperand(cast<OpResult>(value)) : nullptr;
        if (tied && tied->get().getDefiningOp<tensor::EmptyOp>() &&
            tied->get().getType() == type) {
          b.setInsertionPoint(dps);
          dst = TableSlotOp::create(b, loc, memrefType, initTable, slot);
          tied->set(bufferization::ToTensorOp::create(
              b, loc, type, dst, /*restrict=*/true, /*writable=*/true));
        }
        b.setInsertionPointAfterValue(value);
        if (!dst)
          dst = TableSlotOp::create(b, loc, memrefType, initTable, slot);
        bufferization::MaterializeInDestinationOp::create(
            b, loc, TypeRange{}, value, dst, /*restrict=*/true,
            /*writable=*/true);
      }
      // entry: read the slot.
      OpBuilder eb(root.getContext());
      eb.setInsertionPointAfterValue(root);
      Value src = TableSlotOp::create(eb, loc, memrefType, table, slot);
      Value loaded = bufferization::ToTensorOp::create(
          eb, loc, type, src, /*restrict=*/true, /*writable=*/false);
      root.replaceAllUsesExcept(loaded, loaded.getDefiningOp());
    }
    // The hoisted computations are dead in the entry now.
    for (Operation &op : llvm::make_early_inc_range(
             llvm::reverse(entry.front().getOperations())))
      if (constant.contains(&op) && !isa<WeightOp>(op) &&
          isOpTriviallyDead(&op))
        op.erase();
  }

  /// After the last derived constant computed from a weight is stored, init
  /// hands the weight to the release hook (ModelABI.h): a runtime that bound
  /// it from a file mapping drops its pages then, so that init never holds
  /// every weight and every derived constant at once (a Q4_K_M file and its
  /// packed form; an f32 checkpoint and its packed panels).
  void releaseConsumedWeights(ModuleOp module, func::FuncOp init) {
    if (initWeights.empty())
      return;
    Block &block = init.front();
    llvm::DenseMap<Value, unsigned> weightNumber;
    for (auto [i, w] : llvm::enumerate(initWeights))
      weightNumber[w.tensor] = i;
    // The weights each top-level op reads, directly or through its operands.
    llvm::DenseMap<Operation *, llvm::BitVector> reads;
    SmallVector<Operation *> lastStore(initWeights.size(), nullptr);
    for (Operation &op : block) {
      llvm::BitVector set(initWeights.size());
      auto add = [&](Value v) {
        auto it = weightNumber.find(v);
        if (it != weightNumber.end())
          set.set(it->second);
        Operation *def = v.getDefiningOp();
        if (!def)
          return;
        Operation *top = block.findAncestorOpInBlock(*def);
        auto r = top ? reads.find(top) : reads.end();
        if (r != reads.end())
          set |= r->second;
      };
      for (Value v : op.getOperands())
        add(v);
      llvm::SetVector<Value> above;
      for (Region &region : op.getRegions())
        getUsedValuesDefinedAbove(region, above);
      for (Value v : above)
        add(v);
      if (isa<bufferization::MaterializeInDestinationOp>(op))
        for (unsigned i : set.set_bits())
          lastStore[i] = &op;
      reads[&op] = std::move(set);
    }
    MLIRContext *ctx = module.getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    LLVM::LLVMFuncOp release =
        module.lookupSymbol<LLVM::LLVMFuncOp>(TFC_RT_RELEASE_SYMBOL);
    OpBuilder b(ctx);
    if (!release) {
      b.setInsertionPointToStart(module.getBody());
      release = LLVM::LLVMFuncOp::create(
          b, module.getLoc(), TFC_RT_RELEASE_SYMBOL,
          LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                      {ptr, i64}));
    }
    Value table = init.getArgument(0);
    for (auto [i, w] : llvm::enumerate(initWeights)) {
      if (!lastStore[i] || w.bytes <= 0)
        continue;
      Location loc = lastStore[i]->getLoc();
      b.setInsertionPointAfter(lastStore[i]);
      Value p = loadPointer(b, loc, table, w.slot);
      Value n = LLVM::ConstantOp::create(b, loc, i64,
                                         b.getI64IntegerAttr(w.bytes));
      LLVM::CallOp::create(b, loc, release, ValueRange{p, n});
    }
  }

  /// What a weight-only value computes, independently of where: its op's
  /// name, attributes and result types and, recursively, the keys of its
  /// operands; a weight is its name and type. Ops with regions are not
  /// compared (each is its own key).
  std::string structuralKey(Value v,
                            llvm::DenseMap<Operation *, std::string> &memo) {
    Operation *op = v.getDefiningOp();
    if (!op)
      return "<argument>";
    std::string suffix =
        "#" + std::to_string(cast<OpResult>(v).getResultNumber());
    auto it = memo.find(op);
    if (it != memo.end())
      return it->second + suffix;
    std::string key;
    llvm::raw_string_ostream os(key);
    if (auto w = dyn_cast<WeightOp>(op)) {
      os << "weight(" << w.getName() << ":" << w.getType() << ")";
    } else if (op->getNumRegions() != 0) {
      // Not compared structurally: unique.
      os << "op@" << static_cast<const void *>(op);
    } else {
      os << op->getName() << op->getAttrDictionary() << "(";
      for (Value operand : op->getOperands())
        os << structuralKey(operand, memo) << ",";
      os << ")->(";
      for (Type t : op->getResultTypes())
        os << t << ",";
      os << ")";
    }
    memo[op] = key;
    return key + suffix;
  }

  /// tfc.weight -> a read-only tensor over table slot i. In an entry, weights
  /// left without users by the hoisting are dropped and the rest recorded in
  /// entryWeights.
  void lowerWeights(func::FuncOp f, Value table, bool isEntry) {
    // One load per weight and function; ops CSE'd by name.
    llvm::StringMap<Value> loaded;
    f.walk([&](WeightOp w) {
      if (isEntry && w.use_empty()) {
        w.erase();
        return;
      }
      if (isEntry)
        entryWeights.insert(w.getName());
      Value &v = loaded[w.getName()];
      if (!v) {
        OpBuilder b(w);
        b.setInsertionPointToStart(&f.front());
        auto type = cast<RankedTensorType>(w.getType());
        auto memrefType =
            MemRefType::get(type.getShape(), type.getElementType());
        unsigned slot = weightIndex.lookup(w.getName());
        Value m = TableSlotOp::create(b, w.getLoc(), memrefType, table, slot);
        v = bufferization::ToTensorOp::create(b, w.getLoc(), type, m,
                                              /*restrict=*/true,
                                              /*writable=*/false);
        if (!isEntry)
          initWeights.push_back({v, slot,
                                 type.getNumElements() *
                                     byteSize(type.getElementType())});
      }
      w.replaceAllUsesWith(v);
      w.erase();
    });
  }

  /// The name of input `i` / output `i` in the metadata.
  static std::string inputName(func::FuncOp entry, unsigned i) {
    auto name = entry.getArgAttrOfType<StringAttr>(i, "tfc.name");
    return name ? name.getValue().str() : "input" + std::to_string(i);
  }
  static std::string outputName(func::FuncOp entry, unsigned i) {
    auto name = entry.getResultAttrOfType<StringAttr>(i, "tfc.name");
    return name ? name.getValue().str() : "output" + std::to_string(i);
  }

  /// The runtime, tfc-run and the C API find inputs and outputs by name:
  /// two with the same name are an error here rather than a library that
  /// every load refuses.
  LogicalResult checkNames(func::FuncOp entry) {
    llvm::StringMap<std::string> seen;
    auto add = [&](std::string name, std::string what) -> LogicalResult {
      auto [it, fresh] = seen.try_emplace(name, what);
      if (fresh)
        return success();
      return entry.emitError("entry '")
             << entry.getName() << "': " << what << " and " << it->second
             << " are both named '" << name
             << "' (tfc.name); an entry's inputs and outputs need distinct "
                "names";
    };
    for (unsigned i = 0; i < entry.getNumArguments(); ++i)
      if (failed(add(inputName(entry, i), "input " + std::to_string(i))))
        return failure();
    for (unsigned i = 0; i < entry.getNumResults(); ++i)
      if (!entry.getResultAttr(i, "tfc.state_for") &&
          failed(add(outputName(entry, i), "output " + std::to_string(i))))
        return failure();
    return success();
  }

  llvm::json::Object describeEntry(ModuleOp module, func::FuncOp entry) {
    auto dimsOf = [](RankedTensorType type, ArrayAttr names) {
      llvm::json::Array shape;
      for (auto [i, s] : llvm::enumerate(type.getShape())) {
        if (!ShapedType::isDynamic(s))
          shape.push_back(s);
        else if (names && i < names.size() && isa<StringAttr>(names[i]))
          shape.push_back(cast<StringAttr>(names[i]).getValue().str());
        else
          shape.push_back(nullptr);
      }
      return shape;
    };
    llvm::json::Array inputs, outputs;
    for (unsigned i = 0; i < entry.getNumArguments(); ++i) {
      auto type = cast<RankedTensorType>(entry.getArgumentTypes()[i]);
      llvm::json::Object in{
          {"name", inputName(entry, i)},
          {"dtype", dtypeName(type.getElementType())},
          {"shape",
           dimsOf(type, entry.getArgAttrOfType<ArrayAttr>(i, "tfc.dims"))}};
      if (auto bound = entry.getArgAttrOfType<IntegerAttr>(i, "tfc.id_bound"))
        in["bound"] = bound.getInt();
      if (entry.getArgAttr(i, "tfc.state"))
        in["state"] = true;
      if (auto window = entry.getArgAttrOfType<IntegerAttr>(i, "tfc.window"))
        in["window"] = window.getInt();
      if (entry.getArgAttr(i, "tfc.host"))
        in["host"] = true;
      inputs.push_back(std::move(in));
    }
    for (unsigned i = 0; i < entry.getNumResults(); ++i) {
      if (entry.getResultAttr(i, "tfc.state_for"))
        continue; // written into its state input, not returned
      auto type = cast<RankedTensorType>(entry.getResultTypes()[i]);
      outputs.push_back(
          llvm::json::Object{{"name", outputName(entry, i)},
                             {"dtype", dtypeName(type.getElementType())},
                             {"shape", dimsOf(type, nullptr)}});
    }
    return llvm::json::Object{
        {"name", entry.getName().str()},
        {"symbol", (kEntryPrefix + entry.getName()).str()},
        {"inputs", std::move(inputs)},
        {"outputs", std::move(outputs)}};
  }

  std::string metadata(ModuleOp module, llvm::json::Array entries) {
    llvm::json::Array weightJson, constants, dims;
    for (const Weight &w : weights) {
      llvm::json::Array shape;
      std::string dtype = dtypeName(w.type.getElementType());
      if (!w.quant.empty()) {
        // The logical shape [..., K] of the raw [..., K / 32, block bytes].
        ArrayRef<int64_t> raw = w.type.getShape();
        for (int64_t s : raw.drop_back(2))
          shape.push_back(s);
        shape.push_back(raw[raw.size() - 2] *
                        lookupQuantFormat(w.quant)->blockElements);
        dtype = w.quant;
      } else {
        for (int64_t s : w.type.getShape())
          shape.push_back(s);
      }
      llvm::json::Object o{
          {"name", w.name}, {"dtype", dtype}, {"shape", std::move(shape)}};
      if (!entryWeights.contains(w.name))
        o["init_only"] = true;
      weightJson.push_back(std::move(o));
    }
    for (int64_t bytes : constantBytes)
      constants.push_back(llvm::json::Object{{"bytes", bytes}, {"align", 64}});
    // Every named dim of an entry input, with its bound when declared.
    auto bounds = module->getAttrOfType<DictionaryAttr>("tfc.dim_bounds");
    llvm::StringSet<> seen;
    for (const llvm::json::Value &e : entries)
      for (const llvm::json::Value &in : *e.getAsObject()->getArray("inputs"))
        for (const llvm::json::Value &s :
             *in.getAsObject()->getArray("shape")) {
          auto name = s.getAsString();
          if (!name || !seen.insert(*name).second)
            continue;
          llvm::json::Object dim{{"name", name->str()}};
          if (bounds)
            if (auto max = bounds.getAs<IntegerAttr>(*name))
              dim["max"] = max.getInt();
          dims.push_back(std::move(dim));
        }
    auto model = module->getAttrOfType<StringAttr>("tfc.model");
    llvm::json::Object root{
        {"abi", 1},
        {"model", model ? model.getValue().str() : "model"},
        {"target",
         llvm::json::Object{{"triple", "x86_64-unknown-linux-gnu"},
                            {"cpu", cpu},
                            {"features", features},
                            {"device", isCudaTarget(module) ? "cuda" : "cpu"}}},
        {"dims", std::move(dims)},
        {"weights", std::move(weightJson)},
        {"constants", std::move(constants)},
        {"entries", std::move(entries)}};
    std::string out;
    llvm::raw_string_ostream os(out);
    os << llvm::json::Value(std::move(root));
    return out;
  }
};

} // namespace
