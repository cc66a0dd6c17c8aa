//===- Pipeline.cpp - The host pipelines every target shares --------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Dialect/TfcKernel/Transforms/Passes.h"
#include "tfc/Target/Host/HostTarget.h"
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

void tfc::buildModelBufferizationPipeline(OpPassManager &pm,
                                          const CpuTargetOptions &host,
                                          std::unique_ptr<Pass> lowerKernels,
                                          bool copiesAsLoops,
                                          bool outlineBlocks,
                                          std::unique_ptr<Pass> onBuffers) {
  // The layers compiled once: block calls that compute the same thing
  // become calls of one function, on tensors, before anything else of the
  // lowering runs, so that bufferisation, the kernels' lowering, the
  // deallocation pipeline and everything after them see one layer instead
  // of all of them (without `outlineBlocks` the markers only go).
  OutlineBlocksOptions outline;
  outline.inlineOnly = !outlineBlocks;
  pm.addPass(createOutlineBlocks(outline));
  LowerModelABIOptions abi;
  abi.cpu = host.cpu;
  abi.features = host.features;
  pm.addPass(createLowerModelABI(abi));

  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(kernel::createKernelOwnDestinations());
  // A result inserted into a larger buffer (a KV-cache write) is computed
  // in place there instead of in a buffer of its own and copied.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // The layers' results the callers' own buffers (before deallocation).
  pm.addPass(createBlockOutParams());
  if (onBuffers)
    pm.addPass(std::move(onBuffers));
  pm.addPass(std::move(lowerKernels));
  pm.addPass(createCanonicalizerPass());
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  pm.addPass(createConvertBufferizationToMemRefPass());
  LowerStridedCopiesOptions copies;
  copies.all = copiesAsLoops;
  pm.addPass(createLowerStridedCopies(copies));
  pm.addPass(createEarlyDealloc());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createCanonicalizerPass());
}

void tfc::buildHostToLLVMPipeline(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  FinalizeMemRefToLLVMConversionPassOptions memref;
  memref.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memref));
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  // The table's slots as descriptors only now: the conversions above left
  // a cast from each slot's memref to its descriptor, which this pass's
  // descriptor replaces (one op per slot read through all of them).
  pm.addPass(createExpandTableSlots());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCheckAllocations());
  pm.addPass(createCanonicalizerPass());
}
