//===- ServingTest.cpp - OpenAI's shapes and the streamed text ------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The request parsing and answer bodies of tfc-serve (Serving/OpenAI.h) and
// the text of a reply with stop strings (Generation/TextStream.h), apart
// from any model or socket.
//
//===----------------------------------------------------------------------===//

#include "tfc/Generation/TextStream.h"
#include "tfc/Serving/OpenAI.h"

#include <gtest/gtest.h>

using namespace tfc::serve;
using tfc::gen::TextStream;
using Json = nlohmann::json;

namespace {

std::optional<CompletionRequest> chat(const std::string &body,
                                      ApiError &error) {
  return parseCompletionRequest(body, RequestKind::Chat, error);
}

const char *kMessages = R"("messages": [{"role": "user", "content": "hi"}])";

std::string chatBody(const std::string &extra) {
  return std::string(R"({"model": "m", )") + kMessages +
         (extra.empty() ? "" : ", " + extra) + "}";
}

} // namespace

TEST(TextStreamTest, HoldsBackWhatMayBecomeAStopString) {
  TextStream s({"</end>"});
  std::string out;
  EXPECT_FALSE(s.append("Hello </", out));
  EXPECT_EQ(out, "Hello "); // "</" may begin the stop string
  EXPECT_FALSE(s.append("b> more", out));
  EXPECT_EQ(out, "Hello </b> more");
  EXPECT_TRUE(s.append(" </en", out) || s.append("d> tail", out));
  EXPECT_EQ(s.reply(), "Hello </b> more ");
  EXPECT_EQ(out, "Hello </b> more ");
  EXPECT_TRUE(s.stopped());
  // Text after the stop string is ignored.
  EXPECT_TRUE(s.append("later", out));
  EXPECT_EQ(out, "Hello </b> more ");
}

TEST(TextStreamTest, TheEarliestStopWinsAndFinishReleases) {
  TextStream s({"cd", "b"});
  std::string out;
  EXPECT_TRUE(s.append("abcd", out));
  EXPECT_EQ(out, "a");
  TextStream t({"xyz"});
  out.clear();
  EXPECT_FALSE(t.append("axy", out));
  EXPECT_EQ(out, "a");
  EXPECT_FALSE(t.finish("", out)); // the end: "xy" was not a stop string
  EXPECT_EQ(out, "axy");
  TextStream u({"xyz"});
  out.clear();
  u.append("axy", out);
  EXPECT_TRUE(u.finish("z!", out)); // the decoder's last text completes it
  EXPECT_EQ(out, "a");
  EXPECT_EQ(TextStream({"a", ""}).invalid(), "stop string 1 is empty");
  EXPECT_EQ(tfc::gen::heldBack("abc", "bcd"), 2u);
  EXPECT_EQ(tfc::gen::heldBack("abc", "abc"), 0u); // whole: found, not held
}

