//===- Lexer.cpp - The Jinja lexer ----------------------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Template text to tokens as jinja2/lexer.py does it (Jinja.h).
//
//===----------------------------------------------------------------------===//

#include "Jinja.h"

#include "tfc/Formats/Utf8.h"

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

namespace {

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

} // namespace

std::vector<Token> lex(const std::string &normalized) {
  return Lexer(normalized).run();
}

} // namespace tfc::rt::jinja
