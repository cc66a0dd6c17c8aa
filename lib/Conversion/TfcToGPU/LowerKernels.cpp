//===- LowerKernels.cpp - The tfc-cuda-lower-kernels pass -----------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Each kernel op on buffers is replaced by the gpu.launch of its CUDA kernel
// (GpuKernels.h), writing the op's destination in device memory.
//
//===----------------------------------------------------------------------===//

#include "GpuKernels.h"

#include "tfc/Conversion/Passes.h"
#include "tfc/Dialect/TfcKernel/IR/TfcKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::tfc {
#define GEN_PASS_DEF_CUDALOWERKERNELS
#include "tfc/Conversion/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

LogicalResult lowerKernelOp(OpBuilder &b, Operation *op, bool tf32) {
  // The GPU kernels compute in f32 on f32, f16 and bf16 data.
  for (Type t : op->getOperandTypes()) {
    Type element = cast<ShapedType>(t).getElementType();
    if (!element.isF32() && !element.isF16() && !element.isBF16())
      return op->emitOpError("the GPU kernels support f32, f16 and bf16; got ")
             << t;
  }
  Location loc = op->getLoc();
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](kernel::SoftmaxOp k) {
        return gpuk::emitSoftmax(b, loc, k, k.getInput(), k.getInit());
      })
      .Case([&](kernel::LayerNormOp k) {
        return gpuk::emitLayerNorm(b, loc, k, k.getInput(), k.getScale(),
                                   k.getBias(), k.getResidual(), k.getInit());
      })
      .Case([&](kernel::RmsNormOp k) {
        return gpuk::emitRmsNorm(b, loc, k, k.getInput(), k.getScale(),
                                 k.getResidual(), k.getInit());
      })
      .Case([&](kernel::AttentionOp k) -> LogicalResult {
        if (k.getRowPast())
          return k.emitOpError(
              "per-row key lengths (rows at their own positions: the "
              "<entry>_rows form of --kv-cache) are not supported on the GPU "
              "yet");
        return gpuk::emitAttention(b, loc, k, k.getQuery(), k.getKey(),
                                   k.getValue(), k.getMask(),
                                   k.getRelativeBias(), k.getInit());
      })
      .Case([&](kernel::MatmulOp k) {
        return gpuk::emitMatmul(b, loc, k, k.getLhs(), k.getRhs(), k.getInit(),
                                tf32);
      })
      .Case([&](kernel::LinearOp k) {
        return gpuk::emitLinear(b, loc, k, k.getInput(), k.getWeight(),
                                k.getBias(), k.getInit(), tf32);
      })
      .Default([&](Operation *other) -> LogicalResult {
        return other->emitOpError(
            "is not a kernel the CUDA target knows (the CPU's packed and "
            "quantised kernels stay on the CPU)");
      });
}

/// Names the kernels that lowering `op` launched (the launches in
/// [first, op) of its block, nested ones too) after the op and the element
/// type it computes on: tfc_<op>_<type>, e.g. tfc_linear_f16 or
/// tfc_attention_bf16. Outlining gives each launch a function of that name
/// (tfc-merge-gpu-modules suffixes repeats with _N), which is what ptxas,
/// the SASS checks and TFC_CUDA_PROFILE report.
void nameLaunches(Operation *first, Operation *op) {
  std::string name = ("tfc_" + op->getName().stripDialect()).str();
  Type element = cast<ShapedType>(op->getOperand(0).getType()).getElementType();
  llvm::raw_string_ostream(name) << "_" << element;
  auto symbol = FlatSymbolRefAttr::get(op->getContext(), name);
  for (Operation *it = first; it && it != op; it = it->getNextNode())
    it->walk([&](gpu::LaunchOp launch) {
      if (!launch.getFunctionAttr())
        launch.setFunctionAttr(symbol);
    });
}

LogicalResult lowerKernel(OpBuilder &b, Operation *op, bool tf32) {
  Operation *before = op->getPrevNode();
  LogicalResult result = lowerKernelOp(b, op, tf32);
  if (succeeded(result))
    nameLaunches(before ? before->getNextNode() : &op->getBlock()->front(), op);
  return result;
}

struct CudaLowerKernelsPass
    : tfc::impl::CudaLowerKernelsBase<CudaLowerKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (fp32Matmul != "ieee" && fp32Matmul != "tf32") {
      getOperation().emitError("fp32-matmul takes ieee or tf32, not '")
          << fp32Matmul << "'";
      return signalPassFailure();
    }
    bool tf32 = fp32Matmul == "tf32";
    if (failed(kernel::lowerBufferKernels(getOperation(),
                                          [&](OpBuilder &b, Operation *op) {
                                            return lowerKernel(b, op, tf32);
                                          })))
      signalPassFailure();
  }
};

} // namespace
