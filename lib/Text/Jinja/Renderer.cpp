//===- Renderer.cpp - The Jinja evaluator ---------------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Renders the AST (Jinja.h): statements, expressions with Python's
// operators, Jinja's filters, tests and globals, and the limits on work,
// output and depth.
//
//===----------------------------------------------------------------------===//

#include "Jinja.h"

#include "tfc/Formats/Utf8.h"

#include <utf8proc.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <optional>
#include <set>

using namespace tfc::rt;

namespace tfc::rt::jinja {

namespace {

enum class Flow { Normal, Break, Continue };

class Renderer {
public:
  Renderer(const ChatTemplateLimits &limits, std::string &out)
      : limits(limits), out(out) {}

  /// Variables, innermost scope last; the first holds the context.
  using Scope = std::vector<std::pair<std::string, Value>>;
  std::vector<Scope> scopes{1};

  static void assign(Scope &scope, const std::string &name, Value v) {
    for (auto &kv : scope)
      if (kv.first == name) {
        kv.second = std::move(v);
        return;
      }
    scope.emplace_back(name, std::move(v));
  }

  void render(const Body &body) { exec(body); }

private:
  void tick(size_t n = 1) {
    work += n;
    if (work > limits.maxWork)
      fail(here, "the template did more than " +
                     std::to_string(limits.maxWork) +
                     " steps of work (a loop that does not end?)");
  }

  /// Checks the size of a string or list about to be built.
  void checkSize(size_t bytes, size_t offset) {
    if (bytes > limits.maxOutput)
      fail(offset, "a value of more than " + std::to_string(limits.maxOutput) +
                       " bytes");
    tick(bytes / 64);
  }

  void emit(const std::string &s) {
    if (out.size() + s.size() > limits.maxOutput)
      fail(here,
           "the output exceeds " + std::to_string(limits.maxOutput) + " bytes");
    tick(s.size() / 64);
    out += s;
  }

  Value lookup(const std::string &name) const {
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it)
      for (const auto &kv : *it)
        if (kv.first == name)
          return kv.second;
    if (name == "raise_exception" || name == "range" || name == "namespace" ||
        name == "strftime_now" || name == "dict")
      return Value::func(name);
    return Value::undefined("'" + name + "' is undefined");
  }

  Flow exec(const Body &body) {
    for (const auto &n : body) {
      Flow f = exec(*n);
      if (f != Flow::Normal)
        return f;
    }
    return Flow::Normal;
  }

  /// Counts the evaluator's recursion.
  struct DepthGuard {
    DepthGuard(int &depth, size_t offset) : depth(depth) {
      if (++depth > kMaxEvalDepth)
        fail(offset, "the template recursed more than " +
                         std::to_string(kMaxEvalDepth) +
                         " levels deep (macros calling each other?)");
    }
    ~DepthGuard() { --depth; }
    int &depth;
  };

  Flow exec(const Node &n) {
    here = n.offset;
    DepthGuard guard(evalDepth, n.offset);
    tick();
    switch (n.kind) {
    case Node::Text:
      emit(n.text);
      return Flow::Normal;
    case Node::Output: {
      Value v = eval(*n.expr);
      emit(toStr(v));
      return Flow::Normal;
    }
    case Node::If:
      for (const auto &c : n.conds)
        if (truthy(eval(*c.first)))
          return exec(c.second);
      return exec(n.elseBody);
    case Node::For:
      return execFor(n);
    case Node::Set: {
      Value v = eval(*n.expr);
      if (n.attr.empty()) {
        assign(scopes.back(), n.text, std::move(v));
        return Flow::Normal;
      }
      Value target = lookup(n.text);
      if (target.kind != Value::Ns)
        fail(n.offset, "cannot assign attribute '" + n.attr + "' of '" +
                           n.text + "', which is not a namespace");
      if (v.kind == Value::Ns || v.holdsNs)
        fail(n.offset, "a namespace cannot hold a namespace");
      for (auto &kv : target.ns->attrs)
        if (kv.first == n.attr) {
          kv.second = std::move(v);
          return Flow::Normal;
        }
      target.ns->attrs.emplace_back(n.attr, std::move(v));
      return Flow::Normal;
    }
    case Node::SetBlock: {
      std::string saved;
      saved.swap(out);
      Flow f = exec(n.body);
      std::string captured;
      captured.swap(out);
      out.swap(saved);
      assign(scopes.back(), n.text, Value::str(std::move(captured)));
      return f;
    }
    case Node::Break:
      return Flow::Break;
    case Node::Continue:
      return Flow::Continue;
    case Node::Block:
      return exec(n.body);
    case Node::Macro: {
      Value m;
      m.kind = Value::Macro;
      m.s = n.text;
      m.macro = &n;
      assign(scopes.back(), n.text, std::move(m));
      return Flow::Normal;
    }
    }
    return Flow::Normal;
  }

  /// The items a for loop or a filter iterates over: list items, dict keys,
  /// string characters; undefined is empty.
  std::vector<Value> iterate(const Value &v, size_t offset) {
    std::vector<Value> items;
    switch (v.kind) {
    case Value::Undefined:
      return items;
    case Value::List:
      return *v.list;
    case Value::Dict:
      for (const auto &kv : *v.dict)
        items.push_back(Value::str(kv.first));
      return items;
    case Value::Ns:
      for (const auto &kv : v.ns->attrs)
        items.push_back(Value::str(kv.first));
      return items;
    case Value::Str: {
      std::vector<size_t> offs = codePointOffsets(v.s);
      tick(offs.size());
      for (size_t k = 0; k + 1 < offs.size(); ++k)
        items.push_back(Value::str(v.s.substr(offs[k], offs[k + 1] - offs[k])));
      return items;
    }
    default:
      fail(offset, std::string("'") + typeName(v) + "' object is not iterable");
    }
  }

  void bindTargets(const Node &n, const Value &item, Scope &scope) {
    if (n.targets.size() == 1) {
      assign(scope, n.targets[0], item);
      return;
    }
    std::vector<Value> parts = iterate(item, n.offset);
    if (parts.size() != n.targets.size())
      fail(n.offset, "cannot unpack " + std::to_string(parts.size()) +
                         " values into " + std::to_string(n.targets.size()) +
                         " loop variables");
    for (size_t k = 0; k < parts.size(); ++k)
      assign(scope, n.targets[k], parts[k]);
  }

