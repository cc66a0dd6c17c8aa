//===- Lexer.cpp - Tokens of the .tfm language ----------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Frontend/Lexer.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"

using namespace tfc;

llvm::StringRef tfc::tokenName(Tok kind) {
  switch (kind) {
  case Tok::Eof: return "end of file";
  case Tok::Error: return "invalid token";
  case Tok::Ident: return "a name";
  case Tok::Int: return "an integer";
  case Tok::Float: return "a number";
  case Tok::String: return "a string";
  case Tok::KwModel: return "'model'";
  case Tok::KwConst: return "'const'";
  case Tok::KwDim: return "'dim'";
  case Tok::KwWeight: return "'weight'";
  case Tok::KwBlock: return "'block'";
  case Tok::KwEntry: return "'entry'";
  case Tok::KwFor: return "'for'";
  case Tok::KwIn: return "'in'";
  case Tok::KwIf: return "'if'";
  case Tok::KwElse: return "'else'";
  case Tok::KwReturn: return "'return'";
  case Tok::KwAssert: return "'assert'";
  case Tok::KwTrue: return "'true'";
  case Tok::KwFalse: return "'false'";
  case Tok::KwAnd: return "'and'";
  case Tok::KwOr: return "'or'";
  case Tok::KwNot: return "'not'";
  case Tok::LParen: return "'('";
  case Tok::RParen: return "')'";
  case Tok::LBracket: return "'['";
  case Tok::RBracket: return "']'";
  case Tok::LBrace: return "'{'";
  case Tok::RBrace: return "'}'";
  case Tok::Comma: return "','";
  case Tok::Colon: return "':'";
  case Tok::Dot: return "'.'";
  case Tok::DotDot: return "'..'";
  case Tok::Arrow: return "'->'";
  case Tok::Assign: return "'='";
  case Tok::Plus: return "'+'";
  case Tok::Minus: return "'-'";
  case Tok::Star: return "'*'";
  case Tok::StarStar: return "'**'";
  case Tok::Slash: return "'/'";
  case Tok::SlashSlash: return "'//'";
  case Tok::Percent: return "'%'";
  case Tok::At: return "'@'";
  case Tok::EqEq: return "'=='";
  case Tok::NotEq: return "'!='";
  case Tok::Less: return "'<'";
  case Tok::LessEq: return "'<='";
  case Tok::Greater: return "'>'";
  case Tok::GreaterEq: return "'>='";
  }
  return "token";
}

Lexer::Lexer(llvm::StringRef buffer, DiagnosticEngine &diags)
    : cur(buffer.begin()), end(buffer.end()), diags(&diags) {}

Token Lexer::make(Tok kind, const char *start) {
  Token t;
  t.kind = kind;
  t.text = llvm::StringRef(start, cur - start);
  t.startsLine = atLineStart;
  atLineStart = false;
  return t;
}

unsigned Lexer::utf8Length(const char *p, const char *end) {
  auto byte = static_cast<unsigned char>(*p);
  unsigned len = byte < 0x80 ? 1 : (byte >> 5) == 0x6 ? 2 : (byte >> 4) == 0xE ? 3
                 : (byte >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || end - p < static_cast<ptrdiff_t>(len))
    return 0;
  for (unsigned i = 1; i < len; ++i)
    if ((static_cast<unsigned char>(p[i]) & 0xC0) != 0x80)
      return 0;
  // Reject overlong two-byte forms (0xC0, 0xC1).
  if (len == 2 && byte < 0xC2)
    return 0;
  return len;
}

