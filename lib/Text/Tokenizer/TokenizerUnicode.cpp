//===- TokenizerUnicode.cpp - UTF-8, Unicode and regex helpers ------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The Unicode side of the tokenizers: UTF-8 checks and lossy decoding,
// properties and case mapping from utf8proc, normalisation forms through
// utf8proc_map, GPT-2's byte-level alphabet, PCRE2 regexes with Oniguruma's
// iteration rules, and the string-to-id map of the vocabularies.
//
//===----------------------------------------------------------------------===//

#include "TokenizerInternal.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <utf8proc.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <new>

using namespace tfc::rt;
using namespace tfc::rt::tok;

//===----------------------------------------------------------------------===//
// UTF-8
//===----------------------------------------------------------------------===//

namespace {

/// The length of the well-formed sequence at s[i], or 0 if it is not.
size_t wellFormedLength(std::string_view s, size_t i) {
  auto at = [&](size_t k) -> int {
    return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : -1;
  };
  int c = at(0);
  if (c < 0x80)
    return 1;
  auto cont = [](int b, int lo, int hi) { return b >= lo && b <= hi; };
  if (c >= 0xC2 && c <= 0xDF)
    return cont(at(1), 0x80, 0xBF) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    int lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return cont(at(1), lo, hi) && cont(at(2), 0x80, 0xBF) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    int lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return cont(at(1), lo, hi) && cont(at(2), 0x80, 0xBF) &&
                   cont(at(3), 0x80, 0xBF)
               ? 4
               : 0;
  }
  return 0;
}

} // namespace

size_t tok::findInvalidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    // ASCII runs, eight bytes at a time.
    while (i + 8 <= s.size()) {
      uint64_t w;
      __builtin_memcpy(&w, s.data() + i, 8);
      if (w & 0x8080808080808080ull)
        break;
      i += 8;
    }
    if (i >= s.size())
      break;
    size_t n = wellFormedLength(s, i);
    if (n == 0)
      return i;
    i += n;
  }
  return std::string_view::npos;
}

std::string tok::quoteText(std::string_view s, size_t max) {
  std::string out = "\"";
  size_t i = 0;
  while (i < s.size() && i < max) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = wellFormedLength(s, i);
    if (n == 0) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02X", c);
      out += hex;
      ++i;
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x20 || c == 0x7F) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\u%04X", c);
      out += hex;
      ++i;
    } else {
      out.append(s.data() + i, n);
      i += n;
    }
  }
  out += '"';
  if (i < s.size())
    out += "...";
  return out;
}

