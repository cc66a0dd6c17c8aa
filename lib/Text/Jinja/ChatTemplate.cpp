//===- ChatTemplate.cpp - Hugging Face chat templates ---------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// A small Jinja2 implementation in three parts, each following the structure
// of jinja2 3.1 so that corner cases agree:
//
//  * the lexer (jinja2/lexer.py): newlines normalised to \n, one trailing
//    newline dropped, data between tags with the whitespace rules of
//    `{%-`/`-%}`, trim_blocks and lstrip_blocks, and expression tokens inside
//    tags (a tag ends only where brackets balance);
//  * the parser (jinja2/parser.py): the same precedence levels (conditional,
//    or, and, not, comparisons, + -, ~, * / // %, **, unary, postfix,
//    filters and tests) and statements;
//  * the evaluator: Python values (undefined, None, bool, int, float, str,
//    list, dict, namespace) with Python's operators, equality, truth and
//    str()/repr(), and Jinja's Undefined (false, prints nothing, iterates as
//    empty, an error on arithmetic, attributes and calls).
//
// Errors are thrown as TemplateError inside this file and returned as
// messages at the API.
//
//===----------------------------------------------------------------------===//

#include "tfc/Text/Jinja/ChatTemplate.h"

#include "tfc/Formats/Files.h"
#include "tfc/Formats/Gguf.h"
#include "tfc/Formats/Utf8.h"
#include "tfc/Formats/Weights.h"

#include <nlohmann/json.hpp>
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
#include <sys/stat.h>

using namespace tfc::rt;

namespace {

using ojson = nlohmann::ordered_json;

/// A template or rendering error at a source offset.
struct TemplateError {
  size_t offset;
  std::string message;
};

[[noreturn]] void fail(size_t offset, std::string message) {
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
Value makeList(ValueList items, size_t offset) {
  Value v;
  v.kind = Value::List;
  uint32_t depth = 0;
  for (const Value &x : items) {
    depth = std::max(depth, x.depth);
    v.holdsNs |= x.holdsNs || x.kind == Value::Ns;
  }
  if (depth + 1 > kMaxValueDepth)
    fail(offset,
         "values nested more than " + std::to_string(kMaxValueDepth) + " deep");
  v.depth = depth + 1;
  v.list = std::make_shared<const ValueList>(std::move(items));
  return v;
}

Value makeDict(ValueDict items, size_t offset) {
  Value v;
  v.kind = Value::Dict;
  uint32_t depth = 0;
  for (const auto &kv : items) {
    depth = std::max(depth, kv.second.depth);
    v.holdsNs |= kv.second.holdsNs || kv.second.kind == Value::Ns;
  }
  if (depth + 1 > kMaxValueDepth)
    fail(offset,
         "values nested more than " + std::to_string(kMaxValueDepth) + " deep");
  v.depth = depth + 1;
  v.dict = std::make_shared<const ValueDict>(std::move(items));
  return v;
}

const Value *dictFind(const ValueDict &d, std::string_view key) {
  for (const auto &kv : d)
    if (kv.first == key)
      return &kv.second;
  return nullptr;
}

/// Python's type names, for messages.
const char *typeName(const Value &v) {
  switch (v.kind) {
  case Value::Undefined:
    return "Undefined";
  case Value::None:
    return "NoneType";
  case Value::Bool:
    return "bool";
  case Value::Int:
    return "int";
  case Value::Float:
    return "float";
  case Value::Str:
    return "str";
  case Value::List:
    return "list";
  case Value::Dict:
    return "dict";
  case Value::Ns:
    return "Namespace";
  case Value::Func:
    return "function";
  case Value::Loop:
    return "LoopContext";
  case Value::Macro:
    return "Macro";
  }
  return "?";
}

bool truthy(const Value &v) {
  switch (v.kind) {
  case Value::Undefined:
  case Value::None:
    return false;
  case Value::Bool:
    return v.b;
  case Value::Int:
    return v.i != 0;
  case Value::Float:
    return v.f != 0;
  case Value::Str:
    return !v.s.empty();
  case Value::List:
    return !v.list->empty();
  case Value::Dict:
    return !v.dict->empty();
  case Value::Ns:
  case Value::Func:
  case Value::Loop:
  case Value::Macro:
    return true;
  }
  return false;
}

/// Python's repr of a float: the shortest digits that round-trip, fixed
/// notation for exponents in [-4, 16), else d.ddde+XX.
std::string formatFloat(double x) {
  if (std::isnan(x))
    return "nan";
  if (std::isinf(x))
    return x < 0 ? "-inf" : "inf";
  char buf[64];
  int prec = 1;
  for (; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*e", prec - 1, x);
    if (std::strtod(buf, nullptr) == x)
      break;
  }
  // buf: [-]d.ddde[+-]XX
  std::string s = buf;
  bool neg = s[0] == '-';
  if (neg)
    s.erase(0, 1);
  size_t e = s.find('e');
  int exp = std::atoi(s.c_str() + e + 1);
  std::string digits;
  for (size_t k = 0; k < e; ++k)
    if (s[k] != '.')
      digits += s[k];
  while (digits.size() > 1 && digits.back() == '0')
    digits.pop_back();
  std::string out;
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      out = "0." + std::string(size_t(-exp - 1), '0') + digits;
    } else if (size_t(exp) + 1 >= digits.size()) {
      out = digits + std::string(size_t(exp) + 1 - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, size_t(exp) + 1) + "." +
            digits.substr(size_t(exp) + 1);
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1)
      out += "." + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    out += eb;
  }
  return neg ? "-" + out : out;
}

