//===- ChatTemplateCApi.cpp - The chat-template functions of tfc.h --------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Thin wrappers over ChatTemplate.h and TokenizerSource.h for callers of the
// C API (the Python package, servers): a checkpoint's chat template rendered
// from JSON, the ids that end an assistant turn, and the ids that end a
// generation when the caller names none. Argument checks, the thread's last
// error and the two-call pattern for sizes, as for the tokenizer.
//
//===----------------------------------------------------------------------===//

#include "Model.h"
#include "TokenizerHandle.h"

#include "tfc/Text/Jinja/ChatTemplate.h"
#include "tfc/Text/Tokenizer/TokenizerSource.h"

#include <cerrno>
#include <cstring>
#include <sys/stat.h>

using namespace tfc::rt;

struct tfc_chat_template {
  std::unique_ptr<ChatTemplate> tpl;
  /// The template's eos_token, for its end-of-turn ids.
  std::string eos;
};

namespace {

tfc_status invalid(const std::string &message) {
  return setError(TFC_ERR_INVALID_ARGUMENT, message);
}

/// Copies ids into ids_out[0 .. cap) with the two-call pattern.
tfc_status giveIds(const std::vector<int64_t> &ids, int64_t *out, size_t cap,
                   size_t *n) {
  *n = ids.size();
  if (!out)
    return TFC_OK;
  if (cap < ids.size())
    return invalid("ids_out holds " + std::to_string(cap) + " ids, " +
                   std::to_string(ids.size()) + " are needed");
  std::copy(ids.begin(), ids.end(), out);
  return TFC_OK;
}

} // namespace

extern "C" {

tfc_status tfc_chat_template_load(const char *checkpoint_path,
                                  tfc_chat_template **out) {
  return guarded([&] {
    if (!out)
      return invalid("out is NULL");
    *out = nullptr;
    if (!checkpoint_path)
      return invalid("the path is NULL");
    struct stat st;
    if (::stat(checkpoint_path, &st) != 0)
      return setError(TFC_ERR_IO, std::string(checkpoint_path) +
                                      ": cannot open: " + std::strerror(errno));
    ChatTemplateSource source;
    std::string error;
    if (!readChatTemplate(checkpoint_path, source, error))
      return setError(TFC_ERR_INVALID_MODEL, error);
    std::unique_ptr<ChatTemplate> tpl =
        ChatTemplate::parse(source.text, error, source.origin);
    if (!tpl)
      return setError(TFC_ERR_INVALID_MODEL, error);
    tpl->setSpecialTokens(source.bos, source.eos);
    *out = new tfc_chat_template{std::move(tpl), source.eos};
    return TFC_OK;
  });
}

tfc_status tfc_chat_template_parse(const char *source, const char *bos_token,
                                   const char *eos_token,
                                   tfc_chat_template **out) {
  return guarded([&] {
    if (!out)
      return invalid("out is NULL");
    *out = nullptr;
    if (!source)
      return invalid("the template source is NULL");
    std::string error;
    std::unique_ptr<ChatTemplate> tpl = ChatTemplate::parse(source, error);
    if (!tpl)
      return setError(TFC_ERR_INPUT, error);
    std::string eos = eos_token ? eos_token : "";
    tpl->setSpecialTokens(bos_token ? bos_token : "", eos);
    *out = new tfc_chat_template{std::move(tpl), eos};
    return TFC_OK;
  });
}

void tfc_chat_template_free(tfc_chat_template *tmpl) { delete tmpl; }

tfc_status tfc_chat_template_render(const tfc_chat_template *tmpl,
                                    const char *context_json, char *text_out,
                                    size_t cap, size_t *len_out) {
  return guarded([&] {
    if (!tmpl)
      return invalid("the chat template is NULL");
    if (!context_json)
      return invalid("context_json is NULL");
    if (!len_out)
      return invalid("len_out is NULL");
    std::string text, error;
    if (!tmpl->tpl->renderJson(context_json, text, error))
      return setError(TFC_ERR_INPUT, error);
    *len_out = text.size();
    if (!text_out)
      return TFC_OK;
    if (cap < text.size() + 1)
      return invalid("text_out holds " + std::to_string(cap) +
                     " bytes, the text needs " +
                     std::to_string(text.size() + 1));
    std::memcpy(text_out, text.c_str(), text.size() + 1);
    return TFC_OK;
  });
}

tfc_status tfc_chat_template_stop_ids(const tfc_chat_template *tmpl,
                                      const tfc_tokenizer *tokenizer,
                                      int64_t *ids_out, size_t cap,
                                      size_t *n_out) {
  return guarded([&] {
    if (!tmpl || !tokenizer || !n_out)
      return invalid(std::string(!tmpl        ? "the chat template"
                                 : !tokenizer ? "the tokenizer"
                                              : "n_out") +
                     " is NULL");
    return giveIds(endOfTurnIds(*tmpl->tpl, tmpl->eos, *tokenizer->tokenizer),
                   ids_out, cap, n_out);
  });
}

tfc_status tfc_checkpoint_eos_ids(const char *path,
                                  const tfc_tokenizer *tokenizer,
                                  int64_t *ids_out, size_t cap, size_t *n_out) {
  return guarded([&] {
    if (!n_out)
      return invalid("n_out is NULL");
    std::vector<int64_t> ids;
    std::string error;
    if (!defaultEndOfSequenceIds(
            {path ? path : ""},
            tokenizer ? tokenizer->tokenizer.get() : nullptr, ids, error))
      return setError(TFC_ERR_INVALID_MODEL, error);
    return giveIds(ids, ids_out, cap, n_out);
  });
}

} // extern "C"

std::vector<int64_t> tfc::rt::endOfTurnIds(const ChatTemplate &tpl,
                                           const std::string &eosToken,
                                           const Tokenizer &tokenizer) {
  std::vector<int64_t> ids;
  if (!eosToken.empty())
    if (std::optional<int64_t> id = tokenizer.tokenToId(eosToken))
      ids.push_back(*id);
  std::string suffix = tpl.assistantSuffix(), error;
  Encoding enc;
  if (!suffix.empty() &&
      tokenizer.encode(suffix, /*addSpecialTokens=*/false, enc, error) &&
      !enc.ids.empty() && tokenizer.isSpecial(enc.ids[0]) &&
      std::find(ids.begin(), ids.end(), enc.ids[0]) == ids.end())
    ids.push_back(enc.ids[0]);
  return ids;
}
