//===- QuantGemm.cpp - Linears over block-quantised weights ---------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// tfc_cpu.qgemm and tfc_cpu.dequantize call the C micro-kernels of
// include/tfc/Target/CPU/MicroKernels.h, which the backend links into the
// model from bitcode built for the target's instruction set (Emit.cpp). The
// emitted code does the parts MLIR is good at: the parallel loops, the
// scratch buffer of quantised activations, and the activation epilogue
// (buildActivation, the same code as the f32 GEMM's), applied by each task
// to the columns it just computed while they are in cache.
//
// The weight is repacked once, at load (tfc_cpu.qpack: groups of 8 rows,
// the layout the kernels read). qgemm runs in two parallel loops: the rows
// of x are quantised per block of 32 into int8 (tasks of kQuantRows rows),
// then tasks of kColumnsPerTask weight rows compute every row of the output
// for their columns, so each weight byte is read once per call (a decode
// step is bound by reading the weights).
//
// Buffers are passed to C as pointers (memref.extract_aligned_pointer_as_index
// plus the offset); tfc-early-dealloc follows such pointers to the calls, so
// a buffer is freed after the last call that reads it.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "Kernels.h"

#include "tfc/Conversion/KernelCommon.h"
#include "tfc/Conversion/TfcToLinalg/TfcToLinalg.h"
#include "tfc/Formats/DType.h"
#include "tfc/Target/CPU/MicroKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::tfc;
using namespace mlir::tfc::cpu;

namespace {

/// Rows of x quantised per task.
constexpr int64_t kQuantRows = 16;
/// Weight rows (output columns) per task: a multiple of the packed groups'
/// 8 rows; small enough that a decode step of a 576-wide layer still has
/// work for every thread.
constexpr int64_t kColumnsPerTask = 32;

/// The micro-kernels' code of a format: its ggml type number.
int32_t formatCode(StringRef format) {
  const ::tfc::rt::DTypeTraits *t =
      ::tfc::rt::quantFormatByName(std::string_view(format));
  assert(t && "verified format");
  return t->ggml;
}

} // namespace

void mlir::tfc::cpu::emitQPack(OpBuilder &b, Location loc, QPackOp op, Value input,
                         Value out) {
  MLIRContext *ctx = b.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  Type i64 = b.getI64Type();
  auto pack = declareMicroKernel(b, op, "tfc_uk_qpack", LLVM::LLVMVoidType::get(ctx),
                            {b.getI32Type(), ptr, i64, i64, ptr});
  input = contiguous(b, loc, input, /*identity=*/true);
  auto type = cast<MemRefType>(input.getType());
  Value format = arith::ConstantOp::create(
      b, loc, b.getI32IntegerAttr(formatCode(op.getFormat())));
  LLVM::CallOp::create(
      b, loc, pack,
      ValueRange{format, pointerTo(b, loc, input),
                 toI64(b, loc, indexConst(b, loc, type.getDimSize(0))),
                 toI64(b, loc, indexConst(b, loc, type.getDimSize(1))),
                 pointerTo(b, loc, out)});
}