/// Python's repr of a str.
std::string reprString(const std::string &s) {
  char quote = '\'';
  if (s.find('\'') != std::string::npos && s.find('"') == std::string::npos)
    quote = '"';
  std::string out(1, quote);
  for (unsigned char c : s) {
    if (c == '\\')
      out += "\\\\";
    else if (c == static_cast<unsigned char>(quote))
      out += std::string("\\") + quote;
    else if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      out += b;
    } else
      out += static_cast<char>(c);
  }
  return out + quote;
}

void appendStr(const Value &v, std::string &out, bool repr);

void appendItems(const ValueDict &d, std::string &out) {
  out += '{';
  bool first = true;
  for (const auto &kv : d) {
    if (!first)
      out += ", ";
    first = false;
    out += reprString(kv.first);
    out += ": ";
    appendStr(kv.second, out, true);
  }
  out += '}';
}

/// Python's str() (repr for the items of containers).
void appendStr(const Value &v, std::string &out, bool repr) {
  switch (v.kind) {
  case Value::Undefined:
    if (repr)
      out += "Undefined";
    return;
  case Value::None:
    out += "None";
    return;
  case Value::Bool:
    out += v.b ? "True" : "False";
    return;
  case Value::Int:
    out += std::to_string(v.i);
    return;
  case Value::Float:
    out += formatFloat(v.f);
    return;
  case Value::Str:
    out += repr ? reprString(v.s) : v.s;
    return;
  case Value::List: {
    out += v.tuple ? '(' : '[';
    for (size_t k = 0; k < v.list->size(); ++k) {
      if (k)
        out += ", ";
      appendStr((*v.list)[k], out, true);
    }
    if (v.tuple && v.list->size() == 1)
      out += ',';
    out += v.tuple ? ')' : ']';
    return;
  }
  case Value::Dict:
    appendItems(*v.dict, out);
    return;
  case Value::Ns:
    out += "<Namespace ";
    appendItems(v.ns->attrs, out);
    out += '>';
    return;
  case Value::Func:
    out += "<function " + v.s + ">";
    return;
  case Value::Loop:
    out += "<LoopContext " + std::to_string(v.i + 1) + "/" +
           std::to_string(v.list->size()) + ">";
    return;
  case Value::Macro:
    out += "<Macro '" + v.s + "'>";
    return;
  }
}

std::string toStr(const Value &v) {
  if (v.kind == Value::Str)
    return v.s;
  std::string out;
  appendStr(v, out, false);
  return out;
}

/// JSON as Python's json.dumps(ensure_ascii=False) writes it.
void appendJsonString(const std::string &s, std::string &out) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    default:
      if (c < 0x20) {
        char b[8];
        std::snprintf(b, sizeof b, "\\u%04x", c);
        out += b;
      } else {
        out += static_cast<char>(c);
      }
    }
  }
  out += '"';
}

void appendJson(const Value &v, std::string &out, int indent, bool sortKeys,
                int level, size_t offset) {
  auto newline = [&](int lvl) {
    if (indent >= 0) {
      out += '\n';
      out.append(size_t(indent) * size_t(lvl), ' ');
    }
  };
  const char *itemSep = indent >= 0 ? "," : ", ";
  switch (v.kind) {
  case Value::None:
    out += "null";
    return;
  case Value::Bool:
    out += v.b ? "true" : "false";
    return;
  case Value::Int:
    out += std::to_string(v.i);
    return;
  case Value::Float:
    if (std::isnan(v.f))
      out += "NaN";
    else if (std::isinf(v.f))
      out += v.f < 0 ? "-Infinity" : "Infinity";
    else
      out += formatFloat(v.f);
    return;
  case Value::Str:
    appendJsonString(v.s, out);
    return;
  case Value::List: {
    if (v.list->empty()) {
      out += "[]";
      return;
    }
    out += '[';
    for (size_t k = 0; k < v.list->size(); ++k) {
      if (k)
        out += itemSep;
      newline(level + 1);
      appendJson((*v.list)[k], out, indent, sortKeys, level + 1, offset);
    }
    newline(level);
    out += ']';
    return;
  }
  case Value::Dict:
  case Value::Ns: {
    const ValueDict &d = v.kind == Value::Dict ? *v.dict : v.ns->attrs;
    if (v.kind == Value::Ns)
      fail(offset, "tojson: Object of type Namespace is not JSON serializable");
    if (d.empty()) {
      out += "{}";
      return;
    }
    std::vector<const std::pair<std::string, Value> *> items;
    for (const auto &kv : d)
      items.push_back(&kv);
    if (sortKeys)
      std::sort(items.begin(), items.end(),
                [](auto *a, auto *b) { return a->first < b->first; });
    out += '{';
    for (size_t k = 0; k < items.size(); ++k) {
      if (k)
        out += itemSep;
      newline(level + 1);
      appendJsonString(items[k]->first, out);
      out += ": ";
      appendJson(items[k]->second, out, indent, sortKeys, level + 1, offset);
    }
    newline(level);
    out += '}';
    return;
  }
  case Value::Undefined:
  case Value::Func:
  case Value::Loop:
  case Value::Macro:
    fail(offset, std::string("tojson: Object of type ") + typeName(v) +
                     " is not JSON serializable");
  }
}

