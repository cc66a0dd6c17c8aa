//===- Pipeline.cpp - The CPU pass pipelines ------------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Target/CPU/CPUTarget.h"

#include "tfc/Conversion/Passes.h"
#include "tfc/Dialect/TfcKernel/Transforms/Passes.h"
#include "tfc/Target/CPU/Passes.h"
#include "tfc/Target/Host/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void tfc::buildCpuTensorPipeline(OpPassManager &pm, llvm::StringRef isa,
                                 int64_t l1dBytes, int64_t l2Bytes,
                                 llvm::StringRef gemmTuning) {
  ConvertLinearToGemmOptions gemm;
  gemm.gemmTuning = gemmTuning.str();
  gemm.isa = isa.str();
  gemm.l1dBytes = l1dBytes;
  gemm.l2Bytes = l2Bytes;
  pm.addPass(createConvertLinearToGemm(gemm));
  pm.addPass(createConvertTfcToLinalg());
  pm.addPass(createConvertTfcToKernels());
  pm.addPass(createLinalgElementwiseOpFusionPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Every layer's ops alike for tfc-outline-blocks (first in the lowering).
  pm.addPass(createHoistBlockInvariants());
}

void tfc::buildCpuLoweringPipeline(OpPassManager &pm,
                                   const CpuTargetOptions &options) {
  // Attention reads split heads through strides (its C micro-kernels take
  // any layout with unit innermost stride), and so do rotary embeddings and
  // KV-cache writes (loops): no copies.
  buildModelBufferizationPipeline(pm, options, createCpuLowerKernels(),
                                  /*copiesAsLoops=*/false,
                                  /*outlineBlocks=*/options.outlineBlocks,
                                  kernel::createKernelFoldTransposedOperands());
  pm.addPass(createLowerEntryPoints());
  pm.addPass(createOutlineParallelLoops());
  // Kernels on the host: f32 transcendentals as vectorisable polynomials.
  pm.addPass(createApproximateMath());
  buildHostToLLVMPipeline(pm);
}
