//===- LowerGpuLaunches.cpp - The tfc-lower-gpu-launches pass -------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The host side of a CUDA model library. A launch
//
//   gpu.launch_func @tfc_kernels::@k blocks in (gx, gy, gz)
//       threads in (bx, by, bz) args(%a : memref<?x4xf32>, %n : index)
//
// becomes, in the LLVM dialect,
//
//   args = [&a.allocated, &a.aligned, &a.offset, &a.sizes[0], ...,  &n]
//   __tfc_cuda_launch(index_of(k), gx, gy, gz, bx, by, bz, 0, args, count)
//
// where the arguments are expanded exactly as convert-gpu-to-nvvm expands
// the kernel's parameters (the same LLVMTypeConverter), and
// __tfc_cuda_launch calls the runtime's `launch` hook (ModelABI.h). The PTX
// of each object of the gpu.binary becomes the exported NUL-terminated
// string `tfc_cuda_ptx_<arch>`; `tfc_cuda_kernels` lists the kernel names
// (newline-separated) in index order and `tfc_cuda_archs` the
// architectures (comma-separated).
//
//===----------------------------------------------------------------------===//

#include "tfc/Schemas/CudaEmulatorABI.h"
#include "tfc/Target/Host/Descriptors.h"

#include "tfc/Target/NVPTX/Passes.h"

#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"

#include "llvm/ADT/MapVector.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_LOWERGPULAUNCHES
#include "tfc/Target/NVPTX/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

constexpr llvm::StringLiteral kLaunchFn = "__tfc_cuda_launch";

/// `void __tfc_cuda_launch(i64 kernel, i64 gx, gy, gz, bx, by, bz,
/// i32 shared, ptr args, i64 count)`: forwards to hooks->launch when a
/// runtime is attached (without one a CUDA model cannot run).
LLVM::LLVMFuncOp getOrCreateLaunchFunction(OpBuilder &b, ModuleOp module) {
  if (auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(kLaunchFn))
    return fn;
  MLIRContext *ctx = b.getContext();
  Location loc = module.getLoc();
  auto i64 = IntegerType::get(ctx, 64), i32 = IntegerType::get(ctx, 32);
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  SmallVector<Type> params(7, i64);
  params.append({i32, ptr, i64});
  auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), params);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  auto fn = LLVM::LLVMFuncOp::create(b, loc, kLaunchFn, type,
                                     LLVM::Linkage::Internal);
  Block *entry = fn.addEntryBlock(b);
  Block *call = new Block(), *done = new Block();
  fn.getBody().push_back(call);
  fn.getBody().push_back(done);
  b.setInsertionPointToStart(entry);
  cpu::HookTable hooks = cpu::loadHookTable(b, loc, module);
  LLVM::CondBrOp::create(b, loc, hooks.isNull, done, call);
  b.setInsertionPointToStart(call);
  Value launch = cpu::loadHookFunction(b, loc, hooks.table, cpu::Hook::Launch);
  SmallVector<Value> args(entry->getArguments());
  args.insert(args.begin(), launch);
  LLVM::CallOp::create(b, loc, type, args);
  LLVM::BrOp::create(b, loc, done);
  b.setInsertionPointToStart(done);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
  return fn;
}

struct LaunchPattern : ConvertOpToLLVMPattern<gpu::LaunchFuncOp> {
  LaunchPattern(const LLVMTypeConverter &converter,
                const llvm::MapVector<StringAttr, int64_t> &kernels,
                LLVM::LLVMFuncOp launchFn)
      : ConvertOpToLLVMPattern(converter), kernels(kernels),
        launchFn(launchFn) {}

  LogicalResult
  matchAndRewrite(gpu::LaunchFuncOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getAsyncToken() || !op.getAsyncDependencies().empty())
      return rewriter.notifyMatchFailure(op, "async launches are not used");
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto i64 = IntegerType::get(ctx, 64), i32 = IntegerType::get(ctx, 32);
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    SmallVector<Value, 4> args = getTypeConverter()->promoteOperands(
        loc, op.getKernelOperands(), adaptor.getKernelOperands(), rewriter,
        /*useBarePtrCallConv=*/false);
    auto i64Const = [&](int64_t v) -> Value {
      return LLVM::ConstantOp::create(rewriter, loc, i64,
                                      rewriter.getI64IntegerAttr(v));
    };
    // An array of pointers to a stack copy of each argument, released after
    // the call (a launch inside a host loop must not grow the stack).
    Value stack = LLVM::StackSaveOp::create(rewriter, loc, ptr);
    Value array = LLVM::AllocaOp::create(
        rewriter, loc, ptr, ptr, i64Const(std::max<int64_t>(args.size(), 1)));
    for (auto [i, arg] : llvm::enumerate(args)) {
      Value slot = LLVM::AllocaOp::create(rewriter, loc, ptr, arg.getType(),
                                          i64Const(1));
      LLVM::StoreOp::create(rewriter, loc, arg, slot);
      Value at =
          LLVM::GEPOp::create(rewriter, loc, ptr, ptr, array,
                              ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
      LLVM::StoreOp::create(rewriter, loc, slot, at);
    }
    auto toI64 = [&](Value v) -> Value {
      if (v.getType() == i64)
        return v;
      if (isa<IndexType>(v.getType()))
        return getTypeConverter()->materializeTargetConversion(rewriter, loc,
                                                               i64, v);
      return LLVM::ZExtOp::create(rewriter, loc, i64, v);
    };
    Value shared = adaptor.getDynamicSharedMemorySize()
                       ? adaptor.getDynamicSharedMemorySize()
                       : LLVM::ConstantOp::create(rewriter, loc, i32,
                                                  rewriter.getI32IntegerAttr(0))
                             .getResult();
    SmallVector<Value> callArgs = {i64Const(kernels.lookup(op.getKernelName())),
                                   toI64(adaptor.getGridSizeX()),
                                   toI64(adaptor.getGridSizeY()),
                                   toI64(adaptor.getGridSizeZ()),
                                   toI64(adaptor.getBlockSizeX()),
                                   toI64(adaptor.getBlockSizeY()),
                                   toI64(adaptor.getBlockSizeZ()),
                                   shared,
                                   array,
                                   i64Const(args.size())};
    LLVM::CallOp::create(rewriter, loc, launchFn, callArgs);
    LLVM::StackRestoreOp::create(rewriter, loc, stack);
    rewriter.eraseOp(op);
    return success();
  }

