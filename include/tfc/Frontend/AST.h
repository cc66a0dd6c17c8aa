//===- AST.h - Abstract syntax tree of the .tfm language --------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The parser's output: a Module of declarations (model name, hyper-parameter
// constants, symbolic dims, weights, blocks and entry points). Nodes use
// LLVM-style RTTI (`llvm::isa`/`dyn_cast` through `classof`) and own their
// children with unique_ptr. Every node keeps the source location of its first
// token for diagnostics and MLIR locations.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FRONTEND_AST_H
#define TFC_FRONTEND_AST_H

#include "tfc/Frontend/Lexer.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tfc::ast {

/// A name with the location where it is written.
struct Ident {
  std::string name;
  llvm::SMLoc loc;
};

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

class Expr {
public:
  enum class Kind { Int, Float, Bool, String, Name, Unary, Binary, Call, List };
  Expr(Kind kind, llvm::SMLoc loc) : kind(kind), loc(loc) {}
  virtual ~Expr() = default;
  Kind getKind() const { return kind; }
  llvm::SMLoc getLoc() const { return loc; }

private:
  Kind kind;
  llvm::SMLoc loc;
};
using ExprPtr = std::unique_ptr<Expr>;

class IntExpr : public Expr {
public:
  IntExpr(llvm::SMLoc loc, int64_t value) : Expr(Kind::Int, loc), value(value) {}
  int64_t value;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Int; }
};

class FloatExpr : public Expr {
public:
  FloatExpr(llvm::SMLoc loc, double value)
      : Expr(Kind::Float, loc), value(value) {}
  double value;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Float; }
};

class BoolExpr : public Expr {
public:
  BoolExpr(llvm::SMLoc loc, bool value) : Expr(Kind::Bool, loc), value(value) {}
  bool value;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Bool; }
};

/// A string literal. `value` is the text between the quotes; `{name}` parts
/// are interpolated when the string is used as a weight name.
class StringExpr : public Expr {
public:
  StringExpr(llvm::SMLoc loc, std::string value)
      : Expr(Kind::String, loc), value(std::move(value)) {}
  std::string value;
  static bool classof(const Expr *e) { return e->getKind() == Kind::String; }
};

class NameExpr : public Expr {
public:
  NameExpr(llvm::SMLoc loc, std::string name)
      : Expr(Kind::Name, loc), name(std::move(name)) {}
  std::string name;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Name; }
};

class UnaryExpr : public Expr {
public:
  UnaryExpr(llvm::SMLoc loc, Tok op, ExprPtr operand)
      : Expr(Kind::Unary, loc), op(op), operand(std::move(operand)) {}
  Tok op; // Minus or KwNot
  ExprPtr operand;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Unary; }
};

class BinaryExpr : public Expr {
public:
  BinaryExpr(llvm::SMLoc opLoc, Tok op, ExprPtr lhs, ExprPtr rhs)
      : Expr(Kind::Binary, opLoc), op(op), lhs(std::move(lhs)),
        rhs(std::move(rhs)) {}
  Tok op;
  ExprPtr lhs, rhs;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Binary; }
};

/// One argument of a call: positional, or `name = value`.
struct Arg {
  std::optional<Ident> keyword;
  ExprPtr value;
};

class CallExpr : public Expr {
public:
  CallExpr(llvm::SMLoc loc, std::string callee, std::vector<Arg> args)
      : Expr(Kind::Call, loc), callee(std::move(callee)), args(std::move(args)) {}
  std::string callee;
  std::vector<Arg> args;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Call; }
};

/// `[a, b, c]`: a shape or a permutation.
class ListExpr : public Expr {
public:
  ListExpr(llvm::SMLoc loc, std::vector<ExprPtr> elements)
      : Expr(Kind::List, loc), elements(std::move(elements)) {}
  std::vector<ExprPtr> elements;
  static bool classof(const Expr *e) { return e->getKind() == Kind::List; }
};

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

/// The declared type of a parameter or weight: a scalar kind (`int`, `float`,
/// `bool`, `str`) or a tensor `dtype[d0, d1, ...]` (dtype defaults to f32)
/// whose dims are integer expressions or symbolic dim names.
struct TypeExpr {
  llvm::SMLoc loc;
  /// `int`, `float`, `bool`, `str`, or empty for a tensor.
  std::string scalar;
  /// The tensor's element type name (`f32`, `i64`, ...); empty means f32.
  Ident dtype;
  std::vector<ExprPtr> dims;
  /// A parameter written without a type: a tensor of any shape.
  bool anyTensor = false;
  bool isTensor() const { return scalar.empty(); }
};

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

