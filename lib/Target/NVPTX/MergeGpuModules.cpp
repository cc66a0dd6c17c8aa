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

namespace mlir::tfc {
#define GEN_PASS_DEF_MERGEGPUMODULES
#include "tfc/Target/NVPTX/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kMergedName = "tfc_kernels";
constexpr int64_t kSharedAlignment = 16;

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
    for (gpu::GPUModuleOp old : modules) {
      for (Operation &op :
           llvm::make_early_inc_range(old.getBody()->getOperations())) {
        auto symbol = dyn_cast<SymbolOpInterface>(op);
        if (!symbol)
          continue;
        StringAttr oldName = symbol.getNameAttr();
        op.remove();
        // Renames on a clash and returns the name it got.
        StringAttr newName = mergedTable.insert(&op);
        renamed[{old.getNameAttr(), oldName}] = newName;
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
