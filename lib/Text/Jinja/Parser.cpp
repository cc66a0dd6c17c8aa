//===- Parser.cpp - The Jinja parser --------------------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Tokens to the AST with jinja2/parser.py's precedence levels and
// statements (Jinja.h).
//
//===----------------------------------------------------------------------===//

#include "Jinja.h"

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

class Parser {
public:
  explicit Parser(std::vector<Token> toks) : toks(std::move(toks)) {}

  Body parseTemplate() {
    Body body = subparse({}, "", 0);
    return body;
  }

private:
  const Token &cur() const { return toks[idx]; }
  const Token &peek(size_t k = 1) const {
    return toks[std::min(idx + k, toks.size() - 1)];
  }
  void next() {
    if (idx + 1 < toks.size())
      ++idx;
  }
  bool isOp(const char *op) const {
    return cur().kind == Tok::Op && cur().text == op;
  }
  bool isName(const char *name) const {
    return cur().kind == Tok::Name && cur().text == name;
  }
  [[noreturn]] void expected(const std::string &what) const {
    fail(cur().offset, "expected " + what + ", found " + describe(cur()));
  }
  void expectOp(const char *op) {
    if (!isOp(op))
      expected(std::string("'") + op + "'");
    next();
  }
  void expectBlockEnd() {
    if (cur().kind != Tok::BlockEnd)
      expected("'%}'");
    next();
  }
  std::string expectName(const char *what) {
    if (cur().kind != Tok::Name)
      expected(what);
    std::string n = cur().text;
    next();
    return n;
  }

  struct DepthGuard {
    DepthGuard(int &depth, size_t offset) : depth(depth) {
      if (++depth > kMaxParseDepth)
        fail(offset,
             "nested more than " + std::to_string(kMaxParseDepth) + " deep");
    }
    ~DepthGuard() { --depth; }
    int &depth;
  };

  static std::string listTags(const std::vector<std::string> &tags) {
    std::string s;
    for (size_t k = 0; k < tags.size(); ++k) {
      if (k)
        s += k + 1 == tags.size() ? " or " : ", ";
      s += "'" + tags[k] + "'";
    }
    return s;
  }

  /// Parses until a block tag named in `endTags` (left as the current
  /// token, after its '{%'). `owner` names the enclosing tag for messages.
  Body subparse(const std::vector<std::string> &endTags,
                const std::string &owner, size_t ownerOffset) {
    DepthGuard guard(depth, cur().offset);
    Body body;
    while (true) {
      const Token &t = cur();
      switch (t.kind) {
      case Tok::Data: {
        auto n = std::make_unique<Node>();
        n->kind = Node::Text;
        n->offset = t.offset;
        n->text = t.text;
        body.push_back(std::move(n));
        next();
        break;
      }
      case Tok::VarBegin: {
        auto n = std::make_unique<Node>();
        n->kind = Node::Output;
        n->offset = t.offset;
        next();
        n->expr = parseExpression();
        if (cur().kind != Tok::VarEnd)
          expected("'}}'");
        next();
        body.push_back(std::move(n));
        break;
      }
      case Tok::BlockBegin: {
        next();
        if (cur().kind != Tok::Name)
          expected("a tag name");
        const std::string &name = cur().text;
        if (std::find(endTags.begin(), endTags.end(), name) != endTags.end())
          return body;
        if (isEndTag(name)) {
          if (endTags.empty())
            fail(cur().offset, "unexpected '" + name + "': no open block");
          fail(cur().offset, "unexpected '" + name + "', expected " +
                                 listTags(endTags) + " to close the '" + owner +
                                 "' at " + pos(ownerOffset));
        }
        body.push_back(parseStatement());
        break;
      }
      case Tok::Eof:
        if (!endTags.empty())
          fail(t.offset, "expected " + listTags(endTags) + " to close the '" +
                             owner + "' at " + pos(ownerOffset) +
                             ", found the end of the template");
        return body;
      default:
        expected("template text or a tag");
      }
    }
  }

