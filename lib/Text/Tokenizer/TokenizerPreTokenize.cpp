//===- TokenizerPreTokenize.cpp - The pre-tokenizers of tokenizer.json ----===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Pre-tokenizers split each piece of text further. A pattern (a regex or a
// character class) cuts the text into matched and unmatched stretches
// (Hugging Face's find_matches), a behaviour decides which stretches stay and
// how they merge (Removed, Isolated, MergedWithPrevious, MergedWithNext,
// Contiguous), and empty pieces are dropped.
//
//===----------------------------------------------------------------------===//

#include "TokenizerInternal.h"

#include <algorithm>

#include <utf8proc.h>

using namespace tfc::rt;
using namespace tfc::rt::tok;

PreTokenizer::~PreTokenizer() = default;

const char *const tfc::rt::tok::kGpt2Pattern =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|"
    "\\s+(?!\\S)|\\s+";

bool tok::regexMatches(const Regex &re, std::string_view text,
                       std::vector<Match> &out, std::string &error) {
  out.clear();
  if (text.empty()) {
    out.push_back({0, 0, false});
    return true;
  }
  std::vector<std::pair<size_t, size_t>> found;
  if (!re.findAll(text, found, error))
    return false;
  size_t prev = 0;
  for (auto [begin, end] : found) {
    if (prev != begin)
      out.push_back({prev, begin, false});
    out.push_back({begin, end, true});
    prev = end;
  }
  if (prev != text.size())
    out.push_back({prev, text.size(), false});
  return true;
}

void tok::splitByBehavior(const std::vector<Match> &matches,
                          SplitBehavior behavior, bool invert,
                          std::vector<std::pair<size_t, size_t>> &pieces) {
  pieces.clear();
  bool previous = false;
  switch (behavior) {
  case SplitBehavior::Isolated:
    for (const Match &m : matches)
      pieces.emplace_back(m.begin, m.end);
    return;
  case SplitBehavior::Removed:
    for (const Match &m : matches)
      if (m.isMatch == invert)
        pieces.emplace_back(m.begin, m.end);
    return;
  case SplitBehavior::Contiguous:
    for (const Match &m : matches) {
      bool isMatch = m.isMatch != invert;
      if (isMatch == previous && !pieces.empty())
        pieces.back().second = m.end;
      else
        pieces.emplace_back(m.begin, m.end);
      previous = isMatch;
    }
    return;
  case SplitBehavior::MergedWithPrevious:
    for (const Match &m : matches) {
      bool isMatch = m.isMatch != invert;
      if (isMatch && !previous && !pieces.empty())
        pieces.back().second = m.end;
      else
        pieces.emplace_back(m.begin, m.end);
      previous = isMatch;
    }
    return;
  case SplitBehavior::MergedWithNext:
    for (size_t k = matches.size(); k-- > 0;) {
      const Match &m = matches[k];
      bool isMatch = m.isMatch != invert;
      if (isMatch && !previous && !pieces.empty())
        pieces.back().first = m.begin;
      else
        pieces.emplace_back(m.begin, m.end);
      previous = isMatch;
    }
    std::reverse(pieces.begin(), pieces.end());
    return;
  }
}

namespace {

/// Hugging Face's find_matches for a character predicate: each matching
/// character is a match of its own.
template <typename Pred>
void charMatches(std::string_view text, Pred &&pred, std::vector<Match> &out) {
  out.clear();
  if (text.empty()) {
    out.push_back({0, 0, false});
    return;
  }
  size_t last = 0;
  for (size_t i = 0; i < text.size();) {
    size_t begin = i;
    uint32_t cp = nextChar(text, i);
    if (pred(cp)) {
      if (last < begin)
        out.push_back({last, begin, false});
      out.push_back({begin, i, true});
      last = i;
    }
  }
  if (last < text.size())
    out.push_back({last, text.size(), false});
}

/// Replaces `split` by its pieces (without the empty ones) in `out`.
void emitPieces(const Split &split,
                const std::vector<std::pair<size_t, size_t>> &pieces,
                std::vector<Split> &out) {
  for (auto [begin, end] : pieces) {
    if (begin == end)
      continue;
    out.push_back(
        {split.text.substr(begin, end - begin), split.atOrigin && begin == 0});
  }
}

/// Splits every piece with a character predicate and a behaviour.
template <typename Pred>
void splitChars(std::vector<Split> &splits, Pred &&pred,
                SplitBehavior behavior) {
  std::vector<Split> out;
  out.reserve(splits.size());
  std::vector<Match> matches;
  std::vector<std::pair<size_t, size_t>> pieces;
  for (const Split &split : splits) {
    charMatches(split.text, pred, matches);
    splitByBehavior(matches, behavior, false, pieces);
    emitPieces(split, pieces, out);
  }
  splits = std::move(out);
}

bool splitRegex(std::vector<Split> &splits, const Regex &re,
                SplitBehavior behavior, bool invert, std::string &error) {
  std::vector<Split> out;
  out.reserve(splits.size());
  std::vector<Match> matches;
  std::vector<std::pair<size_t, size_t>> pieces;
  for (const Split &split : splits) {
    if (!regexMatches(re, split.text, matches, error))
      return false;
    splitByBehavior(matches, behavior, invert, pieces);
    emitPieces(split, pieces, out);
  }
  splits = std::move(out);
  return true;
}

} // namespace

