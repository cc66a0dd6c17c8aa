//===- Sema.h - Static checks of a parsed .tfm module -----------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The checks that need no hyper-parameter values: every name refers to a
// definition (or gets a "did you mean" suggestion), nothing is defined twice,
// calls have the right number and names of arguments, blocks do not call
// themselves, and there is an entry point. Value-dependent checks (shapes,
// divisibility, assertions) happen while MLIRGen instantiates the model.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FRONTEND_SEMA_H
#define TFC_FRONTEND_SEMA_H

#include "tfc/Frontend/AST.h"

namespace tfc {

/// Reports every problem through `diags`; returns false if there was one.
bool checkModule(const ast::Module &module, DiagnosticEngine &diags);

/// Names with a fixed meaning in every scope (dtypes, `inf`, `pi`).
bool isReservedName(llvm::StringRef name);
/// q8_0, q4_0, q4_1: the block-quantised storage formats a weight may be
/// declared with (`weight w: q4_1[n, k]`).
bool isQuantFormatName(llvm::StringRef name);

} // namespace tfc

#endif // TFC_FRONTEND_SEMA_H
