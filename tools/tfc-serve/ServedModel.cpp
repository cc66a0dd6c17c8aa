//===- ServedModel.cpp - What tfc-serve serves ----------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// See ServedModel.h.
//
//===----------------------------------------------------------------------===//

#include "ServedModel.h"

#include "ModelCache.h"

#include "tfc/Formats/Files.h"
#include "tfc/Formats/JsonDocument.h"
#include "tfc/Text/Tokenizer/TokenizerSource.h"

#include <algorithm>
#include <cstring>

using namespace tfc::serve;

namespace {

/// The file or directory name of `path`, for the model's default name.
std::string baseName(std::string path) {
  while (path.size() > 1 && path.back() == '/')
    path.pop_back();
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// max_seq_length of a sentence-transformers directory, or 0.
int64_t sentenceTransformersMaxLength(const std::string &weights) {
  std::string path = weights + "/sentence_bert_config.json", text, error;
  if (!tfc::rt::isDirectory(weights) ||
      !tfc::rt::readRegularFile(path, text, tfc::rt::kMaxConfigFileBytes,
                                error))
    return 0;
  nlohmann::json config;
  if (!tfc::rt::parseJsonDocument(text, path, config, error) ||
      !config.is_object() || !config.contains("max_seq_length") ||
      !config["max_seq_length"].is_number_integer())
    return 0;
  return std::max<int64_t>(0, config["max_seq_length"].get<int64_t>());
}

} // namespace

ServedModel::~ServedModel() {
  engine.reset(); // its session first
  tfc_model_free(model);
}

std::unique_ptr<ServedModel> ServedModel::load(const ServeOptions &o,
                                               const std::string &tool,
                                               std::string &error) {
  std::unique_ptr<ServedModel> s(new ServedModel());
  std::string library = o.model, weights = o.weights, packedCache;
  s->modelName = o.name.empty() ? baseName(o.model) : o.name;
  // A checkpoint is compiled once (into the cache) with the cached entry
  // and its rows form; an encoder's entries are the same with or without.
  if (!tfc::tools::resolveModelArgument(
          library, {"--kv-cache", "--kv-cache-last", "--kv-cache-rows"}, tool,
          o.quiet, weights, error, &packedCache))
    return nullptr;
  if (tfc_model_load(library.c_str(), &s->model) != TFC_OK) {
    error = tfc_last_error();
    return nullptr;
  }
  tfc_model_info info;
  tfc_model_get_info(s->model, &info);
  if (!weights.empty()) {
    if (!tfc::tools::bindWeightsCached(s->model, weights, packedCache, o.quiet,
                                       error))
      return nullptr;
  } else if (info.num_weights > 0) {
    error = "the model has weights: give them with --weights";
    return nullptr;
  }
  // The tokenizer: a server speaks text.
  std::string tokenizerPath = o.tokenizer;
  if (tokenizerPath.empty() && !weights.empty() &&
      tfc::tools::hasTokenizer(weights))
    tokenizerPath = weights;
  if (tokenizerPath.empty()) {
    error = "no tokenizer: give --tokenizer (tokenizer.json, a directory "
            "holding one, or a .gguf)";
    return nullptr;
  }
  s->tokenizer = tfc::rt::openTokenizer(tokenizerPath, error);
  if (!s->tokenizer)
    return nullptr;

  // The entries: the one cached entry generates, `encode` embeds.
  std::string cached;
  for (size_t e = 0; e < info.num_entries; ++e) {
    std::string name = tfc_model_entry_name(s->model, e);
    if (name.size() > 7 && name.compare(name.size() - 7, 7, "_cached") == 0) {
      if (!cached.empty()) {
        error = "the model has several cached entries ('" + cached + "', '" +
                name + "'); tfc-serve generates with one";
        return nullptr;
      }
      cached = name;
    }
  }
  s->embedEntry = tfc_model_find_entry(s->model, "encode");
  if (cached.empty() && s->embedEntry < 0) {
    error = "model '" + std::string(info.name) +
            "' neither generates (no cached entry: tfc-compile --kv-cache "
            "--kv-cache-rows) nor embeds (no 'encode' entry)";
    return nullptr;
  }
  if (!cached.empty()) {
    EngineOptions eo = o.engine;
    // The model's bound on positions (the caches' third dim).
    int64_t e = tfc_model_find_entry(s->model, cached.c_str());
    for (size_t k = 0; k < tfc_entry_num_inputs(s->model, size_t(e)); ++k) {
      tfc_tensor_info in;
      if (tfc_entry_input_is_state(s->model, size_t(e), k) &&
          tfc_entry_input_info(s->model, size_t(e), k, &in) == TFC_OK &&
          in.rank == 4 && in.dim_max[2] > 0 && eo.context > in.dim_max[2]) {
        if (o.contextGiven) {
          error = "--context " + std::to_string(o.engine.context) +
                  " exceeds the model's " + std::to_string(in.dim_max[2]) +
                  " positions";
          return nullptr;
        }
        eo.context = in.dim_max[2];
      }
    }
    s->engine = Engine::create(s->model, cached, eo, error);
    if (!s->engine)
      return nullptr;
    s->defaultMaxTokens = o.defaultMaxTokens;
    // The chat template (optional: without one, chat requests are refused).
    tfc::rt::ChatTemplateSource source;
    std::string templateError;
    if (!o.chatTemplate.empty()) {
      std::string text;
      tfc::rt::readChatTemplate(tokenizerPath, source, templateError);
      if (!tfc::rt::readRegularFile(o.chatTemplate, text,
                                    tfc::rt::kMaxConfigFileBytes, error))
        return nullptr;
      source.text = text;
      source.origin = o.chatTemplate;
    } else if (!tfc::rt::readChatTemplate(tokenizerPath, source,
                                          templateError)) {
      source.text.clear();
    }
    if (!source.text.empty()) {
      s->chat = tfc::rt::ChatTemplate::parse(source.text, error, source.origin);
      if (!s->chat)
        return nullptr;
      s->chat->setSpecialTokens(source.bos, source.eos);
    }
    if (!tfc::rt::defaultEndOfSequenceIds({tokenizerPath, weights},
                                          s->tokenizer.get(), s->eos, error))
      return nullptr;
    if (s->chat)
      for (int64_t id :
           tfc::rt::endOfTurnIds(*s->chat, source.eos, *s->tokenizer))
        if (std::find(s->eos.begin(), s->eos.end(), id) == s->eos.end())
          s->eos.push_back(id);
  }
  if (s->embedEntry >= 0) {
    // Inputs by name: input_ids (or the first integer [batch, seq] input),
    // attention_mask, token_type_ids.
    size_t n = tfc_entry_num_inputs(s->model, size_t(s->embedEntry));
    for (size_t k = 0; k < n; ++k) {
      tfc_tensor_info in;
      tfc_entry_input_info(s->model, size_t(s->embedEntry), k, &in);
      std::string name = in.name;
      if (in.rank != 2 || (in.dtype != TFC_I64 && in.dtype != TFC_I32)) {
        error = "entry 'encode' has the input '" + name +
                "', which is not integer [batch, seq]: tfc-serve feeds "
                "token ids, attention masks and token types";
        return nullptr;
      }
      int role = name == "attention_mask"   ? 1
                 : name == "token_type_ids" ? 2
                                            : 0;
      s->embedInputs.push_back(role);
      if (role == 0)
        s->embedMaxTokens = in.dim_max[1] > 0 ? in.dim_max[1] : 0;
    }
    int64_t st = sentenceTransformersMaxLength(weights);
    if (st > 0)
      s->embedMaxTokens =
          s->embedMaxTokens > 0 ? std::min(s->embedMaxTokens, st) : st;
    // A tokenizer of its own: texts cut there, as sentence-transformers
    // cuts them (whatever tokenizer.json says), and not padded (each batch
    // is padded to its longest).
    s->embedTokenizer = tfc::rt::openTokenizer(tokenizerPath, error);
    if (!s->embedTokenizer)
      return nullptr;
    if (s->embedMaxTokens > 0) {
      tfc::rt::TruncationParams cut;
      if (s->embedTokenizer->truncation())
        cut = *s->embedTokenizer->truncation();
      cut.maxLength = static_cast<size_t>(s->embedMaxTokens);
      s->embedTokenizer->setTruncation(cut);
    }
    s->embedTokenizer->setPadding(std::nullopt);
  }
  return s;
}

bool ServedModel::promptIds(const CompletionRequest &r,
                            std::vector<int64_t> &ids, int64_t &maxTokens,
                            ApiError &error) const {
  std::string message;
  if (r.kind == RequestKind::Chat) {
    if (!chat) {
      error = ApiError::badRequest("the model '" + modelName +
                                       "' has no chat template: use "
                                       "/v1/completions, or start the server "
                                       "with --chat-template",
                                   "messages");
      return false;
    }
    nlohmann::ordered_json ctx = nlohmann::ordered_json::object();
    ctx["messages"] = r.messages;
    ctx["add_generation_prompt"] = true;
    std::string text;
    if (!chat->renderJson(ctx.dump(), text, message)) {
      error = ApiError::badRequest("the chat template cannot render these "
                                   "messages: " +
                                       message,
                                   "messages");
      return false;
    }
    // The rendered text holds the template's special tokens; the tokenizer
    // adds none of its own (transformers' apply_chat_template).
    rt::Encoding enc;
    if (!tokenizer->encode(text, /*addSpecialTokens=*/false, enc, message)) {
      error = ApiError::badRequest(message, "messages");
      return false;
    }
    ids = std::move(enc.ids);
  } else if (r.promptIsIds) {
    ids = r.promptIds;
  } else {
    rt::Encoding enc;
    if (!tokenizer->encode(r.prompt, /*addSpecialTokens=*/true, enc, message)) {
      error = ApiError::badRequest(message, "prompt");
      return false;
    }
    ids = std::move(enc.ids);
  }
  int64_t context = engine->options().context;
  int64_t n = static_cast<int64_t>(ids.size());
  const char *param = r.kind == RequestKind::Chat ? "messages" : "prompt";
  if (n == 0) {
    error = ApiError::badRequest("the prompt has no tokens", param);
    return false;
  }
  for (int64_t id : ids)
    if (id >= engine->vocabulary()) {
      error = ApiError::badRequest("the prompt has the token id " +
                                       std::to_string(id) +
                                       ", outside the model's vocabulary of " +
                                       std::to_string(engine->vocabulary()),
                                   param);
      return false;
    }
  if (n >= context) {
    error = ApiError::badRequest(
        "this model's context is " + std::to_string(context) +
            " tokens; the prompt has " + std::to_string(n) +
            ", leaving no room for a reply",
        param);
    error.code = "context_length_exceeded";
    return false;
  }
  if (r.maxTokens) {
    maxTokens = *r.maxTokens;
    if (n + maxTokens > context) {
      error = ApiError::badRequest(
          "this model's context is " + std::to_string(context) +
              " tokens; the prompt has " + std::to_string(n) +
              " and max_tokens asks for " + std::to_string(maxTokens) + " more",
          "max_tokens");
      error.code = "context_length_exceeded";
      return false;
    }
  } else {
    maxTokens = context - n;
    if (defaultMaxTokens > 0)
      maxTokens = std::min(maxTokens, defaultMaxTokens);
  }
  return true;
}

bool ServedModel::embed(const EmbeddingRequest &r, std::vector<float> &vectors,
                        int64_t &dim, int64_t &promptTokens, ApiError &error) {
  if (embedEntry < 0) {
    error = ApiError::badRequest("the model '" + modelName +
                                     "' makes no embeddings (no 'encode' "
                                     "entry)",
                                 "model");
    return false;
  }
  // Each input's ids with the special tokens, texts cut to the longest the
  // entry (or sentence-transformers' max_seq_length) takes.
  std::vector<rt::Encoding> encodings;
  std::string message;
  size_t count = r.inputIsIds ? r.ids.size() : r.texts.size();
  for (size_t i = 0; i < count; ++i) {
    rt::Encoding enc;
    if (r.inputIsIds) {
      enc.ids = r.ids[i];
      for (int64_t id : enc.ids)
        if (id >= static_cast<int64_t>(tokenizer->vocabSize())) {
          error = ApiError::badRequest(
              "input " + std::to_string(i) + " has the token id " +
                  std::to_string(id) + ", outside the vocabulary",
              "input");
          return false;
        }
    } else if (!embedTokenizer->encode(r.texts[i], /*addSpecialTokens=*/true,
                                       enc, message)) {
      error = ApiError::badRequest(
          "input " + std::to_string(i) + ": " + message, "input");
      return false;
    }
    if (r.inputIsIds && embedMaxTokens > 0 &&
        static_cast<int64_t>(enc.ids.size()) > embedMaxTokens) {
      error = ApiError::badRequest(
          "input " + std::to_string(i) + " has " +
              std::to_string(enc.ids.size()) + " tokens; this model takes " +
              std::to_string(embedMaxTokens) + " at most",
          "input");
      return false;
    }
    promptTokens += static_cast<int64_t>(enc.ids.size());
    encodings.push_back(std::move(enc));
  }
  // Batches of up to 32 inputs, each padded to its longest.
  constexpr size_t kBatch = 32;
  dim = 0;
  std::vector<tfc_tensor_info> infos(embedInputs.size());
  for (size_t k = 0; k < embedInputs.size(); ++k)
    tfc_entry_input_info(model, size_t(embedEntry), k, &infos[k]);
  int64_t pad = 0;
  if (tokenizer->padding())
    pad = tokenizer->padding()->padId;
  for (size_t start = 0; start < encodings.size(); start += kBatch) {
    size_t rows = std::min(kBatch, encodings.size() - start);
    size_t width = 0;
    for (size_t i = 0; i < rows; ++i)
      width = std::max(width, encodings[start + i].ids.size());
    std::vector<std::vector<int64_t>> values(
        embedInputs.size(), std::vector<int64_t>(rows * width));
    for (size_t i = 0; i < rows; ++i) {
      const rt::Encoding &e = encodings[start + i];
      for (size_t t = 0; t < width; ++t) {
        bool real = t < e.ids.size();
        for (size_t k = 0; k < embedInputs.size(); ++k) {
          int64_t v = 0;
          if (embedInputs[k] == 0)
            v = real ? e.ids[t] : pad;
          else if (embedInputs[k] == 1)
            v = real;
          else
            v = real && t < e.typeIds.size() ? e.typeIds[t] : 0;
          values[k][i * width + t] = v;
        }
      }
    }
    std::vector<std::vector<int32_t>> narrow(embedInputs.size());
    std::vector<tfc_tensor> in(embedInputs.size());
    for (size_t k = 0; k < embedInputs.size(); ++k) {
      void *data = values[k].data();
      if (infos[k].dtype == TFC_I32) {
        narrow[k].assign(values[k].begin(), values[k].end());
        data = narrow[k].data();
      }
      in[k] =
          tfc_tensor{infos[k].dtype,
                     2,
                     {static_cast<int64_t>(rows), static_cast<int64_t>(width)},
                     data,
                     nullptr};
    }
    tfc_tensor out{};
    if (tfc_run(model, "encode", in.data(), in.size(), &out, 1) != TFC_OK) {
      error =
          ApiError{500, std::string("the model failed: ") + tfc_last_error(),
                   "", "server_error"};
      return false;
    }
    if (out.dtype != TFC_F32 || out.rank != 2 ||
        out.shape[0] != static_cast<int64_t>(rows)) {
      tfc_tensor_release(&out);
      error = ApiError{500, "entry 'encode' does not return f32 [batch, dim]",
                       "", "server_error"};
      return false;
    }
    dim = out.shape[1];
    const float *p = static_cast<const float *>(out.data);
    vectors.insert(vectors.end(), p, p + rows * static_cast<size_t>(dim));
    tfc_tensor_release(&out);
  }
  if (r.dimensions && *r.dimensions != dim) {
    error = ApiError::badRequest(
        "this model's embeddings have " + std::to_string(dim) +
            " dimensions; 'dimensions' " + std::to_string(*r.dimensions) +
            " would need a model trained to be cut (Matryoshka)",
        "dimensions");
    return false;
  }
  return true;
}