Value fromJson(const ojson &j, uint32_t depth) {
  if (depth > kMaxValueDepth)
    fail(0, "the context nests more than " + std::to_string(kMaxValueDepth) +
                " deep");
  switch (j.type()) {
  case ojson::value_t::null:
    return Value::none();
  case ojson::value_t::boolean:
    return Value::boolean(j.get<bool>());
  case ojson::value_t::number_integer:
    return Value::integer(j.get<int64_t>());
  case ojson::value_t::number_unsigned: {
    uint64_t u = j.get<uint64_t>();
    if (u > uint64_t(INT64_MAX))
      return Value::real(static_cast<double>(u));
    return Value::integer(static_cast<int64_t>(u));
  }
  case ojson::value_t::number_float:
    return Value::real(j.get<double>());
  case ojson::value_t::string:
    return Value::str(j.get<std::string>());
  case ojson::value_t::array: {
    ValueList items;
    for (const auto &x : j)
      items.push_back(fromJson(x, depth + 1));
    return makeList(std::move(items), 0);
  }
  case ojson::value_t::object: {
    ValueDict items;
    for (auto it = j.begin(); it != j.end(); ++it)
      items.emplace_back(it.key(), fromJson(it.value(), depth + 1));
    return makeDict(std::move(items), 0);
  }
  default:
    fail(0, "the context holds a value that is not JSON");
  }
}

//===----------------------------------------------------------------------===//
// UTF-8 helpers (Python counts and indexes strings by code point)
//===----------------------------------------------------------------------===//

/// The byte offsets of the code points of `s` (each byte that does not
/// continue a sequence starts one), with s.size() at the end.
std::vector<size_t> codePointOffsets(const std::string &s) {
  std::vector<size_t> offs;
  for (size_t k = 0; k < s.size(); ++k)
    if ((static_cast<unsigned char>(s[k]) & 0xC0) != 0x80)
      offs.push_back(k);
  offs.push_back(s.size());
  return offs;
}

size_t codePointCount(const std::string &s) {
  size_t n = 0;
  for (unsigned char c : s)
    n += (c & 0xC0) != 0x80;
  return n;
}

/// The length in bytes of the white-space character at s[pos] (0 if none):
/// Python's str.isspace(), which is also what re's \s matches in jinja2's
/// lexer: \t-\r, \x1c-\x1f, space, U+0085, U+00A0, U+1680, U+2000-U+200A,
/// U+2028, U+2029, U+202F, U+205F, U+3000.
size_t spaceAt(std::string_view s, size_t pos) {
  if (pos >= s.size())
    return 0;
  auto at = [&](size_t k) -> unsigned {
    return pos + k < s.size() ? static_cast<unsigned char>(s[pos + k]) : 0;
  };
  unsigned c = at(0);
  if (c < 0x80)
    return (c >= 9 && c <= 13) || (c >= 0x1c && c <= 0x20) ? 1 : 0;
  if (c == 0xC2)
    return at(1) == 0x85 || at(1) == 0xA0 ? 2 : 0;
  if (c == 0xE1)
    return at(1) == 0x9A && at(2) == 0x80 ? 3 : 0;
  if (c == 0xE2) {
    unsigned b = at(1), d = at(2);
    if (b == 0x80 &&
        ((d >= 0x80 && d <= 0x8A) || d == 0xA8 || d == 0xA9 || d == 0xAF))
      return 3;
    return b == 0x81 && d == 0x9F ? 3 : 0;
  }
  if (c == 0xE3)
    return at(1) == 0x80 && at(2) == 0x80 ? 3 : 0;
  return 0;
}

/// The length of the white-space character that ends at s[end - 1].
size_t spaceBefore(std::string_view s, size_t end) {
  for (size_t len = 1; len <= 3 && len <= end; ++len)
    if (spaceAt(s, end - len) == len)
      return len;
  return 0;
}

/// The length of the UTF-8 sequence starting at s[pos] (1 for a stray byte).
size_t charLen(std::string_view s, size_t pos) {
  unsigned c = static_cast<unsigned char>(s[pos]);
  size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
  return std::min(n, s.size() - pos);
}

