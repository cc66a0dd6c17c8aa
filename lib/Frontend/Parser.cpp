//===- Parser.cpp - Recursive-descent parser of .tfm ----------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Grammar (docs/language.md has the full EBNF):
//
//   module  := item*
//   item    := 'model' NAME | 'const' NAME '=' expr
//            | 'dim' NAME (',' NAME)* ['<=' expr] | weight | assert
//            | ('block' | 'entry') NAME '(' [param (',' param)*] ')' '{' stmt* '}'
//   stmt    := weight | 'for' NAME 'in' expr '..' expr '{' stmt* '}'
//            | 'if' expr '{' stmt* '}' ['else' ('{' stmt* '}' | if)]
//            | 'return' expr (',' expr)* | 'assert' expr ',' STRING
//            | NAME (',' NAME)* '=' expr
//   expr    := or;  or := and ('or' and)*;  and := not ('and' not)*
//   not     := 'not' not | cmp;  cmp := sum [('=='|'!='|'<'|'<='|'>'|'>=') sum]
//   sum     := term (('+'|'-') term)*;  term := unary (('*'|'/'|'//'|'%'|'@') unary)*
//   unary   := '-' unary | power;  power := primary ['**' unary]
//   primary := INT | FLOAT | STRING | 'true' | 'false' | NAME ['(' args ')']
//            | '(' expr ')' | '[' [expr (',' expr)*] ']'
//
//===----------------------------------------------------------------------===//

#include "tfc/Frontend/Parser.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"

#include <cerrno>
#include <cstdlib>

using namespace tfc;
using namespace tfc::ast;

namespace {

/// Expressions and statement blocks deeper than this are rejected rather than
/// risking the stack.
constexpr unsigned kMaxDepth = 256;

class Parser {
public:
  explicit Parser(DiagnosticEngine &diags)
      : diags(diags),
        lexer(diags.getSourceMgr()
                  .getMemoryBuffer(diags.getSourceMgr().getMainFileID())
                  ->getBuffer(),
              diags) {
    advance();
  }

  std::unique_ptr<Module> parse();

private:
  // Token handling.
  void advance() {
    if (!tok.is(Tok::Eof) && !tok.text.empty())
      prevEnd = tok.text.data() + tok.text.size();
    do {
      tok = lexer.next();
      // The lexer reported this token; what follows in the statement would
      // only produce follow-on errors.
      if (tok.is(Tok::Error))
        inError = true;
    } while (tok.is(Tok::Error));
  }
  /// True if `tok` continues the current expression: not the first token of
  /// a line, unless inside parentheses or brackets (Python's line joining).
  bool continuesLine() const { return !tok.startsLine || nesting > 0; }
  bool consumeIf(Tok kind) {
    if (!tok.is(kind))
      return false;
    advance();
    return true;
  }
  /// Reports "expected X" at the current token unless an error was already
  /// reported for this statement.
  bool expect(Tok kind, llvm::StringRef context) {
    if (consumeIf(kind))
      return true;
    errorExpected(tokenName(kind), context);
    return false;
  }
  /// `atToken` reports at the current token even at the start of a line
  /// (when that token, not a missing one before it, is the problem).
  void errorExpected(llvm::StringRef what, llvm::StringRef context,
                     bool atToken = false);
  /// After a missing closer at the end of the file, points at the opener.
  void noteUnclosed(llvm::SMLoc open, llvm::StringRef what) {
    if (tok.is(Tok::Eof) && !notedUnclosed) {
      notedUnclosed = true;
      diags.note(open, ("the " + what + " opened here").str());
    }
  }
  std::optional<Ident> expectIdent(llvm::StringRef context);
  /// Skips to the first token of a line, a closing brace or the end; skips
  /// at least one token if nothing was consumed since `stmtStart`.
  void recover(const char *stmtStart);
  void recoverTopLevel();

  // Declarations.
  void parseItem(Module &module);
  std::unique_ptr<WeightStmt> parseWeight();
  bool parseFunc(FuncDecl &func);
  bool parseParam(Param &param);
  bool parseType(TypeExpr &type);