bool GgufWpmPreTokenizer::apply(std::vector<Split> &splits,
                                std::string &) const {
  std::vector<Split> out;
  out.reserve(splits.size() * 4);
  for (const Split &split : splits) {
    std::string_view text = split.text;
    std::string word;
    auto flush = [&] {
      if (!word.empty())
        out.push_back({std::move(word), false});
      word.clear();
    };
    for (size_t i = 0; i < text.size();) {
      uint32_t cp = nextChar(text, i);
      if (stripAccents)
        cp = firstOfNfd(cp);
      if (isWhitespace(cp)) {
        flush();
        continue;
      }
      if (cp == 0 || cp == 0xFFFD)
        continue;
      int c = category(cp);
      if (c == UTF8PROC_CATEGORY_CC || c == UTF8PROC_CATEGORY_CF ||
          c == UTF8PROC_CATEGORY_CO || c == UTF8PROC_CATEGORY_CS)
        continue;
      if (stripAccents && isMark(cp))
        continue;
      uint32_t lc = lowercase ? simpleLowercase(cp) : cp;
      if (isPunctuation(cp) || (cp < 0x7F && isSymbol(cp)) ||
          isChineseChar(cp)) {
        flush();
        appendUtf8(word, lc);
        flush();
      } else {
        appendUtf8(word, lc);
      }
    }
    flush();
  }
  splits = std::move(out);
  return true;
}

bool BertPreTokenizer::apply(std::vector<Split> &splits, std::string &) const {
  // White space separates words and is dropped; each punctuation character
  // is a word of its own.
  std::vector<Split> out;
  out.reserve(splits.size() * 4);
  for (const Split &split : splits) {
    std::string_view text = split.text;
    size_t word = 0;
    auto flush = [&](size_t end) {
      if (end > word)
        out.push_back({std::string(text.substr(word, end - word)),
                       split.atOrigin && word == 0});
    };
    for (size_t i = 0; i < text.size();) {
      size_t begin = i;
      uint32_t cp = nextChar(text, i);
      if (isWhitespace(cp)) {
        flush(begin);
        word = i;
      } else if (isBertPunctuation(cp)) {
        flush(begin);
        out.push_back({std::string(text.substr(begin, i - begin)),
                       split.atOrigin && begin == 0});
        word = i;
      }
    }
    flush(text.size());
  }
  splits = std::move(out);
  return true;
}

bool ByteLevelPreTokenizer::apply(std::vector<Split> &splits,
                                  std::string &error) const {
  if (addPrefixSpace)
    for (Split &split : splits)
      if (!split.text.empty() && split.text[0] != ' ')
        split.text.insert(0, " ");
  if (useRegex &&
      !splitRegex(splits, *regex, SplitBehavior::Isolated, false, error))
    return false;
  for (Split &split : splits) {
    std::string mapped;
    mapped.reserve(split.text.size() + split.text.size() / 2);
    for (char c : split.text)
      mapped += byteToChars(static_cast<unsigned char>(c));
    split.text = std::move(mapped);
  }
  return true;
}

bool SplitPreTokenizer::apply(std::vector<Split> &splits,
                              std::string &error) const {
  return splitRegex(splits, *pattern, behavior, invert, error);
}

bool DigitsPreTokenizer::apply(std::vector<Split> &splits,
                               std::string &) const {
  splitChars(splits, isNumeric,
             individualDigits ? SplitBehavior::Isolated
                              : SplitBehavior::Contiguous);
  return true;
}

bool WhitespacePreTokenizer::apply(std::vector<Split> &splits,
                                   std::string &error) const {
  // Keeps the runs of word characters and of other non-space characters.
  return splitRegex(splits, *regex, SplitBehavior::Removed, true, error);
}

bool WhitespaceSplitPreTokenizer::apply(std::vector<Split> &splits,
                                        std::string &) const {
  splitChars(splits, isWhitespace, SplitBehavior::Removed);
  return true;
}

bool PunctuationPreTokenizer::apply(std::vector<Split> &splits,
                                    std::string &) const {
  splitChars(splits, isBertPunctuation, behavior);
  return true;
}

bool CharDelimiterPreTokenizer::apply(std::vector<Split> &splits,
                                      std::string &) const {
  uint32_t d = delimiter;
  splitChars(
      splits, [d](uint32_t cp) { return cp == d; }, SplitBehavior::Removed);
  return true;
}

bool MetaspacePreTokenizer::apply(std::vector<Split> &splits,
                                  std::string &) const {
  std::string rep;
  appendUtf8(rep, replacement);
  for (Split &split : splits) {
    std::string text;
    text.reserve(split.text.size() + rep.size());
    for (char c : split.text) {
      if (c == ' ')
        text += rep;
      else
        text += c;
    }
    bool startsWithRep = text.compare(0, rep.size(), rep) == 0;
    if (!text.empty() && !startsWithRep &&
        (prependScheme == PrependScheme::Always ||
         (prependScheme == PrependScheme::First && split.atOrigin)))
      text.insert(0, rep);
    split.text = std::move(text);
  }
  if (split) {
    uint32_t r = replacement;
    splitChars(
        splits, [r](uint32_t cp) { return cp == r; },
        SplitBehavior::MergedWithNext);
  }
  return true;
}

bool SequencePreTokenizer::apply(std::vector<Split> &splits,
                                 std::string &error) const {
  for (const auto &p : preTokenizers)
    if (!p->apply(splits, error))
      return false;
  return true;
}
