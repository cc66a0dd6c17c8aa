//===- TfcKernelOps.td - The tfc_kernel dialect ------------*- tablegen -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The kernels every target implements, in destination-passing style
// (TfcKernelBase.td). `convert-tfc-to-kernels` makes them from the tfc ops
// of the same names once the rest of the graph is linalg; the attributes are
// resolved (a softmax is over the last axis; the attention scale is explicit).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_DIALECT_TFCKERNEL_IR_TFCKERNELOPS_TD
#define TFC_DIALECT_TFCKERNEL_IR_TFCKERNELOPS_TD

include "tfc/Dialect/TfcKernel/IR/TfcKernelBase.td"
include "tfc/Dialect/Tfc/IR/TfcEnums.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/CommonAttrConstraints.td"

def TfcKernel_Dialect : Dialect {
  let name = "tfc_kernel";
  let summary = "target-independent kernels in destination-passing style";
  let cppNamespace = "::mlir::tfc::kernel";
}

class TfcKernel_Op<string mnemonic, list<Trait> traits = []>
    : Tfc_KernelOp<TfcKernel_Dialect, mnemonic, traits>;

def TfcKernel_SoftmaxOp : TfcKernel_Op<"softmax"> {
  let summary = "softmax over the last axis";
  let description = [{
    `init = exp(x - max(x)) / sum(exp(x - max(x)))` along the last axis of
    `input` (init has input's shape). A row of -inf yields zeros.

    ```mlir
    %r = tfc_kernel.softmax %x outs(%e)
        : (tensor<?x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    tfc_kernel.softmax %xb outs(%ob) : (memref<?x128xf32>, memref<?x128xf32>) -> ()
    ```
  }];
  let arguments = (ins Tfc_KernelOperand:$input, Tfc_KernelOperand:$init);
  let assemblyFormat = [{
    $input `outs` `(` $init `)` attr-dict `:` functional-type(operands, results)
  }];
}

def TfcKernel_LayerNormOp : TfcKernel_Op<"layer_norm",
                                         [AttrSizedOperandSegments]> {
  let summary = "layer normalisation over the last axis (tfc.layer_norm)";
  let arguments = (ins Tfc_KernelOperand:$input,
                       Optional<Tfc_KernelOperand>:$scale,
                       Optional<Tfc_KernelOperand>:$bias,
                       Optional<Tfc_KernelOperand>:$residual,
                       Tfc_KernelOperand:$init,
                       F64Attr:$epsilon);
  let assemblyFormat = [{
    $input (`scale` `(` $scale^ `)`)? (`bias` `(` $bias^ `)`)?
    (`residual` `(` $residual^ `)`)? `outs` `(` $init `)` attr-dict `:`
    functional-type(operands, results)
  }];
}

def TfcKernel_RmsNormOp : TfcKernel_Op<"rms_norm", [AttrSizedOperandSegments]> {
  let summary = "root-mean-square normalisation over the last axis (tfc.rms_norm)";
  let arguments = (ins Tfc_KernelOperand:$input,
                       Optional<Tfc_KernelOperand>:$scale,
                       Optional<Tfc_KernelOperand>:$residual,
                       Tfc_KernelOperand:$init,
                       F64Attr:$epsilon);
  let assemblyFormat = [{
    $input (`scale` `(` $scale^ `)`)? (`residual` `(` $residual^ `)`)?
    `outs` `(` $init `)` attr-dict `:` functional-type(operands, results)
  }];
}

def TfcKernel_AttentionOp : TfcKernel_Op<"attention",
                                         [AttrSizedOperandSegments]> {
  let summary = "scaled dot-product attention (tfc.attention)";
  let description = [{
    The semantics of `tfc.attention`, with the scale always explicit:
    query [B, H, Tq, D], key [B, Hkv, Tk, D], value [B, Hkv, Tk, Dv], an
    optional additive `mask` broadcasting to [B, H, Tq, Tk], an optional T5
    `relative_bias` [H, 2R + 1], optional `row_past` (i64 [B]); `causal`,
    `window`, `alibi` and `softcap` as there.
    `init` is [B, H, Tq, Dv].
  }];
  let arguments = (ins Tfc_KernelOperand:$query, Tfc_KernelOperand:$key,
                       Tfc_KernelOperand:$value,
                       Optional<Tfc_KernelOperand>:$mask,
                       Optional<Tfc_KernelOperand>:$relative_bias,
                       Optional<Tfc_KernelOperand>:$row_past,
                       Tfc_KernelOperand:$init,
                       UnitAttr:$causal,
                       F64Attr:$scale,
                       OptionalAttr<I64Attr>:$window,
                       OptionalAttr<F64Attr>:$alibi,
                       OptionalAttr<F64Attr>:$softcap);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` `(` $mask^ `)`)?
    (`relative_bias` `(` $relative_bias^ `)`)?
    (`row_past` `(` $row_past^ `)`)? `outs` `(` $init `)` attr-dict
    `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = kernelClassDeclaration # [{
    /// R of a [H, 2R + 1] relative bias (0 without one).
    int64_t getRelativeDistance();
  }];
}

def TfcKernel_MatmulOp : TfcKernel_Op<"matmul"> {
  let summary = "batched matrix product (tfc.matmul)";
  let description = [{
    `lhs` [..., M, K] (or [..., K, M] with `transpose_lhs`), `rhs` [..., K, N]
    (or [..., N, K] with `transpose_rhs`), batch dims broadcasting; `init` is
    [batch..., M, N].
  }];
  let arguments = (ins Tfc_KernelOperand:$lhs, Tfc_KernelOperand:$rhs,
                       Tfc_KernelOperand:$init,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let assemblyFormat = [{
    $lhs `,` $rhs `outs` `(` $init `)` attr-dict `:`
    functional-type(operands, results)
  }];
}

def TfcKernel_LinearOp : TfcKernel_Op<"linear"> {
  let summary = "x · Wᵀ + b with a fused activation (tfc.linear)";
  let description = [{
    `input` [..., K], `weight` [N, K], optional `bias` [N]; `init` [..., N].
    The CPU target packs its weights instead (tfc_cpu.gemm).
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

#endif // TFC_DIALECT_TFCKERNEL_IR_TFCKERNELOPS_TD
