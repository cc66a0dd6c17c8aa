//===- TokenizerDecode.cpp - Ids back to text -----------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Decoding maps ids to their token strings (an added token's normalized
// form, as Hugging Face's decode does), drops special tokens on request, and
// runs the decoder chain: ByteLevel (bytes back, ill-formed UTF-8 becomes
// U+FFFD), WordPiece ("##" joins, BERT's cleanup of spaces before
// punctuation), Metaspace, Replace, ByteFallback, Fuse, Strip, BPEDecoder.
// The incremental decoder emits the text of a stream of ids as it becomes
// final.
//
//===----------------------------------------------------------------------===//

#include "TokenizerInternal.h"

using namespace tfc::rt;
using namespace tfc::rt::tok;

Decoder::~Decoder() = default;

bool ByteLevelDecoder::decodeChain(std::vector<std::string> &tokens,
                                   std::string &) const {
  std::string bytes;
  for (const std::string &t : tokens) {
    size_t mark = bytes.size();
    bool all = true;
    for (size_t i = 0; i < t.size() && all;) {
      int b = charToByte(nextChar(t, i));
      if (b < 0)
        all = false;
      else
        bytes += static_cast<char>(b);
    }
    // A token outside the byte alphabet (an added token) stays as it is.
    if (!all) {
      bytes.resize(mark);
      bytes += t;
    }
  }
  tokens.assign(1, lossyUtf8(bytes));
  return true;
}

namespace {

void replaceAll(std::string &s, std::string_view from, std::string_view to) {
  if (s.find(from) == std::string::npos)
    return;
  std::string out;
  size_t last = 0;
  for (size_t at = s.find(from); at != std::string::npos;
       at = s.find(from, last)) {
    out.append(s, last, at - last);
    out += to;
    last = at + from.size();
  }
  out.append(s, last, std::string::npos);
  s = std::move(out);
}

} // namespace

bool WordPieceDecoder::decodeChain(std::vector<std::string> &tokens,
                                   std::string &) const {
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::string &t = tokens[i];
    if (i != 0) {
      if (t.compare(0, prefix.size(), prefix) == 0)
        t.erase(0, prefix.size());
      else
        t.insert(0, " ");
    }
    if (cleanup) {
      // BERT's clean_up_tokenization, in its order.
      static const std::pair<const char *, const char *> kRules[] = {
          {" .", "."},   {" ?", "?"},     {" !", "!"},    {" ,", ","},
          {" ' ", "'"},  {" n't", "n't"}, {" 'm", "'m"},  {" do not", " don't"},
          {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
      for (const auto &[from, to] : kRules)
        replaceAll(t, from, to);
    }
  }
  return true;
}

bool MetaspaceDecoder::decodeChain(std::vector<std::string> &tokens,
                                   std::string &) const {
  for (size_t k = 0; k < tokens.size(); ++k) {
    std::string out;
    const std::string &t = tokens[k];
    for (size_t i = 0; i < t.size();) {
      size_t begin = i;
      uint32_t cp = nextChar(t, i);
      if (cp != replacement)
        out.append(t, begin, i - begin);
      else if (k != 0 || prependScheme == PrependScheme::Never)
        out += ' ';
    }
    tokens[k] = std::move(out);
  }
  return true;
}

bool ReplaceDecoder::decodeChain(std::vector<std::string> &tokens,
                                 std::string &error) const {
  std::vector<std::pair<size_t, size_t>> matches;
  for (std::string &t : tokens) {
    matches.clear();
    if (!pattern->findAll(t, matches, error))
      return false;
    if (matches.empty())
      continue;
    std::string out;
    size_t last = 0;
    for (auto [begin, end] : matches) {
      out.append(t, last, begin - last);
      out += content;
      last = end;
    }
    out.append(t, last, std::string::npos);
    t = std::move(out);
  }
  return true;
}

bool ByteFallbackDecoder::decodeChain(std::vector<std::string> &tokens,
                                      std::string &) const {
  std::vector<std::string> out;
  std::string pending;
  auto flush = [&] {
    if (pending.empty())
      return;
    if (findInvalidUtf8(pending) == std::string::npos) {
      out.push_back(pending);
    } else {
      // One U+FFFD per byte of an ill-formed run.
      for (size_t k = 0; k < pending.size(); ++k)
        out.push_back("\xEF\xBF\xBD");
    }
    pending.clear();
  };
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9')
      return c - '0';
    if (c >= 'A' && c <= 'F')
      return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    return -1;
  };
  for (std::string &t : tokens) {
    if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>' &&
        hex(t[3]) >= 0 && hex(t[4]) >= 0) {
      pending += static_cast<char>(hex(t[3]) * 16 + hex(t[4]));
      continue;
    }
    flush();
    out.push_back(std::move(t));
  }
  flush();
  tokens = std::move(out);
  return true;
}

bool FuseDecoder::decodeChain(std::vector<std::string> &tokens,
                              std::string &) const {
  std::string joined;
  for (const std::string &t : tokens)
    joined += t;
  tokens.assign(1, std::move(joined));
  return true;
}

