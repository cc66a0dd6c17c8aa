//===- BufferizationModels.cpp - Kernel ops bufferise into target code ----===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// One external BufferizableOpInterface model for all kernel ops: the op
// reads its operands, writes nothing in place, and its result is a new
// allocation that the target's kernel emitter fills: the CPU emitters
// (TfcToCPU/Kernels.h) or, in a module with `tfc.target = #tfc.target<cuda>`, the GPU
// ones (TfcToGPU/GpuKernels.h). The emitters see memrefs, so the kernels are
// written once, at the level where vector loads, parallel loops and
// gpu.launch are natural.
//
//===----------------------------------------------------------------------===//

#include "../TfcToCPU/Kernels.h"
#include "../TfcToGPU/GpuKernels.h"

#include "tfc/Conversion/KernelBufferization.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::tfc;
using mlir::tfc::cpu::DequantizeOp;
using mlir::tfc::cpu::GemmOp;
using mlir::tfc::cpu::PackOp;
using mlir::tfc::cpu::QEmbeddingOp;
using mlir::tfc::cpu::QGemmOp;
using mlir::tfc::cpu::QPackOp;
using mlir::tfc::cpu::TfcCpuDialect;

namespace {

/// Where each dynamic result size comes from: (operand index, dimension).
using SizeSource = std::pair<unsigned, int64_t>;

/// Per-op knowledge: where dynamic result sizes come from, and the emitter.
template <typename OpTy> struct KernelTraits;

template <> struct KernelTraits<SoftmaxOp> {
  static SizeSource size(SoftmaxOp, int64_t d) { return {0, d}; }
  static LogicalResult emit(OpBuilder &b, Location loc, SoftmaxOp op,
                            ArrayRef<Value> in, Value out, bool gpu) {
    // The row kernels normalise the last axis; convert-tfc-to-linalg
    // decomposes the others before bufferisation.
    int64_t rank = op.getType().getRank();
    if (static_cast<int64_t>(op.getAxis()) != rank - 1)
      return op.emitError("the softmax kernel normalises the last axis (")
             << rank - 1 << "), not axis " << op.getAxis()
             << ": run convert-tfc-to-linalg first, which decomposes it";
    if (gpu)
      return gpuk::emitSoftmax(b, loc, op, in[0], out);
    cpu::emitSoftmax(b, loc, in[0], out);
    return success();
  }
};

template <> struct KernelTraits<LayerNormOp> {
  static SizeSource size(LayerNormOp, int64_t d) { return {0, d}; }
  static LogicalResult emit(OpBuilder &b, Location loc, LayerNormOp op,
                            ArrayRef<Value> in, Value out, bool gpu) {
    if (gpu)
      return gpuk::emitLayerNorm(b, loc, op, in[0], in[1], in[2], in[3], out);
    cpu::emitLayerNorm(b, loc, op, in[0], in[1], in[2], in[3], out);
    return success();
  }
};

template <> struct KernelTraits<RmsNormOp> {
  static SizeSource size(RmsNormOp, int64_t d) { return {0, d}; }
  static LogicalResult emit(OpBuilder &b, Location loc, RmsNormOp op,
                            ArrayRef<Value> in, Value out, bool gpu) {
    if (gpu)
      return gpuk::emitRmsNorm(b, loc, op, in[0], in[1], in[2], out);
    cpu::emitRmsNorm(b, loc, op, in[0], in[1], in[2], out);
    return success();
  }
};

template <> struct KernelTraits<AttentionOp> {
  // [B, H, Tq, Dv]: B, H, Tq from the query, Dv from the value.
  static SizeSource size(AttentionOp, int64_t d) {
    return d == 3 ? SizeSource{2, 3} : SizeSource{0, d};
  }
  static LogicalResult emit(OpBuilder &b, Location loc, AttentionOp op,
                            ArrayRef<Value> in, Value out, bool gpu) {
    if (gpu)
      return gpuk::emitAttention(b, loc, op, in[0], in[1], in[2], in[3],
                                 in[4], out);
    cpu::emitAttention(b, loc, op, in[0], in[1], in[2], in[3], in[4], out);
    return success();
  }
};

template <> struct KernelTraits<MatmulOp> {
  static SizeSource size(MatmulOp op, int64_t d) {
    auto out = cast<RankedTensorType>(op.getType());
    auto lhs = cast<RankedTensorType>(op.getLhs().getType());
    auto rhs = cast<RankedTensorType>(op.getRhs().getType());
    int64_t rank = out.getRank();
    if (d == rank - 2)
      return {0, lhs.getRank() - 2};
    if (d == rank - 1)
      return {1, rhs.getRank() - 1};
    // A batch dim: from whichever operand has it dynamic.
    int64_t ld = d - (rank - lhs.getRank());
    if (ld >= 0 && lhs.isDynamicDim(ld))
      return {0, ld};
    return {1, d - (rank - rhs.getRank())};
  }
  static LogicalResult emit(OpBuilder &b, Location loc, MatmulOp op,
                            ArrayRef<Value> in, Value out, bool gpu) {
    if (gpu)
      return gpuk::emitMatmul(b, loc, op, in[0], in[1], out);
    cpu::emitMatmul(b, loc, op, in[0], in[1], out);
    return success();
  }
};

template <> struct KernelTraits<LinearOp> {
  static SizeSource size(LinearOp, int64_t d) { return {0, d}; }
  static LogicalResult emit(OpBuilder &b, Location loc, LinearOp op,
                            ArrayRef<Value> in, Value out, bool gpu) {
    if (gpu)
      return gpuk::emitLinear(b, loc, op, in[0], in[1], in[2], out);
    // The CPU pipeline rewrites every linear into tfc_cpu.gemm first.
    return op.emitError("tfc.linear has no CPU kernel of its own: run "
                        "convert-tfc-linear-to-cpu-gemm before bufferising");
  }
};

template <> struct KernelTraits<GemmOp> {
  static SizeSource size(GemmOp, int64_t d) { return {0, d}; }
  static LogicalResult emit(OpBuilder &b, Location loc, GemmOp op,
                            ArrayRef<Value> in, Value out, bool gpu) {
    if (gpu)
      return op.emitError("tfc_cpu.gemm is a CPU op; the CUDA target keeps "
                          "tfc.linear");
    cpu::emitGemm(b, loc, op, in[0], in[1], in[2], out);
    return success();
  }
};

template <> struct KernelTraits<PackOp> {
  static SizeSource size(PackOp, int64_t d) { return {0, d}; }
  static LogicalResult emit(OpBuilder &b, Location loc, PackOp op,
                            ArrayRef<Value> in, Value out, bool gpu) {
    if (gpu)
      return op.emitError("tfc_cpu.pack is a CPU op; the CUDA target keeps "
                          "tfc.linear");
    cpu::emitPack(b, loc, op, in[0], out);
    return success();
  }
};

template <> struct KernelTraits<QGemmOp> {
  static SizeSource size(QGemmOp, int64_t d) { return {0, d}; }
  static LogicalResult emit(OpBuilder &b, Location loc, QGemmOp op,
                            ArrayRef<Value> in, Value out, bool gpu) {
    if (gpu)
      return op.emitError("tfc_cpu.qgemm is a CPU op; the CUDA target "
                          "dequantises weights at load");
    cpu::emitQGemm(b, loc, op, in[0], in[1], in[2], out);
    return success();
  }
};

template <> struct KernelTraits<DequantizeOp> {
  static SizeSource size(DequantizeOp, int64_t d) { return {0, d}; }
  static LogicalResult emit(OpBuilder &b, Location loc, DequantizeOp op,
                            ArrayRef<Value> in, Value out, bool gpu) {
    if (gpu)
      return op.emitError("tfc_cpu.dequantize is a CPU op");
    cpu::emitDequantize(b, loc, op, in[0], out);
    return success();
  }
};

template <> struct KernelTraits<QPackOp> {
  static SizeSource size(QPackOp, int64_t d) { return {0, d}; }
  static LogicalResult emit(OpBuilder &b, Location loc, QPackOp op,
                            ArrayRef<Value> in, Value out, bool gpu) {
    if (gpu)
      return op.emitError("tfc_cpu.qpack is a CPU op");
    cpu::emitQPack(b, loc, op, in[0], out);
    return success();
  }
};

template <> struct KernelTraits<QEmbeddingOp> {
  // [..., D]: the leading dims are the ids'.
  static SizeSource size(QEmbeddingOp, int64_t d) { return {1, d}; }
  static LogicalResult emit(OpBuilder &b, Location loc, QEmbeddingOp op,
                            ArrayRef<Value> in, Value out, bool gpu) {
    if (gpu)
      return op.emitError("tfc_cpu.qembedding is a CPU op");
    cpu::emitQEmbedding(b, loc, op, in[0], in[1], out);
    return success();
  }
};

template <typename OpTy>
struct KernelModel
    : BufferizableOpInterface::ExternalModel<KernelModel<OpTy>, OpTy> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }
  AliasingValueList getAliasingValues(Operation *, OpOperand &,
                                      const AnalysisState &) const {
    return {};
  }
  bool bufferizesToAllocation(Operation *, Value) const { return true; }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto kernel = cast<OpTy>(op);
    Location loc = op->getLoc();
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    bool gpu = isCudaTarget(op);
    // The GPU kernels compute in f32 on f32, f16 and bf16 data.
    // The quantised kernels also read raw weights (i8 blocks), and the
    // quantised embedding integer ids.
    bool rawWeights = isa<QGemmOp, QPackOp, DequantizeOp, QEmbeddingOp>(op);
    auto supported = [&](Type element) {
      return element.isF32() || (gpu && (element.isF16() || element.isBF16())) ||
             (rawWeights && element.isInteger(8)) ||
             (isa<QEmbeddingOp>(op) &&
              (element.isInteger(32) || element.isInteger(64)));
    };
    const char *what = gpu ? "the GPU kernels support f32, f16 and bf16; got "
                           : "the CPU kernels support f32 only; got ";
    for (Type t : op->getOperandTypes())
      if (auto tt = dyn_cast<RankedTensorType>(t);
          tt && !supported(tt.getElementType()))
        return op->emitError(what) << tt;
    if (!supported(resultType.getElementType()))
      return op->emitError(what) << resultType;

    SmallVector<Value> operandBuffers;
    for (OpOperand &operand : op->getOpOperands()) {
      FailureOr<Value> buffer =
          getBuffer(rewriter, operand.get(), options, state);
      if (failed(buffer))
        return failure();
      operandBuffers.push_back(*buffer);
    }
    // One buffer per ODS operand (null for an absent optional one).
    SmallVector<Value> buffers;
    for (unsigned group = 0; group < expectedGroups(); ++group) {
      auto [start, length] = kernel.getODSOperandIndexAndLength(group);
      buffers.push_back(length ? operandBuffers[start] : Value());
    }

    SmallVector<Value> dynamicSizes;
    for (int64_t d = 0; d < resultType.getRank(); ++d) {
      if (!resultType.isDynamicDim(d))
        continue;
      auto [operand, dim] = KernelTraits<OpTy>::size(kernel, d);
      dynamicSizes.push_back(
          memref::DimOp::create(rewriter, loc, buffers[operand], dim));
    }
    auto memrefType =
        MemRefType::get(resultType.getShape(), resultType.getElementType());
    FailureOr<Value> alloc =
        options.createAlloc(rewriter, loc, memrefType, dynamicSizes);
    if (failed(alloc))
      return failure();
    if (failed(KernelTraits<OpTy>::emit(rewriter, loc, kernel, buffers, *alloc,
                                        gpu)))
      return failure();
    replaceOpWithBufferizedValues(rewriter, op, *alloc);
    return success();
  }

  /// The number of ODS operand groups of OpTy.
  static unsigned expectedGroups();
};

