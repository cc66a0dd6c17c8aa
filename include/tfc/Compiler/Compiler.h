//===- Compiler.h - The compiler as a library -------------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// One pipeline from a model (a .tfm description, tfc IR in .mlir, or a
// checkpoint that the importer turns into a description) to any stage: the
// tfc dialect, after fusion, linalg, the LLVM dialect, LLVM IR, an object
// file, a model library (one build or one per CPU variant), PTX, or the
// weights manifest. tfc-compile is a thin command line over it; tests and
// language bindings call the same functions.
//
//   tfc::compiler::CompileOptions options;          // target, CPU, -D, ...
//   tfc::compiler::Session s(options);              // context + diagnostics
//   if (failed(s.load("model.tfm")) ||
//       failed(s.emit(tfc::compiler::Stage::Library, "model.so")))
//     ... s.error() says why (or is empty: errors in the description
//         and the passes' are printed as file:line:col with the source
//         line as they are found) ...
//
//===----------------------------------------------------------------------===//

#ifndef TFC_COMPILER_COMPILER_H
#define TFC_COMPILER_COMPILER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tfc {
class DiagnosticEngine;
namespace ast {
struct Module;
} // namespace ast

namespace compiler {

/// What to produce.
enum class Stage {
  Ast,        // the syntax tree of a description (printed)
  Tfc,        // the tfc dialect as written
  Fused,      // after the fusion pipeline
  Linalg,     // linalg/tensor and kernel ops, before bufferisation
  LLVMDialect,
  LLVM,       // optimised LLVM IR
  Object,
  Library,    // a model shared library (.so)
  Ptx,        // every kernel's PTX per architecture (CUDA)
  WeightsManifest,
};

/// The stage an output file's suffix asks for (.so, .o, .ll; else Tfc).
Stage stageForOutput(llvm::StringRef path);

class TargetBackend;

struct CompileOptions {
  /// The target, by its registry name (Targets.h): cpu or cuda.
  std::string target = "cpu";
  /// CUDA: architectures (default sm_80, sm_90) and the toolkit (libdevice).
  std::vector<std::string> gpuArchs;
  std::string cudaPath;
  /// CUDA: f32 products with f32 FMAs ("ieee") or on the tensor cores with
  /// operands rounded to tf32 ("tf32", as PyTorch's allow_tf32).
  std::string gpuFp32Matmul = "ieee";
  /// CUDA: the type the model computes in: f32 (as written), f16 or bf16
  /// (tfc-convert-compute-type; weights converted once at init).
  std::string computeType = "f32";
  /// CUDA: kernels compiled for the host CPU, for the CUDA emulator
  /// (libtfc_cuda_emulator.so as TFC_CUDA_DRIVER), instead of to PTX.
  bool gpuEmulate = false;
  /// CPU: the LLVM CPU name and features (default: the host's), the ISA the
  /// kernels are tiled for (default: from the features), and for a
  /// multi-versioned library one CPU per variant, most capable first.
  std::string cpu, features, cpuKernels;
  std::vector<std::string> cpuVariants;
  /// CPU: the L1 data cache per core in KiB the kernels' cache blocking is
  /// for (0: the target's: the host's, else its CPU's, else 32).
  int64_t cpuL1dKib = 0;
  /// CPU: the L2 cache per core in KiB (0: the target's, likewise; else
  /// 256).
  int64_t cpuL2Kib = 0;
  /// CPU: the tuning records file (tfc-tune; include/tfc/Tuning/
  /// TuneRecord.h) whose record for the host and the kernels' ISA sets the
  /// GEMM's blocking when compiling for the host: "" the default
  /// (TFC_TUNE_FILE, else the user's cache, if the file exists), "none" no
  /// tuning. A file named here must exist and parse.
  std::string tuneFile;
  /// CPU: a GEMM blocking given directly (mr=4,nr=24,...), over the ISA's
  /// and instead of any record; for tfc-tune and tests.
  std::string gemmTuning;
  /// Frontend: only this entry; `name=value` overrides; --kv-cache entries.
  std::string entry;
  std::vector<std::string> defines;
  bool kvCache = false;
  /// --kv-cache-last: the cached entry's outputs along the tokens keep only
  /// the last position (MLIRGenOptions::kvCacheLast).
  bool kvCacheLast = false;
  /// --kv-cache-type=f16: self-attention K/V caches in half precision
  /// (MLIRGenOptions::kvCacheHalf).
  bool kvCacheHalf = false;
  /// --kv-cache-rows: also <entry>_rows, each row at its own position
  /// (MLIRGenOptions::kvCacheRows; CPU only).
  bool kvCacheRows = false;
  /// Linear weights stored block-quantised (q8_0, q4_0, q4_1) or not at all
  /// (none); empty: as the model says.
  std::string quantize;
  /// CPU: elements per int8 scale of the activations that multiply K-quant
  /// weights: 32 (the closer to f32) or 256 (llama.cpp's Q8_K, its
  /// numerics).
  int64_t activationBlock = 32;
  /// Fusion remarks on the model's locations.
  bool remarks = false;
  /// CPU: keep every block call inline instead of compiling the calls that
  /// compute the same thing (a model's layers) once as one function
  /// (--inline-blocks: the reference that outlining is checked against).
  bool inlineBlocks = false;
  /// Threads for generating a library's machine code (--codegen-threads; 0:
  /// one per core this process may use; 1: in one piece). The library's
  /// bytes do not depend on it otherwise. An object file (--emit=obj) is
  /// always generated in one piece.
  unsigned codegenThreads = 0;
  /// CpuTargetOptions::codegenPartInstructions (--codegen-part-size, a
  /// hidden option for tests); 0: its default.
  unsigned codegenPartSize = 0;
  /// Apply MLIR's pass-manager command-line options (--mlir-print-ir-*,
  /// --mlir-timing, ...): only where mlir::registerPassManagerCLOptions()
  /// ran, as in tfc-compile.
  bool passManagerCLOptions = false;
  /// Called as each stage of the work starts ("reading", "lowering",
  /// "generating machine code", "linking"; for --cpu-variants the variant's
  /// CPU follows), for progress output (tfc-compile on a terminal). May be
  /// empty.
  std::function<void(llvm::StringRef stage)> progress;
};

/// Why the options cannot make `stage` (empty if they can).
std::string checkOptions(const CompileOptions &options, Stage stage,
                         bool toStdout);

/// One compilation: an MLIR context with the target's dialects, the source
/// manager and diagnostics of the description, the module.
class Session {
public:
  explicit Session(CompileOptions options);
  ~Session();

