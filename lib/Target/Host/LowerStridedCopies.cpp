//===- LowerStridedCopies.cpp - The tfc-lower-strided-copies pass ---------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Target/Host/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_LOWERSTRIDEDCOPIES
#include "tfc/Target/Host/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;

namespace {
bool isContiguous(Type t) {
  auto m = cast<MemRefType>(t);
  return m.getLayout().isIdentity();
}

struct LowerStridedCopiesPass
    : tfc::impl::LowerStridedCopiesBase<LowerStridedCopiesPass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation().walk([&](memref::CopyOp copy) {
      if (!all && isContiguous(copy.getSource().getType()) &&
          isContiguous(copy.getTarget().getType()))
        return;
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    });
  }
};
} // namespace
