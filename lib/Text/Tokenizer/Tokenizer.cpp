//===- Tokenizer.cpp - The encoding pipeline ------------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Encoding as Hugging Face's TokenizerImpl::encode: added tokens are cut out
// of the raw text (the non-normalized ones), the rest is normalized and cut
// again (the normalized ones), each remaining piece is pre-tokenized and
// tokenized by the model; then truncation (leaving room for the special
// tokens), the post-processor and padding. encodeBatch pads the batch as
// encode_batch does.
//
//===----------------------------------------------------------------------===//

#include "TokenizerInternal.h"

#include <algorithm>
#include <cstdio>

using namespace tfc::rt;
using namespace tfc::rt::tok;

//===----------------------------------------------------------------------===//
// Added vocabulary
//===----------------------------------------------------------------------===//

void AddedVocabulary::Trie::build(const std::vector<Entry> &entries,
                                  bool normalized) {
  nodes.assign(1, Node());
  std::fill(std::begin(firstByte), std::end(firstByte), false);
  for (size_t e = 0; e < entries.size(); ++e) {
    const Entry &entry = entries[e];
    if (entry.token.normalized != normalized || entry.pattern.empty())
      continue;
    int32_t node = 0;
    for (char ch : entry.pattern) {
      unsigned char c = static_cast<unsigned char>(ch);
      int32_t next = -1;
      for (auto &[byte, child] : nodes[node].next)
        if (byte == c)
          next = child;
      if (next < 0) {
        next = static_cast<int32_t>(nodes.size());
        nodes[node].next.emplace_back(c, next);
        nodes.emplace_back();
      }
      node = next;
    }
    nodes[node].entry = static_cast<int32_t>(e);
    firstByte[static_cast<unsigned char>(entry.pattern[0])] = true;
  }
}

int32_t AddedVocabulary::Trie::longestAt(std::string_view text, size_t i,
                                         size_t &end) const {
  int32_t node = 0, found = -1;
  for (size_t k = i; k < text.size(); ++k) {
    unsigned char c = static_cast<unsigned char>(text[k]);
    int32_t next = -1;
    for (const auto &[byte, child] : nodes[node].next)
      if (byte == c) {
        next = child;
        break;
      }
    if (next < 0)
      break;
    node = next;
    if (nodes[node].entry >= 0) {
      found = nodes[node].entry;
      end = k + 1;
    }
  }
  return found;
}

namespace {

/// The start of the white space that ends `s` (Rust's \s*$).
size_t trailingSpaceStart(std::string_view s) {
  size_t end = s.size();
  while (end > 0) {
    size_t start = end - 1;
    while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80)
      --start;
    size_t i = start;
    if (!isWhitespace(nextChar(s, i)))
      break;
    end = start;
  }
  return end;
}

/// The length of the white space that starts `s` (Rust's ^\s*).
size_t leadingSpaceLength(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    size_t next = i;
    if (!isWhitespace(nextChar(s, next)))
      break;
    i = next;
  }
  return i;
}

bool endsWithWordChar(std::string_view s) {
  if (s.empty())
    return false;
  size_t start = s.size() - 1;
  while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80)
    --start;
  size_t i = start;
  return isWordChar(nextChar(s, i));
}

bool startsWithWordChar(std::string_view s) {
  if (s.empty())
    return false;
  size_t i = 0;
  return isWordChar(nextChar(s, i));
}

bool sameToken(const AddedToken &a, const AddedToken &b) {
  return a.content == b.content && a.singleWord == b.singleWord &&
         a.lstrip == b.lstrip && a.rstrip == b.rstrip &&
         a.normalized == b.normalized && a.special == b.special;
}

} // namespace