  /// Reads `path` ("-": stdin): a checkpoint (imported first), a .mlir
  /// module or a .tfm description, parsed, checked and instantiated. With
  /// `stopAtAst` only parsed (ast() holds the tree). Errors in the
  /// description are reported through the diagnostic engine as they are
  /// found; other errors are in error().
  mlir::LogicalResult load(llvm::StringRef path, bool stopAtAst = false);

  /// Runs the pipeline up to `stage` on the loaded module.
  mlir::LogicalResult lower(Stage stage);

  /// lower(stage), then writes the result to `path` ("-": stdout; files
  /// are only kept when complete). With cpuVariants (a library) one build
  /// per CPU linked into one library.
  mlir::LogicalResult emit(Stage stage, llvm::StringRef path);

  /// Writes the loaded description's syntax tree.
  void printAst(llvm::raw_ostream &os);

  mlir::ModuleOp module() { return module_ ? *module_ : mlir::ModuleOp(); }
  mlir::MLIRContext &context() { return *context_; }
  /// Why the last call failed; empty when the failure was already reported
  /// as a diagnostic (an error in the description, a pass's error).
  const std::string &error() const { return error_; }

private:
  mlir::LogicalResult fail(const llvm::Twine &message);
  void progress(const llvm::Twine &stage);
  mlir::LogicalResult emitVariants(llvm::StringRef path);
  mlir::LogicalResult write(llvm::StringRef path,
                            llvm::function_ref<bool(llvm::raw_ostream &)> body,
                            bool binary = false);

  CompileOptions options_;
  /// The target of options_.target (null when it names none).
  std::unique_ptr<TargetBackend> target_;
  std::unique_ptr<mlir::MLIRContext> context_;
  llvm::SourceMgr sourceMgr_;
  std::unique_ptr<DiagnosticEngine> diags_;
  std::unique_ptr<mlir::SourceMgrDiagnosticHandler> handler_;
  std::unique_ptr<ast::Module> ast_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  std::string error_;
  bool lowered_ = false;
};

} // namespace compiler
} // namespace tfc

#endif // TFC_COMPILER_COMPILER_H