  // Statements.
  bool parseBody(Body &body, llvm::StringRef context,
                 llvm::SMLoc *closeLoc = nullptr);
  StmtPtr parseStmt();

  // Expressions.
  ExprPtr parseExpr();
  ExprPtr parseOr();
  ExprPtr parseAnd();
  ExprPtr parseNot();
  ExprPtr parseCmp();
  ExprPtr parseSum();
  ExprPtr parseTerm();
  ExprPtr parseUnary();
  ExprPtr parsePower();
  ExprPtr parsePrimary();
  ExprPtr parseNumber();
  bool parseArgs(std::vector<Arg> &args, llvm::StringRef callee);

  struct DepthGuard {
    Parser &p;
    bool ok;
    explicit DepthGuard(Parser &p) : p(p), ok(++p.depth <= kMaxDepth) {
      if (!ok && !p.reportedDepth) {
        p.reportedDepth = true;
        p.diags.error(p.tok.getLoc(), "nesting is too deep (more than " +
                                          llvm::Twine(kMaxDepth) +
                                          " levels of brackets, blocks or "
                                          "chained operators)");
      }
    }
    ~DepthGuard() { --p.depth; }
  };

  /// Each operator of a chain `a + b + c` deepens the (left-leaning) tree, so
  /// it counts against the same limit as brackets.
  struct ChainGuard {
    Parser &p;
    unsigned links = 0;
    explicit ChainGuard(Parser &p) : p(p) {}
    bool add() {
      ++links;
      DepthGuard probe(p); // reports once when over the limit
      ++p.depth;           // keep the level until the chain ends
      return probe.ok;
    }
    ~ChainGuard() { p.depth -= links; }
  };

  DiagnosticEngine &diags;
  Lexer lexer;
  Token tok;
  /// The end of the previous token, for errors at the end of a line.
  const char *prevEnd = nullptr;
  /// Open parentheses and brackets: inside them, lines join.
  unsigned nesting = 0;
  /// The end of the file is reported once, with one note on the innermost
  /// construct it left open.
  bool reportedEof = false, notedUnclosed = false;
  unsigned depth = 0;
  bool reportedDepth = false;
  /// Set once an error is reported in the current statement; suppresses
  /// follow-on "expected" errors until the parser resynchronises.
  bool inError = false;
};

} // namespace

void Parser::errorExpected(llvm::StringRef what, llvm::StringRef context,
                           bool atToken) {
  if (inError || (tok.is(Tok::Eof) && reportedEof))
    return;
  inError = true;
  reportedEof |= tok.is(Tok::Eof);
  std::string message = ("expected " + what).str();
  if (!context.empty())
    message += (" " + context).str();
  // A missing closer or operand at the end of a line is reported there, not
  // at the first token of the next line.
  if (prevEnd && !atToken && (tok.startsLine || tok.is(Tok::Eof))) {
    diags.error(llvm::SMLoc::getFromPointer(prevEnd),
                message + (tok.is(Tok::Eof) ? ", found end of file"
                                            : " at the end of the line"));
    return;
  }
  diags.error(tok.getLoc(), message + ", found '" + tok.text + "'");
}

std::optional<Ident> Parser::expectIdent(llvm::StringRef context) {
  if (!tok.is(Tok::Ident)) {
    if (tok.kind >= Tok::KwModel && tok.kind <= Tok::KwNot && !inError) {
      inError = true;
      diags.error(tok.getLoc(), "expected a name " + context + ", found '" +
                                    tok.text + "', which is a keyword");
    } else {
      errorExpected("a name", context);
    }
    return std::nullopt;
  }
  Ident id{tok.text.str(), tok.getLoc()};
  advance();
  return id;
}

void Parser::recover(const char *stmtStart) {
  // A statement cut short by a line break resumes at the next line; one that
  // made no progress skips its first token.
  if (!tok.is(Tok::Eof) && !tok.is(Tok::RBrace) &&
      (!tok.startsLine || tok.text.data() == stmtStart))
    advance();
  // Skip whole `{ ... }` groups so that a nested body's closing brace does
  // not end the enclosing one.
  unsigned braces = 0;
  while (!tok.is(Tok::Eof) &&
         (braces > 0 || (!tok.is(Tok::RBrace) && !tok.startsLine))) {
    if (tok.is(Tok::LBrace))
      ++braces;
    else if (tok.is(Tok::RBrace))
      --braces;
    advance();
  }
  inError = false;
}

