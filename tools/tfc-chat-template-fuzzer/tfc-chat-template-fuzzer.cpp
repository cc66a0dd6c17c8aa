//===- tfc-chat-template-fuzzer.cpp - Fuzzing chat templates --------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// libFuzzer target of ChatTemplate: the input is a template. It is parsed
// and, if it parses, rendered against a conversation with system, user,
// assistant and tool messages, tool calls and tools (lower work and output
// limits than the defaults, so that each input is fast), and asked for its
// assistant suffix. Promises beyond "no crash, no sanitizer report, no
// leak, no timeout": every failure has a message; a rendering fits the
// output limit; rendering twice gives the same text or the same error.
//
//===----------------------------------------------------------------------===//

#include "tfc/Text/Jinja/ChatTemplate.h"

#include <cstdint>
#include <cstdio>
#include <string>

using namespace tfc::rt;

namespace {

const char *const kContext = R"({
  "messages": [
    {"role": "system", "content": "You are brief."},
    {"role": "user", "content": "Hi \u00e9 \ud83d\ude00\n"},
    {"role": "assistant", "content": " Hello ",
     "tool_calls": [{"type": "function",
                     "function": {"name": "f", "arguments": {"x": 1.5}}}]},
    {"role": "tool", "content": "42"},
    {"role": "user", "content": ""}],
  "tools": [{"type": "function", "function": {"name": "f",
             "parameters": {"type": "object", "properties": {}}}}],
  "add_generation_prompt": true})";

[[noreturn]] void broken(const char *promise) {
  std::fprintf(stderr, "broken promise: %s\n", promise);
  __builtin_trap();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string source(reinterpret_cast<const char *>(data), size);
  std::string error, out, again, error2;
  std::unique_ptr<ChatTemplate> t = ChatTemplate::parse(source, error);
  if (!t) {
    if (error.empty())
      broken("a parse failure has a message");
    return 0;
  }
  ChatTemplateLimits limits;
  limits.maxWork = 200'000;
  limits.maxOutput = 1 << 20;
  t->setLimits(limits);
  t->setSpecialTokens("<s>", "</s>");
  bool ok = t->renderJson(kContext, out, error);
  if (!ok && error.empty())
    broken("a render failure has a message");
  if (ok && out.size() > limits.maxOutput)
    broken("the output fits the limit");
  bool ok2 = t->renderJson(kContext, again, error2);
  if (ok != ok2 || (ok && out != again) || (!ok && error != error2))
    broken("rendering is deterministic");
  (void)t->render({{"user", "x"}}, false, out, error);
  (void)t->assistantSuffix();
  return 0;
}
