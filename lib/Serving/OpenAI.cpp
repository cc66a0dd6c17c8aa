//===- OpenAI.cpp - OpenAI's request and response shapes ------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// See OpenAI.h. The fields and their defaults follow OpenAI's API reference
// (chat/create, completions/create, embeddings/create).
//
//===----------------------------------------------------------------------===//

#include "tfc/Serving/OpenAI.h"

#include "tfc/Formats/JsonDocument.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <set>

using namespace tfc::serve;
using Json = nlohmann::ordered_json;

std::string ApiError::body() const {
  Json e = Json::object();
  e["message"] = message;
  e["type"] = type;
  e["param"] = param.empty() ? Json() : Json(param);
  e["code"] = code.empty() ? Json() : Json(code);
  Json out = Json::object();
  out["error"] = e;
  return out.dump(-1, ' ', false, Json::error_handler_t::replace);
}

namespace {

/// Reads the fields of one request object, each once; what is left at the
/// end is unknown.
class Fields {
public:
  Fields(const Json &body, ApiError &error) : body(body), error(error) {}

  bool failed() const { return bad; }

  /// The field, or null when absent (JSON null counts as absent, as OpenAI
  /// takes it).
  const Json *get(const char *key) {
    seen.insert(key);
    auto it = body.find(key);
    if (it == body.end() || it->is_null())
      return nullptr;
    return &*it;
  }
  bool fail(std::string message, const std::string &param) {
    if (!bad)
      error = ApiError::badRequest(std::move(message), param);
    bad = true;
    return false;
  }
  bool wrongType(const char *key, const char *expected, const Json &v) {
    return fail(std::string("'") + key + "' must be " + expected + ", not " +
                    tfc::rt::jsonKindName(v),
                key);
  }

  /// The field when present and of the kind `is` tests, else null (a
  /// wrong kind fails, naming `what` was expected).
  const Json *typed(const char *key, bool (Json::*is)() const noexcept,
                    const char *what) {
    const Json *v = get(key);
    if (v && !(v->*is)()) {
      wrongType(key, what, *v);
      return nullptr;
    }
    return v;
  }

  std::optional<std::string> string(const char *key) {
    if (const Json *v = typed(key, &Json::is_string, "a string"))
      return v->get<std::string>();
    return std::nullopt;
  }
  std::optional<bool> boolean(const char *key) {
    if (const Json *v = typed(key, &Json::is_boolean, "a boolean"))
      return v->get<bool>();
    return std::nullopt;
  }
  /// An integer in [lo, hi].
  std::optional<int64_t> integer(const char *key, int64_t lo, int64_t hi) {
    const Json *v = typed(key, &Json::is_number_integer, "an integer");
    if (!v)
      return std::nullopt;
    if (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t(INT64_MAX)) {
      fail(std::string("'") + key + "' is out of range", key);
      return std::nullopt;
    }
    int64_t x = v->get<int64_t>();
    if (x < lo || x > hi) {
      fail(std::string("'") + key + "' must be in [" + std::to_string(lo) +
               ", " + std::to_string(hi) + "], not " + std::to_string(x),
           key);
      return std::nullopt;
    }
    return x;
  }
  /// A number in [lo, hi] (`openLo`: (lo, hi]).
  std::optional<double> number(const char *key, double lo, double hi,
                               bool openLo = false) {
    const Json *v = typed(key, &Json::is_number, "a number");
    if (!v)
      return std::nullopt;
    double x = v->get<double>();
    if (!std::isfinite(x) || x < lo || x > hi || (openLo && x == lo)) {
      char range[96];
      std::snprintf(range, sizeof range, "%s%g, %g]", openLo ? "(" : "[", lo,
                    hi);
      fail(std::string("'") + key + "' must be in " + range, key);
      return std::nullopt;
    }
    return x;
  }
  /// A field tfc does not implement: absent, null, or `ok(value)`.
  template <class Ok>
  void unsupported(const char *key, Ok ok, const char *why) {
    const Json *v = get(key);
    if (v && !ok(*v))
      fail(std::string("'") + key + "' is not supported by this server: " + why,
           key);
  }
  /// Fields the request has that no get() asked for.
  void refuseUnknown() {
    if (bad)
      return;
    for (auto it = body.begin(); it != body.end(); ++it)
      if (!seen.count(it.key())) {
        // OpenAI's own wording.
        fail("Unrecognized request argument supplied: " + it.key(), it.key());
        return;
      }
  }

private:
  const Json &body;
  ApiError &error;
  std::set<std::string> seen;
  bool bad = false;
};

bool parseBody(const std::string &text, Json &body, ApiError &error) {
  std::string message;
  if (!tfc::rt::parseJsonDocument(text, "the request body", body, message)) {
    error = ApiError::badRequest(message);
    return false;
  }
  if (!body.is_object()) {
    error = ApiError::badRequest(
        std::string("the request body must be a JSON object, not ") +
        tfc::rt::jsonKindName(body));
    return false;
  }
  return true;
}

/// The model field: required, a string.
bool readModel(Fields &f, std::string &model) {
  if (std::optional<std::string> m = f.string("model")) {
    model = *m;
    return true;
  }
  if (!f.failed())
    f.fail("'model' is required", "model");
  return false;
}

/// A list of token ids, each in [0, 2^31).
bool tokenIds(const Json &v, std::vector<int64_t> &out) {
  if (!v.is_array() || v.empty())
    return false;
  for (const Json &x : v) {
    if (!x.is_number_integer())
      return false;
    int64_t id = x.get<int64_t>();
    if (id < 0 || id > INT32_MAX)
      return false;
    out.push_back(id);
  }
  return true;
}

/// A message's content: a string, or a list of text parts joined.
bool messageContent(const Json &v, std::string &out) {
  if (v.is_string()) {
    out = v.get<std::string>();
    return true;
  }
  if (!v.is_array())
    return false;
  for (const Json &part : v) {
    if (!part.is_object() || !part.contains("type") || part["type"] != "text" ||
        !part.contains("text") || !part["text"].is_string())
      return false;
    out += part["text"].get<std::string>();
  }
  return true;
}

} // namespace

