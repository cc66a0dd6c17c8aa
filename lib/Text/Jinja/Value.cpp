//===- Value.cpp - Jinja values -------------------------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Python values for the Jinja engine (Jinja.h): construction with the
// nesting limits, truth, str()/repr(), JSON both ways; string helpers by
// code point; case mappings through utf8proc.
//
//===----------------------------------------------------------------------===//

#include "Jinja.h"

#include "tfc/Formats/Json.h"
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

void appendJsonString(const std::string &s, std::string &out) {
  out += json::quote(s);
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

size_t spaceBefore(std::string_view s, size_t end) {
  for (size_t len = 1; len <= 3 && len <= end; ++len)
    if (spaceAt(s, end - len) == len)
      return len;
  return 0;
}

size_t charLen(std::string_view s, size_t pos) {
  unsigned c = static_cast<unsigned char>(s[pos]);
  size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
  return std::min(n, s.size() - pos);
}

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

} // namespace tfc::rt::jinja
