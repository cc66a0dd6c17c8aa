//===- TfcOps.td - Operations of the tfc dialect -----------*- tablegen -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Shape conventions used throughout:
//   B batch, H query heads, Hkv key/value heads, Tq query length,
//   Tk key length, D model width or head width, V vocabulary size.
// Any dimension may be dynamic (`?`); verifiers check the static ones.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_DIALECT_TFC_IR_TFCOPS_TD
#define TFC_DIALECT_TFC_IR_TFCOPS_TD

include "tfc/Dialect/Tfc/IR/TfcDialect.td"
include "tfc/Dialect/Tfc/IR/TfcEnums.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Type constraints and base classes
//===----------------------------------------------------------------------===//

def Tfc_Float : AnyTypeOf<[F16, BF16, F32, F64]>;
def Tfc_FloatTensor : RankedTensorOf<[F16, BF16, F32, F64]>;
def Tfc_IdTensor : RankedTensorOf<[I32, I64]>;
def Tfc_BoolTensor : RankedTensorOf<[I1]>;
// i8 only for the raw blocks of quantised weights (tfc.weight's raw form and
// the concats of those), which only the CPU backend makes.
def Tfc_AnyTensor : RankedTensorOf<[I1, I8, I32, I64, F16, BF16, F32, F64]>;

class Tfc_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tfc_Dialect, mnemonic, !listconcat([Pure], traits)>;

// An op whose result type follows from its operands and attributes. Its
// verifier infers that type (see `mlir::tfc::infer` in TfcOps.h) and accepts a
// declared result type that is compatible with it: same element type and
// rank, equal sizes where both are static. Its builders without a result type
// use the inferred one.
class Tfc_InferOp<string mnemonic, list<Trait> traits = []>
    : Tfc_Op<mnemonic, traits> {
  let hasVerifier = 1;
}

class Tfc_UnaryOp<string mnemonic, list<Trait> traits = []>
    : Tfc_Op<mnemonic, !listconcat([SameOperandsAndResultType], traits)> {
  let arguments = (ins Tfc_FloatTensor:$input);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

// Elementwise binary op with NumPy broadcasting. Written either as
// `tfc.add %a, %b : tensor<...>` when both operands and the result share a
// type, or with the full `(lhs, rhs) -> result` functional type.
class Tfc_BinaryOp<string mnemonic, list<Trait> traits = []>
    : Tfc_InferOp<mnemonic, !listconcat([SameOperandsElementType,
                                         SameOperandsAndResultElementType],
                                        traits)> {
  let arguments = (ins Tfc_FloatTensor:$lhs, Tfc_FloatTensor:$rhs);
  let results = (outs Tfc_FloatTensor:$result);
  let hasCustomAssemblyFormat = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$lhs, "::mlir::Value":$rhs), [{
      build($_builder, $_state,
            ::mlir::tfc::infer::resultOrPlaceholder(
                ::mlir::tfc::infer::broadcast({lhs.getType(), rhs.getType()}),
                lhs),
            lhs, rhs);
    }]>
  ];
}

class Tfc_ReductionOp<string mnemonic, list<Trait> traits = []>
    : Tfc_InferOp<mnemonic, traits> {
  let arguments = (ins Tfc_FloatTensor:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$axis,
                       UnitAttr:$keepdim);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "int64_t":$axis,
                   CArg<"bool", "false">:$keepdim), [{
      build($_builder, $_state,
            ::mlir::tfc::infer::resultOrPlaceholder(
                ::mlir::tfc::infer::reduction(input.getType(), axis, keepdim),
                input),
            input, axis, keepdim);
    }]>
  ];
}

//===----------------------------------------------------------------------===//
// Composite ops
//===----------------------------------------------------------------------===//

def Tfc_EmbeddingOp : Tfc_InferOp<"embedding"> {
  let summary = "gathers rows of an embedding table";
  let description = [{
    `table` is [V, D] and `ids` has any shape S of integer ids; the result is
    [S..., D] with `result[s..., :] = table[ids[s...], :]`. Ids outside
    [0, V) are an error at run time.

    ```mlir
    %e = tfc.embedding %wte[%ids]
        : (tensor<50257x768xf32>, tensor<?x?xi64>) -> tensor<?x?x768xf32>
    ```
  }];
  let arguments = (ins Tfc_FloatTensor:$table, Tfc_IdTensor:$ids);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $table `[` $ids `]` attr-dict `:` functional-type(operands, results)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$table, "::mlir::Value":$ids), [{
      build($_builder, $_state,
            ::mlir::tfc::infer::resultOrPlaceholder(
                ::mlir::tfc::infer::embedding(table.getType(), ids.getType()), table),
            table, ids);
    }]>
  ];
}