/// Python's strip/lstrip/rstrip: white space, or the characters of `chars`.
std::string stripChars(const std::string &s, bool left, bool right,
                       const std::string *chars) {
  std::vector<std::string_view> set;
  if (chars)
    for (size_t k = 0; k < chars->size(); k += charLen(*chars, k))
      set.push_back(std::string_view(*chars).substr(k, charLen(*chars, k)));
  std::string_view v(s);
  auto inSet = [&](std::string_view c) {
    return std::find(set.begin(), set.end(), c) != set.end();
  };
  size_t b = 0, e = s.size();
  if (left)
    while (b < e) {
      size_t n = chars ? (inSet(v.substr(b, charLen(v, b))) ? charLen(v, b) : 0)
                       : spaceAt(v.substr(0, e), b);
      if (!n)
        break;
      b += n;
    }
  if (right)
    while (e > b) {
      size_t n = 0;
      if (!chars) {
        n = spaceBefore(v.substr(0, e), e);
      } else {
        size_t k = e - 1;
        while (k > b && (static_cast<unsigned char>(v[k]) & 0xC0) == 0x80)
          --k;
        if (inSet(v.substr(k, e - k)))
          n = e - k;
      }
      if (!n || e - n < b)
        break;
      e -= n;
    }
  return s.substr(b, e - b);
}

/// Case mappings through utf8proc (Python's str.lower/upper/title and
/// capitalize, with simple, one-to-one mappings).
enum class Case { Lower, Upper, Title, Capitalize, JinjaTitle };

std::string mapCase(const std::string &s, Case mode) {
  std::string out;
  out.reserve(s.size());
  bool prevCased = false, wordStart = true, first = true;
  size_t k = 0;
  while (k < s.size()) {
    utf8proc_int32_t cp;
    utf8proc_ssize_t n = utf8proc_iterate(
        reinterpret_cast<const utf8proc_uint8_t *>(s.data() + k),
        static_cast<utf8proc_ssize_t>(s.size() - k), &cp);
    if (n <= 0) { // not UTF-8: kept as it is
      out += s[k++];
      prevCased = false;
      continue;
    }
    utf8proc_int32_t m = cp;
    utf8proc_category_t cat = utf8proc_category(cp);
    bool cased = cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LL ||
                 cat == UTF8PROC_CATEGORY_LT;
    switch (mode) {
    case Case::Lower:
      m = utf8proc_tolower(cp);
      break;
    case Case::Upper:
      if (cp == 0xDF) { // ß: Python's full mapping, "SS"
        out += "SS";
        k += size_t(n);
        prevCased = true;
        first = false;
        continue;
      }
      m = utf8proc_toupper(cp);
      break;
    case Case::Title:
      // Upper after an uncased character, lower after a cased one.
      if (cased)
        m = prevCased ? utf8proc_tolower(cp) : utf8proc_totitle(cp);
      break;
    case Case::Capitalize:
      m = first ? utf8proc_totitle(cp) : utf8proc_tolower(cp);
      break;
    case Case::JinjaTitle: {
      // jinja2's title filter: words start after - ( { [ < or white space.
      bool sep = cp == '-' || cp == '(' || cp == '{' || cp == '[' ||
                 cp == '<' || spaceAt(s, k) == size_t(n);
      if (!sep)
        m = wordStart ? utf8proc_toupper(cp) : utf8proc_tolower(cp);
      wordStart = sep;
      break;
    }
    }
    prevCased = cased;
    first = false;
    utf8proc_uint8_t buf[4];
    utf8proc_ssize_t len = utf8proc_encode_char(m, buf);
    out.append(reinterpret_cast<char *>(buf), size_t(len));
    k += size_t(n);
  }
  return out;
}

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

std::string describe(const Token &t) {
  switch (t.kind) {
  case Tok::Data:
    return "template text";
  case Tok::VarBegin:
    return "'{{'";
  case Tok::VarEnd:
    return "'}}'";
  case Tok::BlockBegin:
    return "'{%'";
  case Tok::BlockEnd:
    return "'%}'";
  case Tok::Name:
    return "'" + t.text + "'";
  case Tok::Int:
  case Tok::Float:
    return "a number";
  case Tok::String:
    return "a string";
  case Tok::Op:
    return "'" + t.text + "'";
  case Tok::Eof:
    return "the end of the template";
  }
  return "?";
}

/// jinja2's newline handling: \r\n and \r become \n, one trailing newline is
/// dropped (keep_trailing_newline=False).
std::string normalizeSource(std::string_view src) {
  std::string out;
  out.reserve(src.size());
  for (size_t k = 0; k < src.size(); ++k) {
    if (src[k] == '\r') {
      out += '\n';
      if (k + 1 < src.size() && src[k + 1] == '\n')
        ++k;
    } else {
      out += src[k];
    }
  }
  if (!out.empty() && out.back() == '\n')
    out.pop_back();
  return out;
}

class Lexer {
public:
  explicit Lexer(const std::string &src) : src(src) {}

