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
include "tfc/Dialect/Tfc/IR/TfcEnums.td"
include "tfc/Dialect/TfcKernel/IR/TfcKernelBase.td"

def TfcCpu_Dialect : Dialect {
  let name = "tfc_cpu";
  let summary = "CPU kernels over packed and block-quantised weights";
  let description = [{
    The CPU's own kernels, in destination-passing style like those of
    `tfc_kernel` (TfcKernelBase.td): the packed layouts they read are a
    contract between the pack ops and the micro-kernels.
  }];
  let cppNamespace = "::mlir::tfc::cpu";
}

class TfcCpu_Op<string mnemonic, list<Trait> traits = []>
    : Tfc_KernelOp<TfcCpu_Dialect, mnemonic, traits>;

def TfcCpu_PackOp : TfcCpu_Op<"pack"> {
  let summary = "packs a [N, K] weight into [ceil(N/NR), K, NR] column panels";
  let description = [{
    `result[p, k, j] = W[p·NR + j, k]` for `p·NR + j < N`, zero beyond, where
    W is `input` ([N, K]) or, with `transposed`, the transpose of `input`
    ([K, N]). NR is the result's last dimension. Each panel is the contiguous
    stream of NR-wide rows the GEMM micro-kernel reads for one column block.
  }];
  let arguments = (ins Tfc_KernelOperand:$input, Tfc_KernelOperand:$init,
                       UnitAttr:$transposed);
  let assemblyFormat = [{
    $input `outs` `(` $init `)` attr-dict `:` functional-type(operands, results)
  }];
}

def TfcCpu_GemmOp : TfcCpu_Op<"gemm"> {
  let summary = "x · Wᵀ + b with a fused activation, W packed by tfc_cpu.pack";
  let description = [{
    `input` is [..., K], `weight` is the packed [P, K, NR] form of a [N, K]
    matrix (N = the result's last dimension), `bias` an optional [N] vector.
    The result is [..., N]: `activation(input · Wᵀ + bias)`.
  }];
  let arguments = (ins Tfc_KernelOperand:$input, Tfc_KernelOperand:$weight,
                       Optional<Tfc_KernelOperand>:$bias,
                       Tfc_KernelOperand:$init,
                       DefaultValuedAttr<Tfc_Activation,
                           "::mlir::tfc::Activation::None">:$activation);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? `outs` `(` $init `)`
    (`activation` `(` $activation^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
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
  let arguments = (ins Tfc_KernelOperand:$input, Tfc_KernelOperand:$init,
                       StrAttr:$format);
  let assemblyFormat = [{
    $input `format` $format `outs` `(` $init `)` attr-dict `:`
    functional-type(operands, results)
  }];
}

def TfcCpu_QGemmOp : TfcCpu_Op<"qgemm"> {
  let summary = "x · Wᵀ + b with a fused activation, W block-quantised";
  let description = [{
    `input` is [..., K]; `weight` a block-quantised [N, K] weight in the
    format `format` (q8_0, q4_0, q4_1), packed by tfc_cpu.qpack
    ([ceil(N / 8), K / 32, group-block bytes]); `bias` an optional [N]
    vector. The result is [..., N]: `activation(input · Wᵀ + bias)`, where
    the kernel quantises `input` to int8 with one scale per
    `activation_block` elements (32; or 256 for a K-quant format, as
    llama.cpp's Q8_K) and multiplies in integers
    (include/tfc/Target/CPU/MicroKernels.h), as llama.cpp does.
  }];
  let arguments = (ins Tfc_KernelOperand:$input, Tfc_KernelOperand:$weight,
                       Optional<Tfc_KernelOperand>:$bias,
                       Tfc_KernelOperand:$init,
                       StrAttr:$format,
                       DefaultValuedAttr<Tfc_Activation,
                           "::mlir::tfc::Activation::None">:$activation,
                       DefaultValuedAttr<I64Attr, "32">:$activation_block);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? `format` $format `outs` `(` $init `)`
    (`activation` `(` $activation^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
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
  let arguments = (ins Tfc_KernelOperand:$table, Tfc_KernelOperand:$ids,
                       Tfc_KernelOperand:$init, StrAttr:$format);
  let assemblyFormat = [{
    $table `[` $ids `]` `format` $format `outs` `(` $init `)` attr-dict `:`
    functional-type(operands, results)
  }];
}

def TfcCpu_DequantizeOp : TfcCpu_Op<"dequantize"> {
  let summary = "the f32 values of a block-quantised weight";
  let description = [{
    `input` is the raw form [..., K / 32, block bytes] of a weight in
    `format`; the result is its values [..., K]. Uses of a quantised weight
    other than as the weight of a linear read it through this op; it depends
    on weights only, so the model ABI computes it once, at load.
  }];
  let arguments = (ins Tfc_KernelOperand:$input, Tfc_KernelOperand:$init,
                       StrAttr:$format);
  let assemblyFormat = [{
    $input `format` $format `outs` `(` $init `)` attr-dict `:`
    functional-type(operands, results)
  }];
}

#endif // TFC_DIALECT_TFCCPU_IR_TFCCPUOPS_TD