size_t tok::countChars(std::string_view s) {
  size_t n = 0;
  for (char c : s)
    n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::string tok::lossyUtf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    size_t n = wellFormedLength(bytes, i);
    if (n) {
      out.append(bytes.data() + i, n);
      i += n;
      continue;
    }
    // A maximal subpart of an ill-formed sequence: the lead byte and the
    // continuation bytes that could still have completed it.
    int c = static_cast<unsigned char>(bytes[i]);
    size_t skip = 1;
    auto in = [&](size_t k, int lo, int hi) {
      if (i + k >= bytes.size())
        return false;
      int b = static_cast<unsigned char>(bytes[i + k]);
      return b >= lo && b <= hi;
    };
    if (c >= 0xE0 && c <= 0xEF) {
      int lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
      if (in(1, lo, hi))
        skip = 2; // the third byte is missing or wrong
    } else if (c >= 0xF0 && c <= 0xF4) {
      int lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
      if (in(1, lo, hi))
        skip = in(2, 0x80, 0xBF) ? 3 : 2;
    }
    out += "\xEF\xBF\xBD";
    i += skip;
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Properties
//===----------------------------------------------------------------------===//

int tok::category(uint32_t cp) {
  return static_cast<int>(utf8proc_category(static_cast<utf8proc_int32_t>(cp)));
}

bool tok::isWhitespace(uint32_t cp) {
  if (cp == ' ' || (cp >= 0x09 && cp <= 0x0D))
    return true;
  if (cp < 0x85)
    return false;
  if (cp == 0x85)
    return true;
  int c = category(cp);
  return c == UTF8PROC_CATEGORY_ZS || c == UTF8PROC_CATEGORY_ZL ||
         c == UTF8PROC_CATEGORY_ZP;
}

bool tok::isNumeric(uint32_t cp) {
  if (cp < 0x80)
    return cp >= '0' && cp <= '9';
  int c = category(cp);
  return c == UTF8PROC_CATEGORY_ND || c == UTF8PROC_CATEGORY_NL ||
         c == UTF8PROC_CATEGORY_NO;
}

bool tok::isPunctuation(uint32_t cp) {
  int c = category(cp);
  return c >= UTF8PROC_CATEGORY_PC && c <= UTF8PROC_CATEGORY_PO;
}

bool tok::isMark(uint32_t cp) {
  if (cp < 0x300)
    return false;
  int c = category(cp);
  return c == UTF8PROC_CATEGORY_MN || c == UTF8PROC_CATEGORY_MC ||
         c == UTF8PROC_CATEGORY_ME;
}

bool tok::isNonspacingMark(uint32_t cp) {
  return cp >= 0x300 && category(cp) == UTF8PROC_CATEGORY_MN;
}

bool tok::isOtherControl(uint32_t cp) {
  int c = category(cp);
  return c == UTF8PROC_CATEGORY_CC || c == UTF8PROC_CATEGORY_CF ||
         c == UTF8PROC_CATEGORY_CO;
}

bool tok::isChineseChar(uint32_t cp) {
  // The blocks of BERT's _is_chinese_char (Hugging Face's is_chinese_char).
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

bool tok::isWordChar(uint32_t cp) {
  if (cp < 0x80)
    return (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') ||
           (cp >= '0' && cp <= '9') || cp == '_';
  static const std::unique_ptr<Regex> word = [] {
    std::string error;
    return Regex::compile("\\w", false, error);
  }();
  std::string s;
  appendUtf8(s, cp);
  return word && word->matchesPrefix(s);
}

uint32_t tok::simpleLowercase(uint32_t cp) {
  if (cp < 0x80)
    return cp >= 'A' && cp <= 'Z' ? cp + 32 : cp;
  return static_cast<uint32_t>(
      utf8proc_tolower(static_cast<utf8proc_int32_t>(cp)));
}

uint32_t tok::firstOfNfd(uint32_t cp) {
  if (cp < 0xC0)
    return cp;
  utf8proc_int32_t buf[32];
  int boundary = 0;
  utf8proc_ssize_t n = utf8proc_decompose_char(
      static_cast<utf8proc_int32_t>(cp), buf, 32, UTF8PROC_DECOMPOSE,
      &boundary);
  return n > 0 && n <= 32 ? static_cast<uint32_t>(buf[0]) : cp;
}

bool tok::isSymbol(uint32_t cp) {
  int c = category(cp);
  return c == UTF8PROC_CATEGORY_SM || c == UTF8PROC_CATEGORY_SC ||
         c == UTF8PROC_CATEGORY_SK || c == UTF8PROC_CATEGORY_SO;
}

void tok::appendLowercase(std::string &out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp);
    return;
  }
  // The one unconditional lowercase mapping of SpecialCasing.txt that
  // utf8proc's simple mapping lacks: U+0130 is "i" + U+0307.
  if (cp == 0x130) {
    out += "i\xCC\x87";
    return;
  }
  appendUtf8(out, static_cast<uint32_t>(
                      utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))));
}