void mlir::tfc::cpu::emitQGemm(OpBuilder &b, Location loc, QGemmOp op, Value input,
                         Value weight, Value bias, Value out) {
  MLIRContext *ctx = b.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  Type i64 = b.getI64Type(), i32 = b.getI32Type();
  Type voidType = LLVM::LLVMVoidType::get(ctx);
  auto quantize = declareMicroKernel(b, op,
                                     op.getActivationBlock() == 256
                                         ? "tfc_uk_quantize_rows_256"
                                         : "tfc_uk_quantize_rows",
                                     voidType, {ptr, i64, i64, i64, i64, ptr});
  auto gemm = declareMicroKernel(
      b, op, "tfc_uk_qgemm", voidType,
      {i32, ptr, i64, ptr, i64, i64, i64, i64, ptr, ptr, i64});

  Value a = collapseToMatrix(b, loc, contiguous(b, loc, input, /*identity=*/true));
  Value c = collapseToMatrix(b, loc, out);
  if (bias)
    bias = contiguous(b, loc, bias, /*identity=*/true);
  auto wType = cast<MemRefType>(weight.getType());
  int64_t groups = wType.getDimSize(0), kBlocks = wType.getDimSize(1);
  int64_t n = cast<MemRefType>(out.getType()).getShape().back();
  int64_t k = kBlocks * lookupQuantFormat(op.getFormat())->blockElements;
  Value m = memref::DimOp::create(b, loc, a, 0);
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);

  // The quantised activations: m rows of k / 32 blocks (with
  // activation_block 256, each 8 consecutive blocks share a scale).
  Value scratchBytes = arith::MulIOp::create(
      b, loc, m, indexConst(b, loc, k / 32 * TFC_UK_ACT_BLOCK_BYTES));
  Value scratch = memref::AllocOp::create(
      b, loc, MemRefType::get({ShapedType::kDynamic}, b.getI8Type()),
      ValueRange{scratchBytes}, b.getI64IntegerAttr(64));

  scf::ParallelOp::create(
      b, loc, ValueRange{zero}, ValueRange{ceilDiv(b, loc, m, kQuantRows)},
      ValueRange{one}, [&](OpBuilder &b, Location l, ValueRange ivs) {
        Value r0 = arith::MulIOp::create(b, l, ivs[0],
                                         indexConst(b, l, kQuantRows));
        Value r1 = minIndex(
            b, l, arith::AddIOp::create(b, l, r0, indexConst(b, l, kQuantRows)),
            m);
        LLVM::CallOp::create(
            b, l, quantize,
            ValueRange{pointerTo(b, l, a), toI64(b, l, indexConst(b, l, k)),
                       toI64(b, l, r0), toI64(b, l, r1),
                       toI64(b, l, indexConst(b, l, k)),
                       pointerTo(b, l, scratch)});
        scf::ReduceOp::create(b, l);
      });

  Activation activation = op.getActivation();
  int64_t groupsPerTask = kColumnsPerTask / kQuantGroupRows;
  int64_t tasks = (groups + groupsPerTask - 1) / groupsPerTask;
  scf::ParallelOp::create(
      b, loc, ValueRange{zero}, ValueRange{indexConst(b, loc, tasks)},
      ValueRange{one}, [&](OpBuilder &b, Location l, ValueRange ivs) {
        Value g0 = arith::MulIOp::create(b, l, ivs[0],
                                         indexConst(b, l, groupsPerTask));
        Value g1 = minIndex(
            b, l,
            arith::AddIOp::create(b, l, g0, indexConst(b, l, groupsPerTask)),
            indexConst(b, l, groups));
        Value biasPtr = bias ? pointerTo(b, l, bias)
                             : LLVM::ZeroOp::create(b, l, ptr).getResult();
        Value format = arith::ConstantOp::create(
            b, l, b.getI32IntegerAttr(formatCode(op.getFormat())));
        LLVM::CallOp::create(
            b, l, gemm,
            ValueRange{format, pointerTo(b, l, scratch), toI64(b, l, m),
                       pointerTo(b, l, weight), toI64(b, l, g0),
                       toI64(b, l, g1), toI64(b, l, indexConst(b, l, n)),
                       toI64(b, l, indexConst(b, l, kBlocks)), biasPtr,
                       pointerTo(b, l, c), toI64(b, l, indexConst(b, l, n))});
        if (activation != Activation::None) {
          // The task's columns [n0, n1), in cache.
          Value n0 = arith::MulIOp::create(
              b, l, g0, indexConst(b, l, kQuantGroupRows));
          Value n1 = minIndex(
              b, l,
              arith::MulIOp::create(b, l, g1,
                                   indexConst(b, l, kQuantGroupRows)),
              indexConst(b, l, n));
          Value width = arith::SubIOp::create(b, l, n1, n0);
          scf::ForOp::create(
              b, l, zero, m, one, ValueRange{},
              [&](OpBuilder &b, Location l, Value row, ValueRange) {
                forChunks(b, l, width,
                          [&](OpBuilder &b, Location l, Value d, Value mask) {
                            Value col = arith::AddIOp::create(b, l, n0, d);
                            Value v = maskedLoad(b, l, c, ValueRange{row, col},
                                                 mask, splatConst(b, l, 0.0));
                            v = buildActivation(b, l, v, activation);
                            maskedStore(b, l, v, c, ValueRange{row, col},
                                        mask);
                          });
                scf::YieldOp::create(b, l);
              });
        }
        scf::ReduceOp::create(b, l);
      });
}

