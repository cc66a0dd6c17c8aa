//===- TfcCpu.cpp - The tfc_cpu dialect -----------------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Dialect/TfcCpu/IR/TfcCpu.h"
#include "tfc/Formats/DType.h"
#include "tfc/Target/CPU/MicroKernels.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::cpu;

namespace {
ShapedType shapedType(Value v) { return cast<ShapedType>(v.getType()); }

/// `v` (named `what`) has element type `expected`.
LogicalResult checkElement(Operation *op, Value v, StringRef what,
                           ArrayRef<Type> expected) {
  Type element = shapedType(v).getElementType();
  if (llvm::is_contained(expected, element))
    return success();
  InFlightDiagnostic diag = op->emitOpError()
                            << what << " must have element type ";
  llvm::interleave(expected, diag, " or ");
  return diag << ", got " << v.getType();
}
} // namespace

#include "tfc/Dialect/TfcCpu/IR/TfcCpuDialect.cpp.inc"

void TfcCpuDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tfc/Dialect/TfcCpu/IR/TfcCpuOps.cpp.inc"
      >();
}

LogicalResult PackOp::verify() {
  ShapedType in = shapedType(getInput()), out = getInitType();
  Type f32 = Float32Type::get(getContext());
  if (failed(checkElement(*this, getInput(), "input", f32)) ||
      failed(checkElement(*this, getInit(), "destination", f32)) ||
      failed(kernel::verifyKernelOperands(*this)))
    return failure();
  if (in.getRank() != 2 || out.getRank() != 3)
    return emitOpError("packs a rank-2 weight into rank-3 panels, got ")
           << in << " -> " << out;
  if (!in.hasStaticShape() || !out.hasStaticShape())
    return emitOpError("needs static shapes, got ") << in << " -> " << out;
  int64_t n = getTransposed() ? in.getDimSize(1) : in.getDimSize(0);
  int64_t k = getTransposed() ? in.getDimSize(0) : in.getDimSize(1);
  int64_t nr = out.getDimSize(2);
  if (nr <= 0 || out.getDimSize(1) != k ||
      out.getDimSize(0) != (n + nr - 1) / nr)
    return emitOpError("result ")
           << out << " is not the [ceil(N/NR), K, NR] panels of N = " << n
           << ", K = " << k;
  return success();
}

LogicalResult GemmOp::verify() {
  ShapedType in = shapedType(getInput()), w = shapedType(getWeight()),
             out = getInitType();
  Type f32 = Float32Type::get(getContext());
  if (failed(checkElement(*this, getInput(), "input", f32)) ||
      failed(checkElement(*this, getWeight(), "weight", f32)) ||
      (getBias() && failed(checkElement(*this, getBias(), "bias", f32))) ||
      failed(checkElement(*this, getInit(), "destination", f32)) ||
      failed(kernel::verifyKernelOperands(*this)))
    return failure();
  if (w.getRank() != 3 || !w.hasStaticShape())
    return emitOpError("weight must be static [P, K, NR] panels, got ") << w;
  if (in.getRank() < 1 || out.getRank() != in.getRank())
    return emitOpError("input and result must have the same rank >= 1");
  int64_t k = in.getDimSize(in.getRank() - 1);
  int64_t n = out.getDimSize(out.getRank() - 1);
  if (ShapedType::isDynamic(n))
    return emitOpError("the result's last dimension (N) must be static");
  if (!ShapedType::isDynamic(k) && k != w.getDimSize(1))
    return emitOpError("input has K = ") << k << " but the weight " << w;
  if (w.getDimSize(0) * w.getDimSize(2) < n ||
      (w.getDimSize(0) - 1) * w.getDimSize(2) >= n)
    return emitOpError("weight panels ") << w << " do not cover N = " << n;
  if (getBias()) {
    ShapedType b = shapedType(getBias());
    if (b.getRank() != 1 || b.getDimSize(0) != n)
      return emitOpError("bias must be [") << n << "], got " << b;
  }
  return success();
}

/// The format of a raw quantised weight [..., blocks, block bytes]: null
/// after reporting through `op` when unknown or not matching the type.
static const QuantFormat *checkRawWeight(Operation *op, StringRef name,
                                         ShapedType raw) {
  const QuantFormat *format = lookupQuantFormat(name);
  if (!format) {
    op->emitOpError("unknown quantised format '")
        << name << "' (expected " << ::tfc::rt::quantFormatList() << ")";
    return nullptr;
  }
  if (raw.getRank() < 2 || !raw.hasStaticShape() ||
      raw.getShape().back() != format->blockBytes ||
      !raw.getElementType().isInteger(8)) {
    op->emitOpError("a raw ") << name << " weight is static [..., blocks, "
                              << format->blockBytes << "] i8, got " << raw;
    return nullptr;
  }
  return format;
}

bool mlir::tfc::cpu::hasQGemmKernel(StringRef format) {
  const ::tfc::rt::DTypeTraits *t =
      ::tfc::rt::quantFormatByName(std::string_view(format));
  return t && tfc_uk_group_block_bytes(t->ggml) != 0;
}

int64_t mlir::tfc::cpu::quantGroupBlockBytes(const QuantFormat &format) {
  // The micro-kernels' packed layout: the group's rows' blocks rearranged
  // (tfc_uk_group_block_bytes in MicroKernels.h).
  const ::tfc::rt::DTypeTraits *t =
      ::tfc::rt::quantFormatByName(std::string_view(format.name));
  return t ? tfc_uk_group_block_bytes(t->ggml) : 0;
}