void tok::normalizeForm(std::string &s, NormalForm form) {
  bool below300 = true, ascii = true;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    ascii = false;
    if (nextChar(s, i) >= 0x300) {
      below300 = false;
      break;
    }
  }
  // ASCII is invariant under every form; below U+0300 nothing composes.
  if (ascii || (form == NormalForm::NFC && below300))
    return;
  int options = UTF8PROC_STABLE;
  switch (form) {
  case NormalForm::NFC:
    options |= UTF8PROC_COMPOSE;
    break;
  case NormalForm::NFD:
    options |= UTF8PROC_DECOMPOSE;
    break;
  case NormalForm::NFKC:
    options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT;
    break;
  case NormalForm::NFKD:
    options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT;
    break;
  }
  utf8proc_uint8_t *result = nullptr;
  utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t *>(s.data()),
                   static_cast<utf8proc_ssize_t>(s.size()), &result,
                   static_cast<utf8proc_option_t>(options));
  if (n < 0) {
    std::free(result);
    // The input is well-formed, so only memory can run out.
    throw std::bad_alloc();
  }
  s.assign(reinterpret_cast<const char *>(result), static_cast<size_t>(n));
  std::free(result);
}

//===----------------------------------------------------------------------===//
// GPT-2's byte-level alphabet
//===----------------------------------------------------------------------===//

namespace {

struct ByteAlphabet {
  std::string chars[256];
  int16_t bytes[512];
  ByteAlphabet() {
    for (int16_t &b : bytes)
      b = -1;
    // Printable bytes stand for themselves; the others (controls, space,
    // DEL, the C1 range, NBSP and the soft hyphen) take the code points
    // from U+0100 on, in byte order.
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) ||
                       (b >= 0xAE && b <= 0xFF);
      uint32_t cp = printable ? static_cast<uint32_t>(b) : next++;
      appendUtf8(chars[b], cp);
      bytes[cp] = static_cast<int16_t>(b);
    }
  }
};

const ByteAlphabet &byteAlphabet() {
  static const ByteAlphabet alphabet;
  return alphabet;
}

} // namespace

const std::string &tok::byteToChars(unsigned char b) {
  return byteAlphabet().chars[b];
}

int tok::charToByte(uint32_t cp) {
  return cp < 512 ? byteAlphabet().bytes[cp] : -1;
}

//===----------------------------------------------------------------------===//
// Regexes
//===----------------------------------------------------------------------===//

std::string tok::translateOnigPattern(std::string_view p) {
  // Unicode word characters as Oniguruma and Rust's regex define them.
  static const char *const kWord =
      "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}";
  std::string out;
  out.reserve(p.size() + 16);
  int depth = 0; // nesting of character classes
  for (size_t i = 0; i < p.size();) {
    char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      char e = p[i + 1];
      bool inClass = depth > 0;
      switch (e) {
      case 's':
        out += "\\p{White_Space}";
        break;
      case 'S':
        out += "\\P{White_Space}";
        break;
      case 'w':
        out += inClass ? std::string(kWord) : "[" + std::string(kWord) + "]";
        break;
      case 'W':
        out += inClass ? std::string("\\W") : "[^" + std::string(kWord) + "]";
        break;
      case 'd':
        out += "\\p{Nd}";
        break;
      case 'D':
        out += "\\P{Nd}";
        break;
      case 'h': // Oniguruma: a hexadecimal digit
        out += inClass ? "0-9a-fA-F" : "[0-9a-fA-F]";
        break;
      case 'H':
        out += inClass ? "\\x{0}-/:-@G-`g-\\x{10FFFF}" : "[^0-9a-fA-F]";
        break;
      default: {
        // Copy the escape with the whole character it escapes.
        size_t n = 1 + utf8Length(static_cast<unsigned char>(e));
        out.append(p.data() + i, std::min(n, p.size() - i));
        i += n;
        continue;
      }
      }
      i += 2;
      continue;
    }
    if (c == '[') {
      if (depth > 0 && i + 1 < p.size() && p[i + 1] == ':') {
        // A POSIX bracket such as [:alpha:]: copied whole.
        size_t end = p.find(":]", i + 2);
        if (end != std::string_view::npos) {
          out.append(p.data() + i, end + 2 - i);
          i = end + 2;
          continue;
        }
      }
      ++depth;
      out += c;
      ++i;
      // A ']' right after '[' or '[^' is a literal.
      if (i < p.size() && p[i] == '^') {
        out += '^';
        ++i;
      }
      if (i < p.size() && p[i] == ']') {
        out += "\\]";
        ++i;
      }
      continue;
    }
    if (c == ']' && depth > 0)
      --depth;
    out += c;
    ++i;
  }
  return out;
}

