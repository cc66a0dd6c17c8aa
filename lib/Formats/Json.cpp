//===- Json.cpp - The runtime's small JSON reader -------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Recursive descent with a depth limit; every failure records a reason and the
// byte offset where it was found.
//
//===----------------------------------------------------------------------===//

#include "tfc/Formats/Json.h"
#include "tfc/Formats/Utf8.h"

#include <cstring>

using namespace tfc::rt;
using namespace tfc::rt::json;

const Value *Value::get(std::string_view key) const {
  for (const auto &member : members)
    if (member.first == key)
      return &member.second;
  return nullptr;
}

const std::string *Value::duplicateKey() const {
  for (size_t i = 0; i < members.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (members[i].first == members[j].first)
        return &members[i].first;
  return nullptr;
}

const char *json::kindName(Value::Kind kind) {
  switch (kind) {
  case Value::Null:
    return "null";
  case Value::Bool:
    return "a boolean";
  case Value::Number:
    return "a number";
  case Value::String:
    return "a string";
  case Value::Array:
    return "an array";
  case Value::Object:
    return "an object";
  }
  return "?";
}

namespace {

class Reader {
public:
  explicit Reader(std::string_view text) : text(text) {}

  bool read(Value &out, std::string &error, std::string_view what) {
    if (!value(out, 0)) {
      error = "invalid " + std::string(what) + " at byte " +
              std::to_string(pos) + ": " + why;
      return false;
    }
    skipSpace();
    if (pos != text.size()) {
      error = "invalid " + std::string(what) + " at byte " +
              std::to_string(pos) +
              ": unexpected text after the top-level value";
      return false;
    }
    return true;
  }

private:
  static constexpr int kMaxDepth = 64;

  bool fail(const char *message) {
    why = message;
    return false;
  }
  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }
  bool literal(const char *word) {
    size_t n = std::strlen(word);
    if (text.substr(pos, n) != word)
      return fail("unknown literal");
    pos += n;
    return true;
  }

  bool value(Value &out, int depth) {
    if (depth > kMaxDepth)
      return fail("nested too deeply");
    skipSpace();
    if (pos >= text.size())
      return fail("unexpected end");
    char c = text[pos];
    if (c == '{')
      return object(out, depth);
    if (c == '[')
      return array(out, depth);
    if (c == '"') {
      out.kind = Value::String;
      return string(out.string);
    }
    if (c == 't' || c == 'f') {
      out.kind = Value::Bool;
      out.boolean = c == 't';
      return literal(c == 't' ? "true" : "false");
    }
    if (c == 'n') {
      out.kind = Value::Null;
      return literal("null");
    }
    if (c == '-' || (c >= '0' && c <= '9'))
      return number(out);
    return fail("expected a value");
  }

  static bool isDigit(char c) { return c >= '0' && c <= '9'; }

  /// The JSON number grammar; the value is kept when it is an integer in
  /// [0, 2^63).
  bool number(Value &out) {
    out.kind = Value::Number;
    bool negative = text[pos] == '-', fractional = false, overflow = false;
    if (negative)
      ++pos;
    if (pos >= text.size() || !isDigit(text[pos]))
      return fail("expected digits");
    if (text[pos] == '0' && pos + 1 < text.size() && isDigit(text[pos + 1]))
      return fail("leading zero in a number");
    uint64_t v = 0;
    while (pos < text.size() && isDigit(text[pos])) {
      uint64_t d = static_cast<uint64_t>(text[pos++] - '0');
      if (v > (UINT64_C(1) << 62) / 5) // v * 10 + d could pass 2^63
        overflow = true;
      v = v * 10 + d;
    }
    if (pos < text.size() && text[pos] == '.') {
      fractional = true;
      ++pos;
      if (pos >= text.size() || !isDigit(text[pos]))
        return fail("expected digits after '.'");
      while (pos < text.size() && isDigit(text[pos]))
        ++pos;
    }
    if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
      fractional = true;
      ++pos;
      if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
        ++pos;
      if (pos >= text.size() || !isDigit(text[pos]))
        return fail("expected digits in an exponent");
      while (pos < text.size() && isDigit(text[pos]))
        ++pos;
    }
    out.isInteger =
        !negative && !fractional && !overflow && v < (UINT64_C(1) << 63);
    out.integer = out.isInteger ? v : 0;
    return true;
  }

  bool string(std::string &out) {
    ++pos; // "
    while (true) {
      if (pos >= text.size())
        return fail("unterminated string");
      char c = text[pos++];
      if (c == '"')
        return true;
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("control character in a string");
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos >= text.size())
        return fail("unterminated escape");
      char e = text[pos++];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out.push_back(e);
        break;
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'u': {
        uint32_t cp;
        if (!hex4(cp))
          return false;
        if (cp >= 0xD800 && cp < 0xDC00) { // a surrogate pair
          uint32_t low;
          if (text.substr(pos, 2) != "\\u" || (pos += 2, !hex4(low)) ||
              low < 0xDC00 || low >= 0xE000)
            return fail("invalid surrogate pair");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        } else if (cp >= 0xDC00 && cp < 0xE000) {
          return fail("invalid surrogate pair");
        }
        appendUtf8(out, cp);
        break;
      }
      default:
        return fail("invalid escape");
      }
    }
  }

  bool hex4(uint32_t &cp) {
    if (pos + 4 > text.size())
      return fail("truncated \\u escape");
    cp = 0;
    for (int i = 0; i < 4; ++i) {
      char h = text[pos++];
      cp <<= 4;
      if (h >= '0' && h <= '9')
        cp |= h - '0';
      else if (h >= 'a' && h <= 'f')
        cp |= h - 'a' + 10;
      else if (h >= 'A' && h <= 'F')
        cp |= h - 'A' + 10;
      else
        return fail("invalid \\u escape");
    }
    return true;
  }

  bool array(Value &out, int depth) {
    out.kind = Value::Array;
    ++pos; // [
    skipSpace();
    if (pos < text.size() && text[pos] == ']') {
      ++pos;
      return true;
    }
    while (true) {
      out.items.emplace_back();
      if (!value(out.items.back(), depth + 1))
        return false;
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == ']') {
        ++pos;
        return true;
      }
      return fail("expected ',' or ']'");
    }
  }

  bool object(Value &out, int depth) {
    out.kind = Value::Object;
    ++pos; // {
    skipSpace();
    if (pos < text.size() && text[pos] == '}') {
      ++pos;
      return true;
    }
    while (true) {
      skipSpace();
      if (pos >= text.size() || text[pos] != '"')
        return fail("expected a member name");
      std::string key;
      if (!string(key))
        return false;
      skipSpace();
      if (pos >= text.size() || text[pos] != ':')
        return fail("expected ':'");
      ++pos;
      out.members.emplace_back(std::move(key), Value());
      if (!value(out.members.back().second, depth + 1))
        return false;
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == '}') {
        ++pos;
        return true;
      }
      return fail("expected ',' or '}'");
    }
  }

  std::string_view text;
  size_t pos = 0;
  const char *why = "";
};

} // namespace

bool json::parse(std::string_view text, Value &out, std::string &error,
                 std::string_view what) {
  out = Value();
  return Reader(text).read(out, error, what);
}

std::string json::quote(std::string_view s) {
  static const char hex[] = "0123456789abcdef";
  std::string out = "\"";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
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
    default:
      if (u < 0x20) {
        out += "\\u00";
        out.push_back(hex[u >> 4]);
        out.push_back(hex[u & 15]);
      } else {
        out.push_back(c);
      }
    }
  }
  return out + "\"";
}