  std::vector<Token> run() {
    bool lineStarting = true;
    size_t n = src.size();
    while (pos < n) {
      size_t p = pos;
      while (p + 1 < n &&
             !(src[p] == '{' &&
               (src[p + 1] == '{' || src[p + 1] == '%' || src[p + 1] == '#')))
        ++p;
      if (p + 1 >= n) {
        emitData(src.substr(pos), pos);
        break;
      }
      std::string text = src.substr(pos, p - pos);
      char kind = src[p + 1];
      char sign = 0;
      if (p + 2 < n && (src[p + 2] == '-' || src[p + 2] == '+'))
        sign = src[p + 2];
      if (sign == '-') {
        text = stripChars(text, false, true, nullptr);
      } else if (sign != '+' && kind != '{') {
        // lstrip_blocks: spaces and tabs between the start of the line and
        // a block or comment tag go.
        size_t lpos = text.rfind('\n');
        lpos = lpos == std::string::npos ? 0 : lpos + 1;
        if (lpos > 0 || lineStarting) {
          size_t k = lpos;
          while (k < text.size() && spaceAt(text, k))
            k += spaceAt(text, k);
          if (lpos < text.size() && k == text.size())
            text.resize(lpos);
        }
      }
      emitData(std::move(text), pos);
      size_t tagStart = p;
      pos = p + 2 + (sign ? 1 : 0);
      if (kind == '#') {
        size_t end = src.find("#}", pos);
        if (end == std::string::npos)
          fail(tagStart, "unterminated comment: expected '#}'");
        char before = end > pos ? src[end - 1] : 0;
        pos = end + 2;
        lineStarting = finishTag(before == '-', before != '+');
        continue;
      }
      toks.push_back(
          {kind == '{' ? Tok::VarBegin : Tok::BlockBegin, "", 0, 0, tagStart});
      lineStarting = lexTag(kind == '{', tagStart);
    }
    toks.push_back({Tok::Eof, "", 0, 0, src.size()});
    return std::move(toks);
  }

private:
  void emitData(std::string text, size_t offset) {
    if (!text.empty())
      toks.push_back({Tok::Data, std::move(text), 0, 0, offset});
  }

  /// After a tag's end delimiter: strips what `-` asks or the newline
  /// trim_blocks removes. Returns whether what was consumed ended a line.
  bool finishTag(bool minus, bool trim) {
    bool newline = false;
    if (minus) {
      while (size_t n = spaceAt(src, pos)) {
        newline = src[pos] == '\n';
        pos += n;
      }
    } else if (trim && pos < src.size() && src[pos] == '\n') {
      ++pos;
      newline = true;
    }
    return newline;
  }

  bool lexTag(bool variable, size_t tagStart) {
    std::vector<std::pair<char, size_t>> brackets;
    const char *endText = variable ? "}}" : "%}";
    size_t n = src.size();
    while (true) {
      while (size_t w = spaceAt(src, pos))
        pos += w;
      if (pos >= n)
        fail(tagStart, std::string("unterminated '") +
                           (variable ? "{{" : "{%") + "': expected '" +
                           endText + "'");
      if (brackets.empty()) {
        bool minus = src.compare(pos, 3, std::string("-") + endText) == 0;
        if (minus || src.compare(pos, 2, endText) == 0) {
          toks.push_back(
              {variable ? Tok::VarEnd : Tok::BlockEnd, "", 0, 0, pos});
          pos += minus ? 3 : 2;
          return finishTag(minus, !variable);
        }
      }
      size_t start = pos;
      unsigned char c = static_cast<unsigned char>(src[pos]);
      if (std::isalpha(c) || c == '_') {
        while (pos < n && (std::isalnum(static_cast<unsigned char>(src[pos])) ||
                           src[pos] == '_'))
          ++pos;
        toks.push_back(
            {Tok::Name, src.substr(start, pos - start), 0, 0, start});
      } else if (std::isdigit(c)) {
        lexNumber();
      } else if (c == '\'' || c == '"') {
        lexString();
      } else {
        static const char *const ops[] = {"//", "**", "==", "!=", "<=", ">="};
        std::string op;
        for (const char *o : ops)
          if (src.compare(pos, 2, o) == 0)
            op = o;
        if (op.empty()) {
          if (!std::strchr("+-*/%~<>=()[]{},.:|", c) || c == 0)
            fail(pos, std::string("unexpected character '") +
                          static_cast<char>(c) + "'");
          op = std::string(1, static_cast<char>(c));
        }
        if (op == "(" || op == "[" || op == "{") {
          if (brackets.size() >= kMaxParseDepth)
            fail(pos, "brackets nested more than " +
                          std::to_string(kMaxParseDepth) + " deep");
          brackets.emplace_back(op[0], pos);
        } else if (op == ")" || op == "]" || op == "}") {
          char open = op == ")" ? '(' : op == "]" ? '[' : '{';
          if (brackets.empty())
            fail(pos, "unexpected '" + op + "'");
          if (brackets.back().first != open) {
            char want = brackets.back().first == '('   ? ')'
                        : brackets.back().first == '[' ? ']'
                                                       : '}';
            fail(pos, "unexpected '" + op + "', expected '" +
                          std::string(1, want) + "'");
          }
          brackets.pop_back();
        }
        toks.push_back({Tok::Op, op, 0, 0, pos});
        pos += op.size();
      }
    }
  }

