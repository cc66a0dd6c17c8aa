//===- tfc-quantize.cpp - A .gguf with its matrices in another format ------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//   tfc-quantize IN.gguf OUT.gguf TYPE        (TYPE: q8_0, q4_0, q4_1, f32)
//
// Writes a copy of a .gguf whose matrices are in TYPE, as llama.cpp's
// `llama-quantize --pure IN OUT TYPE` does: every tensor of two or more
// dims whose rows are whole blocks goes through its f32 values and GGUF's
// reference quantisers (the ones tfc binds weights with), every other tensor
// is F32, the metadata (tokenizer, chat template, hyper-parameters) is
// copied with general.file_type set. The file is for tfc-compile --kv-cache
// and for llama.cpp alike. (writeRequantizedGguf in Gguf.h.)
//
//===----------------------------------------------------------------------===//

#include "tfc/Runtime/Gguf.h"

#include <cstdio>
#include <string>

using namespace tfc::rt;

int main(int argc, char **argv) {
  if (argc == 2 && (std::string(argv[1]) == "-h" ||
                    std::string(argv[1]) == "--help")) {
    std::puts("usage: tfc-quantize IN.gguf OUT.gguf TYPE\n\n"
              "Writes IN with its matrices in TYPE (q8_0, q4_0, q4_1 or f32),\n"
              "as llama.cpp's llama-quantize --pure does.");
    return 0;
  }
  if (argc != 4) {
    std::fprintf(stderr, "usage: tfc-quantize IN.gguf OUT.gguf TYPE (see "
                         "--help)\n");
    return 1;
  }
  std::string type = argv[3];
  DType target;
  if (type == "q8_0" || type == "Q8_0")
    target = DType::Q8_0;
  else if (type == "q4_0" || type == "Q4_0")
    target = DType::Q4_0;
  else if (type == "q4_1" || type == "Q4_1")
    target = DType::Q4_1;
  else if (type == "f32" || type == "F32")
    target = DType::F32;
  else {
    std::fprintf(stderr,
                 "tfc-quantize: error: unknown type '%s' (expected q8_0, "
                 "q4_0, q4_1 or f32)\n",
                 type.c_str());
    return 1;
  }
  std::string error;
  std::unique_ptr<GgufFile> in = GgufFile::open(argv[1], error);
  if (!in) {
    std::fprintf(stderr, "tfc-quantize: error: %s\n", error.c_str());
    return 1;
  }
  GgufWriteStats stats;
  if (!writeRequantizedGguf(*in, argv[2], target, stats, error)) {
    std::fprintf(stderr, "tfc-quantize: error: %s\n", error.c_str());
    return 1;
  }
  std::printf("tfc-quantize: %s: %llu tensors (%llu converted), %.1f MiB -> "
              "%.1f MiB of tensor data\n",
              argv[2], static_cast<unsigned long long>(stats.tensors),
              static_cast<unsigned long long>(stats.converted),
              stats.bytesIn / 1048576.0, stats.bytesOut / 1048576.0);
  return 0;
}