  static bool isEndTag(const std::string &n) {
    return n == "endif" || n == "endfor" || n == "endset" || n == "else" ||
           n == "elif" || n == "endgeneration" || n == "endmacro" ||
           n == "endraw" || n == "endfilter" || n == "endblock" ||
           n == "endcall" || n == "endwith";
  }

public:
  /// "LINE:COL" of an offset; set by the caller, which knows the source.
  std::function<std::string(size_t)> pos;

private:
  std::unique_ptr<Node> parseStatement() {
    const Token &t = cur();
    std::string name = t.text;
    size_t offset = t.offset;
    auto n = std::make_unique<Node>();
    n->offset = offset;
    next();
    if (name == "if") {
      n->kind = Node::If;
      ExprPtr cond = parseExpression();
      expectBlockEnd();
      Body body = subparse({"elif", "else", "endif"}, "if", offset);
      n->conds.emplace_back(std::move(cond), std::move(body));
      while (true) {
        std::string tag = cur().text;
        next();
        if (tag == "elif") {
          ExprPtr c = parseExpression();
          expectBlockEnd();
          Body b = subparse({"elif", "else", "endif"}, "if", offset);
          n->conds.emplace_back(std::move(c), std::move(b));
        } else if (tag == "else") {
          expectBlockEnd();
          n->elseBody = subparse({"endif"}, "if", offset);
        } else {
          expectBlockEnd();
          break;
        }
      }
      return n;
    }
    if (name == "for") {
      n->kind = Node::For;
      bool paren = isOp("(");
      if (paren)
        next();
      n->targets.push_back(expectName("a loop variable"));
      while (isOp(",")) {
        next();
        if (!paren && isName("in"))
          break;
        n->targets.push_back(expectName("a loop variable"));
      }
      if (paren)
        expectOp(")");
      for (const std::string &v : n->targets)
        if (v == "loop")
          fail(offset, "'loop' cannot be a loop variable");
      if (!isName("in"))
        expected("'in'");
      next();
      n->expr = parseOr();
      if (isName("if")) {
        next();
        n->filter = parseExpression();
      }
      if (isName("recursive"))
        fail(cur().offset, "recursive loops are not supported");
      expectBlockEnd();
      ++loopDepth;
      n->body = subparse({"endfor", "else"}, "for", offset);
      --loopDepth;
      if (cur().text == "else") {
        next();
        expectBlockEnd();
        n->elseBody = subparse({"endfor"}, "for", offset);
      }
      next();
      expectBlockEnd();
      return n;
    }
    if (name == "set") {
      n->text = expectName("a variable name");
      if (isOp(".")) {
        next();
        n->attr = expectName("an attribute name");
      }
      if (isOp("=")) {
        next();
        n->kind = Node::Set;
        n->expr = parseExpression();
        expectBlockEnd();
        return n;
      }
      if (!n->attr.empty())
        expected("'='");
      if (cur().kind != Tok::BlockEnd)
        expected("'=' or '%}'");
      next();
      n->kind = Node::SetBlock;
      n->body = subparse({"endset"}, "set", offset);
      next();
      expectBlockEnd();
      return n;
    }
    if (name == "break" || name == "continue") {
      if (loopDepth == 0)
        fail(offset, "'" + name + "' outside a loop");
      n->kind = name == "break" ? Node::Break : Node::Continue;
      expectBlockEnd();
      return n;
    }
    if (name == "macro") {
      n->kind = Node::Macro;
      n->text = expectName("a macro name");
      expectOp("(");
      while (!isOp(")")) {
        if (!n->targets.empty()) {
          expectOp(",");
          if (isOp(")"))
            break;
        }
        size_t at = cur().offset;
        n->targets.push_back(expectName("a parameter name"));
        if (isOp("=")) {
          next();
          n->defaults.push_back(parseExpression());
        } else {
          if (!n->defaults.empty() && n->defaults.back())
            fail(at, "a parameter without a default after one with a "
                     "default");
          n->defaults.push_back(nullptr);
        }
      }
      next();
      expectBlockEnd();
      int loops = loopDepth;
      loopDepth = 0;
      n->body = subparse({"endmacro"}, "macro", offset);
      loopDepth = loops;
      next();
      expectBlockEnd();
      return n;
    }
    if (name == "generation") {
      n->kind = Node::Block;
      expectBlockEnd();
      n->body = subparse({"endgeneration"}, "generation", offset);
      next();
      expectBlockEnd();
      return n;
    }
    static const std::set<std::string> unsupported = {
        "call",  "filter", "include", "import", "from",      "extends",
        "block", "raw",    "with",    "do",     "autoescape"};
    if (unsupported.count(name))
      fail(offset, "the '" + name + "' tag is not supported");
    fail(offset, "unknown tag '" + name +
                     "' (expected if, for, set, break, continue or "
                     "generation)");
  }