  Flow execFor(const Node &n) {
    Value seq = eval(*n.expr);
    std::shared_ptr<const ValueList> items =
        seq.kind == Value::List
            ? seq.list
            : std::make_shared<const ValueList>(iterate(seq, n.expr->offset));
    if (n.filter) {
      ValueList kept;
      scopes.emplace_back();
      for (const Value &item : *items) {
        tick();
        scopes.back().clear();
        bindTargets(n, item, scopes.back());
        if (truthy(eval(*n.filter)))
          kept.push_back(item);
      }
      scopes.pop_back();
      items = std::make_shared<const ValueList>(std::move(kept));
    }
    if (items->empty())
      return exec(n.elseBody);
    Value loop;
    loop.kind = Value::Loop;
    loop.list = items;
    // One scope, emptied for each iteration: what the body sets lives for
    // one iteration, as in jinja2.
    scopes.emplace_back();
    for (size_t k = 0; k < items->size(); ++k) {
      tick();
      Scope &scope = scopes.back();
      scope.clear();
      bindTargets(n, (*items)[k], scope);
      loop.i = int64_t(k);
      scope.emplace_back("loop", loop);
      if (exec(n.body) == Flow::Break)
        break;
    }
    scopes.pop_back();
    return Flow::Normal;
  }

  [[noreturn]] void undefinedError(const Value &v, size_t offset) {
    fail(offset, v.s.empty() ? "undefined value" : v.s);
  }

  Value eval(const Expr &e) {
    DepthGuard guard(evalDepth, e.offset);
    tick();
    switch (e.kind) {
    case Expr::Lit:
      return e.lit;
    case Expr::Name:
      return lookup(e.name);
    case Expr::Attr:
      return getAttr(eval(*e.kids[0]), e.name, e.offset);
    case Expr::Item:
      return getItem(eval(*e.kids[0]), eval(*e.kids[1]), e.offset);
    case Expr::Slice:
      return slice(e);
    case Expr::Call:
      return call(e);
    case Expr::Filter:
      return filter(e);
    case Expr::Test: {
      bool r = test(e);
      return Value::boolean(e.negated ? !r : r);
    }
    case Expr::Neg:
    case Expr::Pos: {
      Value v = eval(*e.kids[0]);
      if (v.kind == Value::Undefined)
        undefinedError(v, e.offset);
      if (!v.isNumber())
        fail(e.offset, std::string("bad operand type for unary ") +
                           (e.kind == Expr::Neg ? "-" : "+") + ": '" +
                           typeName(v) + "'");
      if (e.kind == Expr::Pos)
        return v.kind == Value::Float ? v : Value::integer(v.asInt());
      if (v.kind == Value::Float)
        return Value::real(-v.f);
      if (v.asInt() == INT64_MIN)
        fail(e.offset, "integer overflow");
      return Value::integer(-v.asInt());
    }
    case Expr::Not:
      return Value::boolean(!truthy(eval(*e.kids[0])));
    case Expr::And: {
      Value l = eval(*e.kids[0]);
      return truthy(l) ? eval(*e.kids[1]) : l;
    }
    case Expr::Or: {
      Value l = eval(*e.kids[0]);
      return truthy(l) ? l : eval(*e.kids[1]);
    }
    case Expr::Bin:
      return binary(e.name, eval(*e.kids[0]), eval(*e.kids[1]), e.offset);
    case Expr::Cmp: {
      Value l = eval(*e.kids[0]);
      for (size_t k = 0; k < e.ops.size(); ++k) {
        Value r = eval(*e.kids[k + 1]);
        if (!compare(e.ops[k], l, r, e.offset))
          return Value::boolean(false);
        l = std::move(r);
      }
      return Value::boolean(true);
    }
    case Expr::Cond:
      if (truthy(eval(*e.kids[1])))
        return eval(*e.kids[0]);
      if (e.kids[2])
        return eval(*e.kids[2]);
      return Value::undefined("the inline if has no else branch");
    case Expr::ListLit: {
      ValueList items;
      for (const auto &k : e.kids)
        items.push_back(eval(*k));
      Value v = makeList(std::move(items), e.offset);
      v.tuple = e.name == "tuple";
      return v;
    }
    case Expr::DictLit: {
      ValueDict items;
      for (size_t k = 0; k < e.kids.size(); k += 2) {
        Value key = eval(*e.kids[k]);
        if (key.kind != Value::Str)
          fail(e.kids[k]->offset, "dict keys must be strings");
        Value v = eval(*e.kids[k + 1]);
        bool replaced = false;
        for (auto &kv : items)
          if (kv.first == key.s) {
            kv.second = v;
            replaced = true;
          }
        if (!replaced)
          items.emplace_back(key.s, std::move(v));
      }
      return makeDict(std::move(items), e.offset);
    }
    }
    fail(e.offset, "internal error: unknown expression");
  }

  static std::string objectName(const Value &v) {
    return std::string("'") + typeName(v) + " object'";
  }

  Value getAttr(const Value &obj, const std::string &name, size_t offset) {
    switch (obj.kind) {
    case Value::Loop: {
      int64_t k = obj.i, len = int64_t(obj.list->size());
      if (name == "index")
        return Value::integer(k + 1);
      if (name == "index0")
        return Value::integer(k);
      if (name == "revindex")
        return Value::integer(len - k);
      if (name == "revindex0")
        return Value::integer(len - k - 1);
      if (name == "first")
        return Value::boolean(k == 0);
      if (name == "last")
        return Value::boolean(k + 1 == len);
      if (name == "length")
        return Value::integer(len);
      if (name == "depth")
        return Value::integer(1);
      if (name == "depth0")
        return Value::integer(0);
      if (name == "previtem")
        return k > 0 ? (*obj.list)[size_t(k - 1)]
                     : Value::undefined("there is no previous item");
      if (name == "nextitem")
        return k + 1 < len ? (*obj.list)[size_t(k + 1)]
                           : Value::undefined("there is no next item");
      break;
    }
    case Value::Undefined:
      undefinedError(obj, offset);
    case Value::Dict:
      if (const Value *v = dictFind(*obj.dict, name))
        return *v;
      break;
    case Value::Ns:
      if (const Value *v = dictFind(obj.ns->attrs, name))
        return *v;
      break;
    default:
      break;
    }
    return Value::undefined(objectName(obj) + " has no attribute '" + name +
                            "'");
  }

  /// Python's index normalisation; false when out of range.
  static bool normIndex(int64_t &k, size_t size) {
    if (k < 0)
      k += int64_t(size);
    return k >= 0 && k < int64_t(size);
  }

