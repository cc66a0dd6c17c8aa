//===- Targets.cpp - The registry of compilation targets ------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Compiler/Targets.h"

#include "tfc/Target/CPU/CPUTarget.h"
#include "tfc/Target/NVPTX/NVPTXTarget.h"
#include "tfc/Tuning/TuneRecord.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLExtras.h"

#include <cstdlib>

using namespace llvm;
using namespace tfc::compiler;

namespace {

/// x86-64 CPUs: the host by default, --cpu/--features/--cpu-kernels.
class CpuBackend final : public TargetBackend {
public:
  StringRef name() const override { return "cpu"; }

  void registerDialects(mlir::DialectRegistry &registry) const override {
    mlir::tfc::registerCpuTargetDialects(registry);
  }

  std::string check(const CompileOptions &o, Stage stage) const override {
    if (stage == Stage::Ptx)
      return "--emit=ptx needs --target=cuda";
    if (o.gpuFp32Matmul != "ieee")
      return "--gpu-fp32-matmul=" + o.gpuFp32Matmul +
             " is for --target=cuda (the CPU computes f32 products in f32)";
    if (o.gpuEmulate)
      return "--gpu-emulate is for --target=cuda (it compiles CUDA kernels "
             "for the CPU's emulator of a GPU)";
    if (o.computeType != "f32")
      return "--compute-type=" + o.computeType +
             " is for --target=cuda (the CPU kernels compute in f32; "
             "--quantize stores weights in 8 or 4 bits)";
    return "";
  }

  std::string configure(const CompileOptions &o) override {
    std::string masked = mlir::tfc::hostCpuMaskError();
    if (!masked.empty())
      return masked;
    mlir::tfc::CpuTargetOptions t;
    t.cpu = o.cpu;
    t.features = o.features;
    t.l1dBytes = o.cpuL1dKib * 1024;
    t.l2Bytes = o.cpuL2Kib * 1024;
    host_ = mlir::tfc::resolveCpuTarget(t);
    host_.outlineBlocks = !o.inlineBlocks;
    host_.codegenThreads = o.codegenThreads;
    if (o.codegenPartSize)
      host_.codegenPartInstructions = o.codegenPartSize;
    isa_ = o.cpuKernels.empty() ? std::string(mlir::tfc::cpuKernelIsa(host_))
                                : o.cpuKernels;
    return resolveTuning(o);
  }

  void buildTensorPipeline(mlir::OpPassManager &pm) const override {
    mlir::tfc::buildCpuTensorPipeline(pm, isa_, host_.l1dBytes, host_.l2Bytes,
                                      tuning_);
  }

  void buildLoweringPipeline(mlir::OpPassManager &pm, Stage) const override {
    mlir::tfc::buildCpuLoweringPipeline(pm, host_);
  }

  const mlir::tfc::CpuTargetOptions &host() const override { return host_; }

  mlir::LogicalResult emitLLVMIR(mlir::ModuleOp module, std::string &out,
                                 std::string &error) const override {
    return mlir::tfc::emitCpuLLVMIR(module, host_, out, error);
  }
  mlir::LogicalResult emitObject(mlir::ModuleOp module,
                                 llvm::SmallVectorImpl<char> &object,
                                 std::string &error) const override {
    return mlir::tfc::emitCpuObject(module, host_, object, error);
  }
  mlir::LogicalResult
  emitObjects(mlir::ModuleOp module,
              std::vector<llvm::SmallVector<char, 0>> &objects,
              std::string &error) const override {
    return mlir::tfc::emitCpuObjects(module, host_, objects, error);
  }

private:
  /// The GEMM's tuning: --gemm-tuning, else the record of the tuning file
  /// for this host and isa_ when compiling for the host (no --cpu or
  /// --features: a record is measured on this machine). A file named by
  /// --tune-file or TFC_TUNE_FILE must exist; the default one may not. A
  /// file that does not parse is an error either way: its records were
  /// meant to apply.
  std::string resolveTuning(const CompileOptions &o) {
    tuning_.clear();
    if (!o.gemmTuning.empty()) {
      tuning_ = o.gemmTuning;
      return "";
    }
    if (o.tuneFile == "none" || !o.cpu.empty() || !o.features.empty())
      return "";
    bool named = !o.tuneFile.empty() || std::getenv("TFC_TUNE_FILE");
    std::string path =
        o.tuneFile.empty() ? ::tfc::tuning::tuneFileInEffect() : o.tuneFile;
    if (path.empty() || (!named && !::tfc::tuning::fileExists(path)))
      return "";
    ::tfc::tuning::TuneFile file;
    std::string error;
    if (!::tfc::tuning::readTuneFile(path, file, error))
      return "tuning records: " + error +
             (named ? "" : " (run tfc-tune again, or delete the file)");
    if (const ::tfc::tuning::TuneRecord *record = ::tfc::tuning::findRecord(
            file, ::tfc::tuning::hostCpuIdentity(), isa_))
      tuning_ = ::tfc::tuning::formatGemmTuning(record->gemm);
    return "";
  }

