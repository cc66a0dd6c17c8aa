//===- ConvertComputeType.cpp - The tfc-convert-compute-type pass ---------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Rewrites an f32 model to compute in f16 or bf16 (Passes.td has the rules).
// Types change in place: every tfc op is element-type generic, and the
// verifier that runs after the pass checks every op against its new types.
//
//===----------------------------------------------------------------------===//

#include "tfc/Dialect/Tfc/IR/TfcOps.h"
#include "tfc/Dialect/Tfc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCCONVERTCOMPUTETYPE
#include "tfc/Dialect/Tfc/Transforms/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// `t` with f32 (as a scalar or a tensor's element) replaced by `to`; other
/// types as they are.
Type convert(Type t, FloatType to) {
  if (t.isF32())
    return to;
  if (auto tensor = dyn_cast<RankedTensorType>(t);
      tensor && tensor.getElementType().isF32())
    return tensor.clone(to);
  if (auto tensor = dyn_cast<UnrankedTensorType>(t);
      tensor && tensor.getElementType().isF32())
    return UnrankedTensorType::get(to);
  return t;
}

/// An f32 constant's value in `to` (rounded to nearest even); null when
/// `attr` is not one.
Attribute convertConstant(Attribute attr, FloatType to) {
  auto round = [&](const APFloat &v) {
    APFloat r = v;
    bool lost = false;
    r.convert(to.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    return r;
  };
  if (auto f = dyn_cast<FloatAttr>(attr); f && f.getType().isF32())
    return FloatAttr::get(to, round(f.getValue()));
  if (auto dense = dyn_cast<DenseFPElementsAttr>(attr);
      dense && dense.getElementType().isF32())
    return dense.mapValues(
        to, [&](const APFloat &v) { return round(v).bitcastToAPInt(); });
  return {};
}

struct ConvertComputeTypePass
    : tfc::impl::TfcConvertComputeTypeBase<ConvertComputeTypePass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    FloatType to;
    if (type == "f16")
      to = Float16Type::get(ctx);
    else if (type == "bf16")
      to = BFloat16Type::get(ctx);
    else if (type != "f32") {
      getOperation().emitError("tfc-convert-compute-type: type is f32, f16 "
                               "or bf16, not '")
          << type << "'";
      return signalPassFailure();
    }
    if (!to)
      return;
    bool failed = false;
    getOperation().walk([&](func::FuncOp fn) {
      if (fn.isExternal())
        return;
      if (mlir::failed(convertFunction(fn, to)))
        failed = true;
    });
    if (failed)
      signalPassFailure();
  }

  LogicalResult convertFunction(func::FuncOp fn, FloatType to) {
    // An entry keeps its signature but for its states; other functions
    // (outlined blocks) take and return the new types, as their callers
    // (converted below) pass.
    bool entry = fn.isPublic();
    Block &body = fn.getBody().front();
    OpBuilder b(fn.getContext());
    // An entry's states (--kv-cache: `tfc.state` arguments, `tfc.state_for`
    // results) are the runtime's to keep between runs: in the new type too,
    // else each step would convert the whole cache.
    SmallVector<Type> inputs, results;
    for (auto [i, t] : llvm::enumerate(fn.getArgumentTypes()))
      inputs.push_back(!entry || fn.getArgAttr(i, "tfc.state") ? convert(t, to)
                                                               : t);
    for (auto [i, t] : llvm::enumerate(fn.getResultTypes()))
      results.push_back(
          !entry || fn.getResultAttr(i, "tfc.state_for") ? convert(t, to) : t);
    fn.setType(b.getFunctionType(inputs, results));
    for (BlockArgument arg : body.getArguments())
      arg.setType(inputs[arg.getArgNumber()]);
    // Every op's f32 results (and nested regions' block arguments).
    WalkResult walked = fn.walk([&](Operation *op) -> WalkResult {
      if (op == fn.getOperation())
        return WalkResult::advance();
      if (auto weight = dyn_cast<WeightOp>(op)) {
        Type t = weight.getType();
        Type converted = convert(t, to);
        if (converted == t)
          return WalkResult::advance();
        b.setInsertionPointAfter(weight);
        auto cast = CastOp::create(b, weight.getLoc(), converted, weight);
        weight.getResult().replaceAllUsesExcept(cast, cast);
        return WalkResult::advance();
      }
      if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
        if (Attribute value = convertConstant(constant.getValue(), to)) {
          constant.setValueAttr(cast<TypedAttr>(value));
          constant.getResult().setType(cast<TypedAttr>(value).getType());
        }
        return WalkResult::advance();
      }
      if (isa<func::ReturnOp>(op) && entry && op->getParentOp() == fn) {
        // Back to the entry's f32 outputs.
        b.setInsertionPoint(op);
        for (OpOperand &operand : op->getOpOperands()) {
          Type want = fn.getResultTypes()[operand.getOperandNumber()];
          if (operand.get().getType() != want)
            operand.set(CastOp::create(b, op->getLoc(), want, operand.get()));
        }
        return WalkResult::advance();
      }
      for (Value result : op->getResults())
        result.setType(convert(result.getType(), to));
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            arg.setType(convert(arg.getType(), to));
      return WalkResult::advance();
    });
    if (walked.wasInterrupted())
      return failure();
    // An entry's f32 inputs, converted on the way in.
    if (entry) {
      b.setInsertionPointToStart(&body);
      for (BlockArgument arg : body.getArguments()) {
        Type converted = convert(arg.getType(), to);
        if (converted == arg.getType() || arg.use_empty())
          continue;
        auto cast = CastOp::create(b, fn.getLoc(), converted, arg);
        arg.replaceAllUsesExcept(cast, cast);
      }
    }
    return success();
  }
};

} // namespace