void Parser::recoverTopLevel() {
  auto isItemStart = [&] {
    return tok.is(Tok::KwModel) || tok.is(Tok::KwConst) || tok.is(Tok::KwDim) ||
           tok.is(Tok::KwWeight) || tok.is(Tok::KwBlock) ||
           tok.is(Tok::KwEntry) || tok.is(Tok::KwAssert);
  };
  // Resume at the next declaration keyword, or at anything in the first
  // column (declarations are not indented; statements of a body are).
  auto inFirstColumn = [&] {
    const char *start = diags.getSourceMgr()
                            .getMemoryBuffer(
                                diags.getSourceMgr().getMainFileID())
                            ->getBufferStart();
    const char *p = tok.text.data();
    return p == start || p[-1] == '\n';
  };
  if (!tok.is(Tok::Eof))
    advance();
  while (!tok.is(Tok::Eof) &&
         !(tok.startsLine && (isItemStart() || inFirstColumn())))
    advance();
  inError = false;
}

std::unique_ptr<Module> Parser::parse() {
  auto module = std::make_unique<Module>();
  while (!tok.is(Tok::Eof)) {
    parseItem(*module);
    if (reportedDepth)
      break; // resynchronising inside such input would only add noise
    // Errors inside a body were recovered there; only a broken declaration
    // needs to skip ahead.
    if (inError)
      recoverTopLevel();
  }
  return module;
}

void Parser::parseItem(Module &module) {
  switch (tok.kind) {
  case Tok::KwModel: {
    advance();
    auto name = expectIdent("after 'model'");
    if (name)
      module.modelName = *name;
    return;
  }
  case Tok::KwConst: {
    advance();
    auto name = expectIdent("after 'const'");
    if (!name || !expect(Tok::Assign, "after the constant's name"))
      return;
    ExprPtr value = parseExpr();
    if (value)
      module.consts.push_back({*name, std::move(value)});
    return;
  }
  case Tok::KwDim: {
    advance();
    std::vector<Ident> names;
    do {
      auto name = expectIdent("in 'dim' declaration");
      if (!name)
        return;
      names.push_back(*name);
    } while (consumeIf(Tok::Comma));
    std::shared_ptr<Expr> bound;
    if (consumeIf(Tok::LessEq)) {
      bound = parseExpr();
      if (!bound)
        return;
    }
    for (const Ident &name : names)
      module.dims.push_back({name, bound});
    return;
  }
  case Tok::KwWeight:
    if (auto w = parseWeight())
      module.weights.push_back(std::move(w));
    return;
  case Tok::KwAssert:
    if (StmtPtr s = parseStmt())
      module.asserts.emplace_back(llvm::cast<AssertStmt>(s.release()));
    return;
  case Tok::KwBlock:
  case Tok::KwEntry: {
    FuncDecl func;
    func.isEntry = tok.is(Tok::KwEntry);
    advance();
    if (parseFunc(func))
      module.funcs.push_back(std::move(func));
    return;
  }
  default:
    errorExpected("'model', 'const', 'dim', 'weight', 'assert', 'block' or "
                  "'entry'",
                  "at the top level", /*atToken=*/true);
    return;
  }
}