  Value getItem(const Value &obj, const Value &key, size_t offset) {
    switch (obj.kind) {
    case Value::Undefined:
      undefinedError(obj, offset);
    case Value::Dict:
      if (key.kind == Value::Str) {
        if (const Value *v = dictFind(*obj.dict, key.s))
          return *v;
        return Value::undefined(objectName(obj) + " has no attribute '" +
                                key.s + "'");
      }
      break;
    case Value::Ns:
      if (key.kind == Value::Str)
        return getAttr(obj, key.s, offset);
      break;
    case Value::List:
      if (key.isIntLike()) {
        int64_t k = key.asInt();
        if (normIndex(k, obj.list->size()))
          return (*obj.list)[size_t(k)];
        return Value::undefined(objectName(obj) + " has no element " +
                                std::to_string(key.asInt()));
      }
      break;
    case Value::Str:
      if (key.isIntLike()) {
        std::vector<size_t> offs = codePointOffsets(obj.s);
        tick(offs.size() / 64);
        int64_t k = key.asInt();
        if (normIndex(k, offs.size() - 1))
          return Value::str(obj.s.substr(offs[size_t(k)], offs[size_t(k) + 1] -
                                                              offs[size_t(k)]));
        return Value::undefined(objectName(obj) + " has no element " +
                                std::to_string(key.asInt()));
      }
      break;
    default:
      break;
    }
    if (key.kind == Value::Str)
      return getAttr(obj, key.s, offset);
    std::string k;
    appendStr(key, k, true);
    return Value::undefined(objectName(obj) + " has no element " + k);
  }

  Value slice(const Expr &e) {
    Value obj = eval(*e.kids[0]);
    if (obj.kind == Value::Undefined)
      undefinedError(obj, e.offset);
    int64_t bound[3];
    bool given[3];
    for (int k = 0; k < 3; ++k) {
      given[k] = false;
      if (!e.kids[k + 1])
        continue;
      Value v = eval(*e.kids[k + 1]);
      if (v.kind == Value::None)
        continue;
      if (!v.isIntLike())
        fail(e.offset, "slice indices must be integers or None");
      bound[k] = v.asInt();
      given[k] = true;
    }
    int64_t step = given[2] ? bound[2] : 1;
    if (step == 0)
      fail(e.offset, "slice step cannot be zero");
    std::vector<size_t> offs;
    size_t size;
    if (obj.kind == Value::List) {
      size = obj.list->size();
    } else if (obj.kind == Value::Str) {
      offs = codePointOffsets(obj.s);
      size = offs.size() - 1;
    } else {
      fail(e.offset,
           std::string("'") + typeName(obj) + "' object is not subscriptable");
    }
    // CPython's PySlice_AdjustIndices.
    int64_t n = int64_t(size);
    auto adjust = [&](int k, int64_t dflt) {
      if (!given[k])
        return dflt;
      int64_t v = bound[k];
      if (v < 0) {
        v += n;
        if (v < 0)
          v = step < 0 ? -1 : 0;
      } else if (v >= n) {
        v = step < 0 ? n - 1 : n;
      }
      return v;
    };
    int64_t start = adjust(0, step < 0 ? n - 1 : 0);
    int64_t stop = adjust(1, step < 0 ? -1 : n);
    std::vector<size_t> picked;
    for (int64_t k = start; step > 0 ? k < stop : k > stop; k += step)
      picked.push_back(size_t(k));
    tick(picked.size());
    if (obj.kind == Value::List) {
      ValueList items;
      for (size_t k : picked)
        items.push_back((*obj.list)[k]);
      return makeList(std::move(items), e.offset);
    }
    std::string s;
    for (size_t k : picked)
      s += obj.s.substr(offs[k], offs[k + 1] - offs[k]);
    return Value::str(std::move(s));
  }

  /// Arguments of a call, filter or test: positional values and keywords.
  struct Args {
    std::vector<Value> pos;
    std::vector<std::pair<std::string, Value>> kw;
    size_t offset;
    std::string what;

    const Value *get(size_t index, const char *name) const {
      for (const auto &kv : kw)
        if (kv.first == name)
          return &kv.second;
      return index < pos.size() ? &pos[index] : nullptr;
    }
    void check(size_t maxPositional,
               std::initializer_list<const char *> names) const {
      if (pos.size() > maxPositional)
        fail(offset, what + " takes at most " + std::to_string(maxPositional) +
                         " positional argument" +
                         (maxPositional == 1 ? "" : "s") + ", got " +
                         std::to_string(pos.size()));
      for (const auto &kv : kw) {
        bool known = false;
        for (const char *n : names)
          known |= kv.first == n;
        if (!known)
          fail(offset, what + " has no argument '" + kv.first + "'");
      }
    }
  };

  Args evalArgs(const Expr &e, size_t first, std::string what) {
    Args a;
    a.offset = e.offset;
    a.what = std::move(what);
    for (size_t k = first; k < e.kids.size(); ++k) {
      Value v = eval(*e.kids[k]);
      const std::string &kw = e.keywords[k - first];
      if (kw.empty())
        a.pos.push_back(std::move(v));
      else
        a.kw.emplace_back(kw, std::move(v));
    }
    return a;
  }

  std::string strArg(const Args &a, size_t index, const char *name,
                     const char *dflt = nullptr) {
    const Value *v = a.get(index, name);
    if (!v) {
      if (dflt)
        return dflt;
      fail(a.offset, a.what + " needs the argument '" + name + "'");
    }
    if (v->kind != Value::Str)
      fail(a.offset, a.what + ": '" + name + "' must be a string, not '" +
                         typeName(*v) + "'");
    return v->s;
  }

  int64_t intArg(const Args &a, size_t index, const char *name,
                 std::optional<int64_t> dflt = std::nullopt) {
    const Value *v = a.get(index, name);
    if (!v || v->kind == Value::None) {
      if (dflt)
        return *dflt;
      fail(a.offset, a.what + " needs the argument '" + name + "'");
    }
    if (!v->isIntLike())
      fail(a.offset, a.what + ": '" + name + "' must be an integer, not '" +
                         typeName(*v) + "'");
    return v->asInt();
  }

