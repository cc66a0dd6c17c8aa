//===- CommandLine.cpp - The runtime tools' command lines (CLI11) ---------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "CommandLine.h"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace tfc::tools;

CommandLine::CommandLine(std::string tool, const char *usage)
    : CLI::App(usage, tool), tool(std::move(tool)), usage(usage) {
  set_help_flag();
  add_flag("-h,--help", help, "this text");
  allow_extras(false);
  // An option given twice: the last one counts (repeatable ones collect
  // every value with take_all()).
  option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

void CommandLine::parseOrExit(int argc, char **argv) {
  try {
    parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    // --help wins over what else is wrong with the line.
    for (int i = 1; i < argc; ++i)
      if (std::string(argv[i]) == "-h" || std::string(argv[i]) == "--help")
        help = true;
    if (!help)
      fail(std::string(e.what()) + " (see --help)");
  }
  if (help) {
    std::fputs(usage, stdout);
    std::exit(0);
  }
}

CLI::Option *CommandLine::addRepeated(const std::string &name,
                                      std::vector<std::string> &values) {
  return add_option(name, values)
      ->expected(1)
      ->take_all()
      ->allow_extra_args(false);
}

void CommandLine::fail(const std::string &message) const {
  std::fprintf(stderr, "%s: error: %s\n", tool.c_str(), message.c_str());
  std::exit(1);
}

bool tfc::tools::parseInteger(const std::string &text, long long &out) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0])))
    return false;
  char *end = nullptr;
  errno = 0;
  long long n = std::strtoll(text.c_str(), &end, 10);
  if (*end || errno)
    return false;
  out = n;
  return true;
}

namespace {

/// A signed decimal integer of at least `min`, rewritten in plain decimal
/// (CLI11 would read 010 as 8); `expected` names it in the message.
CLI::Validator signedInteger(long long min, std::string expected,
                             std::string description) {
  return CLI::Validator(
      [min, expected](std::string &v) -> std::string {
        long long n = 0;
        if (!tfc::tools::parseInteger(v, n) || n < min)
          return "needs " + expected + ", not '" + v + "'";
        v = std::to_string(n);
        return "";
      },
      std::move(description));
}

} // namespace

CLI::Validator tfc::tools::anInteger() {
  return signedInteger(LLONG_MIN, "an integer", "INT");
}

CLI::Validator tfc::tools::integerAtLeast(long long min) {
  return signedInteger(min, "an integer >= " + std::to_string(min),
                       "INT>=" + std::to_string(min));
}

CLI::Validator tfc::tools::nonNegativeInteger() {
  return CLI::Validator(
      [](std::string &v) -> std::string {
        char *end = nullptr;
        errno = 0;
        unsigned long long n = std::strtoull(v.c_str(), &end, 10);
        if (v.empty() || v[0] == '-' || *end || errno)
          return "needs a non-negative integer, not '" + v + "'";
        v = std::to_string(n); // decimal for CLI11, which reads 010 as 8
        return "";
      },
      "UINT");
}

CLI::Validator tfc::tools::finiteNumber() {
  return CLI::Validator(
      [](std::string &v) -> std::string {
        char *end = nullptr;
        double x = std::strtod(v.c_str(), &end);
        if (v.empty() || *end || !std::isfinite(x))
          return "needs a finite number, not '" + v + "'";
        return "";
      },
      "NUMBER");
}

CLI::Validator tfc::tools::aNumber() {
  return CLI::Validator(
      [](std::string &v) -> std::string {
        char *end = nullptr;
        (void)std::strtod(v.c_str(), &end);
        if (v.empty() || *end)
          return "needs a number, not '" + v + "'";
        return "";
      },
      "NUMBER");
}