std::unique_ptr<WeightStmt> Parser::parseWeight() {
  llvm::SMLoc loc = tok.getLoc();
  advance(); // 'weight'
  auto name = expectIdent("after 'weight'");
  if (!name || !expect(Tok::Colon, "after the weight's name"))
    return nullptr;
  TypeExpr type;
  if (!parseType(type))
    return nullptr;
  if (!type.isTensor()) {
    diags.error(type.loc, "a weight must have a tensor type such as "
                          "f32[vocab, d_model], found '" +
                              type.scalar + "'");
    inError = true;
    return nullptr;
  }
  if (!expect(Tok::Assign, "after the weight's type (its name in the weights "
                           "file, e.g. = \"h.{l}.ln_1.weight\")"))
    return nullptr;
  if (!tok.is(Tok::String)) {
    errorExpected("the weight's name in the weights file as a string",
                  "after '='");
    return nullptr;
  }
  auto key = std::make_unique<StringExpr>(tok.getLoc(),
                                          tok.text.drop_front().drop_back().str());
  advance();
  return std::make_unique<WeightStmt>(loc, *name, std::move(type),
                                      std::move(key));
}

bool Parser::parseFunc(FuncDecl &func) {
  llvm::StringRef what = func.isEntry ? "entry" : "block";
  auto name = expectIdent(("after '" + what + "'").str());
  if (!name)
    return false;
  func.name = *name;
  llvm::SMLoc open = tok.getLoc();
  if (!expect(Tok::LParen, ("after the " + what + "'s name").str()))
    return false;
  ++nesting;
  llvm::scope_exit closeNesting([&] { --nesting; });
  if (!tok.is(Tok::RParen)) {
    do {
      if (tok.is(Tok::RParen)) // trailing comma
        break;
      Param param;
      if (!parseParam(param))
        return false;
      func.params.push_back(std::move(param));
    } while (consumeIf(Tok::Comma));
  }
  if (!expect(Tok::RParen, "after the parameters")) {
    noteUnclosed(open, "'('");
    return false;
  }
  closeNesting.release();
  --nesting;
  if (!parseBody(func.body, ("of " + what + " '" + func.name.name + "'").str(),
                 &func.endLoc))
    return false;
  return true;
}

bool Parser::parseParam(Param &param) {
  auto name = expectIdent("for a parameter");
  if (!name)
    return false;
  param.name = *name;
  param.type.loc = name->loc;
  if (consumeIf(Tok::Colon))
    return parseType(param.type);
  param.type.anyTensor = true;
  return true;
}

bool Parser::parseType(TypeExpr &type) {
  type.loc = tok.getLoc();
  if (tok.is(Tok::Ident)) {
    Ident id{tok.text.str(), tok.getLoc()};
    advance();
    if (!tok.is(Tok::LBracket)) {
      type.scalar = id.name;
      return true;
    }
    type.dtype = id;
  }
  if (!expect(Tok::LBracket, "for a type (int, float, bool, str, or a tensor "
                             "type such as f32[batch, seq, d_model])"))
    return false;
  ++nesting;
  llvm::scope_exit closeNesting([&] { --nesting; });
  if (!tok.is(Tok::RBracket)) {
    do {
      ExprPtr dim = parseExpr();
      if (!dim)
        return false;
      type.dims.push_back(std::move(dim));
    } while (consumeIf(Tok::Comma));
  }
  return expect(Tok::RBracket, "after the tensor's dims");
}

bool Parser::parseBody(Body &body, llvm::StringRef context,
                       llvm::SMLoc *closeLoc) {
  DepthGuard guard(*this);
  if (!guard.ok)
    return false;
  llvm::SMLoc open = tok.getLoc();
  if (!expect(Tok::LBrace, ("to open the body " + context).str()))
    return false;
  while (!tok.is(Tok::RBrace) && !tok.is(Tok::Eof)) {
    unsigned errorsBefore = diags.getNumErrors();
    const char *stmtStart = tok.text.data();
    StmtPtr stmt = parseStmt();
    if (stmt && diags.getNumErrors() == errorsBefore && !inError) {
      body.push_back(std::move(stmt));
      continue;
    }
    if (reportedDepth)
      return false;
    recover(stmtStart);
  }
  if (tok.is(Tok::Eof)) {
    inError = false;
    errorExpected("'}'", ("to close the body " + context).str());
    noteUnclosed(open, "body");
    return false;
  }
  if (closeLoc)
    *closeLoc = tok.getLoc();
  advance(); // '}'
  return true;
}