std::optional<CompletionRequest>
tfc::serve::parseCompletionRequest(const std::string &text, RequestKind kind,
                                   ApiError &error) {
  Json body;
  if (!parseBody(text, body, error))
    return std::nullopt;
  Fields f(body, error);
  CompletionRequest r;
  r.kind = kind;
  if (!readModel(f, r.model))
    return std::nullopt;
  if (kind == RequestKind::Chat) {
    const Json *messages = f.get("messages");
    if (!messages)
      return f.fail("'messages' is required", "messages"), std::nullopt;
    if (!messages->is_array() || messages->empty())
      return f.fail("'messages' must be a non-empty array of messages",
                    "messages"),
             std::nullopt;
    r.messages = Json::array();
    for (size_t i = 0; i < messages->size(); ++i) {
      const Json &m = (*messages)[i];
      std::string where = "messages[" + std::to_string(i) + "]";
      if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
        return f.fail("'" + where + "' must be an object with a string 'role'",
                      where),
               std::nullopt;
      std::string role = m["role"].get<std::string>();
      static const char *const roles[] = {"system", "developer", "user",
                                          "assistant", "tool"};
      if (std::none_of(std::begin(roles), std::end(roles),
                       [&](const char *k) { return role == k; }))
        return f.fail("'" + where +
                          ".role' must be one of system, developer, "
                          "user, assistant, tool; not '" +
                          role + "'",
                      where + ".role"),
               std::nullopt;
      std::string content;
      if (m.contains("content") && !m["content"].is_null() &&
          !messageContent(m["content"], content))
        return f.fail("'" + where +
                          ".content' must be a string or an array of text "
                          "parts ({\"type\": \"text\", \"text\": ...})",
                      where + ".content"),
               std::nullopt;
      Json copy = Json::object();
      copy["role"] = role == "developer" ? "system" : role;
      copy["content"] = content;
      if (m.contains("name") && m["name"].is_string())
        copy["name"] = m["name"];
      r.messages.push_back(std::move(copy));
    }
    // Fields of a chat request that tfc does not implement.
    f.unsupported(
        "tools", [](const Json &v) { return v.is_array() && v.empty(); },
        "tool calls are not implemented");
    f.unsupported(
        "tool_choice",
        [](const Json &v) { return v.is_string() && v == "none"; },
        "tool calls are not implemented");
    f.unsupported(
        "parallel_tool_calls", [](const Json &v) { return v.is_boolean(); },
        "tool calls are not implemented");
    f.unsupported(
        "response_format",
        [](const Json &v) {
          return v.is_object() && v.contains("type") && v["type"] == "text";
        },
        "only {\"type\": \"text\"} is implemented");
    f.unsupported(
        "top_logprobs",
        [](const Json &v) { return v.is_number_integer() && v == 0; },
        "log probabilities are not implemented");
    f.unsupported(
        "logprobs", [](const Json &v) { return v.is_boolean() && !v; },
        "log probabilities are not implemented");
    f.unsupported(
        "modalities",
        [](const Json &v) {
          return v.is_array() && v.size() == 1 && v[0] == "text";
        },
        "only text is implemented");
    f.unsupported(
        "reasoning_effort", [](const Json &) { return false; },
        "this model does not reason on request");
    for (const char *key : {"metadata", "store", "service_tier", "user",
                            "prediction", "web_search_options", "audio"})
      f.get(key); // accepted and ignored, as OpenAI's optional extras
  } else {
    const Json *prompt = f.get("prompt");
    if (!prompt)
      return f.fail("'prompt' is required", "prompt"), std::nullopt;
    if (prompt->is_string()) {
      r.prompt = prompt->get<std::string>();
    } else if (prompt->is_array() && prompt->size() == 1 &&
               (*prompt)[0].is_string()) {
      r.prompt = (*prompt)[0].get<std::string>();
    } else if (tokenIds(*prompt, r.promptIds)) {
      r.promptIsIds = true;
    } else {
      return f.fail("'prompt' must be a string, a list of one string or a "
                    "non-empty list of token ids (several prompts in one "
                    "request are not supported)",
                    "prompt"),
             std::nullopt;
    }
    f.unsupported(
        "echo", [](const Json &v) { return v.is_boolean() && !v; },
        "the prompt is not echoed");
    f.unsupported(
        "suffix", [](const Json &) { return false; },
        "insertion after a suffix is not implemented");
    f.unsupported(
        "best_of",
        [](const Json &v) { return v.is_number_integer() && v == 1; },
        "only best_of = 1 is implemented");
    f.unsupported(
        "logprobs",
        [](const Json &v) { return v.is_number_integer() && v == 0; },
        "log probabilities are not implemented");
    f.get("user");
  }
  if (f.failed())
    return std::nullopt;
  // The sampling fields both share.
  std::optional<int64_t> maxTokens = f.integer("max_tokens", 1, INT32_MAX);
  std::optional<int64_t> maxCompletion =
      kind == RequestKind::Chat
          ? f.integer("max_completion_tokens", 1, INT32_MAX)
          : std::nullopt;
  r.maxTokens = maxCompletion ? maxCompletion : maxTokens;
  r.temperature = f.number("temperature", 0, 2).value_or(1.0);
  r.topP = f.number("top_p", 0, 1, /*openLo=*/true).value_or(1.0);
  if (std::optional<int64_t> seed = f.integer("seed", INT64_MIN, INT64_MAX))
    r.seed = static_cast<uint64_t>(*seed);
  r.topK = f.integer("top_k", 0, INT32_MAX).value_or(0);
  r.minP = f.number("min_p", 0, 1).value_or(0.0);
  if (r.minP >= 1 && !f.failed())
    f.fail("'min_p' must be in [0, 1)", "min_p");
  r.repetitionPenalty =
      f.number("repetition_penalty", 0, 100, /*openLo=*/true).value_or(1.0);
  f.unsupported(
      "n", [](const Json &v) { return v.is_number_integer() && v == 1; },
      "only n = 1 is implemented");
  for (const char *key : {"frequency_penalty", "presence_penalty"})
    f.unsupported(
        key, [](const Json &v) { return v.is_number() && v == 0; },
        "use repetition_penalty (multiplicative, as llama.cpp and "
        "transformers apply it)");
  f.unsupported(
      "logit_bias", [](const Json &v) { return v.is_object() && v.empty(); },
      "logit biases are not implemented");
  if (const Json *stop = f.get("stop")) {
    if (stop->is_string())
      r.stop.push_back(stop->get<std::string>());
    else if (stop->is_array() && stop->size() <= 4 &&
             std::all_of(stop->begin(), stop->end(),
                         [](const Json &s) { return s.is_string(); }))
      for (const Json &s : *stop)
        r.stop.push_back(s.get<std::string>());
    else
      f.fail("'stop' must be a string or an array of up to 4 strings", "stop");
    for (const std::string &s : r.stop)
      if (s.empty() || s.size() > 256) {
        f.fail("each 'stop' string must have 1 to 256 bytes", "stop");
        break;
      }
  }
  r.ignoreEos = f.boolean("ignore_eos").value_or(false);
  r.stream = f.boolean("stream").value_or(false);
  if (const Json *options = f.get("stream_options")) {
    if (!options->is_object())
      f.wrongType("stream_options", "an object", *options);
    else if (!r.stream)
      f.fail("'stream_options' is only allowed when 'stream' is true",
             "stream_options");
    else
      for (auto it = options->begin(); it != options->end(); ++it) {
        if (it.key() == "include_usage" && it->is_boolean())
          r.includeUsage = it->get<bool>();
        else if (it.key() != "include_usage")
          f.fail("Unrecognized request argument supplied: stream_options." +
                     it.key(),
                 "stream_options." + it.key());
        else
          f.fail("'stream_options.include_usage' must be a boolean",
                 "stream_options.include_usage");
      }
  }
  f.refuseUnknown();
  if (f.failed())
    return std::nullopt;
  return r;
}

