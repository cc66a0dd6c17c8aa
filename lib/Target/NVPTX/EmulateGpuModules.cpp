//===- EmulateGpuModules.cpp - The tfc-emulate-gpu-modules pass -----------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Compiles each gpu.module (in the LLVM and NVVM dialects, as
// gpu-module-to-binary would take it) for the host CPU instead of to PTX,
// for libtfc_cuda_emulator.so to run (include/tfc/Schemas/CudaEmulatorABI.h):
//
//   - the module is translated to LLVM IR as for PTX, then made host code:
//     shared and constant memory become ordinary globals (external, so that
//     no optimisation assumes another thread cannot write them across a
//     barrier), kernels and device functions get the C calling convention;
//   - each NVVM intrinsic becomes a call of the emulator's handler with the
//     operation's number and its arguments in 8-byte slots, so that
//     barriers, shuffles and mma.sync can be collective across the emulated
//     threads; an intrinsic the emulator does not know is an error naming it;
//   - libdevice's __nv_* functions become the C library's;
//   - each kernel gets an entry point that unpacks cuLaunchKernel's
//     parameter array.
//
// The module is optimised and compiled for the host's CPU options and
// linked into a shared object, which becomes the object of the gpu.binary
// (format `bin`) for each of the module's NVVM targets.
//
//===----------------------------------------------------------------------===//

#include "tfc/Schemas/CudaEmulatorABI.h"
#include "tfc/Target/Host/HostTarget.h"
#include "tfc/Target/NVPTX/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_EMULATEGPUMODULES
#include "tfc/Target/NVPTX/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// libdevice functions and the C library function of the same meaning (the
/// emulator checks kernels' logic, not libdevice's last bit).
std::optional<StringRef> libmName(StringRef name) {
  if (!name.consume_front("__nv_"))
    return std::nullopt;
  name.consume_front("fast_");
  static const char *const known[] = {
      "expf",  "exp",       "exp2f",   "exp2",   "expm1f", "expm1",  "logf",
      "log",   "log2f",     "log2",    "log1pf", "log1p",  "log10f", "log10",
      "powf",  "pow",       "sqrtf",   "sqrt",   "cbrtf",  "cbrt",   "tanhf",
      "tanh",  "sinf",      "sin",     "cosf",   "cos",    "tanf",   "tan",
      "erff",  "erf",       "erfcf",   "erfc",   "fabsf",  "fabs",   "floorf",
      "floor", "ceilf",     "ceil",    "roundf", "round",  "truncf", "trunc",
      "fmaxf", "fmax",      "fminf",   "fmin",   "fmodf",  "fmod",   "atanf",
      "atan",  "atan2f",    "atan2",   "asinf",  "asin",   "acosf",  "acos",
      "sinhf", "sinh",      "coshf",   "cosh",   "rintf",  "rint",   "fmaf",
      "fma",   "copysignf", "copysign"};
  for (const char *k : known)
    if (name == k)
      return StringRef(k);
  return std::nullopt;
}