  Value call(const Expr &e) {
    const Expr &callee = *e.kids[0];
    if (callee.kind == Expr::Attr) {
      Value obj = eval(*callee.kids[0]);
      if (obj.kind == Value::Undefined)
        undefinedError(obj, callee.offset);
      // Methods of str, dict and list come first (jinja2's getattr finds
      // them before items); a namespace's attributes are values.
      if (obj.kind != Value::Ns)
        return method(
            obj, callee.name,
            evalArgs(e, 1,
                     std::string(typeName(obj)) + "." + callee.name + "()"));
    }
    Value f = eval(callee);
    if (f.kind == Value::Undefined)
      undefinedError(f, callee.offset);
    if (f.kind == Value::Macro)
      return callMacro(*f.macro, e);
    if (f.kind != Value::Func)
      fail(e.offset,
           std::string("'") + typeName(f) + "' object is not callable");
    Args a = evalArgs(e, 1, f.s + "()");
    if (f.s == "raise_exception") {
      a.check(1, {"message"});
      std::string msg;
      if (const Value *m = a.get(0, "message"))
        msg = toStr(*m);
      fail(e.offset, "the template raised an exception: " + msg);
    }
    if (f.s == "range") {
      a.check(3, {});
      if (a.pos.empty())
        fail(e.offset, "range() needs at least one argument");
      int64_t start = 0, stop, step = 1;
      for (const Value &v : a.pos)
        if (!v.isIntLike())
          fail(e.offset, std::string("range() takes integers, not '") +
                             typeName(v) + "'");
      if (a.pos.size() == 1) {
        stop = a.pos[0].asInt();
      } else {
        start = a.pos[0].asInt();
        stop = a.pos[1].asInt();
        if (a.pos.size() == 3)
          step = a.pos[2].asInt();
      }
      if (step == 0)
        fail(e.offset, "range() step must not be zero");
      ValueList items;
      for (int64_t k = start; step > 0 ? k < stop : k > stop; k += step) {
        if (items.size() >= kMaxListLength)
          fail(e.offset, "range() of more than " +
                             std::to_string(kMaxListLength) + " items");
        tick();
        items.push_back(Value::integer(k));
        if ((step > 0 && k > INT64_MAX - step) ||
            (step < 0 && k < INT64_MIN - step))
          break;
      }
      return makeList(std::move(items), e.offset);
    }
    if (f.s == "namespace" || f.s == "dict") {
      ValueDict attrs;
      if (!a.pos.empty()) {
        if (a.pos.size() > 1 || a.pos[0].kind != Value::Dict)
          fail(e.offset, f.s + "() takes keyword arguments or one dict");
        attrs = *a.pos[0].dict;
      }
      for (auto &kv : a.kw) {
        bool replaced = false;
        for (auto &old : attrs)
          if (old.first == kv.first) {
            old.second = kv.second;
            replaced = true;
          }
        if (!replaced)
          attrs.push_back(kv);
      }
      if (f.s == "dict")
        return makeDict(std::move(attrs), e.offset);
      for (const auto &kv : attrs)
        if (kv.second.kind == Value::Ns || kv.second.holdsNs)
          fail(e.offset, "a namespace cannot hold a namespace");
      Value v;
      v.kind = Value::Ns;
      v.ns = std::make_shared<Namespace>();
      v.ns->attrs = std::move(attrs);
      return v;
    }
    if (f.s == "strftime_now") {
      a.check(1, {"format"});
      std::string fmt = strArg(a, 0, "format");
      std::time_t now = std::time(nullptr);
      std::tm tm{};
      localtime_r(&now, &tm);
      char buf[512];
      size_t len =
          fmt.empty() ? 0 : std::strftime(buf, sizeof buf, fmt.c_str(), &tm);
      return Value::str(std::string(buf, len));
    }
    fail(e.offset, "unknown function '" + f.s + "'");
  }

  /// A macro call: the macro sees the template's top-level variables and its
  /// parameters, not the caller's loop variables; it returns its output.
  Value callMacro(const Node &def, const Expr &e) {
    Args a = evalArgs(e, 1, "macro '" + def.text + "'");
    size_t nparams = def.targets.size();
    if (a.pos.size() > nparams)
      fail(e.offset, a.what + " takes " + std::to_string(nparams) +
                         " argument" + (nparams == 1 ? "" : "s") + ", not " +
                         std::to_string(a.pos.size()));
    for (const auto &kv : a.kw)
      if (std::find(def.targets.begin(), def.targets.end(), kv.first) ==
          def.targets.end())
        fail(e.offset, a.what + " has no parameter '" + kv.first + "'");
    if (++macroDepth > kMaxMacroDepth)
      fail(e.offset, "macros called more than " +
                         std::to_string(kMaxMacroDepth) + " deep");
    std::vector<Scope> saved = std::move(scopes);
    scopes.clear();
    scopes.push_back(saved.front());
    scopes.emplace_back();
    for (size_t k = 0; k < nparams; ++k) {
      const std::string &param = def.targets[k];
      if (const Value *v = a.get(k, param.c_str()))
        assign(scopes.back(), param, *v);
      else if (def.defaults[k])
        assign(scopes.back(), param, eval(*def.defaults[k]));
      else
        assign(scopes.back(), param,
               Value::undefined("'" + param +
                                "' is undefined (no argument "
                                "for macro '" +
                                def.text + "')"));
    }
    std::string caller;
    caller.swap(out);
    exec(def.body);
    std::string result;
    result.swap(out);
    out.swap(caller);
    scopes = std::move(saved);
    --macroDepth;
    return Value::str(std::move(result));
  }

