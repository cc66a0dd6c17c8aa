//===- MLIRGen.cpp - From the .tfm syntax tree to the tfc dialect ---------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Evaluation of hyper-parameters, statements, expressions and block calls.
// The built-in ops are in MLIRGenBuiltins.cpp.
//
//===----------------------------------------------------------------------===//

#include "Elaborator.h"

#include "tfc/Dialect/Tfc/IR/TfcOps.h"
#include "tfc/Frontend/Sema.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace tfc;
using namespace tfc::detail;
using namespace tfc::ast;

/// Interpolated strings longer than this are an error (a loop doubling a
/// string would otherwise exhaust memory).
static constexpr size_t kMaxStringLength = 1 << 16;

std::string tfc::detail::dtypeName(mlir::Type t) {
  llvm::StringRef name = mlir::tfc::elementTypeName(t);
  return name.empty() ? "?" : name.str();
}

std::string tfc::detail::describe(const Val &v) {
  switch (v.kind) {
  case Val::Kind::Poison: return "an invalid value";
  case Val::Kind::Int: return "the integer " + std::to_string(v.i);
  case Val::Kind::Float: {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "the number " << llvm::format("%g", v.f);
    return s;
  }
  case Val::Kind::Bool: return v.b ? "true" : "false";
  case Val::Kind::Str: return "the string \"" + v.s + "\"";
  case Val::Kind::DType: return "the type " + dtypeName(v.elementType);
  case Val::Kind::Dim: return "the symbolic dim " + v.dim.name;
  case Val::Kind::Tensor:
    return "a tensor " + dtypeName(v.elementType) + shapeStr(v.shape);
  case Val::Kind::List:
    return "a list of " + std::to_string(v.list.size()) + " values";
  }
  return "a value";
}

void tfc::loadFrontendDialects(mlir::MLIRContext &context) {
  context.loadDialect<mlir::tfc::TfcDialect, mlir::func::FuncDialect,
                      mlir::arith::ArithDialect, mlir::scf::SCFDialect,
                      mlir::tensor::TensorDialect>();
}

