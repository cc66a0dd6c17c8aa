//===- tfc-import.cpp - A model description from a checkpoint ------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//   tfc-import PATH [-o model.tfm]
//
// PATH is a Hugging Face checkpoint directory or a .gguf file. Writes the
// .tfm description of the model (to stdout without -o), which tfc-compile
// compiles; `tfc-compile PATH` does both in one step. Exit 1 with a message
// naming the file, key or tensor on any problem.
//
//===----------------------------------------------------------------------===//

#include "tfc/Import/Importer.h"

#include "CommandLine.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char **argv) {
  std::string usage =
      "usage: tfc-import PATH [-o model.tfm]\n"
      "  PATH: a Hugging Face checkpoint directory or a .gguf file.\n"
      "  Supported: " +
      std::string(tfc::importer::supportedFamilies()) +
      ".\n"
      "  Prints where the weights and the tokenizer are on stderr.\n";
  std::string input, output;
  tfc::tools::CommandLine cli("tfc-import", usage.c_str());
  cli.add_option("path", input);
  cli.add_option("-o,--output", output);
  cli.parseOrExit(argc, argv);
  if (input.empty()) {
    std::fputs(usage.c_str(), stderr);
    return 1;
  }
  tfc::importer::ImportedModel model;
  std::string error;
  if (!tfc::importer::importCheckpoint(input, model, error)) {
    std::fprintf(stderr, "tfc-import: error: %s\n", error.c_str());
    return 1;
  }
  if (output.empty() || output == "-") {
    std::fwrite(model.tfm.data(), 1, model.tfm.size(), stdout);
  } else {
    // Written through a temporary file: the output is complete or untouched.
    std::string tmp = output + ".tmp";
    FILE *f = std::fopen(tmp.c_str(), "wb");
    if (!f || std::fwrite(model.tfm.data(), 1, model.tfm.size(), f) !=
                  model.tfm.size() ||
        std::fclose(f) != 0 || std::rename(tmp.c_str(), output.c_str()) != 0) {
      std::fprintf(stderr, "tfc-import: error: cannot write '%s': %s\n",
                   output.c_str(), std::strerror(errno));
      std::remove(tmp.c_str());
      return 1;
    }
  }
  std::fprintf(stderr, "tfc-import: %s model; weights: %s%s%s\n",
               model.family.c_str(), model.weights.c_str(),
               model.tokenizer.empty() ? "" : "; tokenizer: ",
               model.tokenizer.c_str());
  return 0;
}