template <> unsigned KernelModel<SoftmaxOp>::expectedGroups() { return 1; }
template <> unsigned KernelModel<LayerNormOp>::expectedGroups() { return 4; }
template <> unsigned KernelModel<RmsNormOp>::expectedGroups() { return 3; }
template <> unsigned KernelModel<AttentionOp>::expectedGroups() { return 5; }
template <> unsigned KernelModel<MatmulOp>::expectedGroups() { return 2; }
template <> unsigned KernelModel<GemmOp>::expectedGroups() { return 3; }
template <> unsigned KernelModel<LinearOp>::expectedGroups() { return 3; }
template <> unsigned KernelModel<PackOp>::expectedGroups() { return 1; }
template <> unsigned KernelModel<QGemmOp>::expectedGroups() { return 3; }
template <> unsigned KernelModel<DequantizeOp>::expectedGroups() {
  return 1;
}
template <> unsigned KernelModel<QEmbeddingOp>::expectedGroups() {
  return 2;
}
template <> unsigned KernelModel<QPackOp>::expectedGroups() { return 1; }

} // namespace

namespace {
/// The dialects the kernels are written in: loaded with the kernel ops so
/// that bufferisation can build their ops.
void loadKernelDialects(MLIRContext *ctx) {
  ctx->loadDialect<arith::ArithDialect, gpu::GPUDialect, LLVM::LLVMDialect,
                   math::MathDialect, memref::MemRefDialect, NVVM::NVVMDialect,
                   scf::SCFDialect, vector::VectorDialect>();
}

struct TfcKernelModels : DialectExtension<TfcKernelModels, TfcDialect> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TfcKernelModels)
  void apply(MLIRContext *ctx, TfcDialect *) const final {
    loadKernelDialects(ctx);
    SoftmaxOp::attachInterface<KernelModel<SoftmaxOp>>(*ctx);
    LayerNormOp::attachInterface<KernelModel<LayerNormOp>>(*ctx);
    RmsNormOp::attachInterface<KernelModel<RmsNormOp>>(*ctx);
    AttentionOp::attachInterface<KernelModel<AttentionOp>>(*ctx);
    MatmulOp::attachInterface<KernelModel<MatmulOp>>(*ctx);
    LinearOp::attachInterface<KernelModel<LinearOp>>(*ctx);
  }
};

