//===- Builtins.h - The built-in ops of the .tfm language -------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// One table describes every built-in: its parameters (positional order,
// kinds, which are optional) and a one-line summary. Semantic analysis uses it
// to check arity and keyword names; MLIRGen binds arguments through it; the
// language reference lists it.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FRONTEND_BUILTINS_H
#define TFC_FRONTEND_BUILTINS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace tfc {

enum class ArgKind {
  Tensor,  // a tensor, or a number that becomes a constant
  Int,     // a compile-time integer
  Float,   // a compile-time number
  Bool,    // true / false
  String,  // a string literal or str value
  DType,   // f32, f16, bf16, i64, i32, bool
  IntList, // [1, 0, 2]
  Length,  // an integer or a symbolic dim (seq, size(x, 1))
  Shape,   // a list of integers and symbolic dims
};

struct ParamSpec {
  const char *name;
  ArgKind kind;
  bool optional;
};

enum class Builtin {
  Embed, Linear, Matmul, LayerNorm, RmsNorm, Softmax, Attention, Gelu, Relu,
  Silu, Exp, Log, Sqrt, Rsqrt, Tanh, Erf, Rope, SinusoidalPositions,
  RelativePositionBias,
  CausalMask, PaddingMask, SplitHeads, MergeHeads, Maximum, Minimum, Pow, Sum,
  Max, Mean, Argmax, Where, Cast, Transpose, Reshape, Split, Slice, Concat, Arange,
  Size,
};

struct BuiltinSpec {
  Builtin id;
  const char *name;
  llvm::ArrayRef<ParamSpec> params;
  const char *summary;
};

/// The built-in called `name`, or null.
const BuiltinSpec *lookupBuiltin(llvm::StringRef name);
llvm::ArrayRef<BuiltinSpec> allBuiltins();
/// `attention(q, k, v, heads=, kv_heads=, causal=, mask=, scale=)`.
std::string signature(const BuiltinSpec &spec);

} // namespace tfc

#endif // TFC_FRONTEND_BUILTINS_H
