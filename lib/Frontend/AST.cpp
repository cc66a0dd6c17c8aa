//===- AST.cpp - Printing the .tfm syntax tree ----------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Frontend/AST.h"

#include "llvm/Support/SourceMgr.h"

using namespace tfc;
using namespace tfc::ast;

namespace {

class Printer {
public:
  Printer(llvm::SourceMgr &sourceMgr, llvm::raw_ostream &os)
      : sourceMgr(sourceMgr), os(os) {}

  void print(const Module &module);

private:
  void indent() { os.indent(level * 2); }
  void loc(llvm::SMLoc l) {
    auto [line, col] = sourceMgr.getLineAndColumn(l);
    os << " @" << line << ":" << col;
  }
  void expr(const Expr &e);
  void type(const TypeExpr &t);
  void body(const Body &b);
  void stmt(const Stmt &s);

  llvm::SourceMgr &sourceMgr;
  llvm::raw_ostream &os;
  unsigned level = 0;
};

} // namespace

void Printer::expr(const Expr &e) {
  if (auto *i = llvm::dyn_cast<IntExpr>(&e)) {
    os << i->value;
  } else if (auto *f = llvm::dyn_cast<FloatExpr>(&e)) {
    os << f->value;
  } else if (auto *b = llvm::dyn_cast<BoolExpr>(&e)) {
    os << (b->value ? "true" : "false");
  } else if (auto *s = llvm::dyn_cast<StringExpr>(&e)) {
    os << '"' << s->value << '"';
  } else if (auto *n = llvm::dyn_cast<NameExpr>(&e)) {
    os << n->name;
  } else if (auto *u = llvm::dyn_cast<UnaryExpr>(&e)) {
    os << "(" << (u->op == Tok::Minus ? "-" : "not") << " ";
    expr(*u->operand);
    os << ")";
  } else if (auto *bin = llvm::dyn_cast<BinaryExpr>(&e)) {
    os << "(" << tokenName(bin->op).drop_front().drop_back() << " ";
    expr(*bin->lhs);
    os << " ";
    expr(*bin->rhs);
    os << ")";
  } else if (auto *c = llvm::dyn_cast<CallExpr>(&e)) {
    os << "(call " << c->callee;
    for (const Arg &a : c->args) {
      os << " ";
      if (a.keyword)
        os << a.keyword->name << "=";
      expr(*a.value);
    }
    os << ")";
  } else if (auto *l = llvm::dyn_cast<ListExpr>(&e)) {
    os << "[";
    llvm::interleaveComma(l->elements, os,
                          [&](const ExprPtr &x) { expr(*x); });
    os << "]";
  }
}

void Printer::type(const TypeExpr &t) {
  if (!t.isTensor()) {
    os << t.scalar;
    return;
  }
  os << (t.dtype.name.empty() ? "f32" : t.dtype.name) << "[";
  llvm::interleaveComma(t.dims, os, [&](const ExprPtr &d) { expr(*d); });
  os << "]";
}

void Printer::body(const Body &b) {
  ++level;
  for (const StmtPtr &s : b)
    stmt(*s);
  --level;
}

void Printer::stmt(const Stmt &s) {
  indent();
  if (auto *a = llvm::dyn_cast<AssignStmt>(&s)) {
    os << "(assign";
    for (const Ident &t : a->targets)
      os << " " << t.name;
    os << " ";
    expr(*a->value);
    os << ")";
    loc(s.getLoc());
    os << "\n";
  } else if (auto *w = llvm::dyn_cast<WeightStmt>(&s)) {
    os << "(weight " << w->name.name << " ";
    type(w->type);
    os << " ";
    expr(*w->key);
    os << ")";
    loc(s.getLoc());
    os << "\n";
  } else if (auto *f = llvm::dyn_cast<ForStmt>(&s)) {
    os << "(for " << f->var.name << " ";
    expr(*f->lo);
    os << " ";
    expr(*f->hi);
    os << ")";
    loc(s.getLoc());
    os << "\n";
    body(f->body);
  } else if (auto *i = llvm::dyn_cast<IfStmt>(&s)) {
    os << "(if ";
    expr(*i->cond);
    os << ")";
    loc(s.getLoc());
    os << "\n";
    body(i->thenBody);
    if (!i->elseBody.empty()) {
      indent();
      os << "(else)\n";
      body(i->elseBody);
    }
  } else if (auto *r = llvm::dyn_cast<ReturnStmt>(&s)) {
    os << "(return";
    for (const ExprPtr &v : r->values) {
      os << " ";
      expr(*v);
    }
    os << ")";
    loc(s.getLoc());
    os << "\n";
  } else if (auto *as = llvm::dyn_cast<AssertStmt>(&s)) {
    os << "(assert ";
    expr(*as->cond);
    os << " \"" << as->message << "\")";
    loc(s.getLoc());
    os << "\n";
  }
}

void Printer::print(const Module &module) {
  os << "(model " << (module.modelName ? module.modelName->name : "<unnamed>")
     << ")\n";
  for (const ConstDecl &c : module.consts) {
    os << "(const " << c.name.name << " ";
    expr(*c.value);
    os << ")";
    loc(c.name.loc);
    os << "\n";
  }
  for (const DimDecl &d : module.dims) {
    os << "(dim " << d.name.name;
    if (d.bound) {
      os << " <= ";
      expr(*d.bound);
    }
    os << ")";
    loc(d.name.loc);
    os << "\n";
  }
  for (const auto &w : module.weights)
    stmt(*w);
  for (const auto &a : module.asserts)
    stmt(*a);
  for (const FuncDecl &f : module.funcs) {
    os << "(" << (f.isEntry ? "entry " : "block ") << f.name.name;
    for (const Param &p : f.params) {
      os << " (" << p.name.name;
      if (p.type.anyTensor)
        os << " tensor";
      else {
        os << " ";
        type(p.type);
      }
      os << ")";
    }
    os << ")";
    loc(f.name.loc);
    os << "\n";
    body(f.body);
  }
}

std::optional<std::pair<size_t, std::string>>
ast::splitTemplate(llvm::StringRef text, std::vector<StringPiece> &pieces) {
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '}')
      return std::pair<size_t, std::string>{i, "unmatched '}' in string"};
    if (text[i] != '{')
      continue;
    size_t close = text.find('}', i);
    if (close == llvm::StringRef::npos)
      return std::pair<size_t, std::string>{
          i, "unterminated '{' in string; expected '}'"};
    if (i > start)
      pieces.push_back({false, text.slice(start, i), start});
    pieces.push_back({true, text.slice(i + 1, close).trim(), i + 1});
    i = close;
    start = close + 1;
  }
  if (start < text.size())
    pieces.push_back({false, text.drop_front(start), start});
  return std::nullopt;
}

void ast::print(const Module &module, llvm::SourceMgr &sourceMgr,
                llvm::raw_ostream &os) {
  Printer(sourceMgr, os).print(module);
}
