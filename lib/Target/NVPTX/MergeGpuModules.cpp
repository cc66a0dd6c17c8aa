//===- MergeGpuModules.cpp - The tfc-merge-gpu-modules pass ---------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Target/NVPTX/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

#include <map>
#include <string>

namespace mlir::tfc {
#define GEN_PASS_DEF_MERGEGPUMODULES
#include "tfc/Target/NVPTX/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kMergedName = "tfc_kernels";
constexpr int64_t kSharedAlignment = 16;

/// The kernel as text with its own name left out: equal texts are the same
/// kernel (the same operations, types, attributes and symbol references).
std::string fingerprint(SymbolOpInterface kernel) {
  StringAttr name = kernel.getNameAttr();
  kernel.setName(StringAttr::get(kernel->getContext(), "__tfc_kernel"));
  std::string text;
  llvm::raw_string_ostream os(text);
  kernel->print(os, OpPrintingFlags().printGenericOpForm().useLocalScope());
  kernel.setName(name);
  return text;
}

struct MergeGpuModulesPass
    : mlir::tfc::impl::MergeGpuModulesBase<MergeGpuModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> modules(module.getOps<gpu::GPUModuleOp>());
    if (modules.empty())
      return;
    OpBuilder b(module.getContext());
    b.setInsertionPointToEnd(module.getBody());
    auto merged = gpu::GPUModuleOp::create(b, module.getLoc(), "tfc_merged");
    SymbolTable mergedTable(merged);
    // (old module, old kernel) -> new kernel name.
    DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
    // A kernel identical to one already merged (the same op of another
    // layer: the same sizes, epilogue and types) is not kept twice; its
    // launches call the first.
    std::map<std::string, StringAttr> byBody;
    for (gpu::GPUModuleOp old : modules) {
      for (Operation &op :
           llvm::make_early_inc_range(old.getBody()->getOperations())) {
        auto symbol = dyn_cast<SymbolOpInterface>(op);
        if (!symbol)
          continue;
        StringAttr oldName = symbol.getNameAttr();
        std::string body;
        if (isa<gpu::GPUFuncOp>(op))
          body = fingerprint(symbol);
        if (!body.empty()) {
          auto it = byBody.find(body);
          if (it != byBody.end()) {
            renamed[{old.getNameAttr(), oldName}] = it->second;
            continue;
          }
        }
        op.remove();
        // Renames on a clash and returns the name it got.
        StringAttr newName = mergedTable.insert(&op);
        renamed[{old.getNameAttr(), oldName}] = newName;
        if (!body.empty())
          byBody.emplace(std::move(body), newName);
      }
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto it =
          renamed.find({launch.getKernelModuleName(), launch.getKernelName()});
      if (it == renamed.end())
        return;
      launch.setKernelAttr(SymbolRefAttr::get(
          b.getStringAttr(kMergedName), {FlatSymbolRefAttr::get(it->second)}));
    });
    for (gpu::GPUModuleOp old : modules)
      old.erase();
    // Shared buffers start on 16 bytes (the lowering would give them their
    // element's alignment): ldmatrix rows and cp.async copies need it.
    merged.walk([&](gpu::GPUFuncOp fn) {
      for (unsigned i = 0; i < fn.getNumWorkgroupAttributions(); ++i)
        fn.setWorkgroupAttributionAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                                       b.getI64IntegerAttr(kSharedAlignment));
    });
    merged.setName(kMergedName);
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    b.getUnitAttr());
  }
};

} // namespace
