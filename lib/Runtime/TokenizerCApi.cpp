//===- TokenizerCApi.cpp - The tokenizer functions of tfc.h ---------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Thin wrappers over Tokenizer.h: argument checks, the thread's last error,
// the two-call pattern for sizes, and a guard that turns exceptions into a
// status so that none crosses the C boundary.
//
//===----------------------------------------------------------------------===//

#include "Model.h"
#include "TokenizerHandle.h"

#include "tfc/Text/Tokenizer/Tokenizer.h"
#include "tfc/Text/Tokenizer/TokenizerSource.h"

#include <cerrno>
#include <cstring>
#include <new>
#include <sys/stat.h>

using namespace tfc::rt;

struct tfc_decode_stream {
  IncrementalDecoder decoder;
  std::string text;
  tfc_decode_stream(const Tokenizer &t, bool skip) : decoder(t, skip) {}
};

namespace {

tfc_status invalid(const char *message) {
  return setError(TFC_ERR_INVALID_ARGUMENT, message);
}

tfc_status encodeInto(const tfc_tokenizer *tok, const char *text, size_t len,
                      int addSpecial, int64_t *ids, int64_t *typeIds,
                      int64_t *mask, size_t cap, size_t *n) {
  if (!tok)
    return invalid("the tokenizer is NULL");
  if (!n)
    return invalid("n_out is NULL");
  if (!text && len)
    return invalid("the text is NULL");
  Encoding e;
  std::string error;
  if (!tok->tokenizer->encode(std::string_view(text ? text : "", len),
                              addSpecial != 0, e, error))
    return setError(TFC_ERR_INPUT, error);
  *n = e.ids.size();
  if (!ids && !typeIds && !mask)
    return TFC_OK;
  if (cap < e.ids.size())
    return setError(TFC_ERR_INVALID_ARGUMENT, "the output arrays hold " +
                                                  std::to_string(cap) +
                                                  " ids, the encoding has " +
                                                  std::to_string(e.ids.size()));
  size_t bytes = e.ids.size() * sizeof(int64_t);
  if (bytes) {
    if (ids)
      std::memcpy(ids, e.ids.data(), bytes);
    if (typeIds)
      std::memcpy(typeIds, e.typeIds.data(), bytes);
    if (mask)
      std::memcpy(mask, e.attentionMask.data(), bytes);
  }
  return TFC_OK;
}

/// The tokenizer's padding: the file's, else right padding with the id of
/// "[PAD]" or "<pad>", else 0.
PaddingParams paddingOf(const Tokenizer &t) {
  if (t.padding())
    return *t.padding();
  PaddingParams p;
  for (const char *name : {"[PAD]", "<pad>"})
    if (std::optional<int64_t> id = t.tokenToId(name)) {
      p.padId = *id;
      p.padToken = name;
      break;
    }
  return p;
}

tfc_status streamText(tfc_decode_stream *s, const char **text, size_t *len) {
  *text = s->text.c_str();
  if (len)
    *len = s->text.size();
  return TFC_OK;
}

} // namespace

