//===- Descriptors.cpp - Memref descriptors and runtime hooks -------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Target/Host/Descriptors.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::tfc::cpu;

LLVM::LLVMStructType tfc::cpu::descriptorType(MLIRContext *ctx, int64_t rank) {
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  SmallVector<Type> fields = {ptr, ptr, i64};
  if (rank > 0) {
    auto array = LLVM::LLVMArrayType::get(i64, rank);
    fields.push_back(array);
    fields.push_back(array);
  }
  return LLVM::LLVMStructType::getLiteral(ctx, fields);
}

Value tfc::cpu::memrefFromPointer(OpBuilder &b, Location loc, Value data,
                                  MemRefType type, ValueRange dynamicSizes) {
  int64_t rank = type.getRank();
  auto descType = descriptorType(b.getContext(), rank);
  auto i64 = b.getI64Type();
  auto cst = [&](int64_t v) {
    return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v))
        .getResult();
  };
  Value desc = LLVM::UndefOp::create(b, loc, descType);
  desc = LLVM::InsertValueOp::create(b, loc, desc, data, ArrayRef<int64_t>{0});
  desc = LLVM::InsertValueOp::create(b, loc, desc, data, ArrayRef<int64_t>{1});
  desc = LLVM::InsertValueOp::create(b, loc, desc, cst(0), ArrayRef<int64_t>{2});
  SmallVector<Value> sizes;
  auto dyn = dynamicSizes.begin();
  for (int64_t s : type.getShape())
    sizes.push_back(ShapedType::isDynamic(s) ? *dyn++ : cst(s));
  Value stride = cst(1);
  for (int64_t d = rank - 1; d >= 0; --d) {
    desc = LLVM::InsertValueOp::create(b, loc, desc, sizes[d],
                                       ArrayRef<int64_t>{3, d});
    desc = LLVM::InsertValueOp::create(b, loc, desc, stride,
                                       ArrayRef<int64_t>{4, d});
    if (d > 0)
      stride = LLVM::MulOp::create(b, loc, stride, sizes[d]);
  }
  return UnrealizedConversionCastOp::create(b, loc, type, desc).getResult(0);
}

Value tfc::cpu::loadPointer(OpBuilder &b, Location loc, Value array,
                            int64_t i) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, array,
                                   ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
  return LLVM::LoadOp::create(b, loc, ptr, slot);
}

LLVM::GlobalOp tfc::cpu::getOrCreateHooksGlobal(OpBuilder &b,
                                                ModuleOp module) {
  if (auto g = module.lookupSymbol<LLVM::GlobalOp>(kHooksSymbol))
    return g;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  auto global = LLVM::GlobalOp::create(b, module.getLoc(), ptr,
                                       /*isConstant=*/false,
                                       LLVM::Linkage::External, kHooksSymbol,
                                       Attribute());
  // Initialised to null.
  Region &init = global.getInitializerRegion();
  b.setInsertionPointToStart(&init.emplaceBlock());
  Value null = LLVM::ZeroOp::create(b, module.getLoc(), ptr);
  LLVM::ReturnOp::create(b, module.getLoc(), null);
  return global;
}

HookTable tfc::cpu::loadHookTable(OpBuilder &b, Location loc,
                                  ModuleOp module) {
  LLVM::GlobalOp global = getOrCreateHooksGlobal(b, module);
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Value addr = LLVM::AddressOfOp::create(b, loc, global);
  Value table = LLVM::LoadOp::create(b, loc, ptr, addr);
  Value null = LLVM::ZeroOp::create(b, loc, ptr);
  Value isNull =
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, table, null);
  return {table, isNull};
}

Value tfc::cpu::loadHookFunction(OpBuilder &b, Location loc, Value table,
                                 Hook hook) {
  return loadPointer(b, loc, table, static_cast<int64_t>(hook));
}

LLVM::LLVMFuncOp tfc::cpu::getOrCreateMarker(OpBuilder &b, ModuleOp module,
                                             StringRef name) {
  if (auto f = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return f;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  MLIRContext *ctx = module.getContext();
  Type param = name == kFailIfMarker ? Type(IntegerType::get(ctx, 1))
                                     : Type(LLVM::LLVMPointerType::get(ctx));
  return LLVM::LLVMFuncOp::create(
      b, module.getLoc(), name,
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {param}));
}