bool AddedVocabulary::add(const std::vector<AddedToken> &tokens,
                          const Model &model, const Normalizer *normalizer,
                          std::string &error) {
  int64_t modelSize = static_cast<int64_t>(model.vocab().size());
  int64_t nextId = modelSize;
  if (!byId.empty()) {
    int64_t maxId = 0;
    for (const auto &[id, index] : byId)
      maxId = std::max<int64_t>(maxId, id);
    nextId = maxId >= modelSize || modelSize == 0 ? maxId + 1 : modelSize;
  }
  for (const AddedToken &token : tokens) {
    if (token.content.empty())
      continue;
    auto known = byContent.find(token.content);
    if (known != byContent.end()) {
      auto at = byId.find(known->second);
      if (at != byId.end() && sameToken(entries[at->second].token, token))
        continue;
    }
    int64_t id = known != byContent.end() ? known->second
                                          : model.vocab().find(token.content);
    if (id < 0)
      id = nextId++;
    if (id >= INT32_MAX) {
      error = "added token " + token.content + ": no id left below 2^31";
      return false;
    }
    std::string pattern = token.content;
    if (token.normalized && normalizer &&
        !normalizer->normalize(pattern, error))
      return false;
    byContent[token.content] = static_cast<int32_t>(id);
    if (token.special)
      specialContents.insert(token.content);
    Entry entry{token, static_cast<int32_t>(id), std::move(pattern)};
    auto at = byId.find(static_cast<int32_t>(id));
    if (at != byId.end()) {
      entries[at->second] = std::move(entry);
    } else {
      byId[static_cast<int32_t>(id)] = entries.size();
      entries.push_back(std::move(entry));
    }
    limit = std::max(limit, id + 1);
  }
  raw.build(entries, false);
  normalizedTrie.build(entries, true);
  return true;
}

void AddedVocabulary::findMatches(
    std::string_view text, const Trie &trie,
    std::vector<std::pair<std::pair<size_t, size_t>, int32_t>> &out) const {
  out.clear();
  if (trie.empty()) {
    out.push_back({{0, text.size()}, -1});
    return;
  }
  size_t startOffset = 0;
  for (size_t i = 0; i < text.size();) {
    if (!trie.firstByte[static_cast<unsigned char>(text[i])]) {
      ++i;
      continue;
    }
    size_t end = i;
    int32_t e = trie.longestAt(text, i, end);
    if (e < 0) {
      ++i;
      continue;
    }
    size_t start = i, stop = end;
    // The scan resumes after the match as found, whatever follows.
    i = end;
    const Entry &entry = entries[e];
    if (entry.token.singleWord) {
      bool startSpace = start == 0 || !endsWithWordChar(text.substr(0, start));
      bool stopSpace =
          stop == text.size() || !startsWithWordChar(text.substr(stop));
      if (!startSpace || !stopSpace)
        continue;
    }
    if (entry.token.lstrip)
      start = std::max(trailingSpaceStart(text.substr(0, start)), startOffset);
    if (entry.token.rstrip)
      stop += leadingSpaceLength(text.substr(stop));
    if (startOffset < start)
      out.push_back({{startOffset, start}, -1});
    out.push_back({{start, stop}, entry.id});
    startOffset = stop;
  }
  if (startOffset != text.size())
    out.push_back({{startOffset, text.size()}, -1});
}

bool AddedVocabulary::extractAndNormalize(std::string_view text,
                                          const Normalizer *normalizer,
                                          std::vector<Piece> &out,
                                          std::string &error) const {
  std::vector<std::pair<std::pair<size_t, size_t>, int32_t>> first, second;
  findMatches(text, raw, first);
  for (const auto &[range, id] : first) {
    auto [begin, end] = range;
    if (begin >= end)
      continue;
    std::string piece(text.substr(begin, end - begin));
    if (id >= 0) {
      out.push_back({std::move(piece), id, begin == 0});
      continue;
    }
    if (normalizer && !normalizer->normalize(piece, error))
      return false;
    findMatches(piece, normalizedTrie, second);
    for (const auto &[range2, id2] : second) {
      auto [b, e] = range2;
      if (b >= e)
        continue;
      out.push_back({piece.substr(b, e - b), id2, begin == 0 && b == 0});
    }
  }
  return true;
}