std::optional<EmbeddingRequest>
tfc::serve::parseEmbeddingRequest(const std::string &text, ApiError &error) {
  Json body;
  if (!parseBody(text, body, error))
    return std::nullopt;
  Fields f(body, error);
  EmbeddingRequest r;
  if (!readModel(f, r.model))
    return std::nullopt;
  const Json *input = f.get("input");
  if (!input)
    return f.fail("'input' is required", "input"), std::nullopt;
  constexpr size_t kMaxInputs = 2048; // OpenAI's limit
  if (input->is_string()) {
    r.texts.push_back(input->get<std::string>());
  } else if (input->is_array() && !input->empty() &&
             input->size() <= kMaxInputs &&
             std::all_of(input->begin(), input->end(),
                         [](const Json &s) { return s.is_string(); })) {
    for (const Json &s : *input)
      r.texts.push_back(s.get<std::string>());
  } else if (std::vector<int64_t> ids; tokenIds(*input, ids)) {
    r.ids.push_back(std::move(ids));
    r.inputIsIds = true;
  } else if (input->is_array() && !input->empty() &&
             input->size() <= kMaxInputs) {
    for (const Json &seq : *input) {
      std::vector<int64_t> ids;
      if (!tokenIds(seq, ids))
        return f.fail("'input' must be a string, an array of strings, an "
                      "array of token ids or an array of such arrays (at "
                      "most 2048)",
                      "input"),
               std::nullopt;
      r.ids.push_back(std::move(ids));
    }
    r.inputIsIds = true;
  } else {
    return f.fail("'input' must be a string, an array of strings, an array "
                  "of token ids or an array of such arrays (at most 2048)",
                  "input"),
           std::nullopt;
  }
  for (const std::string &t : r.texts)
    if (t.empty())
      return f.fail("'input' must not hold an empty string", "input"),
             std::nullopt;
  if (std::optional<std::string> format = f.string("encoding_format")) {
    if (*format == "base64")
      r.base64 = true;
    else if (*format != "float")
      f.fail("'encoding_format' must be 'float' or 'base64', not '" + *format +
                 "'",
             "encoding_format");
  }
  r.dimensions = f.integer("dimensions", 1, INT32_MAX);
  f.get("user");
  f.refuseUnknown();
  if (f.failed())
    return std::nullopt;
  return r;
}