  void lexNumber() {
    size_t start = pos, n = src.size();
    std::string digits;
    auto run = [&]() {
      while (pos < n &&
             (std::isdigit(static_cast<unsigned char>(src[pos])) ||
              (src[pos] == '_' && pos + 1 < n &&
               std::isdigit(static_cast<unsigned char>(src[pos + 1])))))
        if (src[pos++] != '_')
          digits += src[pos - 1];
    };
    run();
    bool isFloat = false;
    if (pos + 1 < n && src[pos] == '.' &&
        std::isdigit(static_cast<unsigned char>(src[pos + 1]))) {
      isFloat = true;
      digits += src[pos++];
      run();
    }
    if (pos < n && (src[pos] == 'e' || src[pos] == 'E')) {
      size_t save = pos;
      std::string saveDigits = digits;
      digits += src[pos++];
      if (pos < n && (src[pos] == '+' || src[pos] == '-'))
        digits += src[pos++];
      if (pos < n && std::isdigit(static_cast<unsigned char>(src[pos]))) {
        isFloat = true;
        run();
      } else {
        pos = save;
        digits = saveDigits;
      }
    }
    Token t{isFloat ? Tok::Float : Tok::Int, "", 0, 0, start};
    errno = 0;
    if (isFloat) {
      t.f = std::strtod(digits.c_str(), nullptr);
    } else {
      t.i = std::strtoll(digits.c_str(), nullptr, 10);
      if (errno == ERANGE)
        fail(start, "the integer " + digits + " does not fit in 64 bits");
    }
    toks.push_back(std::move(t));
  }

  /// A string literal with Python's escapes (unknown ones are kept).
  void lexString() {
    size_t start = pos, n = src.size();
    char quote = src[pos++];
    std::string out;
    while (true) {
      if (pos >= n)
        fail(start, "unterminated string: expected " + std::string(1, quote));
      char c = src[pos++];
      if (c == quote)
        break;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos >= n)
        fail(start, "unterminated string: expected " + std::string(1, quote));
      char e = src[pos++];
      auto hex = [&](int digits) {
        uint32_t v = 0;
        for (int k = 0; k < digits; ++k) {
          if (pos >= n || !std::isxdigit(static_cast<unsigned char>(src[pos])))
            fail(pos, "a \\x, \\u or \\U escape needs " +
                          std::to_string(digits) + " hex digits");
          char h = src[pos++];
          v = v * 16 + uint32_t(std::isdigit(static_cast<unsigned char>(h))
                                    ? h - '0'
                                    : std::tolower(h) - 'a' + 10);
        }
        if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
          fail(pos, "the escape names no Unicode character");
        appendUtf8(out, v);
      };
      switch (e) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case '0':
        out += '\0';
        break;
      case 'a':
        out += '\a';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'v':
        out += '\v';
        break;
      case '\\':
      case '\'':
      case '"':
        out += e;
        break;
      case '\n':
        break;
      case 'x':
        hex(2);
        break;
      case 'u':
        hex(4);
        break;
      case 'U':
        hex(8);
        break;
      default:
        out += '\\';
        out += e;
      }
    }
    toks.push_back({Tok::String, std::move(out), 0, 0, start});
  }

  const std::string &src;
  size_t pos = 0;
  std::vector<Token> toks;
};

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

//===----------------------------------------------------------------------===//
// Parser
//===----------------------------------------------------------------------===//

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

//===----------------------------------------------------------------------===//
// Evaluator
//===----------------------------------------------------------------------===//

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

//===----------------------------------------------------------------------===//
// ChatTemplate
//===----------------------------------------------------------------------===//

struct ChatTemplate::Impl {
  std::string source;     // as given
  std::string normalized; // what offsets refer to
  std::string name;
  Body body;
  std::optional<std::string> bos, eos;
  ChatTemplateLimits limits;

  std::string where(size_t offset) const {
    size_t line = 1, col = 1;
    for (size_t k = 0; k < offset && k < normalized.size(); ++k) {
      if (normalized[k] == '\n') {
        ++line;
        col = 1;
      } else if ((static_cast<unsigned char>(normalized[k]) & 0xC0) != 0x80) {
        ++col;
      }
    }
    return std::to_string(line) + ":" + std::to_string(col);
  }

  bool render(std::vector<std::pair<std::string, Value>> vars, std::string &out,
              std::string &error) const {
    out.clear();
    auto has = [&](const char *name) {
      for (const auto &kv : vars)
        if (kv.first == name)
          return true;
      return false;
    };
    if (bos && !has("bos_token"))
      vars.emplace_back("bos_token", Value::str(*bos));
    if (eos && !has("eos_token"))
      vars.emplace_back("eos_token", Value::str(*eos));
    try {
      Renderer r(limits, out);
      r.scopes[0] = std::move(vars);
      r.render(body);
      return true;
    } catch (const TemplateError &e) {
      out.clear();
      error = name + ":" + where(e.offset) + ": " + e.message;
    } catch (const std::bad_alloc &) {
      out.clear();
      error = name + ": out of memory while rendering";
    }
    return false;
  }
};

