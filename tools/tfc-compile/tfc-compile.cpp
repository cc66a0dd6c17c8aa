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
// dialect and writes the requested stage: a command line over the compiler
// library (include/tfc/Compiler/Compiler.h), which does all of it. Errors are
// reported as file:line:col with the source line and a caret; the exit code is
// 1 after any error and the output file is only written on success.
//
//===----------------------------------------------------------------------===//

#include "tfc/Compiler/Compiler.h"
#include "tfc/Conversion/Passes.h"
#include "tfc/Dialect/Tfc/Transforms/Passes.h"
#include "tfc/Dialect/TfcKernel/Transforms/Passes.h"
#include "tfc/Target/CPU/Passes.h"
#include "tfc/Target/Host/Passes.h"
#include "tfc/Target/NVPTX/Passes.h"
#include "tfc/Tuning/TuneRecord.h"

#include "ModelCache.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/BuryPointer.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include <cerrno>
#include <chrono>
#include <sys/wait.h>
#include <unistd.h>

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

cl::OptionCategory options("tfc-compile options");

cl::opt<std::string> inputFilename(cl::Positional,
                                   cl::desc("<model.tfm | model.mlir | "
                                            "checkpoint dir | model.gguf>"),
                                   cl::cat(options));
cl::opt<std::string> outputFilename("o", cl::desc("Output file ('-' = stdout)"),
                                    cl::value_desc("file"), cl::init("-"),
                                    cl::cat(options));
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
                   "the weights the model expects, as JSON")),
    cl::cat(options));
enum class Target { Cpu, Cuda };
cl::opt<Target> target(
    "target", cl::desc("The target"), cl::init(Target::Cpu),
    cl::values(clEnumValN(Target::Cpu, "cpu", "x86-64 CPUs (default)"),
               clEnumValN(Target::Cuda, "cuda",
                          "NVIDIA GPUs (PTX) driven from x86-64 host code")),
    cl::cat(options));
cl::list<std::string>
    gpuArchs("gpu-arch", cl::CommaSeparated,
             cl::desc("GPU architectures for --target=cuda (default: "
                      "sm_80,sm_90)"),
             cl::value_desc("sm_XX,..."), cl::cat(options));
cl::opt<std::string> gpuFp32Matmul(
    "gpu-fp32-matmul",
    cl::desc("f32 products on the GPU: ieee (f32 FMAs, default) or tf32 "
             "(tensor cores, operands rounded to tf32, as PyTorch's "
             "allow_tf32)"),
    cl::value_desc("ieee|tf32"), cl::init("ieee"), cl::cat(options));
cl::opt<std::string> computeType(
    "compute-type",
    cl::desc("With --target=cuda: the type an f32 model computes in: f32 "
             "(default), f16 or bf16 (weights converted once at load, "
             "activations stored in it, inputs and outputs still f32; the "
             "kernels accumulate in f32)"),
    cl::value_desc("f32|f16|bf16"), cl::init("f32"), cl::cat(options));
cl::opt<bool> gpuEmulate(
    "gpu-emulate",
    cl::desc("With --target=cuda: compile the kernels for this CPU instead "
             "of to PTX, to run on the CUDA emulator "
             "(TFC_CUDA_DRIVER=libtfc_cuda_emulator.so): checks a GPU "
             "build's kernels without a GPU, slowly"),
    cl::cat(options));
cl::opt<std::string> cudaPath(
    "cuda-path",
    cl::desc("The CUDA toolkit, for libdevice (default: $CUDA_HOME, then "
             "/usr/local/cuda)"),
    cl::value_desc("dir"), cl::cat(options));
cl::opt<std::string> cpu("cpu",
                         cl::desc("Target CPU (LLVM name; default: the host)"),
                         cl::value_desc("name"), cl::cat(options));
cl::opt<std::string>
    features("features",
             cl::desc("Target features, e.g. +avx512f,+fma (default: the "
                      "host's, or the CPU's)"),
             cl::value_desc("list"), cl::cat(options));
cl::opt<std::string> cpuVariants(
    "cpu-variants",
    cl::desc("A multi-versioned model library: one build per CPU of the "
             "comma-separated list (e.g. x86-64-v4,x86-64-v3), most capable "
             "first; the runtime runs the first one the host can"),
    cl::value_desc("cpu,cpu,..."), cl::cat(options));
