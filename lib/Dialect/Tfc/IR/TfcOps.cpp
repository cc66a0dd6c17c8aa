//===- TfcOps.cpp - Operations of the tfc dialect ---------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Shape inference, verifiers and custom assembly of the tfc ops. Folders and
// canonicalisation patterns live in TfcFolds.cpp.
//
//===----------------------------------------------------------------------===//

#include "tfc/Dialect/Tfc/IR/TfcOps.h"
#include "tfc/Dialect/Tfc/IR/PositionBias.h"
#include "tfc/Dialect/Tfc/IR/ShapeRules.h"
#include "tfc/Formats/DType.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfc;

#include "tfc/Dialect/Tfc/IR/TfcEnums.cpp.inc"

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

static bool isDynamic(int64_t size) { return ShapedType::isDynamic(size); }

/// Two sizes agree if either is dynamic or both are equal.
static bool sizesAgree(int64_t a, int64_t b) {
  return shapes::StaticDims::agree(a, b);
}

/// The more refined of two agreeing sizes.
static int64_t mergeSizes(int64_t a, int64_t b) {
  return shapes::StaticDims::merge(a, b);
}

/// Renders a shape as `[?, 12, ?, 64]` for diagnostics.
static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(shape, os, [&](int64_t d) {
    if (isDynamic(d))
      os << "?";
    else
      os << d;
  });
  os << "]";
  return s;
}

/// Renders a double the short way (`0.5`, `1e-12`).
static std::string numberString(double value) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%g", value);
  return s;
}

static std::string shapeString(Type type) {
  if (auto shaped = dyn_cast<RankedTensorType>(type))
    return shapeString(shaped.getShape());
  return "<unranked>";
}

FailureOr<SmallVector<int64_t>> mlir::tfc::broadcastShapes(ArrayRef<int64_t> lhs,
                                                           ArrayRef<int64_t> rhs) {
  shapes::Result<int64_t> r =
      shapes::broadcast<shapes::StaticDims>(lhs, rhs);
  if (!r.ok())
    return failure();
  return SmallVector<int64_t>(r.shape.begin(), r.shape.end());
}

bool mlir::tfc::areCompatibleTensorTypes(TypeRange lhs, TypeRange rhs) {
  if (lhs.size() != rhs.size())
    return false;
  for (auto [l, r] : llvm::zip_equal(lhs, rhs)) {
    auto lt = dyn_cast<RankedTensorType>(l);
    auto rt = dyn_cast<RankedTensorType>(r);
    if (!lt || !rt || lt.getElementType() != rt.getElementType() ||
        failed(verifyCompatibleShape(lt.getShape(), rt.getShape())))
      return false;
  }
  return true;
}

/// Reports through `emitError` (if any) and fails.
template <typename... Args>
static LogicalResult fail(EmitErrorFn emitError, Args &&...args) {
  if (emitError) {
    InFlightDiagnostic diag = emitError();
    (diag << ... << std::forward<Args>(args));
  }
  return failure();
}

/// `type` as a ranked tensor of `rank` (any rank if negative).
static FailureOr<RankedTensorType> expectTensor(EmitErrorFn emitError,
                                                Type type, StringRef what,
                                                int64_t rank = -1) {
  auto tensor = dyn_cast_or_null<RankedTensorType>(type);
  if (!tensor)
    return fail(emitError, what, " must be a ranked tensor, got ", type);
  if (rank >= 0 && tensor.getRank() != rank)
    return fail(emitError, what, " must have rank ", rank, ", got ",
                shapeString(tensor));
  return tensor;
}

/// The verifier's half of a `Tfc_InferOp`: the declared result type must be
/// compatible with the inferred one and at least as refined (a size the
/// operands determine is never declared `?`: the lowerings build the result
/// from the operands' sizes; a less refined type is a `tensor.cast` after
/// the op).
static LogicalResult verifyInferred(Operation *op,
                                    FailureOr<RankedTensorType> inferred) {
  if (failed(inferred))
    return failure();
  Type declared = op->getResult(0).getType();
  if (!areCompatibleTensorTypes(TypeRange{declared}, TypeRange{*inferred}))
    return op->emitOpError() << "result type " << declared
                             << " does not match the inferred type "
                             << *inferred;
  auto shaped = cast<RankedTensorType>(declared);
  for (int64_t d = 0; d < shaped.getRank(); ++d)
    if (shaped.isDynamicDim(d) && !inferred->isDynamicDim(d))
      return op->emitOpError()
             << "result type " << declared << " is less refined than the "
             << "inferred type " << *inferred << " (dim " << d
             << "); declare the inferred type and tensor.cast it";
  return success();
}

