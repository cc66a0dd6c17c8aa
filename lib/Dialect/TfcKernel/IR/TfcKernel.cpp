//===- TfcKernel.cpp - The tfc_kernel dialect -----------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Verifiers check what the kernel emitters rely on (ranks, the sizes that
// must agree where both are static, one element type); the tfc ops these
// are made from have checked the rest.
//
//===----------------------------------------------------------------------===//

#include "tfc/Dialect/TfcKernel/IR/TfcKernel.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;

using namespace mlir::tfc::kernel;
namespace kernel = mlir::tfc::kernel;

#include "tfc/Dialect/TfcKernel/IR/TfcKernelDialect.cpp.inc"

void TfcKernelDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tfc/Dialect/TfcKernel/IR/TfcKernelOps.cpp.inc"
      >();
}

void kernel::getKernelEffects(
    Operation *op,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  auto dps = cast<DestinationStyleOpInterface>(op);
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType()))
      continue;
    if (dps.isDpsInit(&operand))
      effects.emplace_back(MemoryEffects::Write::get(), &operand,
                           SideEffects::DefaultResource::get());
    else
      effects.emplace_back(MemoryEffects::Read::get(), &operand,
                           SideEffects::DefaultResource::get());
  }
}

Speculation::Speculatability kernel::getKernelSpeculatability(Operation *op) {
  return cast<DestinationStyleOpInterface>(op).hasPureTensorSemantics()
             ? Speculation::Speculatable
             : Speculation::NotSpeculatable;
}

LogicalResult kernel::verifyKernelOperands(Operation *op) {
  bool tensors = false, memrefs = false;
  for (Type t : op->getOperandTypes()) {
    tensors |= isa<RankedTensorType>(t);
    memrefs |= isa<MemRefType>(t);
  }
  if (tensors && memrefs)
    return op->emitOpError(
        "operands must be all tensors (before bufferisation) or all memrefs "
        "(after), not a mix");
  return success();
}

bool kernel::isBufferKernel(Operation *op) {
  auto dps = dyn_cast<DestinationStyleOpInterface>(op);
  return dps && op->hasTrait<KernelOp>() && dps.hasPureBufferSemantics();
}

LogicalResult kernel::lowerBufferKernels(
    Operation *root,
    function_ref<LogicalResult(OpBuilder &, Operation *)> lower) {
  SmallVector<Operation *> kernels;
  WalkResult r = root->walk([&](Operation *op) {
    if (!op->hasTrait<KernelOp>())
      return WalkResult::advance();
    if (!isBufferKernel(op)) {
      op->emitOpError("works on tensors: bufferise the module before "
                      "lowering its kernels");
      return WalkResult::interrupt();
    }
    kernels.push_back(op);
    return WalkResult::advance();
  });
  if (r.wasInterrupted())
    return failure();
  for (Operation *op : kernels) {
    OpBuilder b(op);
    if (failed(lower(b, op)))
      return failure();
    op->erase();
  }
  return success();
}

Value kernel::createDestination(OpBuilder &b, Location loc,
                                RankedTensorType type,
                                function_ref<SizeSource(int64_t)> sizeOf) {
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d)) {
      auto [source, dim] = sizeOf(d);
      sizes.push_back(tensor::DimOp::create(b, loc, source, dim));
    }
  return tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType(),
                                 sizes);
}