class Stmt {
public:
  enum class Kind { Assign, Weight, For, If, Return, Assert };
  Stmt(Kind kind, llvm::SMLoc loc) : kind(kind), loc(loc) {}
  virtual ~Stmt() = default;
  Kind getKind() const { return kind; }
  llvm::SMLoc getLoc() const { return loc; }

private:
  Kind kind;
  llvm::SMLoc loc;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

/// `x = e` or `a, b, c = e` (e yields several values).
class AssignStmt : public Stmt {
public:
  AssignStmt(llvm::SMLoc loc, std::vector<Ident> targets, ExprPtr value)
      : Stmt(Kind::Assign, loc), targets(std::move(targets)),
        value(std::move(value)) {}
  std::vector<Ident> targets;
  ExprPtr value;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Assign; }
};

/// `weight name: type = "key.{l}.template"`.
class WeightStmt : public Stmt {
public:
  WeightStmt(llvm::SMLoc loc, Ident name, TypeExpr type, ExprPtr key)
      : Stmt(Kind::Weight, loc), name(std::move(name)), type(std::move(type)),
        key(std::move(key)) {}
  Ident name;
  TypeExpr type;
  ExprPtr key; // a StringExpr
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Weight; }
};

/// `for v in lo..hi { body }` (hi exclusive), unrolled at compile time.
class ForStmt : public Stmt {
public:
  ForStmt(llvm::SMLoc loc, Ident var, ExprPtr lo, ExprPtr hi, Body body)
      : Stmt(Kind::For, loc), var(std::move(var)), lo(std::move(lo)),
        hi(std::move(hi)), body(std::move(body)) {}
  Ident var;
  ExprPtr lo, hi;
  Body body;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::For; }
};

/// `if cond { ... } else { ... }` on a compile-time condition.
class IfStmt : public Stmt {
public:
  IfStmt(llvm::SMLoc loc, ExprPtr cond, Body thenBody, Body elseBody)
      : Stmt(Kind::If, loc), cond(std::move(cond)),
        thenBody(std::move(thenBody)), elseBody(std::move(elseBody)) {}
  ExprPtr cond;
  Body thenBody, elseBody;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::If; }
};

class ReturnStmt : public Stmt {
public:
  ReturnStmt(llvm::SMLoc loc, std::vector<ExprPtr> values)
      : Stmt(Kind::Return, loc), values(std::move(values)) {}
  std::vector<ExprPtr> values;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Return; }
};

/// `assert cond, "message"` on a compile-time condition.
class AssertStmt : public Stmt {
public:
  AssertStmt(llvm::SMLoc loc, ExprPtr cond, std::string message)
      : Stmt(Kind::Assert, loc), cond(std::move(cond)),
        message(std::move(message)) {}
  ExprPtr cond;
  std::string message;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Assert; }
};

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

struct Param {
  Ident name;
  TypeExpr type;
};

/// `const name = expr`: a hyper-parameter, overridable with `-D name=value`.
struct ConstDecl {
  Ident name;
  ExprPtr value;
};

/// `dim name` or `dim name <= bound`: a symbolic size known at run time.
/// `dim a, b <= n` declares several dims that share one bound.
struct DimDecl {
  Ident name;
  std::shared_ptr<Expr> bound; // may be null
};

/// `block name(params) { body }` (a reusable sub-graph, inlined at each call)
/// or `entry name(params) { body }` (an exported function of the binary).
struct FuncDecl {
  Ident name;
  bool isEntry = false;
  std::vector<Param> params;
  Body body;
  llvm::SMLoc endLoc; // the closing brace
};

/// The top-level declarations in source order.
struct Module {
  std::optional<Ident> modelName;
  std::vector<ConstDecl> consts;
  std::vector<DimDecl> dims;
  std::vector<std::unique_ptr<WeightStmt>> weights;
  /// Constraints on the hyper-parameters, checked after `-D` overrides.
  std::vector<std::unique_ptr<AssertStmt>> asserts;
  std::vector<FuncDecl> funcs;
};

/// One piece of a string literal: literal text, or a `{name}` reference.
/// `offset` is the piece's position in the literal's text (after the quote).
struct StringPiece {
  bool isName;
  llvm::StringRef text;
  size_t offset;
};

/// Splits a string literal's text into pieces. On a stray `}` or an
/// unterminated `{`, returns the offset of the culprit and the message.
std::optional<std::pair<size_t, std::string>>
splitTemplate(llvm::StringRef text, std::vector<StringPiece> &pieces);

/// The location of `offset` in a string literal's text.
inline llvm::SMLoc locInString(const StringExpr &s, size_t offset) {
  return llvm::SMLoc::getFromPointer(s.getLoc().getPointer() + 1 + offset);
}

/// Writes an indented, S-expression-like dump (`tfc-compile --emit=ast`).
void print(const Module &module, llvm::SourceMgr &sourceMgr,
           llvm::raw_ostream &os);

} // namespace tfc::ast

#endif // TFC_FRONTEND_AST_H