  const llvm::MapVector<StringAttr, int64_t> &kernels;
  LLVM::LLVMFuncOp launchFn;
};

/// An exported, NUL-terminated string constant.
void exportString(OpBuilder &b, ModuleOp module, StringRef name,
                  StringRef value) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  std::string data = value.str();
  data.push_back('\0');
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(), data.size());
  LLVM::GlobalOp::create(b, module.getLoc(), type, /*isConstant=*/true,
                         LLVM::Linkage::External, name, b.getStringAttr(data));
}

struct LowerGpuLaunchesPass
    : mlir::tfc::impl::LowerGpuLaunchesBase<LowerGpuLaunchesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(module.getContext());

    // Kernel indices in order of first launch.
    llvm::MapVector<StringAttr, int64_t> kernels;
    module.walk([&](gpu::LaunchFuncOp launch) {
      kernels.insert({launch.getKernelName(), kernels.size()});
    });

    // The device code: one PTX string per architecture.
    SmallVector<std::string> archs;
    for (auto binary :
         llvm::make_early_inc_range(module.getOps<gpu::BinaryOp>())) {
      for (Attribute attr : binary.getObjects()) {
        auto object = cast<gpu::ObjectAttr>(attr);
        auto target = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget());
        StringRef ptx = object.getObject().getValue();
        // The CUDA emulator's image (tfc-emulate-gpu-modules) travels as the
        // PTX would: the runtime hands either to the driver.
        bool emulated = object.getFormat() == gpu::CompilationTarget::Binary &&
                        ptx.starts_with(StringRef(TFC_EMU_IMAGE_MAGIC,
                                                  TFC_EMU_IMAGE_MAGIC_BYTES));
        if (!target ||
            (object.getFormat() != gpu::CompilationTarget::Assembly &&
             !emulated)) {
          binary.emitError("expected NVVM objects in PTX (format=isa) or for "
                           "the CUDA emulator");
          return signalPassFailure();
        }
        // An unresolved device function (a libdevice __nv_* without
        // libdevice linked) would only fail in ptxas or at load time.
        SmallVector<StringRef> unresolved;
        for (size_t at = ptx.find(".extern .func"); at != StringRef::npos;
             at = ptx.find(".extern .func", at + 1)) {
          StringRef rest = ptx.substr(at);
          size_t open = rest.find('(');
          StringRef decl = rest.take_until([](char c) { return c == '\n'; });
          unresolved.push_back(decl.take_front(
              open == StringRef::npos ? decl.size()
                                      : std::min(open, decl.size())));
        }
        if (!unresolved.empty()) {
          InFlightDiagnostic d = binary.emitError()
                                 << "device code for " << target.getChip()
                                 << " calls functions that are not defined "
                                    "(is libdevice linked?):";
          for (StringRef u : unresolved)
            d << " '" << u.trim() << "'";
          return signalPassFailure();
        }
        std::string arch = target.getChip().str();
        if (llvm::is_contained(archs, arch)) {
          binary.emitError("two objects for ") << arch;
          return signalPassFailure();
        }
        archs.push_back(arch);
        exportString(b, module, "tfc_cuda_ptx_" + arch, ptx);
      }
      binary.erase();
    }
    if (archs.empty() && !kernels.empty()) {
      module.emitError("gpu.launch_func without a gpu.binary: run "
                       "gpu-module-to-binary first");
      return signalPassFailure();
    }
    std::string names, archList;
    for (auto &[name, index] : kernels)
      names += name.str() + "\n";
    archList = llvm::join(archs, ",");
    exportString(b, module, "tfc_cuda_kernels", names);
    exportString(b, module, "tfc_cuda_archs", archList);

    LLVM::LLVMFuncOp launchFn = getOrCreateLaunchFunction(b, module);
    LLVMTypeConverter converter(module.getContext());
    RewritePatternSet patterns(module.getContext());
    patterns.add<LaunchPattern>(converter, kernels, launchFn);
    ConversionTarget target(*module.getContext());
    target.addIllegalOp<gpu::LaunchFuncOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }
};

} // namespace