/// An internal function of `decl`'s type that passes its arguments to the
/// emulator's handler in 8-byte slots and returns what it wrote back.
llvm::Function *buildHandlerCall(llvm::Function &decl, int op,
                                 llvm::GlobalVariable &handler,
                                 std::string &error) {
  llvm::Module &m = *decl.getParent();
  llvm::LLVMContext &ctx = m.getContext();
  const llvm::DataLayout &layout = m.getDataLayout();
  llvm::FunctionType *type = decl.getFunctionType();
  auto fits = [&](llvm::Type *t) {
    return t->isSized() && layout.getTypeStoreSize(t) <= 8;
  };
  SmallVector<llvm::Type *> results;
  llvm::Type *ret = type->getReturnType();
  if (auto *st = llvm::dyn_cast<llvm::StructType>(ret))
    results.append(st->element_begin(), st->element_end());
  else if (!ret->isVoidTy())
    results.push_back(ret);
  bool ok = type->getNumParams() <= TFC_EMU_MAX_ARGS &&
            results.size() <= TFC_EMU_MAX_RESULTS;
  for (llvm::Type *t : type->params())
    ok = ok && fits(t);
  for (llvm::Type *t : results)
    ok = ok && fits(t);
  if (!ok) {
    error = "the CUDA emulator cannot pass the operands of '" +
            decl.getName().str() + "'";
    return nullptr;
  }

  auto *fn = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage,
                                    "__tfc_emu_" + decl.getName().str(), m);
  auto *entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  llvm::IRBuilder<> b(entry);
  llvm::Type *i64 = b.getInt64Ty();
  llvm::Value *args =
      b.CreateAlloca(i64, b.getInt32(std::max<unsigned>(1, fn->arg_size())));
  for (llvm::Argument &a : fn->args())
    b.CreateStore(&a, b.CreateConstGEP1_32(i64, args, a.getArgNo()));
  llvm::Value *slots =
      b.CreateAlloca(i64, b.getInt32(std::max<unsigned>(1, results.size())));
  llvm::Type *ptr = b.getPtrTy();
  auto *handlerType = llvm::FunctionType::get(
      b.getVoidTy(), {b.getInt32Ty(), ptr, ptr}, /*isVarArg=*/false);
  llvm::Value *callee = b.CreateLoad(ptr, &handler);
  b.CreateCall(handlerType, callee, {b.getInt32(op), args, slots});
  if (ret->isVoidTy()) {
    b.CreateRetVoid();
  } else if (llvm::isa<llvm::StructType>(ret)) {
    llvm::Value *agg = llvm::PoisonValue::get(ret);
    for (auto [i, t] : llvm::enumerate(results))
      agg = b.CreateInsertValue(
          agg, b.CreateLoad(t, b.CreateConstGEP1_32(i64, slots, i)), i);
    b.CreateRet(agg);
  } else {
    b.CreateRet(b.CreateLoad(ret, slots));
  }
  return fn;
}

/// rsqrt(x) = 1 / sqrt(x), which the C library lacks.
llvm::Function *buildReciprocalSqrt(llvm::Function &decl) {
  auto *fn = llvm::Function::Create(
      decl.getFunctionType(), llvm::GlobalValue::InternalLinkage,
      "__tfc_emu" + decl.getName().drop_front(4), decl.getParent());
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(decl.getContext(), "entry", fn));
  llvm::Value *x = fn->getArg(0);
  llvm::Value *root = b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x);
  b.CreateRet(b.CreateFDiv(llvm::ConstantFP::get(x->getType(), 1.0), root));
  return fn;
}

/// bfloat __truncsfbf2(float), which x86 code generation calls for f32 ->
/// bf16 on CPUs without AVX-512 BF16 and which libgcc has only from GCC 13:
/// round to nearest even on the bits, NaNs kept quiet.
void defineTruncToBf16(llvm::Module &m) {
  llvm::LLVMContext &ctx = m.getContext();
  auto *type = llvm::FunctionType::get(llvm::Type::getBFloatTy(ctx),
                                       {llvm::Type::getFloatTy(ctx)}, false);
  auto *fn = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                                    "__truncsfbf2", m);
  fn->setVisibility(llvm::GlobalValue::HiddenVisibility);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  llvm::Value *bits = b.CreateBitCast(fn->getArg(0), b.getInt32Ty());
  llvm::Value *lsb = b.CreateAnd(b.CreateLShr(bits, 16), 1);
  llvm::Value *rounded =
      b.CreateLShr(b.CreateAdd(bits, b.CreateAdd(lsb, b.getInt32(0x7fff))), 16);
  llvm::Value *quiet = b.CreateOr(b.CreateLShr(bits, 16), 0x40);
  llvm::Value *isNan =
      b.CreateICmpUGT(b.CreateAnd(bits, 0x7fffffff), b.getInt32(0x7f800000));
  llvm::Value *half =
      b.CreateTrunc(b.CreateSelect(isNan, quiet, rounded), b.getInt16Ty());
  b.CreateRet(b.CreateBitCast(half, llvm::Type::getBFloatTy(ctx)));
}

