//===- tfc-opt.cpp - The tfc optimizer driver -------------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// An mlir-opt with the tfc dialect and passes added to every upstream dialect,
// pass and LLVM IR translation interface.
//
//===----------------------------------------------------------------------===//

#include "tfc/Conversion/Passes.h"
#include "tfc/Dialect/Tfc/IR/TfcDialect.h"
#include "tfc/Dialect/Tfc/Transforms/Passes.h"
#include "tfc/Dialect/TfcCpu/IR/TfcCpu.h"
#include "tfc/Dialect/TfcKernel/Transforms/Passes.h"
#include "tfc/Target/CPU/CPUTarget.h"
#include "tfc/Target/CPU/Passes.h"
#include "tfc/Target/Host/Passes.h"
#include "tfc/Target/NVPTX/NVPTXTarget.h"
#include "tfc/Target/NVPTX/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::tfc::registerTfcPasses();
  mlir::tfc::registerTfcConversionPasses();
  mlir::tfc::registerTfcHostPasses();
  mlir::tfc::registerTfcCPUPasses();
  mlir::tfc::registerTfcNVPTXPasses();
  mlir::tfc::kernel::registerTfcKernelPasses();

  mlir::DialectRegistry registry;
  registry.insert<mlir::tfc::TfcDialect, mlir::tfc::cpu::TfcCpuDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::tfc::registerCudaTargetDialects(registry); // includes the CPU's
  mlir::registerAllToLLVMIRTranslations(registry);

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv,
      "tfc optimizer driver: the tfc dialect and passes plus every "
      "upstream dialect and pass\n",
      registry));
}
