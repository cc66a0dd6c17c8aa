//===- TokenizerSource.cpp - The tokenizer of a checkpoint
//-----------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Text/Tokenizer/TokenizerSource.h"

#include "tfc/Formats/Files.h"
#include "tfc/Formats/Gguf.h"
#include "tfc/Formats/JsonDocument.h"
#include "tfc/Formats/Weights.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <sys/stat.h>

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
  if (file.find("tokenizer.ggml.scores")) {
    std::vector<double> scores;
    if (!file.getFloatArray("tokenizer.ggml.scores", scores, error))
      return false;
    if (scores.size() != out.tokens.size()) {
      error = file.path() + ": tokenizer.ggml.scores has " +
              std::to_string(scores.size()) + " entries for " +
              std::to_string(out.tokens.size()) + " tokens";
      return false;
    }
    out.scores.assign(scores.begin(), scores.end());
  }
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
         id("tokenizer.ggml.seperator_token_id", out.sep) &&
         flag("tokenizer.ggml.normalizer.lowercase", out.lowercase) &&
         flag("tokenizer.ggml.normalizer.strip_accents", out.stripAccents) &&
         flag("tokenizer.ggml.add_bos_token", out.addBos) &&
         flag("tokenizer.ggml.add_eos_token", out.addEos) &&
         flag("tokenizer.ggml.add_space_prefix", out.addSpacePrefix);
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

namespace {

/// Reads `eos_token_id` of the JSON file at `path` into `ids`. Returns false
/// with `error` set when the file is malformed; `found` says whether the key
/// was there.
bool readJsonEos(const std::string &path, std::vector<int64_t> &ids,
                 bool &found, std::string &error) {
  found = false;
  std::string text;
  nlohmann::json j;
  if (!readRegularFile(path, text, kMaxConfigFileBytes, error) ||
      !::tfc::rt::parseJsonDocument(text, path, j, error))
    return false;
  if (!j.is_object()) {
    error = path + ": not a JSON object";
    return false;
  }
  auto it = j.find("eos_token_id");
  if (it == j.end() || it->is_null())
    return true;
  auto take = [&](const nlohmann::json &v) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0) {
      error = path + ": eos_token_id must be a token id or a list of them, "
                     "found " +
              v.dump();
      return false;
    }
    ids.push_back(v.get<int64_t>());
    return true;
  };
  if (it->is_array()) {
    for (const auto &v : *it)
      if (!take(v))
        return false;
  } else if (!take(*it)) {
    return false;
  }
  found = true;
  return true;
}

} // namespace

bool tfc::rt::readEndOfSequenceIds(const std::string &path,
                                   std::vector<int64_t> &ids,
                                   std::string &error) {
  ids.clear();
  if (isGgufFile(path)) {
    std::unique_ptr<GgufFile> file = GgufFile::open(path, error);
    if (!file)
      return false;
    for (const char *key :
         {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id"}) {
      if (!file->find(key))
        continue;
      int64_t v;
      if (!file->getInt(key, v, error))
        return false;
      if (v < 0) {
        error = path + ": " + key + " = " + std::to_string(v) +
                " is not a token id";
        return false;
      }
      if (std::find(ids.begin(), ids.end(), v) == ids.end())
        ids.push_back(v);
    }
    return true;
  }
  std::string dir = path;
  if (!tfc::rt::isDirectory(dir)) {
    size_t slash = dir.find_last_of('/');
    dir = slash == std::string::npos ? "." : dir.substr(0, slash);
  }
  for (const char *name : {"generation_config.json", "config.json"}) {
    std::string file = dir + "/" + name;
    if (!tfc::rt::isRegularFile(file))
      continue;
    bool found;
    if (!readJsonEos(file, ids, found, error))
      return false;
    if (found)
      return true;
  }
  return true;
}

bool tfc::rt::defaultEndOfSequenceIds(const std::vector<std::string> &paths,
                                      const Tokenizer *tokenizer,
                                      std::vector<int64_t> &ids,
                                      std::string &error) {
  ids.clear();
  for (size_t k = 0; k < paths.size(); ++k) {
    const std::string &path = paths[k];
    // Empty, or read already (tfc-generate's tokenizer is often its weights).
    if (path.empty() ||
        std::find(paths.begin(), paths.begin() + k, path) != paths.begin() + k)
      continue;
    if (!readEndOfSequenceIds(path, ids, error))
      return false;
    if (!ids.empty())
      return true;
  }
  if (tokenizer)
    for (const char *t : {"<|endoftext|>", "<|im_end|>", "</s>", "<|eot_id|>",
                          "<|end_of_text|>"})
      if (std::optional<int64_t> id = tokenizer->tokenToId(t))
        ids.push_back(*id);
  return true;
}
