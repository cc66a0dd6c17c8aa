//===- TfcCpuOps.td - Kernel-level ops of the CPU backend ---*- tablegen -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The `tfc_cpu` dialect holds the few ops whose operands are in a layout only
// the CPU kernels know: weights packed into column panels for the GEMM
// micro-kernel. Everything else is expressed with tfc ops (kernel ops the
// backend bufferises itself) or upstream dialects.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_DIALECT_TFCCPU_IR_TFCCPUOPS_TD
#define TFC_DIALECT_TFCCPU_IR_TFCCPUOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "tfc/Dialect/Tfc/IR/TfcEnums.td"

def TfcCpu_Dialect : Dialect {
  let name = "tfc_cpu";
  let summary = "CPU kernel operand layouts";
  let cppNamespace = "::mlir::tfc::cpu";
}

class TfcCpu_Op<string mnemonic, list<Trait> traits = []>
    : Op<TfcCpu_Dialect, mnemonic, !listconcat([Pure], traits)>;

def TfcCpu_PackOp : TfcCpu_Op<"pack"> {
  let summary = "packs a [N, K] weight into [ceil(N/NR), K, NR] column panels";
  let description = [{
    `result[p, k, j] = W[p·NR + j, k]` for `p·NR + j < N`, zero beyond, where
    W is `input` ([N, K]) or, with `transposed`, the transpose of `input`
    ([K, N]). NR is the result's last dimension. Each panel is the contiguous
    stream of NR-wide rows the GEMM micro-kernel reads for one column block.
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$input, UnitAttr:$transposed);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TfcCpu_GemmOp : TfcCpu_Op<"gemm"> {
  let summary = "x · Wᵀ + b with a fused activation, W packed by tfc_cpu.pack";
  let description = [{
    `input` is [..., K], `weight` is the packed [P, K, NR] form of a [N, K]
    matrix (N = the result's last dimension), `bias` an optional [N] vector.
    The result is [..., N]: `activation(input · Wᵀ + bias)`.
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$input,
                       RankedTensorOf<[F32]>:$weight,
                       Optional<RankedTensorOf<[F32]>>:$bias,
                       DefaultValuedAttr<Tfc_Activation,
                           "::mlir::tfc::Activation::None">:$activation);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? (`activation` `(` $activation^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TfcCpu_QPackOp : TfcCpu_Op<"qpack"> {
  let summary = "repacks a block-quantised weight for the int8 kernels";
  let description = [{
    `input` is the raw form [N, K / 32, block bytes] of a weight in
    `format`; the result [ceil(N / 8), K / 32, group-block bytes] holds the
    same bits regrouped by 8 rows, scales together and quants interleaved
    (include/tfc/Target/CPU/MicroKernels.h, tfc_uk_qpack). N is `rows`.
    It depends on weights only: the model ABI computes it once, at load.
  }];
  let arguments = (ins RankedTensorOf<[I8]>:$input, StrAttr:$format);
  let results = (outs RankedTensorOf<[I8]>:$result);
  let assemblyFormat = [{
    $input `format` $format attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TfcCpu_QGemmOp : TfcCpu_Op<"qgemm"> {
  let summary = "x · Wᵀ + b with a fused activation, W block-quantised";
  let description = [{
    `input` is [..., K]; `weight` a block-quantised [N, K] weight in the
    format `format` (q8_0, q4_0, q4_1), packed by tfc_cpu.qpack
    ([ceil(N / 8), K / 32, group-block bytes]); `bias` an optional [N]
    vector. The result is [..., N]: `activation(input · Wᵀ + bias)`, where
    the kernel quantises `input` per block of 32 to int8 and multiplies in
    integers (include/tfc/Target/CPU/MicroKernels.h), as llama.cpp does.
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$input,
                       RankedTensorOf<[I8]>:$weight,
                       Optional<RankedTensorOf<[F32]>>:$bias,
                       StrAttr:$format,
                       DefaultValuedAttr<Tfc_Activation,
                           "::mlir::tfc::Activation::None">:$activation);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? `format` $format
    (`activation` `(` $activation^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TfcCpu_QEmbeddingOp : TfcCpu_Op<"qembedding"> {
  let summary = "rows of a block-quantised table, dequantised as they are read";
  let description = [{
    `table` is the raw form [V, D / 32, block bytes] of a [V, D] table in
    `format`, `ids` any shape [...] of integers; the result [..., D] holds
    the dequantised rows `ids` (clamped into [0, V), like tfc.embedding;
    the runtime checks ids from inputs). Only the rows read are dequantised:
    the table stays in its blocks.
  }];
  let arguments = (ins RankedTensorOf<[I8]>:$table,
                       RankedTensorOf<[I32, I64]>:$ids, StrAttr:$format);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $table `[` $ids `]` `format` $format attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TfcCpu_DequantizeOp : TfcCpu_Op<"dequantize"> {
  let summary = "the f32 values of a block-quantised weight";
  let description = [{
    `input` is the raw form [..., K / 32, block bytes] of a weight in
    `format`; the result is its values [..., K]. Uses of a quantised weight
    other than as the weight of a linear read it through this op; it depends
    on weights only, so the model ABI computes it once, at load.
  }];
  let arguments = (ins RankedTensorOf<[I8]>:$input, StrAttr:$format);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $input `format` $format attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // TFC_DIALECT_TFCCPU_IR_TFCCPUOPS_TD