  Value method(const Value &obj, const std::string &name, const Args &a) {
    if (obj.kind == Value::Loop && name == "cycle") {
      if (a.pos.empty() || !a.kw.empty())
        fail(a.offset, "loop.cycle() takes one or more positional values");
      return a.pos[size_t(obj.i) % a.pos.size()];
    }
    if (obj.kind == Value::Str) {
      const std::string &s = obj.s;
      if (name == "strip" || name == "lstrip" || name == "rstrip") {
        a.check(1, {});
        std::string chars;
        bool haveChars = !a.pos.empty() && a.pos[0].kind != Value::None;
        if (haveChars)
          chars = strArg(a, 0, "chars");
        return Value::str(stripChars(s, name != "rstrip", name != "lstrip",
                                     haveChars ? &chars : nullptr));
      }
      if (name == "startswith" || name == "endswith") {
        a.check(1, {});
        if (a.pos.empty())
          fail(a.offset, a.what + " needs an argument");
        std::vector<std::string> affixes;
        if (a.pos[0].kind == Value::List) {
          for (const Value &v : *a.pos[0].list) {
            if (v.kind != Value::Str)
              fail(a.offset, a.what + " takes strings");
            affixes.push_back(v.s);
          }
        } else {
          affixes.push_back(strArg(a, 0, "prefix"));
        }
        for (const std::string &x : affixes) {
          if (x.size() > s.size())
            continue;
          if (name == "startswith"
                  ? s.compare(0, x.size(), x) == 0
                  : s.compare(s.size() - x.size(), x.size(), x) == 0)
            return Value::boolean(true);
        }
        return Value::boolean(false);
      }
      if (name == "lower" || name == "upper" || name == "title" ||
          name == "capitalize") {
        a.check(0, {});
        return Value::str(mapCase(s, name == "lower"   ? Case::Lower
                                     : name == "upper" ? Case::Upper
                                     : name == "title" ? Case::Title
                                                       : Case::Capitalize));
      }
      if (name == "replace") {
        a.check(3, {});
        std::string from = strArg(a, 0, "old"), to = strArg(a, 1, "new");
        int64_t count = intArg(a, 2, "count", -1);
        return Value::str(replaceAll(s, from, to, count, a.offset));
      }
      if (name == "split" || name == "rsplit") {
        a.check(2, {"sep", "maxsplit"});
        const Value *sepv = a.get(0, "sep");
        int64_t maxsplit = intArg(a, 1, "maxsplit", -1);
        ValueList parts;
        if (!sepv || sepv->kind == Value::None) {
          // Runs of white space; none at the ends.
          std::vector<std::string> words;
          size_t k = 0;
          while (k < s.size()) {
            while (size_t w = spaceAt(s, k))
              k += w;
            if (k >= s.size())
              break;
            if (maxsplit >= 0 && int64_t(words.size()) == maxsplit &&
                name == "split") {
              words.push_back(stripChars(s.substr(k), false, true, nullptr));
              break;
            }
            size_t b = k;
            while (k < s.size() && !spaceAt(s, k))
              k += charLen(s, k);
            words.push_back(s.substr(b, k - b));
          }
          for (auto &w : words)
            parts.push_back(Value::str(std::move(w)));
        } else {
          if (sepv->kind != Value::Str)
            fail(a.offset, a.what + ": the separator must be a string");
          const std::string &sep = sepv->s;
          if (sep.empty())
            fail(a.offset, a.what + ": empty separator");
          std::vector<std::string> pieces;
          if (name == "split") {
            size_t b = 0;
            while (true) {
              size_t f = (maxsplit >= 0 && int64_t(pieces.size()) >= maxsplit)
                             ? std::string::npos
                             : s.find(sep, b);
              if (f == std::string::npos) {
                pieces.push_back(s.substr(b));
                break;
              }
              pieces.push_back(s.substr(b, f - b));
              b = f + sep.size();
            }
          } else {
            size_t e = s.size();
            while (true) {
              size_t f =
                  (maxsplit >= 0 && int64_t(pieces.size()) >= maxsplit) ||
                          e < sep.size()
                      ? std::string::npos
                      : s.rfind(sep, e - sep.size());
              if (f == std::string::npos) {
                pieces.push_back(s.substr(0, e));
                break;
              }
              pieces.push_back(s.substr(f + sep.size(), e - f - sep.size()));
              e = f;
            }
            std::reverse(pieces.begin(), pieces.end());
          }
          for (auto &p : pieces)
            parts.push_back(Value::str(std::move(p)));
        }
        tick(parts.size());
        return makeList(std::move(parts), a.offset);
      }
      if (name == "find" || name == "count") {
        a.check(1, {});
        std::string sub = strArg(a, 0, "sub");
        if (name == "find") {
          size_t f = s.find(sub);
          return Value::integer(f == std::string::npos
                                    ? -1
                                    : int64_t(codePointCount(s.substr(0, f))));
        }
        if (sub.empty())
          return Value::integer(int64_t(codePointCount(s) + 1));
        int64_t n = 0;
        for (size_t f = s.find(sub); f != std::string::npos;
             f = s.find(sub, f + sub.size()))
          ++n;
        return Value::integer(n);
      }
      if (name == "join") {
        a.check(1, {});
        if (a.pos.empty())
          fail(a.offset, a.what + " needs an argument");
        std::string r;
        std::vector<Value> items = iterate(a.pos[0], a.offset);
        for (size_t k = 0; k < items.size(); ++k) {
          if (k)
            r += s;
          if (items[k].kind != Value::Str)
            fail(a.offset, a.what + ": item " + std::to_string(k) + " is '" +
                               typeName(items[k]) + "', not a string");
          r += items[k].s;
          checkSize(r.size(), a.offset);
        }
        return Value::str(std::move(r));
      }
      if (name == "isspace") {
        a.check(0, {});
        size_t k = 0;
        while (size_t w = spaceAt(s, k))
          k += w;
        return Value::boolean(!s.empty() && k == s.size());
      }
      if (name == "isdigit" || name == "isalpha") {
        a.check(0, {});
        bool r = !s.empty();
        for (unsigned char c : s)
          r &= name == "isdigit" ? std::isdigit(c) != 0 : std::isalpha(c) != 0;
        return Value::boolean(r);
      }
    } else if (obj.kind == Value::Dict) {
      const ValueDict &d = *obj.dict;
      if (name == "items" || name == "keys" || name == "values") {
        a.check(0, {});
        ValueList items;
        for (const auto &kv : d) {
          if (name == "items") {
            items.push_back(
                makeList({Value::str(kv.first), kv.second}, a.offset));
            items.back().tuple = true;
          } else if (name == "keys")
            items.push_back(Value::str(kv.first));
          else
            items.push_back(kv.second);
        }
        tick(items.size());
        return makeList(std::move(items), a.offset);
      }
      if (name == "get") {
        a.check(2, {});
        if (a.pos.empty())
          fail(a.offset, a.what + " needs a key");
        if (a.pos[0].kind == Value::Str)
          if (const Value *v = dictFind(d, a.pos[0].s))
            return *v;
        return a.pos.size() > 1 ? a.pos[1] : Value::none();
      }
    }
    fail(a.offset, objectName(obj) + " has no method '" + name + "'");
  }

  std::string replaceAll(const std::string &s, const std::string &from,
                         const std::string &to, int64_t count, size_t offset) {
    std::string r;
    if (from.empty()) {
      // Python inserts `to` around every character.
      std::vector<size_t> offs = codePointOffsets(s);
      for (size_t k = 0; k + 1 < offs.size(); ++k) {
        if (count < 0 || int64_t(k) < count)
          r += to;
        r += s.substr(offs[k], offs[k + 1] - offs[k]);
        checkSize(r.size(), offset);
      }
      if (count < 0 || int64_t(offs.size() - 1) < count)
        r += to;
      return r;
    }
    size_t b = 0;
    int64_t done = 0;
    while (true) {
      size_t f =
          count >= 0 && done >= count ? std::string::npos : s.find(from, b);
      if (f == std::string::npos) {
        r += s.substr(b);
        break;
      }
      r += s.substr(b, f - b);
      r += to;
      checkSize(r.size(), offset);
      b = f + from.size();
      ++done;
    }
    checkSize(r.size(), offset);
    return r;
  }