int32_t AddedVocabulary::find(std::string_view content) const {
  auto it = byContent.find(std::string(content));
  return it == byContent.end() ? -1 : it->second;
}

const std::string *AddedVocabulary::decodeText(int64_t id) const {
  if (id < 0 || id >= INT32_MAX)
    return nullptr;
  auto it = byId.find(static_cast<int32_t>(id));
  return it == byId.end() ? nullptr : &entries[it->second].pattern;
}

const AddedToken *AddedVocabulary::token(int64_t id) const {
  if (id < 0 || id >= INT32_MAX)
    return nullptr;
  auto it = byId.find(static_cast<int32_t>(id));
  return it == byId.end() ? nullptr : &entries[it->second].token;
}

bool AddedVocabulary::isSpecialContent(std::string_view content) const {
  return !specialContents.empty() &&
         specialContents.count(std::string(content)) != 0;
}

//===----------------------------------------------------------------------===//
// Tokenizer::Impl
//===----------------------------------------------------------------------===//

bool Tokenizer::Impl::encodeSequence(std::string_view text, int32_t typeId,
                                     Enc &out, std::string &error) const {
  std::vector<Piece> pieces;
  if (!added.extractAndNormalize(text, normalizer.get(), pieces, error))
    return false;
  std::vector<Split> splits;
  for (Piece &piece : pieces) {
    if (piece.id >= 0) {
      out.ids.push_back(piece.id);
      continue;
    }
    splits.clear();
    splits.push_back({std::move(piece.text), piece.atOrigin});
    if (preTokenizer && !preTokenizer->apply(splits, error))
      return false;
    for (const Split &split : splits)
      if (!split.text.empty() && !model->tokenize(split.text, out.ids, error))
        return false;
  }
  out.typeIds.assign(out.ids.size(), typeId);
  out.special.assign(out.ids.size(), 0);
  return true;
}

namespace {

void truncateEnc(Enc &e, size_t maxLength, TruncationParams::Direction dir) {
  if (e.ids.size() <= maxLength)
    return;
  auto cut = [&](auto &v) {
    if (dir == TruncationParams::Direction::Right)
      v.resize(maxLength);
    else
      v.erase(v.begin(), v.end() - static_cast<ptrdiff_t>(maxLength));
  };
  cut(e.ids);
  cut(e.typeIds);
  cut(e.special);
}

bool truncate(Enc &first, std::optional<Enc> &second,
              const TruncationParams &params, std::string &error) {
  using Strategy = TruncationParams::Strategy;
  size_t max = params.maxLength;
  if (max == 0) {
    truncateEnc(first, 0, params.direction);
    if (second)
      truncateEnc(*second, 0, params.direction);
    return true;
  }
  size_t total = first.ids.size() + (second ? second->ids.size() : 0);
  if (total <= max)
    return true;
  size_t toRemove = total - max;
  if (params.strategy == Strategy::LongestFirst) {
    if (!second) {
      truncateEnc(first, max, params.direction);
      return true;
    }
    size_t n1 = first.ids.size(), n2 = second->ids.size();
    bool swapped = n1 > n2;
    if (swapped)
      std::swap(n1, n2);
    n2 = n1 > max ? n1 : std::max(n1, max - n1);
    if (n1 + n2 > max) {
      n1 = max / 2;
      n2 = n1 + max % 2;
    }
    if (swapped)
      std::swap(n1, n2);
    truncateEnc(first, n1, params.direction);
    truncateEnc(*second, n2, params.direction);
    return true;
  }
  Enc *target = &first;
  if (params.strategy == Strategy::OnlySecond) {
    if (!second) {
      error = "truncation: only_second needs a second sequence";
      return false;
    }
    target = &*second;
  }
  if (target->ids.size() <= toRemove) {
    error = "truncation: the sequence to truncate is too short to respect "
            "max_length " +
            std::to_string(max);
    return false;
  }
  truncateEnc(*target, target->ids.size() - toRemove, params.direction);
  return true;
}

void pad(Encoding &e, size_t length, const PaddingParams &params) {
  if (e.ids.size() >= length)
    return;
  size_t n = length - e.ids.size();
  bool left = params.direction == PaddingParams::Direction::Left;
  auto fill = [&](std::vector<int64_t> &v, int64_t value) {
    v.insert(left ? v.begin() : v.end(), n, value);
  };
  fill(e.ids, params.padId);
  fill(e.typeIds, params.padTypeId);
  fill(e.attentionMask, 0);
  fill(e.specialTokensMask, 1);
}

size_t padLength(size_t length, const PaddingParams &params) {
  if (params.padToMultipleOf > 0 && length % params.padToMultipleOf)
    length += params.padToMultipleOf - length % params.padToMultipleOf;
  return length;
}

} // namespace

