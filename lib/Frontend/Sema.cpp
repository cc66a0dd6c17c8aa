//===- Sema.cpp - Static checks of a parsed .tfm module -------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Frontend/Sema.h"
#include "tfc/Dialect/Tfc/IR/TfcOps.h"
#include "tfc/Formats/DType.h"

#include "llvm/ADT/StringExtras.h"

#include "tfc/Frontend/Builtins.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <functional>

using namespace tfc;
using namespace tfc::ast;

/// The element types a description names (the dialect's, from the dtype
/// table).
static std::vector<std::string> elementTypeNames() {
  std::vector<std::string> names;
  for (llvm::StringRef n : mlir::tfc::elementTypeNames())
    names.push_back(n.str());
  return names;
}

bool tfc::isReservedName(llvm::StringRef name) {
  static const std::vector<std::string> dtypes = elementTypeNames();
  return llvm::is_contained(dtypes, name) ||
         llvm::is_contained({"int", "float", "str", "inf", "pi"}, name);
}

bool tfc::isQuantFormatName(llvm::StringRef name) {
  return ::tfc::rt::quantFormatByName(std::string_view(name)) != nullptr;
}

namespace {

enum class GlobalKind { Const, Dim, Weight, Block, Entry };

struct Global {
  GlobalKind kind;
  llvm::SMLoc loc;
  const FuncDecl *func = nullptr;
};

class Checker {
public:
  Checker(const Module &module, DiagnosticEngine &diags)
      : module(module), diags(diags) {}

  bool run();

private:
  void defineGlobal(const Ident &name, GlobalKind kind,
                    const FuncDecl *func = nullptr);
  void checkFunc(const FuncDecl &func);
  void checkBody(const Body &body, llvm::StringSet<> &locals);
  void checkExpr(const Expr &e, const llvm::StringSet<> *locals);
  void checkCall(const CallExpr &call, const llvm::StringSet<> *locals);
  /// The `{name}` parts of a string must name visible values.
  void checkString(const StringExpr &s, const llvm::StringSet<> *locals);
  /// Element types and scalar kinds of a declared type.
  /// `isWeight`: the block-quantised storage formats are allowed.
  void checkType(const TypeExpr &type, const llvm::StringSet<> *locals,
                 bool isWeight = false);
  void checkArgs(const CallExpr &call, llvm::ArrayRef<std::string> names,
                 const std::vector<bool> &optional, llvm::StringRef what);
  void unknownName(llvm::SMLoc loc, llvm::StringRef name,
                   const llvm::StringSet<> *locals);
  void checkRecursion();

  const Module &module;
  DiagnosticEngine &diags;
  llvm::StringMap<Global> globals;
  /// Consts defined so far while checking const initialisers in order.
  llvm::StringSet<> constsSoFar;
  bool inConsts = false;
  /// Block calls per function, for the recursion check.
  llvm::StringMap<std::vector<std::pair<std::string, llvm::SMLoc>>> calls;
  const FuncDecl *currentFunc = nullptr;
};

} // namespace

void Checker::defineGlobal(const Ident &name, GlobalKind kind,
                           const FuncDecl *func) {
  if (isReservedName(name.name)) {
    diags.error(name.loc, "'" + name.name + "' is a reserved name");
    return;
  }
  if ((kind == GlobalKind::Block || kind == GlobalKind::Entry) &&
      lookupBuiltin(name.name)) {
    diags.error(name.loc, "'" + name.name +
                              "' is the name of a built-in op; choose another "
                              "name");
    return;
  }
  auto [it, inserted] = globals.try_emplace(name.name, Global{kind, name.loc, func});
  if (!inserted) {
    diags.error(name.loc, "'" + name.name + "' is already defined");
    diags.note(it->second.loc, "previous definition of '" + name.name + "'");
  }
}

void Checker::unknownName(llvm::SMLoc loc, llvm::StringRef name,
                          const llvm::StringSet<> *locals) {
  std::vector<std::string> candidates;
  if (locals)
    for (const auto &l : *locals)
      candidates.push_back(l.getKey().str());
  for (const auto &g : globals)
    if (!inConsts || constsSoFar.contains(g.getKey()))
      candidates.push_back(g.getKey().str());
  for (const std::string &r : elementTypeNames())
    candidates.push_back(r);
  for (const char *r : {"inf", "pi"})
    candidates.push_back(r);
  if (inConsts && globals.count(name) &&
      globals.find(name)->second.kind == GlobalKind::Const) {
    diags.error(loc, "constant '" + name +
                         "' is used before its definition");
    return;
  }
  diags.error(loc, "unknown name '" + name + "'" +
                       DiagnosticEngine::suggest(name, candidates));
}

