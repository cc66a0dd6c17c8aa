//===- CommandLine.h - The runtime tools' command lines (CLI11) -*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The runtime tools (no LLVM: the compiler's tools keep llvm::cl) read their
// arguments with CLI11: options with a long and an optional short name,
// `--name value` or `--name=value`, repeated options, positional arguments,
// a check per value (a number in range, a name in a set). This adds the
// tools' conventions on top: --help prints the tool's own usage text, which
// groups and explains the options, and every error is "TOOL: error:
// MESSAGE (see --help)" with exit status 1.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TOOLS_COMMON_COMMANDLINE_H
#define TFC_TOOLS_COMMON_COMMANDLINE_H

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace tfc::tools {

class CommandLine : public CLI::App {
public:
  /// `tool`: the name in messages; `usage`: what --help prints.
  CommandLine(std::string tool, const char *usage);

  /// Parses `argv`; on --help prints the usage and exits 0, on an error
  /// prints it and exits 1.
  void parseOrExit(int argc, char **argv);

  /// A repeatable option: one value per occurrence, every value kept in
  /// order (no extra arguments taken, no "[a,b]" split into two).
  CLI::Option *addRepeated(const std::string &name,
                           std::vector<std::string> &values);

  /// Prints "TOOL: error: message" and exits 1.
  [[noreturn]] void fail(const std::string &message) const;

private:
  std::string tool;
  const char *usage;
  bool help = false;
};

/// Checks of an option's value, with the tools' messages ("--threads:
/// needs an integer >= 1, not 'x'"). Give the integer ones with
/// ->transform(): they also rewrite the value in plain decimal, which CLI11
/// would otherwise read with base prefixes (010 as 8).
/// A signed decimal integer, the whole of `text` ("010" is ten, "1e3" and
/// " 5" are not integers): what anInteger accepts, for the tools' own lists
/// (token ids, shapes, input values).
bool parseInteger(const std::string &text, long long &out);

CLI::Validator anInteger();
CLI::Validator integerAtLeast(long long min);
CLI::Validator nonNegativeInteger();
CLI::Validator finiteNumber();
/// Any number strtod reads (nan and inf too: for values whose own check
/// says what range they need).
CLI::Validator aNumber();

} // namespace tfc::tools

#endif // TFC_TOOLS_COMMON_COMMANDLINE_H