TEST(OpenAIRequestTest, AChatWithItsFields) {
  ApiError e;
  auto r = chat(chatBody(R"("max_tokens": 5, "temperature": 0, "top_p": 0.5,
      "seed": 3, "stop": "x", "stream": true,
      "stream_options": {"include_usage": true}, "top_k": 4,
      "user": "u", "n": 1, "ignore_eos": true)"),
                e);
  ASSERT_TRUE(r) << e.message;
  EXPECT_EQ(r->model, "m");
  EXPECT_EQ(*r->maxTokens, 5);
  EXPECT_EQ(r->temperature, 0);
  EXPECT_EQ(r->topP, 0.5);
  EXPECT_EQ(*r->seed, 3u);
  EXPECT_EQ(r->stop, std::vector<std::string>{"x"});
  EXPECT_TRUE(r->stream && r->includeUsage && r->ignoreEos);
  EXPECT_EQ(r->topK, 4);
  EXPECT_EQ(r->messages.dump(), R"([{"role":"user","content":"hi"}])");
  // Defaults: OpenAI's temperature 1.
  r = chat(chatBody(""), e);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->temperature, 1.0);
  EXPECT_FALSE(r->maxTokens);
  // max_completion_tokens wins over max_tokens; text parts are joined;
  // "developer" is the template's "system".
  r = chat(R"({"model": "m", "max_tokens": 9, "max_completion_tokens": 4,
      "messages": [{"role": "developer", "content": [
        {"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        {"role": "assistant", "content": null}]})",
           e);
  ASSERT_TRUE(r) << e.message;
  EXPECT_EQ(*r->maxTokens, 4);
  EXPECT_EQ(r->messages[0]["role"], "system");
  EXPECT_EQ(r->messages[0]["content"], "ab");
  EXPECT_EQ(r->messages[1]["content"], "");
}

TEST(OpenAIRequestTest, RefusalsNameTheField) {
  struct Case {
    std::string body, message, param;
  };
  std::vector<Case> cases = {
      {"{not json", "the request body: invalid JSON: parse error at line 1",
       ""},
      {"[1]", "the request body must be a JSON object, not an array", ""},
      {R"({"messages": []})", "'model' is required", "model"},
      {R"({"model": 3})", "'model' must be a string, not an integer", "model"},
      {R"({"model": "m"})", "'messages' is required", "messages"},
      {chatBody(R"("bogus": 1)"),
       "Unrecognized request argument supplied: bogus", "bogus"},
      {chatBody(R"("max_tokens": "5")"),
       "'max_tokens' must be an integer, not a string", "max_tokens"},
      {chatBody(R"("max_tokens": 0)"), "'max_tokens' must be in [1,",
       "max_tokens"},
      {chatBody(R"("temperature": 2.5)"), "'temperature' must be in [0, 2]",
       "temperature"},
      {chatBody(R"("top_p": 0)"), "'top_p' must be in (0, 1]", "top_p"},
      {chatBody(R"("stop": ["a","b","c","d","e"])"),
       "'stop' must be a string or an array of up to 4", "stop"},
      {chatBody(R"("stop": "")"), "each 'stop' string must have 1 to 256",
       "stop"},
      {chatBody(R"("stream_options": {"include_usage": true})"),
       "'stream_options' is only allowed when 'stream' is true",
       "stream_options"},
      {chatBody(R"("n": 2)"), "'n' is not supported by this server", "n"},
      {chatBody(R"("presence_penalty": 0.5)"),
       "'presence_penalty' is not supported", "presence_penalty"},
      {chatBody(R"("tools": [{"type": "function"}])"),
       "'tools' is not supported", "tools"},
      {R"({"model": "m", "messages": [{"role": "robot", "content": "x"}]})",
       "'messages[0].role' must be one of", "messages[0].role"},
      {R"({"model": "m", "messages": [{"role": "user", "content": 5}]})",
       "'messages[0].content' must be a string or an array of text parts",
       "messages[0].content"},
  };
  for (const Case &c : cases) {
    ApiError e;
    EXPECT_FALSE(chat(c.body, e)) << c.body;
    EXPECT_EQ(e.status, 400) << c.body;
    EXPECT_NE(e.message.find(c.message), std::string::npos)
        << c.body << " -> " << e.message;
    EXPECT_EQ(e.param, c.param) << c.body;
  }
}

TEST(OpenAIRequestTest, CompletionPrompts) {
  ApiError e;
  auto r = parseCompletionRequest(R"({"model": "m", "prompt": "abc"})",
                                  RequestKind::Completion, e);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->prompt, "abc");
  r = parseCompletionRequest(R"({"model": "m", "prompt": [1, 2, 3]})",
                             RequestKind::Completion, e);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->promptIsIds);
  EXPECT_EQ(r->promptIds, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_FALSE(parseCompletionRequest(R"({"model": "m", "prompt": ["a", "b"]})",
                                      RequestKind::Completion, e));
  EXPECT_EQ(e.param, "prompt");
  // A chat's fields are not a completion's.
  EXPECT_FALSE(
      parseCompletionRequest(R"({"model": "m", "prompt": "a", "messages": []})",
                             RequestKind::Completion, e));
  EXPECT_EQ(e.message, "Unrecognized request argument supplied: messages");
  EXPECT_FALSE(
      parseCompletionRequest(R"({"model": "m", "prompt": "a", "echo": true})",
                             RequestKind::Completion, e));
  EXPECT_EQ(e.param, "echo");
}

TEST(OpenAIRequestTest, EmbeddingInputs) {
  ApiError e;
  auto r = parseEmbeddingRequest(R"({"model": "m", "input": "a"})", e);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->texts, std::vector<std::string>{"a"});
  r = parseEmbeddingRequest(
      R"({"model": "m", "input": ["a", "b"], "encoding_format": "base64"})", e);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->texts.size(), 2u);
  EXPECT_TRUE(r->base64);
  r = parseEmbeddingRequest(R"({"model": "m", "input": [[1, 2], [3]]})", e);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->inputIsIds);
  EXPECT_EQ(r->ids.size(), 2u);
  for (const char *bad :
       {R"({"model": "m", "input": []})", R"({"model": "m", "input": [""]})",
        R"({"model": "m", "input": [[1], "a"]})",
        R"({"model": "m", "input": [-1]})"}) {
    EXPECT_FALSE(parseEmbeddingRequest(bad, e)) << bad;
    EXPECT_EQ(e.param, "input") << bad;
  }
  EXPECT_FALSE(parseEmbeddingRequest(
      R"({"model": "m", "input": "a", "encoding_format": "int8"})", e));
  EXPECT_EQ(e.param, "encoding_format");
}