def Tfc_LinearOp : Tfc_InferOp<"linear", [SameOperandsAndResultElementType]> {
  let summary = "x · Wᵀ + b, with an optional fused activation";
  let description = [{
    `input` is [..., K], `weight` is [N, K] (the PyTorch `nn.Linear` layout)
    and the optional `bias` is [N]. The result is [..., N]. `activation`
    applies an elementwise activation to the biased result (an epilogue the
    fusion passes fold in).

    ```mlir
    %h = tfc.linear %x, %w, %b activation(gelu_tanh)
        : (tensor<?x?x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>)
        -> tensor<?x?x3072xf32>
    ```
  }];
  let arguments = (ins Tfc_FloatTensor:$input, Tfc_FloatTensor:$weight,
                       Optional<Tfc_FloatTensor>:$bias,
                       DefaultValuedAttr<Tfc_Activation,
                           "::mlir::tfc::Activation::None">:$activation);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? (`activation` `(` $activation^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$weight,
                   CArg<"::mlir::Value", "{}">:$bias,
                   CArg<"::mlir::tfc::Activation",
                        "::mlir::tfc::Activation::None">:$activation), [{
      build($_builder, $_state,
            ::mlir::tfc::infer::resultOrPlaceholder(
                ::mlir::tfc::infer::linear(input.getType(), weight.getType(),
                                     bias ? bias.getType() : ::mlir::Type()), input),
            input, weight, bias, activation);
    }]>
  ];
}

def Tfc_MatmulOp : Tfc_InferOp<"matmul", [SameOperandsAndResultElementType]> {
  let summary = "batched matrix product with transpose flags";
  let description = [{
    `lhs` is [..., M, K] (or [..., K, M] with `transpose_lhs`), `rhs` is
    [..., K, N] (or [..., N, K] with `transpose_rhs`). Leading batch
    dimensions broadcast NumPy-style; the result is [batch..., M, N].
  }];
  let arguments = (ins Tfc_FloatTensor:$lhs, Tfc_FloatTensor:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$lhs, "::mlir::Value":$rhs,
                   CArg<"bool", "false">:$transposeLhs,
                   CArg<"bool", "false">:$transposeRhs), [{
      build($_builder, $_state,
            ::mlir::tfc::infer::resultOrPlaceholder(
                ::mlir::tfc::infer::matmul(lhs.getType(), rhs.getType(),
                                     transposeLhs, transposeRhs), lhs),
            lhs, rhs, transposeLhs, transposeRhs);
    }]>
  ];
}