  mlir::tfc::CpuTargetOptions host_;
  std::string isa_;
  std::string tuning_;
};

/// NVIDIA GPUs: PTX per architecture, host glue for x86-64.
class CudaBackend final : public TargetBackend {
public:
  StringRef name() const override { return "cuda"; }

  void registerDialects(mlir::DialectRegistry &registry) const override {
    mlir::tfc::registerCudaTargetDialects(registry);
  }

  std::string check(const CompileOptions &o, Stage stage) const override {
    if (o.gpuEmulate && stage == Stage::Ptx)
      return "--emit=ptx prints PTX, which --gpu-emulate does not make";
    if (!o.cpuVariants.empty())
      return "--cpu-variants makes a CPU library with one build per CPU; it "
             "does not combine with --target=cuda, --cpu, --features, "
             "--cpu-kernels, --cpu-l1d-kib or --cpu-l2-kib";
    if (o.cpuL1dKib != 0 || o.cpuL2Kib != 0)
      return std::string(o.cpuL1dKib ? "--cpu-l1d-kib" : "--cpu-l2-kib") +
             " sizes the CPU kernels' cache blocking; a CUDA model has none";
    if (!o.gemmTuning.empty() || (!o.tuneFile.empty() && o.tuneFile != "none"))
      return std::string(o.gemmTuning.empty() ? "--tune-file"
                                              : "--gemm-tuning") +
             " tunes the CPU kernels' GEMM; a CUDA model has none";
    if (o.gpuFp32Matmul != "ieee" && o.gpuFp32Matmul != "tf32")
      return "--gpu-fp32-matmul takes ieee or tf32, not '" + o.gpuFp32Matmul +
             "'";
    if (o.computeType != "f32" && o.computeType != "f16" &&
        o.computeType != "bf16")
      return "--compute-type takes f32, f16 or bf16, not '" + o.computeType +
             "'";
    return "";
  }

  std::string configure(const CompileOptions &o) override {
    mlir::tfc::CpuTargetOptions t;
    t.cpu = o.cpu;
    t.features = o.features;
    // The host side of a CUDA model is glue: portable x86-64 unless asked.
    if (t.cpu.empty() && t.features.empty())
      t.cpu = "x86-64";
    host_ = mlir::tfc::resolveCpuTarget(t);
    host_.outlineBlocks = !o.inlineBlocks;
    if (!o.gpuArchs.empty())
      cuda_.archs.assign(o.gpuArchs.begin(), o.gpuArchs.end());
    cuda_.cudaPath = o.cudaPath;
    cuda_.tf32Matmul = o.gpuFp32Matmul == "tf32";
    cuda_.emulate = o.gpuEmulate;
    std::string error;
    if (mlir::failed(mlir::tfc::resolveCudaTarget(cuda_, error)))
      return error;
    return "";
  }

  void prepare(mlir::ModuleOp module) const override {
    mlir::tfc::setCudaTarget(module);
  }

  void buildTensorPipeline(mlir::OpPassManager &pm) const override {
    mlir::tfc::buildCudaTensorPipeline(pm);
  }

  void buildLoweringPipeline(mlir::OpPassManager &pm,
                             Stage stage) const override {
    mlir::tfc::buildCudaLoweringPipeline(pm, cuda_, host_,
                                         /*deviceCodeOnly=*/stage ==
                                             Stage::Ptx);
  }

  const mlir::tfc::CpuTargetOptions &host() const override { return host_; }

private:
  mlir::tfc::CpuTargetOptions host_;
  mlir::tfc::CudaTargetOptions cuda_;
};

/// The registry: one entry per target.
struct Entry {
  StringRef name;
  std::unique_ptr<TargetBackend> (*create)();
};
const Entry kTargets[] = {
    {"cpu", [] { return std::unique_ptr<TargetBackend>(new CpuBackend); }},
    {"cuda", [] { return std::unique_ptr<TargetBackend>(new CudaBackend); }},
};

} // namespace

std::unique_ptr<TargetBackend> tfc::compiler::createTarget(StringRef name) {
  for (const Entry &e : kTargets)
    if (e.name == name)
      return e.create();
  return nullptr;
}

std::string tfc::compiler::targetNames() {
  std::string names;
  for (const Entry &e : kTargets)
    names += (names.empty() ? "" : ", ") + e.name.str();
  return names;
}
