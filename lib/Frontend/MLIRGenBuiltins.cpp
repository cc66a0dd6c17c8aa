//===- MLIRGenBuiltins.cpp - The built-in ops, emitted as tfc ops ---------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Binds a call's arguments to the built-in's parameters (Builtins.h), checks
// their kinds and shapes, and emits the tfc ops.
//
//===----------------------------------------------------------------------===//

#include "Elaborator.h"

#include "tfc/Dialect/Tfc/IR/PositionBias.h"
#include "tfc/Dialect/Tfc/IR/TfcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseSet.h"

using namespace tfc;
using namespace tfc::detail;
using namespace tfc::ast;
namespace tfcir = mlir::tfc;

namespace {

/// Typed access to bound arguments. Each accessor reports a kind mismatch
/// once and clears `ok`.
class Args {
public:
  Args(Elaborator &el, const BuiltinSpec &spec, const CallExpr &call)
      : el(el), spec(spec), call(call), values(spec.params.size()),
        locs(spec.params.size(), call.getLoc()) {}

  bool bind() {
    size_t positional = 0;
    for (const Arg &arg : call.args) {
      size_t index = positional;
      if (arg.keyword) {
        index = spec.params.size();
        for (size_t i = 0; i < spec.params.size(); ++i)
          if (arg.keyword->name == spec.params[i].name)
            index = i;
      } else {
        ++positional;
      }
      if (index >= spec.params.size())
        return false; // reported by Sema
      values[index] = el.evalArg(*arg.value);
      locs[index] = arg.value->getLoc();
      if (values[index]->isPoison())
        ok = false;
    }
    for (size_t i = 0; i < spec.params.size(); ++i)
      if (!values[i] && !spec.params[i].optional)
        return false; // reported by Sema
    return ok;
  }

  bool has(unsigned i) const { return values[i].has_value(); }
  llvm::SMLoc locOf(unsigned i) const { return locs[i]; }
  const Val &raw(unsigned i) const { return *values[i]; }

  std::string what(unsigned i) const {
    return ("argument '" + llvm::Twine(spec.params[i].name) + "' of '" +
            spec.name + "'")
        .str();
  }

  void mismatch(unsigned i, llvm::StringRef expected) {
    if (ok)
      el.fail(locs[i], what(i) + " must be " + expected + ", got " +
                           describe(*values[i]));
    ok = false;
  }

  /// A tensor argument; numbers become constants of `like`'s element type.
  std::optional<Val> tensor(unsigned i, mlir::Type like = {}) {
    if (!has(i))
      return std::nullopt;
    std::optional<Val> t = el.asTensor(*values[i], like, locs[i], what(i));
    if (!t)
      ok = false;
    return t;
  }
  std::optional<Val> floatTensor(unsigned i, mlir::Type like = {}) {
    std::optional<Val> t = tensor(i, like);
    if (t && !mlir::isa<mlir::FloatType>(t->elementType)) {
      mismatch(i, "a float tensor");
      return std::nullopt;
    }
    return t;
  }
  int64_t getInt(unsigned i, int64_t fallback) {
    if (!has(i))
      return fallback;
    if (values[i]->kind != Val::Kind::Int) {
      mismatch(i, "an integer");
      return fallback;
    }
    return values[i]->i;
  }
  double getFloat(unsigned i, double fallback) {
    if (!has(i))
      return fallback;
    if (!values[i]->isNumber()) {
      mismatch(i, "a number");
      return fallback;
    }
    return values[i]->asDouble();
  }
  bool getBool(unsigned i, bool fallback) {
    if (!has(i))
      return fallback;
    if (values[i]->kind != Val::Kind::Bool) {
      mismatch(i, "true or false");
      return fallback;
    }
    return values[i]->b;
  }
  std::string getString(unsigned i, llvm::StringRef fallback) {
    if (!has(i))
      return fallback.str();
    if (values[i]->kind != Val::Kind::Str) {
      mismatch(i, "a string");
      return fallback.str();
    }
    return values[i]->s;
  }
  /// An axis in [-rank, rank), normalised.
  int64_t getAxis(unsigned i, int64_t fallback, int64_t rank) {
    int64_t axis = getInt(i, fallback);
    std::optional<int64_t> a = shape::normalizeAxis(axis, rank);
    if (!a) {
      if (ok)
        el.fail(locs[i], what(i) + " is " + llvm::Twine(axis) +
                             ", out of range for rank " + llvm::Twine(rank));
      ok = false;
      return 0;
    }
    return *a;
  }

  bool ok = true;

private:
  Elaborator &el;
  const BuiltinSpec &spec;
  const CallExpr &call;
  std::vector<std::optional<Val>> values;
  std::vector<llvm::SMLoc> locs;
};

} // namespace

Val Elaborator::evalArg(const Expr &e) { return eval(e); }