/// Checks that `vec` is a vector of the last axis of `in`.
static LogicalResult expectFeatureVector(Operation *op, Value vec,
                                         RankedTensorType in, StringRef what) {
  auto type = cast<RankedTensorType>(vec.getType());
  Type elementType = in.getElementType();
  shapes::Result<int64_t> r = shapes::featureVector<shapes::StaticDims>(
      in.getShape(), type.getShape(), what);
  if (!r.ok())
    return op->emitOpError() << r.error;
  if (type.getElementType() != elementType)
    return op->emitOpError() << what << " element type " << type.getElementType()
                             << " differs from the input's " << elementType;
  return success();
}

Type infer::resultOrPlaceholder(FailureOr<RankedTensorType> inferred,
                                Value like) {
  if (succeeded(inferred))
    return *inferred;
  return RankedTensorType::get({}, getElementTypeOrSelf(like.getType()));
}

//===----------------------------------------------------------------------===//
// Shape inference
//===----------------------------------------------------------------------===//

// The rules are ShapeRules.h's over MLIR's dims; these wrappers check what
// is not a shape (ranked tensors, element types) and report the rule's
// message.

using Static = shapes::StaticDims;
static_assert(Static::kDynamic == ShapedType::kDynamic,
              "ShapeRules' dynamic size must be MLIR's");

/// A rule's shape as a tensor of `elementType`, or its message reported.
static FailureOr<RankedTensorType> toType(const shapes::Result<int64_t> &r,
                                          Type elementType,
                                          EmitErrorFn emitError) {
  if (!r.ok())
    return fail(emitError, r.error);
  return RankedTensorType::get(r.shape, elementType);
}

FailureOr<RankedTensorType> infer::broadcast(ArrayRef<Type> operands,
                                             EmitErrorFn emitError) {
  SmallVector<int64_t> shape;
  SmallVector<RankedTensorType> tensors;
  for (Type t : operands) {
    auto tensor = expectTensor(emitError, t, "operand");
    if (failed(tensor))
      return failure();
    tensors.push_back(*tensor);
    shapes::Result<int64_t> merged =
        shapes::broadcast<Static>(shape, tensor->getShape());
    if (!merged.ok()) {
      std::string all;
      llvm::raw_string_ostream os(all);
      llvm::interleave(
          tensors, os, [&](RankedTensorType t) { os << shapeString(t); },
          " and ");
      return fail(emitError, "operand shapes ", all, " do not broadcast");
    }
    shape.assign(merged.shape.begin(), merged.shape.end());
  }
  return RankedTensorType::get(shape, tensors.back().getElementType());
}

FailureOr<RankedTensorType> infer::embedding(Type tableType, Type idsType,
                                             EmitErrorFn emitError) {
  auto table = expectTensor(emitError, tableType, "table");
  if (failed(table))
    return failure();
  auto ids = expectTensor(emitError, idsType, "ids");
  if (failed(ids))
    return failure();
  return toType(shapes::embedding<Static>(table->getShape(), ids->getShape()),
                table->getElementType(), emitError);
}

FailureOr<RankedTensorType> infer::linear(Type inputType, Type weightType,
                                          Type biasType,
                                          EmitErrorFn emitError) {
  auto x = expectTensor(emitError, inputType, "input");
  if (failed(x))
    return failure();
  auto w = expectTensor(emitError, weightType, "weight");
  if (failed(w))
    return failure();
  std::optional<ArrayRef<int64_t>> bias;
  if (biasType) {
    auto b = expectTensor(emitError, biasType, "bias");
    if (failed(b))
      return failure();
    bias = b->getShape();
  }
  return toType(shapes::linear<Static>(x->getShape(), w->getShape(), bias),
                x->getElementType(), emitError);
}

FailureOr<RankedTensorType> infer::matmul(Type lhsType, Type rhsType,
                                          bool transposeLhs, bool transposeRhs,
                                          EmitErrorFn emitError) {
  auto a = expectTensor(emitError, lhsType, "lhs");
  if (failed(a))
    return failure();
  auto b = expectTensor(emitError, rhsType, "rhs");
  if (failed(b))
    return failure();
  return toType(shapes::matmul<Static>(a->getShape(), b->getShape(),
                                       transposeLhs, transposeRhs),
                a->getElementType(), emitError);
}

