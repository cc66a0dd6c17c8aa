//===- Diagnostics.cpp - Source diagnostics of the .tfm frontend ----------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Frontend/Diagnostics.h"

#include "llvm/ADT/StringExtras.h"

using namespace tfc;

void DiagnosticEngine::error(llvm::SMLoc loc, const llvm::Twine &message,
                             llvm::ArrayRef<llvm::SMRange> ranges) {
  std::string text = message.str();
  std::string key =
      std::to_string(reinterpret_cast<uintptr_t>(loc.getPointer())) + "\n" +
      text;
  lastDropped = !seen.insert(key).second || numErrors >= maxErrors;
  if (lastDropped)
    return;
  ++numErrors;
  sourceMgr.PrintMessage(os, loc, llvm::SourceMgr::DK_Error, text, ranges);
  if (numErrors == maxErrors)
    os << "error: too many errors, stopping\n";
}

void DiagnosticEngine::warning(llvm::SMLoc loc, const llvm::Twine &message) {
  sourceMgr.PrintMessage(os, loc, llvm::SourceMgr::DK_Warning, message);
}

void DiagnosticEngine::note(llvm::SMLoc loc, const llvm::Twine &message) {
  if (!lastDropped)
    sourceMgr.PrintMessage(os, loc, llvm::SourceMgr::DK_Note, message);
}

void DiagnosticEngine::error(const llvm::Twine &message) {
  lastDropped = numErrors >= maxErrors;
  if (lastDropped)
    return;
  ++numErrors;
  os << "error: " << message << "\n";
}

std::string DiagnosticEngine::closest(llvm::StringRef name,
                                      llvm::ArrayRef<std::string> candidates) {
  std::string best;
  unsigned bestDistance = ~0u;
  // Allow roughly one edit per three characters, at least one.
  unsigned limit = std::max<unsigned>(1, (name.size() + 2) / 3);
  for (const std::string &candidate : candidates) {
    if (candidate == name)
      continue;
    unsigned d = name.edit_distance(candidate, /*AllowReplacements=*/true,
                                    /*MaxEditDistance=*/limit + 1);
    // Case-only differences and one swapped pair of neighbours are always
    // plausible.
    if (name.equals_insensitive(candidate))
      d = 0;
    else if (name.size() == candidate.size() && d == 2) {
      size_t i = 0;
      while (name[i] == candidate[i])
        ++i;
      if (i + 1 < name.size() && name[i] == candidate[i + 1] &&
          name[i + 1] == candidate[i] &&
          name.drop_front(i + 2) == llvm::StringRef(candidate).drop_front(i + 2))
        d = 1;
    }
    if (d <= limit && d < bestDistance) {
      bestDistance = d;
      best = candidate;
    }
  }
  return best;
}

std::string DiagnosticEngine::suggest(llvm::StringRef name,
                                      llvm::ArrayRef<std::string> candidates) {
  std::string best = closest(name, candidates);
  return best.empty() ? std::string() : "; did you mean '" + best + "'?";
}