def Tfc_LayerNormOp : Tfc_Op<"layer_norm", [AttrSizedOperandSegments]> {
  let summary = "layer normalisation over the last axis";
  let description = [{
    `(x - mean(x)) / sqrt(var(x) + epsilon) * scale + bias` over the last
    axis, with the biased variance. `scale` (gamma) and `bias` (beta) are
    optional vectors of the last axis' size. With `residual`, x is
    `input + residual` (the residual add fused into the norm; both of the
    result's type).
  }];
  let arguments = (ins Tfc_FloatTensor:$input,
                       Optional<Tfc_FloatTensor>:$scale,
                       Optional<Tfc_FloatTensor>:$bias,
                       Optional<Tfc_FloatTensor>:$residual,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`scale` `(` $scale^ `)`)? (`bias` `(` $bias^ `)`)?
    (`residual` `(` $residual^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Tfc_RmsNormOp : Tfc_Op<"rms_norm", [AttrSizedOperandSegments]> {
  let summary = "root-mean-square normalisation over the last axis";
  let description = [{
    `x / sqrt(mean(x²) + epsilon) * scale` over the last axis; `scale` is an
    optional vector of the last axis' size. With `residual`, x is
    `input + residual`.
  }];
  let arguments = (ins Tfc_FloatTensor:$input,
                       Optional<Tfc_FloatTensor>:$scale,
                       Optional<Tfc_FloatTensor>:$residual,
                       DefaultValuedAttr<F64Attr, "1.0e-6">:$epsilon);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`scale` `(` $scale^ `)`)? (`residual` `(` $residual^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Tfc_SoftmaxOp : Tfc_Op<"softmax", [SameOperandsAndResultType]> {
  let summary = "numerically stable softmax over one axis";
  let description = [{
    `exp(x - max(x)) / sum(exp(x - max(x)))` along `axis`. A row whose
    entries are all -inf yields zeros.
  }];
  let arguments = (ins Tfc_FloatTensor:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$axis);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Tfc_AttentionOp : Tfc_InferOp<"attention", [AttrSizedOperandSegments]> {
  let summary = "scaled dot-product attention, heads as a batch dimension";
  let description = [{
    `softmax(softcap(Q·Kᵀ · scale) + mask + position bias) · V` with

    * `query` [B, H, Tq, D], `key` [B, Hkv, Tk, D], `value` [B, Hkv, Tk, Dv];
      H must be a multiple of Hkv (grouped-query attention: query head h reads
      key/value head h / (H / Hkv)); Tq may differ from Tk (cross-attention,
      decoding with a KV cache);
    * `mask`: an optional additive bias that broadcasts to [B, H, Tq, Tk]
      (0 keeps a score, -inf removes it);
    * `causal`: query i sees key j only if j <= i + (Tk - Tq), i.e. the causal
      diagonal is aligned to the end of the keys, which is what a decoder step
      over a KV cache needs;
    * `scale`: defaults to 1/sqrt(D);
    * `window` (with `causal`): query i also sees only the last `window` keys
      up to its diagonal, j > i + (Tk - Tq) - window (Mistral's
      sliding_window); the kernels skip the keys before the window;
    * `softcap` (Gemma 2's attn_logit_softcapping): each scaled score s
      becomes softcap · tanh(s / softcap) before the mask and biases are
      added; none without it.

    Position biases that depend only on the distance r = j - (i + Tk - Tq)
    between key j and query i (the query's position counted like the causal
    diagonal, so a decode step over a cache of `past` keys is at past + i),
    computed by the kernels per tile and never materialised:

    * `relative_bias` [H, 2R + 1]: adds `relative_bias[h, clamp(r, -R, R) + R]`
      (T5's bucketed bias, as `tfc.relative_position_bias` produces it);
    * `alibi` (the maximum bias m, 8 in the ALiBi paper, BLOOM and MPT): adds
      `slope_h · r` with slope_h = 2^(-m·(h+1)/p) for h < p, the largest power
      of two <= H, and 2^(-m·(2(h-p)+1)/(2p)) for the other heads. Over the
      keys a query may see (r <= 0 when causal) this is `-slope_h · |i - j|`;
      softmax ignores the per-row constant that separates it from BLOOM's
      `slope_h · j`.

    `row_past` (optional, i64 [B]) puts each batch row at its own position
    over a cache: row b's queries are at positions row_past[b] + i and it
    attends to keys [0, row_past[b] + Tq) (clamped to [0, Tk]), its causal
    diagonal, window and position biases counted from there, as if its keys
    ended there. Rows at their own positions over one cache (a serving
    batch) run as one call; what a row computes does not depend on the other
    rows (the CPU kernels split each row's keys by its own count).

    Key and value have the query's element type, or are both f16 under an f32
    query (a KV cache kept in half precision, `tfc-compile
    --kv-cache-type=f16`): they are widened to f32 as they are read.

    A query row whose keys are all masked yields zeros, never NaN. The result
    is [B, H, Tq, Dv].
  }];
  let arguments = (ins Tfc_FloatTensor:$query, Tfc_FloatTensor:$key,
                       Tfc_FloatTensor:$value,
                       Optional<Tfc_FloatTensor>:$mask,
                       Optional<Tfc_FloatTensor>:$relative_bias,
                       Optional<TensorOf<[I64]>>:$row_past,
                       UnitAttr:$causal,
                       OptionalAttr<F64Attr>:$scale,
                       OptionalAttr<I64Attr>:$window,
                       OptionalAttr<F64Attr>:$alibi,
                       OptionalAttr<F64Attr>:$softcap);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` `(` $mask^ `)`)?
    (`relative_bias` `(` $relative_bias^ `)`)?
    (`row_past` `(` $row_past^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// The scale applied to the scores: the attribute, or 1/sqrt(D).
    double getEffectiveScale();
    /// R of a [H, 2R + 1] relative bias (0 without one).
    int64_t getRelativeDistance();
  }];
  let hasVerifier = 1;
  // An explicit scale equal to the default 1/sqrt(D) is dropped.
  let hasCanonicalizeMethod = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$query, "::mlir::Value":$key,
                   "::mlir::Value":$value, CArg<"::mlir::Value", "{}">:$mask,
                   CArg<"bool", "false">:$causal,
                   CArg<"::mlir::FloatAttr", "{}">:$scale,
                   CArg<"::mlir::IntegerAttr", "{}">:$window,
                   CArg<"::mlir::Value", "{}">:$relative_bias,
                   CArg<"::mlir::FloatAttr", "{}">:$alibi,
                   CArg<"::mlir::Value", "{}">:$row_past,
                   CArg<"::mlir::FloatAttr", "{}">:$softcap), [{
      build($_builder, $_state,
            ::mlir::tfc::infer::resultOrPlaceholder(
                ::mlir::tfc::infer::attention(query.getType(), key.getType(),
                                        value.getType(),
                                        mask ? mask.getType() : ::mlir::Type(),
                                        {}), query),
            query, key, value, mask, relative_bias, row_past, causal,
            scale, window, alibi, softcap);
    }]>
  ];
}

def Tfc_RelativePositionBiasOp : Tfc_Op<"relative_position_bias"> {
  let summary = "T5's bucketed relative position bias, by distance";
  let description = [{
    From `table` [num_buckets, H] (T5's `relative_attention_bias.weight`)
    produces the [H, 2R + 1] bias by distance that `tfc.attention`'s
    `relative_bias` reads, R = `max_distance`: column c holds, per head, the
    table row of the bucket of the distance r = c - R from query to key.
    Buckets as T5 defines them: with `bidirectional` half of them for keys
    after the query (r > 0); distances below half the (remaining) buckets
    have a bucket each, longer ones share logarithmically wider buckets up to
    `max_distance`, beyond which all fall into the last (so clamping r to
    [-R, R] loses nothing). Without `bidirectional` keys after the query
    (r > 0) take bucket 0. The bucket boundaries are computed in single
    precision exactly as Hugging Face transformers' T5 does.
  }];
  let arguments = (ins Tfc_FloatTensor:$table,
                       ConfinedAttr<I64Attr, [IntPositive]>:$num_buckets,
                       ConfinedAttr<I64Attr, [IntPositive]>:$max_distance,
                       UnitAttr:$bidirectional);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $table attr-dict `:` type($table) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfc_GeluOp : Tfc_Op<"gelu", [SameOperandsAndResultType]> {
  let summary = "Gaussian error linear unit";
  let description = [{
    `erf`: `0.5·x·(1 + erf(x/√2))` (BERT). `tanh`:
    `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))` (GPT-2's `gelu_new`).
  }];
  let arguments = (ins Tfc_FloatTensor:$input,
                       Tfc_GeluApproximation:$approximation);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = "$approximation $input attr-dict `:` type($input)";
}

def Tfc_ReluOp : Tfc_UnaryOp<"relu"> {
  let summary = "max(x, 0)";
}

def Tfc_SiluOp : Tfc_UnaryOp<"silu"> {
  let summary = "x · sigmoid(x) (SwiGLU's gate)";
}

def Tfc_RopeOp : Tfc_Op<"rope", [AllTypesMatch<["input", "result"]>,
                                 AttrSizedOperandSegments]> {
  let summary = "rotary position embedding";
  let description = [{
    Rotates pairs of features of `input` [..., T, D] by the angle
    `(offset + t) / base^(2i / R)` where t is the position along T, i the
    index of the pair and R = `rotary_dim` (default D; the features past R
    pass through). `adjacent` pairs features (2i, 2i+1) (RoFormer, GPT-J);
    `rotate_half` pairs i with i + R/2 (GPT-NeoX, LLaMA). `offset` (default
    0) is the position of the first row, e.g. the KV-cache length.
    `row_offsets` (i64 [B], B the input's first dim; instead of `offset`)
    gives each batch row its own: rows at their own positions, as a serving
    batch has them.
    `freq_scale` (R/2 positive numbers) multiplies the inverse frequency of
    each pair: the context-extension schemes (linear position
    interpolation, Llama 3's frequency-dependent scaling) are tables of it.
  }];
  let arguments = (ins Tfc_FloatTensor:$input,
                       Optional<Index>:$offset,
                       Optional<TensorOf<[I64]>>:$row_offsets,
                       Tfc_RopeMode:$mode,
                       DefaultValuedAttr<F64Attr, "10000.0">:$base,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:
                           $rotary_dim,
                       OptionalAttr<DenseF64ArrayAttr>:$freq_scale);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $mode $input (`offset` `(` $offset^ `)`)?
    (`row_offsets` `(` $row_offsets^ `:` type($row_offsets) `)`)? attr-dict
    `:` type($input)
  }];
  let hasVerifier = 1;
}

def Tfc_SinusoidalPositionsOp : Tfc_Op<"sinusoidal_positions"> {
  let summary = "the fixed sinusoidal position table of 'Attention Is All You Need'";
  let description = [{
    Produces a [T, D] table for positions `offset .. offset + length`:
    `PE(p, 2i) = sin(p / base^(2i/D))`, `PE(p, 2i+1) = cos(p / base^(2i/D))`.
    With `halves` the sines fill the first D/2 features and the cosines the
    last D/2 (`PE(p, i) = sin(...)`, `PE(p, D/2 + i) = cos(...)`, i < D/2:
    Marian, XLM without interleaving). D must be static (and even with
    `halves`).
  }];
  let arguments = (ins Index:$length, Optional<Index>:$offset,
                       DefaultValuedAttr<F64Attr, "10000.0">:$base,
                       UnitAttr:$halves);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    (`halves` $halves^)? $length (`offset` `(` $offset^ `)`)? attr-dict `:`
    type($result)
  }];
  let hasVerifier = 1;
}

def Tfc_CausalMaskOp : Tfc_Op<"causal_mask"> {
  let summary = "an additive causal bias";
  let description = [{
    A [Tq, Tk] bias that is 0 where key j may be seen by query i
    (j <= i + (Tk - Tq)) and -inf elsewhere; the same rule as the `causal`
    flag of `tfc.attention`.
  }];
  let arguments = (ins Index:$query_length, Index:$key_length);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $query_length `,` $key_length attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def Tfc_PaddingMaskOp : Tfc_Op<"padding_mask"> {
  let summary = "turns a 1/0 attention_mask into an additive bias";
  let description = [{
    `input` is [B, Tk] with the Hugging Face convention (1 or true = token,
    0 = padding). The result is the [B, 1, 1, Tk] bias, 0 for tokens and -inf
    for padding, which broadcasts against [B, H, Tq, Tk] scores.
  }];
  let arguments = (ins RankedTensorOf<[I1, I32, I64, F32]>:$input);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tfc_SplitHeadsOp : Tfc_InferOp<"split_heads",
                                   [SameOperandsAndResultElementType]> {
  let summary = "[B, T, H·D] -> [B, H, T, D]";
  let description = [{
    Reshapes the feature axis into `heads` heads and moves the head axis in
    front of the sequence axis.
  }];
  let arguments = (ins Tfc_FloatTensor:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$heads);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($result)
  }];
  let hasFolder = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "int64_t":$heads), [{
      build($_builder, $_state,
            ::mlir::tfc::infer::resultOrPlaceholder(
                ::mlir::tfc::infer::splitHeads(input.getType(), heads), input),
            input, heads);
    }]>
  ];
}

def Tfc_MergeHeadsOp : Tfc_InferOp<"merge_heads",
                                   [SameOperandsAndResultElementType]> {
  let summary = "[B, H, T, D] -> [B, T, H·D]";
  let description = "The inverse of `tfc.split_heads`.";
  let arguments = (ins Tfc_FloatTensor:$input);
  let results = (outs Tfc_FloatTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($result)
  }];
  let hasFolder = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input), [{
      build($_builder, $_state,
            ::mlir::tfc::infer::resultOrPlaceholder(
                ::mlir::tfc::infer::mergeHeads(input.getType()), input),
            input);
    }]>
  ];
}

def Tfc_WeightOp : Tfc_Op<"weight"> {
  let summary = "a named model parameter, bound to a weights-file entry";
  let description = [{
    The value of the parameter `name` (a safetensors key such as
    `h.0.attn.c_attn.weight`), supplied by the runtime when the model is
    loaded. Its shape is static; the runtime checks the file against it. Two
    references to the same name are the same value (tied weights).

    ```mlir
    %wte = tfc.weight "wte.weight" : tensor<50257x768xf32>
    ```

    `quant` names a block-quantised storage format (`q8_0`, `q4_0`, `q4_1`:
    GGUF's blocks of 32 values along the last dim). With an f32 result the
    value is still the dequantised f32 matrix: every op and the interpreter
    see f32, and the format only tells the backends how it is stored. The CPU
    backend turns such a weight into its raw form, an i8 result of shape
    [..., K / 32, block bytes] holding the blocks as stored, which only its
    quantised ops read (`tfc_cpu.qpack`, `tfc_cpu.qembedding`,
    `tfc_cpu.dequantize`).

    ```mlir
    %w = tfc.weight "blk.0.attn_q.weight" {quant = "q4_1"} : tensor<576x576xf32>
    %raw = tfc.weight "blk.0.attn_q.weight" {quant = "q4_1"} : tensor<576x18x20xi8>
    ```
  }];
  let arguments = (ins StrAttr:$name, OptionalAttr<StrAttr>:$quant);
  let results = (outs Tfc_AnyTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tfc_ArangeOp : Tfc_Op<"arange"> {
  let summary = "the positions offset, offset + 1, ..., offset + length - 1";
  let description = [{
    A [length] vector of integer positions, e.g. the ids of a learned position
    embedding; `offset` (default 0) is the first one (the KV-cache length when
    decoding).

    ```mlir
    %pos = tfc.arange %t offset(%past) : tensor<?xi64>
    ```
  }];
  let arguments = (ins Index:$length, Optional<Index>:$offset);
  let results = (outs Tfc_IdTensor:$result);
  let assemblyFormat = [{
    $length (`offset` `(` $offset^ `)`)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def Tfc_SliceOp : Tfc_InferOp<"slice", [SameOperandsAndResultElementType]> {
  let summary = "a contiguous range of one axis";
  let description = [{
    `result = input[..., start : start + size, ...]` along `axis`, e.g. the
    query, key and value parts of a packed QKV projection, or the first
    token. With `from_end`, `start` counts from the end of the axis:
    `input[..., n - start - size : n - start, ...]` (`start = 0, size = 1`:
    the last position, whatever the length). On a dynamic axis,
    `start + size` must not exceed its size at run time.

    ```mlir
    %q = tfc.slice %qkv {axis = 2, start = 0, size = 768}
        : tensor<?x?x2304xf32> -> tensor<?x?x768xf32>
    %last = tfc.slice %h {axis = 1, start = 0, size = 1, from_end}
        : tensor<?x?x576xf32> -> tensor<?x1x576xf32>
    ```
  }];
  let arguments = (ins Tfc_AnyTensor:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$axis,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$start,
                       ConfinedAttr<I64Attr, [IntPositive]>:$size,
                       UnitAttr:$from_end);
  let results = (outs Tfc_AnyTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($result)
  }];
  let hasFolder = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "int64_t":$axis, "int64_t":$start,
                   "int64_t":$size, CArg<"bool", "false">:$fromEnd), [{
      build($_builder, $_state,
            ::mlir::tfc::infer::resultOrPlaceholder(
                ::mlir::tfc::infer::slice(input.getType(), axis, start, size),
                input),
            input, axis, start, size, fromEnd);
    }]>
  ];
}

def Tfc_ConcatOp : Tfc_Op<"concat", [SameOperandsAndResultElementType]> {
  let summary = "joins tensors along one axis";
  let description = [{
    All inputs have the same rank and equal sizes except along `axis`; the
    result's `axis` size is their sum. `tfc-merge-qkv` uses it to pack the
    weights of separate Q, K and V projections into one (a constant the
    runtime evaluates once at load time).

    ```mlir
    %w = tfc.concat %wq, %wk, %wv {axis = 0}
        : (tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>)
        -> tensor<2304x768xf32>
    ```
  }];
  let arguments = (ins Variadic<Tfc_AnyTensor>:$inputs,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$axis);
  let results = (outs Tfc_AnyTensor:$result);
  let assemblyFormat = [{
    $inputs attr-dict `:` functional-type($inputs, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise primitives
//===----------------------------------------------------------------------===//

def Tfc_AddOp : Tfc_BinaryOp<"add", [Commutative]> {
  let summary = "elementwise a + b with broadcasting";
  let hasFolder = 1;
}
def Tfc_SubOp : Tfc_BinaryOp<"sub"> {
  let summary = "elementwise a - b with broadcasting";
  let hasFolder = 1;
}
def Tfc_MulOp : Tfc_BinaryOp<"mul", [Commutative]> {
  let summary = "elementwise a · b with broadcasting";
  let hasFolder = 1;
}
def Tfc_DivOp : Tfc_BinaryOp<"div"> {
  let summary = "elementwise a / b with broadcasting";
  let hasFolder = 1;
}
def Tfc_MaxOp : Tfc_BinaryOp<"max", [Commutative]> {
  let summary = "elementwise maximum with broadcasting";
}
def Tfc_MinOp : Tfc_BinaryOp<"min", [Commutative]> {
  let summary = "elementwise minimum with broadcasting";
}
def Tfc_PowOp : Tfc_BinaryOp<"pow"> {
  let summary = "elementwise a ^ b with broadcasting";
  let hasFolder = 1;
}

def Tfc_ExpOp : Tfc_UnaryOp<"exp"> { let summary = "elementwise e^x"; }
def Tfc_LogOp : Tfc_UnaryOp<"log"> { let summary = "elementwise ln(x)"; }
def Tfc_SqrtOp : Tfc_UnaryOp<"sqrt"> { let summary = "elementwise √x"; }
def Tfc_RsqrtOp : Tfc_UnaryOp<"rsqrt"> { let summary = "elementwise 1/√x"; }
def Tfc_TanhOp : Tfc_UnaryOp<"tanh"> { let summary = "elementwise tanh(x)"; }
def Tfc_ErfOp : Tfc_UnaryOp<"erf"> { let summary = "elementwise erf(x)"; }
def Tfc_NegOp : Tfc_UnaryOp<"neg"> {
  let summary = "elementwise -x";
  let hasFolder = 1;
}

def Tfc_WhereOp : Tfc_InferOp<"where"> {
  let summary = "elementwise select with broadcasting";
  let description = [{
    `result = condition ? on_true : on_false`, all three broadcast together
    NumPy-style. A mask fill is `tfc.where %keep, %scores, %neg_inf`.
  }];
  let arguments = (ins Tfc_BoolTensor:$condition, Tfc_FloatTensor:$on_true,
                       Tfc_FloatTensor:$on_false);
  let results = (outs Tfc_FloatTensor:$result);
  let hasCustomAssemblyFormat = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$condition, "::mlir::Value":$onTrue,
                   "::mlir::Value":$onFalse), [{
      build($_builder, $_state,
            ::mlir::tfc::infer::resultOrPlaceholder(
                ::mlir::tfc::infer::broadcast({condition.getType(), onTrue.getType(),
                                         onFalse.getType()}), onTrue),
            condition, onTrue, onFalse);
    }]>
  ];
}

def Tfc_CastOp : Tfc_Op<"cast"> {
  let summary = "elementwise conversion of the element type";
  let description = [{
    Converts between integer, boolean and float element types; the shape is
    unchanged. Float to integer truncates toward zero; to `i1`, non-zero is
    true.
  }];
  let arguments = (ins Tfc_AnyTensor:$input);
  let results = (outs Tfc_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

def Tfc_ReduceSumOp : Tfc_ReductionOp<"reduce_sum"> {
  let summary = "sum over one axis";
}
def Tfc_ReduceMaxOp : Tfc_ReductionOp<"reduce_max"> {
  let summary = "maximum over one axis";
}
def Tfc_ReduceMeanOp : Tfc_ReductionOp<"reduce_mean"> {
  let summary = "arithmetic mean over one axis";
}

def Tfc_ArgmaxOp : Tfc_InferOp<"argmax"> {
  let summary = "index of the maximum over one axis (first one on ties)";
  let arguments = (ins Tfc_FloatTensor:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$axis,
                       UnitAttr:$keepdim);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "int64_t":$axis,
                   CArg<"bool", "false">:$keepdim), [{
      build($_builder, $_state,
            ::mlir::tfc::infer::resultOrPlaceholder(
                ::mlir::tfc::infer::reduction(input.getType(), axis, keepdim,
                                        $_builder.getI64Type()), input),
            input, axis, keepdim);
    }]>
  ];
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Tfc_TransposeOp : Tfc_InferOp<"transpose",
                                  [SameOperandsAndResultElementType]> {
  let summary = "permutes the axes";
  let description = [{
    `result.shape[i] = input.shape[permutation[i]]`.

    ```mlir
    %t = tfc.transpose %x [0, 2, 1, 3]
        : tensor<?x?x12x64xf32> -> tensor<?x12x?x64xf32>
    ```
  }];
  let arguments = (ins Tfc_AnyTensor:$input,
                       DenseI64ArrayAttr:$permutation);
  let results = (outs Tfc_AnyTensor:$result);
  let assemblyFormat = [{
    $input $permutation attr-dict `:` type($input) `->` type($result)
  }];
  let hasFolder = 1;
  let hasCanonicalizer = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input,
                   "::llvm::ArrayRef<int64_t>":$permutation), [{
      build($_builder, $_state,
            ::mlir::tfc::infer::resultOrPlaceholder(
                ::mlir::tfc::infer::transpose(input.getType(), permutation), input),
            input, permutation);
    }]>
  ];
}

def Tfc_ReshapeOp : Tfc_Op<"reshape",
                           [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "reinterprets the elements in row-major order under a new shape";
  let description = [{
    The static sizes of the result come from its type; each dynamic size is
    given by one `index` operand, in order.

    ```mlir
    %r = tfc.reshape %x [%b, %t]
        : tensor<?x?x768xf32> -> tensor<?x?x12x64xf32>
    ```
  }];
  let arguments = (ins Tfc_AnyTensor:$input, Variadic<Index>:$dynamic_sizes);
  let results = (outs Tfc_AnyTensor:$result);
  let assemblyFormat = [{
    $input (`[` $dynamic_sizes^ `]`)? attr-dict `:` type($input) `->`
    type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Block boundaries
//===----------------------------------------------------------------------===//

// The markers order against one another and nothing else: their effect is on
// a resource of their own, so no analysis of buffers or values sees them.
def Tfc_TableSlotOp : Tfc_Op<"table_slot", [Pure]> {
  let summary = "the buffer one slot of the runtime's table points to";
  let description = [{
    `tfc-model-abi` reads each weight and each derived constant through the
    runtime's table (an `!llvm.ptr` to an array of pointers,
    include/tfc/Schemas/ModelABI.h): slot `index` points to a dense buffer
    of the result's static shape. One op per read, so that the passes
    between the ABI and the LLVM lowering see one op where the descriptor
    takes twenty; `tfc-expand-table-slots` (first in the host's LLVM
    lowering) builds the memref descriptor from the loaded pointer. Reading
    the table's pointer is all it does (the table does not change while a
    function of the model runs): pure.

    ```mlir
    %w = tfc.table_slot %table[12] : memref<576x48x20xi8>
    ```
  }];
  let arguments = (ins AnyType:$table, I64Attr:$index);
  let results = (outs AnyStaticShapeMemRef:$result);
  let assemblyFormat = "$table `[` $index `]` attr-dict `:` type($table) `->` type($result)";
}

def Tfc_BlockBoundary : Resource<"::mlir::tfc::BlockBoundaryResource">;

class Tfc_BlockMarkerOp<string mnemonic>
    : Op<Tfc_Dialect, mnemonic, [MemoryEffects<[MemWrite<Tfc_BlockBoundary>]>]>;

def Tfc_BlockBeginOp : Tfc_BlockMarkerOp<"block_begin"> {
  let summary = "the first op of a call of a description's block";
  let description = [{
    The frontend inlines every call of a block (a layer, an attention, an
    MLP); with `MLIRGenOptions::markBlocks` it brackets what one call made
    with `tfc.block_begin` and `tfc.block_end`, so that the ops of one layer
    stay recognisable through fusion and lowering. Passes may create ops
    between the markers or move ops out of them, but nothing crosses a pair
    into another. `tfc-outline-blocks` turns the calls that computed the same
    thing (the layers of a model, which differ in their weights only) into
    calls of one function and erases every marker; until then the markers
    have no semantics: they read and write nothing the model computes.

    ```mlir
    tfc.block_begin "layer"
    ...
    tfc.block_end "layer"
    ```
  }];
  let arguments = (ins StrAttr:$block_name);
  let assemblyFormat = "$block_name attr-dict";
}

def Tfc_BlockEndOp : Tfc_BlockMarkerOp<"block_end"> {
  let summary = "the end of a call of a description's block";
  let description = [{
    Closes the innermost open `tfc.block_begin` of the same block name (see
    there).
  }];
  let arguments = (ins StrAttr:$block_name);
  let assemblyFormat = "$block_name attr-dict";
}

#endif // TFC_DIALECT_TFC_IR_TFCOPS_TD