StmtPtr Parser::parseStmt() {
  llvm::SMLoc loc = tok.getLoc();
  switch (tok.kind) {
  case Tok::KwWeight:
    return parseWeight();
  case Tok::KwFor: {
    advance();
    auto var = expectIdent("after 'for'");
    if (!var || !expect(Tok::KwIn, "after the loop variable"))
      return nullptr;
    ExprPtr lo = parseSum();
    if (!lo || !expect(Tok::DotDot, "in the loop range (lo..hi)"))
      return nullptr;
    ExprPtr hi = parseSum();
    if (!hi)
      return nullptr;
    Body body;
    if (!parseBody(body, "of the 'for' loop"))
      return nullptr;
    return std::make_unique<ForStmt>(loc, *var, std::move(lo), std::move(hi),
                                     std::move(body));
  }
  case Tok::KwIf: {
    advance();
    ExprPtr cond = parseExpr();
    if (!cond)
      return nullptr;
    Body thenBody, elseBody;
    if (!parseBody(thenBody, "of the 'if'"))
      return nullptr;
    if (consumeIf(Tok::KwElse)) {
      if (tok.is(Tok::KwIf)) {
        DepthGuard guard(*this); // else-if chains nest
        if (!guard.ok)
          return nullptr;
        StmtPtr nested = parseStmt();
        if (!nested)
          return nullptr;
        elseBody.push_back(std::move(nested));
      } else if (!parseBody(elseBody, "of the 'else'")) {
        return nullptr;
      }
    }
    return std::make_unique<IfStmt>(loc, std::move(cond), std::move(thenBody),
                                    std::move(elseBody));
  }
  case Tok::KwReturn: {
    advance();
    std::vector<ExprPtr> values;
    do {
      ExprPtr value = parseExpr();
      if (!value)
        return nullptr;
      values.push_back(std::move(value));
    } while (consumeIf(Tok::Comma));
    return std::make_unique<ReturnStmt>(loc, std::move(values));
  }
  case Tok::KwAssert: {
    advance();
    ExprPtr cond = parseExpr();
    if (!cond || !expect(Tok::Comma, "after the assertion's condition"))
      return nullptr;
    if (!tok.is(Tok::String)) {
      errorExpected("a message string", "after ','");
      return nullptr;
    }
    std::string message = tok.text.drop_front().drop_back().str();
    advance();
    return std::make_unique<AssertStmt>(loc, std::move(cond),
                                        std::move(message));
  }
  case Tok::Ident: {
    std::vector<Ident> targets;
    do {
      auto target = expectIdent("on the left of '='");
      if (!target)
        return nullptr;
      targets.push_back(*target);
    } while (consumeIf(Tok::Comma));
    if (!tok.is(Tok::Assign)) {
      if (targets.size() == 1 && tok.is(Tok::LParen))
        errorExpected("'='", "after '" + targets[0].name +
                                 "' (a call's result must be assigned to a "
                                 "name)");
      else
        errorExpected("'='", "after the assigned name");
      return nullptr;
    }
    advance();
    ExprPtr value = parseExpr();
    if (!value)
      return nullptr;
    return std::make_unique<AssignStmt>(loc, std::move(targets),
                                        std::move(value));
  }
  default:
    errorExpected("a statement ('x = ...', 'weight', 'for', 'if', 'return' "
                  "or 'assert')",
                  "", /*atToken=*/true);
    return nullptr;
  }
}

ExprPtr Parser::parseExpr() {
  DepthGuard guard(*this);
  if (!guard.ok)
    return nullptr;
  return parseOr();
}