extern "C" {

tfc_status tfc_tokenizer_load(const char *path, tfc_tokenizer **out) {
  return guarded([&] {
    if (!out)
      return invalid("out is NULL");
    *out = nullptr;
    if (!path)
      return invalid("the path is NULL");
    struct stat st;
    if (::stat(path, &st) != 0)
      return setError(TFC_ERR_IO, std::string(path) +
                                      ": cannot open: " + std::strerror(errno));
    std::string error;
    std::unique_ptr<Tokenizer> t = openTokenizer(path, error);
    if (!t)
      return setError(S_ISDIR(st.st_mode) &&
                              error.find("without tokenizer.json") !=
                                  std::string::npos
                          ? TFC_ERR_IO
                          : TFC_ERR_INVALID_MODEL,
                      error);
    *out = new tfc_tokenizer{std::move(t)};
    return TFC_OK;
  });
}

void tfc_tokenizer_free(tfc_tokenizer *tokenizer) { delete tokenizer; }

tfc_status tfc_tokenizer_encode(const tfc_tokenizer *tokenizer,
                                const char *text, size_t len,
                                int add_special_tokens, int64_t *ids_out,
                                size_t cap, size_t *n_out) {
  return guarded([&] {
    return encodeInto(tokenizer, text, len, add_special_tokens, ids_out,
                      nullptr, nullptr, cap, n_out);
  });
}

tfc_status tfc_tokenizer_encode_with_masks(
    const tfc_tokenizer *tokenizer, const char *text, size_t len,
    int add_special_tokens, int64_t *ids_out, int64_t *type_ids_out,
    int64_t *attention_mask_out, size_t cap, size_t *n_out) {
  return guarded([&] {
    return encodeInto(tokenizer, text, len, add_special_tokens, ids_out,
                      type_ids_out, attention_mask_out, cap, n_out);
  });
}

tfc_status tfc_tokenizer_decode(const tfc_tokenizer *tokenizer,
                                const int64_t *ids, size_t n,
                                int skip_special_tokens, char *text_out,
                                size_t cap, size_t *len_out) {
  return guarded([&] {
    if (!tokenizer)
      return invalid("the tokenizer is NULL");
    if (!len_out)
      return invalid("len_out is NULL");
    if (!ids && n)
      return invalid("the ids are NULL");
    std::vector<int64_t> list(ids, ids + n);
    std::string text, error;
    if (!tokenizer->tokenizer->decode(list, skip_special_tokens != 0, text,
                                      error))
      return setError(TFC_ERR_INPUT, error);
    *len_out = text.size();
    if (!text_out)
      return TFC_OK;
    if (cap < text.size() + 1)
      return setError(TFC_ERR_INVALID_ARGUMENT,
                      "the text buffer holds " + std::to_string(cap) +
                          " bytes, the text needs " +
                          std::to_string(text.size() + 1) + " with its NUL");
    std::memcpy(text_out, text.c_str(), text.size() + 1);
    return TFC_OK;
  });
}

tfc_status tfc_tokenizer_token_to_id(const tfc_tokenizer *tokenizer,
                                     const char *token, int64_t *id_out) {
  return guarded([&] {
    if (!tokenizer || !token || !id_out)
      return invalid("the tokenizer, the token or id_out is NULL");
    std::optional<int64_t> id = tokenizer->tokenizer->tokenToId(token);
    if (!id)
      return setError(TFC_ERR_INVALID_ARGUMENT,
                      std::string("the token \"") + token +
                          "\" is not in the vocabulary");
    *id_out = *id;
    return TFC_OK;
  });
}

tfc_status tfc_tokenizer_id_to_token(const tfc_tokenizer *tokenizer, int64_t id,
                                     const char **token_out, size_t *len_out) {
  return guarded([&] {
    if (!tokenizer || !token_out)
      return invalid("the tokenizer or token_out is NULL");
    const std::string *token = tokenizer->tokenizer->tokenText(id);
    if (!token)
      return setError(
          TFC_ERR_INVALID_ARGUMENT,
          "the id " + std::to_string(id) + " is not in the vocabulary (" +
              std::to_string(tokenizer->tokenizer->vocabSize()) + " ids)");
    *token_out = token->c_str();
    if (len_out)
      *len_out = token->size();
    return TFC_OK;
  });
}

size_t tfc_tokenizer_vocab_size(const tfc_tokenizer *tokenizer) {
  return tokenizer ? tokenizer->tokenizer->vocabSize() : 0;
}

tfc_status tfc_tokenizer_set_truncation(tfc_tokenizer *tokenizer,
                                        size_t max_length) {
  return guarded([&] {
    if (!tokenizer)
      return invalid("the tokenizer is NULL");
    if (max_length == 0) {
      tokenizer->tokenizer->setTruncation(std::nullopt);
    } else {
      TruncationParams p;
      p.maxLength = max_length;
      tokenizer->tokenizer->setTruncation(p);
    }
    return TFC_OK;
  });
}

tfc_status tfc_tokenizer_set_padding(tfc_tokenizer *tokenizer, size_t length) {
  return guarded([&] {
    if (!tokenizer)
      return invalid("the tokenizer is NULL");
    Tokenizer &t = *tokenizer->tokenizer;
    if (length == 0) {
      t.setPadding(std::nullopt);
      return TFC_OK;
    }
    if (length > kMaxPadding)
      return setError(TFC_ERR_INVALID_ARGUMENT,
                      "padding to " + std::to_string(length) +
                          " ids: at most " + std::to_string(kMaxPadding));
    PaddingParams p = paddingOf(t);
    p.strategy = PaddingParams::Strategy::Fixed;
    p.length = length;
    t.setPadding(p);
    return TFC_OK;
  });
}

tfc_status tfc_tokenizer_pad_ids(const tfc_tokenizer *tokenizer,
                                 int64_t *pad_id, int64_t *pad_type_id,
                                 int *left) {
  return guarded([&] {
    if (!tokenizer)
      return invalid("the tokenizer is NULL");
    PaddingParams p = paddingOf(*tokenizer->tokenizer);
    if (pad_id)
      *pad_id = p.padId;
    if (pad_type_id)
      *pad_type_id = p.padTypeId;
    if (left)
      *left = p.direction == PaddingParams::Direction::Left;
    return TFC_OK;
  });
}

tfc_status tfc_decode_stream_create(const tfc_tokenizer *tokenizer,
                                    int skip_special_tokens,
                                    tfc_decode_stream **out) {
  return guarded([&] {
    if (!out)
      return invalid("out is NULL");
    *out = nullptr;
    if (!tokenizer)
      return invalid("the tokenizer is NULL");
    *out =
        new tfc_decode_stream(*tokenizer->tokenizer, skip_special_tokens != 0);
    return TFC_OK;
  });
}

tfc_status tfc_decode_stream_feed(tfc_decode_stream *stream, int64_t id,
                                  const char **text_out, size_t *len_out) {
  return guarded([&] {
    if (!stream || !text_out)
      return invalid("the stream or text_out is NULL");
    stream->text.clear();
    std::string error;
    if (!stream->decoder.feed(id, stream->text, error)) {
      stream->text.clear();
      *text_out = stream->text.c_str();
      if (len_out)
        *len_out = 0;
      return setError(TFC_ERR_INPUT, error);
    }
    return streamText(stream, text_out, len_out);
  });
}

tfc_status tfc_decode_stream_finish(tfc_decode_stream *stream,
                                    const char **text_out, size_t *len_out) {
  return guarded([&] {
    if (!stream || !text_out)
      return invalid("the stream or text_out is NULL");
    stream->text.clear();
    std::string error;
    if (!stream->decoder.finish(stream->text, error))
      return setError(TFC_ERR_INPUT, error);
    return streamText(stream, text_out, len_out);
  });
}

void tfc_decode_stream_free(tfc_decode_stream *stream) { delete stream; }

} // extern "C"