LogicalResult QPackOp::verify() {
  ShapedType in = shapedType(getInput()), out = getInitType();
  if (failed(checkElement(*this, getInit(), "destination",
                          IntegerType::get(getContext(), 8))) ||
      failed(kernel::verifyKernelOperands(*this)))
    return failure();
  const QuantFormat *format = checkRawWeight(*this, getFormat(), in);
  if (!format)
    return failure();
  if (!hasQGemmKernel(getFormat()))
    return emitOpError("no int8 kernel for ") << getFormat();
  if (in.getRank() != 3)
    return emitOpError("input must be [N, K / 32, block bytes], got ") << in;
  int64_t groups = (in.getDimSize(0) + kQuantGroupRows - 1) / kQuantGroupRows;
  SmallVector<int64_t> expected = {groups, in.getDimSize(1),
                                   quantGroupBlockBytes(*format)};
  if (out.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("the packed form of ")
           << in << " is "
           << RankedTensorType::get(expected, out.getElementType()) << ", not "
           << out;
  return success();
}

LogicalResult QGemmOp::verify() {
  ShapedType in = shapedType(getInput()), w = shapedType(getWeight()),
             out = getInitType();
  Type f32 = Float32Type::get(getContext());
  if (failed(checkElement(*this, getInput(), "input", f32)) ||
      failed(checkElement(*this, getWeight(), "weight",
                          IntegerType::get(getContext(), 8))) ||
      (getBias() && failed(checkElement(*this, getBias(), "bias", f32))) ||
      failed(checkElement(*this, getInit(), "destination", f32)) ||
      failed(kernel::verifyKernelOperands(*this)))
    return failure();
  const QuantFormat *format = lookupQuantFormat(getFormat());
  if (!format)
    return emitOpError("unknown quantised format '")
           << getFormat() << "' (expected " << ::tfc::rt::quantFormatList()
           << ")";
  if (!hasQGemmKernel(getFormat()))
    return emitOpError("no int8 kernel for ") << getFormat();
  int64_t actBlock = getActivationBlock();
  if (actBlock != 32 && !(actBlock == 256 && format->blockElements == 256))
    return emitOpError("activation_block must be 32, or 256 for a format of "
                       "256-element blocks (the K-quants); got ")
           << actBlock << " for " << getFormat();
  if (w.getRank() != 3 || !w.hasStaticShape() ||
      w.getDimSize(2) != quantGroupBlockBytes(*format))
    return emitOpError("weight must be packed [groups, K / 32, ")
           << quantGroupBlockBytes(*format) << "] (tfc_cpu.qpack), got " << w;
  if (in.getRank() < 1 || out.getRank() != in.getRank())
    return emitOpError("input and result must have the same rank >= 1");
  int64_t k = w.getDimSize(1) * format->blockElements;
  int64_t n = out.getDimSize(out.getRank() - 1);
  if (ShapedType::isDynamic(n) ||
      (n + kQuantGroupRows - 1) / kQuantGroupRows != w.getDimSize(0))
    return emitOpError("the result's last dimension N must have ")
           << w.getDimSize(0) << " groups of " << kQuantGroupRows
           << " rows, got " << out;
  if (failed(verifyCompatibleShape(in.getShape().drop_back(),
                                   out.getShape().drop_back())))
    return emitOpError("input ")
           << in << " and result " << out << " differ in their leading dims";
  int64_t inK = in.getDimSize(in.getRank() - 1);
  if (inK != k)
    return emitOpError("input has K = ")
           << (ShapedType::isDynamic(inK) ? std::string("?")
                                          : std::to_string(inK))
           << " but the weight " << w << " has K = " << k;
  if (getBias()) {
    ShapedType b = shapedType(getBias());
    if (b.getRank() != 1 || b.getDimSize(0) != n)
      return emitOpError("bias must be [") << n << "], got " << b;
  }
  return success();
}

LogicalResult QEmbeddingOp::verify() {
  ShapedType table = shapedType(getTable()), ids = shapedType(getIds()),
             out = getInitType();
  if (failed(checkElement(*this, getIds(), "ids",
                          {IntegerType::get(getContext(), 32),
                           IntegerType::get(getContext(), 64)})) ||
      failed(checkElement(*this, getInit(), "destination",
                          Float32Type::get(getContext()))) ||
      failed(kernel::verifyKernelOperands(*this)))
    return failure();
  const QuantFormat *format = checkRawWeight(*this, getFormat(), table);
  if (!format)
    return failure();
  if (table.getRank() != 3 || table.getDimSize(0) == 0)
    return emitOpError("table must be [V > 0, D / 32, block bytes], got ")
           << table;
  SmallVector<int64_t> expected(ids.getShape());
  expected.push_back(table.getDimSize(1) * format->blockElements);
  if (failed(verifyCompatibleShape(out.getShape(), expected)))
    return emitOpError("rows ")
           << ids << " of " << table << " are "
           << RankedTensorType::get(expected, out.getElementType()) << ", not "
           << out;
  return success();
}

LogicalResult DequantizeOp::verify() {
  ShapedType in = shapedType(getInput()), out = getInitType();
  if (failed(checkElement(*this, getInit(), "destination",
                          Float32Type::get(getContext()))) ||
      failed(kernel::verifyKernelOperands(*this)))
    return failure();
  const QuantFormat *format = checkRawWeight(*this, getFormat(), in);
  if (!format)
    return failure();
  SmallVector<int64_t> expected(in.getShape().drop_back(2));
  expected.push_back(in.getShape()[in.getRank() - 2] * format->blockElements);
  if (out.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("the values of ")
           << in << " are "
           << RankedTensorType::get(expected, out.getElementType()) << ", not "
           << out;
  return success();
}

#define GET_OP_CLASSES
#include "tfc/Dialect/TfcCpu/IR/TfcCpuOps.cpp.inc"
