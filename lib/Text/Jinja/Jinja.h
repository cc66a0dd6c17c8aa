//===- Jinja.h - The Jinja engine's parts -----------------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The engine behind ChatTemplate.h, a small Jinja2 following jinja2 3.1 so
// that corner cases agree, in four parts that share this header:
//
//  * Value.cpp: Python values (undefined, None, bool, int, float, str, list,
//    dict, namespace) with Python's truth, str()/repr() and JSON, and the
//    string helpers that count and index by code point;
//  * Lexer.cpp (jinja2/lexer.py): newlines normalised to \n, one trailing
//    newline dropped, data between tags with the whitespace rules of
//    `{%-`/`-%}`, trim_blocks and lstrip_blocks, and expression tokens inside
//    tags (a tag ends only where brackets balance);
//  * Parser.cpp (jinja2/parser.py): the same precedence levels (conditional,
//    or, and, not, comparisons, + -, ~, * / // %, **, unary, postfix,
//    filters and tests) and statements, into the AST below;
//  * Renderer.cpp: the evaluator, with Python's operators and equality and
//    Jinja's Undefined (false, prints nothing, iterates as empty, an error on
//    arithmetic, attributes and calls).
//
// Errors are thrown as TemplateError inside the engine; ChatTemplate.cpp
// returns them as messages. Private to lib/Text/Jinja.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_LIB_TEXT_JINJA_JINJA_H
#define TFC_LIB_TEXT_JINJA_JINJA_H

#include "tfc/Text/Jinja/ChatTemplate.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tfc::rt::jinja {

using ojson = nlohmann::ordered_json;

/// A template or rendering error at a source offset.
struct TemplateError {
  size_t offset;
  std::string message;
};

[[noreturn]] inline void fail(size_t offset, std::string message) {
  throw TemplateError{offset, std::move(message)};
}

constexpr int kMaxParseDepth = 200;
constexpr int kMaxExprHeight = 500;
constexpr int kMaxMacroDepth = 50;
/// Statements and expressions being evaluated at once (macro calls make
/// them add up): bounds the evaluator's stack to a few MB even with
/// sanitizers.
constexpr int kMaxEvalDepth = 600;
constexpr uint32_t kMaxValueDepth = 200;
constexpr size_t kMaxListLength = size_t(1) << 17;

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

struct Value;
struct Node;
using ValueList = std::vector<Value>;
using ValueDict = std::vector<std::pair<std::string, Value>>;
struct Namespace {
  ValueDict attrs;
};

struct Value {
  enum Kind : uint8_t {
    Undefined,
    None,
    Bool,
    Int,
    Float,
    Str,
    List,
    Dict,
    Ns,
    Func,
    Loop,
    Macro
  };
  Kind kind = Undefined;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  /// Str: the text; Undefined: why it is undefined (for errors); Func: the
  /// function's name. Loop (a for loop's `loop`): `i` is index0, `list` the
  /// items.
  std::string s;
  std::shared_ptr<const ValueList> list;
  std::shared_ptr<const ValueDict> dict;
  std::shared_ptr<Namespace> ns;
  /// How deeply lists and dicts nest inside (0 for scalars).
  uint32_t depth = 0;
  /// Whether a namespace is inside (namespaces may not hold one: no cycles).
  bool holdsNs = false;
  /// A List that is a Python tuple (prints with parentheses).
  bool tuple = false;
  /// Macro: its {% macro %} statement.
  const Node *macro = nullptr;

  static Value undefined(std::string why) {
    Value v;
    v.s = std::move(why);
    return v;
  }
  static Value none() {
    Value v;
    v.kind = None;
    return v;
  }
  static Value boolean(bool x) {
    Value v;
    v.kind = Bool;
    v.b = x;
    return v;
  }
  static Value integer(int64_t x) {
    Value v;
    v.kind = Int;
    v.i = x;
    return v;
  }
  static Value real(double x) {
    Value v;
    v.kind = Float;
    v.f = x;
    return v;
  }
  static Value str(std::string x) {
    Value v;
    v.kind = Str;
    v.s = std::move(x);
    return v;
  }
  static Value func(std::string name) {
    Value v;
    v.kind = Func;
    v.s = std::move(name);
    return v;
  }
  bool isNumber() const { return kind == Bool || kind == Int || kind == Float; }
  bool isIntLike() const { return kind == Bool || kind == Int; }
  int64_t asInt() const { return kind == Bool ? int64_t(b) : i; }
  double asDouble() const {
    return kind == Float ? f : static_cast<double>(asInt());
  }
};

/// A list value; fails past the nesting limit.
Value makeList(ValueList items, size_t offset);

Value makeDict(ValueDict items, size_t offset);

const Value *dictFind(const ValueDict &d, std::string_view key);

/// Python's type names, for messages.
const char *typeName(const Value &v);

bool truthy(const Value &v);

/// Python's repr of a float: the shortest digits that round-trip, fixed
/// notation for exponents in [-4, 16), else d.ddde+XX.
std::string formatFloat(double x);

/// Python's repr of a str.
std::string reprString(const std::string &s);

void appendItems(const ValueDict &d, std::string &out);

/// Python's str() (repr for the items of containers).
void appendStr(const Value &v, std::string &out, bool repr);

