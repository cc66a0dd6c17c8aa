//===- tfc-gguf-fuzzer.cpp - libFuzzer target of the GGUF reader ----------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Arbitrary bytes through GgufFile::fromBytes (every structural check of a
// .gguf), then everything a caller does with an accepted file: every
// metadata accessor on every key, the tensors' bytes read and the quantized
// ones dequantised (ASan sees any read past the image), and the tokenizer
// metadata through readGgufVocab and Tokenizer::fromGguf with an encode and
// a decode. Promises checked (a broken one traps): a rejected file has a
// message; an accepted tensor's bytes match its shape and type and lie in
// the image; tensors are sorted by name and findTensor finds each.
//
//   tfc-gguf-fuzzer -max_total_time=600 CORPUS_DIR tools/tfc-gguf-fuzzer/seeds
//
//===----------------------------------------------------------------------===//

#include "tfc/Formats/Gguf.h"
#include "tfc/Text/Tokenizer/Tokenizer.h"
#include "tfc/Text/Tokenizer/TokenizerSource.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

using namespace tfc::rt;

namespace {

[[noreturn]] void broken(const char *what, const std::string &detail) {
  std::fprintf(stderr, "broken promise: %s: %s\n", what, detail.c_str());
  __builtin_trap();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string error;
  std::unique_ptr<GgufFile> file = GgufFile::fromBytes(
      std::string_view(reinterpret_cast<const char *>(data), size), error);
  if (!file) {
    if (error.empty())
      broken("a rejected file has no message", "");
    return 0;
  }
  // Every accessor on every key: a wrong type is an error, never a crash.
  for (const auto &[key, value] : file->metadata()) {
    std::string s;
    int64_t i;
    double f;
    bool b;
    std::vector<std::string> strings;
    std::vector<int64_t> ints;
    std::vector<double> floats;
    (void)file->getString(key, s, error);
    (void)file->getInt(key, i, error);
    (void)file->getFloat(key, f, error);
    (void)file->getBool(key, b, error);
    (void)file->getStringArray(key, strings, error);
    (void)file->getIntArray(key, ints, error);
    (void)file->getFloatArray(key, floats, error);
  }
  const TensorView *previous = nullptr;
  uint64_t checksum = 0;
  for (const TensorView *t : file->allTensors()) {
    if (previous && !(previous->name < t->name))
      broken("tensors are not sorted by unique name", t->name);
    previous = t;
    if (file->findTensor(t->name) != t)
      broken("findTensor does not find the tensor", t->name);
    uint64_t bytes = 0;
    if (!dtypeBytes(t->dtype, t->numElements(), bytes) ||
        t->end - t->begin != bytes)
      broken("bytes do not match shape and type", t->name);
    const auto *p = static_cast<const uint8_t *>(t->data);
    for (uint64_t k = 0; k < bytes; ++k)
      checksum += p[k];
    if (isQuantized(t->dtype) && t->numElements() <= (1u << 20)) {
      std::vector<float> values(t->numElements());
      dequantize(t->dtype, t->data, values.data(), values.size());
    }
  }
  (void)checksum;
  // The tokenizer metadata.
  GgufVocab vocab;
  if (readGgufVocab(*file, vocab, error) && vocab.tokens.size() <= 4096) {
    std::unique_ptr<Tokenizer> tok = Tokenizer::fromGguf(vocab, error);
    if (tok) {
      Encoding enc;
      if (tok->encode("Hello, world! 123 \xc3\xa9t\xc3\xa9", true, enc, error)) {
        std::string text;
        (void)tok->decode(enc.ids, false, text, error);
      }
    } else if (error.empty()) {
      broken("a rejected vocabulary has no message", "");
    }
  }
  return 0;
}