  Value binary(const std::string &op, const Value &l, const Value &r,
               size_t offset) {
    if (op == "~") {
      std::string s = toStr(l);
      std::string rs = toStr(r);
      checkSize(s.size() + rs.size(), offset);
      s += rs;
      return Value::str(std::move(s));
    }
    if (l.kind == Value::Undefined)
      undefinedError(l, offset);
    if (r.kind == Value::Undefined)
      undefinedError(r, offset);
    auto typeError = [&]() -> Value {
      fail(offset, "unsupported operand types for " + op + ": '" + typeName(l) +
                       "' and '" + typeName(r) + "'");
    };
    if (l.isNumber() && r.isNumber()) {
      bool ints = l.isIntLike() && r.isIntLike();
      int64_t a = l.asInt(), b = r.asInt(), res;
      double x = l.asDouble(), y = r.asDouble();
      if (op == "+") {
        if (!ints)
          return Value::real(x + y);
        if (__builtin_add_overflow(a, b, &res))
          fail(offset, "integer overflow");
        return Value::integer(res);
      }
      if (op == "-") {
        if (!ints)
          return Value::real(x - y);
        if (__builtin_sub_overflow(a, b, &res))
          fail(offset, "integer overflow");
        return Value::integer(res);
      }
      if (op == "*") {
        if (!ints)
          return Value::real(x * y);
        if (__builtin_mul_overflow(a, b, &res))
          fail(offset, "integer overflow");
        return Value::integer(res);
      }
      if (op == "/") {
        if (y == 0)
          fail(offset, "division by zero");
        return Value::real(x / y);
      }
      if (op == "//" || op == "%") {
        if (ints) {
          if (b == 0)
            fail(offset, "integer division or modulo by zero");
          if (a == INT64_MIN && b == -1)
            fail(offset, "integer overflow");
          int64_t q = a / b, m = a % b;
          if (m != 0 && ((m < 0) != (b < 0))) {
            --q;
            m += b;
          }
          return Value::integer(op == "//" ? q : m);
        }
        if (y == 0)
          fail(offset, "float division by zero");
        double m = std::fmod(x, y);
        if (m != 0 && ((m < 0) != (y < 0)))
          m += y;
        return Value::real(op == "//" ? std::floor(x / y) : m);
      }
      if (op == "**") {
        if (ints && b >= 0) {
          int64_t acc = 1, base = a;
          for (int64_t e = b; e > 0; e >>= 1) {
            if (e & 1)
              if (__builtin_mul_overflow(acc, base, &acc))
                fail(offset, "integer overflow");
            if (e > 1 && __builtin_mul_overflow(base, base, &base))
              fail(offset, "integer overflow");
          }
          return Value::integer(acc);
        }
        return Value::real(std::pow(x, y));
      }
      return typeError();
    }
    if (op == "+") {
      if (l.kind == Value::Str && r.kind == Value::Str) {
        checkSize(l.s.size() + r.s.size(), offset);
        return Value::str(l.s + r.s);
      }
      if (l.kind == Value::List && r.kind == Value::List) {
        tick(l.list->size() + r.list->size());
        if (l.list->size() + r.list->size() > kMaxListLength)
          fail(offset, "a list of more than " + std::to_string(kMaxListLength) +
                           " items");
        ValueList items = *l.list;
        items.insert(items.end(), r.list->begin(), r.list->end());
        return makeList(std::move(items), offset);
      }
      return typeError();
    }
    if (op == "*") {
      const Value *seq = l.isIntLike() ? &r : &l;
      const Value *count = l.isIntLike() ? &l : &r;
      if (!count->isIntLike() ||
          (seq->kind != Value::Str && seq->kind != Value::List))
        return typeError();
      int64_t n = std::max<int64_t>(0, count->asInt());
      size_t unit = seq->kind == Value::Str ? seq->s.size() : seq->list->size();
      if (unit && uint64_t(n) > limits.maxOutput / unit)
        fail(offset, "a value of more than " +
                         std::to_string(limits.maxOutput) + " bytes");
      checkSize(size_t(n) * unit, offset);
      if (seq->kind == Value::Str) {
        std::string s;
        for (int64_t k = 0; k < n; ++k)
          s += seq->s;
        return Value::str(std::move(s));
      }
      if (size_t(n) * unit > kMaxListLength)
        fail(offset, "a list of more than " + std::to_string(kMaxListLength) +
                         " items");
      tick(size_t(n) * unit);
      ValueList items;
      for (int64_t k = 0; k < n; ++k)
        items.insert(items.end(), seq->list->begin(), seq->list->end());
      return makeList(std::move(items), offset);
    }
    if (op == "%" && l.kind == Value::Str)
      fail(offset, "string formatting with '%' is not supported");
    return typeError();
  }

  bool equal(const Value &l, const Value &r) {
    tick();
    if (l.isNumber() && r.isNumber())
      return l.asDouble() == r.asDouble() &&
             (!(l.isIntLike() && r.isIntLike()) || l.asInt() == r.asInt());
    if (l.kind != r.kind || l.tuple != r.tuple)
      return false;
    switch (l.kind) {
    case Value::Undefined:
    case Value::None:
      return true;
    case Value::Str:
      return l.s == r.s;
    case Value::List:
      if (l.list->size() != r.list->size())
        return false;
      for (size_t k = 0; k < l.list->size(); ++k)
        if (!equal((*l.list)[k], (*r.list)[k]))
          return false;
      return true;
    case Value::Dict:
      if (l.dict->size() != r.dict->size())
        return false;
      for (const auto &kv : *l.dict) {
        const Value *o = dictFind(*r.dict, kv.first);
        if (!o || !equal(kv.second, *o))
          return false;
      }
      return true;
    case Value::Ns:
      return l.ns == r.ns;
    case Value::Func:
      return l.s == r.s;
    case Value::Macro:
      return l.macro == r.macro;
    default:
      return false;
    }
  }

  /// -1, 0, 1 for Python's ordering of numbers, strings and lists.
  int order(const Value &l, const Value &r, const std::string &op,
            size_t offset) {
    if (l.kind == Value::Undefined)
      undefinedError(l, offset);
    if (r.kind == Value::Undefined)
      undefinedError(r, offset);
    if (l.isNumber() && r.isNumber()) {
      if (l.isIntLike() && r.isIntLike())
        return l.asInt() < r.asInt() ? -1 : l.asInt() > r.asInt();
      double x = l.asDouble(), y = r.asDouble();
      return x < y ? -1 : x > y ? 1 : 0;
    }
    if (l.kind == Value::Str && r.kind == Value::Str) {
      int c = l.s.compare(r.s);
      return c < 0 ? -1 : c > 0;
    }
    if (l.kind == Value::List && r.kind == Value::List) {
      size_t n = std::min(l.list->size(), r.list->size());
      for (size_t k = 0; k < n; ++k)
        if (!equal((*l.list)[k], (*r.list)[k]))
          return order((*l.list)[k], (*r.list)[k], op, offset);
      return l.list->size() < r.list->size()   ? -1
             : l.list->size() > r.list->size() ? 1
                                               : 0;
    }
    fail(offset, "'" + op + "' is not supported between '" + typeName(l) +
                     "' and '" + typeName(r) + "'");
  }

  bool contains(const Value &container, const Value &item, size_t offset) {
    switch (container.kind) {
    case Value::Undefined:
      return false;
    case Value::Str:
      if (item.kind != Value::Str)
        fail(offset, std::string("'in <string>' requires a string, not '") +
                         typeName(item) + "'");
      return container.s.find(item.s) != std::string::npos;
    case Value::List:
      for (const Value &v : *container.list)
        if (equal(v, item))
          return true;
      return false;
    case Value::Dict:
      return item.kind == Value::Str && dictFind(*container.dict, item.s);
    case Value::Ns:
      return item.kind == Value::Str && dictFind(container.ns->attrs, item.s);
    default:
      fail(offset, std::string("argument of type '") + typeName(container) +
                       "' is not iterable");
    }
  }

