//===- LexerTest.cpp - Tests of the .tfm lexer ----------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Frontend/Lexer.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

using namespace tfc;

namespace {

/// Lexes `source` and records the tokens and the diagnostics.
struct Lexed {
  explicit Lexed(llvm::StringRef source) : os(errors) {
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(source, "test.tfm"), llvm::SMLoc());
    DiagnosticEngine diags(sourceMgr, os);
    Lexer lexer(
        sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())->getBuffer(),
        diags);
    for (Token t = lexer.next(); !t.is(Tok::Eof); t = lexer.next())
      tokens.push_back(t);
    numErrors = diags.getNumErrors();
  }
  std::vector<Tok> kinds() const {
    std::vector<Tok> k;
    for (const Token &t : tokens)
      k.push_back(t.kind);
    return k;
  }
  llvm::SourceMgr sourceMgr;
  std::string errors;
  llvm::raw_string_ostream os;
  std::vector<Token> tokens;
  unsigned numErrors = 0;
};

TEST(LexerTest, KeywordsNamesAndPunctuation) {
  Lexed l("entry forward(x: i64[batch, seq]) { return x }");
  std::vector<Tok> expected = {
      Tok::KwEntry, Tok::Ident, Tok::LParen,   Tok::Ident,    Tok::Colon,
      Tok::Ident,   Tok::LBracket, Tok::Ident, Tok::Comma,    Tok::Ident,
      Tok::RBracket, Tok::RParen, Tok::LBrace, Tok::KwReturn, Tok::Ident,
      Tok::RBrace};
  EXPECT_EQ(l.kinds(), expected);
  EXPECT_EQ(l.numErrors, 0u);
  EXPECT_EQ(l.tokens[1].text, "forward");
}

TEST(LexerTest, Numbers) {
  Lexed l("0..layers 1e-5 .5 3.25 1_000 2E3 7");
  std::vector<Tok> expected = {Tok::Int,   Tok::DotDot, Tok::Ident,
                               Tok::Float, Tok::Float,  Tok::Float,
                               Tok::Int,   Tok::Float,  Tok::Int};
  EXPECT_EQ(l.kinds(), expected);
  EXPECT_EQ(l.tokens[3].text, "1e-5");
  EXPECT_EQ(l.tokens[6].text, "1_000");
}

TEST(LexerTest, Operators) {
  Lexed l("a ** b // c @ d == e != f <= g >= h -> i");
  std::vector<Tok> ops;
  for (const Token &t : l.tokens)
    if (!t.is(Tok::Ident))
      ops.push_back(t.kind);
  std::vector<Tok> expected = {Tok::StarStar, Tok::SlashSlash, Tok::At,
                               Tok::EqEq,     Tok::NotEq,      Tok::LessEq,
                               Tok::GreaterEq, Tok::Arrow};
  EXPECT_EQ(ops, expected);
}

TEST(LexerTest, CommentsAndLineStarts) {
  Lexed l("x = 1 # a comment with ünïcode\n  y = 2\n");
  ASSERT_EQ(l.tokens.size(), 6u);
  EXPECT_TRUE(l.tokens[0].startsLine);
  EXPECT_FALSE(l.tokens[1].startsLine);
  EXPECT_TRUE(l.tokens[3].startsLine); // y, after the comment
  EXPECT_EQ(l.numErrors, 0u);
}

TEST(LexerTest, StringsKeepInterpolation) {
  Lexed l("\"h.{l}.attn.c_attn.weight\"");
  ASSERT_EQ(l.tokens.size(), 1u);
  EXPECT_TRUE(l.tokens[0].is(Tok::String));
  EXPECT_EQ(l.tokens[0].text, "\"h.{l}.attn.c_attn.weight\"");
}

TEST(LexerTest, Errors) {
  Lexed unterminated("\"open\nx");
  EXPECT_EQ(unterminated.numErrors, 1u);
  EXPECT_NE(unterminated.errors.find("test.tfm:1:1: error: unterminated string"),
            std::string::npos);
  EXPECT_TRUE(unterminated.tokens.back().is(Tok::Ident)); // lexing goes on

  Lexed bad("x \xff y");
  EXPECT_EQ(bad.numErrors, 1u);
  EXPECT_NE(bad.errors.find("invalid UTF-8 byte 0xFF"), std::string::npos);
  EXPECT_TRUE(bad.tokens[1].is(Tok::Error));

  Lexed number("12abc");
  EXPECT_NE(number.errors.find("malformed number '12abc'"), std::string::npos);

  Lexed truncated("# \xe2\x82");
  EXPECT_NE(truncated.errors.find("invalid UTF-8 byte in comment"),
            std::string::npos);
}

TEST(LexerTest, SuggestionsPreferCloseNames) {
  std::vector<std::string> names = {"layers", "heads", "d_model", "mlp"};
  EXPECT_EQ(DiagnosticEngine::closest("layer", names), "layers");
  EXPECT_EQ(DiagnosticEngine::closest("mpl", names), "mlp");
  EXPECT_EQ(DiagnosticEngine::closest("D_MODEL", names), "d_model");
  EXPECT_EQ(DiagnosticEngine::closest("vocabulary", names), "");
}

TEST(LexerTest, DuplicateDiagnosticsAreDropped) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy("abc"),
                               llvm::SMLoc());
  std::string out;
  llvm::raw_string_ostream os(out);
  DiagnosticEngine diags(sourceMgr, os, /*maxErrors=*/2);
  llvm::SMLoc at = llvm::SMLoc::getFromPointer(
      sourceMgr.getMemoryBuffer(1)->getBufferStart());
  diags.error(at, "same");
  diags.error(at, "same");
  EXPECT_EQ(diags.getNumErrors(), 1u);
  diags.error(at, "second");
  diags.error(at, "third");
  EXPECT_EQ(diags.getNumErrors(), 2u);
  EXPECT_NE(out.find("too many errors"), std::string::npos);
}

} // namespace