struct TfcCpuKernelModels
    : DialectExtension<TfcCpuKernelModels, TfcCpuDialect> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TfcCpuKernelModels)
  void apply(MLIRContext *ctx, TfcCpuDialect *) const final {
    loadKernelDialects(ctx);
    GemmOp::attachInterface<KernelModel<GemmOp>>(*ctx);
    PackOp::attachInterface<KernelModel<PackOp>>(*ctx);
    QGemmOp::attachInterface<KernelModel<QGemmOp>>(*ctx);
    DequantizeOp::attachInterface<KernelModel<DequantizeOp>>(*ctx);
    QEmbeddingOp::attachInterface<KernelModel<QEmbeddingOp>>(*ctx);
    QPackOp::attachInterface<KernelModel<QPackOp>>(*ctx);
  }
};
} // namespace

namespace {
/// gpu.barrier declares no memory effects, which the ownership-based
/// deallocation pipeline rejects as unknown. A barrier orders the block's
/// reads and writes of shared memory: it is modelled as reading and writing
/// memory in general (so it is never erased or moved either).
struct BarrierEffects
    : MemoryEffectOpInterface::ExternalModel<BarrierEffects, gpu::BarrierOp> {
  void
  getEffects(Operation *,
             SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                 &effects) const {
    effects.emplace_back(MemoryEffects::Read::get());
    effects.emplace_back(MemoryEffects::Write::get());
  }
};

/// nvvm.mma.sync declares no memory effects either; it only computes on
/// registers.
struct MmaEffects
    : MemoryEffectOpInterface::ExternalModel<MmaEffects, NVVM::MmaOp> {
  void
  getEffects(Operation *,
             SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                 &) const {}
};

struct NvvmKernelModels
    : DialectExtension<NvvmKernelModels, NVVM::NVVMDialect> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(NvvmKernelModels)
  void apply(MLIRContext *ctx, NVVM::NVVMDialect *) const final {
    NVVM::MmaOp::attachInterface<MmaEffects>(*ctx);
  }
};

struct GpuKernelModels : DialectExtension<GpuKernelModels, gpu::GPUDialect> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(GpuKernelModels)
  void apply(MLIRContext *ctx, gpu::GPUDialect *) const final {
    gpu::BarrierOp::attachInterface<BarrierEffects>(*ctx);
  }
};
} // namespace

bool tfc::isCudaTarget(Operation *op) {
  auto module =
      isa<ModuleOp>(op) ? cast<ModuleOp>(op) : op->getParentOfType<ModuleOp>();
  auto target = module ? module->getAttrOfType<TargetKindAttr>(kTargetAttrName)
                       : TargetKindAttr();
  return target && target.getValue() == TargetKind::Cuda;
}

void tfc::registerKernelBufferizationModels(DialectRegistry &registry) {
  registry.addExtensions<TfcKernelModels, TfcCpuKernelModels, GpuKernelModels,
                         NvvmKernelModels>();
}
