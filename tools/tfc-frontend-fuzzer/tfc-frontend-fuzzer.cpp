//===- tfc-frontend-fuzzer.cpp - libFuzzer target for the .tfm frontend ---===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Feeds arbitrary bytes through everything tfc-compile does with a model
// description: lexing, parsing, semantic analysis, instantiation into the tfc
// dialect and verification. Any crash, sanitizer report, assertion or
// timeout is a bug; errors are the expected outcome for most inputs.
//
//   tfc-frontend-fuzzer -max_total_time=600 CORPUS_DIR examples/
//
//===----------------------------------------------------------------------===//

#include "tfc/Frontend/MLIRGen.h"
#include "tfc/Frontend/Parser.h"
#include "tfc/Frontend/Sema.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size),
          "fuzz.tfm"),
      llvm::SMLoc());
  std::string messages;
  llvm::raw_string_ostream os(messages);
  tfc::DiagnosticEngine diags(sourceMgr, os);
  std::unique_ptr<tfc::ast::Module> module = tfc::parseModule(diags);
  if (diags.hadError() || !tfc::checkModule(*module, diags))
    return 0;

  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  tfc::loadFrontendDialects(context);
  // Generated IR that fails to verify is a frontend bug: the shape checks
  // must reject everything the dialect's verifiers would.
  mlir::ScopedDiagnosticHandler verifierFailure(&context, [](mlir::Diagnostic &d) {
    llvm::errs() << "verifier: " << d << "\n";
    return mlir::success();
  });
  tfc::MLIRGenOptions options;
  options.maxOps = 20000; // keep every input fast
  (void)tfc::generateModule(*module, context, diags, options);
  if (llvm::StringRef(messages).contains("internal error")) {
    llvm::errs() << messages;
    __builtin_trap();
  }
  return 0;
}
