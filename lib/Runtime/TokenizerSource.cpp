//===- TokenizerSource.cpp - The tokenizer of a checkpoint
//-----------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Runtime/TokenizerSource.h"

#include "tfc/Runtime/Gguf.h"
#include "tfc/Runtime/Weights.h"

using namespace tfc::rt;

bool tfc::rt::readGgufVocab(const GgufFile &file, GgufVocab &out,
                            std::string &error) {
  out = GgufVocab();
  if (!file.getString("tokenizer.ggml.model", out.model, error) ||
      !file.getStringArray("tokenizer.ggml.tokens", out.tokens, error))
    return false;
  if (file.find("tokenizer.ggml.pre") &&
      !file.getString("tokenizer.ggml.pre", out.pre, error))
    return false;
  if (file.find("tokenizer.ggml.merges") &&
      !file.getStringArray("tokenizer.ggml.merges", out.merges, error))
    return false;
  if (file.find("tokenizer.ggml.token_type")) {
    std::vector<int64_t> types;
    if (!file.getIntArray("tokenizer.ggml.token_type", types, error))
      return false;
    if (types.size() != out.tokens.size()) {
      error = file.path() + ": tokenizer.ggml.token_type has " +
              std::to_string(types.size()) + " entries for " +
              std::to_string(out.tokens.size()) + " tokens";
      return false;
    }
    for (int64_t t : types) {
      if (t < 0 || t > 6) {
        error = file.path() +
                ": tokenizer.ggml.token_type has the unknown "
                "type " +
                std::to_string(t) + " (types are 1-6)";
        return false;
      }
      out.tokenTypes.push_back(static_cast<int32_t>(t));
    }
  }
  auto id = [&](const char *key, std::optional<int64_t> &dst) {
    if (!file.find(key))
      return true;
    int64_t v;
    if (!file.getInt(key, v, error))
      return false;
    if (v < 0 || v >= static_cast<int64_t>(out.tokens.size())) {
      error = file.path() + ": " + key + " = " + std::to_string(v) +
              " is outside the vocabulary of " +
              std::to_string(out.tokens.size()) + " tokens";
      return false;
    }
    dst = v;
    return true;
  };
  auto flag = [&](const char *key, std::optional<bool> &dst) {
    if (!file.find(key))
      return true;
    bool v;
    if (!file.getBool(key, v, error))
      return false;
    dst = v;
    return true;
  };
  return id("tokenizer.ggml.bos_token_id", out.bos) &&
         id("tokenizer.ggml.eos_token_id", out.eos) &&
         id("tokenizer.ggml.unknown_token_id", out.unk) &&
         id("tokenizer.ggml.padding_token_id", out.pad) &&
         flag("tokenizer.ggml.add_bos_token", out.addBos) &&
         flag("tokenizer.ggml.add_eos_token", out.addEos);
}

std::unique_ptr<Tokenizer> tfc::rt::openTokenizer(const std::string &path,
                                                  std::string &error) {
  if (!isGgufFile(path))
    return Tokenizer::fromFile(path, error);
  std::unique_ptr<GgufFile> file = GgufFile::open(path, error);
  if (!file)
    return nullptr;
  GgufVocab vocab;
  if (!readGgufVocab(*file, vocab, error))
    return nullptr;
  std::unique_ptr<Tokenizer> tok = Tokenizer::fromGguf(vocab, error);
  if (!tok)
    error = path + ": " + error;
  return tok;
}