void Checker::checkExpr(const Expr &e, const llvm::StringSet<> *locals) {
  switch (e.getKind()) {
  case Expr::Kind::Int:
  case Expr::Kind::Float:
  case Expr::Kind::Bool:
    return;
  case Expr::Kind::String:
    checkString(llvm::cast<StringExpr>(e), locals);
    return;
  case Expr::Kind::Name: {
    const auto &name = llvm::cast<NameExpr>(e).name;
    if (isReservedName(name) || (locals && locals->contains(name)))
      return;
    auto it = globals.find(name);
    if (it == globals.end() ||
        (inConsts && !constsSoFar.contains(name) &&
         it->second.kind == GlobalKind::Const)) {
      unknownName(e.getLoc(), name, locals);
      return;
    }
    if (it->second.kind == GlobalKind::Block ||
        it->second.kind == GlobalKind::Entry)
      diags.error(e.getLoc(), "'" + name + "' is a " +
                                  (it->second.kind == GlobalKind::Block
                                       ? "block"
                                       : "entry") +
                                  ", not a value; call it as " + name + "(...)");
    else if (inConsts && it->second.kind != GlobalKind::Const)
      diags.error(e.getLoc(), "a constant can only use numbers and earlier "
                              "constants, but '" +
                                  name + "' is not a constant");
    return;
  }
  case Expr::Kind::Unary:
    checkExpr(*llvm::cast<UnaryExpr>(e).operand, locals);
    return;
  case Expr::Kind::Binary: {
    const auto &b = llvm::cast<BinaryExpr>(e);
    checkExpr(*b.lhs, locals);
    checkExpr(*b.rhs, locals);
    return;
  }
  case Expr::Kind::List:
    for (const ExprPtr &x : llvm::cast<ListExpr>(e).elements)
      checkExpr(*x, locals);
    return;
  case Expr::Kind::Call:
    checkCall(llvm::cast<CallExpr>(e), locals);
    return;
  }
}

void Checker::checkString(const StringExpr &str,
                          const llvm::StringSet<> *locals) {
  std::vector<StringPiece> pieces;
  if (auto error = splitTemplate(str.value, pieces)) {
    diags.error(locInString(str, error->first), error->second);
    return;
  }
  for (const StringPiece &piece : pieces) {
    if (!piece.isName)
      continue;
    llvm::StringRef name = piece.text;
    bool known = (locals && locals->contains(name)) ||
                 (globals.count(name) &&
                  globals.find(name)->second.kind == GlobalKind::Const &&
                  (!inConsts || constsSoFar.contains(name)));
    if (known)
      continue;
    std::vector<std::string> candidates;
    if (locals)
      for (const auto &l : *locals)
        candidates.push_back(l.getKey().str());
    for (const auto &g : globals)
      if (g.second.kind == GlobalKind::Const)
        candidates.push_back(g.getKey().str());
    diags.error(locInString(str, piece.offset),
                "unknown name '" + name + "' in string" +
                    DiagnosticEngine::suggest(name, candidates));
  }
}

void Checker::checkType(const TypeExpr &type,
                        const llvm::StringSet<> *locals, bool isWeight) {
  if (!type.isTensor()) {
    if (!llvm::is_contained({"int", "float", "bool", "str"}, type.scalar))
      diags.error(type.loc, "unknown type '" + type.scalar +
                                "'; expected int, float, bool, str or a "
                                "tensor type such as f32[batch, seq, "
                                "d_model]" +
                                DiagnosticEngine::suggest(
                                    type.scalar,
                                    {"int", "float", "bool", "str"}));
    return;
  }
  std::vector<std::string> dtypes = elementTypeNames();
  std::string list = llvm::join(dtypes, ", ");
  const std::string &d = type.dtype.name;
  if (isQuantFormatName(d)) {
    if (!isWeight)
      diags.error(type.dtype.loc,
                  "'" + d + "' is a storage format of weights (weight w: " +
                      d + "[n, k]); parameters take one of " + list);
  } else if (!d.empty() && !llvm::is_contained(dtypes, d))
    diags.error(type.dtype.loc,
                "unknown element type '" + d + "'" +
                    DiagnosticEngine::suggest(d, dtypes) +
                    " (expected one of " + list + ")");
  for (const ExprPtr &dim : type.dims) {
    checkExpr(*dim, locals);
    // Dims are sizes: numbers, constants and dim names, not computations
    // that would emit ops.
    std::function<const Expr *(const Expr &)> findCall =
        [&](const Expr &e) -> const Expr * {
      if (llvm::isa<CallExpr>(e))
        return &e;
      if (auto *u = llvm::dyn_cast<UnaryExpr>(&e))
        return findCall(*u->operand);
      if (auto *b = llvm::dyn_cast<BinaryExpr>(&e)) {
        if (const Expr *c = findCall(*b->lhs))
          return c;
        return findCall(*b->rhs);
      }
      return nullptr;
    };
    if (const Expr *call = findCall(*dim))
      diags.error(call->getLoc(), "a dim in a type must be a number, a "
                                  "constant or a dim name, not a call");
  }
}