Elaborator::Elaborator(const Module &module, mlir::MLIRContext &context,
                       DiagnosticEngine &diags, const MLIRGenOptions &options)
    : context(context), builder(&context), diags(diags), module(module),
      options(options) {
  llvm::SourceMgr &sm = diags.getSourceMgr();
  filename = sm.getMemoryBuffer(sm.getMainFileID())->getBufferIdentifier().str();
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

Val Elaborator::fail(llvm::SMLoc l, const llvm::Twine &message) {
  diags.error(l, message);
  return Val::poison();
}

std::string Elaborator::describeLoc(llvm::SMLoc l) {
  auto [line, col] = diags.getSourceMgr().getLineAndColumn(l);
  return std::to_string(line) + ":" + std::to_string(col);
}

mlir::Location Elaborator::loc(llvm::SMLoc l) {
  auto [line, col] = diags.getSourceMgr().getLineAndColumn(l);
  mlir::Location fileLoc = mlir::FileLineColLoc::get(&context, filename, line, col);
  if (callers.empty())
    return fileLoc;
  return mlir::CallSiteLoc::get(fileLoc, callers.back());
}

mlir::RankedTensorType Elaborator::tensorType(llvm::ArrayRef<SymDim> shape,
                                              mlir::Type elementType) {
  llvm::SmallVector<int64_t> sizes;
  for (const SymDim &d : shape)
    sizes.push_back(d.isStatic() ? d.size : mlir::ShapedType::kDynamic);
  return mlir::RankedTensorType::get(sizes, elementType);
}

bool Elaborator::countOp(llvm::SMLoc l) {
  if (tooLarge)
    return false;
  if (++numOps > options.maxOps) {
    tooLarge = true;
    diags.error(l, "the model unrolls to more than " +
                       llvm::Twine(options.maxOps) +
                       " operations; reduce the number of layers or loop "
                       "iterations");
    return false;
  }
  return true;
}

mlir::Value Elaborator::scalarConstant(double v, mlir::Type elementType,
                                       llvm::SMLoc l) {
  auto type = mlir::RankedTensorType::get({}, elementType);
  mlir::TypedAttr attr;
  if (auto ft = mlir::dyn_cast<mlir::FloatType>(elementType))
    attr = mlir::DenseElementsAttr::get(type, builder.getFloatAttr(ft, v));
  else
    attr = mlir::DenseElementsAttr::get(
        type, builder.getIntegerAttr(elementType, static_cast<int64_t>(v)));
  return mlir::arith::ConstantOp::create(builder, loc(l), attr);
}

mlir::Value Elaborator::dimValue(const SymDim &d) {
  return dimValues.lookup(d.name);
}

mlir::Value Elaborator::indexValue(const Val &v, llvm::SMLoc l,
                                   llvm::StringRef what) {
  if (v.isPoison())
    return nullptr;
  if (v.kind == Val::Kind::Int) {
    if (v.i < 0) {
      fail(l, what + " must not be negative, got " + llvm::Twine(v.i));
      return nullptr;
    }
    return mlir::arith::ConstantIndexOp::create(builder, loc(l), v.i);
  }
  if (v.kind == Val::Kind::Dim) {
    if (v.value)
      return v.value;
    if (mlir::Value known = dimValue(v.dim))
      return known;
    fail(l, "the size '" + v.dim.name + "' is not known here: no input of "
            "entry '" + currentEntry.getSymName() + "' has a dim named '" +
            v.dim.name + "'");
    return nullptr;
  }
  fail(l, what + " must be an integer or a symbolic dim, got " + describe(v));
  return nullptr;
}

std::optional<Val> Elaborator::asTensor(const Val &v, mlir::Type like,
                                        llvm::SMLoc l, llvm::StringRef what) {
  if (v.isPoison())
    return std::nullopt;
  if (v.kind == Val::Kind::Tensor)
    return v;
  if (v.isNumber()) {
    // Numbers become float constants; next to an integer tensor they stay
    // f32 and the element-type check of the op reports the mismatch.
    mlir::Type type =
        like && mlir::isa<mlir::FloatType>(like) ? like : builder.getF32Type();
    if (!countOp(l))
      return std::nullopt;
    return Val::ofTensor(scalarConstant(v.asDouble(), type, l), {});
  }
  fail(l, what + " must be a tensor, got " + describe(v));
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Hyper-parameters
//===----------------------------------------------------------------------===//

std::optional<Val> Elaborator::parseDefine(llvm::StringRef name,
                                           llvm::StringRef text,
                                           const Val &original) {
  std::string where = ("-D " + name + "=" + text).str();
  text = text.trim();
  switch (original.kind) {
  case Val::Kind::Int: {
    int64_t v;
    if (text.getAsInteger(10, v)) {
      diags.error(where + ": '" + name + "' is an integer, but '" + text +
                  "' is not one");
      return std::nullopt;
    }
    return Val::ofInt(v);
  }
  case Val::Kind::Float: {
    double v;
    if (text.getAsDouble(v) || !std::isfinite(v)) {
      diags.error(where + ": '" + name + "' is a number, but '" + text +
                  "' is not one");
      return std::nullopt;
    }
    return Val::ofFloat(v);
  }
  case Val::Kind::Bool:
    if (text == "true" || text == "1")
      return Val::ofBool(true);
    if (text == "false" || text == "0")
      return Val::ofBool(false);
    diags.error(where + ": '" + name + "' is a bool; expected true or false");
    return std::nullopt;
  case Val::Kind::Str:
    return Val::ofStr(text.str());
  default:
    return std::nullopt;
  }
}

bool Elaborator::evaluateConsts() {
  unsigned before = diags.getNumErrors();
  llvm::StringMap<std::string> defines;
  for (const auto &define : options.defines) {
    const std::string &name = define.first, &value = define.second;
    bool known = llvm::any_of(module.consts, [&](const ConstDecl &c) {
      return c.name.name == name;
    });
    if (!known) {
      std::vector<std::string> names;
      for (const ConstDecl &c : module.consts)
        names.push_back(c.name.name);
      diags.error("-D " + name + "=" + value + ": unknown hyper-parameter '" +
                  name + "'" + DiagnosticEngine::suggest(name, names));
      continue;
    }
    defines[name] = value;
  }
  frames.emplace_back(); // constants see only constants
  for (const ConstDecl &c : module.consts) {
    Val v = eval(*c.value);
    auto it = defines.find(c.name.name);
    if (it != defines.end() && !v.isPoison()) {
      if (std::optional<Val> o = parseDefine(c.name.name, it->second, v))
        v = *o;
      else
        v = Val::poison();
    }
    if (!v.isPoison() && v.kind != Val::Kind::Int &&
        v.kind != Val::Kind::Float && v.kind != Val::Kind::Bool &&
        v.kind != Val::Kind::Str) {
      fail(c.value->getLoc(), "constant '" + c.name.name +
                                  "' must be a number, bool or string, got " +
                                  describe(v));
      v = Val::poison();
    }
    consts[c.name.name] = v;
  }
  for (const auto &a : module.asserts)
    execStmt(*a);
  frames.pop_back();
  for (const DimDecl &d : module.dims) {
    dims[d.name.name] = &d;
    if (!d.bound)
      continue;
    frames.emplace_back();
    Val b = eval(*d.bound);
    frames.pop_back();
    if (!b.isPoison() && (b.kind != Val::Kind::Int || b.i <= 0))
      fail(d.bound->getLoc(), "the bound of dim '" + d.name.name +
                                  "' must be a positive integer, got " +
                                  describe(b));
  }
  return diags.getNumErrors() == before;
}

//===----------------------------------------------------------------------===//
// Types of parameters and weights
//===----------------------------------------------------------------------===//

mlir::Type Elaborator::evalDType(const TypeExpr &type) {
  llvm::StringRef name = type.dtype.name;
  if (name.empty())
    return builder.getF32Type();
  if (mlir::Type t = mlir::tfc::elementTypeOf(&context, name))
    return t;
  std::vector<std::string> names;
  for (llvm::StringRef n : mlir::tfc::elementTypeNames())
    names.push_back(n.str());
  fail(type.dtype.loc, "unknown element type '" + name + "'" +
                           DiagnosticEngine::suggest(name, names) +
                           " (expected one of " + llvm::join(names, ", ") +
                           ")");
  return nullptr;
}

std::optional<SymShape> Elaborator::evalShape(const TypeExpr &type) {
  SymShape shape;
  bool ok = true;
  for (const ExprPtr &d : type.dims) {
    Val v = eval(*d);
    if (v.kind == Val::Kind::Int && v.i >= 0) {
      shape.push_back(SymDim::of(v.i));
    } else if (v.kind == Val::Kind::Dim) {
      shape.push_back(v.dim);
    } else {
      if (!v.isPoison())
        fail(d->getLoc(), "a dim must be a non-negative integer or a "
                          "symbolic dim declared with 'dim', got " +
                              describe(v));
      ok = false;
    }
  }
  if (!ok)
    return std::nullopt;
  int64_t elements = 1;
  for (const SymDim &d : shape)
    if (d.isStatic() && llvm::MulOverflow(elements, d.size, elements)) {
      fail(type.loc, "the shape " + shapeStr(shape) + " has too many elements");
      return std::nullopt;
    }
  return shape;
}

bool Elaborator::checkParam(const Param &param, const Val &v,
                            llvm::SMLoc argLoc, llvm::StringRef blockName) {
  if (v.isPoison())
    return false;
  const TypeExpr &type = param.type;
  std::string what = ("argument '" + param.name.name + "' of block '" +
                      blockName + "'")
                         .str();
  if (!type.isTensor()) {
    llvm::StringRef kind = type.scalar;
    bool ok = (kind == "int" && v.kind == Val::Kind::Int) ||
              (kind == "float" && v.isNumber()) ||
              (kind == "bool" && v.kind == Val::Kind::Bool) ||
              (kind == "str" && v.kind == Val::Kind::Str);
    if (kind != "int" && kind != "float" && kind != "bool" && kind != "str") {
      fail(type.loc, "unknown type '" + kind +
                         "'; expected int, float, bool, str or a tensor type "
                         "such as f32[batch, seq, d_model]");
      return false;
    }
    if (!ok) {
      fail(argLoc, what + " must be " + (kind == "int" ? "an " : "a ") + kind +
                       ", got " + describe(v));
      return false;
    }
    return true;
  }
  if (v.kind != Val::Kind::Tensor) {
    fail(argLoc, what + " must be a tensor, got " + describe(v));
    return false;
  }
  if (type.anyTensor)
    return true;
  mlir::Type dtype = evalDType(type);
  std::optional<SymShape> shape = evalShape(type);
  if (!dtype || !shape)
    return false;
  if (!type.dtype.name.empty() && dtype != v.elementType) {
    fail(argLoc, what + " must be " + dtypeName(dtype) + shapeStr(*shape) +
                     ", got " + describe(v));
    return false;
  }
  if (*shape != v.shape) {
    fail(argLoc, what + " must have shape " + shapeStr(*shape) + ", got " +
                     shapeStr(v.shape));
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Weights
//===----------------------------------------------------------------------===//

std::optional<std::string> Elaborator::interpolate(const StringExpr &key) {
  std::vector<StringPiece> pieces;
  if (auto error = splitTemplate(key.value, pieces)) {
    fail(locInString(key, error->first), error->second);
    return std::nullopt;
  }
  std::string out;
  for (const StringPiece &piece : pieces) {
    if (!piece.isName) {
      out += piece.text;
    } else {
      llvm::StringRef name = piece.text;
      const Val *v = nullptr;
      if (!frames.empty()) {
        auto it = frames.back().env.find(name);
        if (it != frames.back().env.end())
          v = &it->second;
      }
      if (!v) {
        auto it = consts.find(name);
        if (it != consts.end())
          v = &it->second;
      }
      if (!v) {
        // Sema checked the names; this one is unassigned on this path.
        fail(locInString(key, piece.offset),
             "'" + name + "' has no value here (it is only assigned on "
                          "another path)");
        return std::nullopt;
      }
      if (v->kind == Val::Kind::Int) {
        out += std::to_string(v->i);
      } else if (v->kind == Val::Kind::Str) {
        out += v->s;
      } else {
        if (!v->isPoison())
          fail(locInString(key, piece.offset),
               "'{" + name + "}' in a string must be an integer or a "
                             "string, got " + describe(*v));
        return std::nullopt;
      }
    }
    if (out.size() > kMaxStringLength) {
      fail(key.getLoc(), "string is longer than " +
                             llvm::Twine(kMaxStringLength) + " characters");
      return std::nullopt;
    }
  }
  return out;
}

Val Elaborator::weight(const WeightStmt &w) {
  std::optional<std::string> key =
      interpolate(llvm::cast<StringExpr>(*w.key));
  if (key && key->empty())
    return fail(w.key->getLoc(), "weight name must not be empty");
  // A block-quantised weight is f32 to the model (its dequantised values);
  // the format is an attribute the backends read.
  std::string quant;
  mlir::Type dtype;
  if (isQuantFormatName(w.type.dtype.name)) {
    quant = w.type.dtype.name;
    dtype = builder.getF32Type();
  } else {
    dtype = evalDType(w.type);
  }
  std::optional<SymShape> shape = evalShape(w.type);
  if (!key || !dtype || !shape)
    return Val::poison();
  for (const SymDim &d : *shape)
    if (!d.isStatic())
      return fail(w.type.loc, "weight '" + w.name.name +
                                  "' must have a fixed shape, but dim '" +
                                  d.name + "' is symbolic");
  mlir::RankedTensorType type = tensorType(*shape, dtype);
  auto [it, inserted] = weightTypes.try_emplace(*key, type, w.getLoc());
  if (!inserted && it->second.first != type) {
    Val r = fail(w.type.loc, "weight \"" + *key + "\" is declared here as " +
                                 dtypeName(dtype) + shapeStr(*shape) +
                                 " but elsewhere with a different type");
    diags.note(it->second.second, "the other declaration");
    return r;
  }
  auto [q, newQuant] = weightQuants.try_emplace(*key, quant);
  if (!newQuant && q->second != quant) {
    Val r = fail(w.type.loc,
                 "weight \"" + *key + "\" is declared here as " +
                     (quant.empty() ? dtypeName(dtype) : quant) +
                     shapeStr(*shape) + " but elsewhere as " +
                     (q->second.empty() ? dtypeName(dtype) : q->second) +
                     shapeStr(*shape));
    diags.note(it->second.second, "the other declaration");
    return r;
  }
  mlir::Value &cached = weightValues[*key];
  if (!cached) {
    if (!countOp(w.getLoc()))
      return Val::poison();
    // Weights are materialised at the top of the entry so that every use,
    // in any block instance, sees the same value,
    // in the order they are first used.
    mlir::OpBuilder::InsertionGuard guard(builder);
    if (lastWeight)
      builder.setInsertionPointAfter(lastWeight);
    else
      builder.setInsertionPointToStart(&currentEntry.front());
    auto op = mlir::tfc::WeightOp::create(
        builder, loc(w.getLoc()), type, builder.getStringAttr(*key),
        quant.empty() ? nullptr : builder.getStringAttr(quant));
    lastWeight = op;
    cached = op;
  }
  return Val::ofTensor(cached, *shape);
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

void Elaborator::assign(const Ident &target, Val v) {
  frames.back().env[target.name] = std::move(v);
}

void Elaborator::execBody(const Body &body) {
  for (const StmtPtr &s : body) {
    if (frames.back().returned || tooLarge)
      return;
    execStmt(*s);
  }
}

void Elaborator::execStmt(const Stmt &stmt) {
  // Statements count against the budget too: a loop of scalar statements or
  // blocks that fan out must not run for ever.
  if (!countOp(stmt.getLoc()))
    return;
  if (auto *a = llvm::dyn_cast<AssignStmt>(&stmt)) {
    Val v = eval(*a->value);
    if (a->targets.size() == 1) {
      if (v.kind == Val::Kind::List && v.isTuple) {
        fail(a->value->getLoc(),
             "this yields " + llvm::Twine(v.list.size()) +
                 " values; assign them to as many names (a, b = ...)");
        v = Val::poison();
      }
      assign(a->targets[0], std::move(v));
      return;
    }
    if (!v.isPoison() && (v.kind != Val::Kind::List ||
                          v.list.size() != a->targets.size())) {
      fail(a->value->getLoc(),
           "cannot assign " +
               (v.kind == Val::Kind::List
                    ? std::to_string(v.list.size()) + " values"
                    : describe(v)) +
               " to " + std::to_string(a->targets.size()) + " names");
      v = Val::poison();
    }
    for (size_t i = 0; i < a->targets.size(); ++i)
      assign(a->targets[i], v.isPoison() ? Val::poison() : v.list[i]);
    return;
  }
  if (auto *w = llvm::dyn_cast<WeightStmt>(&stmt)) {
    assign(w->name, weight(*w));
    return;
  }
  if (auto *f = llvm::dyn_cast<ForStmt>(&stmt)) {
    Val lo = eval(*f->lo), hi = eval(*f->hi);
    if (lo.isPoison() || hi.isPoison())
      return;
    if (lo.kind != Val::Kind::Int || hi.kind != Val::Kind::Int) {
      fail(f->lo->getLoc(), "loop bounds must be integers, got " +
                                describe(lo) + " .. " + describe(hi));
      return;
    }
    for (int64_t i = lo.i; i < hi.i && !tooLarge && !frames.back().returned;
         ++i) {
      assign(f->var, Val::ofInt(i));
      if (!countOp(f->getLoc()))
        return;
      execBody(f->body);
    }
    return;
  }
  if (auto *i = llvm::dyn_cast<IfStmt>(&stmt)) {
    Val c = eval(*i->cond);
    if (c.isPoison())
      return;
    if (c.kind != Val::Kind::Bool) {
      fail(i->cond->getLoc(), "an 'if' condition must be true or false at "
                              "compile time, got " + describe(c));
      return;
    }
    execBody(c.b ? i->thenBody : i->elseBody);
    return;
  }
  if (auto *r = llvm::dyn_cast<ReturnStmt>(&stmt)) {
    std::vector<Val> values;
    for (const ExprPtr &e : r->values)
      values.push_back(eval(*e));
    frames.back().returned = std::move(values);
    return;
  }
  if (auto *as = llvm::dyn_cast<AssertStmt>(&stmt)) {
    Val c = eval(*as->cond);
    if (c.isPoison())
      return;
    if (c.kind != Val::Kind::Bool)
      fail(as->cond->getLoc(), "an assertion must be true or false at compile "
                               "time, got " + describe(c));
    else if (!c.b)
      fail(as->getLoc(), "assertion failed: " + as->message);
    return;
  }
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

Val Elaborator::eval(const Expr &e) {
  switch (e.getKind()) {
  case Expr::Kind::Int:
    return Val::ofInt(llvm::cast<IntExpr>(e).value);
  case Expr::Kind::Float:
    return Val::ofFloat(llvm::cast<FloatExpr>(e).value);
  case Expr::Kind::Bool:
    return Val::ofBool(llvm::cast<BoolExpr>(e).value);
  case Expr::Kind::String: {
    // Every string interpolates `{name}`, so that a block can build weight
    // names from a prefix it was given.
    std::optional<std::string> s = interpolate(llvm::cast<StringExpr>(e));
    return s ? Val::ofStr(*s) : Val::poison();
  }
  case Expr::Kind::Name:
    return evalName(llvm::cast<NameExpr>(e));
  case Expr::Kind::Unary:
    return evalUnary(llvm::cast<UnaryExpr>(e));
  case Expr::Kind::Binary:
    return evalBinary(llvm::cast<BinaryExpr>(e));
  case Expr::Kind::Call:
    return evalCall(llvm::cast<CallExpr>(e));
  case Expr::Kind::List: {
    Val r;
    r.kind = Val::Kind::List;
    for (const ExprPtr &x : llvm::cast<ListExpr>(e).elements) {
      Val v = eval(*x);
      if (v.isPoison())
        return v;
      // Lists hold sizes and axes; nesting them has no use and would let a
      // loop build exponentially large values.
      if (v.kind == Val::Kind::List)
        return fail(x->getLoc(), "a list cannot contain a list");
      r.list.push_back(std::move(v));
    }
    return r;
  }
  }
  return Val::poison();
}

Val Elaborator::evalName(const NameExpr &e) {
  if (!frames.empty()) {
    auto it = frames.back().env.find(e.name);
    if (it != frames.back().env.end())
      return it->second;
  }
  auto c = consts.find(e.name);
  if (c != consts.end())
    return c->second;
  if (dims.count(e.name)) {
    Val v;
    v.kind = Val::Kind::Dim;
    v.dim = SymDim::named(e.name);
    if (currentEntry)
      v.value = dimValue(v.dim);
    return v;
  }
  auto w = globalWeights.find(e.name);
  if (w != globalWeights.end() && currentEntry)
    return weight(*w->second);
  if (e.name == "inf")
    return Val::ofFloat(INFINITY);
  if (e.name == "pi")
    return Val::ofFloat(M_PI);
  if (mlir::tfc::elementTypeOf(&context, e.name)) {
    Val v;
    v.kind = Val::Kind::DType;
    TypeExpr t;
    t.dtype.name = e.name;
    v.elementType = evalDType(t);
    return v;
  }
  // Sema reported unknown names; this is a name assigned on another path.
  return fail(e.getLoc(), "'" + e.name + "' has no value here (it is only "
                          "assigned on another path)");
}

Val Elaborator::evalUnary(const UnaryExpr &e) {
  Val v = eval(*e.operand);
  if (v.isPoison())
    return v;
  if (e.op == Tok::KwNot) {
    if (v.kind != Val::Kind::Bool)
      return fail(e.getLoc(), "'not' needs true or false, got " + describe(v));
    return Val::ofBool(!v.b);
  }
  if (v.kind == Val::Kind::Int) {
    if (v.i == INT64_MIN)
      return fail(e.getLoc(), "integer overflow");
    return Val::ofInt(-v.i);
  }
  if (v.kind == Val::Kind::Float)
    return Val::ofFloat(-v.f);
  if (v.kind == Val::Kind::Tensor) {
    if (!mlir::isa<mlir::FloatType>(v.elementType))
      return fail(e.getLoc(), "'-' needs a float tensor, got " + describe(v));
    if (!countOp(e.getLoc()))
      return Val::poison();
    return Val::ofTensor(
        mlir::tfc::NegOp::create(builder, loc(e.getLoc()), v.value), v.shape);
  }
  return fail(e.getLoc(), "cannot negate " + describe(v));
}

static std::string opSpelling(Tok op) {
  return tokenName(op).drop_front().drop_back().str();
}

Val Elaborator::evalBinary(const BinaryExpr &e) {
  Val lhs = eval(*e.lhs);
  if (lhs.isPoison())
    return lhs;
  // Short-circuit logic.
  if (e.op == Tok::KwAnd || e.op == Tok::KwOr) {
    if (lhs.kind != Val::Kind::Bool)
      return fail(e.getLoc(), "'" + opSpelling(e.op) +
                                  "' needs true or false, got " +
                                  describe(lhs));
    if (lhs.b == (e.op == Tok::KwOr))
      return lhs;
    Val rhs = eval(*e.rhs);
    if (!rhs.isPoison() && rhs.kind != Val::Kind::Bool)
      return fail(e.getLoc(), "'" + opSpelling(e.op) +
                                  "' needs true or false, got " +
                                  describe(rhs));
    return rhs;
  }
  Val rhs = eval(*e.rhs);
  if (rhs.isPoison())
    return rhs;

  if (lhs.kind == Val::Kind::Tensor || rhs.kind == Val::Kind::Tensor)
    return evalTensorBinary(e, lhs, rhs);

  std::string op = opSpelling(e.op);
  // Comparisons.
  if (e.op == Tok::EqEq || e.op == Tok::NotEq) {
    bool eq;
    if (lhs.isNumber() && rhs.isNumber())
      eq = lhs.asDouble() == rhs.asDouble() &&
           (lhs.kind != Val::Kind::Int || rhs.kind != Val::Kind::Int ||
            lhs.i == rhs.i);
    else if (lhs.kind == Val::Kind::Bool && rhs.kind == Val::Kind::Bool)
      eq = lhs.b == rhs.b;
    else if (lhs.kind == Val::Kind::Str && rhs.kind == Val::Kind::Str)
      eq = lhs.s == rhs.s;
    else if (lhs.kind == Val::Kind::Dim && rhs.kind == Val::Kind::Dim)
      eq = lhs.dim == rhs.dim;
    else
      return fail(e.getLoc(), "cannot compare " + describe(lhs) + " with " +
                                  describe(rhs));
    return Val::ofBool(eq == (e.op == Tok::EqEq));
  }
  if (!lhs.isNumber() || !rhs.isNumber()) {
    if (lhs.kind == Val::Kind::Dim || rhs.kind == Val::Kind::Dim)
      return fail(e.getLoc(), "arithmetic on symbolic dims is not supported ('" +
                                  op + "' on " + describe(lhs) + " and " +
                                  describe(rhs) + ")");
    return fail(e.getLoc(), "'" + op + "' cannot combine " + describe(lhs) +
                                " and " + describe(rhs));
  }
  if (e.op == Tok::Less || e.op == Tok::LessEq || e.op == Tok::Greater ||
      e.op == Tok::GreaterEq) {
    bool r;
    if (lhs.kind == Val::Kind::Int && rhs.kind == Val::Kind::Int) {
      int64_t a = lhs.i, b = rhs.i;
      r = e.op == Tok::Less ? a < b : e.op == Tok::LessEq ? a <= b
          : e.op == Tok::Greater ? a > b : a >= b;
    } else {
      double a = lhs.asDouble(), b = rhs.asDouble();
      r = e.op == Tok::Less ? a < b : e.op == Tok::LessEq ? a <= b
          : e.op == Tok::Greater ? a > b : a >= b;
    }
    return Val::ofBool(r);
  }
  if (e.op == Tok::At)
    return fail(e.getLoc(), "'@' multiplies tensors, got " + describe(lhs) +
                                " and " + describe(rhs));
  if (lhs.kind == Val::Kind::Int && rhs.kind == Val::Kind::Int) {
    int64_t a = lhs.i, b = rhs.i, r = 0;
    bool overflow = false;
    switch (e.op) {
    case Tok::Plus: overflow = llvm::AddOverflow(a, b, r); break;
    case Tok::Minus: overflow = llvm::SubOverflow(a, b, r); break;
    case Tok::Star: overflow = llvm::MulOverflow(a, b, r); break;
    case Tok::Slash:
    case Tok::SlashSlash:
    case Tok::Percent:
      if (b == 0)
        return fail(e.getLoc(), "division by zero");
      if (a == INT64_MIN && b == -1)
        return fail(e.getLoc(), "integer overflow");
      if (e.op == Tok::Slash && a % b != 0)
        return fail(e.getLoc(),
                    llvm::Twine(a) + " / " + llvm::Twine(b) +
                        " is not a whole number; use // for floor division "
                        "or write a float (" + llvm::Twine(a) + ".0 / " +
                        llvm::Twine(b) + ")");
      if (e.op == Tok::Percent) {
        r = a % b;
        if (r != 0 && ((r < 0) != (b < 0)))
          r += b;
      } else {
        r = a / b;
        if ((a % b != 0) && ((a < 0) != (b < 0)))
          --r;
      }
      break;
    case Tok::StarStar: {
      if (b < 0)
        return fail(e.getLoc(), "negative integer exponent; write a float");
      // Exponentiation by squaring: O(log b) even for 1 ** 10^18.
      r = 1;
      int64_t base = a;
      for (int64_t k = b; k > 0 && !overflow; k >>= 1) {
        if (k & 1)
          overflow = llvm::MulOverflow(r, base, r);
        if (k > 1 && !overflow)
          overflow = llvm::MulOverflow(base, base, base);
      }
      break;
    }
    default:
      return fail(e.getLoc(), "unsupported operator '" + op + "'");
    }
    if (overflow)
      return fail(e.getLoc(), "integer overflow in '" + op + "'");
    return Val::ofInt(r);
  }
  double a = lhs.asDouble(), b = rhs.asDouble(), r;
  switch (e.op) {
  case Tok::Plus: r = a + b; break;
  case Tok::Minus: r = a - b; break;
  case Tok::Star: r = a * b; break;
  case Tok::Slash: r = a / b; break;
  case Tok::SlashSlash: r = std::floor(a / b); break;
  case Tok::Percent: r = std::fmod(a, b); break;
  case Tok::StarStar: r = std::pow(a, b); break;
  default:
    return fail(e.getLoc(), "unsupported operator '" + op + "'");
  }
  return Val::ofFloat(r);
}

Val Elaborator::evalTensorBinary(const BinaryExpr &e, const Val &lhs,
                                 const Val &rhs) {
  std::string op = opSpelling(e.op);
  mlir::Type like =
      lhs.kind == Val::Kind::Tensor ? lhs.elementType : rhs.elementType;
  std::optional<Val> a = asTensor(lhs, like, e.lhs->getLoc(),
                                  "the left operand of '" + op + "'");
  std::optional<Val> b = asTensor(rhs, like, e.rhs->getLoc(),
                                  "the right operand of '" + op + "'");
  if (!a || !b)
    return Val::poison();
  for (const Val *v : {&*a, &*b})
    if (!mlir::isa<mlir::FloatType>(v->elementType))
      return fail(e.getLoc(), "'" + op + "' needs float tensors, got " +
                                  describe(*v) + "; convert it with cast(x, f32)");
  if (!countOp(e.getLoc()))
    return Val::poison();
  if (e.op == Tok::At) {
    if (a->elementType != b->elementType)
      return fail(e.getLoc(), "'@' operands have different element types: " +
                                  describe(*a) + " and " + describe(*b));
    ShapeResult r = shape::matmul(a->shape, b->shape, false, false);
    if (!r.ok())
      return fail(e.getLoc(), "'@': " + r.error);
    return Val::ofTensor(
        mlir::tfc::MatmulOp::create(builder, loc(e.getLoc()),
                                    tensorType(r.shape, a->elementType),
                                    a->value, b->value, nullptr, nullptr),
        r.shape);
  }
  Elementwise kind;
  switch (e.op) {
  case Tok::Plus: kind = Elementwise::Add; break;
  case Tok::Minus: kind = Elementwise::Sub; break;
  case Tok::Star: kind = Elementwise::Mul; break;
  case Tok::Slash: kind = Elementwise::Div; break;
  case Tok::StarStar: kind = Elementwise::Pow; break;
  default:
    return fail(e.getLoc(), "'" + op + "' is not defined on tensors");
  }
  return emitElementwise(kind, *a, *b, e.getLoc(), "'" + op + "'");
}

Val Elaborator::emitElementwise(Elementwise kind, const Val &a, const Val &b,
                                llvm::SMLoc at, llvm::StringRef what) {
  if (a.elementType != b.elementType)
    return fail(at, what + " operands have different element types: " +
                        describe(a) + " and " + describe(b));
  ShapeResult r = shape::broadcast(a.shape, b.shape);
  if (!r.ok())
    return fail(at, what + ": " + r.error);
  mlir::Location l = loc(at);
  mlir::Type type = tensorType(r.shape, a.elementType);
  mlir::Value x = a.value, y = b.value;
  mlir::Value result;
  switch (kind) {
  case Elementwise::Add:
    result = mlir::tfc::AddOp::create(builder, l, type, x, y);
    break;
  case Elementwise::Sub:
    result = mlir::tfc::SubOp::create(builder, l, type, x, y);
    break;
  case Elementwise::Mul:
    result = mlir::tfc::MulOp::create(builder, l, type, x, y);
    break;
  case Elementwise::Div:
    result = mlir::tfc::DivOp::create(builder, l, type, x, y);
    break;
  case Elementwise::Pow:
    result = mlir::tfc::PowOp::create(builder, l, type, x, y);
    break;
  case Elementwise::Max:
    result = mlir::tfc::MaxOp::create(builder, l, type, x, y);
    break;
  case Elementwise::Min:
    result = mlir::tfc::MinOp::create(builder, l, type, x, y);
    break;
  }
  return Val::ofTensor(result, r.shape);
}

Val Elaborator::evalCall(const CallExpr &e) {
  if (const BuiltinSpec *spec = lookupBuiltin(e.callee))
    return callBuiltin(*spec, e);
  auto it = funcs.find(e.callee);
  if (it == funcs.end() || it->second->isEntry)
    return Val::poison(); // reported by Sema
  return callBlock(*it->second, e);
}

Val Elaborator::callBlock(const FuncDecl &block, const CallExpr &call) {
  if (callers.size() >= 64)
    return fail(call.getLoc(), "blocks are nested more than 64 calls deep");
  if (!countOp(call.getLoc()))
    return Val::poison();
  // Bind the arguments.
  std::vector<std::optional<Val>> args(block.params.size());
  std::vector<llvm::SMLoc> argLocs(block.params.size(), call.getLoc());
  size_t positional = 0;
  bool ok = true;
  for (const Arg &arg : call.args) {
    size_t index;
    if (arg.keyword) {
      auto it = llvm::find_if(block.params, [&](const Param &p) {
        return p.name.name == arg.keyword->name;
      });
      if (it == block.params.end())
        return Val::poison(); // reported by Sema
      index = it - block.params.begin();
    } else {
      index = positional++;
    }
    if (index >= args.size())
      return Val::poison(); // reported by Sema
    args[index] = eval(*arg.value);
    argLocs[index] = arg.value->getLoc();
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i])
      return Val::poison(); // reported by Sema
    ok &= checkParam(block.params[i], *args[i], argLocs[i], block.name.name);
  }
  if (!ok)
    return Val::poison();

  Frame frame;
  frame.func = &block;
  for (size_t i = 0; i < args.size(); ++i)
    frame.env[block.params[i].name.name] = *args[i];
  mlir::Location callLoc = loc(call.getLoc());
  mlir::Operation *outerBefore = outermostBlock;
  if (options.markBlocks) {
    auto begin =
        mlir::tfc::BlockBeginOp::create(builder, callLoc, block.name.name);
    if (!outermostBlock)
      outermostBlock = begin;
  }
  callers.push_back(callLoc);
  frames.push_back(std::move(frame));
  execBody(block.body);
  if (options.markBlocks)
    mlir::tfc::BlockEndOp::create(builder, callLoc, block.name.name);
  outermostBlock = outerBefore;
  std::optional<std::vector<Val>> returned = std::move(frames.back().returned);
  frames.pop_back();
  callers.pop_back();
  if (tooLarge)
    return Val::poison();
  if (!returned)
    return fail(block.endLoc, "block '" + block.name.name +
                                  "' reaches its end without 'return'");
  for (const Val &v : *returned)
    if (v.isPoison())
      return Val::poison();
  if (returned->size() == 1)
    return (*returned)[0];
  Val list;
  list.kind = Val::Kind::List;
  list.isTuple = true;
  list.list = std::move(*returned);
  return list;
}

//===----------------------------------------------------------------------===//
// Entries and the module
//===----------------------------------------------------------------------===//

void Elaborator::generateEntry(const FuncDecl &func, bool cached, bool rows) {
  unsigned before = diags.getNumErrors();
  llvm::SmallVector<mlir::Type> argTypes;
  llvm::SmallVector<SymShape> argShapes;
  bool paramsOk = true;
  for (const Param &p : func.params) {
    if (!p.type.isTensor() || p.type.anyTensor) {
      fail(p.name.loc, "entry parameter '" + p.name.name +
                           "' needs a tensor type such as i64[batch, seq]");
      paramsOk = false;
      continue;
    }
    frames.emplace_back();
    mlir::Type dtype = evalDType(p.type);
    std::optional<SymShape> shape = evalShape(p.type);
    frames.pop_back();
    if (!dtype || !shape) {
      paramsOk = false; // possibly silent: a poisoned constant
      continue;
    }
    argTypes.push_back(tensorType(*shape, dtype));
    argShapes.push_back(*shape);
  }
  if (!paramsOk || diags.getNumErrors() != before)
    return;

  // The cached form follows the sequence dim of the token input: the second
  // axis of the first integer [batch, seq] parameter.
  std::string seqDim;
  SymDim batchDim;
  if (cached) {
    for (auto [i, p] : llvm::enumerate(func.params))
      if (argShapes[i].size() == 2 && !argShapes[i][1].isStatic() &&
          mlir::isa<mlir::IntegerType>(
              mlir::cast<mlir::RankedTensorType>(argTypes[i])
                  .getElementType())) {
        seqDim = argShapes[i][1].name;
        batchDim = argShapes[i][0];
        break;
      }
    if (seqDim.empty())
      return; // nothing to cache
  }

  builder.setInsertionPointToEnd(moduleOp.getBody());
  auto funcOp =
      mlir::func::FuncOp::create(builder, loc(func.name.loc),
                                 rows     ? func.name.name + "_rows"
                                 : cached ? func.name.name + "_cached"
                                          : func.name.name,
                                 builder.getFunctionType(argTypes, {}));
  mlir::Block *entryBlock = funcOp.addEntryBlock();
  builder.setInsertionPointToStart(entryBlock);
  currentEntry = funcOp;
  dimValues.clear();
  weightValues.clear();
  lastWeight = nullptr;

  Frame frame;
  frame.func = &func;
  for (auto [i, p] : llvm::enumerate(func.params)) {
    mlir::Value arg = entryBlock->getArgument(i);
    frame.env[p.name.name] = Val::ofTensor(arg, argShapes[i]);
    llvm::SmallVector<mlir::Attribute> dimAttrs;
    for (auto [axis, d] : llvm::enumerate(argShapes[i])) {
      if (d.isStatic()) {
        dimAttrs.push_back(builder.getI64IntegerAttr(d.size));
        continue;
      }
      dimAttrs.push_back(builder.getStringAttr(d.name));
      if (!dimValues.count(d.name))
        dimValues[d.name] = mlir::tensor::DimOp::create(
            builder, loc(p.name.loc), arg, static_cast<int64_t>(axis));
    }
    funcOp.setArgAttr(i, "tfc.name", builder.getStringAttr(p.name.name));
    funcOp.setArgAttr(i, "tfc.dims", builder.getArrayAttr(dimAttrs));
  }
  if (cached) {
    // `past`: the tokens already in the cache (a scalar i64 input), a name
    // the entry's own inputs cannot have then.
    for (const Param &p : func.params)
      if (p.name.name == "past")
        fail(p.name.loc, "the cached form of entry '" + func.name.name +
                             "' (--kv-cache) has an input named 'past' (the "
                             "tokens already cached); rename this parameter");
    // The rows form: one past per row of the batch.
    auto pastType = rows
                        ? tensorType({batchDim}, builder.getI64Type())
                        : mlir::RankedTensorType::get({}, builder.getI64Type());
    unsigned pastIndex = funcOp.getNumArguments();
    (void)funcOp.insertArgument(pastIndex, pastType, {}, loc(func.name.loc));
    mlir::Value pastArg = funcOp.getArgument(pastIndex);
    mlir::Location l = loc(func.name.loc);
    cache.emplace();
    cache->seqDim = seqDim;
    if (rows) {
      cache->rows = true;
      cache->rowPast = pastArg;
      cache->batchDim = batchDim;
      cache->past = mlir::arith::ConstantIndexOp::create(builder, l, 0);
    } else {
      mlir::Value p = mlir::tensor::ExtractOp::create(builder, l, pastArg,
                                                      mlir::ValueRange{});
      cache->past = mlir::arith::IndexCastOp::create(builder, l,
                                                     builder.getIndexType(), p);
    }
    cache->block = entryBlock;
    cache->pastArg = pastArg;
    cache->numParams = func.params.size();
  }
  frames.push_back(std::move(frame));
  execBody(func.body);
  std::optional<std::vector<Val>> returned = std::move(frames.back().returned);
  frames.pop_back();

  bool failedHere = diags.getNumErrors() != before;
  if (!failedHere && !returned)
    fail(func.endLoc, "entry '" + func.name.name +
                          "' reaches its end without 'return'");
  llvm::SmallVector<mlir::Value> results;
  llvm::SmallVector<std::string> resultNames;
  if (returned) {
    const ReturnStmt *ret = nullptr;
    // Find the return statement for result names (the last one executed).
    std::function<void(const Body &)> findReturn = [&](const Body &b) {
      for (const StmtPtr &s : b) {
        if (auto *r = llvm::dyn_cast<ReturnStmt>(s.get()))
          if (r->values.size() == returned->size())
            ret = r;
        if (auto *f = llvm::dyn_cast<ForStmt>(s.get()))
          findReturn(f->body);
        if (auto *i = llvm::dyn_cast<IfStmt>(s.get())) {
          findReturn(i->thenBody);
          findReturn(i->elseBody);
        }
      }
    };
    findReturn(func.body);
    for (auto [i, v] : llvm::enumerate(*returned)) {
      llvm::SMLoc l = ret ? ret->values[i]->getLoc() : func.endLoc;
      if (v.isPoison())
        continue;
      if (v.kind != Val::Kind::Tensor) {
        fail(l, "an entry must return tensors, got " + describe(v));
        continue;
      }
      mlir::Value value = v.value;
      // --kv-cache-last: the last position of an output along the tokens
      // (tfc-bubble-up-slices then narrows what computes it).
      if (cached && options.kvCacheLast)
        for (auto [axis, d] : llvm::enumerate(v.shape))
          if (!d.isStatic() && d.name == seqDim) {
            value = mlir::tfc::SliceOp::create(builder, loc(l), value,
                                               static_cast<int64_t>(axis),
                                               /*start=*/0, /*size=*/1,
                                               /*fromEnd=*/true);
            break;
          }
      results.push_back(value);
      std::string name = "output" + (returned->size() > 1 ? std::to_string(i)
                                                           : std::string());
      if (ret)
        if (auto *n = llvm::dyn_cast<NameExpr>(ret->values[i].get()))
          name = n->name;
      // Inputs and outputs are named apart (the runtime, tfc-run's --input
      // and --output and the C API find them by name): an output named
      // after an input or an earlier output (`x = f(x)`, `return x`) takes
      // `_out`, then `_out2`, ... (docs/language.md). `past` is the cached
      // form's input (--kv-cache): taken in both forms, so that an entry's
      // outputs have the same names in each.
      auto taken = [&](const std::string &candidate) {
        return candidate == "past" ||
               llvm::any_of(
                   func.params,
                   [&](const Param &p) { return p.name.name == candidate; }) ||
               llvm::is_contained(resultNames, candidate);
      };
      if (taken(name)) {
        std::string base = name + "_out";
        name = base;
        for (int n = 2; taken(name); ++n)
          name = base + std::to_string(n);
      }
      resultNames.push_back(name);
    }
  }
  std::optional<CacheMode> cacheMode = std::move(cache);
  cache.reset();
  // Without a rows form the entry still serves: a serving engine runs its
  // rows one at a time through the cached form (a warning says why).
  if (cacheMode && !cacheMode->states.empty() &&
      !cacheMode->unsupported.empty()) {
    if (rows)
      diags.warning(func.name.loc,
                    "entry '" + func.name.name +
                        "' has no rows form (--kv-cache-rows: each row at its "
                        "own position): it has " +
                        cacheMode->unsupported +
                        "; a serving engine runs its rows one at a time");
    else
      fail(func.name.loc, "entry '" + func.name.name +
                              "' has no cached form (--kv-cache): it has " +
                              cacheMode->unsupported);
  }
  if (diags.getNumErrors() != before ||
      (cacheMode && (cacheMode->states.empty() ||
                     !cacheMode->unsupported.empty()))) {
    // A cached form without a cached attention is just the entry again.
    funcOp.erase();
    currentEntry = nullptr;
    return;
  }
  // The updated caches are results too: `tfc.state_for` names the state
  // argument each one is written back to (in place, by the model ABI).
  llvm::SmallVector<std::pair<unsigned, unsigned>> stateResults;
  if (cacheMode)
    for (const CacheMode::State &s : cacheMode->states) {
      stateResults.push_back(
          {static_cast<unsigned>(results.size()),
           mlir::cast<mlir::BlockArgument>(s.arg).getArgNumber()});
      results.push_back(s.updated);
      resultNames.push_back(s.name);
    }
  mlir::func::ReturnOp::create(builder, loc(func.endLoc), results);
  funcOp.setFunctionType(builder.getFunctionType(
      entryBlock->getArgumentTypes(), mlir::ValueRange(results).getTypes()));
  for (auto [i, name] : llvm::enumerate(resultNames))
    funcOp.setResultAttr(i, "tfc.name", builder.getStringAttr(name));
  if (cacheMode) {
    unsigned pastIndex =
        mlir::cast<mlir::BlockArgument>(cacheMode->pastArg).getArgNumber();
    funcOp.setArgAttr(pastIndex, "tfc.name", builder.getStringAttr("past"));
    funcOp.setArgAttr(pastIndex, "tfc.dims",
                      rows ? dimsAttr({batchDim}) : builder.getArrayAttr({}));
    // Read by the host code (a CUDA model launches kernels sized by it).
    if (!rows)
      funcOp.setArgAttr(pastIndex, "tfc.host", builder.getUnitAttr());
    for (const CacheMode::State &s : cacheMode->states) {
      unsigned i = mlir::cast<mlir::BlockArgument>(s.arg).getArgNumber();
      funcOp.setArgAttr(i, "tfc.name", builder.getStringAttr(s.name));
      funcOp.setArgAttr(i, "tfc.dims", dimsAttr(s.shape));
      funcOp.setArgAttr(i, "tfc.state", builder.getUnitAttr());
      if (s.window > 0)
        funcOp.setArgAttr(i, "tfc.window", builder.getI64IntegerAttr(s.window));
    }
    for (auto [result, arg] : stateResults)
      funcOp.setResultAttr(result, "tfc.state_for",
                           builder.getI64IntegerAttr(arg));
    for (const CacheMode::ReadOnly &r : cacheMode->readOnlyStates) {
      unsigned i = mlir::cast<mlir::BlockArgument>(r.arg).getArgNumber();
      funcOp.setArgAttr(i, "tfc.name", builder.getStringAttr(r.name));
      funcOp.setArgAttr(i, "tfc.dims", dimsAttr(r.shape));
      funcOp.setArgAttr(i, "tfc.state", builder.getUnitAttr());
    }
    for (const CacheMode::Cross &c : cacheMode->cross) {
      unsigned i = mlir::cast<mlir::BlockArgument>(c.arg).getArgNumber();
      funcOp.setArgAttr(i, "tfc.name", builder.getStringAttr(c.name));
      funcOp.setArgAttr(i, "tfc.dims", dimsAttr(c.shape));
      funcOp.setArgAttr(i, "tfc.state", builder.getUnitAttr());
    }
    if (!cacheMode->cross.empty())
      generateCrossEntry(func, *cacheMode, funcOp);
  }
  // Drop the dim queries nothing used.
  for (auto &entry : dimValues) {
    if (!entry.second.use_empty())
      continue;
    mlir::Operation *dimOp = entry.second.getDefiningOp();
    mlir::Operation *index = dimOp->getOperand(1).getDefiningOp();
    dimOp->erase();
    if (index && index->use_empty())
      index->erase();
  }
  currentEntry = nullptr;
}

mlir::ArrayAttr Elaborator::dimsAttr(const SymShape &shape) {
  llvm::SmallVector<mlir::Attribute> dims;
  for (const SymDim &d : shape)
    dims.push_back(d.isStatic()
                       ? mlir::Attribute(builder.getI64IntegerAttr(d.size))
                       : mlir::Attribute(builder.getStringAttr(d.name)));
  return builder.getArrayAttr(dims);
}

void Elaborator::generateCrossEntry(const FuncDecl &func, CacheMode &mode,
                                    mlir::func::FuncOp cachedEntry) {
  // The ops the cross keys/values are computed from, and the parameters
  // they read. A size query of a parameter is not a read of it: the cross
  // entry takes the size from whichever of its own arguments has that dim.
  mlir::Block *body = mode.block;
  llvm::DenseSet<mlir::Operation *> slice;
  llvm::SmallVector<unsigned> params;
  llvm::SmallVector<mlir::Value> work;
  for (const CacheMode::Cross &c : mode.cross)
    work.push_back(c.source);
  while (!work.empty()) {
    mlir::Value x = work.pop_back_val();
    if (auto arg = mlir::dyn_cast<mlir::BlockArgument>(x)) {
      if (!llvm::is_contained(params, arg.getArgNumber()))
        params.push_back(arg.getArgNumber());
      continue;
    }
    mlir::Operation *op = x.getDefiningOp();
    if (!slice.insert(op).second)
      continue;
    if (argDimName(x))
      continue;
    for (mlir::Value operand : op->getOperands())
      work.push_back(operand);
  }
  llvm::sort(params);

  mlir::OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointAfter(cachedEntry);
  mlir::Location l = cachedEntry.getLoc();
  llvm::SmallVector<mlir::Type> argTypes;
  for (unsigned p : params)
    argTypes.push_back(body->getArgument(p).getType());
  for (const CacheMode::Cross &c : mode.cross)
    argTypes.push_back(c.arg.getType());
  auto crossOp = mlir::func::FuncOp::create(
      builder, l, func.name.name + "_cross",
      builder.getFunctionType(argTypes, {}));
  mlir::Block *entry = crossOp.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  mlir::IRMapping map;
  for (auto [i, p] : llvm::enumerate(params)) {
    map.map(body->getArgument(p), entry->getArgument(i));
    for (llvm::StringRef attr : {"tfc.name", "tfc.dims"})
      crossOp.setArgAttr(i, attr, cachedEntry.getArgAttr(p, attr));
  }
  // Where each named dim can be measured in the cross entry.
  auto measure = [&](llvm::StringRef name) -> mlir::Value {
    for (unsigned i = 0; i < entry->getNumArguments(); ++i) {
      mlir::ArrayAttr dims =
          i < params.size()
              ? cachedEntry.getArgAttrOfType<mlir::ArrayAttr>(params[i],
                                                              "tfc.dims")
              : dimsAttr(mode.cross[i - params.size()].shape);
      for (auto [axis, d] : llvm::enumerate(dims))
        if (auto s = mlir::dyn_cast<mlir::StringAttr>(d);
            s && s.getValue() == name)
          return mlir::tensor::DimOp::create(builder, l, entry->getArgument(i),
                                             static_cast<int64_t>(axis));
    }
    return nullptr;
  };
  for (mlir::Operation &op : *body) {
    if (!slice.count(&op))
      continue;
    if (std::optional<std::string> name = argDimName(op.getResult(0))) {
      mlir::Value size = measure(*name);
      if (!size) {
        diags.error("internal error: the cross-attention cache of '" +
                    func.name.name + "' needs the size of '" + *name + "'");
        return;
      }
      map.map(op.getResult(0), size);
      continue;
    }
    builder.clone(op, map);
  }
  llvm::SmallVector<mlir::Value> results;
  for (const CacheMode::Cross &c : mode.cross)
    results.push_back(map.lookup(c.source));
  mlir::func::ReturnOp::create(builder, l, results);
  crossOp.setFunctionType(builder.getFunctionType(
      entry->getArgumentTypes(), mlir::ValueRange(results).getTypes()));
  for (auto [i, c] : llvm::enumerate(mode.cross)) {
    unsigned arg = params.size() + i;
    crossOp.setArgAttr(arg, "tfc.name", builder.getStringAttr(c.name));
    crossOp.setArgAttr(arg, "tfc.dims", dimsAttr(c.shape));
    crossOp.setArgAttr(arg, "tfc.state", builder.getUnitAttr());
    crossOp.setResultAttr(i, "tfc.name", builder.getStringAttr(c.name));
    crossOp.setResultAttr(i, "tfc.state_for", builder.getI64IntegerAttr(arg));
  }

  // The cached entry no longer computes what it now reads from the states.
  llvm::DenseSet<mlir::Operation *> keep;
  for (auto &entry : dimValues)
    keep.insert(entry.second.getDefiningOp());
  for (mlir::Operation &op :
       llvm::make_early_inc_range(llvm::reverse(*body)))
    if (slice.count(&op) && !keep.count(&op) && mlir::isOpTriviallyDead(&op))
      op.erase();
}

mlir::OwningOpRef<mlir::ModuleOp> Elaborator::run() {
  loadFrontendDialects(context);
  for (const FuncDecl &f : module.funcs)
    funcs[f.name.name] = &f;
  for (const auto &w : module.weights)
    globalWeights[w->name.name] = w.get();
  // A constant that failed is Poison: its uses stay silent, other errors
  // are still found.
  evaluateConsts();

  mlir::OwningOpRef<mlir::ModuleOp> owned = mlir::ModuleOp::create(
      mlir::FileLineColLoc::get(&context, filename, 1, 1));
  moduleOp = *owned;
  if (module.modelName)
    moduleOp->setAttr("tfc.model", builder.getStringAttr(module.modelName->name));
  llvm::SmallVector<mlir::NamedAttribute> bounds;
  for (const DimDecl &d : module.dims) {
    if (!d.bound)
      continue;
    frames.emplace_back();
    Val b = eval(*d.bound);
    frames.pop_back();
    if (b.kind == Val::Kind::Int)
      bounds.push_back(builder.getNamedAttr(d.name.name,
                                            builder.getI64IntegerAttr(b.i)));
  }
  if (!bounds.empty())
    moduleOp->setAttr("tfc.dim_bounds", builder.getDictionaryAttr(bounds));

  bool found = options.entry.empty();
  for (const FuncDecl &f : module.funcs) {
    if (!f.isEntry || (!options.entry.empty() && f.name.name != options.entry))
      continue;
    found = true;
    generateEntry(f);
    if (tooLarge)
      break;
    if (options.kvCache) {
      generateEntry(f, /*cached=*/true);
      if (tooLarge)
        break;
    }
    if (options.kvCache && options.kvCacheRows) {
      generateEntry(f, /*cached=*/true, /*rows=*/true);
      if (tooLarge)
        break;
    }
  }
  if (!found) {
    std::vector<std::string> names;
    for (const FuncDecl &f : module.funcs)
      if (f.isEntry)
        names.push_back(f.name.name);
    diags.error("--entry " + options.entry + ": the model has no entry '" +
                options.entry + "'" +
                DiagnosticEngine::suggest(options.entry, names));
  }
  if (diags.hadError())
    return nullptr;
  if (mlir::failed(mlir::verify(moduleOp))) {
    diags.error("internal error: the generated IR does not verify (please "
                "report this with the model description)");
    return nullptr;
  }
  return owned;
}

mlir::OwningOpRef<mlir::ModuleOp>
tfc::generateModule(const Module &module, mlir::MLIRContext &context,
                    DiagnosticEngine &diags, const MLIRGenOptions &options) {
  Elaborator elaborator(module, context, diags, options);
  return elaborator.run();
}

bool tfc::MLIRGenOptions::addDefine(llvm::StringRef text) {
  auto [name, value] = text.split('=');
  if (!text.contains('=') || name.trim().empty())
    return false;
  defines.push_back({name.trim().str(), value.str()});
  return true;
}