FailureOr<RankedTensorType> infer::attention(Type queryType, Type keyType,
                                             Type valueType, Type maskType,
                                             EmitErrorFn emitError) {
  auto q = expectTensor(emitError, queryType, "query");
  if (failed(q))
    return failure();
  auto k = expectTensor(emitError, keyType, "key");
  if (failed(k))
    return failure();
  auto v = expectTensor(emitError, valueType, "value");
  if (failed(v))
    return failure();
  // Keys and values have the query's element type, or both f16 under an
  // f32 query (a KV cache kept in half precision, widened as it is read).
  Type qe = q->getElementType(), ke = k->getElementType(),
       ve = v->getElementType();
  bool halfCache = qe.isF32() && ke.isF16() && ve.isF16();
  if (!halfCache && (qe != ke || qe != ve))
    return fail(emitError, "query, key and value element types differ: ", qe,
                ", ", ke, ", ", ve,
                " (key and value may differ from the query only as f16 "
                "under an f32 query)");
  std::optional<ArrayRef<int64_t>> mask;
  if (maskType) {
    auto m = expectTensor(emitError, maskType, "mask");
    if (failed(m))
      return failure();
    if (m->getElementType() != q->getElementType())
      return fail(emitError, "mask element type ", m->getElementType(),
                  " differs from the query's ", q->getElementType());
    mask = m->getShape();
  }
  return toType(shapes::attention<Static>(q->getShape(), k->getShape(),
                                          v->getShape(), mask),
                q->getElementType(), emitError);
}

FailureOr<RankedTensorType> infer::reduction(Type inputType, int64_t axis,
                                             bool keepdim, Type elementType,
                                             EmitErrorFn emitError) {
  auto type = expectTensor(emitError, inputType, "input");
  if (failed(type))
    return failure();
  return toType(shapes::reduce<Static>(type->getShape(), axis, keepdim),
                elementType ? elementType : type->getElementType(),
                emitError);
}

FailureOr<RankedTensorType> infer::transpose(Type inputType,
                                             ArrayRef<int64_t> perm,
                                             EmitErrorFn emitError) {
  auto type = expectTensor(emitError, inputType, "input");
  if (failed(type))
    return failure();
  return toType(shapes::transpose<Static>(type->getShape(), perm),
                type->getElementType(), emitError);
}

FailureOr<RankedTensorType> infer::splitHeads(Type inputType, int64_t heads,
                                              EmitErrorFn emitError) {
  auto x = expectTensor(emitError, inputType, "input");
  if (failed(x))
    return failure();
  return toType(shapes::splitHeads<Static>(x->getShape(), heads),
                x->getElementType(), emitError);
}

FailureOr<RankedTensorType> infer::slice(Type inputType, int64_t axis,
                                         int64_t start, int64_t size,
                                         EmitErrorFn emitError) {
  auto x = expectTensor(emitError, inputType, "input");
  if (failed(x))
    return failure();
  return toType(shapes::slice<Static>(x->getShape(), axis, start, size),
                x->getElementType(), emitError);
}

FailureOr<RankedTensorType> infer::mergeHeads(Type inputType,
                                              EmitErrorFn emitError) {
  auto x = expectTensor(emitError, inputType, "input");
  if (failed(x))
    return failure();
  return toType(shapes::mergeHeads<Static>(x->getShape()),
                x->getElementType(), emitError);
}

//===----------------------------------------------------------------------===//
// Broadcasting elementwise assembly
//===----------------------------------------------------------------------===//

ParseResult mlir::tfc::parseBroadcastOp(OpAsmParser &parser,
                                        OperationState &result,
                                        unsigned numOperands) {
  SmallVector<OpAsmParser::UnresolvedOperand, 3> operands;
  SMLoc operandsLoc = parser.getCurrentLocation();
  Type type;
  if (parser.parseOperandList(operands, numOperands) ||
      parser.parseOptionalAttrDict(result.attributes) ||
      parser.parseColonType(type))
    return failure();

  SmallVector<Type, 3> operandTypes;
  if (auto fn = dyn_cast<FunctionType>(type)) {
    if (fn.getNumInputs() != numOperands || fn.getNumResults() != 1)
      return parser.emitError(operandsLoc)
             << "expected a type `(" << numOperands
             << " operand types) -> result type`, got " << type;
    llvm::append_range(operandTypes, fn.getInputs());
    result.addTypes(fn.getResults());
  } else {
    operandTypes.assign(numOperands, type);
    result.addTypes(type);
  }
  return parser.resolveOperands(operands, operandTypes, operandsLoc,
                                result.operands);
}

