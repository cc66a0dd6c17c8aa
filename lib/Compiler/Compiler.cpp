//===- Compiler.cpp - The compiler as a library ---------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The pipeline tfc-compile runs, callable from anywhere: load (import,
// parse, check, instantiate), lower (fusion, quantisation, the target's
// tensor and lowering pipelines), emit (text, LLVM IR, objects, libraries,
// PTX, the weights manifest).
//
//===----------------------------------------------------------------------===//

#include "tfc/Compiler/Compiler.h"
#include "tfc/Compiler/Targets.h"

#include "tfc/Conversion/Passes.h"
#include "tfc/Dialect/Tfc/IR/TfcOps.h"
#include "tfc/Dialect/Tfc/Transforms/Passes.h"
#include "tfc/Frontend/AST.h"
#include "tfc/Frontend/Diagnostics.h"
#include "tfc/Frontend/MLIRGen.h"
#include "tfc/Frontend/Parser.h"
#include "tfc/Frontend/Sema.h"
#include "tfc/Import/Importer.h"
#include "tfc/Target/CPU/CPUTarget.h"
#include "tfc/Target/Host/Passes.h"
#include "tfc/Target/NVPTX/NVPTXTarget.h"
#include "tfc/Tuning/GemmTuning.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace llvm;
using namespace tfc::compiler;

namespace {
/// The largest description we read; anything bigger is surely not a model
/// description and would only make the frontend slow.
constexpr uint64_t kMaxInputBytes = 64 << 20;

/// --quantize: the storage format of linear weights, after fusion (which
/// makes the linears and merges projections).
/// The pass manager options of the command line (-mlir-print-ir-*, ...) and
/// -mlir-timing (the pass manager reports when it is destroyed).
mlir::LogicalResult applyCommandLine(mlir::PassManager &pm) {
  if (mlir::failed(mlir::applyPassManagerCLOptions(pm)))
    return mlir::failure();
  auto timing = std::make_unique<mlir::DefaultTimingManager>();
  mlir::applyDefaultTimingManagerCLOptions(*timing);
  if (timing->isEnabled())
    pm.enableTiming(std::move(timing));
  return mlir::success();
}

/// --compute-type=f16|bf16: the model's f32 values in that type.
void addComputeTypePass(mlir::PassManager &pm, const CompileOptions &options) {
  if (options.computeType == "f32")
    return;
  mlir::tfc::TfcConvertComputeTypeOptions convert;
  convert.type = options.computeType;
  pm.addPass(mlir::tfc::createTfcConvertComputeType(convert));
}

void addQuantizePass(mlir::PassManager &pm, const CompileOptions &options) {
  if (options.quantize.empty())
    return;
  mlir::tfc::TfcQuantizeWeightsOptions quantize;
  quantize.format = options.quantize;
  pm.addPass(mlir::tfc::createTfcQuantizeWeights(quantize));
}

/// --activation-block=256: the module attribute that
/// convert-tfc-linear-to-cpu-gemm reads (KernelConfig.h,
/// kActivationBlockAttr).
void setActivationBlock(mlir::ModuleOp module, const CompileOptions &options) {
  if (options.activationBlock != 32)
    module->setAttr(
        "tfc.activation_block",
        mlir::IntegerAttr::get(mlir::IntegerType::get(module.getContext(), 64),
                               options.activationBlock));
}

} // namespace

Stage tfc::compiler::stageForOutput(StringRef path) {
  StringRef ext = sys::path::extension(path);
  return ext == ".so"   ? Stage::Library
         : ext == ".o"  ? Stage::Object
         : ext == ".ll" ? Stage::LLVM
                        : Stage::Tfc;
}

