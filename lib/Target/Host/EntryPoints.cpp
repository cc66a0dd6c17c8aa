//===- EntryPoints.cpp - The tfc-entry-points pass --------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Memref-level half of the model library ABI: the C wrappers
// tfc_entry_E(table, inputs, outputs), the metadata string, and the
// allocation functions of the memref lowering routed through the runtime
// hooks.
//
//===----------------------------------------------------------------------===//

#include "tfc/Target/Host/Descriptors.h"

#include "tfc/Schemas/ModelABI.h"
#include "tfc/Target/Host/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_LOWERENTRYPOINTS
#include "tfc/Target/Host/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::cpu;

namespace {

struct LowerEntryPointsPass
    : tfc::impl::LowerEntryPointsBase<LowerEntryPointsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(module.getContext());
    b.setInsertionPointToEnd(module.getBody());
    for (auto impl : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (!impl.getName().starts_with(kImplPrefix))
        continue;
      if (failed(addWrapper(b, module, impl)))
        return signalPassFailure();
      // Only the C wrapper is exported from the library.
      impl->setAttr(
          "llvm.linkage",
          LLVM::LinkageAttr::get(module.getContext(), LLVM::Linkage::Internal));
    }
    emitMetadata(b, module);
    getOrCreateHooksGlobal(b, module);
    emitAllocationFunctions(b, module);
  }

  LogicalResult addWrapper(OpBuilder &b, ModuleOp module, func::FuncOp impl) {
    MLIRContext *ctx = module.getContext();
    Location loc = impl.getLoc();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    std::string name =
        (kEntryPrefix + impl.getName().drop_front(kImplPrefix.size())).str();
    auto wrapper = func::FuncOp::create(b, loc, name,
                                        b.getFunctionType({ptr, ptr, ptr}, {}));
    Block *block = wrapper.addEntryBlock();
    OpBuilder wb = OpBuilder::atBlockBegin(block);
    Value table = block->getArgument(0), ins = block->getArgument(1),
          outs = block->getArgument(2);
    SmallVector<Value> args = {table};
    for (auto [i, t] : llvm::enumerate(impl.getArgumentTypes().drop_front())) {
      auto type = dyn_cast<MemRefType>(t);
      if (!type)
        return impl.emitError("entry argument ")
               << i << " is not a buffer after bufferisation: " << t;
      Value descPtr = loadPointer(wb, loc, ins, i);
      Value desc = LLVM::LoadOp::create(
          wb, loc, descriptorType(ctx, type.getRank()), descPtr);
      args.push_back(
          UnrealizedConversionCastOp::create(wb, loc, type, desc).getResult(0));
    }
    auto call = func::CallOp::create(wb, loc, impl, args);
    for (auto [i, r] : llvm::enumerate(call.getResults())) {
      auto type = dyn_cast<MemRefType>(r.getType());
      if (!type)
        return impl.emitError("entry result ")
               << i << " is not a buffer after bufferisation: " << r.getType();
      Value desc = UnrealizedConversionCastOp::create(
                       wb, loc, descriptorType(ctx, type.getRank()), r)
                       .getResult(0);
      LLVM::StoreOp::create(wb, loc, desc, loadPointer(wb, loc, outs, i));
    }
    func::ReturnOp::create(wb, loc);
    return success();
  }

  void emitMetadata(OpBuilder &b, ModuleOp module) {
    auto json = module->getAttrOfType<StringAttr>(kMetadataAttr);
    std::string text = json ? json.getValue().str() : "{}";
    text.push_back('\0');
    auto type = LLVM::LLVMArrayType::get(b.getI8Type(), text.size());
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    LLVM::GlobalOp::create(b, module.getLoc(), type, /*isConstant=*/true,
                           LLVM::Linkage::External, kMetadataSymbol,
                           b.getStringAttr(text));
    module->removeAttr(kMetadataAttr);
  }

  /// The functions `finalize-memref-to-llvm{use-generic-functions}` calls:
  /// through the hooks when a runtime is attached, else the C library.
  void emitAllocationFunctions(OpBuilder &b, ModuleOp module) {
    MLIRContext *ctx = module.getContext();
    Location loc = module.getLoc();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    auto voidTy = LLVM::LLVMVoidType::get(ctx);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(module.getBody());
    auto declare = [&](StringRef name, Type result, ArrayRef<Type> params) {
      if (auto f = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
        return f;
      return LLVM::LLVMFuncOp::create(
          b, loc, name, LLVM::LLVMFunctionType::get(result, params));
    };
    LLVM::LLVMFuncOp cAlignedAlloc = declare("aligned_alloc", ptr, {i64, i64});
    LLVM::LLVMFuncOp cFree = declare("free", voidTy, {ptr});

    // Builds `name(params) { if (hooks) return hooks->X(...); else c(...) }`.
    auto define = [&](StringRef name, Type result, ArrayRef<Type> params,
                      Hook hook,
                      function_ref<Value(OpBuilder &, ValueRange)> viaHook,
                      function_ref<Value(OpBuilder &, ValueRange)> viaLibc) {
      auto fn = LLVM::LLVMFuncOp::create(
          b, loc, name, LLVM::LLVMFunctionType::get(result, params),
          LLVM::Linkage::Internal);
      Block *entry = fn.addEntryBlock(b);
      Block *withHooks = new Block(), *withoutHooks = new Block();
      fn.getBody().push_back(withHooks);
      fn.getBody().push_back(withoutHooks);
      OpBuilder fb = OpBuilder::atBlockBegin(entry);
      HookTable t = loadHookTable(fb, loc, module);
      LLVM::CondBrOp::create(fb, loc, t.isNull, withoutHooks, withHooks);
      fb.setInsertionPointToStart(withHooks);
      SmallVector<Value> args(entry->getArguments());
      args.insert(args.begin(), loadHookFunction(fb, loc, t.table, hook));
      Value r = viaHook(fb, args);
      LLVM::ReturnOp::create(fb, loc, r ? ValueRange{r} : ValueRange{});
      fb.setInsertionPointToStart(withoutHooks);
      r = viaLibc(fb, entry->getArguments());
      LLVM::ReturnOp::create(fb, loc, r ? ValueRange{r} : ValueRange{});
    };
    auto cst = [&](OpBuilder &fb, int64_t v) {
      return LLVM::ConstantOp::create(fb, loc, i64, fb.getI64IntegerAttr(v))
          .getResult();
    };
    auto allocType = LLVM::LLVMFunctionType::get(ptr, {i64, i64});
    auto freeType = LLVM::LLVMFunctionType::get(voidTy, {ptr});
    // aligned_alloc needs a size that is a multiple of the alignment.
    auto roundUp = [&](OpBuilder &fb, Value size, Value align) {
      Value m = LLVM::SubOp::create(fb, loc, align, cst(fb, 1));
      Value s = LLVM::AddOp::create(fb, loc, size, m);
      Value notM = LLVM::XOrOp::create(fb, loc, m, cst(fb, -1));
      return LLVM::AndOp::create(fb, loc, s, notM).getResult();
    };
    define(
        "_mlir_memref_to_llvm_alloc", ptr, {i64}, Hook::Alloc,
        [&](OpBuilder &fb, ValueRange a) {
          return LLVM::CallOp::create(fb, loc, allocType,
                                      ValueRange{a[0], a[1], cst(fb, 64)})
              .getResult();
        },
        [&](OpBuilder &fb, ValueRange a) {
          return LLVM::CallOp::create(
                     fb, loc, cAlignedAlloc,
                     ValueRange{cst(fb, 64), roundUp(fb, a[0], cst(fb, 64))})
              .getResult();
        });
    define(
        "_mlir_memref_to_llvm_aligned_alloc", ptr, {i64, i64}, Hook::Alloc,
        [&](OpBuilder &fb, ValueRange a) {
          // (fn, alignment, size) -> fn(size, alignment)
          return LLVM::CallOp::create(fb, loc, allocType,
                                      ValueRange{a[0], a[2], a[1]})
              .getResult();
        },
        [&](OpBuilder &fb, ValueRange a) {
          return LLVM::CallOp::create(fb, loc, cAlignedAlloc,
                                      ValueRange{a[0], roundUp(fb, a[1], a[0])})
              .getResult();
        });
    define(
        "_mlir_memref_to_llvm_free", voidTy, {ptr}, Hook::Free,
        [&](OpBuilder &fb, ValueRange a) {
          LLVM::CallOp::create(fb, loc, freeType, ValueRange{a[0], a[1]});
          return Value();
        },
        [&](OpBuilder &fb, ValueRange a) {
          LLVM::CallOp::create(fb, loc, cFree, ValueRange{a[0]});
          return Value();
        });
    emitReleaseFunction(b, module);
  }

  /// TFC_RT_RELEASE_SYMBOL(data, bytes), where a kernel declared it (init
  /// consuming a weight): calls the release hook when the runtime set one.
  void emitReleaseFunction(OpBuilder &b, ModuleOp module) {
    auto decl = module.lookupSymbol<LLVM::LLVMFuncOp>(TFC_RT_RELEASE_SYMBOL);
    if (!decl || !decl.isExternal())
      return;
    MLIRContext *ctx = module.getContext();
    Location loc = decl.getLoc();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    auto voidTy = LLVM::LLVMVoidType::get(ctx);
    decl.setLinkage(LLVM::Linkage::Internal);
    Block *entry = decl.addEntryBlock(b);
    Block *withHooks = new Block(), *withHook = new Block(), *done = new Block();
    decl.getBody().push_back(withHooks);
    decl.getBody().push_back(withHook);
    decl.getBody().push_back(done);
    OpBuilder fb = OpBuilder::atBlockBegin(entry);
    HookTable t = loadHookTable(fb, loc, module);
    LLVM::CondBrOp::create(fb, loc, t.isNull, done, withHooks);
    fb.setInsertionPointToStart(withHooks);
    Value fn = loadHookFunction(fb, loc, t.table, Hook::Release);
    Value isNull = LLVM::ICmpOp::create(fb, loc, LLVM::ICmpPredicate::eq, fn,
                                        LLVM::ZeroOp::create(fb, loc, ptr));
    LLVM::CondBrOp::create(fb, loc, isNull, done, withHook);
    fb.setInsertionPointToStart(withHook);
    LLVM::CallOp::create(fb, loc, LLVM::LLVMFunctionType::get(voidTy, {ptr, i64}),
                         ValueRange{fn, entry->getArgument(0),
                                    entry->getArgument(1)});
    LLVM::BrOp::create(fb, loc, done);
    fb.setInsertionPointToStart(done);
    LLVM::ReturnOp::create(fb, loc, ValueRange{});
  }
};

} // namespace
