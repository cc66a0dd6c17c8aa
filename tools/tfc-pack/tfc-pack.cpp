//===- tfc-pack.cpp - A model's weights in their resident form ------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//   tfc-pack MODEL.so --weights CHECKPOINT -o MODEL.tfcw
//
// Binds a checkpoint (safetensors, Hugging Face directory, .gguf) to a
// compiled model, which converts, dequantises and packs it, and writes the
// result as a packed weights file (include/tfc/Formats/PackedWeights.h):
// every weight the model's entries read in the model's dtype and every
// derived constant, nothing else. tfc-run, tfc-generate and the C API bind it
// like a checkpoint, with no copy and no computation, and processes running
// the model share its pages. The file belongs to this build of MODEL.so.
// Links libtfcrt only, no LLVM.
//
//===----------------------------------------------------------------------===//

#include "tfc/Runtime/tfc.h"

#include "CommandLine.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

const char *const kUsage =
    R"(usage: tfc-pack MODEL.so --weights CHECKPOINT -o FILE.tfcw

Writes the weights of a compiled model in the form its kernels read them
(packed matrices, the model's dtype, GGUF blocks dequantised), to be bound
instead of the checkpoint: loading maps the file, computes nothing, and
keeps every byte resident once (shared by processes that run the model).
The file is only valid for this build of MODEL.so.

options:
  -w, --weights PATH    the checkpoint: .safetensors, a Hugging Face
                        directory or a .gguf
  -o, --output FILE     the packed file to write (written whole, or not at
                        all)
  -q, --quiet           print nothing on success
  -h, --help            this text

exit status: 0 on success, 1 on any error.
)";

[[noreturn]] void fail(const std::string &message) {
  std::fprintf(stderr, "tfc-pack: error: %s\n", message.c_str());
  std::exit(1);
}

std::string mib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / 1048576.0);
  return buf;
}

} // namespace

int main(int argc, char **argv) {
  std::string model, weights, output;
  bool quiet = false;
  tfc::tools::CommandLine cli("tfc-pack", kUsage);
  cli.add_option("model", model);
  cli.add_option("-w,--weights", weights);
  cli.add_option("-o,--output", output);
  cli.add_flag("-q,--quiet", quiet);
  cli.parseOrExit(argc, argv);
  if (model.empty() || weights.empty() || output.empty()) {
    std::fputs(kUsage, stderr);
    return 1;
  }
  if (output == weights || output == model)
    fail("the output '" + output + "' would overwrite an input");

  auto start = std::chrono::steady_clock::now();
  tfc_model *m = nullptr;
  if (tfc_model_load(model.c_str(), &m) != TFC_OK)
    fail(tfc_last_error());
  if (tfc_model_load_weights(m, weights.c_str()) != TFC_OK) {
    std::string error = tfc_last_error();
    tfc_model_free(m);
    fail(error);
  }
  if (tfc_model_save_weights(m, output.c_str()) != TFC_OK) {
    std::string error = tfc_last_error();
    tfc_model_free(m);
    fail(error);
  }
  tfc_resident_stats s = {};
  s.struct_size = sizeof(s);
  tfc_model_resident_stats(m, &s);
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  if (!quiet)
    std::printf("%s: weights %s, derived constants %s (%s of the "
                "checkpoint only needed to compute them left out), %.2f s\n",
                output.c_str(),
                mib(s.weight_bytes).c_str(), mib(s.constant_bytes).c_str(),
                mib(s.released_weight_bytes).c_str(), seconds);
  tfc_model_free(m);
  return 0;
}