ChatTemplate::ChatTemplate(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
ChatTemplate::~ChatTemplate() = default;

std::unique_ptr<ChatTemplate> ChatTemplate::parse(std::string_view source,
                                                  std::string &error,
                                                  const std::string &name) {
  auto impl = std::make_unique<Impl>();
  impl->source = std::string(source);
  impl->normalized = normalizeSource(source);
  impl->name = name;
  try {
    std::vector<Token> toks = Lexer(impl->normalized).run();
    Parser parser(std::move(toks));
    const Impl *ip = impl.get();
    parser.pos = [ip](size_t offset) { return ip->where(offset); };
    impl->body = parser.parseTemplate();
  } catch (const TemplateError &e) {
    error = name + ":" + impl->where(e.offset) + ": " + e.message;
    return nullptr;
  }
  return std::unique_ptr<ChatTemplate>(new ChatTemplate(std::move(impl)));
}

void ChatTemplate::setSpecialTokens(std::string bos, std::string eos) {
  impl_->bos.reset();
  impl_->eos.reset();
  if (!bos.empty())
    impl_->bos = std::move(bos);
  if (!eos.empty())
    impl_->eos = std::move(eos);
}

void ChatTemplate::setLimits(const ChatTemplateLimits &limits) {
  impl_->limits = limits;
}

const std::string &ChatTemplate::source() const { return impl_->source; }

bool ChatTemplate::render(const std::vector<ChatMessage> &messages,
                          bool addGenerationPrompt, std::string &out,
                          std::string &error) const {
  ValueList list;
  for (const ChatMessage &m : messages)
    list.push_back(makeDict(
        {{"role", Value::str(m.role)}, {"content", Value::str(m.content)}}, 0));
  std::vector<std::pair<std::string, Value>> vars;
  vars.emplace_back("messages", makeList(std::move(list), 0));
  vars.emplace_back("add_generation_prompt",
                    Value::boolean(addGenerationPrompt));
  return impl_->render(std::move(vars), out, error);
}

bool ChatTemplate::renderJson(std::string_view contextJson, std::string &out,
                              std::string &error) const {
  ojson j;
  try {
    j = ojson::parse(contextJson);
  } catch (const std::exception &e) {
    error = "the chat context is not valid JSON: " + std::string(e.what());
    return false;
  }
  if (!j.is_object()) {
    error = "the chat context must be a JSON object";
    return false;
  }
  std::vector<std::pair<std::string, Value>> vars;
  try {
    for (auto it = j.begin(); it != j.end(); ++it)
      vars.emplace_back(it.key(), fromJson(it.value(), 1));
  } catch (const TemplateError &e) {
    error = e.message;
    return false;
  }
  return impl_->render(std::move(vars), out, error);
}

std::string ChatTemplate::assistantSuffix() const {
  static const char *const kMarker = "tfc-assistant-marker-5d1c";
  std::vector<std::vector<ChatMessage>> tries = {
      {{"user", "tfc-user-marker-5d1c"}, {"assistant", kMarker}},
      {{"system", "tfc-system-marker-5d1c"},
       {"user", "tfc-user-marker-5d1c"},
       {"assistant", kMarker}}};
  for (const auto &messages : tries) {
    std::string out, error;
    if (!render(messages, false, out, error))
      continue;
    size_t at = out.find(kMarker);
    if (at != std::string::npos)
      return out.substr(at + std::strlen(kMarker));
  }
  return "";
}

//===----------------------------------------------------------------------===//
// Where templates come from
//===----------------------------------------------------------------------===//

namespace {

constexpr uint64_t kMaxConfigBytes = 64ull << 20;

bool isDirectory(const std::string &p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool exists(const std::string &p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

std::string join(const std::string &dir, const char *file) {
  return dir + (dir.empty() || dir.back() == '/' ? "" : "/") + file;
}

const char *jsonKind(const ojson &v) {
  switch (v.type()) {
  case ojson::value_t::null:
    return "null";
  case ojson::value_t::object:
    return "an object";
  case ojson::value_t::array:
    return "an array";
  case ojson::value_t::string:
    return "a string";
  case ojson::value_t::boolean:
    return "a boolean";
  default:
    return "a number";
  }
}

bool readJsonFile(const std::string &path, ojson &out, std::string &error) {
  std::string text;
  if (!readRegularFile(path, text, kMaxConfigBytes, error))
    return false;
  try {
    out = ojson::parse(text);
  } catch (const std::exception &e) {
    error = path + ": not valid JSON: " + e.what();
    return false;
  }
  if (!out.is_object()) {
    error = path + ": expected a JSON object, found " + jsonKind(out);
    return false;
  }
  return true;
}

/// "chat_template": a string, or [{name, template}, ...] (take "default").
bool templateFromJson(const ojson &v, const std::string &where,
                      std::string &out, std::string &error) {
  if (v.is_string()) {
    out = v.get<std::string>();
    return true;
  }
  if (v.is_array()) {
    std::string names;
    for (size_t k = 0; k < v.size(); ++k) {
      const ojson &item = v[k];
      std::string at = where + "[" + std::to_string(k) + "]";
      if (!item.is_object() || !item.contains("name") ||
          !item["name"].is_string() || !item.contains("template") ||
          !item["template"].is_string()) {
        error = at + ": expected {\"name\": string, \"template\": string}";
        return false;
      }
      std::string name = item["name"].get<std::string>();
      if (name == "default") {
        out = item["template"].get<std::string>();
        return true;
      }
      names += (names.empty() ? "" : ", ") + name;
    }
    error = where + ": no template named \"default\" (the list has: " +
            (names.empty() ? std::string("none") : names) + ")";
    return false;
  }
  error = where + ": expected a string or a list of {name, template}, found " +
          jsonKind(v);
  return false;
}

/// bos_token/eos_token of tokenizer_config.json: a string or an AddedToken
/// object {"content": ...}; null or absent is "".
bool specialToken(const ojson &config, const char *key, const std::string &path,
                  std::string &out, std::string &error) {
  out.clear();
  auto it = config.find(key);
  if (it == config.end() || it->is_null())
    return true;
  if (it->is_string()) {
    out = it->get<std::string>();
    return true;
  }
  if (it->is_object()) {
    auto c = it->find("content");
    if (c != it->end() && c->is_string()) {
      out = c->get<std::string>();
      return true;
    }
  }
  error = path + ": " + key +
          ": expected a string or {\"content\": string}, found " +
          jsonKind(*it);
  return false;
}

} // namespace

bool tfc::rt::readChatTemplate(const std::string &path, ChatTemplateSource &out,
                               std::string &error) {
  out = ChatTemplateSource();
  if (!exists(path)) {
    error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  if (!isDirectory(path) && isGgufFile(path)) {
    std::unique_ptr<GgufFile> file = GgufFile::open(path, error);
    if (!file)
      return false;
    if (!file->find("tokenizer.chat_template")) {
      error = path + ": the file has no chat template (no "
                     "tokenizer.chat_template key)";
      return false;
    }
    if (!file->getString("tokenizer.chat_template", out.text, error))
      return false;
    out.origin = path + ": tokenizer.chat_template";
    if (file->find("tokenizer.ggml.tokens")) {
      std::vector<std::string> tokens;
      if (!file->getStringArray("tokenizer.ggml.tokens", tokens, error))
        return false;
      auto token = [&](const char *key, std::string &dst) {
        if (!file->find(key))
          return true;
        int64_t id;
        if (!file->getInt(key, id, error))
          return false;
        if (id >= 0 && id < int64_t(tokens.size()))
          dst = tokens[size_t(id)];
        return true;
      };
      if (!token("tokenizer.ggml.bos_token_id", out.bos) ||
          !token("tokenizer.ggml.eos_token_id", out.eos))
        return false;
    }
    return true;
  }
  std::string dir;
  if (isDirectory(path)) {
    dir = path;
  } else if (path.size() >= 5 &&
             path.compare(path.size() - 5, 5, ".json") == 0) {
    // A tokenizer.json: its directory.
    size_t slash = path.rfind('/');
    dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  } else {
    // A template file of its own.
    if (!readRegularFile(path, out.text, kMaxConfigBytes, error))
      return false;
    out.origin = path;
    return true;
  }
  std::string configPath = join(dir, "tokenizer_config.json");
  ojson config;
  bool haveConfig = exists(configPath);
  if (haveConfig) {
    if (!readJsonFile(configPath, config, error))
      return false;
    if (!specialToken(config, "bos_token", configPath, out.bos, error) ||
        !specialToken(config, "eos_token", configPath, out.eos, error))
      return false;
  }
  std::string jinjaPath = join(dir, "chat_template.jinja");
  if (exists(jinjaPath)) {
    out.origin = jinjaPath;
    return readRegularFile(jinjaPath, out.text, kMaxConfigBytes, error);
  }
  std::string jsonPath = join(dir, "chat_template.json");
  if (exists(jsonPath)) {
    ojson j;
    if (!readJsonFile(jsonPath, j, error))
      return false;
    if (!j.contains("chat_template")) {
      error = jsonPath + ": no \"chat_template\" key";
      return false;
    }
    out.origin = jsonPath + ": chat_template";
    return templateFromJson(j["chat_template"], out.origin, out.text, error);
  }
  if (!haveConfig) {
    error = dir + ": no chat template (no tokenizer_config.json, "
                  "chat_template.jinja or chat_template.json)";
    return false;
  }
  if (!config.contains("chat_template") || config["chat_template"].is_null()) {
    error = configPath + ": no \"chat_template\" key: the checkpoint has no "
                         "chat template";
    return false;
  }
  out.origin = configPath + ": chat_template";
  return templateFromJson(config["chat_template"], out.origin, out.text, error);
}

std::unique_ptr<ChatTemplate>
tfc::rt::openChatTemplate(const std::string &checkpointPath,
                          std::string &error) {
  ChatTemplateSource source;
  if (!readChatTemplate(checkpointPath, source, error))
    return nullptr;
  std::unique_ptr<ChatTemplate> t =
      ChatTemplate::parse(source.text, error, source.origin);
  if (t)
    t->setSpecialTokens(source.bos, source.eos);
  return t;
}