  /// Adds an operand (null for an absent one) and checks the height.
  static void attach(Expr &parent, ExprPtr kid) {
    if (kid && kid->height + 1 > parent.height) {
      parent.height = kid->height + 1;
      if (parent.height > kMaxExprHeight)
        fail(parent.offset, "the expression nests more than " +
                                std::to_string(kMaxExprHeight) + " deep");
    }
    parent.kids.push_back(std::move(kid));
  }

  ExprPtr make(Expr::Kind kind, size_t offset) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->offset = offset;
    return e;
  }

  ExprPtr parseExpression(bool withCondexpr = true) {
    DepthGuard guard(depth, cur().offset);
    if (!withCondexpr)
      return parseOr();
    ExprPtr e = parseOr();
    while (isName("if")) {
      size_t offset = cur().offset;
      next();
      ExprPtr cond = parseOr();
      ExprPtr other;
      if (isName("else")) {
        next();
        other = parseExpression();
      }
      auto c = make(Expr::Cond, offset);
      attach(*c, std::move(e));
      attach(*c, std::move(cond));
      attach(*c, std::move(other));
      e = std::move(c);
    }
    return e;
  }

  ExprPtr parseOr() {
    ExprPtr e = parseAnd();
    while (isName("or")) {
      auto o = make(Expr::Or, cur().offset);
      next();
      attach(*o, std::move(e));
      attach(*o, parseAnd());
      e = std::move(o);
    }
    return e;
  }

  ExprPtr parseAnd() {
    ExprPtr e = parseNot();
    while (isName("and")) {
      auto o = make(Expr::And, cur().offset);
      next();
      attach(*o, std::move(e));
      attach(*o, parseNot());
      e = std::move(o);
    }
    return e;
  }

  ExprPtr parseNot() {
    if (isName("not")) {
      DepthGuard guard(depth, cur().offset);
      auto n = make(Expr::Not, cur().offset);
      next();
      attach(*n, parseNot());
      return n;
    }
    return parseCompare();
  }

  ExprPtr parseCompare() {
    size_t offset = cur().offset;
    ExprPtr first = parseMath1();
    ExprPtr cmp;
    while (true) {
      std::string op;
      if (cur().kind == Tok::Op &&
          (cur().text == "==" || cur().text == "!=" || cur().text == "<" ||
           cur().text == ">" || cur().text == "<=" || cur().text == ">=")) {
        op = cur().text;
        next();
      } else if (isName("in")) {
        op = "in";
        next();
      } else if (isName("not") && peek().kind == Tok::Name &&
                 peek().text == "in") {
        op = "not in";
        next();
        next();
      } else {
        break;
      }
      if (!cmp) {
        cmp = make(Expr::Cmp, offset);
        attach(*cmp, std::move(first));
      }
      cmp->ops.push_back(op);
      attach(*cmp, parseMath1());
    }
    return cmp ? std::move(cmp) : std::move(first);
  }

  ExprPtr binary(ExprPtr l, const std::string &op, size_t offset, ExprPtr r) {
    auto b = make(Expr::Bin, offset);
    b->name = op;
    attach(*b, std::move(l));
    attach(*b, std::move(r));
    return b;
  }

  ExprPtr parseMath1() {
    ExprPtr e = parseConcat();
    while (isOp("+") || isOp("-")) {
      std::string op = cur().text;
      size_t offset = cur().offset;
      next();
      e = binary(std::move(e), op, offset, parseConcat());
    }
    return e;
  }

  ExprPtr parseConcat() {
    ExprPtr e = parseMath2();
    while (isOp("~")) {
      size_t offset = cur().offset;
      next();
      e = binary(std::move(e), "~", offset, parseMath2());
    }
    return e;
  }

  ExprPtr parseMath2() {
    ExprPtr e = parsePow();
    while (isOp("*") || isOp("/") || isOp("//") || isOp("%")) {
      std::string op = cur().text;
      size_t offset = cur().offset;
      next();
      e = binary(std::move(e), op, offset, parsePow());
    }
    return e;
  }

  ExprPtr parsePow() {
    ExprPtr e = parseUnary(true);
    while (isOp("**")) {
      size_t offset = cur().offset;
      next();
      e = binary(std::move(e), "**", offset, parseUnary(true));
    }
    return e;
  }

  ExprPtr parseUnary(bool withFilter) {
    DepthGuard guard(depth, cur().offset);
    ExprPtr e;
    if (isOp("-") || isOp("+")) {
      e = make(isOp("-") ? Expr::Neg : Expr::Pos, cur().offset);
      next();
      attach(*e, parseUnary(false));
    } else {
      e = parsePrimary();
    }
    e = parsePostfix(std::move(e));
    if (withFilter)
      e = parseFilterExpr(std::move(e));
    return e;
  }

  ExprPtr literal(Value v, size_t offset) {
    auto e = make(Expr::Lit, offset);
    e->lit = std::move(v);
    return e;
  }

  ExprPtr parsePrimary() {
    DepthGuard guard(depth, cur().offset);
    const Token &t = cur();
    size_t offset = t.offset;
    switch (t.kind) {
    case Tok::Name: {
      std::string n = t.text;
      next();
      if (n == "true" || n == "True")
        return literal(Value::boolean(true), offset);
      if (n == "false" || n == "False")
        return literal(Value::boolean(false), offset);
      if (n == "none" || n == "None")
        return literal(Value::none(), offset);
      auto e = make(Expr::Name, offset);
      e->name = n;
      return e;
    }
    case Tok::String: {
      std::string s = t.text;
      next();
      while (cur().kind == Tok::String) {
        s += cur().text;
        next();
      }
      return literal(Value::str(std::move(s)), offset);
    }
    case Tok::Int: {
      int64_t v = t.i;
      next();
      return literal(Value::integer(v), offset);
    }
    case Tok::Float: {
      double v = t.f;
      next();
      return literal(Value::real(v), offset);
    }
    case Tok::Op:
      if (t.text == "(") {
        next();
        if (isOp(")")) {
          next();
          auto e = make(Expr::ListLit, offset);
          e->name = "tuple";
          return e;
        }
        ExprPtr first = parseExpression();
        if (isOp(",")) {
          auto e = make(Expr::ListLit, offset);
          e->name = "tuple";
          attach(*e, std::move(first));
          while (isOp(",")) {
            next();
            if (isOp(")"))
              break;
            attach(*e, parseExpression());
          }
          expectOp(")");
          return e;
        }
        expectOp(")");
        return first;
      }
      if (t.text == "[") {
        next();
        auto e = make(Expr::ListLit, offset);
        while (!isOp("]")) {
          if (!e->kids.empty()) {
            expectOp(",");
            if (isOp("]"))
              break;
          }
          attach(*e, parseExpression());
        }
        next();
        return e;
      }
      if (t.text == "{") {
        next();
        auto e = make(Expr::DictLit, offset);
        while (!isOp("}")) {
          if (!e->kids.empty()) {
            expectOp(",");
            if (isOp("}"))
              break;
          }
          attach(*e, parseExpression());
          expectOp(":");
          attach(*e, parseExpression());
        }
        next();
        return e;
      }
      break;
    default:
      break;
    }
    expected("an expression");
  }

  ExprPtr parsePostfix(ExprPtr e) {
    while (true) {
      if (isOp(".")) {
        size_t offset = cur().offset;
        next();
        if (cur().kind == Tok::Int) {
          auto item = make(Expr::Item, offset);
          attach(*item, std::move(e));
          attach(*item, literal(Value::integer(cur().i), cur().offset));
          next();
          e = std::move(item);
          continue;
        }
        auto a = make(Expr::Attr, offset);
        a->name = expectName("an attribute name after '.'");
        attach(*a, std::move(e));
        e = std::move(a);
      } else if (isOp("[")) {
        e = parseSubscript(std::move(e));
      } else if (isOp("(")) {
        e = parseCall(std::move(e), Expr::Call, "");
      } else {
        return e;
      }
    }
  }

  ExprPtr parseSubscript(ExprPtr obj) {
    size_t offset = cur().offset;
    next(); // [
    ExprPtr parts[3];
    int colons = 0;
    for (int k = 0; k < 3; ++k) {
      if (!isOp(":") && !isOp("]"))
        parts[k] = parseExpression();
      if (k < 2 && isOp(":")) {
        ++colons;
        next();
      } else {
        break;
      }
    }
    expectOp("]");
    if (colons == 0) {
      if (!parts[0])
        fail(offset, "expected an index inside '[]'");
      auto e = make(Expr::Item, offset);
      attach(*e, std::move(obj));
      attach(*e, std::move(parts[0]));
      return e;
    }
    auto e = make(Expr::Slice, offset);
    attach(*e, std::move(obj));
    for (auto &p : parts)
      attach(*e, std::move(p));
    return e;
  }

  /// Call arguments: `(a, b, name=c)`; appended to `e` after its operands.
  void parseArgs(Expr &e) {
    expectOp("(");
    bool keywords = false;
    while (!isOp(")")) {
      if (!e.keywords.empty()) {
        expectOp(",");
        if (isOp(")"))
          break;
      }
      if (cur().kind == Tok::Name && peek().kind == Tok::Op &&
          peek().text == "=") {
        std::string name = cur().text;
        next();
        next();
        attach(e, parseExpression());
        e.keywords.push_back(name);
        keywords = true;
      } else {
        if (keywords)
          fail(cur().offset, "a positional argument after keyword arguments");
        attach(e, parseExpression());
        e.keywords.push_back("");
      }
    }
    next();
  }

  ExprPtr parseCall(ExprPtr callee, Expr::Kind kind, std::string name) {
    auto c = make(kind, callee->offset);
    c->name = std::move(name);
    attach(*c, std::move(callee));
    parseArgs(*c);
    return c;
  }

  ExprPtr parseFilterExpr(ExprPtr e) {
    while (true) {
      if (isOp("|")) {
        next();
        size_t offset = cur().offset;
        std::string name = expectName("a filter name");
        while (isOp(".")) {
          next();
          name += "." + expectName("a filter name");
        }
        auto f = make(Expr::Filter, offset);
        f->name = name;
        attach(*f, std::move(e));
        if (isOp("("))
          parseArgs(*f);
        e = std::move(f);
      } else if (isName("is")) {
        next();
        auto t = make(Expr::Test, cur().offset);
        if (isName("not")) {
          t->negated = true;
          next();
        }
        t->name = expectName("a test name");
        while (isOp(".")) {
          next();
          t->name += "." + expectName("a test name");
        }
        attach(*t, std::move(e));
        if (isOp("(")) {
          parseArgs(*t);
        } else if ((cur().kind == Tok::Name || cur().kind == Tok::String ||
                    cur().kind == Tok::Int || cur().kind == Tok::Float ||
                    isOp("(") || isOp("[") || isOp("{")) &&
                   !isName("else") && !isName("or") && !isName("and")) {
          if (isName("is"))
            fail(cur().offset, "tests cannot be chained with 'is'");
          attach(*t, parsePostfix(parsePrimary()));
          t->keywords.push_back("");
        }
        e = std::move(t);
      } else if (isOp("(")) {
        e = parseCall(std::move(e), Expr::Call, "");
      } else {
        return e;
      }
    }
  }

  std::vector<Token> toks;
  size_t idx = 0;
  int depth = 0;
  int loopDepth = 0;
};

} // namespace

Body parse(std::vector<Token> toks, std::function<std::string(size_t)> pos) {
  Parser parser(std::move(toks));
  parser.pos = std::move(pos);
  return parser.parseTemplate();
}

} // namespace tfc::rt::jinja