ExprPtr Parser::parseOr() {
  ExprPtr lhs = parseAnd();
  ChainGuard chain(*this);
  while (lhs && tok.is(Tok::KwOr) && continuesLine()) {
    if (!chain.add())
      return nullptr;
    llvm::SMLoc loc = tok.getLoc();
    advance();
    ExprPtr rhs = parseAnd();
    if (!rhs)
      return nullptr;
    lhs = std::make_unique<BinaryExpr>(loc, Tok::KwOr, std::move(lhs),
                                       std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parseAnd() {
  ExprPtr lhs = parseNot();
  ChainGuard chain(*this);
  while (lhs && tok.is(Tok::KwAnd) && continuesLine()) {
    if (!chain.add())
      return nullptr;
    llvm::SMLoc loc = tok.getLoc();
    advance();
    ExprPtr rhs = parseNot();
    if (!rhs)
      return nullptr;
    lhs = std::make_unique<BinaryExpr>(loc, Tok::KwAnd, std::move(lhs),
                                       std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parseNot() {
  if (tok.is(Tok::KwNot)) {
    DepthGuard guard(*this);
    if (!guard.ok)
      return nullptr;
    llvm::SMLoc loc = tok.getLoc();
    advance();
    ExprPtr operand = parseNot();
    if (!operand)
      return nullptr;
    return std::make_unique<UnaryExpr>(loc, Tok::KwNot, std::move(operand));
  }
  return parseCmp();
}

ExprPtr Parser::parseCmp() {
  ExprPtr lhs = parseSum();
  if (!lhs || !continuesLine())
    return lhs;
  switch (tok.kind) {
  case Tok::EqEq: case Tok::NotEq: case Tok::Less: case Tok::LessEq:
  case Tok::Greater: case Tok::GreaterEq: {
    Tok op = tok.kind;
    llvm::SMLoc loc = tok.getLoc();
    advance();
    ExprPtr rhs = parseSum();
    if (!rhs)
      return nullptr;
    return std::make_unique<BinaryExpr>(loc, op, std::move(lhs),
                                        std::move(rhs));
  }
  default:
    return lhs;
  }
}

ExprPtr Parser::parseSum() {
  ExprPtr lhs = parseTerm();
  ChainGuard chain(*this);
  while (lhs && continuesLine() &&
         (tok.is(Tok::Plus) || tok.is(Tok::Minus))) {
    if (!chain.add())
      return nullptr;
    Tok op = tok.kind;
    llvm::SMLoc loc = tok.getLoc();
    advance();
    ExprPtr rhs = parseTerm();
    if (!rhs)
      return nullptr;
    lhs = std::make_unique<BinaryExpr>(loc, op, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parseTerm() {
  ExprPtr lhs = parseUnary();
  ChainGuard chain(*this);
  while (lhs && continuesLine() &&
         (tok.is(Tok::Star) || tok.is(Tok::Slash) || tok.is(Tok::SlashSlash) ||
          tok.is(Tok::Percent) || tok.is(Tok::At))) {
    if (!chain.add())
      return nullptr;
    Tok op = tok.kind;
    llvm::SMLoc loc = tok.getLoc();
    advance();
    ExprPtr rhs = parseUnary();
    if (!rhs)
      return nullptr;
    lhs = std::make_unique<BinaryExpr>(loc, op, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parseUnary() {
  if (tok.is(Tok::Minus)) {
    DepthGuard guard(*this);
    if (!guard.ok)
      return nullptr;
    llvm::SMLoc loc = tok.getLoc();
    advance();
    ExprPtr operand = parseUnary();
    if (!operand)
      return nullptr;
    return std::make_unique<UnaryExpr>(loc, Tok::Minus, std::move(operand));
  }
  return parsePower();
}

ExprPtr Parser::parsePower() {
  ExprPtr base = parsePrimary();
  if (base && tok.is(Tok::StarStar) && continuesLine()) {
    llvm::SMLoc loc = tok.getLoc();
    advance();
    DepthGuard guard(*this);
    if (!guard.ok)
      return nullptr;
    ExprPtr exponent = parseUnary();
    if (!exponent)
      return nullptr;
    return std::make_unique<BinaryExpr>(loc, Tok::StarStar, std::move(base),
                                        std::move(exponent));
  }
  return base;
}

ExprPtr Parser::parseNumber() {
  std::string digits;
  for (char c : tok.text)
    if (c != '_')
      digits.push_back(c);
  llvm::SMLoc loc = tok.getLoc();
  bool isFloat = tok.is(Tok::Float);
  advance();
  errno = 0;
  if (isFloat) {
    double value = std::strtod(digits.c_str(), nullptr);
    if (errno == ERANGE && std::abs(value) > 1.0) {
      diags.error(loc, "number '" + digits + "' is out of range");
      inError = true;
      return nullptr;
    }
    return std::make_unique<FloatExpr>(loc, value);
  }
  int64_t value;
  if (llvm::StringRef(digits).getAsInteger(10, value)) {
    diags.error(loc, "integer '" + digits +
                         "' is too large (the limit is 2^63 - 1)");
    inError = true;
    return nullptr;
  }
  return std::make_unique<IntExpr>(loc, value);
}

ExprPtr Parser::parsePrimary() {
  llvm::SMLoc loc = tok.getLoc();
  if (!continuesLine()) {
    errorExpected("an expression", "");
    return nullptr;
  }
  switch (tok.kind) {
  case Tok::Int:
  case Tok::Float:
    return parseNumber();
  case Tok::String: {
    auto e = std::make_unique<StringExpr>(loc,
                                          tok.text.drop_front().drop_back().str());
    advance();
    return e;
  }
  case Tok::KwTrue:
  case Tok::KwFalse: {
    bool value = tok.is(Tok::KwTrue);
    advance();
    return std::make_unique<BoolExpr>(loc, value);
  }
  case Tok::Ident: {
    std::string name = tok.text.str();
    advance();
    if (!tok.is(Tok::LParen) || !continuesLine())
      return std::make_unique<NameExpr>(loc, std::move(name));
    llvm::SMLoc open = tok.getLoc();
    advance();
    std::vector<Arg> args;
    ++nesting;
    bool ok = parseArgs(args, name);
    --nesting;
    if (!ok) {
      noteUnclosed(open, "'('");
      return nullptr;
    }
    return std::make_unique<CallExpr>(loc, std::move(name), std::move(args));
  }
  case Tok::LParen: {
    advance();
    ++nesting;
    ExprPtr inner = parseExpr();
    bool ok = inner && expect(Tok::RParen, "to close '('");
    --nesting;
    if (!ok) {
      noteUnclosed(loc, "'('");
      return nullptr;
    }
    return inner;
  }
  case Tok::LBracket: {
    advance();
    ++nesting;
    llvm::scope_exit closeNesting([&] { --nesting; });
    std::vector<ExprPtr> elements;
    if (!tok.is(Tok::RBracket)) {
      do {
        if (tok.is(Tok::RBracket))
          break;
        ExprPtr e = parseExpr();
        if (!e)
          return nullptr;
        elements.push_back(std::move(e));
      } while (consumeIf(Tok::Comma));
    }
    if (!expect(Tok::RBracket, "to close the list")) {
      noteUnclosed(loc, "'['");
      return nullptr;
    }
    return std::make_unique<ListExpr>(loc, std::move(elements));
  }
  default:
    errorExpected("an expression", "");
    return nullptr;
  }
}

bool Parser::parseArgs(std::vector<Arg> &args, llvm::StringRef callee) {
  bool sawKeyword = false;
  while (!tok.is(Tok::RParen)) {
    Arg arg;
    // `name = value` is a keyword argument.
    if (tok.is(Tok::Ident)) {
      Token save = tok;
      Lexer saveLexer = lexer;
      advance();
      if (tok.is(Tok::Assign)) {
        arg.keyword = Ident{save.text.str(), save.getLoc()};
        advance();
      } else {
        tok = save;
        lexer = saveLexer;
      }
    }
    if (!arg.keyword && sawKeyword && !inError) {
      inError = true;
      diags.error(tok.getLoc(), "positional argument after a keyword argument "
                                "in the call of '" + callee + "'");
      return false;
    }
    sawKeyword |= arg.keyword.has_value();
    arg.value = parseExpr();
    if (!arg.value)
      return false;
    args.push_back(std::move(arg));
    if (!consumeIf(Tok::Comma))
      break;
  }
  return expect(Tok::RParen,
                ("to close the arguments of '" + callee + "'").str());
}

std::unique_ptr<Module> tfc::parseModule(DiagnosticEngine &diags) {
  Parser parser(diags);
  return parser.parse();
}
