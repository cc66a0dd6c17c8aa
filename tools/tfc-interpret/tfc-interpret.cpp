//===- tfc-interpret.cpp - Run tfc IR on the reference interpreter -------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//   tfc-interpret model.mlir|model.tfm [--entry NAME] [--dim name=N ...]
//                 [--seed S] [-D name=value ...] [--compare other.mlir]
//                 [--tolerance T]
//
// Evaluates every public function (or --entry) of a module on deterministic
// random inputs and weights with the reference interpreter and prints each
// result's shape, scale and first values. With --compare, evaluates the
// functions of the same name in a second module on the same inputs and
// weights and fails (exit 1) when any result differs by more than the
// tolerance: the numerical check of a transformation (e.g. fusion) is
//
//   tfc-opt in.mlir --tfc-fusion-pipeline -o out.mlir
//   tfc-interpret in.mlir --compare out.mlir
//
// It is also the reference of the end-to-end tests of compiled models:
// --weights reads the weights from a .safetensors file (as tfc-run does),
// --save-inputs writes the generated inputs as .npy files for tfc-run
// (without evaluating, unless it also compares), and
// --compare-npy compares the results with .npy files (tfc-run's outputs).
// --elementwise makes either comparison element by element (the end-to-end
// tests' criterion, interp::compareElementwise).
//
//===----------------------------------------------------------------------===//

#include "tfc/Dialect/Tfc/IR/TfcDialect.h"
#include "tfc/Formats/Npy.h"
#include "tfc/Formats/SafeTensors.h"
#include "tfc/Frontend/MLIRGen.h"
#include "tfc/Frontend/Parser.h"
#include "tfc/Frontend/Sema.h"
#include "tfc/Interpreter/Interpreter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cmath>
#include <cstring>

using namespace llvm;
using namespace mlir;
namespace interp = mlir::tfc::interp;