Val Elaborator::callBuiltin(const BuiltinSpec &spec, const CallExpr &call) {
  Args args(*this, spec, call);
  if (!args.bind())
    return Val::poison();
  llvm::SMLoc at = call.getLoc();
  mlir::Location l = loc(at);
  auto shapeError = [&](const ShapeResult &r) {
    return fail(at, "'" + llvm::Twine(spec.name) + "': " + r.error);
  };
  auto result = [&](mlir::Value v, SymShape s) {
    return Val::ofTensor(v, std::move(s));
  };
  if (!countOp(at))
    return Val::poison();

  switch (spec.id) {
  case Builtin::Embed: {
    auto table = args.floatTensor(0);
    auto ids = args.tensor(1);
    if (!args.ok)
      return Val::poison();
    if (!ids->elementType.isInteger(64) && !ids->elementType.isInteger(32))
      return fail(args.locOf(1), args.what(1) + " must be an i64 or i32 "
                                 "tensor of ids, got " + describe(*ids));
    ShapeResult r = shape::embedding(table->shape, ids->shape);
    if (!r.ok())
      return shapeError(r);
    return result(tfcir::EmbeddingOp::create(
                      builder, l, tensorType(r.shape, table->elementType),
                      table->value, ids->value),
                  r.shape);
  }
  case Builtin::Linear: {
    auto x = args.floatTensor(0);
    auto w = args.floatTensor(1);
    std::optional<Val> b;
    if (args.has(2))
      b = args.floatTensor(2, x ? x->elementType : mlir::Type());
    if (!args.ok)
      return Val::poison();
    if (x->elementType != w->elementType ||
        (b && b->elementType != x->elementType))
      return fail(at, "'linear' operands have different element types");
    ShapeResult r = shape::linear(x->shape, w->shape, b ? &b->shape : nullptr);
    if (!r.ok())
      return shapeError(r);
    return result(tfcir::LinearOp::create(
                      builder, l, tensorType(r.shape, x->elementType),
                      x->value, w->value, b ? b->value : mlir::Value(),
                      tfcir::ActivationAttr::get(&context,
                                                 tfcir::Activation::None)),
                  r.shape);
  }
  case Builtin::Matmul: {
    auto a = args.floatTensor(0);
    auto b = args.floatTensor(1);
    bool ta = args.getBool(2, false), tb = args.getBool(3, false);
    if (!args.ok)
      return Val::poison();
    if (a->elementType != b->elementType)
      return fail(at, "'matmul' operands have different element types: " +
                          describe(*a) + " and " + describe(*b));
    ShapeResult r = shape::matmul(a->shape, b->shape, ta, tb);
    if (!r.ok())
      return shapeError(r);
    return result(tfcir::MatmulOp::create(
                      builder, l, tensorType(r.shape, a->elementType),
                      a->value, b->value,
                      ta ? builder.getUnitAttr() : mlir::UnitAttr(),
                      tb ? builder.getUnitAttr() : mlir::UnitAttr()),
                  r.shape);
  }
  case Builtin::LayerNorm:
  case Builtin::RmsNorm: {
    bool isLayer = spec.id == Builtin::LayerNorm;
    auto x = args.floatTensor(0);
    mlir::Type like = x ? x->elementType : mlir::Type();
    std::optional<Val> scale, bias;
    if (args.has(1))
      scale = args.floatTensor(1, like);
    if (isLayer && args.has(2))
      bias = args.floatTensor(2, like);
    double eps = args.getFloat(isLayer ? 3 : 2, isLayer ? 1e-5 : 1e-6);
    if (!args.ok)
      return Val::poison();
    if (!(eps >= 0) || !std::isfinite(eps))
      return fail(args.locOf(isLayer ? 3 : 2),
                  "eps must be a finite non-negative number");
    for (auto [v, name] : {std::pair{&scale, "scale"}, std::pair{&bias, "bias"}}) {
      if (!*v)
        continue;
      if ((*v)->elementType != x->elementType)
        return fail(at, "'" + llvm::Twine(spec.name) + "' " + name +
                            " has element type " +
                            dtypeName((*v)->elementType) + ", input has " +
                            dtypeName(x->elementType));
      ShapeResult r = shape::featureVector(x->shape, (*v)->shape, name);
      if (!r.ok())
        return shapeError(r);
    }
    if (x->shape.empty())
      return fail(at, "'" + llvm::Twine(spec.name) +
                          "' needs a tensor of rank >= 1");
    mlir::Type type = x->value.getType();
    mlir::Value out =
        isLayer ? tfcir::LayerNormOp::create(
                      builder, l, type, x->value,
                      scale ? scale->value : mlir::Value(),
                      bias ? bias->value : mlir::Value(),
                      /*residual=*/mlir::Value(), builder.getF64FloatAttr(eps))
                      .getResult()
                : tfcir::RmsNormOp::create(builder, l, type, x->value,
                                           scale ? scale->value : mlir::Value(),
                                           /*residual=*/mlir::Value(),
                                           builder.getF64FloatAttr(eps))
                      .getResult();
    return result(out, x->shape);
  }
  case Builtin::Softmax: {
    auto x = args.floatTensor(0);
    if (!x)
      return Val::poison();
    int64_t axis = args.getAxis(1, -1, x->shape.size());
    if (!args.ok)
      return Val::poison();
    return result(tfcir::SoftmaxOp::create(builder, l, x->value.getType(),
                                           x->value,
                                           builder.getI64IntegerAttr(axis)),
                  x->shape);
  }
  case Builtin::Attention: {
    auto q = args.floatTensor(0);
    auto k = args.floatTensor(1);
    auto v = args.floatTensor(2);
    bool causal = args.getBool(5, false);
    std::optional<Val> mask;
    if (args.has(6))
      mask = args.tensor(6);
    double scale = args.getFloat(7, 0);
    if (!args.ok)
      return Val::poison();
    if (q->elementType != k->elementType || k->elementType != v->elementType)
      return fail(at, "'attention' q, k and v have different element types");
    size_t rank = q->shape.size();
    if (k->shape.size() != rank || v->shape.size() != rank ||
        (rank != 3 && rank != 4))
      return fail(at, "'attention' takes q, k, v as [batch, seq, heads·d_head] "
                      "(with heads=) or [batch, heads, seq, d_head], got " +
                          shapeStr(q->shape) + ", " + shapeStr(k->shape) +
                          ", " + shapeStr(v->shape));
    bool merged = rank == 3;
    if (merged) {
      if (!args.has(3))
        return fail(at, "'attention' on [batch, seq, features] inputs needs "
                        "heads=");
      int64_t heads = args.getInt(3, 1);
      int64_t kvHeads = args.getInt(4, heads);
      if (!args.ok)
        return Val::poison();
      if (heads <= 0 || kvHeads <= 0)
        return fail(args.locOf(heads <= 0 ? 3 : 4),
                    "heads must be positive");
      if (heads % kvHeads != 0)
        return fail(args.locOf(4), "heads " + llvm::Twine(heads) +
                                       " is not a multiple of kv_heads " +
                                       llvm::Twine(kvHeads));
      for (auto [t, h, name] : {std::tuple{&*q, heads, "q"},
                                std::tuple{&*k, kvHeads, "k"},
                                std::tuple{&*v, kvHeads, "v"}}) {
        ShapeResult r = shape::splitHeads(t->shape, h);
        if (!r.ok())
          return fail(at, "'attention' cannot split " + llvm::Twine(name) +
                              " into heads: " + r.error);
        if (!countOp(at))
          return Val::poison();
        mlir::Value split = tfcir::SplitHeadsOp::create(
            builder, l, tensorType(r.shape, t->elementType), t->value,
            builder.getI64IntegerAttr(h));
        *t = Val::ofTensor(split, r.shape);
      }
    } else {
      for (auto [i, t] : {std::pair{3u, &*q}, std::pair{4u, &*k}}) {
        if (!args.has(i))
          continue;
        int64_t h = args.getInt(i, 0);
        if (args.ok && (!t->shape[1].isStatic() || t->shape[1].size != h))
          return fail(args.locOf(i), args.what(i) + " is " + llvm::Twine(h) +
                                         " but the tensor has " +
                                         t->shape[1].str() + " heads (" +
                                         shapeStr(t->shape) + ")");
      }
    }
    // In a cached entry, a causal self-attention over the token sequence
    // reads a key/value cache; its integer padding mask [batch, seq] (the
    // new tokens') is cached the same way, so it covers every key.
    bool cachedSelf = cache && isCachedSelfAttention(*q, *k, causal);
    bool maskCached = false;
    bool integerMask = cachedSelf && mask &&
                       !mlir::isa<mlir::FloatType>(mask->elementType) &&
                       mask->shape.size() == 2 &&
                       mask->shape[1] == SymDim::named(cache->seqDim);
    // A windowed self-attention keeps a rolling cache of `window` rows
    // (not with a cached integer mask, whose columns span every position).
    int64_t rollingWindow =
        cachedSelf && !integerMask && args.has(8) ? args.getInt(8, 0) : 0;
    if (rollingWindow < 0)
      rollingWindow = 0;
    if (integerMask) {
      Val cachedMask = cacheMask(*mask, args.locOf(6));
      if (cachedMask.isPoison())
        return Val::poison();
      mask = cachedMask;
      maskCached = true;
    } else if (cachedSelf && !mask && !cache->absolutePositions) {
      // Without a mask of its own, the runtime's padding bias (left-padded
      // prompts of different lengths in one batch).
      Val bias = cachePaddingBias(*q, at, rollingWindow);
      if (bias.isPoison())
        return Val::poison();
      mask = bias;
      maskCached = true;
    }
    if (mask) {
      // A 1/0 keep-mask [batch, kv_len] (integer or bool) becomes an additive
      // bias; a float mask is taken as the bias itself.
      if (!mlir::isa<mlir::FloatType>(mask->elementType)) {
        if (mask->shape.size() != 2)
          return fail(args.locOf(6),
                      "an integer or bool attention mask must be [batch, "
                      "kv_len] with 1 = token and 0 = padding, got " +
                          describe(*mask));
        SymShape biasShape = {mask->shape[0], SymDim::of(1), SymDim::of(1),
                              mask->shape[1]};
        if (!countOp(at))
          return Val::poison();
        mlir::Value bias = tfcir::PaddingMaskOp::create(
            builder, l, tensorType(biasShape, q->elementType), mask->value);
        mask = Val::ofTensor(bias, biasShape);
      } else if (mask->elementType != q->elementType) {
        return fail(args.locOf(6), "the attention mask has element type " +
                                       dtypeName(mask->elementType) +
                                       " but q has " +
                                       dtypeName(q->elementType));
      }
    }
    if (cachedSelf && (!mask || maskCached)) {
      if (!appendToCache(*k, *v, at, rollingWindow))
        return Val::poison();
    } else if (cache && q->shape.size() == 4 &&
               q->shape[2] == SymDim::named(cache->seqDim) &&
               k->shape[2] != SymDim::named(cache->seqDim) &&
               v->shape[2] == k->shape[2] &&
               independentOfSequence(k->value) &&
               independentOfSequence(v->value)) {
      // Cross-attention: keys and values over another sequence (the
      // encoder's), the same at every step, computed once per source.
      std::string name = "cross." + std::to_string(cache->crossAttentions++);
      if (!cacheCross(*k, name + ".k", at) || !cacheCross(*v, name + ".v", at))
        return Val::poison();
    } else if (cache && q->shape.size() == 4 &&
               q->shape[2] == SymDim::named(cache->seqDim) &&
               k->shape[2] == SymDim::named(cache->seqDim) &&
               cache->unsupported.empty()) {
      // Bidirectional or masked self-attention cannot be cached: the entry
      // gets no cached form (an error only if another attention was cached).
      cache->unsupported = mask ? "an attention mask over '" + cache->seqDim +
                                      "' (at " + describeLoc(at) + ")"
                                : "non-causal attention over '" +
                                      cache->seqDim + "' (at " +
                                      describeLoc(at) + ")";
    }
    ShapeResult r = shape::attention(q->shape, k->shape, v->shape,
                                     mask ? &mask->shape : nullptr);
    if (!r.ok())
      return shapeError(r);
    if (args.has(7) && !(scale > 0 && std::isfinite(scale)))
      return fail(args.locOf(7), "scale must be a positive number");
    if (!args.has(7) && !q->shape[3].isStatic())
      return fail(at, "'attention' needs scale= when the head size " +
                          q->shape[3].str() + " is symbolic");
    if (!args.has(7) && q->shape[3].size == 0)
      return fail(at, "'attention' needs scale= when the head size is 0 "
                      "(the default is 1/sqrt(head size))");
    int64_t window = args.getInt(8, 0);
    if (!args.ok)
      return Val::poison();
    if (args.has(8) && window <= 0)
      return fail(args.locOf(8), "window must be positive, got " +
                                     llvm::Twine(window));
    if (args.has(8) && !causal)
      return fail(args.locOf(8), "a window needs causal = true (it counts "
                                 "keys back from the diagonal)");
    std::optional<Val> relative;
    if (args.has(9))
      relative = args.floatTensor(9);
    double alibi = args.getFloat(10, 0.0);
    if (!args.ok)
      return Val::poison();
    if (relative) {
      const SymShape &rs = relative->shape;
      if (relative->elementType != q->elementType)
        return fail(args.locOf(9), "relative_bias has element type " +
                                       dtypeName(relative->elementType) +
                                       " but q has " +
                                       dtypeName(q->elementType));
      if (rs.size() != 2 || !rs[1].isStatic() || rs[1].size % 2 != 1 ||
          !(rs[0] == q->shape[1]))
        return fail(args.locOf(9),
                    "relative_bias must be [heads, 2·R + 1] (a bias by "
                    "query-key distance, as relative_position_bias makes it) "
                    "with heads = " +
                        q->shape[1].str() + ", got " + describe(*relative));
    }
    if (args.has(10) && !(alibi > 0 && std::isfinite(alibi)))
      return fail(args.locOf(10), "alibi (the maximum bias, 8 for BLOOM and "
                                  "MPT) must be a positive number");
    double softcap = args.getFloat(11, 0.0);
    if (!args.ok)
      return Val::poison();
    if (args.has(11) && !(softcap > 0 && std::isfinite(softcap)))
      return fail(args.locOf(11), "softcap (scores become softcap · "
                                  "tanh(score / softcap), 50 in Gemma 2) must "
                                  "be a positive number");
    // Rows at their own positions (the <entry>_rows form): each row's keys
    // end at its own past + seq.
    mlir::Value rowPast =
        cache && cache->rows && cachedSelf ? cache->rowPast : mlir::Value();
    mlir::Value out = tfcir::AttentionOp::create(
        builder, l, tensorType(r.shape, q->elementType), q->value, k->value,
        v->value, mask ? mask->value : mlir::Value(),
        relative ? relative->value : mlir::Value(), rowPast,
        causal ? builder.getUnitAttr() : mlir::UnitAttr(),
        args.has(7) ? builder.getF64FloatAttr(scale) : mlir::FloatAttr(),
        args.has(8) ? builder.getI64IntegerAttr(window) : mlir::IntegerAttr(),
        args.has(10) ? builder.getF64FloatAttr(alibi) : mlir::FloatAttr(),
        args.has(11) ? builder.getF64FloatAttr(softcap) : mlir::FloatAttr());
    if (!merged)
      return result(out, r.shape);
    ShapeResult m = shape::mergeHeads(r.shape);
    if (!m.ok())
      return shapeError(m);
    return result(tfcir::MergeHeadsOp::create(
                      builder, l, tensorType(m.shape, q->elementType), out),
                  m.shape);
  }
  case Builtin::Gelu: {
    auto x = args.floatTensor(0);
    std::string approx = args.getString(1, "erf");
    if (!args.ok)
      return Val::poison();
    if (approx != "erf" && approx != "tanh")
      return fail(args.locOf(1), "approximate must be \"erf\" or \"tanh\", "
                                 "got \"" + approx + "\"");
    return result(tfcir::GeluOp::create(
                      builder, l, x->value.getType(), x->value,
                      tfcir::GeluApproximationAttr::get(
                          &context, approx == "tanh"
                                        ? tfcir::GeluApproximation::Tanh
                                        : tfcir::GeluApproximation::Erf)),
                  x->shape);
  }
  case Builtin::Relu:
  case Builtin::Silu:
  case Builtin::Exp:
  case Builtin::Log:
  case Builtin::Sqrt:
  case Builtin::Rsqrt:
  case Builtin::Tanh:
  case Builtin::Erf: {
    auto x = args.floatTensor(0);
    if (!args.ok)
      return Val::poison();
    mlir::Value in = x->value;
    mlir::Value out;
    switch (spec.id) {
    case Builtin::Relu: out = tfcir::ReluOp::create(builder, l, in); break;
    case Builtin::Silu: out = tfcir::SiluOp::create(builder, l, in); break;
    case Builtin::Exp: out = tfcir::ExpOp::create(builder, l, in); break;
    case Builtin::Log: out = tfcir::LogOp::create(builder, l, in); break;
    case Builtin::Sqrt: out = tfcir::SqrtOp::create(builder, l, in); break;
    case Builtin::Rsqrt: out = tfcir::RsqrtOp::create(builder, l, in); break;
    case Builtin::Tanh: out = tfcir::TanhOp::create(builder, l, in); break;
    default: out = tfcir::ErfOp::create(builder, l, in); break;
    }
    return result(out, x->shape);
  }
  case Builtin::Rope: {
    auto x = args.floatTensor(0);
    std::string mode = args.getString(1, "rotate_half");
    double base = args.getFloat(3, 10000.0);
    int64_t rotaryDim = args.getInt(4, 0);
    if (!args.ok)
      return Val::poison();
    std::optional<tfcir::RopeMode> m = tfcir::symbolizeRopeMode(mode);
    if (!m)
      return fail(args.locOf(1), "mode must be \"rotate_half\" or "
                                 "\"adjacent\", got \"" + mode + "\"");
    if (x->shape.size() < 2 || !x->shape.back().isStatic())
      return fail(at, "'rope' needs x [..., seq, d] with a numeric d, got " +
                          describe(*x));
    int64_t d = x->shape.back().size;
    if (args.has(4) && (rotaryDim <= 0 || rotaryDim > d || rotaryDim % 2))
      return fail(args.locOf(4), "rotary_dim must be even and in (0, " +
                                     llvm::Twine(d) + "], got " +
                                     llvm::Twine(rotaryDim));
    if (d % 2)
      return fail(at, "'rope' needs an even feature size, got " +
                          describe(*x));
    if (!(base > 1.0) || !std::isfinite(base))
      return fail(args.locOf(3), "base must be a finite number > 1");
    // Context extension: a multiplier of each pair's inverse frequency.
    std::string scaling = args.getString(5, "none");
    double factor = args.getFloat(6, 1.0);
    double lowFactor = args.getFloat(7, 1.0);
    double highFactor = args.getFloat(8, 4.0);
    int64_t originalContext = args.getInt(9, 8192);
    if (!args.ok)
      return Val::poison();
    mlir::DenseF64ArrayAttr freqScale;
    if (scaling != "none") {
      if (scaling != "linear" && scaling != "llama3")
        return fail(args.locOf(5), "scaling must be \"none\", \"linear\" or "
                                   "\"llama3\", got \"" + scaling + "\"");
      if (!args.has(6) || !(factor > 0.0) || !std::isfinite(factor))
        return fail(args.has(6) ? args.locOf(6) : at,
                    "scaling \"" + scaling + "\" needs factor > 0");
      if (scaling == "llama3" &&
          (!(lowFactor > 0.0) || !(highFactor > lowFactor) ||
           !std::isfinite(highFactor) || originalContext <= 0))
        return fail(at, "scaling \"llama3\" needs 0 < low_freq_factor < "
                        "high_freq_factor and original_context > 0");
      int64_t r = args.has(4) ? rotaryDim : d;
      llvm::SmallVector<double> table;
      for (int64_t i = 0; i < r / 2; ++i) {
        if (scaling == "linear") {
          table.push_back(1.0 / factor); // positions / factor
          continue;
        }
        // Llama 3 (transformers' _compute_llama3_parameters): long
        // wavelengths are slowed down by `factor`, short ones kept, and
        // the band between interpolated smoothly.
        double invFreq = std::pow(base, -2.0 * static_cast<double>(i) / r);
        double wavelen = 2.0 * M_PI / invFreq;
        double lowWavelen = originalContext / lowFactor;
        double highWavelen = originalContext / highFactor;
        double s;
        if (wavelen < highWavelen)
          s = 1.0;
        else if (wavelen > lowWavelen)
          s = 1.0 / factor;
        else {
          double smooth = (originalContext / wavelen - lowFactor) /
                          (highFactor - lowFactor);
          s = (1.0 - smooth) / factor + smooth;
        }
        table.push_back(s);
      }
      freqScale = builder.getDenseF64ArrayAttr(table);
    } else if (args.has(6) || args.has(7) || args.has(8) || args.has(9)) {
      return fail(at, "factor, low_freq_factor, high_freq_factor and "
                      "original_context need scaling = \"linear\" or "
                      "\"llama3\"");
    }
    mlir::Value offset;
    if (args.has(2) && !(offset = indexValue(args.raw(2), args.locOf(2),
                                             args.what(2))))
      return Val::poison();
    mlir::Value rowOffsets;
    if (cache && !args.has(2) &&
        x->shape[x->shape.size() - 2] == SymDim::named(cache->seqDim)) {
      offset = cache->past;
      if (cache->rows) {
        // Each row at its own position: the rope of a [batch, ..., seq, d]
        // tensor whose batch is the entry's.
        if (x->shape.size() >= 3 && x->shape[0] == cache->batchDim) {
          rowOffsets = cache->rowPast;
          offset = mlir::Value();
        } else if (cache->unsupported.empty()) {
          cache->unsupported =
              "a rope over another batch (at " + describeLoc(at) + ")";
        }
      }
    }
    return result(tfcir::RopeOp::create(
                      builder, l, x->value.getType(), x->value, offset,
                      rowOffsets, tfcir::RopeModeAttr::get(&context, *m),
                      builder.getF64FloatAttr(base),
                      args.has(4) ? builder.getI64IntegerAttr(rotaryDim)
                                  : mlir::IntegerAttr(),
                      freqScale),
                  x->shape);
  }
  case Builtin::RelativePositionBias: {
    auto table = args.floatTensor(0);
    int64_t buckets = args.getInt(1, 32);
    int64_t distance = args.getInt(2, 128);
    bool bidirectional = args.getBool(3, true);
    if (!args.ok)
      return Val::poison();
    if (table->shape.size() != 2 || !(table->shape[0] == SymDim::of(buckets)))
      return fail(args.locOf(0), "the table must be [buckets = " +
                                     llvm::Twine(buckets) +
                                     ", heads], got " + describe(*table));
    std::string why =
        mlir::tfc::relativeBucketsError(buckets, distance, bidirectional);
    if (!why.empty())
      return fail(at, "'relative_position_bias' " + why);
    SymShape s = {table->shape[1], SymDim::of(2 * distance + 1)};
    if (!countOp(at))
      return Val::poison();
    return result(tfcir::RelativePositionBiasOp::create(
                      builder, l, tensorType(s, table->elementType),
                      table->value, builder.getI64IntegerAttr(buckets),
                      builder.getI64IntegerAttr(distance),
                      bidirectional ? builder.getUnitAttr()
                                    : mlir::UnitAttr()),
                  s);
  }
  case Builtin::SinusoidalPositions: {
    int64_t features = args.getInt(1, 0);
    double base = args.getFloat(3, 10000.0);
    bool interleaved = args.getBool(4, true);
    if (!args.ok)
      return Val::poison();
    if (features <= 0 || features % 2)
      return fail(args.locOf(1), "features must be positive and even, got " +
                                     llvm::Twine(features));
    if (!(base > 1.0) || !std::isfinite(base))
      return fail(args.locOf(3), "base must be a finite number > 1");
    mlir::Value length = indexValue(args.raw(0), args.locOf(0), args.what(0));
    mlir::Value offset;
    if (!length || (args.has(2) && !(offset = indexValue(args.raw(2),
                                                         args.locOf(2),
                                                         args.what(2)))))
      return Val::poison();
    SymDim t = args.raw(0).kind == Val::Kind::Int
                   ? SymDim::of(args.raw(0).i)
                   : args.raw(0).dim;
    // In a cached entry the positions of the sequence start at `past`.
    if (cache && !args.has(2) && t == SymDim::named(cache->seqDim)) {
      offset = cache->past;
      cache->absolutePositions = true;
      if (cache->rows && cache->unsupported.empty())
        cache->unsupported = "absolute positions (at " + describeLoc(at) + ")";
    }
    SymShape s = {t, SymDim::of(features)};
    return result(tfcir::SinusoidalPositionsOp::create(
                      builder, l, tensorType(s, builder.getF32Type()), length,
                      offset, builder.getF64FloatAttr(base),
                      interleaved ? mlir::UnitAttr() : builder.getUnitAttr()),
                  s);
  }
  case Builtin::CausalMask: {
    mlir::Value tq = indexValue(args.raw(0), args.locOf(0), args.what(0));
    mlir::Value tk = indexValue(args.raw(1), args.locOf(1), args.what(1));
    if (!tq || !tk)
      return Val::poison();
    auto dimOf = [](const Val &v) {
      return v.kind == Val::Kind::Int ? SymDim::of(v.i) : v.dim;
    };
    SymShape s = {dimOf(args.raw(0)), dimOf(args.raw(1))};
    return result(tfcir::CausalMaskOp::create(
                      builder, l, tensorType(s, builder.getF32Type()), tq, tk),
                  s);
  }
  case Builtin::PaddingMask: {
    auto m = args.tensor(0);
    if (!args.ok)
      return Val::poison();
    if (m->shape.size() != 2 || m->elementType.isF16() ||
        m->elementType.isBF16() || m->elementType.isF64())
      return fail(args.locOf(0), args.what(0) + " must be a [batch, seq] "
                                 "tensor of 1/0 (i64, i32, bool or f32), got " +
                                     describe(*m));
    SymShape s = {m->shape[0], SymDim::of(1), SymDim::of(1), m->shape[1]};
    return result(tfcir::PaddingMaskOp::create(
                      builder, l, tensorType(s, builder.getF32Type()),
                      m->value),
                  s);
  }
  case Builtin::SplitHeads: {
    auto x = args.floatTensor(0);
    int64_t heads = args.getInt(1, 1);
    if (!args.ok)
      return Val::poison();
    ShapeResult r = shape::splitHeads(x->shape, heads);
    if (!r.ok())
      return shapeError(r);
    return result(tfcir::SplitHeadsOp::create(
                      builder, l, tensorType(r.shape, x->elementType),
                      x->value, builder.getI64IntegerAttr(heads)),
                  r.shape);
  }
  case Builtin::MergeHeads: {
    auto x = args.floatTensor(0);
    if (!args.ok)
      return Val::poison();
    ShapeResult r = shape::mergeHeads(x->shape);
    if (!r.ok())
      return shapeError(r);
    return result(tfcir::MergeHeadsOp::create(
                      builder, l, tensorType(r.shape, x->elementType),
                      x->value),
                  r.shape);
  }
  case Builtin::Maximum:
  case Builtin::Minimum:
  case Builtin::Pow: {
    mlir::Type like;
    for (unsigned i : {0u, 1u})
      if (args.raw(i).kind == Val::Kind::Tensor)
        like = args.raw(i).elementType;
    auto a = args.floatTensor(0, like);
    auto b = args.floatTensor(1, like);
    if (!args.ok)
      return Val::poison();
    Elementwise kind = spec.id == Builtin::Maximum   ? Elementwise::Max
                       : spec.id == Builtin::Minimum ? Elementwise::Min
                                                     : Elementwise::Pow;
    return emitElementwise(kind, *a, *b, at,
                           ("'" + llvm::Twine(spec.name) + "'").str());
  }
  case Builtin::Sum:
  case Builtin::Max:
  case Builtin::Mean:
  case Builtin::Argmax: {
    auto x = args.floatTensor(0);
    if (!x)
      return Val::poison();
    int64_t axis = args.getAxis(1, -1, x->shape.size());
    bool keepdim = args.getBool(2, false);
    if (!args.ok)
      return Val::poison();
    ShapeResult r = shape::reduce(x->shape, axis, keepdim);
    if (!r.ok())
      return shapeError(r);
    mlir::Value out;
    switch (spec.id) {
    case Builtin::Sum:
      out = tfcir::ReduceSumOp::create(builder, l, x->value, axis, keepdim);
      break;
    case Builtin::Max:
      out = tfcir::ReduceMaxOp::create(builder, l, x->value, axis, keepdim);
      break;
    case Builtin::Mean:
      out = tfcir::ReduceMeanOp::create(builder, l, x->value, axis, keepdim);
      break;
    default:
      out = tfcir::ArgmaxOp::create(builder, l, x->value, axis, keepdim);
      break;
    }
    return result(out, r.shape);
  }
  case Builtin::Where: {
    mlir::Type like;
    for (unsigned i : {1u, 2u})
      if (args.raw(i).kind == Val::Kind::Tensor)
        like = args.raw(i).elementType;
    auto c = args.tensor(0);
    auto a = args.floatTensor(1, like);
    auto b = args.floatTensor(2, like);
    if (!args.ok)
      return Val::poison();
    if (!c->elementType.isInteger(1))
      return fail(args.locOf(0), args.what(0) + " must be a bool tensor, got " +
                                     describe(*c) + "; convert a 1/0 mask "
                                     "with cast(m, bool)");
    if (a->elementType != b->elementType)
      return fail(at, "'where' branches have different element types");
    ShapeResult r1 = shape::broadcast(c->shape, a->shape);
    if (!r1.ok())
      return shapeError(r1);
    ShapeResult r = shape::broadcast(r1.shape, b->shape);
    if (!r.ok())
      return shapeError(r);
    return result(tfcir::WhereOp::create(
                      builder, l, tensorType(r.shape, a->elementType),
                      c->value, a->value, b->value),
                  r.shape);
  }
  case Builtin::Cast: {
    auto x = args.tensor(0);
    if (!args.ok)
      return Val::poison();
    const Val &d = args.raw(1);
    if (d.kind != Val::Kind::DType) {
      args.mismatch(1, "an element type (f32, f16, bf16, i64, i32, bool)");
      return Val::poison();
    }
    return result(tfcir::CastOp::create(
                      builder, l, tensorType(x->shape, d.elementType),
                      x->value),
                  x->shape);
  }
  case Builtin::Transpose: {
    auto x = args.tensor(0);
    if (!args.ok)
      return Val::poison();
    llvm::SmallVector<int64_t> perm;
    if (args.has(1)) {
      const Val &p = args.raw(1);
      bool ok = p.kind == Val::Kind::List;
      for (const Val &e : p.list)
        ok &= e.kind == Val::Kind::Int;
      if (!ok) {
        args.mismatch(1, "a list of integers such as [0, 2, 1, 3]");
        return Val::poison();
      }
      for (const Val &e : p.list)
        perm.push_back(e.i);
    } else {
      if (x->shape.size() < 2)
        return fail(at, "'transpose' needs rank >= 2 to swap the last two "
                        "axes, got " + describe(*x));
      for (size_t i = 0; i < x->shape.size(); ++i)
        perm.push_back(i);
      std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    }
    ShapeResult r = shape::transpose(x->shape, perm);
    if (!r.ok())
      return shapeError(r);
    return result(tfcir::TransposeOp::create(
                      builder, l, tensorType(r.shape, x->elementType),
                      x->value, builder.getDenseI64ArrayAttr(perm)),
                  r.shape);
  }
  case Builtin::Reshape: {
    auto x = args.tensor(0);
    if (!args.ok)
      return Val::poison();
    const Val &s = args.raw(1);
    if (s.kind != Val::Kind::List) {
      args.mismatch(1, "a list of sizes such as [batch, seq, heads, d_head]");
      return Val::poison();
    }
    SymShape to;
    llvm::SmallVector<mlir::Value> dynamic;
    for (const Val &e : s.list) {
      if (e.kind == Val::Kind::Int && e.i >= 0) {
        to.push_back(SymDim::of(e.i));
      } else if (e.kind == Val::Kind::Dim) {
        to.push_back(e.dim);
        mlir::Value v = indexValue(e, args.locOf(1), "a size");
        if (!v)
          return Val::poison();
        dynamic.push_back(v);
      } else {
        args.mismatch(1, "a list of non-negative integers and symbolic dims");
        return Val::poison();
      }
    }
    ShapeResult r = shape::reshape(x->shape, to);
    if (!r.ok())
      return shapeError(r);
    return result(tfcir::ReshapeOp::create(
                      builder, l, tensorType(r.shape, x->elementType),
                      x->value, dynamic),
                  r.shape);
  }
  case Builtin::Concat: {
    auto a = args.tensor(0);
    auto b = args.tensor(1);
    if (!a || !b)
      return Val::poison();
    int64_t axis = args.getAxis(2, -1, a->shape.size());
    if (!args.ok)
      return Val::poison();
    if (a->elementType != b->elementType)
      return fail(at, "'concat' of " + dtypeName(a->elementType) + " and " +
                          dtypeName(b->elementType));
    if (a->shape.size() != b->shape.size())
      return fail(at, "'concat' needs inputs of one rank, got " +
                          shapeStr(a->shape) + " and " + shapeStr(b->shape));
    SymShape s = a->shape;
    for (size_t i = 0; i < s.size(); ++i) {
      if (static_cast<int64_t>(i) == axis) {
        if (!a->shape[i].isStatic() || !b->shape[i].isStatic())
          return fail(at, "'concat' along axis " + llvm::Twine(axis) +
                              " needs static sizes there, got " +
                              shapeStr(a->shape) + " and " +
                              shapeStr(b->shape));
        s[i] = SymDim::of(a->shape[i].size + b->shape[i].size);
      } else if (!(a->shape[i] == b->shape[i])) {
        return fail(at, "'concat' inputs differ in axis " + llvm::Twine(i) +
                            " (not the joined one): " + shapeStr(a->shape) +
                            " and " + shapeStr(b->shape));
      }
    }
    if (!countOp(at))
      return Val::poison();
    return result(tfcir::ConcatOp::create(
                      builder, l, tensorType(s, a->elementType),
                      mlir::ValueRange{a->value, b->value},
                      builder.getI64IntegerAttr(axis)),
                  s);
  }
  case Builtin::Split:
  case Builtin::Slice: {
    auto x = args.tensor(0);
    if (!x)
      return Val::poison();
    bool isSplit = spec.id == Builtin::Split;
    int64_t axis = args.getAxis(isSplit ? 2 : 3, -1, x->shape.size());
    if (!args.ok)
      return Val::poison();
    std::vector<std::pair<int64_t, int64_t>> ranges; // start, size
    if (isSplit) {
      int64_t parts = args.getInt(1, 1);
      if (!args.ok)
        return Val::poison();
      const SymDim &d = x->shape[axis];
      if (parts <= 0)
        return fail(args.locOf(1), "parts must be positive");
      if (!d.isStatic() || d.size % parts != 0)
        return fail(at, "'split' cannot cut axis " + llvm::Twine(axis) +
                            " of " + shapeStr(x->shape) + " into " +
                            llvm::Twine(parts) + " equal parts");
      if (parts > 4096)
        return fail(args.locOf(1), "split into " + llvm::Twine(parts) +
                                       " parts is too many (at most 4096)");
      for (int64_t p = 0; p < parts; ++p)
        ranges.push_back({p * (d.size / parts), d.size / parts});
    } else {
      ranges.push_back({args.getInt(1, 0), args.getInt(2, 1)});
      if (!args.ok)
        return Val::poison();
    }
    Val list;
    list.kind = Val::Kind::List;
    list.isTuple = true;
    for (auto [start, size] : ranges) {
      if (!countOp(at))
        return Val::poison();
      ShapeResult r = shape::slice(x->shape, axis, start, size);
      if (!r.ok())
        return shapeError(r);
      list.list.push_back(result(
          tfcir::SliceOp::create(builder, l,
                                 tensorType(r.shape, x->elementType), x->value,
                                 builder.getI64IntegerAttr(axis),
                                 builder.getI64IntegerAttr(start),
                                 builder.getI64IntegerAttr(size)),
          r.shape));
    }
    return isSplit && list.list.size() != 1 ? list : list.list[0];
  }
  case Builtin::Arange: {
    mlir::Value length = indexValue(args.raw(0), args.locOf(0), args.what(0));
    mlir::Value offset;
    if (!length || (args.has(1) && !(offset = indexValue(args.raw(1),
                                                         args.locOf(1),
                                                         args.what(1)))))
      return Val::poison();
    // In a cached entry the positions of the sequence start at `past`.
    if (cache && !args.has(1) && args.raw(0).kind == Val::Kind::Dim &&
        args.raw(0).dim == SymDim::named(cache->seqDim)) {
      offset = cache->past;
      cache->absolutePositions = true;
      if (cache->rows && cache->unsupported.empty())
        cache->unsupported = "absolute positions (at " + describeLoc(at) + ")";
    }
    SymShape s = {args.raw(0).kind == Val::Kind::Int
                      ? SymDim::of(args.raw(0).i)
                      : args.raw(0).dim};
    return result(tfcir::ArangeOp::create(builder, l,
                                          tensorType(s, builder.getI64Type()),
                                          length, offset),
                  s);
  }
  case Builtin::Size: {
    auto x = args.tensor(0);
    if (!x)
      return Val::poison();
    int64_t axis = args.getAxis(1, 0, x->shape.size());
    if (!args.ok)
      return Val::poison();
    const SymDim &d = x->shape[axis];
    if (d.isStatic())
      return Val::ofInt(d.size);
    Val v;
    v.kind = Val::Kind::Dim;
    v.dim = d;
    v.value = dimValue(d);
    if (!v.value)
      v.value = mlir::tensor::DimOp::create(builder, l, x->value, axis);
    return v;
  }
  }
  return Val::poison();
}