bool Tokenizer::Impl::postProcess(Enc first, std::optional<Enc> second,
                                  bool addSpecialTokens, Encoding &out,
                                  std::string &error) const {
  if (truncation) {
    TruncationParams params = *truncation;
    size_t added =
        postProcessor ? postProcessor->addedTokens(second.has_value()) : 0;
    bool apply = true;
    if (addSpecialTokens && added > 0) {
      // Hugging Face subtracts in unsigned arithmetic: a max_length below
      // the special tokens wraps around to no truncation at all.
      if (params.maxLength < added)
        apply = false;
      else
        params.maxLength -= added;
    }
    if (apply && !truncate(first, second, params, error))
      return false;
  }
  std::vector<Enc> parts;
  parts.push_back(std::move(first));
  if (second)
    parts.push_back(std::move(*second));
  if (postProcessor)
    postProcessor->process(parts, addSpecialTokens);
  Enc merged;
  for (const Enc &p : parts)
    merged.append(p);
  out = Encoding();
  out.ids.assign(merged.ids.begin(), merged.ids.end());
  out.typeIds.assign(merged.typeIds.begin(), merged.typeIds.end());
  out.attentionMask.assign(merged.ids.size(), 1);
  out.specialTokensMask.assign(merged.special.begin(), merged.special.end());
  if (padding) {
    size_t length = padding->strategy == PaddingParams::Strategy::Fixed
                        ? padding->length
                        : out.ids.size();
    pad(out, padLength(length, *padding), *padding);
  }
  return true;
}

std::optional<int32_t>
Tokenizer::Impl::tokenToId(std::string_view token) const {
  int32_t id = added.find(token);
  if (id < 0)
    id = model->vocab().find(token);
  if (id < 0)
    return std::nullopt;
  return id;
}

const std::string *Tokenizer::Impl::idToToken(int64_t id) const {
  const std::string *text = added.decodeText(id);
  return text ? text : model->vocab().token(id);
}

int64_t Tokenizer::Impl::idLimit() const {
  return std::max(model->vocab().idLimit(), added.idLimit());
}

//===----------------------------------------------------------------------===//
// Tokenizer
//===----------------------------------------------------------------------===//

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

std::unique_ptr<Tokenizer>
TokenizerBuilder::make(std::unique_ptr<Tokenizer::Impl> impl) {
  return std::unique_ptr<Tokenizer>(new Tokenizer(std::move(impl)));
}
Tokenizer::~Tokenizer() = default;

namespace {
bool checkUtf8(std::string_view text, const char *what, std::string &error) {
  size_t bad = findInvalidUtf8(text);
  if (bad == std::string_view::npos)
    return true;
  char hex[8];
  std::snprintf(hex, sizeof(hex), "0x%02X",
                static_cast<unsigned char>(text[bad]));
  error = std::string(what) + " is not valid UTF-8: byte " +
          std::to_string(bad) + " (" + hex +
          ") does not start a valid "
          "character";
  return false;
}
} // namespace

bool Tokenizer::encode(std::string_view text, bool addSpecialTokens,
                       Encoding &out, std::string &error) const {
  if (!checkUtf8(text, "the text", error))
    return false;
  Enc first;
  if (!impl_->encodeSequence(text, 0, first, error))
    return false;
  return impl_->postProcess(std::move(first), std::nullopt, addSpecialTokens,
                            out, error);
}