void mlir::tfc::printBroadcastOp(OpAsmPrinter &printer, Operation *op) {
  printer << ' ';
  printer.printOperands(op->getOperands());
  printer.printOptionalAttrDict(op->getAttrs());
  printer << " : ";
  Type resultType = op->getResult(0).getType();
  if (llvm::all_of(op->getOperandTypes(),
                   [&](Type t) { return t == resultType; }))
    printer << resultType;
  else
    printer.printFunctionalType(op);
}

//===----------------------------------------------------------------------===//
// Elementwise primitives
//===----------------------------------------------------------------------===//

#define TFC_BINARY_OP(OP)                                                      \
  LogicalResult OP::verify() {                                                 \
    return verifyInferred(                                                     \
        *this, infer::broadcast({getLhs().getType(), getRhs().getType()},      \
                                [&] { return emitOpError(); }));               \
  }                                                                            \
  ParseResult OP::parse(OpAsmParser &parser, OperationState &result) {         \
    return parseBroadcastOp(parser, result, 2);                                \
  }                                                                            \
  void OP::print(OpAsmPrinter &printer) { printBroadcastOp(printer, *this); }
TFC_BINARY_OP(AddOp)
TFC_BINARY_OP(SubOp)
TFC_BINARY_OP(MulOp)
TFC_BINARY_OP(DivOp)
TFC_BINARY_OP(MaxOp)
TFC_BINARY_OP(MinOp)
TFC_BINARY_OP(PowOp)
#undef TFC_BINARY_OP

LogicalResult WhereOp::verify() {
  if (getOnTrue().getType().getElementType() !=
      getOnFalse().getType().getElementType())
    return emitOpError() << "on_true and on_false element types differ: "
                         << getOnTrue().getType().getElementType() << " vs "
                         << getOnFalse().getType().getElementType();
  return verifyInferred(
      *this, infer::broadcast({getCondition().getType(),
                               getOnTrue().getType(), getOnFalse().getType()},
                              [&] { return emitOpError(); }));
}

ParseResult WhereOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseBroadcastOp(parser, result, 3);
}

void WhereOp::print(OpAsmPrinter &printer) { printBroadcastOp(printer, *this); }