//===----------------------------------------------------------------------===//
// Cached entries (MLIRGenOptions::kvCache)
//===----------------------------------------------------------------------===//

bool Elaborator::isCachedSelfAttention(const Val &q, const Val &k,
                                       bool causal) const {
  SymDim seq = SymDim::named(cache->seqDim);
  return causal && q.shape.size() == 4 && k.shape.size() == 4 &&
         q.shape[2] == seq && k.shape[2] == seq;
}

bool Elaborator::appendToCache(Val &k, Val &v, llvm::SMLoc at,
                               int64_t window) {
  mlir::Location l = loc(at);
  unsigned layer = cache->cachedAttentions++;
  if (cache->rows && window > 0 && cache->unsupported.empty())
    cache->unsupported = "a sliding window (at " + describeLoc(at) + ")";
  mlir::Value start = window > 0 ? windowStart(window, l) : mlir::Value();
  auto one_ = [](mlir::OpBuilder &b) -> mlir::OpFoldResult {
    return b.getIndexAttr(1);
  };
  for (auto [t, what] : {std::pair{&k, "k"}, std::pair{&v, "v"}}) {
    // [batch, kv_heads, seq, d] -> a state [batch, kv_heads, context, d]
    // (or [batch, kv_heads, window, d], a rolling buffer).
    const SymShape &s = t->shape;
    if (!s[1].isStatic() || !s[3].isStatic()) {
      fail(at, "a cached entry (--kv-cache) needs static head counts and "
               "head sizes, got " + shapeStr(s));
      return false;
    }
    SymShape stateShape = {s[0], s[1],
                           window > 0 ? SymDim::of(window)
                                      : SymDim::named("context"),
                           s[3]};
    auto elementType =
        mlir::cast<mlir::RankedTensorType>(t->value.getType()).getElementType();
    if (options.kvCacheHalf && elementType.isF32()) {
      // --kv-cache-type=f16: the new rows are rounded to f16 as they are
      // stored; attention reads the f16 cache (tfc.attention widens it).
      elementType = builder.getF16Type();
      t->value = tfcir::CastOp::create(builder, l, tensorType(s, elementType),
                                       t->value);
    }
    mlir::Value arg =
        appendEntryArgument(tensorType(stateShape, elementType), l);
    auto dim = [&](mlir::Value x, int64_t axis) -> mlir::OpFoldResult {
      auto type = mlir::cast<mlir::RankedTensorType>(x.getType());
      if (!type.isDynamicDim(axis))
        return builder.getIndexAttr(type.getDimSize(axis));
      return mlir::tensor::DimOp::create(builder, l, x, axis).getResult();
    };
    mlir::OpFoldResult zero = builder.getIndexAttr(0),
                       one = builder.getIndexAttr(1);
    mlir::OpFoldResult batch = dim(t->value, 0), heads = dim(t->value, 1),
                       width = dim(t->value, 3);
    llvm::SmallVector<mlir::OpFoldResult> strides = {one, one, one, one};
    mlir::Value seqLen = mlir::tensor::DimOp::create(builder, l, t->value, 2);
    SymShape readShape = {s[0], s[1], SymDim::named("kv_len"), s[3]};
    mlir::Value read, updated;
    if (window > 0) {
      auto idx = [&](int64_t c) {
        return mlir::arith::ConstantIndexOp::create(builder, l, c).getResult();
      };
      auto add = [&](mlir::Value a, mlir::Value b) {
        return mlir::arith::AddIOp::create(builder, l, a, b).getResult();
      };
      auto sub = [&](mlir::Value a, mlir::Value b) {
        return mlir::arith::SubIOp::create(builder, l, a, b).getResult();
      };
      auto min = [&](mlir::Value a, mlir::Value b) {
        return mlir::arith::MinUIOp::create(builder, l, a, b).getResult();
      };
      auto mod = [&](mlir::Value a) {
        return mlir::arith::RemUIOp::create(builder, l, a, idx(window))
            .getResult();
      };
      auto rows = [&](mlir::Value from, mlir::Value first, mlir::Value n) {
        auto type = mlir::cast<mlir::RankedTensorType>(from.getType());
        llvm::SmallVector<int64_t> shape(type.getShape());
        shape[2] = mlir::ShapedType::kDynamic;
        return mlir::tensor::ExtractSliceOp::create(
                   builder, l,
                   mlir::RankedTensorType::get(shape, type.getElementType()),
                   from,
                   llvm::ArrayRef<mlir::OpFoldResult>{zero, zero, first, zero},
                   llvm::ArrayRef<mlir::OpFoldResult>{batch, heads, n, width},
                   strides)
            .getResult();
      };
      auto put = [&](mlir::Value part, mlir::Value into, mlir::Value first,
                     mlir::Value n) {
        return mlir::tensor::InsertSliceOp::create(
                   builder, l, part, into,
                   llvm::ArrayRef<mlir::OpFoldResult>{zero, zero, first, zero},
                   llvm::ArrayRef<mlir::OpFoldResult>{batch, heads, n, width},
                   strides)
            .getResult();
      };
      // Keys of positions [start, past) from the ring (two runs: up to its
      // end, then from its start), then the new ones: read before the new
      // rows overwrite the oldest.
      mlir::Value old = sub(cache->past, start);
      mlir::Value slot = mod(start);
      mlir::Value n0 = min(old, sub(idx(window), slot));
      mlir::Value n1 = sub(old, n0);
      mlir::Value total = add(old, seqLen);
      auto readType = mlir::cast<mlir::RankedTensorType>(
          tensorType(readShape, elementType));
      llvm::SmallVector<mlir::Value> dynamic;
      for (int64_t a = 0; a < 4; ++a)
        if (readType.isDynamicDim(a))
          dynamic.push_back(
              a == 2 ? total
                     : mlir::tensor::DimOp::create(builder, l, t->value, a)
                           .getResult());
      read = mlir::tensor::EmptyOp::create(builder, l, readType, dynamic);
      read = put(rows(arg, slot, n0), read, idx(0), n0);
      read = put(rows(arg, idx(0), n1), read, n0, n1);
      read = put(t->value, read, old, seqLen);
      // The last min(seq, window) new rows into the ring at position mod
      // window: up to its end, then from its start.
      mlir::Value m = min(seqLen, idx(window));
      mlir::Value skip = sub(seqLen, m);
      mlir::Value to = mod(add(cache->past, skip));
      mlir::Value w0 = min(m, sub(idx(window), to));
      mlir::Value w1 = sub(m, w0);
      updated = put(rows(t->value, skip, w0), arg, to, w0);
      updated = put(rows(t->value, add(skip, w0), w1), updated, idx(0), w1);
    } else if (cache->rows && cache->unsupported.empty()) {
      // Each row's new keys at its own [past_b, past_b + seq): a loop over
      // the batch, inserting in place into the state. Attention reads the
      // whole cache, each row bounded by its own past (row_past).
      mlir::Value fresh = t->value;
      mlir::Value batchSize = mlir::tensor::DimOp::create(builder, l, fresh, 0);
      auto loop = mlir::scf::ForOp::create(
          builder, l, mlir::arith::ConstantIndexOp::create(builder, l, 0),
          batchSize, mlir::arith::ConstantIndexOp::create(builder, l, 1),
          mlir::ValueRange{arg},
          [&](mlir::OpBuilder &b, mlir::Location bl, mlir::Value row,
              mlir::ValueRange acc) {
            mlir::Value past = mlir::arith::IndexCastOp::create(
                b, bl, b.getIndexType(),
                mlir::tensor::ExtractOp::create(b, bl, cache->rowPast,
                                                mlir::ValueRange{row}));
            auto type = mlir::cast<mlir::RankedTensorType>(fresh.getType());
            llvm::SmallVector<int64_t> shape(type.getShape());
            shape[0] = 1;
            mlir::Value one = mlir::tensor::ExtractSliceOp::create(
                b, bl,
                mlir::RankedTensorType::get(shape, type.getElementType()),
                fresh,
                llvm::ArrayRef<mlir::OpFoldResult>{row, zero, zero, zero},
                llvm::ArrayRef<mlir::OpFoldResult>{one_(b), heads, seqLen,
                                                   width},
                strides);
            mlir::Value into = mlir::tensor::InsertSliceOp::create(
                b, bl, one, acc[0],
                llvm::ArrayRef<mlir::OpFoldResult>{row, zero, past, zero},
                llvm::ArrayRef<mlir::OpFoldResult>{one_(b), heads, seqLen,
                                                   width},
                strides);
            mlir::scf::YieldOp::create(b, bl, into);
          });
      updated = loop.getResult(0);
      read = updated;
      readShape = stateShape;
    } else {
      // The new rows at [past, past + seq).
      updated = mlir::tensor::InsertSliceOp::create(
          builder, l, t->value, arg,
          llvm::ArrayRef<mlir::OpFoldResult>{zero, zero, cache->past, zero},
          llvm::ArrayRef<mlir::OpFoldResult>{batch, heads, seqLen, width},
          strides);
      // Attention reads rows [0, past + seq).
      mlir::Value total =
          mlir::arith::AddIOp::create(builder, l, cache->past, seqLen);
      read = mlir::tensor::ExtractSliceOp::create(
          builder, l, tensorType(readShape, elementType), updated,
          llvm::ArrayRef<mlir::OpFoldResult>{zero, zero, zero, zero},
          llvm::ArrayRef<mlir::OpFoldResult>{batch, heads, total, width},
          strides);
    }
    cache->states.push_back({arg, updated,
                             "cache." + std::to_string(layer) + "." + what,
                             stateShape, window});
    *t = Val::ofTensor(read, readShape);
  }
  return true;
}

