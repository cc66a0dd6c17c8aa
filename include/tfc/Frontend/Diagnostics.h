//===- Diagnostics.h - Source diagnostics of the .tfm frontend --*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Every frontend error is reported as `file:line:col: error: message` followed
// by the source line and a caret, through llvm::SourceMgr. The engine counts
// errors, drops exact duplicates (a block instantiated once per layer reports
// its error once) and stops reporting after a limit.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FRONTEND_DIAGNOSTICS_H
#define TFC_FRONTEND_DIAGNOSTICS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/SMLoc.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace tfc {

class DiagnosticEngine {
public:
  DiagnosticEngine(llvm::SourceMgr &sourceMgr,
                   llvm::raw_ostream &os = llvm::errs(), unsigned maxErrors = 20)
      : sourceMgr(sourceMgr), os(os), maxErrors(maxErrors) {}

  /// Reports an error at `loc`, underlining `ranges`.
  void error(llvm::SMLoc loc, const llvm::Twine &message,
             llvm::ArrayRef<llvm::SMRange> ranges = {});
  /// A warning at `loc`: printed, not counted as an error.
  void warning(llvm::SMLoc loc, const llvm::Twine &message);
  /// A note attached to the previous error (e.g. "previous definition here").
  void note(llvm::SMLoc loc, const llvm::Twine &message);
  /// An error without a source position (command-line input).
  void error(const llvm::Twine &message);

  unsigned getNumErrors() const { return numErrors; }
  bool hadError() const { return numErrors != 0; }
  llvm::SourceMgr &getSourceMgr() { return sourceMgr; }

  /// The closest of `candidates` to `name` by edit distance, or "" when none
  /// is close enough to be a plausible typo.
  static std::string closest(llvm::StringRef name,
                             llvm::ArrayRef<std::string> candidates);
  /// "; did you mean 'x'?" for the closest candidate, or "".
  static std::string suggest(llvm::StringRef name,
                             llvm::ArrayRef<std::string> candidates);

private:
  llvm::SourceMgr &sourceMgr;
  llvm::raw_ostream &os;
  unsigned maxErrors;
  unsigned numErrors = 0;
  bool lastDropped = false;
  llvm::StringSet<> seen;
};

} // namespace tfc

#endif // TFC_FRONTEND_DIAGNOSTICS_H