void Checker::checkArgs(const CallExpr &call, llvm::ArrayRef<std::string> names,
                        const std::vector<bool> &optional,
                        llvm::StringRef what) {
  std::vector<bool> given(names.size());
  size_t positional = 0;
  for (const Arg &arg : call.args) {
    if (!arg.keyword) {
      if (positional >= names.size()) {
        diags.error(arg.value->getLoc(),
                    what + " takes at most " + llvm::Twine(names.size()) +
                        " argument" + (names.size() == 1 ? "" : "s") +
                        ", got " + llvm::Twine(call.args.size()));
        return;
      }
      given[positional++] = true;
      continue;
    }
    auto it = llvm::find(names, arg.keyword->name);
    if (it == names.end()) {
      diags.error(arg.keyword->loc,
                  what + " has no parameter '" + arg.keyword->name + "'" +
                      DiagnosticEngine::suggest(arg.keyword->name, names));
      continue;
    }
    size_t index = it - names.begin();
    if (given[index]) {
      diags.error(arg.keyword->loc, "argument '" + arg.keyword->name +
                                        "' of " + what + " is given twice");
      continue;
    }
    given[index] = true;
  }
  for (size_t i = 0; i < names.size(); ++i)
    if (!given[i] && !optional[i]) {
      diags.error(call.getLoc(), what + " is missing its argument '" +
                                     names[i] + "'");
      return;
    }
}

void Checker::checkCall(const CallExpr &call, const llvm::StringSet<> *locals) {
  for (const Arg &arg : call.args)
    checkExpr(*arg.value, locals);
  if (inConsts) {
    diags.error(call.getLoc(), "a constant cannot call '" + call.callee +
                                   "'; constants are numbers");
    return;
  }
  if (const BuiltinSpec *spec = lookupBuiltin(call.callee)) {
    std::vector<std::string> names;
    std::vector<bool> optional;
    for (const ParamSpec &p : spec->params) {
      names.push_back(p.name);
      optional.push_back(p.optional);
    }
    checkArgs(call, names, optional,
              "'" + call.callee + "' (" + signature(*spec) + ")");
    return;
  }
  auto it = globals.find(call.callee);
  if (it == globals.end() || !it->second.func) {
    std::vector<std::string> candidates;
    for (const BuiltinSpec &spec : allBuiltins())
      candidates.push_back(spec.name);
    for (const auto &g : globals)
      if (g.second.kind == GlobalKind::Block)
        candidates.push_back(g.getKey().str());
    if (it != globals.end() || (locals && locals->contains(call.callee)))
      diags.error(call.getLoc(), "'" + call.callee +
                                     "' is not a block or built-in op and "
                                     "cannot be called");
    else
      diags.error(call.getLoc(),
                  "unknown op or block '" + call.callee + "'" +
                      DiagnosticEngine::suggest(call.callee, candidates));
    return;
  }
  const FuncDecl *callee = it->second.func;
  if (callee->isEntry) {
    diags.error(call.getLoc(), "'" + call.callee +
                                   "' is an entry point and cannot be called; "
                                   "make it a block");
    return;
  }
  std::vector<std::string> names;
  for (const Param &p : callee->params)
    names.push_back(p.name.name);
  std::vector<bool> optional(names.size(), false);
  checkArgs(call, names, optional, "block '" + call.callee + "'");
  if (currentFunc)
    calls[currentFunc->name.name].push_back({call.callee, call.getLoc()});
}

void Checker::checkBody(const Body &body, llvm::StringSet<> &locals) {
  for (const StmtPtr &s : body) {
    if (auto *a = llvm::dyn_cast<AssignStmt>(s.get())) {
      checkExpr(*a->value, &locals);
      for (const Ident &t : a->targets) {
        if (isReservedName(t.name))
          diags.error(t.loc, "cannot assign to the reserved name '" + t.name +
                                 "'");
        else if (globals.count(t.name))
          diags.error(t.loc, "cannot assign to '" + t.name +
                                 "', which is defined at the top level");
        else
          locals.insert(t.name);
      }
    } else if (auto *w = llvm::dyn_cast<WeightStmt>(s.get())) {
      checkType(w->type, &locals, /*isWeight=*/true);
      checkExpr(*w->key, &locals);
      if (globals.count(w->name.name))
        diags.error(w->name.loc, "weight '" + w->name.name +
                                     "' shadows a top-level definition");
      locals.insert(w->name.name);
    } else if (auto *f = llvm::dyn_cast<ForStmt>(s.get())) {
      checkExpr(*f->lo, &locals);
      checkExpr(*f->hi, &locals);
      locals.insert(f->var.name);
      checkBody(f->body, locals);
    } else if (auto *i = llvm::dyn_cast<IfStmt>(s.get())) {
      checkExpr(*i->cond, &locals);
      checkBody(i->thenBody, locals);
      checkBody(i->elseBody, locals);
    } else if (auto *r = llvm::dyn_cast<ReturnStmt>(s.get())) {
      for (const ExprPtr &v : r->values)
        checkExpr(*v, &locals);
    } else if (auto *as = llvm::dyn_cast<AssertStmt>(s.get())) {
      checkExpr(*as->cond, &locals);
    }
  }
}