mlir::Value Elaborator::windowStart(int64_t window, mlir::Location l) {
  auto found = cache->windowStarts.find(window);
  if (found != cache->windowStarts.end())
    return found->second;
  // Built in the entry block (before its first use in any attention).
  mlir::OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointAfterValue(cache->past);
  mlir::Value keep = mlir::arith::MinUIOp::create(
      builder, l, cache->past,
      mlir::arith::ConstantIndexOp::create(builder, l, window - 1));
  mlir::Value start =
      mlir::arith::SubIOp::create(builder, l, cache->past, keep);
  cache->windowStarts[window] = start;
  return start;
}

mlir::Value Elaborator::appendEntryArgument(mlir::Type type,
                                            mlir::Location l) {
  unsigned index = currentEntry.getNumArguments();
  (void)currentEntry.insertArgument(index, type, {}, l);
  return currentEntry.getArgument(index);
}

mlir::Value Elaborator::readCachedColumns(mlir::Value state,
                                          const SymShape &readShape,
                                          mlir::Value batch,
                                          mlir::Value seqLen,
                                          mlir::Location l,
                                          mlir::Value start) {
  if (cache->rows)
    return state; // every column: each row's attention is bounded by its past
  mlir::OpFoldResult zero = builder.getIndexAttr(0),
                     one = builder.getIndexAttr(1);
  mlir::Value total =
      mlir::arith::AddIOp::create(builder, l, cache->past, seqLen);
  mlir::OpFoldResult first = zero;
  if (start) {
    total = mlir::arith::SubIOp::create(builder, l, total, start);
    first = start;
  }
  auto elementType =
      mlir::cast<mlir::RankedTensorType>(state.getType()).getElementType();
  return mlir::tensor::ExtractSliceOp::create(
      builder, l, tensorType(readShape, elementType), state,
      llvm::ArrayRef<mlir::OpFoldResult>{zero, first},
      llvm::ArrayRef<mlir::OpFoldResult>{batch, total},
      llvm::ArrayRef<mlir::OpFoldResult>{one, one});
}