cl::opt<std::string> cpuKernels(
    "cpu-kernels",
    cl::desc("The instruction set the CPU kernels are tiled for: avx512 or "
             "avx2 (default: from the target CPU's features). For testing "
             "and measuring one ISA's kernels on another"),
    cl::value_desc("isa"), cl::cat(options));
cl::opt<int64_t> cpuL1dKib(
    "cpu-l1d-kib",
    cl::desc("The L1 data cache per core in KiB that the CPU kernels' cache "
             "blocking is for (default: the host's when compiling for it, "
             "else the named CPU's, else 32)"),
    cl::value_desc("KiB"), cl::init(0), cl::cat(options));
cl::opt<int64_t> cpuL2Kib(
    "cpu-l2-kib",
    cl::desc("The L2 cache per core in KiB that the CPU kernels' cache "
             "blocking is for (default: the host's when compiling for it, "
             "else the named CPU's, else 256)"),
    cl::value_desc("KiB"), cl::init(0), cl::cat(options));
cl::opt<std::string> tuneFile(
    "tune-file",
    cl::desc("Tuning records from tfc-tune; the record for this host sets "
             "the GEMM's blocking when compiling for the host (default: "
             "$TFC_TUNE_FILE, else ~/.cache/tfc/tuning.json if it exists; "
             "'none': the analytic default)"),
    cl::value_desc("file"), cl::cat(options));
cl::opt<std::string> gemmTuning(
    "gemm-tuning",
    cl::desc("The GEMM's blocking over the ISA's, instead of any record "
             "(e.g. mr=4,nr=24,kc=256; docs/tuning.md)"),
    cl::value_desc("list"), cl::cat(options));
cl::opt<std::string> entry("entry", cl::desc("Only compile this entry point"),
                           cl::value_desc("name"), cl::cat(options));
cl::list<std::string> defines("D", cl::Prefix,
                              cl::desc("Override a hyper-parameter"),
                              cl::value_desc("name=value"), cl::cat(options));
cl::opt<std::string> quantize(
    "quantize",
    cl::desc(
        "Store linear weights block-quantised (q8_0, q4_0, q4_1, "
        "q5_0, q5_1, q2_k ... q6_k: GGUF's formats, int8 kernels on the CPU; "
        "the K-quants where K is a multiple of 256) or not at all "
        "(none: dequantised at load). Default: as the model says (a "
        ".gguf's quantised tensors stay quantised)"),
    cl::value_desc("format"), cl::cat(options));

cl::opt<unsigned> activationBlock(
    "activation-block",
    cl::desc("Elements per int8 scale of the activations that multiply "
             "K-quant weights on the CPU: 32 (the default: the closer to f32 "
             "arithmetic) or 256 (llama.cpp's Q8_K: its numerics, its "
             "perplexity); other formats always use 32"),
    cl::value_desc("32|256"), cl::init(32), cl::cat(options));

cl::opt<bool> kvCache(
    "kv-cache",
    cl::desc("Also generate <entry>_cached for generation: the tokens at "
             "positions [past, past + seq) with every layer's key/value "
             "cache as state buffers updated in place (docs/abi.md)"),
    cl::init(false), cl::cat(options));

cl::opt<bool> kvCacheLast(
    "kv-cache-last",
    cl::desc("With --kv-cache: <entry>_cached returns, of each output along "
             "the tokens, only the last position (what generation reads: a "
             "prompt's logits are computed for one position, not all)"),
    cl::init(false), cl::cat(options));

cl::opt<bool> kvCacheRows(
    "kv-cache-rows",
    cl::desc("With --kv-cache: also generate <entry>_rows, whose `past` is "
             "one position per row of the batch: rows at their own positions "
             "over the caches, as a server batches requests (CPU; "
             "docs/abi.md)"),
    cl::init(false), cl::cat(options));

cl::opt<std::string> kvCacheType(
    "kv-cache-type",
    cl::desc("With --kv-cache: the element type of the self-attention "
             "key/value caches, f32 (the default: an f32 model's own) or f16 "
             "(half the memory and the bytes a decode step reads; keys and "
             "values are rounded to f16 as they are stored)"),
    cl::value_desc("f32|f16"), cl::init("f32"), cl::cat(options));