  bool compare(const std::string &op, const Value &l, const Value &r,
               size_t offset) {
    if (op == "==")
      return equal(l, r);
    if (op == "!=")
      return !equal(l, r);
    if (op == "in")
      return contains(r, l, offset);
    if (op == "not in")
      return !contains(r, l, offset);
    int c = order(l, r, op, offset);
    if (op == "<")
      return c < 0;
    if (op == "<=")
      return c <= 0;
    if (op == ">")
      return c > 0;
    return c >= 0;
  }

  size_t length(const Value &v, size_t offset) {
    switch (v.kind) {
    case Value::Undefined:
      return 0;
    case Value::Str:
      return codePointCount(v.s);
    case Value::List:
      return v.list->size();
    case Value::Dict:
      return v.dict->size();
    case Value::Ns:
      return v.ns->attrs.size();
    default:
      fail(offset,
           std::string("object of type '") + typeName(v) + "' has no len()");
    }
  }

  Value filter(const Expr &e) {
    Value v = eval(*e.kids[0]);
    const std::string &f = e.name;
    Args a = evalArgs(e, 1, "filter '" + f + "'");
    if (f == "trim") {
      a.check(1, {"chars"});
      std::string chars;
      const Value *c = a.get(0, "chars");
      if (c && c->kind != Value::None)
        chars = strArg(a, 0, "chars");
      return Value::str(
          stripChars(toStr(v), true, true,
                     c && c->kind != Value::None ? &chars : nullptr));
    }
    if (f == "length" || f == "count") {
      a.check(0, {});
      return Value::integer(int64_t(length(v, e.offset)));
    }
    if (f == "tojson") {
      a.check(4, {"ensure_ascii", "indent", "separators", "sort_keys"});
      int indent = -1;
      if (const Value *iv = a.get(1, "indent"); iv && iv->kind != Value::None) {
        if (!iv->isIntLike() || iv->asInt() < 0 || iv->asInt() > 64)
          fail(e.offset, "tojson: indent must be an integer in [0, 64]");
        indent = int(iv->asInt());
      }
      if (const Value *ea = a.get(0, "ensure_ascii"); ea && truthy(*ea))
        fail(e.offset, "tojson: ensure_ascii=True is not supported");
      if (const Value *sp = a.get(2, "separators");
          sp && sp->kind != Value::None)
        fail(e.offset, "tojson: separators are not supported");
      bool sortKeys = false;
      if (const Value *sk = a.get(3, "sort_keys"))
        sortKeys = truthy(*sk);
      std::string s;
      appendJson(v, s, indent, sortKeys, 0, e.offset);
      checkSize(s.size(), e.offset);
      return Value::str(std::move(s));
    }
    if (f == "upper" || f == "lower" || f == "capitalize" || f == "title") {
      a.check(0, {});
      return Value::str(mapCase(toStr(v), f == "lower"   ? Case::Lower
                                          : f == "upper" ? Case::Upper
                                          : f == "title" ? Case::JinjaTitle
                                                         : Case::Capitalize));
    }
    if (f == "first" || f == "last") {
      a.check(0, {});
      std::vector<Value> items = iterate(v, e.offset);
      if (items.empty())
        return Value::undefined("'" + f + "' of an empty sequence");
      return f == "first" ? items.front() : items.back();
    }
    if (f == "default" || f == "d") {
      a.check(2, {"default_value", "boolean"});
      const Value *dv = a.get(0, "default_value");
      const Value *bv = a.get(1, "boolean");
      bool useDefault =
          v.kind == Value::Undefined || (bv && truthy(*bv) && !truthy(v));
      if (useDefault)
        return dv ? *dv : Value::str("");
      return v;
    }
    if (f == "join") {
      a.check(2, {"d", "attribute"});
      std::string sep = strArg(a, 0, "d", "");
      const Value *attr = a.get(1, "attribute");
      std::vector<Value> items = iterate(v, e.offset);
      std::string s;
      for (size_t k = 0; k < items.size(); ++k) {
        if (k)
          s += sep;
        Value item = attr ? getItem(items[k], *attr, e.offset) : items[k];
        s += toStr(item);
        checkSize(s.size(), e.offset);
      }
      return Value::str(std::move(s));
    }
    if (f == "string" || f == "safe" || f == "e" || f == "escape") {
      a.check(0, {});
      if (f == "e" || f == "escape")
        fail(e.offset, "filter '" + f + "' is not supported");
      return f == "safe" ? v : Value::str(toStr(v));
    }
    if (f == "int") {
      a.check(2, {"default", "base"});
      int64_t dflt = intArg(a, 0, "default", 0);
      if (v.isIntLike())
        return Value::integer(v.asInt());
      if (v.kind == Value::Float) {
        if (!(std::fabs(v.f) < 9.2e18))
          return Value::integer(dflt);
        return Value::integer(int64_t(v.f));
      }
      if (v.kind == Value::Str) {
        std::string s = stripChars(v.s, true, true, nullptr);
        char *end = nullptr;
        errno = 0;
        long long x = std::strtoll(s.c_str(), &end, 10);
        if (!s.empty() && !*end && !errno)
          return Value::integer(x);
        double d = std::strtod(s.c_str(), &end);
        if (!s.empty() && !*end && std::fabs(d) < 9.2e18)
          return Value::integer(int64_t(d));
      }
      return Value::integer(dflt);
    }
    if (f == "float") {
      a.check(1, {"default"});
      if (v.isNumber())
        return Value::real(v.asDouble());
      if (v.kind == Value::Str) {
        std::string s = stripChars(v.s, true, true, nullptr);
        char *end = nullptr;
        double d = std::strtod(s.c_str(), &end);
        if (!s.empty() && !*end)
          return Value::real(d);
      }
      const Value *dv = a.get(0, "default");
      return dv ? *dv : Value::real(0);
    }
    if (f == "list") {
      a.check(0, {});
      return makeList(iterate(v, e.offset), e.offset);
    }
    if (f == "reverse") {
      a.check(0, {});
      if (v.kind == Value::Str) {
        std::vector<size_t> offs = codePointOffsets(v.s);
        std::string s;
        for (size_t k = offs.size() - 1; k > 0; --k)
          s += v.s.substr(offs[k - 1], offs[k] - offs[k - 1]);
        return Value::str(std::move(s));
      }
      std::vector<Value> items = iterate(v, e.offset);
      std::reverse(items.begin(), items.end());
      return makeList(std::move(items), e.offset);
    }
    if (f == "replace") {
      a.check(3, {"old", "new", "count"});
      std::string from = strArg(a, 0, "old"), to = strArg(a, 1, "new");
      int64_t count = intArg(a, 2, "count", -1);
      return Value::str(replaceAll(toStr(v), from, to, count, e.offset));
    }
    if (f == "items") {
      a.check(0, {});
      if (v.kind == Value::Undefined)
        return makeList({}, e.offset);
      if (v.kind != Value::Dict)
        fail(e.offset, "filter 'items' needs a dict, not '" +
                           std::string(typeName(v)) + "'");
      Args none;
      none.offset = e.offset;
      none.what = "items";
      return method(v, "items", none);
    }
    if (f == "abs") {
      a.check(0, {});
      if (v.kind == Value::Float)
        return Value::real(std::fabs(v.f));
      if (v.isIntLike()) {
        if (v.asInt() == INT64_MIN)
          fail(e.offset, "integer overflow");
        return Value::integer(std::llabs(v.asInt()));
      }
      fail(e.offset,
           std::string("bad operand type for abs(): '") + typeName(v) + "'");
    }
    if (f == "selectattr" || f == "rejectattr") {
      if (a.pos.empty())
        fail(e.offset, "filter '" + f + "' needs an attribute name");
      std::string attr = strArg(a, 0, "attribute");
      std::vector<Value> items = iterate(v, e.offset);
      ValueList kept;
      for (const Value &item : items) {
        Value field = item.kind == Value::Undefined
                          ? item
                          : getItem(item, Value::str(attr), e.offset);
        bool r;
        if (a.pos.size() < 2) {
          r = truthy(field);
        } else {
          if (a.pos[1].kind != Value::Str)
            fail(e.offset, "filter '" + f + "': the test must be a name");
          std::vector<Value> testArgs(a.pos.begin() + 2, a.pos.end());
          r = runTest(a.pos[1].s, field, testArgs, e.offset);
        }
        if (r == (f == "selectattr"))
          kept.push_back(item);
      }
      return makeList(std::move(kept), e.offset);
    }
    if (f == "map") {
      a.check(1, {"attribute", "default"});
      const Value *attr = nullptr;
      for (const auto &kv : a.kw)
        if (kv.first == "attribute")
          attr = &kv.second;
      if (!attr)
        fail(e.offset, "filter 'map' is supported with attribute=... only");
      const Value *dflt = nullptr;
      for (const auto &kv : a.kw)
        if (kv.first == "default")
          dflt = &kv.second;
      ValueList out;
      for (const Value &item : iterate(v, e.offset)) {
        Value x = getItem(item, *attr, e.offset);
        out.push_back(x.kind == Value::Undefined && dflt ? *dflt : x);
      }
      return makeList(std::move(out), e.offset);
    }
    fail(e.offset, "unknown filter '" + f + "'");
  }