Val Elaborator::cacheMask(const Val &mask, llvm::SMLoc at) {
  auto found = cache->replaced.find(mask.value);
  if (found != cache->replaced.end())
    return found->second;
  if (cache->rows && cache->unsupported.empty())
    cache->unsupported = "a cached attention mask (at " + describeLoc(at) + ")";
  mlir::Location l = loc(at);
  SymShape stateShape = {mask.shape[0], SymDim::named("context")};
  mlir::Value arg =
      appendEntryArgument(tensorType(stateShape, mask.elementType), l);
  mlir::OpFoldResult zero = builder.getIndexAttr(0),
                     one = builder.getIndexAttr(1);
  mlir::Value batch = mlir::tensor::DimOp::create(builder, l, mask.value, 0);
  mlir::Value seqLen = mlir::tensor::DimOp::create(builder, l, mask.value, 1);
  mlir::Value updated = mlir::tensor::InsertSliceOp::create(
      builder, l, mask.value, arg,
      llvm::ArrayRef<mlir::OpFoldResult>{zero, cache->past},
      llvm::ArrayRef<mlir::OpFoldResult>{batch, seqLen},
      llvm::ArrayRef<mlir::OpFoldResult>{one, one});
  SymShape readShape = {mask.shape[0], SymDim::named("kv_len")};
  mlir::Value read = readCachedColumns(updated, readShape, batch, seqLen, l);
  unsigned masks = 0;
  for (const CacheMode::State &s : cache->states)
    if (llvm::StringRef(s.name).starts_with("cache.mask"))
      ++masks;
  cache->states.push_back(
      {arg, updated,
       masks ? "cache.mask." + std::to_string(masks) : "cache.mask",
       stateShape});
  Val result = Val::ofTensor(read, readShape);
  cache->replaced[mask.value] = result;
  return result;
}

