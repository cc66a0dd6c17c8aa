//===- TokenizerNormalize.cpp - The normalizers of tokenizer.json ---------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Each normalizer rewrites the whole (well-formed UTF-8) string, with the
// semantics of the Hugging Face normalizer of the same name. Offsets are not
// tracked: the runtime only needs the normalized text.
//
//===----------------------------------------------------------------------===//

#include "TokenizerInternal.h"

using namespace tfc::rt;
using namespace tfc::rt::tok;

Normalizer::~Normalizer() = default;

namespace {

/// Applies `f(cp, out)` to every character of `s`.
template <typename F> void mapChars(std::string &s, F &&f) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (size_t i = 0; i < s.size();)
    f(nextChar(s, i), out);
  s = std::move(out);
}

bool isAscii(std::string_view s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x80)
      return false;
  return true;
}

} // namespace

bool BertNormalizer::normalize(std::string &s, std::string &) const {
  if (cleanText || handleChineseChars) {
    mapChars(s, [&](uint32_t cp, std::string &out) {
      if (cleanText) {
        // Controls (Cc, Cf, Co but tab, newline, carriage return), NUL and
        // U+FFFD go; then every white space is a plain space.
        bool keepAsSpace = cp == '\t' || cp == '\n' || cp == '\r';
        if (!keepAsSpace && (cp == 0 || cp == 0xFFFD || isOtherControl(cp)))
          return;
        if (keepAsSpace || isWhitespace(cp)) {
          out += ' ';
          return;
        }
      }
      if (handleChineseChars && isChineseChar(cp)) {
        out += ' ';
        appendUtf8(out, cp);
        out += ' ';
        return;
      }
      appendUtf8(out, cp);
    });
  }
  if (stripAccents.value_or(lowercase) && !isAscii(s)) {
    normalizeForm(s, NormalForm::NFD);
    mapChars(s, [](uint32_t cp, std::string &out) {
      if (!isNonspacingMark(cp))
        appendUtf8(out, cp);
    });
  }
  if (lowercase)
    mapChars(s,
             [](uint32_t cp, std::string &out) { appendLowercase(out, cp); });
  return true;
}

bool UnicodeNormalizer::normalize(std::string &s, std::string &) const {
  normalizeForm(s, form);
  return true;
}

bool LowercaseNormalizer::normalize(std::string &s, std::string &) const {
  mapChars(s, [](uint32_t cp, std::string &out) { appendLowercase(out, cp); });
  return true;
}

bool StripNormalizer::normalize(std::string &s, std::string &) const {
  size_t begin = 0, end = s.size();
  if (left) {
    while (begin < end) {
      size_t i = begin;
      if (!isWhitespace(nextChar(s, i)))
        break;
      begin = i;
    }
  }
  if (right) {
    while (end > begin) {
      size_t start = end - 1;
      while (start > begin &&
             (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80)
        --start;
      size_t i = start;
      if (!isWhitespace(nextChar(s, i)))
        break;
      end = start;
    }
  }
  s = s.substr(begin, end - begin);
  return true;
}

bool StripAccentsNormalizer::normalize(std::string &s, std::string &) const {
  if (isAscii(s))
    return true;
  mapChars(s, [](uint32_t cp, std::string &out) {
    if (!isMark(cp))
      appendUtf8(out, cp);
  });
  return true;
}

bool NmtNormalizer::normalize(std::string &s, std::string &) const {
  mapChars(s, [](uint32_t cp, std::string &out) {
    // ASCII controls go; other characters that act as spaces become one.
    if ((cp >= 0x01 && cp <= 0x08) || cp == 0x0B ||
        (cp >= 0x0E && cp <= 0x1F) || cp == 0x7F || cp == 0x8F || cp == 0x9F)
      return;
    if (cp == 0x09 || cp == 0x0A || cp == 0x0C || cp == 0x0D || cp == 0x1680 ||
        (cp >= 0x200B && cp <= 0x200F) || cp == 0x2028 || cp == 0x2029 ||
        cp == 0x2581 || cp == 0xFEFF || cp == 0xFFFD) {
      out += ' ';
      return;
    }
    appendUtf8(out, cp);
  });
  return true;
}

bool PrependNormalizer::normalize(std::string &s, std::string &) const {
  if (!s.empty())
    s.insert(0, prepend);
  return true;
}

bool ReplaceNormalizer::normalize(std::string &s, std::string &error) const {
  std::vector<std::pair<size_t, size_t>> matches;
  if (!pattern->findAll(s, matches, error))
    return false;
  if (matches.empty())
    return true;
  std::string out;
  out.reserve(s.size());
  size_t last = 0;
  for (auto [begin, end] : matches) {
    out.append(s, last, begin - last);
    out += content;
    last = end;
  }
  out.append(s, last, std::string::npos);
  s = std::move(out);
  return true;
}

bool ByteLevelNormalizer::normalize(std::string &s, std::string &) const {
  std::string out;
  out.reserve(s.size() * 2);
  for (char c : s)
    out += byteToChars(static_cast<unsigned char>(c));
  s = std::move(out);
  return true;
}

bool SequenceNormalizer::normalize(std::string &s, std::string &error) const {
  for (const auto &n : normalizers)
    if (!n->normalize(s, error))
      return false;
  return true;
}
