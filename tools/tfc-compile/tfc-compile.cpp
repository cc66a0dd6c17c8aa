//===- tfc-compile.cpp - The tfc compiler driver --------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//   tfc-compile model.tfm [--emit=ast|tfc|fused] [-o out] [--entry NAME]
//               [-D name=value ...]
//
// Parses a .tfm model description, checks it, instantiates it into the tfc
// dialect and writes the requested stage. Errors are reported as
// file:line:col with the source line and a caret; the exit code is 1 after
// any error and the output file is only written on success.
//
//===----------------------------------------------------------------------===//

#include "tfc/Dialect/Tfc/Transforms/Passes.h"
#include "tfc/Frontend/MLIRGen.h"
#include "tfc/Frontend/Parser.h"
#include "tfc/Frontend/Sema.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace llvm;

namespace {
enum class Emit { Ast, Tfc, Fused };

cl::opt<std::string> inputFilename(cl::Positional, cl::desc("<model.tfm>"),
                                   cl::Required);
cl::opt<std::string> outputFilename("o", cl::desc("Output file ('-' = stdout)"),
                                    cl::value_desc("file"), cl::init("-"));
cl::opt<Emit> emit(
    "emit", cl::desc("What to produce"), cl::init(Emit::Tfc),
    cl::values(clEnumValN(Emit::Ast, "ast", "the syntax tree"),
               clEnumValN(Emit::Tfc, "tfc", "the tfc dialect as written"),
               clEnumValN(Emit::Fused, "fused",
                          "the tfc dialect after the fusion pipeline")));
cl::opt<std::string> entry("entry",
                           cl::desc("Only compile this entry point"),
                           cl::value_desc("name"));
cl::list<std::string> defines("D", cl::Prefix,
                              cl::desc("Override a hyper-parameter"),
                              cl::value_desc("name=value"));
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
} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  cl::ParseCommandLineOptions(argc, argv,
                              "tfc-compile: compiles a .tfm transformer model "
                              "description\n");

  auto fileOrErr = MemoryBuffer::getFileOrSTDIN(inputFilename, /*IsText=*/true);
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

  SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*fileOrErr), SMLoc());
  tfc::DiagnosticEngine diags(sourceMgr);

  std::unique_ptr<tfc::ast::Module> ast = tfc::parseModule(diags);
  if (diags.hadError())
    return 1;
  if (emit == Emit::Ast) {
    std::unique_ptr<ToolOutputFile> out = openOutput();
    if (!out)
      return 1;
    tfc::ast::print(*ast, sourceMgr, out->os());
    out->keep();
    return 0;
  }
  if (!tfc::checkModule(*ast, diags))
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

  mlir::MLIRContext context;
  tfc::loadFrontendDialects(context);
  mlir::SourceMgrDiagnosticHandler mlirDiags(sourceMgr, &context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      tfc::generateModule(*ast, context, diags, options);
  if (!module)
    return 1;

  if (emit == Emit::Fused) {
    mlir::PassManager pm(&context);
    if (mlir::failed(mlir::applyPassManagerCLOptions(pm)))
      return 1;
    mlir::tfc::FusionPipelineOptions fusion;
    fusion.remarks = remarks;
    mlir::tfc::buildFusionPipeline(pm, fusion);
    if (mlir::failed(pm.run(*module)))
      return 1;
  }

  std::unique_ptr<ToolOutputFile> out = openOutput();
  if (!out)
    return 1;
  module->print(out->os());
  out->os() << "\n";
  out->keep();
  return 0;
}
