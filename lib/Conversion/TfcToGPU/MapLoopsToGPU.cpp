//===- MapLoopsToGPU.cpp - The tfc-map-loops-to-gpu pass ------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "GpuKernelUtils.h"

#include "tfc/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_MAPLOOPSTOGPU
#include "tfc/Conversion/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc::gpuk;

namespace {

constexpr int64_t kThreads = 256;

/// Replaces the outermost `loop` by a gpu.launch with one thread per
/// iteration.
LogicalResult mapToLaunch(scf::ParallelOp loop) {
  if (!loop.getInitVals().empty())
    return loop.emitError("a parallel loop with reductions cannot run as a "
                          "GPU kernel yet");
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  SmallVector<Value> counts;
  for (auto [lb, ub, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    Value span = arith::SubIOp::create(
        b, loc, arith::MaxSIOp::create(b, loc, ub, lb), lb);
    counts.push_back(arith::CeilDivUIOp::create(b, loc, span, step));
  }
  Value total = product(b, loc, counts);
  Value one = indexConst(b, loc, 1);
  gpu::LaunchOp op = launch(
      b, loc, {ceilDiv(b, loc, total, kThreads), one, one}, kThreads, {},
      [&](OpBuilder &b, Location l, const LaunchIds &ids) {
        Value id = arith::AddIOp::create(
            b, l,
            arith::MulIOp::create(b, l, ids.block[0],
                                  indexConst(b, l, kThreads)),
            ids.thread);
        Value inside =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, id, total);
        ifThen(b, l, inside, [&](OpBuilder &b, Location l) {
          SmallVector<Value> coords = delinearize(b, l, id, counts);
          IRMapping mapping;
          for (auto [iv, coord, lb, step] :
               llvm::zip(loop.getInductionVars(), coords, loop.getLowerBound(),
                         loop.getStep()))
            mapping.map(
                iv, arith::AddIOp::create(
                        b, l, lb, arith::MulIOp::create(b, l, coord, step)));
          for (Operation &op : loop.getBody()->without_terminator())
            b.clone(op, mapping);
        });
      });
  // Fused elementwise code and copies: a kernel of that name (the kernel
  // ops are named after themselves by tfc-cuda-lower-kernels).
  op.setFunctionAttr(FlatSymbolRefAttr::get(b.getContext(), "tfc_elementwise"));
  loop.erase();
  return success();
}

/// Whether `op` reads or writes buffer contents (which live on the device).
bool touchesMemory(Operation *op) {
  return isa<memref::LoadOp, memref::StoreOp, memref::CopyOp, vector::LoadOp,
             vector::StoreOp, vector::MaskedLoadOp, vector::MaskedStoreOp,
             vector::TransferReadOp, vector::TransferWriteOp>(op) ||
         isa<linalg::LinalgDialect>(op->getDialect());
}

/// Small integer lists the host itself fills and reads must stay host
/// memory: the shapes memref.reshape takes, and the pointer and condition
/// lists that the deallocation pipeline hands to its helper (`dealloc_helper`,
/// where a layer function's results leave ownership to be decided at run
/// time). A 1-D static buffer of integers used only by the host (scalar
/// stores and loads, its address, a reshape's shape, a cast passed to a
/// call) becomes a stack allocation, which the check below allows the host
/// to access. Returns the functions that receive such lists: their loads
/// and stores of those arguments are the host's too.
llvm::DenseSet<Operation *> keepHostListsOnHost(ModuleOp module) {
  SmallVector<memref::AllocOp> lists;
  llvm::SetVector<Operation *> callees;
  module.walk([&](memref::AllocOp alloc) {
    MemRefType type = alloc.getType();
    if (alloc->getParentOfType<gpu::LaunchOp>() || !type.hasStaticShape() ||
        type.getRank() != 1 || !type.getElementType().isIntOrIndex())
      return;
    SmallVector<Operation *> calls;
    auto hostUse = [&](OpOperand &use) {
      Operation *user = use.getOwner();
      if (user->getParentOfType<gpu::LaunchOp>())
        return false;
      if (auto reshape = dyn_cast<memref::ReshapeOp>(user))
        return reshape.getShape() == use.get();
      if (auto store = dyn_cast<memref::StoreOp>(user))
        return store.getMemRef() == use.get();
      if (auto call = dyn_cast<func::CallOp>(user)) {
        calls.push_back(module.lookupSymbol(call.getCalleeAttr()));
        return calls.back() != nullptr;
      }
      return isa<memref::LoadOp, memref::DeallocOp,
                 memref::ExtractAlignedPointerAsIndexOp>(user);
    };
    for (OpOperand &use : alloc->getUses()) {
      if (auto cast = dyn_cast<memref::CastOp>(use.getOwner())) {
        for (OpOperand &castUse : cast->getUses())
          if (!isa<func::CallOp>(castUse.getOwner()) || !hostUse(castUse))
            return;
        continue;
      }
      if (!hostUse(use))
        return;
    }
    lists.push_back(alloc);
    callees.insert(calls.begin(), calls.end());
  });
  for (memref::AllocOp alloc : lists) {
    OpBuilder b(alloc);
    auto alloca = memref::AllocaOp::create(b, alloc.getLoc(), alloc.getType());
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (isa<memref::DeallocOp>(user))
        user->erase();
    alloc.replaceAllUsesWith(alloca.getResult());
    alloc.erase();
  }
  // A callee all of whose memref arguments are such lists at every call.
  llvm::DenseSet<Operation *> hostFunctions;
  for (Operation *callee : callees) {
    auto fn = dyn_cast<func::FuncOp>(callee);
    if (!fn || fn.isExternal() || fn.isPublic())
      continue;
    bool all = true;
    std::optional<SymbolTable::UseRange> uses = fn.getSymbolUses(module);
    if (!uses)
      continue;
    for (const SymbolTable::SymbolUse &use : *uses) {
      auto call = dyn_cast<func::CallOp>(use.getUser());
      if (!call) {
        all = false;
        break;
      }
      for (Value arg : call.getOperands()) {
        if (!isa<MemRefType>(arg.getType()))
          continue;
        if (auto cast = arg.getDefiningOp<memref::CastOp>())
          arg = cast.getSource();
        if (!arg.getDefiningOp<memref::AllocaOp>())
          all = false;
      }
    }
    if (all)
      hostFunctions.insert(fn);
  }
  return hostFunctions;
}

/// Whether `op` writes or reads host memory: the host stack
/// (memref.alloca), an argument of a function that only receives host
/// lists (`hostFunctions`), or an entry argument the host holds
/// (`tfc.host`, e.g. the position `past` of a cached entry, which the
/// runtime never uploads).
bool onHost(Operation *op, const llvm::DenseSet<Operation *> &hostFunctions) {
  Value memref;
  if (auto store = dyn_cast<memref::StoreOp>(op))
    memref = store.getMemRef();
  else if (auto load = dyn_cast<memref::LoadOp>(op))
    memref = load.getMemRef();
  if (!memref)
    return false;
  if (memref.getDefiningOp<memref::AllocaOp>())
    return true;
  auto arg = dyn_cast<BlockArgument>(memref);
  auto fn = arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp())
                : func::FuncOp();
  if (!fn || arg.getOwner() != &fn.front())
    return false;
  if (hostFunctions.contains(fn))
    return true;
  return isa<memref::LoadOp>(op) &&
         fn.getArgAttr(arg.getArgNumber(), "tfc.host");
}

struct MapLoopsToGPUPass
    : mlir::tfc::impl::MapLoopsToGPUBase<MapLoopsToGPUPass> {
  void runOnOperation() override {
    SmallVector<scf::ParallelOp> outermost;
    getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::LaunchOp, gpu::GPUModuleOp>(op))
        return WalkResult::skip();
      if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
        outermost.push_back(loop);
        return WalkResult::skip();
      }
      return WalkResult::advance();
    });
    for (scf::ParallelOp loop : outermost)
      if (failed(mapToLaunch(loop)))
        return signalPassFailure();
    getOperation().walk(
        [](gpu::LaunchOp launch) { promoteSharedAllocas(launch); });

    llvm::DenseSet<Operation *> hostFunctions =
        keepHostListsOnHost(getOperation());
    WalkResult result =
        getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
          if (isa<gpu::LaunchOp, gpu::GPUModuleOp>(op))
            return WalkResult::skip();
          if (touchesMemory(op) && !onHost(op, hostFunctions)) {
            op->emitError("this operation would access device memory from the "
                          "host; the CUDA target runs every buffer access in a "
                          "kernel");
            return WalkResult::interrupt();
          }
          return WalkResult::advance();
        });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
