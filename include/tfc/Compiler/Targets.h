//===- Targets.h - The registry of compilation targets ----------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// What the compiler library knows of a target, behind one interface: the
// dialects its pipelines need, the checks and resolution of its options,
// and its pipelines from fused tfc to code. Session asks the registry for
// the target its options name (`CompileOptions::target`, tfc-compile's
// --target=) and has no other per-target code. A new target is a
// TargetBackend over its own library (lib/Target/<T>) and one entry in
// lib/Compiler/Targets.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_COMPILER_TARGETS_H
#define TFC_COMPILER_TARGETS_H

#include "tfc/Compiler/Compiler.h"
#include "tfc/Target/CPU/CPUTarget.h"

#include "mlir/Pass/PassManager.h"

#include <memory>
#include <string>

namespace mlir {
class DialectRegistry;
class ModuleOp;
} // namespace mlir

namespace tfc::compiler {

class TargetBackend {
public:
  virtual ~TargetBackend() = default;

  /// The name --target= uses.
  virtual llvm::StringRef name() const = 0;
  virtual void registerDialects(mlir::DialectRegistry &registry) const = 0;
  /// Checks `options` against what the target supports for `stage`; the
  /// message when they do not fit, else "".
  virtual std::string check(const CompileOptions &options,
                            Stage stage) const = 0;
  /// Resolves the options (the host CPU, GPU architectures, the toolkit);
  /// the message on failure, else "".
  virtual std::string configure(const CompileOptions &options) = 0;
  /// Marks `module` as this target's (its `tfc.target`), before lowering.
  virtual void prepare(mlir::ModuleOp module) const {}
  /// Fused tfc -> linalg/tensor and kernel ops (`--emit=linalg`).
  virtual void buildTensorPipeline(mlir::OpPassManager &pm) const = 0;
  /// Kernel ops and linalg -> the LLVM dialect and device code; `stage`
  /// says how far (Ptx: device code only).
  virtual void buildLoweringPipeline(mlir::OpPassManager &pm,
                                     Stage stage) const = 0;
  /// The CPU the model's host code is compiled for.
  virtual const mlir::tfc::CpuTargetOptions &host() const = 0;
  /// The lowered module as optimised LLVM IR text, or as an object file for
  /// host(): HostTarget.h's emission, with whatever code of its own the
  /// target links in (the CPU target: its micro-kernels).
  virtual mlir::LogicalResult emitLLVMIR(mlir::ModuleOp module,
                                         std::string &out,
                                         std::string &error) const {
    return mlir::tfc::emitLLVMIR(module, host(), out, error);
  }
  virtual mlir::LogicalResult emitObject(mlir::ModuleOp module,
                                         llvm::SmallVectorImpl<char> &object,
                                         std::string &error) const {
    return mlir::tfc::emitObject(module, host(), object, error);
  }
  /// The same as one object or several to link together (code generation
  /// split over host().codegenThreads threads).
  virtual mlir::LogicalResult
  emitObjects(mlir::ModuleOp module,
              std::vector<llvm::SmallVector<char, 0>> &objects,
              std::string &error) const {
    return mlir::tfc::emitObjects(module, host(), objects, error);
  }
};

/// The target called `name`, or null.
std::unique_ptr<TargetBackend> createTarget(llvm::StringRef name);

/// The names of every target, comma-separated (for messages).
std::string targetNames();

} // namespace tfc::compiler

#endif // TFC_COMPILER_TARGETS_H
