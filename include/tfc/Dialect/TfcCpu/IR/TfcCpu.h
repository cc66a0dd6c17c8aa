//===- TfcCpu.h - The tfc_cpu dialect ---------------------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_DIALECT_TFCCPU_IR_TFCCPU_H
#define TFC_DIALECT_TFCCPU_IR_TFCCPU_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tfc/Dialect/Tfc/IR/TfcOps.h"
#include "tfc/Dialect/TfcKernel/IR/TfcKernel.h"

#include "tfc/Dialect/TfcCpu/IR/TfcCpuDialect.h.inc"

#define GET_OP_CLASSES
#include "tfc/Dialect/TfcCpu/IR/TfcCpuOps.h.inc"

namespace mlir::tfc::cpu {

/// The packed layout of quantised weights the micro-kernels read
/// (include/tfc/Target/CPU/MicroKernels.h, tfc_uk_qpack): groups of
/// kQuantGroupRows rows, each group and block of K a group-block of
/// quantGroupBlockBytes(format) bytes.
constexpr int64_t kQuantGroupRows = 8;
int64_t quantGroupBlockBytes(const QuantFormat &format);
/// Whether the int8 micro-kernels (tfc_cpu.qpack, tfc_cpu.qgemm) take
/// `format`: every block format tfc reads (q3_k on q6_k's kernels). A
/// format without them would be dequantised once at load
/// (tfc_cpu.dequantize) and go through the f32 GEMM.
bool hasQGemmKernel(StringRef format);

} // namespace mlir::tfc::cpu

#endif // TFC_DIALECT_TFCCPU_IR_TFCCPU_H