Token Lexer::next() {
  // Skip whitespace and comments.
  while (cur != end) {
    char c = *cur;
    if (c == '\n') {
      atLineStart = true;
      ++cur;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      ++cur;
    } else if (c == '#') {
      while (cur != end && *cur != '\n') {
        unsigned len = utf8Length(cur, end);
        if (len == 0) {
          diags->error(llvm::SMLoc::getFromPointer(cur),
                      "invalid UTF-8 byte in comment");
          len = 1;
        }
        cur += len;
      }
    } else {
      break;
    }
  }
  const char *start = cur;
  if (cur == end)
    return make(Tok::Eof, start);

  char c = *cur++;
  auto follows = [&](char next) {
    if (cur != end && *cur == next) {
      ++cur;
      return true;
    }
    return false;
  };
  switch (c) {
  case '(': return make(Tok::LParen, start);
  case ')': return make(Tok::RParen, start);
  case '[': return make(Tok::LBracket, start);
  case ']': return make(Tok::RBracket, start);
  case '{': return make(Tok::LBrace, start);
  case '}': return make(Tok::RBrace, start);
  case ',': return make(Tok::Comma, start);
  case ':': return make(Tok::Colon, start);
  case '+': return make(Tok::Plus, start);
  case '%': return make(Tok::Percent, start);
  case '@': return make(Tok::At, start);
  case '.':
    if (follows('.'))
      return make(Tok::DotDot, start);
    if (cur != end && llvm::isDigit(*cur))
      return lexNumber(start);
    return make(Tok::Dot, start);
  case '-': return make(follows('>') ? Tok::Arrow : Tok::Minus, start);
  case '*': return make(follows('*') ? Tok::StarStar : Tok::Star, start);
  case '/': return make(follows('/') ? Tok::SlashSlash : Tok::Slash, start);
  case '=': return make(follows('=') ? Tok::EqEq : Tok::Assign, start);
  case '<': return make(follows('=') ? Tok::LessEq : Tok::Less, start);
  case '>': return make(follows('=') ? Tok::GreaterEq : Tok::Greater, start);
  case '!':
    if (follows('='))
      return make(Tok::NotEq, start);
    diags->error(llvm::SMLoc::getFromPointer(start),
                "unexpected character '!'; use 'not' for negation");
    return make(Tok::Error, start);
  case '"': return lexString(start);
  default:
    break;
  }
  if (llvm::isDigit(c))
    return lexNumber(start);
  if (llvm::isAlpha(c) || c == '_')
    return lexIdentifier(start);

  --cur;
  unsigned len = utf8Length(cur, end);
  if (len == 0) {
    diags->error(llvm::SMLoc::getFromPointer(start),
                "invalid UTF-8 byte 0x" +
                    llvm::utohexstr(static_cast<unsigned char>(*cur)) +
                    " (.tfm files are UTF-8 text)");
    ++cur;
  } else if (len == 1) {
    std::string shown = llvm::isPrint(c) ? std::string("'") + c + "'"
                                         : "0x" + llvm::utohexstr(
                                                      static_cast<unsigned char>(c));
    diags->error(llvm::SMLoc::getFromPointer(start),
                "unexpected character " + shown);
    ++cur;
  } else {
    diags->error(llvm::SMLoc::getFromPointer(start),
                "unexpected character '" + llvm::StringRef(cur, len) +
                    "'; names and operators are ASCII");
    cur += len;
  }
  return make(Tok::Error, start);
}

Token Lexer::lexNumber(const char *start) {
  bool isFloat = *start == '.';
  while (cur != end && (llvm::isDigit(*cur) || *cur == '_'))
    ++cur;
  // A fraction, unless this is the `..` of a range.
  if (cur != end && *cur == '.' && !(cur + 1 != end && cur[1] == '.')) {
    isFloat = true;
    ++cur;
    while (cur != end && llvm::isDigit(*cur))
      ++cur;
  }
  if (cur != end && (*cur == 'e' || *cur == 'E')) {
    const char *p = cur + 1;
    if (p != end && (*p == '+' || *p == '-'))
      ++p;
    if (p != end && llvm::isDigit(*p)) {
      isFloat = true;
      cur = p;
      while (cur != end && llvm::isDigit(*cur))
        ++cur;
    }
  }
  if (cur != end && (llvm::isAlnum(*cur) || *cur == '_')) {
    while (cur != end && (llvm::isAlnum(*cur) || *cur == '_'))
      ++cur;
    diags->error(llvm::SMLoc::getFromPointer(start),
                "malformed number '" + llvm::StringRef(start, cur - start) +
                    "'");
    return make(Tok::Error, start);
  }
  return make(isFloat ? Tok::Float : Tok::Int, start);
}

Token Lexer::lexString(const char *start) {
  while (cur != end && *cur != '"' && *cur != '\n') {
    if (*cur == '\\') {
      diags->error(llvm::SMLoc::getFromPointer(cur),
                  "escape sequences are not supported in strings");
      ++cur;
      continue;
    }
    unsigned len = utf8Length(cur, end);
    if (len == 0) {
      diags->error(llvm::SMLoc::getFromPointer(cur),
                  "invalid UTF-8 byte in string");
      len = 1;
    }
    cur += len;
  }
  if (cur == end || *cur != '"') {
    diags->error(llvm::SMLoc::getFromPointer(start),
                "unterminated string; expected '\"' before the end of the line");
    return make(Tok::Error, start);
  }
  ++cur;
  return make(Tok::String, start);
}

Token Lexer::lexIdentifier(const char *start) {
  while (cur != end && (llvm::isAlnum(*cur) || *cur == '_'))
    ++cur;
  llvm::StringRef text(start, cur - start);
  Tok kind = llvm::StringSwitch<Tok>(text)
                 .Case("model", Tok::KwModel)
                 .Case("const", Tok::KwConst)
                 .Case("dim", Tok::KwDim)
                 .Case("weight", Tok::KwWeight)
                 .Case("block", Tok::KwBlock)
                 .Case("entry", Tok::KwEntry)
                 .Case("for", Tok::KwFor)
                 .Case("in", Tok::KwIn)
                 .Case("if", Tok::KwIf)
                 .Case("else", Tok::KwElse)
                 .Case("return", Tok::KwReturn)
                 .Case("assert", Tok::KwAssert)
                 .Case("true", Tok::KwTrue)
                 .Case("false", Tok::KwFalse)
                 .Case("and", Tok::KwAnd)
                 .Case("or", Tok::KwOr)
                 .Case("not", Tok::KwNot)
                 .Default(Tok::Ident);
  return make(kind, start);
}