namespace {

/// Per-thread match data and JIT stack.
struct MatchState {
  pcre2_match_data *data = nullptr;
  pcre2_match_context *context = nullptr;
  pcre2_jit_stack *stack = nullptr;
  MatchState() {
    data = pcre2_match_data_create(1, nullptr);
    context = pcre2_match_context_create(nullptr);
    stack = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);
    if (context && stack)
      pcre2_jit_stack_assign(context, nullptr, stack);
    if (!data || !context)
      throw std::bad_alloc();
  }
  ~MatchState() {
    pcre2_match_data_free(data);
    pcre2_match_context_free(context);
    pcre2_jit_stack_free(stack);
  }
};

MatchState &matchState() {
  thread_local MatchState state;
  return state;
}

std::string pcreMessage(int code) {
  PCRE2_UCHAR buffer[256];
  if (pcre2_get_error_message(code, buffer, sizeof(buffer)) < 0)
    return "error " + std::to_string(code);
  return reinterpret_cast<const char *>(buffer);
}

/// One search from `start`: 1 with a match, 0 without, -1 on error.
int search(pcre2_code *code, std::string_view text, size_t start,
           uint32_t options, size_t &begin, size_t &end, std::string &error) {
  MatchState &state = matchState();
  int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(text.data()),
                       text.size(), start, options | PCRE2_NO_UTF_CHECK,
                       state.data, state.context);
  if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
    rc = pcre2_match(
        code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), start,
        options | PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, state.data, state.context);
  if (rc == PCRE2_ERROR_NOMATCH)
    return 0;
  if (rc < 0) {
    error = "the regex failed on the input: " + pcreMessage(rc);
    return -1;
  }
  PCRE2_SIZE *ovector = pcre2_get_ovector_pointer(state.data);
  begin = ovector[0];
  end = ovector[1];
  // \K can report a match that ends before it starts.
  if (end < begin)
    end = begin;
  return 1;
}

} // namespace

std::unique_ptr<Regex> Regex::compile(std::string_view pattern, bool literal,
                                      std::string &error) {
  std::string source =
      literal ? std::string(pattern) : translateOnigPattern(pattern);
  // PCRE2_LITERAL admits only a few other options.
  uint32_t options = PCRE2_UTF | (literal ? PCRE2_LITERAL
                                          : PCRE2_UCP | PCRE2_MULTILINE |
                                                PCRE2_NEVER_BACKSLASH_C);
  int code = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code *compiled =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(source.data()), source.size(),
                    options, &code, &offset, nullptr);
  if (!compiled) {
    error = "invalid regex " + quoteText(pattern) + ": " + pcreMessage(code) +
            " at offset " + std::to_string(offset);
    return nullptr;
  }
  // Without JIT (unsupported host) the interpreter runs the same pattern.
  pcre2_jit_compile(compiled, PCRE2_JIT_COMPLETE);
  std::unique_ptr<Regex> re(new Regex());
  re->code = compiled;
  re->source_ = std::string(pattern);
  return re;
}

Regex::~Regex() { pcre2_code_free(static_cast<pcre2_code *>(code)); }

bool Regex::findAll(std::string_view text,
                    std::vector<std::pair<size_t, size_t>> &out,
                    std::string &error) const {
  auto *re = static_cast<pcre2_code *>(code);
  size_t lastEnd = 0;
  bool haveLast = false;
  size_t lastMatchEnd = 0;
  while (lastEnd <= text.size()) {
    size_t begin, end;
    int found = search(re, text, lastEnd, 0, begin, end, error);
    if (found < 0)
      return false;
    if (!found)
      break;
    if (begin == end && haveLast && lastMatchEnd == end) {
      // An empty match right after the previous one: step one character.
      if (lastEnd >= text.size())
        break;
      lastEnd += utf8Length(static_cast<unsigned char>(text[lastEnd]));
      continue;
    }
    lastEnd = end;
    lastMatchEnd = end;
    haveLast = true;
    out.emplace_back(begin, end);
  }
  return true;
}

