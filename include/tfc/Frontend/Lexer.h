//===- Lexer.h - Tokens of the .tfm language --------------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FRONTEND_LEXER_H
#define TFC_FRONTEND_LEXER_H

#include "tfc/Frontend/Diagnostics.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <cstdint>

namespace tfc {

enum class Tok {
  Eof,
  Error, // an invalid character, already reported
  Ident,
  Int,
  Float,
  String,
  // Keywords.
  KwModel, KwConst, KwDim, KwWeight, KwBlock, KwEntry, KwFor, KwIn, KwIf,
  KwElse, KwReturn, KwAssert, KwTrue, KwFalse, KwAnd, KwOr, KwNot,
  // Punctuation.
  LParen, RParen, LBracket, RBracket, LBrace, RBrace, Comma, Colon, Dot,
  DotDot, Arrow,
  // Operators.
  Assign, Plus, Minus, Star, StarStar, Slash, SlashSlash, Percent, At,
  EqEq, NotEq, Less, LessEq, Greater, GreaterEq,
};

/// A human-readable name of a token kind for "expected X" messages.
llvm::StringRef tokenName(Tok kind);

struct Token {
  Tok kind = Tok::Eof;
  /// The token's text in the source buffer (a string's text includes quotes).
  llvm::StringRef text;
  /// True when the token is the first on its line (used to resynchronise
  /// after a syntax error).
  bool startsLine = false;

  llvm::SMLoc getLoc() const { return llvm::SMLoc::getFromPointer(text.data()); }
  llvm::SMRange getRange() const {
    return {getLoc(), llvm::SMLoc::getFromPointer(text.data() + text.size())};
  }
  bool is(Tok k) const { return kind == k; }
};

/// Splits a buffer into tokens. `#` starts a comment that runs to the end of
/// the line; newlines are otherwise insignificant. Non-ASCII bytes are only
/// allowed, as valid UTF-8, in comments and strings.
class Lexer {
public:
  Lexer(llvm::StringRef buffer, DiagnosticEngine &diags);

  Token next();

private:
  Token make(Tok kind, const char *start);
  Token lexNumber(const char *start);
  Token lexString(const char *start);
  Token lexIdentifier(const char *start);
  /// Skips a valid UTF-8 sequence starting at `p`; returns its length, or 0
  /// if the bytes are not valid UTF-8.
  static unsigned utf8Length(const char *p, const char *end);

  const char *cur, *end;
  DiagnosticEngine *diags; // a pointer so that the parser can copy the
                           // lexer to look ahead
  bool atLineStart = true;
};

} // namespace tfc

#endif // TFC_FRONTEND_LEXER_H
