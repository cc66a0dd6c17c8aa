//===- QuantizeWeights.cpp - The tfc-quantize-weights pass -----------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Sets or drops the `quant` storage format of weights (Passes.td has the
// rules). The values of the model do not change in the IR: a quantised
// weight is still its f32 values to every op and to the interpreter; what
// changes is what the runtime binds and which kernel the CPU backend uses.
//
//===----------------------------------------------------------------------===//

#include "tfc/Dialect/Tfc/IR/TfcOps.h"
#include "tfc/Dialect/Tfc/Transforms/Passes.h"
#include "tfc/Formats/DType.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCQUANTIZEWEIGHTS
#include "tfc/Dialect/Tfc/Transforms/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// Whether `v` reaches the weight operand of a linear, directly or as an
/// input of an axis-0 concat.
bool usedAsLinearWeight(Value v) {
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (auto linear = dyn_cast<LinearOp>(user))
      if (linear.getWeight() == v)
        return true;
    if (auto concat = dyn_cast<ConcatOp>(user))
      if (concat.getAxis() == 0 && usedAsLinearWeight(concat.getResult()))
        return true;
  }
  return false;
}

struct QuantizeWeightsPass
    : mlir::tfc::impl::TfcQuantizeWeightsBase<QuantizeWeightsPass> {
  using Base::Base;
  void runOnOperation() override {
    const QuantFormat *target = nullptr;
    if (format != "none") {
      target = lookupQuantFormat(format);
      const ::tfc::rt::DTypeTraits *row =
          ::tfc::rt::quantFormatByName(std::string_view(format));
      if (!target || !row || !::tfc::rt::canQuantize(row->type)) {
        std::string writable;
        for (const ::tfc::rt::DTypeTraits &t : ::tfc::rt::kDTypeTable)
          if (t.quantized && ::tfc::rt::canQuantize(t.type))
            writable += std::string(t.name) + ", ";
        // "q8_0, ..., q5_1 or none"
        if (!writable.empty())
          writable.resize(writable.size() - 2);
        getOperation().emitError(target ? "tfc has no quantiser for '"
                                        : "unknown weight format '")
            << format << "' (expected " << writable << " or none)";
        return signalPassFailure();
      }
    }
    // Every reference to one name gets the same format (the model ABI
    // requires it): decide per name, then set.
    llvm::StringMap<bool> eligible;
    getOperation().walk([&](WeightOp w) {
      auto type = w.getType();
      bool ok = target && type.getElementType().isF32() &&
                type.getRank() == 2 &&
                type.getShape().back() % target->blockElements == 0 &&
                usedAsLinearWeight(w.getResult());
      eligible[w.getName()] |= ok;
    });
    getOperation().walk([&](WeightOp w) {
      if (target && eligible.lookup(w.getName()))
        w.setQuantAttr(StringAttr::get(&getContext(), target->name));
      else if (!target)
        w.removeQuantAttr();
    });
  }
};

} // namespace