namespace {
cl::opt<std::string> inputFilename(cl::Positional,
                                   cl::desc("<model.mlir|model.tfm>"),
                                   cl::Required);
cl::opt<std::string> compareFilename(
    "compare", cl::desc("Evaluate the same functions of this module on the "
                        "same inputs and compare the results"),
    cl::value_desc("file"));
cl::opt<std::string> entry("entry", cl::desc("Only evaluate this function"),
                           cl::value_desc("name"));
cl::list<std::string> dims("dim", cl::desc("Size of a named dynamic dim"),
                           cl::value_desc("name=N"));
cl::opt<int64_t> unnamedDim("unnamed-dim",
                            cl::desc("Size of dynamic dims without a name"),
                            cl::init(3));
cl::opt<uint64_t> seed("seed", cl::desc("Seed of the inputs and weights"),
                       cl::init(1));
cl::list<std::string> defines("D", cl::Prefix,
                              cl::desc("Override a hyper-parameter (.tfm)"),
                              cl::value_desc("name=value"));
cl::opt<double> tolerance("tolerance",
                          cl::desc("Largest accepted |difference| with "
                                   "--compare"),
                          cl::init(1e-5));

cl::opt<bool> relative(
    "relative",
    cl::desc("Scale the tolerance by the result's largest |value| (when "
             "above 1): for inputs that are not O(1), e.g. raw weights"),
    cl::init(false));
cl::opt<bool> elementwise(
    "elementwise",
    cl::desc("Compare element by element: |got - want| <= tolerance x "
             "max(|want|, rms(want)) at every element, every value finite, "
             "neither side constant (the end-to-end tests' criterion)"),
    cl::init(false));
cl::opt<std::string> weightsFile(
    "weights",
    cl::desc("Read the weights from this .safetensors file instead of "
             "generating them"),
    cl::value_desc("file"));
cl::opt<std::string> saveInputs(
    "save-inputs",
    cl::desc("Write the generated inputs to DIR/<input name>.npy (and, "
             "without --compare or --compare-npy, stop there)"),
    cl::value_desc("dir"));
cl::list<std::string> compareNpy(
    "compare-npy",
    cl::desc("Compare result #i with the i-th of these .npy files (fails on "
             "a difference above the tolerance)"),
    cl::value_desc("file"));
cl::opt<bool> splitInputFile(
    "split-input-file",
    cl::desc("Split .mlir inputs at '// -----' lines and treat each part as "
             "its own module (parts are paired in order with --compare)"),
    cl::init(false));

int fail(const Twine &message) {
  errs() << "tfc-interpret: error: " << message << "\n";
  return 1;
}

/// Parses MLIR text into a module.
OwningOpRef<ModuleOp> parseMLIR(StringRef text, StringRef path,
                                MLIRContext &context) {
  ParserConfig config(&context);
  Block block;
  if (failed(parseSourceString(text, &block, config, path)))
    return nullptr;
  {
    auto module = dyn_cast_or_null<ModuleOp>(
        block.empty() ? nullptr : &block.front());
    if (module && llvm::hasSingleElement(block)) {
      module->remove();
      return module;
    }
    // Top-level functions: wrap them in a module, as mlir-opt does.
    OwningOpRef<ModuleOp> wrapper =
        ModuleOp::create(FileLineColLoc::get(&context, path, 1, 1));
    wrapper->getBody()->getOperations().splice(
        wrapper->getBody()->begin(), block.getOperations());
    return wrapper;
  }
}

/// Loads a .mlir file (one module, or one per '// -----' part with
/// --split-input-file), or compiles a .tfm description to a module. Empty
/// on error.
SmallVector<OwningOpRef<ModuleOp>> load(StringRef path, MLIRContext &context,
                                        SourceMgr &sourceMgr) {
  SmallVector<OwningOpRef<ModuleOp>> modules;
  auto file = MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (std::error_code ec = file.getError()) {
    fail("cannot open '" + path + "': " + ec.message());
    return modules;
  }
  unsigned id = sourceMgr.AddNewSourceBuffer(std::move(*file), SMLoc());
  StringRef text = sourceMgr.getMemoryBuffer(id)->getBuffer();
  if (!path.ends_with(".tfm")) {
    SmallVector<StringRef> parts;
    if (splitInputFile)
      text.split(parts, "\n// -----");
    else
      parts.push_back(text);
    for (StringRef part : parts) {
      OwningOpRef<ModuleOp> m = parseMLIR(part, path, context);
      if (!m)
        return {};
      modules.push_back(std::move(m));
    }
    return modules;
  }

  // A .tfm description goes through the frontend (diagnostics on stderr).
  SourceMgr tfmSources;
  tfmSources.AddNewSourceBuffer(
      MemoryBuffer::getMemBufferCopy(
          sourceMgr.getMemoryBuffer(id)->getBuffer(), path),
      SMLoc());
  ::tfc::DiagnosticEngine diags(tfmSources);
  std::unique_ptr<::tfc::ast::Module> ast = ::tfc::parseModule(diags);
  if (diags.hadError() || !::tfc::checkModule(*ast, diags))
    return modules;
  ::tfc::MLIRGenOptions options;
  for (const std::string &d : defines) {
    if (!options.addDefine(d)) {
      fail("-D " + d + ": expected name=value, e.g. -D layers=2");
      return modules;
    }
  }
  if (OwningOpRef<ModuleOp> m =
          ::tfc::generateModule(*ast, context, diags, options))
    modules.push_back(std::move(m));
  return modules;
}

/// Prints the elementwise agreement of `got` with `want` (--elementwise) on
/// one line, ending in MISMATCH when it fails; returns whether it passed.
bool reportElementwise(const Twine &what, const interp::Tensor &want,
                       const interp::Tensor &got) {
  interp::ElementwiseAgreement a = interp::compareElementwise(want, got);
  bool good = a.within(tolerance);
  outs() << what << ": ";
  if (!a.problem.empty()) {
    outs() << a.problem << " MISMATCH\n";
    return false;
  }
  // The multi-index of the worst element.
  SmallVector<int64_t> at(want.shape.size());
  for (int64_t d = want.rank() - 1, rest = a.worstIndex; d >= 0; --d) {
    at[d] = want.shape[d] ? rest % want.shape[d] : 0;
    rest = want.shape[d] ? rest / want.shape[d] : 0;
  }
  outs() << "max abs error " << format("%.2g", a.maxAbsError) << ", max error "
         << format("%.2g", a.worst) << " x max(|ref|, rms "
         << format("%.3g", a.floor) << ") at [";
  llvm::interleaveComma(at, outs());
  outs() << "] (got " << format("%.7g", got.data[a.worstIndex]) << ", want "
         << format("%.7g", want.data[a.worstIndex]) << "; tolerance "
         << format("%.3g", tolerance.getValue()) << ")"
         << (good ? "" : " MISMATCH") << "\n";
  return good;
}

void describe(const interp::Tensor &t, raw_ostream &os) {
  os << "[";
  for (size_t i = 0; i < t.shape.size(); ++i)
    os << (i ? ", " : "") << t.shape[i];
  os << "] " << t.elementType << ", max |x| "
     << format("%.6g", interp::maxAbs(t)) << ", first values";
  for (size_t i = 0; i < std::min<size_t>(4, t.data.size()); ++i)
    os << " " << format("%.6g", t.data[i]);
  os << "\n";
}
/// Weights from a safetensors file, converted to the element type asked for.
interp::WeightProvider
fileWeights(std::shared_ptr<::tfc::rt::SafeTensorsFile> file) {
  return [file](StringRef name,
                RankedTensorType type) -> FailureOr<interp::Tensor> {
    const ::tfc::rt::TensorView *view = file->find(name.str());
    if (!view) {
      fail("weight '" + name + "' is not in '" + weightsFile + "'");
      return failure();
    }
    if (ArrayRef<int64_t>(view->shape) != type.getShape()) {
      fail("weight '" + name + "' has the wrong shape in '" + weightsFile +
           "'");
      return failure();
    }
    interp::Tensor t(type.getElementType(), type.getShape());
    if (::tfc::rt::isQuantized(view->dtype)) {
      fail("weight '" + name + "': dtype " +
           ::tfc::rt::dtypeName(view->dtype) +
           " is not supported by the interpreter");
      return failure();
    }
    for (int64_t i = 0, n = t.numElements(); i < n; ++i)
      t.data[i] = ::tfc::rt::dtypeLoad(view->dtype, view->data, i);
    return t;
  };
}

/// The .npy form of a tensor (its element type, or f32 for f16/bf16).
bool writeTensor(const interp::Tensor &t, const std::string &path) {
  using ::tfc::rt::DType;
  Type et = t.elementType;
  DType type = et.isInteger(64)   ? DType::I64
               : et.isInteger(32) ? DType::I32
               : et.isInteger(1)  ? DType::Bool
               : et.isF64()       ? DType::F64
                                  : DType::F32;
  std::vector<uint8_t> bytes(t.data.size() * ::tfc::rt::dtypeSize(type));
  for (size_t i = 0; i < t.data.size(); ++i)
    ::tfc::rt::dtypeStore(type, bytes.data(), i, t.data[i]);
  std::vector<int64_t> shape(t.shape.begin(), t.shape.end());
  std::string error;
  bool ok = ::tfc::rt::writeNpy(path, type, shape, bytes.data(), error);
  if (!ok)
    fail(error);
  return ok;
}

/// A .npy file as a tensor of doubles.
FailureOr<interp::Tensor> readTensor(const std::string &path,
                                     MLIRContext &context) {
  ::tfc::rt::NpyArray a;
  std::string error;
  if (!::tfc::rt::readNpy(path, a, error)) {
    fail(error);
    return failure();
  }
  interp::Tensor t(Float64Type::get(&context),
                   SmallVector<int64_t>(a.shape.begin(), a.shape.end()));
  for (int64_t i = 0, n = t.numElements(); i < n; ++i)
    t.data[i] = ::tfc::rt::dtypeLoad(a.type, a.data.data(), i);
  return t;
}
} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(
      argc, argv, "tfc-interpret: evaluates tfc IR with the reference "
                  "interpreter\n");

  DialectRegistry registry;
  registry.insert<mlir::tfc::TfcDialect, func::FuncDialect, arith::ArithDialect,
                  tensor::TensorDialect>();
  MLIRContext context(registry);
  ::tfc::loadFrontendDialects(context);
  SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);

  SmallVector<OwningOpRef<ModuleOp>> modules =
      load(inputFilename, context, sourceMgr);
  if (modules.empty())
    return 1;
  SmallVector<OwningOpRef<ModuleOp>> others;
  if (!compareFilename.empty()) {
    others = load(compareFilename, context, sourceMgr);
    if (others.empty())
      return 1;
    if (others.size() != modules.size())
      return fail("'" + inputFilename + "' has " + Twine(modules.size()) +
                  " parts and '" + compareFilename + "' " +
                  Twine(others.size()));
  }

  interp::ShapeChoice choice;
  choice.unnamed = unnamedDim;
  for (const std::string &d : dims) {
    auto [name, value] = StringRef(d).split('=');
    int64_t n;
    if (name.empty() || value.getAsInteger(10, n) || n < 0)
      return fail("--dim " + d + ": expected name=N with N >= 0");
    choice.named[name] = n;
  }
  interp::WeightProvider weights = interp::randomWeights(seed);
  if (!weightsFile.empty()) {
    std::string error;
    std::shared_ptr<::tfc::rt::SafeTensorsFile> file =
        ::tfc::rt::SafeTensorsFile::open(weightsFile, error);
    if (!file)
      return fail(error);
    weights = fileWeights(file);
  }
  if (!saveInputs.empty())
    if (std::error_code ec = sys::fs::create_directories(saveInputs))
      return fail("cannot create '" + saveInputs + "': " + ec.message());

  bool ok = true;
  unsigned evaluated = 0;
  for (size_t part = 0; part < modules.size(); ++part) {
  ModuleOp module = *modules[part];
  ModuleOp other = others.empty() ? ModuleOp() : *others[part];
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal() || (!entry.empty() && func.getName() != entry) ||
        (entry.empty() && func.isPrivate()))
      continue;
    ++evaluated;
    FailureOr<SmallVector<interp::Tensor>> inputs =
        interp::randomInputs(func, choice, seed);
    if (failed(inputs))
      return 1;
    if (!saveInputs.empty()) {
      for (auto [i, in] : llvm::enumerate(*inputs)) {
        auto name = func.getArgAttrOfType<StringAttr>(i, "tfc.name");
        SmallString<128> path(saveInputs);
        sys::path::append(path, (name ? name.getValue()
                                      : StringRef("input" + std::to_string(i))) +
                                    ".npy");
        if (!writeTensor(in, path.str().str()))
          return 1;
      }
      // Only the inputs are wanted (test/E2E/Inputs/compare.sh saves them
      // for tfc-run, then compares in a second call): no evaluation.
      if (compareNpy.empty() && !other) {
        outs() << "@" << func.getName() << ": " << inputs->size()
               << " inputs written to '" << saveInputs << "'\n";
        continue;
      }
    }
    FailureOr<SmallVector<interp::Tensor>> results =
        interp::run(func, *inputs, weights);
    if (failed(results))
      return 1;
    if (!compareNpy.empty()) {
      if (compareNpy.size() > results->size())
        return fail("@" + func.getName() + " has " + Twine(results->size()) +
                    " results but " + Twine(compareNpy.size()) +
                    " --compare-npy files");
      for (size_t i = 0; i < compareNpy.size(); ++i) {
        FailureOr<interp::Tensor> got = readTensor(compareNpy[i], context);
        if (failed(got))
          return 1;
        const interp::Tensor &want = (*results)[i];
        if (got->shape != want.shape) {
          ok = false;
          outs() << "@" << func.getName() << " result #" << i
                 << ": shape mismatch: '" << compareNpy[i] << "' is [";
          llvm::interleaveComma(got->shape, outs());
          outs() << "], expected [";
          llvm::interleaveComma(want.shape, outs());
          outs() << "] MISMATCH\n";
          continue;
        }
        got->elementType = want.elementType;
        if (elementwise) {
          bool good = reportElementwise(
              "@" + func.getName() + " result #" + Twine(i) + " vs '" +
                  sys::path::filename(compareNpy[i]) + "'",
              want, *got);
          ok &= good;
          continue;
        }
        double err = interp::maxAbsDifference(want, *got);
        double scale = interp::maxAbs(want);
        double allowed = tolerance * (relative ? std::max(1.0, scale) : 1.0);
        bool good = err <= allowed;
        ok &= good;
        outs() << "@" << func.getName() << " result #" << i
               << " vs '" << sys::path::filename(compareNpy[i])
               << "': max abs error " << format("%.3g", err) << " (scale "
               << format("%.3g", scale) << ", tolerance "
               << format("%.3g", allowed) << ")" << (good ? "" : " MISMATCH")
               << "\n";
      }
      continue;
    }
    if (!other) {
      for (auto [i, r] : llvm::enumerate(*results)) {
        outs() << "@" << func.getName() << " result #" << i << ": ";
        describe(r, outs());
      }
      continue;
    }
    auto peer = other.lookupSymbol<func::FuncOp>(func.getName());
    if (!peer)
      return fail("'" + compareFilename + "' has no function @" +
                  func.getName());
    FailureOr<SmallVector<interp::Tensor>> peerResults =
        interp::run(peer, *inputs, weights);
    if (failed(peerResults))
      return 1;
    if (peerResults->size() != results->size())
      return fail("@" + func.getName() + " has " +
                  Twine(results->size()) + " results here and " +
                  Twine(peerResults->size()) + " in '" + compareFilename +
                  "'");
    for (size_t i = 0; i < results->size(); ++i) {
      if (elementwise) {
        ok &= reportElementwise("@" + func.getName() + " result #" + Twine(i),
                                (*results)[i], (*peerResults)[i]);
        continue;
      }
      double err =
          interp::maxAbsDifference((*results)[i], (*peerResults)[i]);
      double scale = interp::maxAbs((*results)[i]);
      double allowed = tolerance * (relative ? std::max(1.0, scale) : 1.0);
      bool good = err <= allowed; // false for NaN
      ok &= good;
      outs() << "@" << func.getName() << " result #" << i
             << ": max abs error " << format("%.3g", err) << " (scale "
             << format("%.3g", scale)
             << ", tolerance " << format("%.3g", allowed)
             << ")" << (good ? "" : " MISMATCH") << "\n";
    }
  }
  }
  if (evaluated == 0)
    return fail(entry.empty() ? Twine("no public function to evaluate")
                              : "no function named '" + entry + "'");
  return ok ? 0 : 1;
}