std::string tfc::compiler::checkOptions(const CompileOptions &o, Stage stage,
                                        bool toStdout) {
  if ((stage == Stage::Library || stage == Stage::Object) && toStdout)
    return std::string("--emit=") + (stage == Stage::Library ? "lib" : "obj") +
           " needs an output file (-o model.so)";
  std::unique_ptr<TargetBackend> target = createTarget(o.target);
  if (!target)
    return "unknown target '" + o.target + "' (expected one of " +
           targetNames() + ")";
  if (std::string why = target->check(o, stage); !why.empty())
    return why;
  if (!o.cpuKernels.empty() && o.cpuKernels != "avx512" &&
      o.cpuKernels != "avx2")
    return "--cpu-kernels=" + o.cpuKernels + ": expected avx512 or avx2";
  if (o.cpuL1dKib < 0 || o.cpuL1dKib > 65536 ||
      (o.cpuL1dKib > 0 && o.cpuL1dKib < 4))
    return "--cpu-l1d-kib=" + std::to_string(o.cpuL1dKib) +
           ": expected an L1 data cache size in KiB (4 to 65536)";
  if (o.cpuL2Kib < 0 || o.cpuL2Kib > 1048576 ||
      (o.cpuL2Kib > 0 && o.cpuL2Kib < 16))
    return "--cpu-l2-kib=" + std::to_string(o.cpuL2Kib) +
           ": expected an L2 cache size in KiB (16 to 1048576)";
  if (!o.gemmTuning.empty()) {
    ::tfc::tuning::GemmTuning t;
    std::string why;
    if (!::tfc::tuning::parseGemmTuning(o.gemmTuning, t, why))
      return "--gemm-tuning=" + o.gemmTuning + ": " + why;
  }
  if (!o.tuneFile.empty() && o.tuneFile != "none" &&
      (!o.cpu.empty() || !o.features.empty()))
    return "--tune-file: a tuning record is this host's, and --cpu/--features "
           "build for another CPU (--gemm-tuning gives a blocking for any)";
  if (!o.cpuVariants.empty()) {
    if (!o.gemmTuning.empty() || (!o.tuneFile.empty() && o.tuneFile != "none"))
      return "--cpu-variants builds for CPUs other than the host; a tuning "
             "(--gemm-tuning, --tune-file) is measured on the host and "
             "applies to host builds only";
    if (!o.cpu.empty() || !o.features.empty() || !o.cpuKernels.empty() ||
        o.cpuL1dKib != 0 || o.cpuL2Kib != 0)
      return "--cpu-variants makes a CPU library with one build per CPU; it "
             "does not combine with --target=cuda, --cpu, --features, "
             "--cpu-kernels, --cpu-l1d-kib or --cpu-l2-kib";
    if (stage != Stage::Library)
      return "--cpu-variants makes a model library: write -o NAME.so (or "
             "--emit=lib)";
  }
  return "";
}

Session::Session(CompileOptions options) : options_(std::move(options)) {
  mlir::DialectRegistry registry;
  target_ = createTarget(options_.target);
  if (target_)
    target_->registerDialects(registry);
  else // load() and lower() report the unknown target
    mlir::tfc::registerCpuTargetDialects(registry);
  context_ = std::make_unique<mlir::MLIRContext>(registry);
  diags_ = std::make_unique<DiagnosticEngine>(sourceMgr_);
}

Session::~Session() = default;

mlir::LogicalResult Session::fail(const Twine &message) {
  error_ = message.str();
  return mlir::failure();
}

void Session::progress(const Twine &stage) {
  if (options_.progress)
    options_.progress(stage.str());
}

mlir::LogicalResult Session::load(StringRef path, bool stopAtAst) {
  progress("reading " + path);
  // A checkpoint (a Hugging Face directory or a .gguf file) is imported into
  // a model description first (what tfc-import writes).
  ErrorOr<std::unique_ptr<MemoryBuffer>> file = std::error_code();
  if (path != "-" && importer::isCheckpoint(path.str())) {
    importer::ImportedModel imported;
    std::string error;
    if (!importer::importCheckpoint(path.str(), imported, error))
      return fail(error);
    file =
        MemoryBuffer::getMemBufferCopy(imported.tfm, path + " (imported).tfm");
  } else {
    file = MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  }
  if (std::error_code ec = file.getError())
    return fail("cannot open '" + path + "': " + ec.message());
  if ((*file)->getBufferSize() > kMaxInputBytes)
    return fail("'" + path + "' is " + Twine((*file)->getBufferSize()) +
                " bytes; model descriptions are limited to 64 MiB");
  sourceMgr_.AddNewSourceBuffer(std::move(*file), SMLoc());

  if (!path.ends_with(".mlir")) {
    ast_ = parseModule(*diags_);
    if (diags_->hadError())
      return fail(""); // reported where it was found
    if (stopAtAst)
      return mlir::success();
    if (!checkModule(*ast_, *diags_))
      return fail(""); // reported where it was found
  }
  MLIRGenOptions gen;
  for (const std::string &d : options_.defines)
    if (!gen.addDefine(d))
      return fail("-D " + d + ": expected name=value, e.g. -D layers=2");
  gen.entry = options_.entry;
  gen.kvCache = options_.kvCache;
  gen.kvCacheLast = options_.kvCacheLast;
  gen.kvCacheHalf = options_.kvCacheHalf;
  gen.kvCacheRows = options_.kvCacheRows;
  // Each block call's ops stay recognisable, so that the layers can be
  // compiled once (tfc-outline-blocks); printed stages before that show the
  // model without the markers.
  gen.markBlocks = true;

  loadFrontendDialects(*context_);
  // MLIR diagnostics on the description's locations, for as long as the
  // session lives (the passes report through it too).
  handler_ = std::make_unique<mlir::SourceMgrDiagnosticHandler>(sourceMgr_,
                                                                context_.get());
  if (ast_)
    module_ = generateModule(*ast_, *context_, *diags_, gen);
  else
    module_ = mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr_, context_.get());
  if (!module_)
    return fail(""); // reported where it was found
  return mlir::success();
}

