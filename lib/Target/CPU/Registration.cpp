//===- Registration.cpp - The host's dialects and the CPU dialect ---------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Target/CPU/CPUTarget.h"

#include "tfc/Dialect/TfcCpu/IR/TfcCpu.h"

#include "mlir/IR/DialectRegistry.h"

using namespace mlir;

void tfc::registerCpuTargetDialects(DialectRegistry &registry) {
  registerHostTargetDialects(registry);
  registry.insert<cpu::TfcCpuDialect>();
}