LogicalResult CastOp::verify() {
  if (failed(verifyCompatibleShape(getInput().getType(), getType())))
    return emitOpError() << "changes the shape "
                         << shapeString(getInput().getType()) << " to "
                         << shapeString(getType())
                         << "; a cast only converts the element type";
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

#define TFC_REDUCTION_OP(OP, ELEMENT_TYPE)                                     \
  LogicalResult OP::verify() {                                                 \
    return verifyInferred(                                                     \
        *this, infer::reduction(getInput().getType(), getAxis(), getKeepdim(), \
                                ELEMENT_TYPE, [&] { return emitOpError(); })); \
  }
TFC_REDUCTION_OP(ReduceSumOp, Type())
TFC_REDUCTION_OP(ReduceMaxOp, Type())
TFC_REDUCTION_OP(ReduceMeanOp, Type())
TFC_REDUCTION_OP(ArgmaxOp, IntegerType::get(getContext(), 64))
#undef TFC_REDUCTION_OP

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::verify() {
  return verifyInferred(*this,
                        infer::transpose(getInput().getType(), getPermutation(),
                                         [&] { return emitOpError(); }));
}

LogicalResult ReshapeOp::verify() {
  RankedTensorType in = getInput().getType();
  RankedTensorType out = getType();
  int64_t numDynamic = out.getNumDynamicDims();
  if (static_cast<int64_t>(getDynamicSizes().size()) != numDynamic)
    return emitOpError() << "result type has " << numDynamic
                         << " dynamic sizes but " << getDynamicSizes().size()
                         << " size operands were given";
  if (in.hasStaticShape() && out.hasStaticShape() &&
      in.getNumElements() != out.getNumElements())
    return emitOpError() << "cannot reshape " << shapeString(in) << " ("
                         << in.getNumElements() << " elements) to "
                         << shapeString(out) << " (" << out.getNumElements()
                         << " elements)";
  return success();
}

//===----------------------------------------------------------------------===//
// Composite ops
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::verify() {
  return verifyInferred(*this, infer::embedding(getTable().getType(),
                                                getIds().getType(),
                                                [&] { return emitOpError(); }));
}

LogicalResult LinearOp::verify() {
  Type bias = getBias() ? getBias().getType() : Type();
  return verifyInferred(*this,
                        infer::linear(getInput().getType(),
                                      getWeight().getType(), bias,
                                      [&] { return emitOpError(); }));
}

LogicalResult MatmulOp::verify() {
  return verifyInferred(
      *this, infer::matmul(getLhs().getType(), getRhs().getType(),
                           getTransposeLhs(), getTransposeRhs(),
                           [&] { return emitOpError(); }));
}

/// Verifies the optional scale/bias vectors of the normalisation ops.
template <typename NormOp>
static LogicalResult verifyNorm(NormOp op, ArrayRef<Value> vectors,
                                ArrayRef<StringRef> names) {
  RankedTensorType in = op.getInput().getType();
  if (in.getRank() < 1)
    return op.emitOpError() << "input must have rank >= 1";
  if (!areCompatibleTensorTypes(in, op.getType()))
    return op.emitOpError() << "result type " << op.getType()
                            << " differs from the input type " << in;
  double eps = op.getEpsilon().convertToDouble();
  if (!(eps >= 0.0) || !std::isfinite(eps))
    return op.emitOpError() << "epsilon must be finite and >= 0, got "
                            << numberString(eps);
  for (auto [vec, name] : llvm::zip_equal(vectors, names))
    if (vec && failed(expectFeatureVector(op, vec, in, name)))
      return failure();
  if (Value residual = op.getResidual())
    if (!areCompatibleTensorTypes(residual.getType(), in))
      return op.emitOpError() << "residual type " << residual.getType()
                              << " differs from the input type " << in;
  return success();
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "needs at least one input";
  auto first = cast<RankedTensorType>(getInputs().front().getType());
  int64_t rank = first.getRank(), axis = getAxis();
  if (axis >= rank)
    return emitOpError() << "axis " << axis << " is out of range for rank "
                         << rank;
  SmallVector<int64_t> shape(first.getShape());
  for (Value v : getInputs().drop_front()) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != rank)
      return emitOpError() << "inputs have different ranks: " << first
                           << " and " << t;
    for (int64_t i = 0; i < rank; ++i) {
      if (i == axis) {
        shape[i] = isDynamic(shape[i]) || t.isDynamicDim(i)
                       ? ShapedType::kDynamic
                       : shape[i] + t.getDimSize(i);
      } else if (!sizesAgree(shape[i], t.getDimSize(i))) {
        return emitOpError() << "inputs differ in dim " << i
                             << " (not the concatenated axis): " << first
                             << " and " << t;
      } else {
        shape[i] = mergeSizes(shape[i], t.getDimSize(i));
      }
    }
  }
  auto expected = RankedTensorType::get(shape, first.getElementType());
  if (!areCompatibleTensorTypes(expected, getType()))
    return emitOpError() << "result type " << getType()
                         << " differs from the inferred " << expected;
  return success();
}

LogicalResult LayerNormOp::verify() {
  return verifyNorm(*this, {getScale(), getBias()}, {"scale", "bias"});
}

LogicalResult RmsNormOp::verify() {
  return verifyNorm(*this, {getScale()}, {"scale"});
}

LogicalResult SoftmaxOp::verify() {
  if (getAxis() >= static_cast<uint64_t>(getType().getRank()))
    return emitOpError() << "axis " << getAxis()
                         << " is out of range for rank " << getType().getRank();
  return success();
}

/// The kernels index keys and distances in 32-bit lanes.
static constexpr int64_t kMaxWindow = int64_t(1) << 30;
static constexpr int64_t kMaxRelativeWidth = (int64_t(1) << 30) + 1;