void Session::printAst(raw_ostream &os) {
  if (ast_)
    ast::print(*ast_, sourceMgr_, os);
}

mlir::LogicalResult Session::lower(Stage stage) {
  if (!module_)
    return fail("no model is loaded");
  if (lowered_)
    return fail("the model is already lowered");
  if (stage == Stage::Ast || stage == Stage::Tfc)
    return mlir::success();
  lowered_ = true;
  progress("lowering");
  if (!target_)
    return fail("unknown target '" + options_.target + "' (expected one of " +
                targetNames() + ")");
  if (std::string error = target_->configure(options_); !error.empty())
    return fail(error);
  mlir::PassManager pm(context_.get());
  if (options_.passManagerCLOptions && mlir::failed(applyCommandLine(pm)))
    return fail("bad pass manager options");
  mlir::tfc::FusionPipelineOptions fusion;
  fusion.remarks = options_.remarks;
  mlir::tfc::buildFusionPipeline(pm, fusion);
  addComputeTypePass(pm, options_);
  addQuantizePass(pm, options_);
  setActivationBlock(*module_, options_);
  target_->prepare(*module_);
  if (stage != Stage::Fused)
    target_->buildTensorPipeline(pm);
  if (stage == Stage::WeightsManifest) {
    mlir::tfc::LowerModelABIOptions abi;
    pm.addPass(mlir::tfc::createLowerModelABI(abi));
  } else if (stage != Stage::Fused && stage != Stage::Linalg) {
    target_->buildLoweringPipeline(pm, stage);
  }
  if (mlir::failed(pm.run(*module_)))
    return fail(""); // reported where it was found
  return mlir::success();
}

mlir::LogicalResult Session::write(StringRef path,
                                   function_ref<bool(raw_ostream &)> body,
                                   bool binary) {
  std::error_code ec;
  auto out = std::make_unique<ToolOutputFile>(
      path, ec, binary ? sys::fs::OF_None : sys::fs::OF_Text);
  if (ec)
    return fail("cannot write '" + path + "': " + ec.message());
  if (!body(out->os()))
    return mlir::failure();
  out->os().flush();
  if (out->os().has_error())
    return fail("cannot write '" + path + "'");
  out->keep();
  return mlir::success();
}

mlir::LogicalResult Session::emit(Stage stage, StringRef path) {
  std::string why = checkOptions(options_, stage, path == "-");
  if (!why.empty())
    return fail(why);
  if (stage == Stage::Ast && ast_)
    return write(path, [&](raw_ostream &os) {
      printAst(os);
      return true;
    });
  if (!options_.cpuVariants.empty())
    return emitVariants(path);
  if (mlir::failed(lower(stage)))
    return mlir::failure();
  std::string error;
  switch (stage) {
  case Stage::Ptx:
    return write(path, [&](raw_ostream &os) {
      if (mlir::succeeded(mlir::tfc::printPtx(*module_, os, error)))
        return true;
      error_ = error;
      return false;
    });
  case Stage::WeightsManifest: {
    auto attr = (*module_)->getAttrOfType<mlir::StringAttr>("tfc.abi_metadata");
    Expected<json::Value> metadata =
        json::parse(attr ? attr.getValue() : StringRef("{}"));
    if (!metadata)
      return fail(toString(metadata.takeError()));
    json::Object *root = metadata->getAsObject();
    json::Object manifest{{"model", *root->get("model")},
                          {"weights", *root->get("weights")}};
    return write(path, [&](raw_ostream &os) {
      os << formatv("{0:2}", json::Value(std::move(manifest))) << "\n";
      return true;
    });
  }
  case Stage::LLVM: {
    std::string ir;
    if (mlir::failed(
            target_->emitLLVMIR(*module_, ir, error)))
      return fail(error);
    return write(path, [&](raw_ostream &os) {
      os << ir;
      return true;
    });
  }
  case Stage::Object:
  case Stage::Library: {
    progress("generating machine code");
    if (stage == Stage::Object) {
      SmallVector<char, 0> object;
      if (mlir::failed(target_->emitObject(*module_, object, error)))
        return fail(error);
      return write(
          path,
          [&](raw_ostream &os) {
            os.write(object.data(), object.size());
            return true;
          },
          /*binary=*/true);
    }
    std::vector<SmallVector<char, 0>> objects;
    if (mlir::failed(target_->emitObjects(*module_, objects, error)))
      return fail(error);
    progress("linking");
    SmallVector<ArrayRef<char>> parts(objects.begin(), objects.end());
    if (mlir::failed(mlir::tfc::linkSharedLibrary(parts, path, error)))
      return fail(error);
    return mlir::success();
  }
  default:
    return write(path, [&](raw_ostream &os) {
      // Before tfc-outline-blocks the block markers are bookkeeping, not
      // the model (after it they are gone): printed from a copy without
      // them, so that the session can still compile the module.
      mlir::OwningOpRef<mlir::ModuleOp> printed = module_->clone();
      printed->walk([](mlir::Operation *op) {
        if (mlir::isa<mlir::tfc::BlockBeginOp, mlir::tfc::BlockEndOp>(op))
          op->erase();
      });
      printed->print(os);
      os << "\n";
      return true;
    });
  }
}