cl::opt<bool> remarks("fusion-remarks",
                      cl::desc("Report what the fusion passes fused and why "
                               "they did not fuse a candidate"),
                      cl::init(false), cl::cat(options));

cl::opt<bool> inlineBlocks(
    "inline-blocks",
    cl::desc("compile every layer (block call) in place, instead of the "
             "calls that compute the same thing once as one function (the "
             "default; compile time then does not grow with depth)"),
    cl::init(false), cl::cat(options));

cl::opt<unsigned> codegenThreads(
    "codegen-threads",
    cl::desc("Threads that generate a library's machine code: a large model "
             "is split into parts that many threads generate (default 0: "
             "one per core; 1 and --emit=obj: one piece)"),
    cl::value_desc("n"), cl::init(0), cl::cat(options));

cl::opt<unsigned> codegenPartSize(
    "codegen-part-size",
    cl::desc("The LLVM instructions per part of a split code generation "
             "(default 10000; for tests)"),
    cl::value_desc("n"), cl::init(0), cl::Hidden, cl::cat(options));

cl::opt<std::string> cacheDir(
    "cache-dir",
    cl::desc("Compile the checkpoint into the model cache that tfc-run and "
             "tfc-generate read (--cache-dir=DIR, else $TFC_CACHE_DIR, else "
             "~/.cache/tfc), keyed as they key it, and print the library's "
             "path; the same options in the same order hit the same entry "
             "(tfc-generate uses --kv-cache --kv-cache-last)"),
    cl::value_desc("DIR"), cl::ValueOptional, cl::cat(options));

cl::opt<bool> clearCache(
    "clear-cache",
    cl::desc("Remove every compiled model and packed weights file from the "
             "model cache (--cache-dir=DIR or its default) and exit"),
    cl::init(false), cl::cat(options));

cl::opt<bool> quiet("quiet",
                    cl::desc("No progress lines (printed only when stderr "
                             "is a terminal)"),
                    cl::init(false), cl::cat(options));

