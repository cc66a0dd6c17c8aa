//===- ServedModel.h - What tfc-serve serves ---------------------*- C++
//-*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The model behind the routes (llama.cpp's server context): the compiled
// library bound to its weights, the tokenizer, the chat template and the ids
// that end a reply, the engine that decodes every generating request in one
// batch (Engine.h), and the `encode` entry for embeddings. Loaded once;
// every method may be called from any HTTP thread.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TOOLS_SERVE_SERVEDMODEL_H
#define TFC_TOOLS_SERVE_SERVEDMODEL_H

#include "tfc/Runtime/tfc.h"
#include "tfc/Serving/Engine.h"
#include "tfc/Serving/OpenAI.h"
#include "tfc/Text/Jinja/ChatTemplate.h"
#include "tfc/Text/Tokenizer/Tokenizer.h"

#include <memory>
#include <string>
#include <vector>

namespace tfc::serve {

struct ServeOptions {
  std::string model, weights, tokenizer, chatTemplate;
  /// The name requests give as "model" (default: the file's name).
  std::string name;
  EngineOptions engine;
  /// --context was given: a context past the model's bound is an error
  /// (else the bound is taken).
  bool contextGiven = false;
  /// A reply's tokens when a request names none (0: what the context
  /// leaves).
  int64_t defaultMaxTokens = 0;
  bool quiet = false;
};

class ServedModel {
public:
  /// Compiles (a checkpoint, through the cache), loads and binds; starts the
  /// engine when the model generates. Null with `error`.
  static std::unique_ptr<ServedModel> load(const ServeOptions &options,
                                           const std::string &tool,
                                           std::string &error);
  ~ServedModel();

  const std::string &name() const { return modelName; }
  bool generates() const { return engine != nullptr; }
  bool embeds() const { return embedEntry >= 0; }
  Engine *generationEngine() { return engine.get(); }
  const rt::Tokenizer &textTokenizer() const { return *tokenizer; }
  /// The ids that end a reply (the checkpoint's end of sequence and the
  /// template's end of turn).
  const std::vector<int64_t> &endIds() const { return eos; }

  /// A request's prompt as ids: the chat rendered with the template, or the
  /// completion's text or ids; the reply's token limit checked against the
  /// context (a 400 naming both). False with `error`.
  bool promptIds(const CompletionRequest &r, std::vector<int64_t> &ids,
                 int64_t &maxTokens, ApiError &error) const;

  /// The embeddings of the texts or id sequences, [count, dim] row by row.
  bool embed(const EmbeddingRequest &r, std::vector<float> &vectors,
             int64_t &dim, int64_t &promptTokens, ApiError &error);

private:
  ServedModel() = default;

  std::string modelName;
  tfc_model *model = nullptr;
  std::unique_ptr<rt::Tokenizer> tokenizer;
  std::unique_ptr<rt::ChatTemplate> chat;
  std::vector<int64_t> eos;
  std::unique_ptr<Engine> engine;
  int64_t defaultMaxTokens = 0;
  /// The encode entry, its longest input (0: unbounded) and the order of
  /// its inputs: 0 ids, 1 attention mask, 2 token types.
  int64_t embedEntry = -1;
  std::unique_ptr<rt::Tokenizer> embedTokenizer;
  int64_t embedMaxTokens = 0;
  std::vector<int> embedInputs;
};

} // namespace tfc::serve

#endif // TFC_TOOLS_SERVE_SERVEDMODEL_H
