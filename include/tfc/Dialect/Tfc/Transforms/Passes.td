//===- Passes.td - Passes of the tfc dialect ---------------*- tablegen -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_DIALECT_TFC_TRANSFORMS_PASSES_TD
#define TFC_DIALECT_TFC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

// Every fusion pass reports, when asked, each candidate it looked at: either
// what it fused into or the precise reason it did not.
defvar RemarksOption = Option<"remarks", "remarks", "bool", /*default=*/"false",
    "Emit a remark for every candidate: 'fused into ...' or 'not fused: "
    "<reason>'">;

def TfcFuseSoftmax : Pass<"tfc-fuse-softmax"> {
  let summary = "Recognise softmax written out with exp, max, sum and divide";
  let description = [{
    Rewrites `exp(x - max(x)) / sum(exp(x - max(x)))` over one axis into
    `tfc.softmax`. Also accepted: the unstabilised `exp(x) / sum(exp(x))`
    (the fused op is always the numerically stable one), the division written
    as a multiplication by the reciprocal (`1 / s` or `s ^ -1`), and the
    reductions written without `keepdim` followed by a reshape.

    The exponentials must have no other use than the sum and the division,
    and the sum no other use than the division; otherwise the decomposed form
    stays (the remark names the other use).
  }];
  let dependentDialects = ["::mlir::tfc::TfcDialect"];
  let options = [RemarksOption];
}

def TfcFuseLayerNorm : Pass<"tfc-fuse-layernorm"> {
  let summary = "Recognise LayerNorm and RMSNorm written out with primitives";
  let description = [{
    Rewrites the usual decompositions of LayerNorm over the last axis into
    `tfc.layer_norm`:

      d = x - mean(x); var = mean(d * d) (or mean(d ^ 2), or
      mean(x * x) - mean(x)^2); y = d / sqrt(var + eps) (or
      d * rsqrt(var + eps)); optionally y * gamma, + beta,

    and `x * rsqrt(mean(x * x) + eps)` (or `x / sqrt(...)`, `x ^ 2`) with an
    optional `* gamma` into `tfc.rms_norm`. eps must be a constant scalar,
    the reductions must be over the last axis with keepdim, gamma and beta
    vectors of the last axis' size, and the intermediates must have no other
    use.
  }];
  let dependentDialects = ["::mlir::tfc::TfcDialect"];
  let options = [RemarksOption];
}

