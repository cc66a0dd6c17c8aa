//===- tfc-quantize.cpp - A .gguf with its matrices in another format -----===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//   tfc-quantize IN.gguf OUT.gguf TYPE   (TYPE: q8_0, q4_0, q4_1, q5_0, q5_1,
//                                         q2_k, q3_k, q4_k, q5_k, q6_k, f32)
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

#include "tfc/Formats/Gguf.h"

#include "CommandLine.h"

#include <cstdio>
#include <string>

using namespace tfc::rt;

/// The block formats tfc-quantize writes: "q8_0, q4_0, ...".
static std::string writableTypes() {
  std::string out;
  for (const DTypeTraits &t : kDTypeTable)
    if (t.quantized && canQuantize(t.type))
      out += (out.empty() ? "" : ", ") + std::string(t.name);
  return out;
}

int main(int argc, char **argv) {
  std::string help = "usage: tfc-quantize IN.gguf OUT.gguf TYPE\n\n"
                     "Writes IN with its matrices in TYPE (" +
                     writableTypes() +
                     " or f32),\n"
                     "as llama.cpp's llama-quantize --pure does.\n";
  std::string inPath, outPath, type;
  tfc::tools::CommandLine cli("tfc-quantize", help.c_str());
  cli.add_option("in", inPath);
  cli.add_option("out", outPath);
  cli.add_option("type", type);
  cli.parseOrExit(argc, argv);
  if (type.empty()) {
    std::fprintf(stderr, "usage: tfc-quantize IN.gguf OUT.gguf TYPE (see "
                         "--help)\n");
    return 1;
  }
  DType target = DType::F32;
  const DTypeTraits *row = nullptr;
  for (const DTypeTraits &t : kDTypeTable)
    if (type == t.name || type == t.fileName)
      row = &t;
  if (row && row->quantized && !canQuantize(row->type)) {
    std::fprintf(stderr,
                 "tfc-quantize: error: tfc reads %s but cannot write it yet "
                 "(expected %s or f32)\n",
                 row->fileName, writableTypes().c_str());
    return 1;
  }
  if (!row || (row->type != DType::F32 && !row->quantized)) {
    std::fprintf(stderr,
                 "tfc-quantize: error: unknown type '%s' (expected %s or "
                 "f32)\n",
                 type.c_str(), writableTypes().c_str());
    return 1;
  }
  target = row->type;
  std::string error;
  std::unique_ptr<GgufFile> in = GgufFile::open(inPath, error);
  if (!in) {
    std::fprintf(stderr, "tfc-quantize: error: %s\n", error.c_str());
    return 1;
  }
  GgufWriteStats stats;
  if (!writeRequantizedGguf(*in, outPath, target, stats, error)) {
    std::fprintf(stderr, "tfc-quantize: error: %s\n", error.c_str());
    return 1;
  }
  std::printf("tfc-quantize: %s: %llu tensors (%llu converted), %.1f MiB -> "
              "%.1f MiB of tensor data\n",
              outPath.c_str(), static_cast<unsigned long long>(stats.tensors),
              static_cast<unsigned long long>(stats.converted),
              stats.bytesIn / 1048576.0, stats.bytesOut / 1048576.0);
  return 0;
}