Val Elaborator::cachePaddingBias(const Val &q, llvm::SMLoc at,
                                  int64_t window) {
  // The rows form reads every column (a window has no rows form: it keeps
  // the cached form's reads, and the entry is dropped with a warning; so
  // are the layers after a construct the rows form cannot express).
  bool allColumns = cache->rows && window == 0 && cache->unsupported.empty();
  auto found = cache->paddingBiases.find({window, allColumns});
  if (found != cache->paddingBiases.end())
    return found->second;
  mlir::Location l = loc(at);
  SymShape stateShape = {q.shape[0], SymDim::named("context")};
  if (!cache->paddingBiasArg) {
    cache->paddingBiasArg =
        appendEntryArgument(tensorType(stateShape, q.elementType), l);
    cache->readOnlyStates.push_back(
        {cache->paddingBiasArg, "cache.bias", stateShape});
  }
  mlir::Value arg = cache->paddingBiasArg;
  // Made once, for every layer: in the entry, before the block call that
  // first needs it (from the state's batch and the tokens' length, not from
  // this layer's q), so that no layer computes what the others read.
  mlir::OpBuilder::InsertionGuard guard(builder);
  mlir::Value seqLen = dimValue(SymDim::named(cache->seqDim));
  if (outermostBlock && seqLen)
    builder.setInsertionPoint(outermostBlock);
  else
    seqLen = mlir::tensor::DimOp::create(builder, l, q.value, 2);
  mlir::OpFoldResult one = builder.getIndexAttr(1);
  mlir::Value batch = mlir::tensor::DimOp::create(builder, l, arg, 0);
  SymShape readShape = {q.shape[0],
                        SymDim::named(allColumns ? "context" : "kv_len")};
  mlir::Value read = readCachedColumns(
      arg, readShape, batch, seqLen, l,
      window > 0 ? windowStart(window, l) : mlir::Value());
  mlir::Value total = mlir::tensor::DimOp::create(builder, l, read, 1);
  SymShape biasShape = {q.shape[0], SymDim::of(1), SymDim::of(1), readShape[1]};
  mlir::Value bias = mlir::tensor::ExpandShapeOp::create(
      builder, l, tensorType(biasShape, q.elementType), read,
      llvm::ArrayRef<mlir::ReassociationIndices>{{0, 1, 2}, {3}},
      llvm::ArrayRef<mlir::OpFoldResult>{batch, one, one, total});
  Val result = Val::ofTensor(bias, biasShape);
  cache->paddingBiases[{window, allColumns}] = result;
  return result;
}