/// One build per CPU, each build's exported symbols suffixed, linked with
/// tfc_model_variants into one library (lib/Target/CPU/Variants.cpp).
mlir::LogicalResult Session::emitVariants(StringRef path) {
  if (!module_)
    return fail("no model is loaded");
  std::vector<std::string> suffixes;
  std::vector<SmallVector<char, 0>> objects;
  for (const std::string &name : options_.cpuVariants) {
    mlir::tfc::CpuTargetOptions target;
    target.cpu = StringRef(name).trim().str();
    if (target.cpu.empty())
      continue;
    // The CPU's features go into the variant's metadata: the runtime skips
    // a variant the host cannot run.
    target = mlir::tfc::resolveCpuTarget(target);
    target.outlineBlocks = !options_.inlineBlocks;
    std::string suffix = mlir::tfc::cpuVariantSuffix(target.cpu);
    if (is_contained(suffixes, suffix))
      return fail("--cpu-variants names '" + target.cpu + "' twice");
    mlir::OwningOpRef<mlir::ModuleOp> variant = module_->clone();
    setActivationBlock(*variant, options_);
    progress("lowering for " + target.cpu);
    mlir::PassManager pm(context_.get());
    if (options_.passManagerCLOptions && mlir::failed(applyCommandLine(pm)))
      return fail("bad pass manager options");
    mlir::tfc::FusionPipelineOptions fusion;
    fusion.remarks = options_.remarks && suffixes.empty();
    mlir::tfc::buildFusionPipeline(pm, fusion);
    addQuantizePass(pm, options_);
    mlir::tfc::buildCpuTensorPipeline(pm, mlir::tfc::cpuKernelIsa(target),
                                      target.l1dBytes, target.l2Bytes);
    mlir::tfc::buildCpuLoweringPipeline(pm, target);
    if (mlir::failed(pm.run(*variant)))
      return fail(""); // reported where it was found
    mlir::tfc::suffixExportedSymbols(*variant, suffix);
    std::string error;
    SmallVector<char, 0> object;
    progress("generating machine code for " + target.cpu);
    if (mlir::failed(
            mlir::tfc::emitCpuObject(*variant, target, object, error)))
      return fail(target.cpu + ": " + error);
    suffixes.push_back(suffix);
    objects.push_back(std::move(object));
  }
  if (suffixes.empty())
    return fail("--cpu-variants is empty");
  mlir::OwningOpRef<mlir::ModuleOp> list =
      mlir::tfc::buildVariantsModule(*context_, suffixes);
  mlir::tfc::CpuTargetOptions generic;
  generic.cpu = "x86-64";
  std::string error;
  SmallVector<char, 0> listObject;
  if (mlir::failed(mlir::tfc::emitObject(*list, generic, listObject, error)))
    return fail(error);
  SmallVector<ArrayRef<char>> all;
  for (const SmallVector<char, 0> &o : objects)
    all.push_back(o);
  all.push_back(listObject);
  progress("linking");
  if (mlir::failed(mlir::tfc::linkSharedLibrary(all, path, error)))
    return fail(error);
  return mlir::success();
}