/// An address in this executable, for getMainExecutable.
void executableAnchor() {}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  // The passes first: --mlir-print-ir-before/after list the passes
  // registered when the pass manager's options are.
  mlir::tfc::registerTfcPasses();
  mlir::tfc::registerTfcConversionPasses();
  mlir::tfc::kernel::registerTfcKernelPasses();
  mlir::tfc::registerTfcHostPasses();
  mlir::tfc::registerTfcCPUPasses();
  mlir::tfc::registerTfcNVPTXPasses();
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  // --help lists tfc-compile's own options; LLVM's and MLIR's (pass
  // pipelines, -mlir-timing, codegen internals) stay usable and are listed
  // by --help-hidden, as clang does.
  for (auto &[name, option] : cl::getRegisteredOptions())
    if (!llvm::is_contained(option->Categories, &options) &&
        option->getOptionHiddenFlag() == cl::NotHidden && name != "help" &&
        name != "help-hidden" && name != "version")
      option->setHiddenFlag(cl::Hidden);
  cl::ParseCommandLineOptions(argc, argv,
                              "tfc-compile: compiles a .tfm transformer model "
                              "description\n");

  // The model cache: cleared, or filled with this checkpoint compiled by a
  // tfc-compile run as the runtime tools run it (tools/common/ModelCache.h).
  if (!cacheDir.empty())
    ::setenv("TFC_CACHE_DIR", cacheDir.c_str(), 1);
  if (clearCache) {
    size_t removed = 0;
    uint64_t bytes = 0;
    std::string error;
    if (!tfc::tools::clearCompiledCache(removed, bytes, error)) {
      errs() << "tfc-compile: error: " << error << "\n";
      return 1;
    }
    if (!quiet)
      outs() << "removed " << removed << " file" << (removed == 1 ? "" : "s")
             << format(" (%.1f MiB)", bytes / 1048576.0) << " from "
             << tfc::tools::compiledCacheDir() << " and "
             << tfc::tools::packedCacheDir() << "\n";
    return 0;
  }
  if (inputFilename.empty()) {
    errs() << "tfc-compile: error: no input given (a .tfm, a .mlir, a "
              "checkpoint directory or a .gguf; see --help)\n";
    return 1;
  }
  if (cacheDir.getNumOccurrences()) {
    if (emit.getNumOccurrences() || outputFilename.getNumOccurrences()) {
      errs() << "tfc-compile: error: --cache-dir makes the cache's library: "
                "leave out -o and --emit\n";
      return 1;
    }
    // The options as given, without the input, the output and this one:
    // what the cache keys and the compile below is given.
    std::vector<std::string> flags;
    for (int i = 1; i < argc; ++i) {
      StringRef a = argv[i];
      if (a == inputFilename || a.starts_with("--cache-dir") ||
          a.starts_with("-cache-dir") || a == "--quiet" || a == "-quiet")
        continue;
      if (a == "-o") {
        ++i;
        continue;
      }
      if (a.starts_with("-o"))
        continue;
      flags.push_back(a.str());
    }
    std::string model = inputFilename, weights, error;
    if (!tfc::tools::resolveModelArgument(model, flags, argv[0], quiet, weights,
                                          error)) {
      errs() << "tfc-compile: error: " << error << "\n";
      return 1;
    }
    if (model == inputFilename) {
      errs() << "tfc-compile: error: --cache-dir compiles a checkpoint (a "
                "directory, a .gguf or a .tfm), not '"
             << inputFilename << "'\n";
      return 1;
    }
    outs() << model << "\n";
    return 0;
  }

  using tfc::compiler::Stage;
  Stage stage = Stage::Tfc;
  switch (emit) {
  case Emit::Auto:
    stage = tfc::compiler::stageForOutput(outputFilename);
    break;
  case Emit::Ast:
    stage = Stage::Ast;
    break;
  case Emit::Tfc:
    stage = Stage::Tfc;
    break;
  case Emit::Fused:
    stage = Stage::Fused;
    break;
  case Emit::Linalg:
    stage = Stage::Linalg;
    break;
  case Emit::LLVMDialect:
    stage = Stage::LLVMDialect;
    break;
  case Emit::LLVM:
    stage = Stage::LLVM;
    break;
  case Emit::Obj:
    stage = Stage::Object;
    break;
  case Emit::Lib:
    stage = Stage::Library;
    break;
  case Emit::Ptx:
    stage = Stage::Ptx;
    break;
  case Emit::WeightsManifest:
    stage = Stage::WeightsManifest;
    break;
  }
  tfc::compiler::CompileOptions options;
  options.target = target == Target::Cuda ? "cuda" : "cpu";
  options.gpuArchs.assign(gpuArchs.begin(), gpuArchs.end());
  options.cudaPath = cudaPath;
  options.gpuFp32Matmul = gpuFp32Matmul;
  options.computeType = computeType;
  options.gpuEmulate = gpuEmulate;
  options.cpu = cpu;
  options.features = features;
  options.cpuKernels = cpuKernels;
  options.cpuL1dKib = cpuL1dKib;
  options.cpuL2Kib = cpuL2Kib;
  options.tuneFile = tuneFile;
  options.gemmTuning = gemmTuning;
  SmallVector<StringRef> variants;
  StringRef(cpuVariants).split(variants, ',', -1, /*KeepEmpty=*/false);
  for (StringRef v : variants)
    options.cpuVariants.push_back(v.trim().str());
  if (!cpuVariants.empty() && options.cpuVariants.empty()) {
    errs() << "tfc-compile: error: --cpu-variants is empty\n";
    return 1;
  }
  options.entry = entry;
  options.defines.assign(defines.begin(), defines.end());
  options.kvCache = kvCache;
  options.kvCacheLast = kvCacheLast;
  options.kvCacheRows = kvCacheRows;
  if (kvCacheRows && target == Target::Cuda) {
    errs() << "tfc-compile: error: --kv-cache-rows is not supported on the "
              "GPU yet (rows at their own positions run on the CPU kernels)\n";
    return 1;
  }
  if (kvCacheRows && !kvCache) {
    errs() << "tfc-compile: error: --kv-cache-rows is a form of the cached "
              "entries of --kv-cache; give both\n";
    return 1;
  }
  if (kvCacheLast && !kvCache) {
    errs() << "tfc-compile: error: --kv-cache-last shapes the cached entries "
              "of --kv-cache; give both\n";
    return 1;
  }
  if (kvCacheType != "f32" && kvCacheType != "f16") {
    errs() << "tfc-compile: error: --kv-cache-type must be f32 or f16, got '"
           << kvCacheType << "'\n";
    return 1;
  }
  if (kvCacheType.getNumOccurrences() && !kvCache) {
    errs() << "tfc-compile: error: --kv-cache-type is the element type of "
              "the caches of --kv-cache; give both\n";
    return 1;
  }
  options.kvCacheHalf = kvCacheType == "f16";
  options.quantize = quantize;
  if (activationBlock != 32 && activationBlock != 256) {
    errs() << "tfc-compile: error: --activation-block=" << activationBlock
           << ": expected 32 or 256\n";
    return 1;
  }
  if (activationBlock != 32 && target == Target::Cuda) {
    errs() << "tfc-compile: error: --activation-block is an option of the "
              "CPU's int8 kernels\n";
    return 1;
  }
  options.activationBlock = activationBlock;
  options.remarks = remarks;
  options.inlineBlocks = inlineBlocks;
  options.codegenThreads = codegenThreads;
  options.codegenPartSize = codegenPartSize;
  options.passManagerCLOptions = true;
  // Progress on a terminal, as build tools do: each stage as it starts and
  // the time so far (nothing when stderr is a file or a pipe, or --quiet).
  auto started = std::chrono::steady_clock::now();
  if (!quiet && ::isatty(2))
    options.progress = [started](StringRef stage) {
      double s = std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - started)
                     .count();
      errs() << llvm::format("tfc-compile: [%5.1f s] ", s) << stage << "\n";
    };

  auto fail = [](const std::string &error) {
    if (!error.empty())
      errs() << "tfc-compile: error: " << error << "\n";
    return 1;
  };
  // Options that cannot make the output fail before the model is read.
  std::string why =
      tfc::compiler::checkOptions(options, stage, outputFilename == "-");
  if (!why.empty())
    return fail(why);
  // TFC_AUTOTUNE=1: a host without a tuning record is tuned first
  // (tfc-tune --if-missing, beside this tool; docs/tuning.md), when the
  // compile is for the host and would read records.
  if (const char *autotune = std::getenv("TFC_AUTOTUNE");
      autotune && StringRef(autotune) == "1" && options.target == "cpu" &&
      options.cpu.empty() && options.features.empty() &&
      options.cpuVariants.empty() && options.gemmTuning.empty() &&
      options.tuneFile != "none") {
    std::string file = options.tuneFile.empty()
                           ? ::tfc::tuning::tuneFileInEffect()
                           : options.tuneFile;
    if (!file.empty()) {
      std::string self = sys::fs::getMainExecutable(
          argv[0], reinterpret_cast<void *>(&executableAnchor));
      SmallString<256> tuner(sys::path::parent_path(self));
      sys::path::append(tuner, "tfc-tune");
      std::string tunerPath(tuner), isaArg = "--isa=" + options.cpuKernels;
      std::vector<const char *> args{tunerPath.c_str(), "--if-missing", "-o",
                                     file.c_str()};
      if (!options.cpuKernels.empty())
        args.push_back(isaArg.c_str());
      args.push_back(nullptr);
      // Its progress and report on stderr (dup2: one file description, so
      // the two streams do not overwrite each other in a file): stdout may
      // be this compile's output.
      pid_t pid = ::fork();
      if (pid == 0) {
        ::dup2(2, 1);
        ::execv(tunerPath.c_str(), const_cast<char *const *>(args.data()));
        ::_exit(127);
      }
      int status = 0;
      while (pid > 0 && ::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return fail("TFC_AUTOTUNE=1: " + tunerPath + " " +
                    (pid < 0 ? std::string("could not start")
                     : WIFEXITED(status)
                         ? "exited with " + std::to_string(WEXITSTATUS(status))
                         : std::string("was killed")));
    }
  }
  // Copied: lld, linking in this process, resets every cl::opt to its
  // default (cl::ResetAllOptionOccurrences).
  std::string output = outputFilename;
  auto session = std::make_unique<tfc::compiler::Session>(options);
  if (mlir::failed(session->load(inputFilename, stage == Stage::Ast)) ||
      mlir::failed(session->emit(stage, output)))
    return fail(session->error());
  if (options.progress)
    options.progress("wrote " + output);
  // The output is written and closed: the process ends without taking the
  // module and its context apart op by op (0.2 s of SmolLM2-135M's 2.3 s
  // when measured), as clang does (-disable-free).
  llvm::BuryPointer(std::move(session));
  return 0;
}
