//===- tfc-compile.cpp - The tfc compiler driver --------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//   tfc-compile model.tfm [--emit=ast|tfc|fused] [-o out] [--entry NAME]
//               [-D name=value ...]
//   tfc-compile CHECKPOINT -o model.so      (a Hugging Face directory or a
//                                           .gguf file: see tfc-import)
//
// Parses a .tfm model description, checks it, instantiates it into the tfc
// dialect and writes the requested stage. Errors are reported as
// file:line:col with the source line and a caret; the exit code is 1 after
// any error and the output file is only written on success.
//
//===----------------------------------------------------------------------===//

#include "tfc/Conversion/Passes.h"
#include "tfc/Dialect/Tfc/Transforms/Passes.h"
#include "tfc/Target/CPU/CPUTarget.h"
#include "tfc/Target/NVPTX/NVPTXTarget.h"
#include "tfc/Frontend/MLIRGen.h"
#include "tfc/Frontend/Parser.h"
#include "tfc/Frontend/Sema.h"
#include "tfc/Import/Importer.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace llvm;

namespace {
enum class Emit {
  Auto,
  Ast,
  Tfc,
  Fused,
  Linalg,
  LLVMDialect,
  LLVM,
  Obj,
  Lib,
  Ptx,
  WeightsManifest
};

cl::opt<std::string> inputFilename(cl::Positional,
                                   cl::desc("<model.tfm | model.mlir | "
                                            "checkpoint dir | model.gguf>"),
                                   cl::Required);
cl::opt<std::string> outputFilename("o", cl::desc("Output file ('-' = stdout)"),
                                    cl::value_desc("file"), cl::init("-"));
cl::opt<Emit> emit(
    "emit",
    cl::desc("What to produce (default: from the -o suffix: .so a model "
             "library, .o an object, .ll LLVM IR; otherwise tfc)"),
    cl::init(Emit::Auto),
    cl::values(
        clEnumValN(Emit::Ast, "ast", "the syntax tree"),
        clEnumValN(Emit::Tfc, "tfc", "the tfc dialect as written"),
        clEnumValN(Emit::Fused, "fused",
                   "the tfc dialect after the fusion pipeline"),
        clEnumValN(Emit::Linalg, "linalg",
                   "linalg/tensor and CPU kernel ops, before bufferisation"),
        clEnumValN(Emit::LLVMDialect, "llvm-dialect",
                   "the MLIR LLVM dialect, before translation"),
        clEnumValN(Emit::LLVM, "llvm", "optimised LLVM IR"),
        clEnumValN(Emit::Obj, "obj", "an object file"),
        clEnumValN(Emit::Lib, "lib", "a model shared library (.so)"),
        clEnumValN(Emit::Ptx, "ptx",
                   "the PTX of every kernel, per architecture (--target=cuda)"),
        clEnumValN(Emit::WeightsManifest, "weights-manifest",
                   "the weights the model expects, as JSON")));
enum class Target { Cpu, Cuda };
cl::opt<Target> target(
    "target", cl::desc("The target"), cl::init(Target::Cpu),
    cl::values(clEnumValN(Target::Cpu, "cpu", "x86-64 CPUs (default)"),
               clEnumValN(Target::Cuda, "cuda",
                          "NVIDIA GPUs (PTX) driven from x86-64 host code")));
cl::list<std::string>
    gpuArchs("gpu-arch", cl::CommaSeparated,
             cl::desc("GPU architectures for --target=cuda (default: "
                      "sm_80,sm_90)"),
             cl::value_desc("sm_XX,..."));
cl::opt<std::string> cudaPath(
    "cuda-path",
    cl::desc("The CUDA toolkit, for libdevice (default: $CUDA_HOME, then "
             "/usr/local/cuda)"),
    cl::value_desc("dir"));
cl::opt<std::string> cpu("cpu",
                         cl::desc("Target CPU (LLVM name; default: the host)"),
                         cl::value_desc("name"));
cl::opt<std::string>
    features("features",
             cl::desc("Target features, e.g. +avx512f,+fma (default: the "
                      "host's, or the CPU's)"),
             cl::value_desc("list"));
cl::opt<std::string> cpuVariants(
    "cpu-variants",
    cl::desc("A multi-versioned model library: one build per CPU of the "
             "comma-separated list (e.g. x86-64-v4,x86-64-v3), most capable "
             "first; the runtime runs the first one the host can"),
    cl::value_desc("cpu,cpu,..."));
cl::opt<std::string> cpuKernels(
    "cpu-kernels",
    cl::desc("The instruction set the CPU kernels are tiled for: avx512 or "
             "avx2 (default: from the target CPU's features). For testing "
             "and measuring one ISA's kernels on another"),
    cl::value_desc("isa"));
cl::opt<std::string> entry("entry",
                           cl::desc("Only compile this entry point"),
                           cl::value_desc("name"));
cl::list<std::string> defines("D", cl::Prefix,
                              cl::desc("Override a hyper-parameter"),
                              cl::value_desc("name=value"));
cl::opt<std::string> quantize(
    "quantize",
    cl::desc("Store linear weights block-quantised (q8_0, q4_0, q4_1: "
             "GGUF's formats, int8 kernels on the CPU) or not at all "
             "(none: dequantised at load). Default: as the model says (a "
             ".gguf's quantised tensors stay quantised)"),
    cl::value_desc("format"));

cl::opt<bool> kvCache(
    "kv-cache",
    cl::desc("Also generate <entry>_cached for generation: the tokens at "
             "positions [past, past + seq) with every layer's key/value "
             "cache as state buffers updated in place (docs/abi.md)"),
    cl::init(false));

cl::opt<bool> remarks("fusion-remarks",
                      cl::desc("Report what the fusion passes fused and why "
                               "they did not fuse a candidate"),
                      cl::init(false));

/// The largest description we read; anything bigger is surely not a model
/// description and would only make the frontend slow.
constexpr uint64_t kMaxInputBytes = 64 << 20;

/// Opens the output; it is kept only if the caller calls keep().
std::unique_ptr<ToolOutputFile> openOutput() {
  std::error_code ec;
  auto out = std::make_unique<ToolOutputFile>(outputFilename, ec,
                                              sys::fs::OF_Text);
  if (!ec)
    return out;
  errs() << "tfc-compile: error: cannot write '" << outputFilename
         << "': " << ec.message() << "\n";
  return nullptr;
}
/// The weights part of the metadata the ABI pass recorded.
int printWeightsManifest(mlir::ModuleOp module) {
  auto attr = module->getAttrOfType<mlir::StringAttr>("tfc.abi_metadata");
  Expected<json::Value> metadata =
      json::parse(attr ? attr.getValue() : StringRef("{}"));
  if (!metadata) {
    errs() << "tfc-compile: error: " << toString(metadata.takeError()) << "\n";
    return 1;
  }
  json::Object *root = metadata->getAsObject();
  json::Object manifest{{"model", *root->get("model")},
                        {"weights", *root->get("weights")}};
  std::unique_ptr<ToolOutputFile> out = openOutput();
  if (!out)
    return 1;
  out->os() << formatv("{0:2}", json::Value(std::move(manifest))) << "\n";
  out->keep();
  return 0;
}

int emitBinary(mlir::ModuleOp module,
               const mlir::tfc::CpuTargetOptions &options) {
  std::string error;
  if (emit == Emit::LLVM) {
    std::string ir;
    if (mlir::failed(mlir::tfc::emitLLVMIR(module, options, ir, error))) {
      errs() << "tfc-compile: error: " << error << "\n";
      return 1;
    }
    std::unique_ptr<ToolOutputFile> out = openOutput();
    if (!out)
      return 1;
    out->os() << ir;
    out->keep();
    return 0;
  }
  SmallVector<char, 0> object;
  if (mlir::failed(mlir::tfc::emitObject(module, options, object, error))) {
    errs() << "tfc-compile: error: " << error << "\n";
    return 1;
  }
  if (emit == Emit::Obj) {
    std::error_code ec;
    raw_fd_ostream os(outputFilename, ec, sys::fs::OF_None);
    if (!ec)
      os.write(object.data(), object.size());
    if (ec || os.has_error()) {
      errs() << "tfc-compile: error: cannot write '" << outputFilename
             << "'\n";
      return 1;
    }
    return 0;
  }
  if (mlir::failed(
          mlir::tfc::linkSharedLibrary(object, outputFilename, error))) {
    errs() << "tfc-compile: error: " << error << "\n";
    return 1;
  }
  return 0;
}

/// --cpu-variants: the model compiled once per CPU, each build's exported
/// symbols suffixed, linked with tfc_model_variants into one library
/// (lib/Target/CPU/Variants.cpp).
/// --quantize: the storage format of linear weights, after fusion (which
/// makes the linears and merges projections).
void addQuantizePass(mlir::PassManager &pm) {
  if (quantize.empty())
    return;
  mlir::tfc::TfcQuantizeWeightsOptions options;
  options.format = quantize;
  pm.addPass(mlir::tfc::createTfcQuantizeWeights(options));
}

int compileVariants(mlir::ModuleOp module, mlir::MLIRContext &context) {
  if (target == Target::Cuda || !cpu.empty() || !features.empty() ||
      !cpuKernels.empty()) {
    errs() << "tfc-compile: error: --cpu-variants makes a CPU library with "
              "one build per CPU; it does not combine with --target=cuda, "
              "--cpu, --features or --cpu-kernels\n";
    return 1;
  }
  if (emit != Emit::Lib) {
    errs() << "tfc-compile: error: --cpu-variants makes a model library: "
              "write -o NAME.so (or --emit=lib)\n";
    return 1;
  }
  SmallVector<StringRef> cpus;
  StringRef(cpuVariants).split(cpus, ',', -1, /*KeepEmpty=*/false);
  std::vector<std::string> suffixes;
  std::vector<SmallVector<char, 0>> objects;
  for (StringRef name : cpus) {
    mlir::tfc::CpuTargetOptions options;
    options.cpu = name.trim().str();
    // The CPU's features go into the variant's metadata: the runtime skips
    // a variant the host cannot run.
    options = mlir::tfc::resolveCpuTarget(options);
    std::string suffix = mlir::tfc::cpuVariantSuffix(options.cpu);
    if (llvm::is_contained(suffixes, suffix)) {
      errs() << "tfc-compile: error: --cpu-variants names '" << options.cpu
             << "' twice\n";
      return 1;
    }
    mlir::OwningOpRef<mlir::ModuleOp> variant = module.clone();
    mlir::PassManager pm(&context);
    if (mlir::failed(mlir::applyPassManagerCLOptions(pm)))
      return 1;
    mlir::tfc::FusionPipelineOptions fusion;
    fusion.remarks = remarks && suffixes.empty();
    mlir::tfc::buildFusionPipeline(pm, fusion);
    addQuantizePass(pm);
    mlir::tfc::buildCpuTensorPipeline(pm,
                                      mlir::tfc::cpuKernelIsa(options));
    mlir::tfc::buildCpuLoweringPipeline(pm, options);
    if (mlir::failed(pm.run(*variant)))
      return 1;
    mlir::tfc::suffixExportedSymbols(*variant, suffix);
    std::string error;
    SmallVector<char, 0> object;
    if (mlir::failed(
            mlir::tfc::emitObject(*variant, options, object, error))) {
      errs() << "tfc-compile: error: " << options.cpu << ": " << error
             << "\n";
      return 1;
    }
    suffixes.push_back(suffix);
    objects.push_back(std::move(object));
  }
  if (suffixes.empty()) {
    errs() << "tfc-compile: error: --cpu-variants is empty\n";
    return 1;
  }
  mlir::OwningOpRef<mlir::ModuleOp> list =
      mlir::tfc::buildVariantsModule(context, suffixes);
  mlir::tfc::CpuTargetOptions generic;
  generic.cpu = "x86-64";
  std::string error;
  SmallVector<char, 0> listObject;
  if (mlir::failed(mlir::tfc::emitObject(*list, generic, listObject, error))) {
    errs() << "tfc-compile: error: " << error << "\n";
    return 1;
  }
  SmallVector<ArrayRef<char>> all;
  for (const SmallVector<char, 0> &o : objects)
    all.push_back(o);
  all.push_back(listObject);
  if (mlir::failed(
          mlir::tfc::linkSharedLibrary(all, outputFilename, error))) {
    errs() << "tfc-compile: error: " << error << "\n";
    return 1;
  }
  return 0;
}
} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::tfc::registerTfcConversionPasses();
  cl::ParseCommandLineOptions(argc, argv,
                              "tfc-compile: compiles a .tfm transformer model "
                              "description\n");

  // A checkpoint (a Hugging Face directory or a .gguf file) is imported into
  // a model description first (what tfc-import writes).
  ErrorOr<std::unique_ptr<MemoryBuffer>> fileOrErr = std::error_code();
  if (inputFilename != "-" && tfc::importer::isCheckpoint(inputFilename)) {
    tfc::importer::ImportedModel imported;
    std::string error;
    if (!tfc::importer::importCheckpoint(inputFilename, imported, error)) {
      errs() << "tfc-compile: error: " << error << "\n";
      return 1;
    }
    fileOrErr = MemoryBuffer::getMemBufferCopy(
        imported.tfm, inputFilename + " (imported).tfm");
  } else {
    fileOrErr = MemoryBuffer::getFileOrSTDIN(inputFilename, /*IsText=*/true);
  }
  if (std::error_code ec = fileOrErr.getError()) {
    errs() << "tfc-compile: error: cannot open '" << inputFilename
           << "': " << ec.message() << "\n";
    return 1;
  }
  if ((*fileOrErr)->getBufferSize() > kMaxInputBytes) {
    errs() << "tfc-compile: error: '" << inputFilename << "' is "
           << (*fileOrErr)->getBufferSize()
           << " bytes; model descriptions are limited to 64 MiB\n";
    return 1;
  }

  if (emit == Emit::Auto) {
    StringRef ext = sys::path::extension(outputFilename);
    emit = ext == ".so"   ? Emit::Lib
           : ext == ".o"  ? Emit::Obj
           : ext == ".ll" ? Emit::LLVM
                          : Emit::Tfc;
  }
  if ((emit == Emit::Lib || emit == Emit::Obj) && outputFilename == "-") {
    errs() << "tfc-compile: error: --emit=" << (emit == Emit::Lib ? "lib" : "obj")
           << " needs an output file (-o model.so)\n";
    return 1;
  }

  SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*fileOrErr), SMLoc());
  tfc::DiagnosticEngine diags(sourceMgr);
  bool cuda = target == Target::Cuda;
  if (emit == Emit::Ptx && !cuda) {
    errs() << "tfc-compile: error: --emit=ptx needs --target=cuda\n";
    return 1;
  }
  mlir::tfc::CudaTargetOptions cudaOptions;
  if (!gpuArchs.empty())
    cudaOptions.archs.assign(gpuArchs.begin(), gpuArchs.end());
  cudaOptions.cudaPath = cudaPath;
  if (cuda) {
    std::string error;
    if (mlir::failed(mlir::tfc::resolveCudaTarget(cudaOptions, error))) {
      errs() << "tfc-compile: error: " << error << "\n";
      return 1;
    }
  }

  mlir::DialectRegistry registry;
  if (cuda)
    mlir::tfc::registerCudaTargetDialects(registry);
  else
    mlir::tfc::registerCpuTargetDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module;
  bool isMlir = StringRef(inputFilename).ends_with(".mlir");

  std::unique_ptr<tfc::ast::Module> ast;
  if (!isMlir)
    ast = tfc::parseModule(diags);
  if (diags.hadError())
    return 1;
  if (emit == Emit::Ast && !isMlir) {
    std::unique_ptr<ToolOutputFile> out = openOutput();
    if (!out)
      return 1;
    tfc::ast::print(*ast, sourceMgr, out->os());
    out->keep();
    return 0;
  }
  if (!isMlir && !tfc::checkModule(*ast, diags))
    return 1;

  tfc::MLIRGenOptions options;
  for (const std::string &d : defines) {
    if (!options.addDefine(d)) {
      errs() << "tfc-compile: error: -D " << d
             << ": expected name=value, e.g. -D layers=2\n";
      return 1;
    }
  }
  options.entry = entry;
  options.kvCache = kvCache;

  tfc::loadFrontendDialects(context);
  mlir::SourceMgrDiagnosticHandler mlirDiags(sourceMgr, &context);
  if (isMlir)
    module = mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  else
    module = tfc::generateModule(*ast, context, diags, options);
  if (!module)
    return 1;

  if (!cpuKernels.empty() && cpuKernels != "avx512" && cpuKernels != "avx2") {
    errs() << "tfc-compile: error: --cpu-kernels=" << cpuKernels
           << ": expected avx512 or avx2\n";
    return 1;
  }
  if (!cpuVariants.empty())
    return compileVariants(*module, context);
  bool lower = emit != Emit::Tfc && emit != Emit::Ast;
  mlir::tfc::CpuTargetOptions targetOptions;
  targetOptions.cpu = cpu;
  targetOptions.features = features;
  // The host side of a CUDA model is glue: portable x86-64 unless asked.
  if (cuda && cpu.empty() && features.empty())
    targetOptions.cpu = "x86-64";
  targetOptions = mlir::tfc::resolveCpuTarget(targetOptions);
  if (lower) {
    mlir::PassManager pm(&context);
    if (mlir::failed(mlir::applyPassManagerCLOptions(pm)))
      return 1;
    mlir::tfc::FusionPipelineOptions fusion;
    fusion.remarks = remarks;
    mlir::tfc::buildFusionPipeline(pm, fusion);
    addQuantizePass(pm);
    if (cuda)
      mlir::tfc::setCudaTarget(*module);
    if (emit != Emit::Fused) {
      if (cuda)
        mlir::tfc::buildCudaTensorPipeline(pm);
      else
        mlir::tfc::buildCpuTensorPipeline(
            pm, cpuKernels.empty() ? mlir::tfc::cpuKernelIsa(targetOptions)
                                   : std::string(cpuKernels));
    }
    if (emit == Emit::WeightsManifest) {
      mlir::tfc::LowerCpuModelABIOptions abi;
      pm.addPass(mlir::tfc::createLowerCpuModelABI(abi));
    } else if (emit != Emit::Fused && emit != Emit::Linalg) {
      if (cuda)
        mlir::tfc::buildCudaLoweringPipeline(pm, cudaOptions, targetOptions,
                                             /*deviceCodeOnly=*/emit ==
                                                 Emit::Ptx);
      else
        mlir::tfc::buildCpuLoweringPipeline(pm, targetOptions);
    }
    if (mlir::failed(pm.run(*module)))
      return 1;
  }

  if (emit == Emit::Ptx) {
    std::unique_ptr<ToolOutputFile> out = openOutput();
    if (!out)
      return 1;
    std::string error;
    if (mlir::failed(mlir::tfc::printPtx(*module, out->os(), error))) {
      errs() << "tfc-compile: error: " << error << "\n";
      return 1;
    }
    out->keep();
    return 0;
  }
  if (emit == Emit::WeightsManifest)
    return printWeightsManifest(*module);
  if (emit == Emit::LLVM || emit == Emit::Obj || emit == Emit::Lib)
    return emitBinary(*module, targetOptions);

  std::unique_ptr<ToolOutputFile> out = openOutput();
  if (!out)
    return 1;
  module->print(out->os());
  out->os() << "\n";
  out->keep();
  return 0;
}
