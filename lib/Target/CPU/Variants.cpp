//===- Variants.cpp - Several CPU builds of one model in one library ------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// A multi-versioned model library (`tfc-compile --cpu-variants=A,B`) holds
// one complete build of the model per target CPU, each compiled with its own
// features and kernels (KernelConfig.h), its exported symbols suffixed
// ("tfc_model_metadata__x86_64_v4"), plus `tfc_model_variants`, the list of
// suffixes in order of preference. The runtime picks the first variant whose
// target the host can run (docs/abi.md, "CPU variants"); only that one's
// constants are computed, so the weights are resident once.
//
//===----------------------------------------------------------------------===//

#include "tfc/Target/CPU/CPUTarget.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

void tfc::suffixExportedSymbols(ModuleOp module, llvm::StringRef suffix) {
  auto exported = [](LLVM::Linkage l) {
    return l != LLVM::Linkage::Internal && l != LLVM::Linkage::Private;
  };
  SmallVector<Operation *> renamed;
  for (Operation &op : module.getBody()->getOperations()) {
    if (auto f = dyn_cast<LLVM::LLVMFuncOp>(op)) {
      // Declarations are imports (libc, libm): their names stay.
      if (!f.isExternal() && exported(f.getLinkage()))
        renamed.push_back(&op);
    } else if (auto g = dyn_cast<LLVM::GlobalOp>(op)) {
      if (exported(g.getLinkage()))
        renamed.push_back(&op);
    }
  }
  for (Operation *op : renamed) {
    auto name = SymbolTable::getSymbolName(op).getValue().str();
    auto newName = StringAttr::get(module.getContext(), name + suffix.str());
    // Calls and address-of ops inside the module follow the new name.
    (void)SymbolTable::replaceAllSymbolUses(op, newName, module);
    SymbolTable::setSymbolName(op, newName);
  }
}

std::string tfc::cpuVariantSuffix(llvm::StringRef cpu) {
  std::string out = "__";
  for (char c : cpu)
    out += llvm::isAlnum(c) ? c : '_';
  return out;
}

OwningOpRef<ModuleOp>
tfc::buildVariantsModule(MLIRContext &context,
                         llvm::ArrayRef<std::string> suffixes) {
  context.getOrLoadDialect<LLVM::LLVMDialect>();
  OpBuilder b(&context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(b.getUnknownLoc());
  b.setInsertionPointToEnd(module->getBody());
  std::string text = llvm::join(suffixes, ",");
  text.push_back('\0');
  auto type = LLVM::LLVMArrayType::get(IntegerType::get(&context, 8),
                                       text.size());
  LLVM::GlobalOp::create(b, b.getUnknownLoc(), type, /*isConstant=*/true,
                         LLVM::Linkage::External, "tfc_model_variants",
                         b.getStringAttr(text));
  return module;
}