/// Makes the NVPTX module `m` host code for the emulator; false with
/// `error` naming what it cannot emulate.
bool prepareForEmulation(llvm::Module &m, std::string &error) {
  llvm::LLVMContext &ctx = m.getContext();
  if (llvm::NamedMDNode *annotations = m.getNamedMetadata("nvvm.annotations"))
    m.eraseNamedMetadata(annotations);

  // Shared (3), global (1) and constant (4) memory: one address space on
  // the host (x86 casts between address spaces below 256 are no-ops).
  for (llvm::GlobalVariable &g : llvm::make_early_inc_range(m.globals())) {
    if (g.getAddressSpace() == 0)
      continue;
    if (g.isDeclaration()) {
      error = "the CUDA emulator cannot run kernels with external or "
              "dynamic shared memory ('" +
              g.getName().str() + "')";
      return false;
    }
    llvm::Constant *init = g.hasInitializer()
                               ? g.getInitializer()
                               : llvm::Constant::getNullValue(g.getValueType());
    if (llvm::isa<llvm::UndefValue>(init))
      init = llvm::Constant::getNullValue(g.getValueType());
    auto *host = new llvm::GlobalVariable(
        m, g.getValueType(), g.isConstant(),
        g.isConstant() ? llvm::GlobalValue::InternalLinkage
                       : llvm::GlobalValue::ExternalLinkage,
        init, "__tfc_emu_global_" + g.getName(), nullptr,
        llvm::GlobalValue::NotThreadLocal, 0);
    host->setAlignment(g.getAlign());
    if (!g.isConstant())
      host->setVisibility(llvm::GlobalValue::HiddenVisibility);
    g.replaceAllUsesWith(
        llvm::ConstantExpr::getAddrSpaceCast(host, g.getType()));
    g.eraseFromParent();
  }

  auto *handler = new llvm::GlobalVariable(
      m, llvm::PointerType::get(ctx, 0), /*isConstant=*/false,
      llvm::GlobalValue::ExternalLinkage,
      llvm::ConstantPointerNull::get(llvm::PointerType::get(ctx, 0)),
      TFC_EMU_HANDLER_SYMBOL);
  llvm::StringMap<int> ops;
  for (int i = 0; i < TFC_EMU_OP_COUNT; ++i)
    ops[tfc_emu_op_names[i]] = i;

  SmallVector<llvm::Function *> kernels;
  SmallVector<std::string> unknown;
  SmallVector<llvm::Function *> functions;
  for (llvm::Function &f : m.functions())
    functions.push_back(&f);
  for (llvm::Function *fp : functions) {
    llvm::Function &f = *fp;
    if (f.getCallingConv() == llvm::CallingConv::PTX_Kernel)
      kernels.push_back(&f);
    f.setCallingConv(llvm::CallingConv::C);
    f.removeFnAttr("target-cpu");
    f.removeFnAttr("target-features");
    for (llvm::User *u : f.users())
      if (auto *call = llvm::dyn_cast<llvm::CallBase>(u))
        call->setCallingConv(llvm::CallingConv::C);
    if (!f.isDeclaration())
      continue;
    StringRef name = f.getName();
    if (auto it = ops.find(name); it != ops.end()) {
      llvm::Function *call = buildHandlerCall(f, it->second, *handler, error);
      if (!call)
        return false;
      f.replaceAllUsesWith(call);
      f.eraseFromParent();
    } else if (name.starts_with("llvm.nvvm.")) {
      unknown.push_back(name.str());
    } else if (name == "__nv_rsqrtf" || name == "__nv_rsqrt") {
      f.replaceAllUsesWith(buildReciprocalSqrt(f));
      f.eraseFromParent();
    } else if (std::optional<StringRef> libm = libmName(name)) {
      llvm::FunctionCallee c =
          m.getOrInsertFunction(*libm, f.getFunctionType());
      f.replaceAllUsesWith(c.getCallee());
      f.eraseFromParent();
    } else if (!f.isIntrinsic()) {
      unknown.push_back(name.str());
    }
  }
  if (!unknown.empty()) {
    error = "the CUDA emulator does not implement " +
            llvm::join(unknown, ", ") +
            " (include/tfc/Schemas/CudaEmulatorABI.h lists what it does)";
    return false;
  }

  defineTruncToBf16(m);

  // Entry points: void __tfc_emu_kernel_<name>(ptr params).
  for (llvm::Function *kernel : kernels) {
    auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx),
                                         {llvm::PointerType::get(ctx, 0)},
                                         /*isVarArg=*/false);
    auto *entry =
        llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                               TFC_EMU_KERNEL_PREFIX + kernel->getName(), m);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
    SmallVector<llvm::Value *> args;
    for (llvm::Argument &a : kernel->args()) {
      llvm::Value *slot = b.CreateLoad(
          b.getPtrTy(),
          b.CreateConstGEP1_32(b.getPtrTy(), entry->getArg(0), a.getArgNo()));
      args.push_back(b.CreateLoad(a.getType(), slot));
    }
    b.CreateCall(kernel, args);
    b.CreateRetVoid();
    // The parameter sizes, as cuFuncGetParamInfo reports them.
    SmallVector<uint64_t> sizes = {kernel->arg_size()};
    for (llvm::Argument &a : kernel->args())
      sizes.push_back(m.getDataLayout().getTypeAllocSize(a.getType()));
    auto *table = llvm::ConstantDataArray::get(ctx, sizes);
    new llvm::GlobalVariable(m, table->getType(), /*isConstant=*/true,
                             llvm::GlobalValue::ExternalLinkage, table,
                             TFC_EMU_PARAMS_PREFIX + kernel->getName());
    kernel->setLinkage(llvm::GlobalValue::InternalLinkage);
  }
  return true;
}