std::string tfc::serve::newResponseId(const std::string &prefix) {
  static thread_local std::mt19937_64 rng(
      std::random_device{}() ^
      static_cast<uint64_t>(
          std::chrono::steady_clock::now().time_since_epoch().count()));
  static const char hex[] = "0123456789abcdef";
  std::string id = prefix;
  for (int i = 0; i < 24; ++i)
    id += hex[rng() & 15];
  return id;
}

namespace {

Json envelope(const ResponseHeader &h, bool chunk) {
  Json j = Json::object();
  j["id"] = h.id;
  if (h.kind == RequestKind::Chat)
    j["object"] = chunk ? "chat.completion.chunk" : "chat.completion";
  else
    j["object"] = "text_completion";
  j["created"] = h.created;
  j["model"] = h.model;
  j["system_fingerprint"] = "tfc";
  return j;
}

Json usageJson(const Usage &u) {
  Json j = Json::object();
  j["prompt_tokens"] = u.promptTokens;
  j["completion_tokens"] = u.completionTokens;
  j["total_tokens"] = u.promptTokens + u.completionTokens;
  return j;
}

std::string dump(const Json &j) {
  // Text from the model is valid UTF-8 (the decoder's replacement
  // characters included); replace guards the rest.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string event(const Json &j) { return "data: " + dump(j) + "\n\n"; }

} // namespace

std::string tfc::serve::completionBody(const ResponseHeader &h,
                                       const std::string &text,
                                       const std::string &finishReason,
                                       const Usage &u) {
  Json j = envelope(h, false);
  Json choice = Json::object();
  choice["index"] = 0;
  if (h.kind == RequestKind::Chat) {
    Json message = Json::object();
    message["role"] = "assistant";
    message["content"] = text;
    message["refusal"] = nullptr;
    choice["message"] = message;
  } else {
    choice["text"] = text;
  }
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = finishReason;
  j["choices"] = Json::array({choice});
  j["usage"] = usageJson(u);
  return dump(j);
}

std::string tfc::serve::chunkEvent(const ResponseHeader &h,
                                   const std::string *text,
                                   const std::string *finishReason, bool first,
                                   bool includeUsage) {
  Json j = envelope(h, true);
  Json choice = Json::object();
  choice["index"] = 0;
  if (h.kind == RequestKind::Chat) {
    Json delta = Json::object();
    if (first) {
      delta["role"] = "assistant";
      delta["content"] = "";
    }
    if (text)
      delta["content"] = *text;
    choice["delta"] = delta;
  } else {
    choice["text"] = text ? *text : std::string();
  }
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = finishReason ? Json(*finishReason) : Json();
  j["choices"] = Json::array({choice});
  if (includeUsage)
    j["usage"] = nullptr;
  return event(j);
}

std::string tfc::serve::usageEvent(const ResponseHeader &h, const Usage &u) {
  Json j = envelope(h, true);
  j["choices"] = Json::array();
  j["usage"] = usageJson(u);
  return event(j);
}

std::string tfc::serve::errorEvent(const ApiError &e) {
  return "data: " + e.body() + "\n\n";
}

namespace {

std::string base64(const unsigned char *p, size_t n) {
  static const char table[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((n + 2) / 3 * 4);
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = uint32_t(p[i]) << 16;
    if (i + 1 < n)
      v |= uint32_t(p[i + 1]) << 8;
    if (i + 2 < n)
      v |= p[i + 2];
    out += table[(v >> 18) & 63];
    out += table[(v >> 12) & 63];
    out += i + 1 < n ? table[(v >> 6) & 63] : '=';
    out += i + 2 < n ? table[v & 63] : '=';
  }
  return out;
}

} // namespace

std::string tfc::serve::embeddingsBody(const std::string &model,
                                       const std::vector<float> &vectors,
                                       int64_t dim, size_t count, bool b64,
                                       int64_t promptTokens) {
  Json j = Json::object();
  j["object"] = "list";
  j["data"] = Json::array();
  for (size_t i = 0; i < count; ++i) {
    Json e = Json::object();
    e["object"] = "embedding";
    e["index"] = i;
    const float *v = vectors.data() + i * static_cast<size_t>(dim);
    if (b64) {
      // The float32 values' little-endian bytes (x86-64's own order).
      e["embedding"] = base64(reinterpret_cast<const unsigned char *>(v),
                              static_cast<size_t>(dim) * sizeof(float));
    } else {
      Json values = Json::array();
      for (int64_t k = 0; k < dim; ++k)
        values.push_back(v[k]);
      e["embedding"] = std::move(values);
    }
    j["data"].push_back(std::move(e));
  }
  j["model"] = model;
  Json usage = Json::object();
  usage["prompt_tokens"] = promptTokens;
  usage["total_tokens"] = promptTokens;
  j["usage"] = usage;
  return dump(j);
}
