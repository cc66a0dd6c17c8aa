//===- Parser.h - Recursive-descent parser of .tfm --------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FRONTEND_PARSER_H
#define TFC_FRONTEND_PARSER_H

#include "tfc/Frontend/AST.h"

namespace tfc {

/// Parses the main buffer of `diags`' SourceMgr. Syntax errors are reported
/// through `diags`; the parser resynchronises at the next line and keeps
/// going, so one run reports independent errors. Returns the (possibly
/// partial) module; check `diags.hadError()`.
std::unique_ptr<ast::Module> parseModule(DiagnosticEngine &diags);

} // namespace tfc

#endif // TFC_FRONTEND_PARSER_H
