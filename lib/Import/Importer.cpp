//===- Importer.cpp - Model descriptions from checkpoints
//------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The entry point: a directory goes to its config.json's model_type, a .gguf
// to its general.architecture; each family lives in its own file (Common.h
// lists them, docs/architecture.md maps them).
//
//===----------------------------------------------------------------------===//

#include "tfc/Import/Importer.h"

#include "Common.h"

#include "tfc/Formats/Gguf.h"

#include <cerrno>
#include <cstring>
#include <sys/stat.h>

using namespace tfc::importer::detail;
using tfc::importer::ImportedModel;

namespace {

const char *kSupported =
    "Hugging Face directories of model_type bert (BertModel, with "
    "sentence-transformers pooling), mpnet (MPNetModel, the same), gpt2 "
    "(GPT2LMHeadModel), llama "
    "(LlamaForCausalLM), mistral (MistralForCausalLM), qwen2 "
    "(Qwen2ForCausalLM), qwen3 (Qwen3ForCausalLM), gemma (GemmaForCausalLM), "
    "gemma2 (Gemma2ForCausalLM), gemma3_text (Gemma3ForCausalLM), phi3 "
    "(Phi3ForCausalLM), bloom (BloomForCausalLM), marian (MarianMTModel), "
    "t5 (T5ForConditionalGeneration) and vit (ViTModel, "
    "ViTForImageClassification); .gguf files of general.architecture "
    "llama, mistral, qwen2, qwen3, gemma, gemma2, gemma3, phi3, bert and "
    "nomic-bert";

bool importHuggingFace(const std::string &dir, ImportedModel &out,
                       std::string &error) {
  HfCheckpoint c;
  c.dir = dir;
  c.configPath = dir + "/config.json";
  if (!isRegularFile(c.configPath)) {
    error = dir + ": not a checkpoint directory: it has no config.json "
                  "(supported: " + std::string(kSupported) + ")";
    return false;
  }
  if (!parseJsonFile(c.configPath, c.config, error))
    return false;
  ConfigReader r(c.configPath, c.config);
  std::string type = r.string("model_type");
  if (!r.ok()) {
    error = r.message();
    return false;
  }
  if (type != "bert" && type != "mpnet" && type != "gpt2" && type != "llama" &&
      type != "mistral" && type != "qwen2" && type != "qwen3" &&
      type != "gemma" && type != "gemma2" && type != "gemma3_text" &&
      type != "phi3" && type != "marian" && type != "vit" && type != "bloom" &&
      type != "t5") {
    error = c.configPath + ": model_type '" + type +
            "' is not supported (supported: bert, bloom, gemma, gemma2, "
            "gemma3_text, gpt2, "
            "llama, marian, mistral, mpnet, phi3, qwen2, qwen3, t5, vit)";
    return false;
  }
  c.weights = tfc::rt::openWeights(dir, error);
  if (!c.weights)
    return false;
  out.family = type;
  out.weights = dir;
  out.tokenizer =
      isRegularFile(dir + "/tokenizer.json") ? dir + "/tokenizer.json" : "";
  if (type == "bert" || type == "mpnet")
    return importBert(c, type, out, error);
  if (type == "gpt2")
    return importGpt2(c, out, error);
  if (type == "marian")
    return importMarian(c, out, error);
  if (type == "vit")
    return importVit(c, out, error);
  if (type == "bloom")
    return importBloom(c, out, error);
  if (type == "t5")
    return importT5(c, out, error);
  if (type == "gemma" || type == "gemma2" || type == "gemma3_text")
    return importGemmaText(c, type, out, error);
  return importLlamaLike(c, type, out, error);
}

} // namespace

bool tfc::importer::isCheckpoint(const std::string &path) {
  return isDirectory(path) || tfc::rt::isGgufFile(path);
}

const char *tfc::importer::supportedFamilies() { return kSupported; }

bool tfc::importer::importCheckpoint(const std::string &pathArg,
                                     ImportedModel &out, std::string &error) {
  std::string path = pathArg;
  while (path.size() > 1 && path.back() == '/')
    path.pop_back();
  try {
    if (isDirectory(path))
      return importHuggingFace(path, out, error);
    if (tfc::rt::isGgufFile(path) ||
        (path.size() > 5 && path.compare(path.size() - 5, 5, ".gguf") == 0 &&
         isRegularFile(path)))
      return importGguf(path, out, error); // the reader names what is wrong
  } catch (const std::exception &e) {
    error = path + ": " + e.what();
    return false;
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    error = path + ": cannot open: " + std::strerror(errno);
  else
    error = path + ": not a checkpoint (supported: " + kSupported + ")";
  return false;
}