LogicalResult AttentionOp::verify() {
  if (failed(verifyInferred(
          *this, infer::attention(getQuery().getType(), getKey().getType(),
                                  getValue().getType(),
                                  getMask() ? getMask().getType() : Type(),
                                  [&] { return emitOpError(); }))))
    return failure();
  ArrayRef<int64_t> qs = getQuery().getType().getShape();
  if (Value lengths = getRowPast()) {
    auto t = cast<RankedTensorType>(lengths.getType());
    if (t.getRank() != 1 || (!isDynamic(t.getDimSize(0)) && !isDynamic(qs[0]) &&
                             t.getDimSize(0) != qs[0]))
      return emitOpError() << "row_past must be [B] with the query's batch "
                           << "B (" << shapeString(qs) << "), got "
                           << shapeString(t.getShape());
  }
  if (std::optional<APFloat> scale = getScale()) {
    double s = scale->convertToDouble();
    if (!(s > 0.0) || !std::isfinite(s))
      return emitOpError() << "scale must be finite and > 0, got "
                           << numberString(s);
  } else if (isDynamic(qs[3]) || qs[3] == 0) {
    return emitOpError() << "needs an explicit scale: the head size of query "
                         << shapeString(qs)
                         << (qs[3] == 0 ? " is 0" : " is dynamic");
  }
  if (std::optional<uint64_t> window = getWindow()) {
    if (static_cast<int64_t>(*window) <= 0 ||
        static_cast<int64_t>(*window) > kMaxWindow)
      return emitOpError() << "window must be in [1, " << kMaxWindow
                           << "], got " << static_cast<int64_t>(*window);
    if (!getCausal())
      return emitOpError() << "a window needs causal attention (it counts "
                              "keys back from the diagonal)";
  }
  if (std::optional<APFloat> alibi = getAlibi()) {
    double m = alibi->convertToDouble();
    if (!(m > 0.0) || !std::isfinite(m))
      return emitOpError() << "alibi (the maximum bias) must be finite and "
                              "> 0, got "
                           << numberString(m);
  }
  if (std::optional<APFloat> cap = getSoftcap()) {
    double c = cap->convertToDouble();
    if (!(c > 0.0) || !std::isfinite(c))
      return emitOpError() << "softcap must be finite and > 0, got "
                           << numberString(c);
  }
  if (Value bias = getRelativeBias()) {
    auto bt = cast<RankedTensorType>(bias.getType());
    if (bt.getElementType() != getQuery().getType().getElementType())
      return emitOpError() << "relative_bias element type "
                           << bt.getElementType() << " differs from the query's "
                           << getQuery().getType().getElementType();
    if (bt.getRank() != 2 || isDynamic(bt.getDimSize(0)) ||
        isDynamic(bt.getDimSize(1)) || bt.getDimSize(1) % 2 != 1 ||
        bt.getDimSize(1) > kMaxRelativeWidth ||
        (!isDynamic(qs[1]) && bt.getDimSize(0) != qs[1]))
      return emitOpError() << "relative_bias must be [heads, 2R + 1] with "
                              "heads = "
                           << (isDynamic(qs[1]) ? std::string("?") : std::to_string(qs[1]))
                           << " and a static odd width of at most "
                           << kMaxRelativeWidth << ", both static; got "
                           << shapeString(bt);
  }
  return success();
}

LogicalResult AttentionOp::canonicalize(AttentionOp op,
                                       PatternRewriter &rewriter) {
  std::optional<APFloat> scale = op.getScale();
  int64_t d = op.getQuery().getType().getDimSize(3);
  if (!scale || isDynamic(d) ||
      scale->convertToDouble() != 1.0 / std::sqrt(static_cast<double>(d)))
    return failure();
  rewriter.modifyOpInPlace(op, [&] { op.removeScaleAttr(); });
  return success();
}

int64_t AttentionOp::getRelativeDistance() {
  Value bias = getRelativeBias();
  if (!bias)
    return 0;
  return (cast<RankedTensorType>(bias.getType()).getDimSize(1) - 1) / 2;
}

