//===- ExpandTableSlots.cpp - The tfc-expand-table-slots pass -------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// tfc-model-abi reads every weight and derived constant of a model as one
// `tfc.table_slot` op, so that the passes from bufferisation to the LLVM
// lowering see one op per read (a model of 30 layers reads hundreds of
// slots in tfc_model_init and in each entry; their memref descriptors were
// most of the IR those passes worked through). Here, first in the host's
// LLVM lowering, each becomes what it stands for: the slot's pointer loaded
// from the table and a descriptor of the static shape over it, row-major,
// offset 0.
//
//===----------------------------------------------------------------------===//

#include "tfc/Target/Host/Descriptors.h"

#include "tfc/Dialect/Tfc/IR/TfcOps.h"
#include "tfc/Target/Host/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_EXPANDTABLESLOTS
#include "tfc/Target/Host/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

struct ExpandTableSlotsPass
    : tfc::impl::ExpandTableSlotsBase<ExpandTableSlotsPass> {
  void runOnOperation() override {
    SmallVector<TableSlotOp> slots;
    getOperation().walk([&](TableSlotOp op) { slots.push_back(op); });
    for (TableSlotOp op : slots) {
      if (!isa<LLVM::LLVMPointerType>(op.getTable().getType())) {
        op.emitError("tfc.table_slot: the table is ")
            << op.getTable().getType() << ", expected !llvm.ptr";
        return signalPassFailure();
      }
      OpBuilder b(op);
      Value pointer = cpu::loadPointer(b, op.getLoc(), op.getTable(),
                                       static_cast<int64_t>(op.getIndex()));
      Value memref = cpu::memrefFromPointer(b, op.getLoc(), pointer,
                                            cast<MemRefType>(op.getType()), {});
      op.getResult().replaceAllUsesWith(memref);
      op->erase();
    }
  }
};

} // namespace
