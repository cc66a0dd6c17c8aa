//===- ChatTemplate.cpp - Hugging Face chat templates ---------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// ChatTemplate.h over the Jinja engine (Jinja.h): parsing a template with
// its errors at line:col, rendering messages or a JSON context with the
// checkpoint's special tokens.
//
//===----------------------------------------------------------------------===//

#include "Jinja.h"

#include "tfc/Formats/JsonDocument.h"

#include <algorithm>
#include <new>

using namespace tfc::rt;
using namespace tfc::rt::jinja;

//===----------------------------------------------------------------------===//
// ChatTemplate
//===----------------------------------------------------------------------===//

struct ChatTemplate::Impl {
  std::string source;     // as given
  std::string normalized; // what offsets refer to
  std::string name;
  Body body;
  std::optional<std::string> bos, eos;
  ChatTemplateLimits limits;

  std::string where(size_t offset) const {
    size_t line = 1, col = 1;
    for (size_t k = 0; k < offset && k < normalized.size(); ++k) {
      if (normalized[k] == '\n') {
        ++line;
        col = 1;
      } else if ((static_cast<unsigned char>(normalized[k]) & 0xC0) != 0x80) {
        ++col;
      }
    }
    return std::to_string(line) + ":" + std::to_string(col);
  }

  bool render(std::vector<std::pair<std::string, Value>> vars, std::string &out,
              std::string &error) const {
    out.clear();
    auto has = [&](const char *name) {
      for (const auto &kv : vars)
        if (kv.first == name)
          return true;
      return false;
    };
    if (bos && !has("bos_token"))
      vars.emplace_back("bos_token", Value::str(*bos));
    if (eos && !has("eos_token"))
      vars.emplace_back("eos_token", Value::str(*eos));
    try {
      jinja::render(body, limits, std::move(vars), out);
      return true;
    } catch (const TemplateError &e) {
      out.clear();
      error = name + ":" + where(e.offset) + ": " + e.message;
    } catch (const std::bad_alloc &) {
      out.clear();
      error = name + ": out of memory while rendering";
    }
    return false;
  }
};

ChatTemplate::ChatTemplate(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
ChatTemplate::~ChatTemplate() = default;

std::unique_ptr<ChatTemplate> ChatTemplate::parse(std::string_view source,
                                                  std::string &error,
                                                  const std::string &name) {
  auto impl = std::make_unique<Impl>();
  impl->source = std::string(source);
  impl->normalized = normalizeSource(source);
  impl->name = name;
  try {
    const Impl *ip = impl.get();
    impl->body = jinja::parse(lex(impl->normalized), [ip](size_t offset) {
      return ip->where(offset);
    });
  } catch (const TemplateError &e) {
    error = name + ":" + impl->where(e.offset) + ": " + e.message;
    return nullptr;
  }
  return std::unique_ptr<ChatTemplate>(new ChatTemplate(std::move(impl)));
}

void ChatTemplate::setSpecialTokens(std::string bos, std::string eos) {
  impl_->bos.reset();
  impl_->eos.reset();
  if (!bos.empty())
    impl_->bos = std::move(bos);
  if (!eos.empty())
    impl_->eos = std::move(eos);
}

void ChatTemplate::setLimits(const ChatTemplateLimits &limits) {
  impl_->limits = limits;
}

const std::string &ChatTemplate::source() const { return impl_->source; }

bool ChatTemplate::render(const std::vector<ChatMessage> &messages,
                          bool addGenerationPrompt, std::string &out,
                          std::string &error) const {
  ValueList list;
  for (const ChatMessage &m : messages)
    list.push_back(makeDict(
        {{"role", Value::str(m.role)}, {"content", Value::str(m.content)}}, 0));
  std::vector<std::pair<std::string, Value>> vars;
  vars.emplace_back("messages", makeList(std::move(list), 0));
  vars.emplace_back("add_generation_prompt",
                    Value::boolean(addGenerationPrompt));
  return impl_->render(std::move(vars), out, error);
}

bool ChatTemplate::renderJson(std::string_view contextJson, std::string &out,
                              std::string &error) const {
  ojson j;
  if (!::tfc::rt::parseJsonDocument(contextJson, "the chat context", j, error))
    return false;
  if (!j.is_object()) {
    error = "the chat context must be a JSON object";
    return false;
  }
  std::vector<std::pair<std::string, Value>> vars;
  try {
    for (auto it = j.begin(); it != j.end(); ++it)
      vars.emplace_back(it.key(), fromJson(it.value(), 1));
  } catch (const TemplateError &e) {
    error = e.message;
    return false;
  }
  return impl_->render(std::move(vars), out, error);
}

std::string ChatTemplate::assistantSuffix() const {
  static const char *const kMarker = "tfc-assistant-marker-5d1c";
  std::vector<std::vector<ChatMessage>> tries = {
      {{"user", "tfc-user-marker-5d1c"}, {"assistant", kMarker}},
      {{"system", "tfc-system-marker-5d1c"},
       {"user", "tfc-user-marker-5d1c"},
       {"assistant", kMarker}}};
  for (const auto &messages : tries) {
    std::string out, error;
    if (!render(messages, false, out, error))
      continue;
    size_t at = out.find(kMarker);
    if (at != std::string::npos)
      return out.substr(at + std::strlen(kMarker));
  }
  return "";
}