bool Regex::matchesPrefix(std::string_view text) const {
  size_t begin, end;
  std::string error;
  return search(static_cast<pcre2_code *>(code), text, 0, PCRE2_ANCHORED, begin,
                end, error) == 1;
}

//===----------------------------------------------------------------------===//
// StringMap and Vocab
//===----------------------------------------------------------------------===//

namespace {
uint64_t hashString(std::string_view s) {
  uint64_t h = std::hash<std::string_view>()(s);
  return h | 1; // 0 marks nothing; keep every hash nonzero
}
} // namespace

void StringMap::grow() {
  std::vector<Slot> old = std::move(slots);
  slots.assign(old.empty() ? 64 : old.size() * 2, Slot());
  size_t mask = slots.size() - 1;
  for (const Slot &s : old) {
    if (s.id < 0)
      continue;
    size_t k = s.hash & mask;
    while (slots[k].id >= 0)
      k = (k + 1) & mask;
    slots[k] = s;
  }
}

void StringMap::set(std::string_view key, int32_t id) {
  if ((count + 1) * 2 > slots.size())
    grow();
  uint64_t h = hashString(key);
  size_t mask = slots.size() - 1;
  size_t k = h & mask;
  while (slots[k].id >= 0) {
    const Slot &s = slots[k];
    if (s.hash == h && s.length == key.size() &&
        std::string_view(arena.data() + s.offset, s.length) == key) {
      slots[k].id = id;
      return;
    }
    k = (k + 1) & mask;
  }
  Slot &s = slots[k];
  s.hash = h;
  s.offset = static_cast<uint32_t>(arena.size());
  s.length = static_cast<uint32_t>(key.size());
  s.id = id;
  arena.append(key.data(), key.size());
  ++count;
}

int32_t StringMap::find(std::string_view key) const {
  if (slots.empty())
    return -1;
  uint64_t h = hashString(key);
  size_t mask = slots.size() - 1;
  for (size_t k = h & mask;; k = (k + 1) & mask) {
    const Slot &s = slots[k];
    if (s.id < 0)
      return -1;
    if (s.hash == h && s.length == key.size() &&
        std::string_view(arena.data() + s.offset, s.length) == key)
      return s.id;
  }
}

bool Vocab::build(std::vector<std::pair<std::string, int64_t>> entries,
                  const std::string &what, std::string &error) {
  size_t bytes = 0;
  limit = 0;
  for (const auto &[token, id] : entries) {
    if (id < 0 || id >= INT32_MAX) {
      error = what + ": the id " + std::to_string(id) + " of token " +
              quoteText(token) + " is out of range [0, 2^31 - 1)";
      return false;
    }
    limit = std::max(limit, id + 1);
    bytes += token.size();
  }
  // The arena indexes with 32 bits.
  if (bytes >= UINT32_MAX) {
    error = what + ": the tokens are too large";
    return false;
  }
  for (const auto &[token, id] : entries)
    map.set(token, static_cast<int32_t>(id));
  bool dense = static_cast<uint64_t>(limit) <= 2 * entries.size() + 1024;
  if (dense) {
    byId.assign(static_cast<size_t>(limit), std::string());
    present.assign(static_cast<size_t>(limit), false);
  }
  for (auto &[token, id] : entries) {
    if (dense) {
      if (!present[id]) {
        present[id] = true;
        byId[id] = std::move(token);
      }
    } else {
      sparse.emplace(id, std::move(token));
    }
  }
  return true;
}

const std::string *Vocab::token(int64_t id) const {
  if (id < 0 || id >= limit)
    return nullptr;
  if (!byId.empty() || !present.empty())
    return present[id] ? &byId[id] : nullptr;
  auto it = sparse.find(id);
  return it == sparse.end() ? nullptr : &it->second;
}