bool Elaborator::independentOfSequence(mlir::Value v) {
  // Walk the values v is computed from, up to the entry's arguments.
  llvm::SmallVector<mlir::Value> work = {v};
  llvm::DenseSet<mlir::Value> seen;
  while (!work.empty()) {
    mlir::Value x = work.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    if (auto arg = mlir::dyn_cast<mlir::BlockArgument>(x)) {
      if (arg.getOwner() != cache->block)
        return false; // inside a region: not a plain dataflow chain
      if (arg == cache->pastArg || arg.getArgNumber() >= cache->numParams)
        return false; // `past` or a state
      auto dims = currentEntry.getArgAttrOfType<mlir::ArrayAttr>(
          arg.getArgNumber(), "tfc.dims");
      if (!dims)
        return false;
      for (mlir::Attribute d : dims)
        if (auto name = mlir::dyn_cast<mlir::StringAttr>(d))
          if (name.getValue() == cache->seqDim)
            return false; // the tokens, or anything along them
      continue;
    }
    mlir::Operation *op = x.getDefiningOp();
    if (op->getNumRegions() != 0)
      return false;
    if (std::optional<std::string> name = argDimName(x)) {
      if (*name == cache->seqDim)
        return false;
      continue; // the size of another dim: the cross entry has it too
    }
    for (mlir::Value operand : op->getOperands())
      work.push_back(operand);
  }
  return true;
}