TEST(OpenAIResponseTest, Shapes) {
  ResponseHeader h{RequestKind::Chat, "chatcmpl-1", "m", 7};
  Json j = Json::parse(completionBody(h, "hé", "stop", {3, 2}));
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["choices"][0]["message"]["content"], "hé");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(j["usage"]["total_tokens"], 5);
  std::string text = "x", why = "length";
  std::string event = chunkEvent(h, nullptr, nullptr, true, true);
  ASSERT_EQ(event.rfind("data: ", 0), 0u);
  ASSERT_EQ(event.substr(event.size() - 2), "\n\n");
  j = Json::parse(event.substr(6));
  EXPECT_EQ(j["object"], "chat.completion.chunk");
  EXPECT_EQ(j["choices"][0]["delta"]["role"], "assistant");
  EXPECT_TRUE(j["usage"].is_null());
  j = Json::parse(chunkEvent(h, &text, &why, false, false).substr(6));
  EXPECT_EQ(j["choices"][0]["delta"]["content"], "x");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_FALSE(j.contains("usage"));
  j = Json::parse(usageEvent(h, {1, 1}).substr(6));
  EXPECT_TRUE(j["choices"].empty());
  EXPECT_EQ(j["usage"]["completion_tokens"], 1);
  j = Json::parse(
      ApiError(404, "gone", "model", "invalid_request_error", "model_not_found")
          .body());
  EXPECT_EQ(j["error"]["code"], "model_not_found");
  j = Json::parse(ApiError::badRequest("bad").body());
  EXPECT_TRUE(j["error"]["param"].is_null() && j["error"]["code"].is_null());
  // base64 embeddings: the float32 little-endian bytes.
  j = Json::parse(embeddingsBody("m", {1.0f, -2.0f}, 2, 1, true, 4));
  EXPECT_EQ(j["data"][0]["embedding"], "AACAPwAAAMA=");
  j = Json::parse(embeddingsBody("m", {1.0f, -2.0f}, 1, 2, false, 4));
  EXPECT_EQ(j["data"][1]["embedding"][0], -2.0);
  EXPECT_EQ(j["usage"]["prompt_tokens"], 4);
  EXPECT_EQ(newResponseId("cmpl-").size(), 5u + 24u);
}
