//===- OpenAI.h - OpenAI's request and response shapes ----------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The JSON of OpenAI's HTTP API as tfc-serve speaks it, apart from any HTTP
// library: request bodies parsed and checked into plain structs (every
// refusal an ApiError with OpenAI's status, type and the offending field),
// and the bodies of the answers (completions, their server-sent chunks,
// embeddings, errors). The fields OpenAI defines that tfc does not implement
// are refused by name when a request sets them to anything but their
// default; fields OpenAI does not define are refused as OpenAI refuses them
// ("Unrecognized request argument"), except the sampling extensions that
// llama.cpp's server and vLLM take too (top_k, min_p, repetition_penalty,
// ignore_eos).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_SERVING_OPENAI_H
#define TFC_SERVING_OPENAI_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tfc::serve {

/// A refusal in OpenAI's shape: {"error": {"message", "type", "param",
/// "code"}} with an HTTP status.
struct ApiError {
  ApiError(int status = 400, std::string message = "", std::string param = "",
           std::string type = "invalid_request_error", std::string code = "")
      : status(status), message(std::move(message)), param(std::move(param)),
        type(std::move(type)), code(std::move(code)) {}

  int status = 400;
  std::string message;
  /// The request field at fault, or empty (null).
  std::string param;
  std::string type = "invalid_request_error";
  /// OpenAI's machine-readable code, or empty (null).
  std::string code;

  static ApiError badRequest(std::string message, std::string param = "") {
    return ApiError{400, std::move(message), std::move(param)};
  }
  /// The body: {"error": {...}}.
  std::string body() const;
};

enum class RequestKind { Chat, Completion, Embedding };

/// A chat or text completion request.
struct CompletionRequest {
  RequestKind kind = RequestKind::Chat;
  std::string model;
  /// Chat: the messages as the template reads them (each an object with
  /// "role" and a string "content": text parts joined).
  nlohmann::ordered_json messages;
  /// Completion: the prompt as text, or as token ids.
  std::string prompt;
  std::vector<int64_t> promptIds;
  bool promptIsIds = false;
  /// max_completion_tokens, else max_tokens.
  std::optional<int64_t> maxTokens;
  double temperature = 1.0, topP = 1.0, minP = 0.0, repetitionPenalty = 1.0;
  int64_t topK = 0;
  std::optional<uint64_t> seed;
  std::vector<std::string> stop;
  bool stream = false, includeUsage = false;
  /// Generate past end-of-sequence tokens (vLLM's and llama.cpp's
  /// extension, for benchmarks): only max_tokens and stop strings end it.
  bool ignoreEos = false;
};

/// An embeddings request: texts or token id sequences.
struct EmbeddingRequest {
  std::string model;
  std::vector<std::string> texts;
  std::vector<std::vector<int64_t>> ids;
  bool inputIsIds = false;
  bool base64 = false;
  std::optional<int64_t> dimensions;
};

/// Parses a body. Returns nullopt and sets `error` for malformed JSON, a
/// body that is not an object, a missing or mistyped field, a value out of
/// range, an unknown field, or a field tfc does not implement set to what it
/// cannot do.
std::optional<CompletionRequest> parseCompletionRequest(const std::string &body,
                                                        RequestKind kind,
                                                        ApiError &error);
std::optional<EmbeddingRequest> parseEmbeddingRequest(const std::string &body,
                                                      ApiError &error);

/// What the answers need besides the text.
struct Usage {
  int64_t promptTokens = 0, completionTokens = 0;
};

/// The envelope every answer to one request shares.
struct ResponseHeader {
  RequestKind kind = RequestKind::Chat;
  std::string id; ///< "chatcmpl-..." / "cmpl-..."
  std::string model;
  int64_t created = 0; ///< seconds since the epoch
};

/// A fresh id for a response: `prefix` and 24 random hex digits.
std::string newResponseId(const std::string &prefix);

/// The whole answer of a request without `stream`.
std::string completionBody(const ResponseHeader &h, const std::string &text,
                           const std::string &finishReason, const Usage &u);
/// One server-sent event of a streamed answer ("data: {...}\n\n"): the
/// first (`first`: the chat's role), a piece of text, or the last with
/// `finishReason`. `includeUsage`: "usage": null, as OpenAI sends on every
/// chunk before the usage chunk.
std::string chunkEvent(const ResponseHeader &h, const std::string *text,
                       const std::string *finishReason, bool first,
                       bool includeUsage);
/// The usage chunk (stream_options.include_usage): no choices.
std::string usageEvent(const ResponseHeader &h, const Usage &u);
/// An error after the answer has started: an event with the error object.
std::string errorEvent(const ApiError &e);

/// The embeddings answer; `vectors` are rows of `dim` floats.
std::string embeddingsBody(const std::string &model,
                           const std::vector<float> &vectors, int64_t dim,
                           size_t count, bool base64, int64_t promptTokens);

} // namespace tfc::serve

#endif // TFC_SERVING_OPENAI_H