/// The emulator image of `gpuModule`: magic, size, shared object.
FailureOr<std::string> compileForEmulator(gpu::GPUModuleOp gpuModule,
                                          const CpuTargetOptions &host) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module =
      translateModuleToLLVMIR(gpuModule, context, gpuModule.getName());
  if (!module)
    return emitError(gpuModule.getLoc(), "translation to LLVM IR failed");
  std::string error;
  if (!prepareForEmulation(*module, error))
    return emitError(gpuModule.getLoc(), error);
  SmallVector<char> object;
  if (failed(emitObject(*module, host, object, error)))
    return emitError(gpuModule.getLoc(),
                     "compiling the kernels for the emulator: ")
           << error;
  SmallString<128> path;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("tfc-emu", "so", path))
    return emitError(gpuModule.getLoc(), "cannot create a temporary file: ")
           << ec.message();
  llvm::scope_exit remove([&] { llvm::sys::fs::remove(path); });
  if (failed(linkSharedLibrary(ArrayRef<char>(object), path, error)))
    return emitError(gpuModule.getLoc(), error);
  auto library = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!library)
    return emitError(gpuModule.getLoc(), "cannot read ") << path;
  std::string image(TFC_EMU_IMAGE_MAGIC, TFC_EMU_IMAGE_MAGIC_BYTES);
  uint64_t size = (*library)->getBufferSize();
  for (int i = 0; i < 8; ++i)
    image.push_back(static_cast<char>((size >> (8 * i)) & 0xff));
  image += (*library)->getBuffer().str();
  return image;
}

struct EmulateGpuModulesPass
    : mlir::tfc::impl::EmulateGpuModulesBase<EmulateGpuModulesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    CpuTargetOptions host;
    host.cpu = cpu;
    host.features = features;
    host.optLevel = optLevel;
    for (auto gpuModule :
         llvm::make_early_inc_range(module.getOps<gpu::GPUModuleOp>())) {
      ArrayAttr targets = gpuModule.getTargetsAttr();
      if (!targets || targets.empty()) {
        gpuModule.emitError("a gpu.module without targets: attach the NVVM "
                            "targets first");
        return signalPassFailure();
      }
      FailureOr<std::string> image = compileForEmulator(gpuModule, host);
      if (failed(image))
        return signalPassFailure();
      OpBuilder b(gpuModule);
      StringAttr bytes = b.getStringAttr(*image);
      SmallVector<Attribute> objects;
      for (Attribute target : targets)
        objects.push_back(gpu::ObjectAttr::get(
            b.getContext(), target, gpu::CompilationTarget::Binary, bytes,
            /*properties=*/nullptr, /*kernels=*/nullptr));
      gpu::BinaryOp::create(b, gpuModule.getLoc(), gpuModule.getName(),
                            /*offloadingHandler=*/nullptr,
                            b.getArrayAttr(objects));
      gpuModule.erase();
    }
  }
};

} // namespace