bool StripDecoder::decodeChain(std::vector<std::string> &tokens,
                               std::string &) const {
  for (std::string &t : tokens) {
    std::vector<std::pair<size_t, uint32_t>> chars; // offset, code point
    for (size_t i = 0; i < t.size();) {
      size_t begin = i;
      chars.emplace_back(begin, nextChar(t, i));
    }
    size_t startCut = 0;
    for (size_t k = 0; k < start && k < chars.size(); ++k) {
      if (chars[k].second != content)
        break;
      startCut = k + 1;
    }
    size_t stopCut = chars.size();
    for (size_t k = 0; k < stop && k < chars.size(); ++k) {
      size_t index = chars.size() - k - 1;
      if (chars[index].second != content)
        break;
      stopCut = index;
    }
    if (stopCut <= startCut) {
      t.clear();
      continue;
    }
    size_t b = startCut < chars.size() ? chars[startCut].first : t.size();
    size_t e = stopCut < chars.size() ? chars[stopCut].first : t.size();
    t = t.substr(b, e - b);
  }
  return true;
}

bool BpeSuffixDecoder::decodeChain(std::vector<std::string> &tokens,
                                   std::string &) const {
  for (size_t k = 0; k < tokens.size(); ++k)
    if (!suffix.empty())
      replaceAll(tokens[k], suffix, k + 1 == tokens.size() ? "" : " ");
  return true;
}

bool SequenceDecoder::decodeChain(std::vector<std::string> &tokens,
                                  std::string &error) const {
  for (const auto &d : decoders)
    if (!d->decodeChain(tokens, error))
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Tokenizer::decode and the incremental decoder
//===----------------------------------------------------------------------===//

bool Tokenizer::decode(const std::vector<int64_t> &ids, bool skipSpecialTokens,
                       std::string &out, std::string &error) const {
  const Impl &impl = *impl_;
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (size_t k = 0; k < ids.size(); ++k) {
    int64_t id = ids[k];
    const std::string *text = impl.added.decodeText(id);
    if (!text)
      text = impl.model->vocab().token(id);
    if (!text) {
      error = "decode: id " + std::to_string(id) + " (at index " +
              std::to_string(k) + ") is not in the vocabulary (ids 0 to " +
              std::to_string(impl.idLimit() - 1) + ")";
      return false;
    }
    if (skipSpecialTokens && impl.added.isSpecialContent(*text))
      continue;
    tokens.push_back(*text);
  }
  out.clear();
  if (impl.decoder) {
    if (!impl.decoder->decodeChain(tokens, error))
      return false;
    for (const std::string &t : tokens)
      out += t;
    return true;
  }
  for (size_t k = 0; k < tokens.size(); ++k) {
    if (k)
      out += ' ';
    out += tokens[k];
  }
  return true;
}

IncrementalDecoder::IncrementalDecoder(const Tokenizer &tokenizer,
                                       bool skipSpecialTokens)
    : tokenizer(tokenizer), skipSpecialTokens(skipSpecialTokens) {}

namespace {
bool endsWithReplacement(const std::string &s) {
  return s.size() >= 3 && s.compare(s.size() - 3, 3, "\xEF\xBF\xBD") == 0;
}
} // namespace

bool IncrementalDecoder::feed(int64_t id, std::string &out,
                              std::string &error) {
  // Hugging Face's DecodeStream: `prefix` is the text of ids[..prefixIndex]
  // already emitted; decode the window and emit what follows it once it
  // does not end in an incomplete character.
  if (!tokenizer.idToToken(id)) {
    error = "decode: id " + std::to_string(id) +
            " is not in the vocabulary (ids 0 to " +
            std::to_string(tokenizer.vocabSize() - 1) + ")";
    return false;
  }
  if (prefix.empty() && !ids.empty()) {
    std::string text;
    if (!tokenizer.decode(ids, skipSpecialTokens, text, error))
      return false;
    if (!endsWithReplacement(text)) {
      prefix = std::move(text);
      prefixIndex = ids.size();
    }
  }
  ids.push_back(id);
  std::string text;
  if (!tokenizer.decode(ids, skipSpecialTokens, text, error)) {
    ids.pop_back();
    return false;
  }
  if (text.size() > prefix.size() && !endsWithReplacement(text)) {
    if (text.compare(0, prefix.size(), prefix) != 0) {
      error = "decode: the text of the stream changed before id " +
              std::to_string(id) + " (the decoder rewrites earlier text)";
      return false;
    }
    out.append(text, prefix.size(), std::string::npos);
    ids.erase(ids.begin(), ids.begin() + static_cast<ptrdiff_t>(prefixIndex));
    if (!tokenizer.decode(ids, skipSpecialTokens, prefix, error))
      return false;
    prefixIndex = ids.size();
  }
  return true;
}

bool IncrementalDecoder::finish(std::string &out, std::string &error) {
  std::string text;
  if (!tokenizer.decode(ids, skipSpecialTokens, text, error))
    return false;
  if (text.size() > prefix.size() &&
      text.compare(0, prefix.size(), prefix) == 0)
    out.append(text, prefix.size(), std::string::npos);
  ids.clear();
  prefix.clear();
  prefixIndex = 0;
  return true;
}