namespace {
ShapedType shapedType(Value v) {
  return v ? cast<ShapedType>(v.getType()) : ShapedType();
}

bool sameSize(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

/// `what` has the element type of the destination.
LogicalResult checkElementType(Operation *op, Value v, ShapedType init,
                               StringRef what) {
  if (v && shapedType(v).getElementType() != init.getElementType())
    return op->emitOpError()
           << what << " " << v.getType() << " must have the element type of "
           << "the destination " << init;
  return success();
}

/// A normalisation's operands: `vectors` are [D] (D the last dimension),
/// the residual and the destination the input's shape.
LogicalResult verifyNorm(Operation *op, Value input, ArrayRef<Value> vectors,
                         ArrayRef<StringRef> names, Value residual,
                         ShapedType init) {
  ShapedType in = shapedType(input);
  if (in.getRank() < 1 || failed(verifyCompatibleShape(in, init)))
    return op->emitOpError("input ") << in << " and destination " << init
                                     << " must have one shape of rank >= 1";
  int64_t d = in.getShape().back();
  for (auto [v, name] : llvm::zip(vectors, names)) {
    if (!v)
      continue;
    ShapedType t = shapedType(v);
    if (t.getRank() != 1 || !sameSize(t.getDimSize(0), d))
      return op->emitOpError() << name << " must be [" << d << "], got " << t;
    if (failed(checkElementType(op, v, init, name)))
      return failure();
  }
  if (residual && failed(verifyCompatibleShape(shapedType(residual), in)))
    return op->emitOpError("residual ")
           << residual.getType() << " must have the input's shape " << in;
  if (failed(checkElementType(op, input, init, "input")) ||
      failed(checkElementType(op, residual, init, "residual")))
    return failure();
  return verifyKernelOperands(op);
}
} // namespace

LogicalResult kernel::SoftmaxOp::verify() {
  return verifyNorm(*this, getInput(), {}, {}, Value(), getInitType());
}

LogicalResult kernel::LayerNormOp::verify() {
  return verifyNorm(*this, getInput(), {getScale(), getBias()},
                    {"scale", "bias"}, getResidual(), getInitType());
}

LogicalResult kernel::RmsNormOp::verify() {
  return verifyNorm(*this, getInput(), {getScale()}, {"scale"}, getResidual(),
                    getInitType());
}

int64_t kernel::AttentionOp::getRelativeDistance() {
  if (Value bias = getRelativeBias())
    return (shapedType(bias).getDimSize(1) - 1) / 2;
  return 0;
}

LogicalResult kernel::AttentionOp::verify() {
  ShapedType q = shapedType(getQuery()), k = shapedType(getKey()),
             v = shapedType(getValue()), init = getInitType();
  if (q.getRank() != 4 || k.getRank() != 4 || v.getRank() != 4 ||
      init.getRank() != 4)
    return emitOpError("query, key, value and destination must be rank 4 "
                       "([B, H, T, D]), got ")
           << q << ", " << k << ", " << v << ", " << init;
  if (!sameSize(q.getDimSize(3), k.getDimSize(3)) ||
      !sameSize(k.getDimSize(2), v.getDimSize(2)) ||
      !sameSize(k.getDimSize(1), v.getDimSize(1)))
    return emitOpError("query ") << q << ", key " << k << " and value " << v
                                 << " disagree in the head size or the keys";
  int64_t h = q.getDimSize(1), hkv = k.getDimSize(1);
  if (!ShapedType::isDynamic(h) && !ShapedType::isDynamic(hkv) &&
      (hkv == 0 || h % hkv != 0))
    return emitOpError("query heads (")
           << h << ") must be a multiple of key/value heads (" << hkv << ")";
  SmallVector<int64_t> expected = {q.getDimSize(0), h, q.getDimSize(2),
                                   v.getDimSize(3)};
  if (failed(verifyCompatibleShape(init.getShape(), expected)))
    return emitOpError("destination ") << init << " must be [B, H, Tq, Dv]";
  if (Value mask = getMask(); mask && shapedType(mask).getRank() > 4)
    return emitOpError("mask ") << mask.getType() << " has rank > 4";
  if (Value lengths = getRowPast()) {
    ShapedType t = shapedType(lengths);
    if (t.getRank() != 1 || !t.getElementType().isInteger(64) ||
        failed(verifyCompatibleShape(ArrayRef<int64_t>{t.getDimSize(0)},
                                     ArrayRef<int64_t>{q.getDimSize(0)})))
      return emitOpError("row_past must be i64 [B], got ") << t;
  }
  if (Value bias = getRelativeBias()) {
    ShapedType t = shapedType(bias);
    if (t.getRank() != 2 || ShapedType::isDynamic(t.getDimSize(1)) ||
        t.getDimSize(1) % 2 != 1)
      return emitOpError("relative_bias must be [H, 2R + 1], got ") << t;
  }
  double s = getScale().convertToDouble();
  if (!(s > 0.0) || !std::isfinite(s))
    return emitOpError("scale must be finite and > 0");
  if (std::optional<uint64_t> window = getWindow();
      window && static_cast<int64_t>(*window) <= 0)
    return emitOpError("window must be >= 1");
  // Keys and values may be f16 under an f32 destination (a KV cache kept
  // in half precision, tfc.attention).
  bool halfCache = init.getElementType().isF32() &&
                   k.getElementType().isF16() && v.getElementType().isF16();
  for (auto [value, name] :
       llvm::zip(ArrayRef<Value>{getQuery(), getKey(), getValue(), getMask(),
                                 getRelativeBias()},
                 ArrayRef<StringRef>{"query", "key", "value", "mask",
                                     "relative_bias"}))
    if ((!halfCache || (value != getKey() && value != getValue())) &&
        failed(checkElementType(*this, value, init, name)))
      return failure();
  return verifyKernelOperands(*this);
}

LogicalResult kernel::MatmulOp::verify() {
  ShapedType lhs = shapedType(getLhs()), rhs = shapedType(getRhs()),
             init = getInitType();
  if (lhs.getRank() < 2 || rhs.getRank() < 2 ||
      init.getRank() != std::max(lhs.getRank(), rhs.getRank()))
    return emitOpError("operands must be [..., M, K] and [..., K, N] with the "
                       "destination of the larger rank, got ")
           << lhs << ", " << rhs << " -> " << init;
  int64_t lr = lhs.getRank(), rr = rhs.getRank(), r = init.getRank();
  int64_t m = lhs.getDimSize(getTransposeLhs() ? lr - 1 : lr - 2);
  int64_t kl = lhs.getDimSize(getTransposeLhs() ? lr - 2 : lr - 1);
  int64_t kr = rhs.getDimSize(getTransposeRhs() ? rr - 1 : rr - 2);
  int64_t n = rhs.getDimSize(getTransposeRhs() ? rr - 2 : rr - 1);
  if (!sameSize(kl, kr) || !sameSize(m, init.getDimSize(r - 2)) ||
      !sameSize(n, init.getDimSize(r - 1)))
    return emitOpError("sizes disagree: ")
           << lhs << " x " << rhs << " -> " << init;
  if (failed(checkElementType(*this, getLhs(), init, "lhs")) ||
      failed(checkElementType(*this, getRhs(), init, "rhs")))
    return failure();
  return verifyKernelOperands(*this);
}

LogicalResult kernel::LinearOp::verify() {
  ShapedType in = shapedType(getInput()), w = shapedType(getWeight()),
             init = getInitType();
  if (in.getRank() < 1 || w.getRank() != 2 || init.getRank() != in.getRank())
    return emitOpError("input [..., K], weight [N, K] and destination "
                       "[..., N] expected, got ")
           << in << ", " << w << " -> " << init;
  int64_t r = in.getRank();
  if (!sameSize(in.getDimSize(r - 1), w.getDimSize(1)) ||
      !sameSize(init.getDimSize(r - 1), w.getDimSize(0)) ||
      failed(verifyCompatibleShape(in.getShape().drop_back(),
                                   init.getShape().drop_back())))
    return emitOpError("sizes disagree: ")
           << in << " x " << w << "ᵀ -> " << init;
  if (Value bias = getBias()) {
    ShapedType b = shapedType(bias);
    if (b.getRank() != 1 || !sameSize(b.getDimSize(0), w.getDimSize(0)))
      return emitOpError("bias must be [N], got ") << b;
  }
  if (failed(checkElementType(*this, getInput(), init, "input")) ||
      failed(checkElementType(*this, getWeight(), init, "weight")) ||
      failed(checkElementType(*this, getBias(), init, "bias")))
    return failure();
  return verifyKernelOperands(*this);
}

#define GET_OP_CLASSES
#include "tfc/Dialect/TfcKernel/IR/TfcKernelOps.cpp.inc"