LogicalResult RelativePositionBiasOp::verify() {
  RankedTensorType table = getTable().getType(), result = getType();
  int64_t buckets = static_cast<int64_t>(getNumBuckets());
  int64_t distance = static_cast<int64_t>(getMaxDistance());
  std::string why = relativeBucketsError(buckets, distance, getBidirectional());
  if (!why.empty())
    return emitOpError() << why;
  if (table.getRank() != 2 || table.getDimSize(0) != buckets ||
      isDynamic(table.getDimSize(1)))
    return emitOpError() << "table must be [num_buckets = " << buckets
                         << ", heads] with static heads, got "
                         << shapeString(table);
  SmallVector<int64_t> expected = {table.getDimSize(1), 2 * distance + 1};
  if (result.getElementType() != table.getElementType() ||
      failed(verifyCompatibleShape(result.getShape(), expected)))
    return emitOpError() << "result must be " << shapeString(expected)
                         << " of " << table.getElementType() << ", got "
                         << result;
  return success();
}

double AttentionOp::getEffectiveScale() {
  if (std::optional<APFloat> scale = getScale())
    return scale->convertToDouble();
  return 1.0 / std::sqrt(
                   static_cast<double>(getQuery().getType().getDimSize(3)));
}

LogicalResult RopeOp::verify() {
  RankedTensorType type = getType();
  if (type.getRank() < 2)
    return emitOpError() << "input must be [..., seq, features], got "
                         << shapeString(type);
  int64_t d = type.getShape().back();
  if (!isDynamic(d) && d % 2 != 0)
    return emitOpError() << "feature size " << d << " must be even";
  if (Value rows = getRowOffsets()) {
    auto t = cast<RankedTensorType>(rows.getType());
    int64_t b = type.getDimSize(0);
    if (getOffset())
      return emitOpError() << "takes an offset or row_offsets, not both";
    if (type.getRank() < 3 || t.getRank() != 1 ||
        (!isDynamic(t.getDimSize(0)) && !isDynamic(b) && t.getDimSize(0) != b))
      return emitOpError() << "row_offsets must be [B] for an input [B, ..., "
                           << "seq, features], got "
                           << shapeString(t.getShape()) << " for "
                           << shapeString(type.getShape());
  }
  if (std::optional<uint64_t> r = getRotaryDim()) {
    if (*r % 2 != 0)
      return emitOpError() << "rotary_dim " << *r << " must be even";
    if (!isDynamic(d) && static_cast<int64_t>(*r) > d)
      return emitOpError() << "rotary_dim " << *r
                           << " exceeds the feature size " << d;
  }
  double base = getBase().convertToDouble();
  if (!(base > 1.0) || !std::isfinite(base))
    return emitOpError() << "base must be finite and > 1, got "
                           << numberString(base);
  if (std::optional<ArrayRef<double>> scale = getFreqScale()) {
    int64_t rotary =
        getRotaryDim() ? static_cast<int64_t>(*getRotaryDim()) : d;
    if (!isDynamic(rotary) &&
        static_cast<int64_t>(scale->size()) != rotary / 2)
      return emitOpError() << "freq_scale has " << scale->size()
                           << " entries, expected one per rotated pair ("
                           << rotary / 2 << ")";
    for (double s : *scale)
      if (!(s > 0.0) || !std::isfinite(s))
        return emitOpError() << "freq_scale entries must be finite and > 0, "
                             << "got " << numberString(s);
  }
  return success();
}

LogicalResult SinusoidalPositionsOp::verify() {
  RankedTensorType type = getType();
  if (type.getRank() != 2 || isDynamic(type.getDimSize(1)))
    return emitOpError() << "result must be [seq, features] with a static "
                         << "feature size, got " << shapeString(type);
  if (getHalves() && type.getDimSize(1) % 2)
    return emitOpError() << "halves needs an even feature size, got "
                         << type.getDimSize(1);
  double base = getBase().convertToDouble();
  if (!(base > 1.0) || !std::isfinite(base))
    return emitOpError() << "base must be finite and > 1, got "
                           << numberString(base);
  return success();
}

const QuantFormat *mlir::tfc::lookupQuantFormat(StringRef name) {
  static const auto formats = [] {
    SmallVector<QuantFormat> out;
    for (const ::tfc::rt::DTypeTraits &t : ::tfc::rt::kDTypeTable)
      if (t.quantized)
        out.push_back({t.name, t.blockElements, t.blockBytes});
    return out;
  }();
  for (const QuantFormat &f : formats)
    if (f.name == name)
      return &f;
  return nullptr;
}