def TfcFuseAttention : Pass<"tfc-fuse-attention"> {
  let summary = "Recognise scaled dot-product attention written out with "
                "matmul, scale, mask and softmax";
  let description = [{
    Rewrites `softmax(Q·Kᵀ · c + mask) · V` into `tfc.attention` with the
    scale `c` as its attribute. Run after `tfc-fuse-softmax` (the softmax may
    have been written out). Accepted variations:

    * Kᵀ as `transpose_rhs`, as a transpose op (any permutation that ends by
      swapping the last two axes of K) or as a plain tensor;
    * scales as `* c` or `/ c` on the scores, or pre-applied to Q and/or K;
      no scale at all gives scale 1;
    * masks as `+ bias` (any number; a `tfc.causal_mask` becomes the `causal`
      flag) or `where(keep, s, fill)` / `where(drop, fill, s)` with a
      constant fill of -inf or <= -1e4;
    * scores of rank 2 to 4 (per head, heads flattened, [B, H, Tq, Tk]) and
      rank 5 `[B, Hkv, G, Tq, Tk]` against keys/values `[B, Hkv, 1, Tk, D]`
      (grouped-query attention written with broadcasting); Tq may differ
      from Tk (cross-attention); key heads of size 1 broadcast (multi-query).

    After fusion the head split `transpose(reshape(x), [0, 2, 1, 3])` feeding
    an attention op becomes `tfc.split_heads` and the merge after it
    `tfc.merge_heads` where the sizes provably match.

    Not fused, with the reason as a remark: intermediates (scores, scaled or
    masked scores, probabilities) with another use, a non-constant scale, a
    scale after the mask, softmax over another axis than the keys, masks
    that broadcast the scores to a larger shape, and operands whose batch
    dims broadcast in ways the op cannot express.
  }];
  let dependentDialects = ["::mlir::tfc::TfcDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
  let options = [RemarksOption];
}

def TfcFuseEpilogue : Pass<"tfc-fuse-epilogue"> {
  let summary = "Fold bias, activation and residual adds into their producers";
  let description = [{
    * `matmul(x, W)` with a 2-D `W` [K, N] (the `x @ w` of exported graphs,
      GPT-2's Conv1D) becomes `linear(x, transpose(W))`: one op family for
      the backends; the transpose of a weight is a load-time constant.
    * `linear(...) + b`, with `b` a vector of the output features ([N] or
      [1, ..., 1, N]), becomes the linear's bias; then `relu`, `gelu`,
      `silu` or `max(·, 0)` of it becomes its activation.
    * `layer_norm(a + r)` and `rms_norm(a + r)` (post-norm residuals) take
      the add as their `residual` operand.

    The absorbed value must have no other use (the remark names it: in a
    pre-norm model the residual sum also feeds the next residual).
  }];
  let dependentDialects = ["::mlir::tfc::TfcDialect"];
  let options = [RemarksOption];
}

def TfcMergeQkv : Pass<"tfc-merge-qkv"> {
  let summary = "Pack linears that read the same input into one";
  let description = [{
    Linears with the same input, static weights of the same input size, the
    same activation and all with (or all without) a bias -- the separate
    Q, K and V projections of an attention block, SwiGLU's gate and up
    projections -- become one `tfc.linear` whose weight and bias are
    `tfc.concat`s of theirs (constants the runtime evaluates at load time),
    followed by one `tfc.slice` per original result.
  }];
  let dependentDialects = ["::mlir::tfc::TfcDialect"];
  let options = [RemarksOption];
}

def TfcBubbleUpSlices : Pass<"tfc-bubble-up-slices"> {
  let summary = "Compute only the part of a result that a slice keeps";
  let description = [{
    A `tfc.slice` of a value whose every use is that same slice moves above
    the op that computes it, which then runs on slices of its operands:
    `slice(linear(x))` becomes `linear(slice(x))`, and so on up the graph.
    A BERT classifier reads the [CLS] position of the last layer's output:
    that layer's output projection, LayerNorms and FFN then compute one
    position instead of all of them (attention stops the move: its keys
    need every position).

    Moves: `tfc.linear`, `tfc.layer_norm` and `tfc.rms_norm` (their input and
    residual) for slices of any axis but the last; the elementwise ops for
    any axis (an operand broadcast along it stays whole); `tfc.softmax` for
    any axis but its own.
  }];
  let dependentDialects = ["::mlir::tfc::TfcDialect"];
}

def TfcQuantizeWeights : Pass<"tfc-quantize-weights", "mlir::ModuleOp"> {
  let summary = "Choose the block-quantised storage format of linear weights";
  let description = [{
    With `format` = q8_0, q4_0 or q4_1, every f32 weight of rank 2 whose
    last dim is a multiple of 32 and that some `tfc.linear` uses as its
    weight (directly or through an axis-0 `tfc.concat`, tfc-merge-qkv's
    merged projections) gets `quant = format`: the runtime quantises it at
    load (GGUF's reference quantisers) or, from a `.gguf` already in that
    format, binds its blocks as they are, and the CPU backend multiplies in
    int8 (`tfc_cpu.qgemm`). Weights used otherwise (embedding tables only, a
    transposed [K, N] weight such as GPT-2's Conv1D, whose blocks would run
    along the wrong axis) stay as they are. With `format` = none every
    `quant` is dropped: the weights are dequantised at load and computed in
    f32 (the CUDA pipeline does this).
  }];
  let dependentDialects = ["::mlir::tfc::TfcDialect"];
  let options = [
    Option<"format", "format", "std::string", /*default=*/"\"none\"",
           "q8_0, q4_0, q4_1 or none">
  ];
}

def TfcConvertComputeType : Pass<"tfc-convert-compute-type", "mlir::ModuleOp"> {
  let summary = "Compute an f32 model in f16 or bf16";
  let description = [{
    With `type` = f16 or bf16 (tfc-compile --compute-type), every f32 value
    of the model becomes `type`: each op's f32 results and f32 constants,
    the arguments and results of functions other than the entries. The
    weights stay f32 as bound (the file's) and are converted by a
    `tfc.cast` right after each `tfc.weight`, which tfc-model-abi moves
    into tfc_model_init (a derived constant, converted once); an entry's f32
    inputs are converted on the way in and its f32 outputs back to f32 on
    the way out, so its signature does not change, but for its states
    (`tfc.state` arguments and `tfc.state_for` results: KV caches), which
    the runtime keeps in the new type. The kernels still
    accumulate, normalise and take softmaxes in f32; what is f16/bf16 is
    what they read and write, as with PyTorch's `model.half()`. With
    `type` = f32 nothing changes.
  }];
  let dependentDialects = ["::mlir::tfc::TfcDialect"];
  let options = [
    Option<"type", "type", "std::string", /*default=*/"\"f32\"",
           "f32, f16 or bf16">
  ];
}

#endif // TFC_DIALECT_TFC_TRANSFORMS_PASSES_TD