  bool test(const Expr &e) {
    const std::string &t = e.name;
    Value v = eval(*e.kids[0]);
    std::vector<Value> args;
    for (size_t k = 1; k < e.kids.size(); ++k)
      args.push_back(eval(*e.kids[k]));
    return runTest(t, v, args, e.offset);
  }

  bool runTest(const std::string &t, const Value &v,
               const std::vector<Value> &args, size_t offset) {
    auto need = [&](size_t n) {
      if (args.size() != n)
        fail(offset, "test '" + t + "' takes " + std::to_string(n) +
                         " argument" + (n == 1 ? "" : "s"));
    };
    if (t == "defined" || t == "undefined") {
      need(0);
      return (v.kind == Value::Undefined) == (t == "undefined");
    }
    if (t == "none") {
      need(0);
      return v.kind == Value::None;
    }
    if (t == "string") {
      need(0);
      return v.kind == Value::Str;
    }
    if (t == "number") {
      need(0);
      return v.isNumber();
    }
    if (t == "integer") {
      need(0);
      return v.kind == Value::Int;
    }
    if (t == "float") {
      need(0);
      return v.kind == Value::Float;
    }
    if (t == "boolean") {
      need(0);
      return v.kind == Value::Bool;
    }
    if (t == "true" || t == "false") {
      need(0);
      return v.kind == Value::Bool && v.b == (t == "true");
    }
    if (t == "mapping") {
      need(0);
      return v.kind == Value::Dict;
    }
    if (t == "iterable" || t == "sequence") {
      need(0);
      return v.kind == Value::Str || v.kind == Value::List ||
             v.kind == Value::Dict ||
             (t == "iterable" && v.kind == Value::Undefined);
    }
    if (t == "callable") {
      need(0);
      return v.kind == Value::Func;
    }
    if (t == "odd" || t == "even" || t == "divisibleby") {
      need(t == "divisibleby" ? 1 : 0);
      if (!v.isIntLike())
        fail(offset,
             "test '" + t + "' needs an integer, not '" + typeName(v) + "'");
      int64_t d =
          t == "divisibleby" ? (args[0].isIntLike() ? args[0].asInt() : 0) : 2;
      if (d == 0)
        fail(offset, "test 'divisibleby' needs a non-zero integer");
      int64_t m = v.asInt() % d;
      return t == "odd" ? m != 0 : m == 0;
    }
    if (t == "eq" || t == "equalto" || t == "==") {
      need(1);
      return equal(v, args[0]);
    }
    if (t == "ne" || t == "!=") {
      need(1);
      return !equal(v, args[0]);
    }
    if (t == "lt" || t == "lessthan" || t == "le" || t == "gt" ||
        t == "greaterthan" || t == "ge") {
      need(1);
      int c = order(v, args[0], t, offset);
      if (t == "lt" || t == "lessthan")
        return c < 0;
      if (t == "le")
        return c <= 0;
      if (t == "gt" || t == "greaterthan")
        return c > 0;
      return c >= 0;
    }
    if (t == "in") {
      need(1);
      return contains(args[0], v, offset);
    }
    if (t == "sameas") {
      need(1);
      if (v.kind != args[0].kind)
        return false;
      if (v.kind == Value::None || v.kind == Value::Bool)
        return v.kind == Value::None || v.b == args[0].b;
      return v.kind == Value::Ns && v.ns == args[0].ns;
    }
    if (t == "lower" || t == "upper") {
      need(0);
      std::string s = toStr(v);
      bool cased = false, ok = true;
      for (unsigned char c : s) {
        if (std::isalpha(c)) {
          cased = true;
          ok &= t == "lower" ? !std::isupper(c) : !std::islower(c);
        }
      }
      return cased && ok;
    }
    fail(offset, "unknown test '" + t + "'");
  }

  const ChatTemplateLimits &limits;
  std::string &out;
  size_t work = 0;
  size_t here = 0;
  int macroDepth = 0;
  int evalDepth = 0;
};

} // namespace

void render(const Body &body, const ChatTemplateLimits &limits,
            std::vector<std::pair<std::string, Value>> vars, std::string &out) {
  Renderer r(limits, out);
  r.scopes[0] = std::move(vars);
  r.render(body);
}

} // namespace tfc::rt::jinja
