//===- Builtins.cpp - The built-in ops of the .tfm language ---------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Frontend/Builtins.h"

#include <string>

using namespace tfc;

namespace {
constexpr ArgKind T = ArgKind::Tensor;
constexpr ParamSpec kX[] = {{"x", T, false}};
constexpr ParamSpec kAB[] = {{"a", T, false}, {"b", T, false}};
constexpr ParamSpec kEmbed[] = {{"table", T, false}, {"ids", T, false}};
constexpr ParamSpec kLinear[] = {
    {"x", T, false}, {"weight", T, false}, {"bias", T, true}};
constexpr ParamSpec kMatmul[] = {{"a", T, false},
                                 {"b", T, false},
                                 {"transpose_a", ArgKind::Bool, true},
                                 {"transpose_b", ArgKind::Bool, true}};
constexpr ParamSpec kLayerNorm[] = {{"x", T, false},
                                    {"scale", T, true},
                                    {"bias", T, true},
                                    {"eps", ArgKind::Float, true}};
constexpr ParamSpec kRmsNorm[] = {
    {"x", T, false}, {"scale", T, true}, {"eps", ArgKind::Float, true}};
constexpr ParamSpec kAxis[] = {{"x", T, false}, {"axis", ArgKind::Int, true}};
constexpr ParamSpec kAttention[] = {{"q", T, false},
                                    {"k", T, false},
                                    {"v", T, false},
                                    {"heads", ArgKind::Int, true},
                                    {"kv_heads", ArgKind::Int, true},
                                    {"causal", ArgKind::Bool, true},
                                    {"mask", T, true},
                                    {"scale", ArgKind::Float, true},
                                    {"window", ArgKind::Int, true},
                                    {"relative_bias", T, true},
                                    {"alibi", ArgKind::Float, true},
                                    {"softcap", ArgKind::Float, true}};
constexpr ParamSpec kRelativeBias[] = {{"table", T, false},
                                       {"buckets", ArgKind::Int, true},
                                       {"max_distance", ArgKind::Int, true},
                                       {"bidirectional", ArgKind::Bool, true}};
constexpr ParamSpec kGelu[] = {{"x", T, false},
                               {"approximate", ArgKind::String, true}};
constexpr ParamSpec kRope[] = {{"x", T, false},
                               {"mode", ArgKind::String, true},
                               {"offset", ArgKind::Length, true},
                               {"base", ArgKind::Float, true},
                               {"rotary_dim", ArgKind::Int, true},
                               {"scaling", ArgKind::String, true},
                               {"factor", ArgKind::Float, true},
                               {"low_freq_factor", ArgKind::Float, true},
                               {"high_freq_factor", ArgKind::Float, true},
                               {"original_context", ArgKind::Int, true}};
constexpr ParamSpec kSinusoidal[] = {{"length", ArgKind::Length, false},
                                     {"features", ArgKind::Int, false},
                                     {"offset", ArgKind::Length, true},
                                     {"base", ArgKind::Float, true},
                                     {"interleaved", ArgKind::Bool, true}};
constexpr ParamSpec kCausalMask[] = {{"q_len", ArgKind::Length, false},
                                     {"kv_len", ArgKind::Length, false}};
constexpr ParamSpec kPaddingMask[] = {{"attention_mask", T, false}};
constexpr ParamSpec kSplitHeads[] = {{"x", T, false},
                                     {"heads", ArgKind::Int, false}};
constexpr ParamSpec kReduce[] = {{"x", T, false},
                                 {"axis", ArgKind::Int, true},
                                 {"keepdim", ArgKind::Bool, true}};
constexpr ParamSpec kWhere[] = {
    {"cond", T, false}, {"a", T, false}, {"b", T, false}};
constexpr ParamSpec kCast[] = {{"x", T, false}, {"dtype", ArgKind::DType, false}};
constexpr ParamSpec kTranspose[] = {{"x", T, false},
                                    {"perm", ArgKind::IntList, true}};
constexpr ParamSpec kReshape[] = {{"x", T, false},
                                  {"shape", ArgKind::Shape, false}};
constexpr ParamSpec kSplit[] = {{"x", T, false},
                                {"parts", ArgKind::Int, false},
                                {"axis", ArgKind::Int, true}};
constexpr ParamSpec kSlice[] = {{"x", T, false},
                                {"start", ArgKind::Int, false},
                                {"size", ArgKind::Int, false},
                                {"axis", ArgKind::Int, true}};
constexpr ParamSpec kConcat[] = {{"a", T, false},
                                 {"b", T, false},
                                 {"axis", ArgKind::Int, true}};
constexpr ParamSpec kArange[] = {{"length", ArgKind::Length, false},
                                 {"offset", ArgKind::Length, true}};
constexpr ParamSpec kSize[] = {{"x", T, false}, {"axis", ArgKind::Int, false}};

const BuiltinSpec kBuiltins[] = {
    {Builtin::Embed, "embed", kEmbed,
     "rows of table [V, D] at ids [...] -> [..., D]"},
    {Builtin::Linear, "linear", kLinear,
     "x [..., K] · weight [N, K]ᵀ + bias [N] -> [..., N]"},
    {Builtin::Matmul, "matmul", kMatmul,
     "batched a [..., M, K] @ b [..., K, N] -> [..., M, N]"},
    {Builtin::LayerNorm, "layer_norm", kLayerNorm,
     "(x - mean) / sqrt(var + eps) · scale + bias over the last axis"},
    {Builtin::RmsNorm, "rms_norm", kRmsNorm,
     "x / sqrt(mean(x²) + eps) · scale over the last axis"},
    {Builtin::Softmax, "softmax", kAxis,
     "numerically stable softmax along axis (default -1)"},
    {Builtin::Attention, "attention", kAttention,
     "softmax(q·kᵀ·scale + mask + position bias) · v; [B, T, H·D] inputs with "
     "heads=, or [B, H, T, D]; relative_bias = relative_position_bias(...) "
     "(T5), alibi = maximum bias (ALiBi: 8 for BLOOM and MPT), softcap = c: "
     "scores c·tanh(s/c) before the mask (Gemma 2: 50)"},
    {Builtin::RelativePositionBias, "relative_position_bias", kRelativeBias,
     "T5's bias by query-key distance from table [buckets, heads] -> [heads, "
     "2·max_distance + 1] for attention's relative_bias; buckets = 32, "
     "max_distance = 128, bidirectional = true by default"},
    {Builtin::Gelu, "gelu", kGelu,
     "GELU; approximate = \"erf\" (default) or \"tanh\""},
    {Builtin::Relu, "relu", kX, "max(x, 0)"},
    {Builtin::Silu, "silu", kX, "x · sigmoid(x)"},
    {Builtin::Exp, "exp", kX, "e^x"},
    {Builtin::Log, "log", kX, "ln x"},
    {Builtin::Sqrt, "sqrt", kX, "√x"},
    {Builtin::Rsqrt, "rsqrt", kX, "1/√x"},
    {Builtin::Tanh, "tanh", kX, "tanh x"},
    {Builtin::Erf, "erf", kX, "erf x"},
    {Builtin::Rope, "rope", kRope,
     "rotary positions on x [..., T, D]; mode = \"rotate_half\" (default) or "
     "\"adjacent\"; scaling = \"linear\" or \"llama3\" (factor, ...) for "
     "extended contexts"},
    {Builtin::SinusoidalPositions, "sinusoidal_positions", kSinusoidal,
     "the [length, features] sin/cos table"},
    {Builtin::CausalMask, "causal_mask", kCausalMask,
     "[q_len, kv_len] additive bias, -inf above the diagonal"},
    {Builtin::PaddingMask, "padding_mask", kPaddingMask,
     "1/0 attention_mask [B, T] -> additive bias [B, 1, 1, T]"},
    {Builtin::SplitHeads, "split_heads", kSplitHeads,
     "[B, T, H·D] -> [B, H, T, D]"},
    {Builtin::MergeHeads, "merge_heads", kX, "[B, H, T, D] -> [B, T, H·D]"},
    {Builtin::Maximum, "maximum", kAB, "elementwise max, broadcasting"},
    {Builtin::Minimum, "minimum", kAB, "elementwise min, broadcasting"},
    {Builtin::Pow, "pow", kAB, "elementwise a^b, broadcasting (also a ** b)"},
    {Builtin::Sum, "sum", kReduce, "sum along axis (default -1)"},
    {Builtin::Max, "max", kReduce, "maximum along axis (default -1)"},
    {Builtin::Mean, "mean", kReduce, "mean along axis (default -1)"},
    {Builtin::Argmax, "argmax", kReduce,
     "index of the maximum along axis (i64)"},
    {Builtin::Where, "where", kWhere,
     "cond ? a : b elementwise, cond a bool tensor"},
    {Builtin::Cast, "cast", kCast, "converts the element type"},
    {Builtin::Transpose, "transpose", kTranspose,
     "permutes axes (default: swaps the last two)"},
    {Builtin::Reshape, "reshape", kReshape, "same elements, new shape"},
    {Builtin::Split, "split", kSplit,
     "parts equal slices along axis (default -1)"},
    {Builtin::Slice, "slice", kSlice,
     "x[..., start:start+size, ...] along axis (default -1)"},
    {Builtin::Concat, "concat", kConcat,
     "a and b joined along axis (default -1)"},
    {Builtin::Arange, "arange", kArange,
     "the positions offset .. offset+length-1 (i64)"},
    {Builtin::Size, "size", kSize,
     "the size of x along axis (a number or a symbolic dim)"},
};
} // namespace

const BuiltinSpec *tfc::lookupBuiltin(llvm::StringRef name) {
  for (const BuiltinSpec &spec : kBuiltins)
    if (name == spec.name)
      return &spec;
  return nullptr;
}

llvm::ArrayRef<BuiltinSpec> tfc::allBuiltins() { return kBuiltins; }

std::string tfc::signature(const BuiltinSpec &spec) {
  std::string s = std::string(spec.name) + "(";
  bool first = true;
  for (const ParamSpec &p : spec.params) {
    if (!first)
      s += ", ";
    first = false;
    s += p.name;
    if (p.optional)
      s += "=";
  }
  return s + ")";
}