void Checker::checkFunc(const FuncDecl &func) {
  currentFunc = &func;
  llvm::StringSet<> locals;
  llvm::StringMap<llvm::SMLoc> params;
  for (const Param &p : func.params) {
    if (isReservedName(p.name.name)) {
      diags.error(p.name.loc, "'" + p.name.name + "' is a reserved name");
      continue;
    }
    auto [it, inserted] = params.try_emplace(p.name.name, p.name.loc);
    if (!inserted) {
      diags.error(p.name.loc, "parameter '" + p.name.name +
                                  "' is already defined");
      diags.note(it->second, "previous definition of '" + p.name.name + "'");
    }
    if (globals.count(p.name.name))
      diags.error(p.name.loc, "parameter '" + p.name.name +
                                  "' shadows a top-level definition");
    checkType(p.type, nullptr);
    locals.insert(p.name.name);
  }
  checkBody(func.body, locals);
  bool returns = llvm::any_of(func.body, [](const StmtPtr &s) {
    return llvm::isa<ReturnStmt>(s.get());
  });
  if (!returns)
    diags.error(func.endLoc, std::string(func.isEntry ? "entry" : "block") +
                                 " '" + func.name.name +
                                 "' has no 'return' statement");
  currentFunc = nullptr;
}

void Checker::checkRecursion() {
  // Depth-first search for a cycle in the block call graph.
  llvm::StringMap<int> state; // 0 unvisited, 1 on stack, 2 done
  std::function<bool(llvm::StringRef)> visit = [&](llvm::StringRef f) {
    state[f] = 1;
    for (auto &[callee, loc] : calls[f]) {
      int s = state.lookup(callee);
      if (s == 1) {
        diags.error(loc, "block '" + callee +
                             "' is called recursively (blocks are inlined, so "
                             "recursion cannot terminate)");
        return true;
      }
      if (s == 0 && visit(callee))
        return true;
    }
    state[f] = 2;
    return false;
  };
  for (const FuncDecl &f : module.funcs)
    if (state.lookup(f.name.name) == 0 && visit(f.name.name))
      return;
}

bool Checker::run() {
  unsigned before = diags.getNumErrors();
  // Constants are checked in order: each may use the ones before it.
  inConsts = true;
  for (const ConstDecl &c : module.consts) {
    checkExpr(*c.value, nullptr);
    defineGlobal(c.name, GlobalKind::Const);
    constsSoFar.insert(c.name.name);
  }
  for (const DimDecl &d : module.dims) {
    if (d.bound)
      checkExpr(*d.bound, nullptr);
    defineGlobal(d.name, GlobalKind::Dim);
  }
  for (const auto &a : module.asserts)
    checkExpr(*a->cond, nullptr);
  inConsts = false;
  for (const FuncDecl &f : module.funcs)
    defineGlobal(f.name, f.isEntry ? GlobalKind::Entry : GlobalKind::Block, &f);
  for (const auto &w : module.weights) {
    checkType(w->type, nullptr, /*isWeight=*/true);
    checkExpr(*w->key, nullptr);
    defineGlobal(w->name, GlobalKind::Weight);
  }
  for (const FuncDecl &f : module.funcs)
    checkFunc(f);
  checkRecursion();
  if (llvm::none_of(module.funcs,
                    [](const FuncDecl &f) { return f.isEntry; })) {
    llvm::SourceMgr &sm = diags.getSourceMgr();
    diags.error(llvm::SMLoc::getFromPointer(
                    sm.getMemoryBuffer(sm.getMainFileID())->getBufferStart()),
                "the model has no 'entry'; nothing to compile (declare one, "
                "e.g. 'entry forward(input_ids: i64[batch, seq]) { ... }')");
  }
  return diags.getNumErrors() == before;
}

bool tfc::checkModule(const Module &module, DiagnosticEngine &diags) {
  return Checker(module, diags).run();
}