void mlir::tfc::cpu::emitDequantize(OpBuilder &b, Location loc, DequantizeOp op,
                              Value input, Value out) {
  MLIRContext *ctx = b.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  auto dequantize = declareMicroKernel(b, op, "tfc_uk_dequantize",
                                  LLVM::LLVMVoidType::get(ctx),
                                  {b.getI32Type(), ptr, b.getI64Type(), ptr});
  input = contiguous(b, loc, input, /*identity=*/true);
  auto type = cast<MemRefType>(input.getType());
  int64_t blocks = type.getNumElements() / type.getShape().back();
  Value format = arith::ConstantOp::create(
      b, loc, b.getI32IntegerAttr(formatCode(op.getFormat())));
  LLVM::CallOp::create(b, loc, dequantize,
                       ValueRange{format, pointerTo(b, loc, input),
                                  toI64(b, loc, indexConst(b, loc, blocks)),
                                  pointerTo(b, loc, out)});
}

void mlir::tfc::cpu::emitQEmbedding(OpBuilder &b, Location loc, QEmbeddingOp op,
                              Value table, Value ids, Value out) {
  MLIRContext *ctx = b.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  Type i8 = b.getI8Type();
  auto dequantize = declareMicroKernel(b, op, "tfc_uk_dequantize",
                                  LLVM::LLVMVoidType::get(ctx),
                                  {b.getI32Type(), ptr, b.getI64Type(), ptr});
  auto tType = cast<MemRefType>(table.getType());
  int64_t vocab = tType.getDimSize(0), blocks = tType.getDimSize(1);
  int64_t rowBytes = blocks * tType.getDimSize(2),
          width = blocks * lookupQuantFormat(op.getFormat())->blockElements;
  // The ids as one vector, the rows as a matrix.
  auto idType = cast<MemRefType>(ids.getType());
  Value flatIds = contiguous(b, loc, ids, /*identity=*/true);
  if (idType.getRank() != 1) {
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0; d < idType.getRank(); ++d)
      all[0].push_back(d);
    flatIds = idType.getRank() == 0
                  ? memref::ExpandShapeOp::create(
                        b, loc, MemRefType::get({1}, idType.getElementType()),
                        flatIds, ArrayRef<ReassociationIndices>{})
                        .getResult()
                  : memref::CollapseShapeOp::create(b, loc, flatIds, all)
                        .getResult();
  }
  Value rows = collapseToMatrix(b, loc, out);
  Value count = memref::DimOp::create(b, loc, flatIds, 0);
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  scf::ParallelOp::create(
      b, loc, ValueRange{zero}, ValueRange{count}, ValueRange{one},
      [&](OpBuilder &b, Location l, ValueRange ivs) {
        Value id = memref::LoadOp::create(b, l, flatIds, ivs[0]);
        id = arith::IndexCastOp::create(b, l, b.getIndexType(), id);
        // Clamped into the table, like tfc.embedding.
        id = arith::MaxSIOp::create(b, l, id, zero);
        id = arith::MinSIOp::create(b, l, id, indexConst(b, l, vocab - 1));
        Value byteOffset = toI64(
            b, l, arith::MulIOp::create(b, l, id, indexConst(b, l, rowBytes)));
        Value row = LLVM::GEPOp::create(b, l, ptr, i8, pointerTo(b, l, table),
                                        ValueRange{byteOffset});
        Value outOffset = toI64(
            b, l,
            arith::MulIOp::create(b, l, ivs[0], indexConst(b, l, width * 4)));
        Value dst = LLVM::GEPOp::create(b, l, ptr, i8, pointerTo(b, l, rows),
                                        ValueRange{outOffset});
        Value format = arith::ConstantOp::create(
            b, l, b.getI32IntegerAttr(formatCode(op.getFormat())));
        LLVM::CallOp::create(
            b, l, dequantize,
            ValueRange{format, row, toI64(b, l, indexConst(b, l, blocks)),
                       dst});
        scf::ReduceOp::create(b, l);
      });
}