bool Elaborator::cacheCross(Val &t, const std::string &name, llvm::SMLoc at) {
  if (cache->rows && cache->unsupported.empty())
    cache->unsupported = "cross-attention (at " + describeLoc(at) + ")";
  auto found = cache->replaced.find(t.value);
  if (found != cache->replaced.end()) {
    t = found->second;
    return true;
  }
  const SymShape &s = t.shape;
  if (!s[1].isStatic() || !s[3].isStatic()) {
    fail(at, "a cached entry (--kv-cache) needs static head counts and "
             "head sizes, got " + shapeStr(s));
    return false;
  }
  mlir::Value arg = appendEntryArgument(t.value.getType(), loc(at));
  cache->cross.push_back({arg, t.value, name, s});
  Val state = Val::ofTensor(arg, s);
  cache->replaced[t.value] = state;
  t = state;
  return true;
}

std::optional<std::string> Elaborator::argDimName(mlir::Value v) {
  auto dim = v.getDefiningOp<mlir::tensor::DimOp>();
  if (!dim)
    return std::nullopt;
  auto arg = mlir::dyn_cast<mlir::BlockArgument>(dim.getSource());
  std::optional<int64_t> axis = dim.getConstantIndex();
  if (!arg || !axis || arg.getOwner() != cache->block)
    return std::nullopt;
  auto dims = currentEntry.getArgAttrOfType<mlir::ArrayAttr>(
      arg.getArgNumber(), "tfc.dims");
  if (!dims || *axis < 0 || *axis >= static_cast<int64_t>(dims.size()))
    return std::nullopt;
  if (auto name = mlir::dyn_cast<mlir::StringAttr>(dims[*axis]))
    return name.getValue().str();
  return std::nullopt;
}