Type mlir::tfc::elementTypeOf(MLIRContext *context, StringRef name) {
  const ::tfc::rt::DTypeTraits *t =
      ::tfc::rt::dtypeByName(std::string_view(name));
  if (!t || !t->isModelType())
    return {};
  Builder b(context);
  switch (t->type) {
  case ::tfc::rt::DType::F64:
    return b.getF64Type();
  case ::tfc::rt::DType::F32:
    return b.getF32Type();
  case ::tfc::rt::DType::F16:
    return b.getF16Type();
  case ::tfc::rt::DType::BF16:
    return b.getBF16Type();
  case ::tfc::rt::DType::I64:
    return b.getI64Type();
  case ::tfc::rt::DType::I32:
    return b.getI32Type();
  case ::tfc::rt::DType::Bool:
    return b.getI1Type();
  default:
    return {};
  }
}

SmallVector<StringRef> mlir::tfc::elementTypeNames() {
  SmallVector<StringRef> names;
  for (const ::tfc::rt::DTypeTraits &t : ::tfc::rt::kDTypeTable)
    if (t.isModelType())
      names.push_back(t.name);
  return names;
}

StringRef mlir::tfc::elementTypeName(Type type) {
  for (StringRef name : elementTypeNames())
    if (elementTypeOf(type.getContext(), name) == type)
      return name;
  return "";
}

LogicalResult WeightOp::verify() {
  if (getName().empty())
    return emitOpError() << "name must not be empty";
  if (!getType().hasStaticShape())
    return emitOpError() << "weight '" << getName()
                         << "' must have a static shape, got "
                         << shapeString(getType());
  if (!getQuant())
    return success();
  const QuantFormat *format = lookupQuantFormat(*getQuant());
  if (!format)
    return emitOpError() << "unknown quantised format '" << *getQuant()
                         << "' (expected " << ::tfc::rt::quantFormatList()
                         << ")";
  auto type = getType();
  Type element = type.getElementType();
  if (element.isF32()) {
    if (type.getRank() < 1 ||
        type.getShape().back() % format->blockElements != 0)
      return emitOpError() << "a " << format->name
                           << " weight's last dim must be a multiple of "
                           << format->blockElements << ", got "
                           << shapeString(type);
    return success();
  }
  if (element.isInteger(8)) {
    if (type.getRank() < 2 || type.getShape().back() != format->blockBytes)
      return emitOpError() << "the raw form of a " << format->name
                           << " weight is [..., blocks, "
                           << format->blockBytes << "] i8, got "
                           << shapeString(type);
    return success();
  }
  return emitOpError() << "a " << format->name
                       << " weight is f32 (its values) or i8 (its blocks), "
                          "got "
                       << element;
}

LogicalResult ArangeOp::verify() {
  if (getType().getRank() != 1)
    return emitOpError() << "result must be [length], got "
                         << shapeString(getType());
  return success();
}

LogicalResult SliceOp::verify() {
  return verifyInferred(*this, infer::slice(getInput().getType(), getAxis(),
                                            getStart(), getSize(),
                                            [&] { return emitOpError(); }));
}

LogicalResult CausalMaskOp::verify() {
  if (getType().getRank() != 2)
    return emitOpError() << "result must be [q_len, kv_len], got "
                         << shapeString(getType());
  return success();
}

LogicalResult PaddingMaskOp::verify() {
  RankedTensorType in = getInput().getType();
  RankedTensorType out = getType();
  if (in.getRank() != 2)
    return emitOpError() << "input must be [batch, kv_len], got "
                         << shapeString(in);
  if (out.getRank() != 4 || out.getDimSize(1) != 1 || out.getDimSize(2) != 1 ||
      !sizesAgree(out.getDimSize(0), in.getDimSize(0)) ||
      !sizesAgree(out.getDimSize(3), in.getDimSize(1)))
    return emitOpError() << "result must be [batch, 1, 1, kv_len] = "
                         << shapeString({in.getDimSize(0), 1, 1,
                                         in.getDimSize(1)})
                         << ", got " << shapeString(out);
  return success();
}

LogicalResult SplitHeadsOp::verify() {
  return verifyInferred(*this,
                        infer::splitHeads(getInput().getType(), getHeads(),
                                          [&] { return emitOpError(); }));
}

LogicalResult MergeHeadsOp::verify() {
  return verifyInferred(*this, infer::mergeHeads(getInput().getType(),
                                                 [&] { return emitOpError(); }));
}

#define GET_OP_CLASSES
#include "tfc/Dialect/Tfc/IR/TfcOps.cpp.inc"