std::string toStr(const Value &v);

/// JSON as Python's json.dumps(ensure_ascii=False) writes it.
void appendJsonString(const std::string &s, std::string &out);

void appendJson(const Value &v, std::string &out, int indent, bool sortKeys,
                int level, size_t offset);

Value fromJson(const ojson &j, uint32_t depth);

//===----------------------------------------------------------------------===//
// UTF-8 helpers (Python counts and indexes strings by code point)
//===----------------------------------------------------------------------===//

/// The byte offsets of the code points of `s` (each byte that does not
/// continue a sequence starts one), with s.size() at the end.
std::vector<size_t> codePointOffsets(const std::string &s);

size_t codePointCount(const std::string &s);

/// The length in bytes of the white-space character at s[pos] (0 if none):
/// Python's str.isspace(), which is also what re's \s matches in jinja2's
/// lexer: \t-\r, \x1c-\x1f, space, U+0085, U+00A0, U+1680, U+2000-U+200A,
/// U+2028, U+2029, U+202F, U+205F, U+3000.
size_t spaceAt(std::string_view s, size_t pos);

/// The length of the white-space character that ends at s[end - 1].
size_t spaceBefore(std::string_view s, size_t end);

/// The length of the UTF-8 sequence starting at s[pos] (1 for a stray byte).
size_t charLen(std::string_view s, size_t pos);

/// Python's strip/lstrip/rstrip: white space, or the characters of `chars`.
std::string stripChars(const std::string &s, bool left, bool right,
                       const std::string *chars);

/// Case mappings through utf8proc (Python's str.lower/upper/title and
/// capitalize, with simple, one-to-one mappings).
enum class Case { Lower, Upper, Title, Capitalize, JinjaTitle };

std::string mapCase(const std::string &s, Case mode);

//===----------------------------------------------------------------------===//
// Lexer
//===----------------------------------------------------------------------===//

enum class Tok {
  Data,
  VarBegin,
  VarEnd,
  BlockBegin,
  BlockEnd,
  Name,
  Int,
  Float,
  String,
  Op,
  Eof
};

struct Token {
  Tok kind;
  std::string text; // Data, Name, String (decoded), Op
  int64_t i = 0;
  double f = 0;
  size_t offset = 0;
};

std::string describe(const Token &t);

/// jinja2's newline handling: \r\n and \r become \n, one trailing newline is
/// dropped (keep_trailing_newline=False).
std::string normalizeSource(std::string_view src);

/// The tokens of a normalised template, ending with Eof.
std::vector<Token> lex(const std::string &normalized);

//===----------------------------------------------------------------------===//
// AST
//===----------------------------------------------------------------------===//

struct Expr {
  enum Kind {
    Lit,
    Name,
    Attr,
    Item,
    Slice,
    Call,
    Filter,
    Test,
    Neg,
    Pos,
    Not,
    Bin,
    And,
    Or,
    Cmp,
    Cond,
    ListLit,
    DictLit
  };
  Kind kind;
  size_t offset;
  Value lit;
  /// Name, Attr: the name; Filter/Test: the filter or test; Bin: the op;
  /// ListLit: "tuple" for a parenthesised one.
  std::string name;
  /// Operands. Call: the callee, then the arguments; Filter/Test: the value,
  /// then the arguments; Slice: object, start, stop, step (null if absent);
  /// Cond: value, condition, else (null if absent); DictLit: key, value, ...
  std::vector<std::unique_ptr<Expr>> kids;
  /// Call/Filter/Test: a name per argument ("" for positional ones).
  std::vector<std::string> keywords;
  /// Cmp: the operators between kids.
  std::vector<std::string> ops;
  bool negated = false; // Test: `is not`
  /// The height of the tree below (bounded, so that evaluating it cannot
  /// recurse out of stack, e.g. on `1 + 1 + ... + 1`).
  int height = 1;
};
using ExprPtr = std::unique_ptr<Expr>;

struct Node;
using Body = std::vector<std::unique_ptr<Node>>;

struct Node {
  enum Kind {
    Text,
    Output,
    If,
    For,
    Set,
    SetBlock,
    Break,
    Continue,
    Block,
    Macro
  };
  Kind kind;
  size_t offset;
  std::string text;                 // Text; Set/SetBlock: the variable
  std::string attr;                 // Set: `set ns.attr = ...`
  ExprPtr expr;                     // Output, Set: the value; For: the sequence
  ExprPtr filter;                   // For: `if cond`
  std::vector<std::string> targets; // For; Macro: the parameters
  std::vector<ExprPtr> defaults;    // Macro: per parameter, or null
  std::vector<std::pair<ExprPtr, Body>> conds; // If: (condition, body)...
  Body body, elseBody;
};

/// The statements of a template's tokens; `pos` turns an offset into
/// "line:col" for messages.
Body parse(std::vector<Token> toks, std::function<std::string(size_t)> pos);

/// Renders `body` into `out` with the variables `vars` (the context).
void render(const Body &body, const ChatTemplateLimits &limits,
            std::vector<std::pair<std::string, Value>> vars, std::string &out);

} // namespace tfc::rt::jinja

#endif // TFC_LIB_TEXT_JINJA_JINJA_H