bool Tokenizer::encodePair(std::string_view a, std::string_view b,
                           bool addSpecialTokens, Encoding &out,
                           std::string &error) const {
  if (!checkUtf8(a, "the first text", error) ||
      !checkUtf8(b, "the second text", error))
    return false;
  Enc first, second;
  if (!impl_->encodeSequence(a, 0, first, error) ||
      !impl_->encodeSequence(b, 1, second, error))
    return false;
  return impl_->postProcess(std::move(first), std::move(second),
                            addSpecialTokens, out, error);
}

bool Tokenizer::encodeBatch(const std::vector<std::string> &texts,
                            bool addSpecialTokens, std::vector<Encoding> &out,
                            std::string &error) const {
  out.assign(texts.size(), Encoding());
  for (size_t k = 0; k < texts.size(); ++k) {
    if (!encode(texts[k], addSpecialTokens, out[k], error)) {
      error = "input " + std::to_string(k) + ": " + error;
      return false;
    }
  }
  if (impl_->padding && !out.empty()) {
    const PaddingParams &p = *impl_->padding;
    size_t length = p.length;
    if (p.strategy == PaddingParams::Strategy::BatchLongest) {
      length = 0;
      for (const Encoding &e : out)
        length = std::max(length, e.ids.size());
    }
    length = padLength(length, p);
    for (Encoding &e : out)
      pad(e, length, p);
  }
  return true;
}

bool Tokenizer::normalize(std::string_view text, std::string &out,
                          std::string &error) const {
  if (!checkUtf8(text, "the text", error))
    return false;
  out.assign(text.data(), text.size());
  return !impl_->normalizer || impl_->normalizer->normalize(out, error);
}

bool Tokenizer::preTokenize(std::string_view text,
                            std::vector<std::string> &pieces,
                            std::string &error) const {
  if (!checkUtf8(text, "the text", error))
    return false;
  std::vector<Piece> cut;
  if (!impl_->added.extractAndNormalize(text, impl_->normalizer.get(), cut,
                                        error))
    return false;
  pieces.clear();
  std::vector<Split> splits;
  for (Piece &piece : cut) {
    if (piece.id >= 0) {
      pieces.push_back(std::move(piece.text));
      continue;
    }
    splits.clear();
    splits.push_back({std::move(piece.text), piece.atOrigin});
    if (impl_->preTokenizer && !impl_->preTokenizer->apply(splits, error))
      return false;
    for (Split &split : splits)
      if (!split.text.empty())
        pieces.push_back(std::move(split.text));
  }
  return true;
}

std::optional<int64_t> Tokenizer::tokenToId(std::string_view token) const {
  std::optional<int32_t> id = impl_->tokenToId(token);
  if (!id)
    return std::nullopt;
  return *id;
}

const std::string *Tokenizer::tokenText(int64_t id) const {
  return impl_->idToToken(id);
}

std::optional<std::string> Tokenizer::idToToken(int64_t id) const {
  const std::string *text = impl_->idToToken(id);
  if (!text)
    return std::nullopt;
  return *text;
}

size_t Tokenizer::vocabSize() const {
  return static_cast<size_t>(impl_->idLimit());
}

bool Tokenizer::isSpecial(int64_t id) const {
  const AddedToken *t = impl_->added.token(id);
  return t && t->special;
}

const char *Tokenizer::modelType() const { return impl_->model->type(); }

const std::optional<TruncationParams> &Tokenizer::truncation() const {
  return impl_->truncation;
}

const std::optional<PaddingParams> &Tokenizer::padding() const {
  return impl_->padding;
}

void Tokenizer::setTruncation(std::optional<TruncationParams> params) {
  impl_->truncation = std::move(params);
}

void Tokenizer::setPadding(std::optional<PaddingParams> params) {
  if (params) {
    params->length = std::min(params->length, kMaxPadding);
    params->padToMultipleOf = std::min(params->padToMultipleOf, kMaxPadding);
  }
  impl_->padding = std::move(params);
}
