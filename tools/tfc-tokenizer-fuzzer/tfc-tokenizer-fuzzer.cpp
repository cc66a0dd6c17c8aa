//===- tfc-tokenizer-fuzzer.cpp - libFuzzer target of the tokenizers ------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The first byte picks what the rest of the input is:
//
//   0  a tokenizer.json: loaded, then used on a few fixed texts
//   1  text for fixed tokenizers (BERT-like WordPiece, a SentencePiece-like
//      BPE with byte fallback, byte-level BPEs from GGUF metadata for the
//      smollm, llama-bpe, qwen2 and default families): encode, pairs,
//      normalize, pre-tokenize, decode of the result and the streaming
//      decoder
//   2  ids (little-endian 16-bit values, and a few huge ones) for decode and
//      the streaming decoder of the fixed tokenizers
//   3  GGUF metadata (tokens separated by NUL, then merges separated by
//      newlines) for fromGguf
//   4  a regex for a Split pre-tokenizer, run on fixed texts
//
// Errors are the expected outcome of malformed input; a crash, a sanitizer
// report, a hang or a broken promise (a trap) is a bug. Promises: valid
// UTF-8 always encodes with the fixed tokenizers, invalid UTF-8 never does;
// every failure has a message; ids of an encoding decode; for byte-level
// tokenizers, the stream's pieces are valid UTF-8 (no partial character)
// and concatenate to decode.
//
//   tfc-tokenizer-fuzzer -max_total_time=300 CORPUS_DIR \
//       test/Runtime/Inputs/tokenizer-fuzz-seeds
//
//===----------------------------------------------------------------------===//

#include "tfc/Formats/Utf8.h"
#include "tfc/Text/Tokenizer/Tokenizer.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

using namespace tfc::rt;

namespace {

[[noreturn]] void broken(const char *what, const std::string &detail) {
  std::fprintf(stderr, "broken promise: %s: %s\n", what, detail.c_str());
  __builtin_trap();
}

bool validUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80                 ? 1
               : c >= 0xC2 && c <= 0xDF ? 2
               : c >= 0xE0 && c <= 0xEF ? 3
               : c >= 0xF0 && c <= 0xF4 ? 4
                                        : 0;
    if (n == 0 || i + n > s.size())
      return false;
    unsigned char c1 = n > 1 ? static_cast<unsigned char>(s[i + 1]) : 0x80;
    if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F) ||
        (c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 > 0x8F))
      return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80)
        return false;
    i += n;
  }
  return true;
}

const char *const kWordPiece = R"({
  "version": "1.0",
  "added_tokens": [
    {"id": 0, "content": "[UNK]", "special": true, "normalized": false},
    {"id": 1, "content": "[CLS]", "special": true, "normalized": false},
    {"id": 2, "content": "[SEP]", "special": true, "normalized": false},
    {"id": 3, "content": "[PAD]", "special": true, "normalized": false},
    {"id": 9, "content": "Big", "normalized": true, "single_word": true}],
  "normalizer": {"type": "BertNormalizer", "lowercase": true},
  "pre_tokenizer": {"type": "BertPreTokenizer"},
  "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 2],
                     "cls": ["[CLS]", 1]},
  "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
  "truncation": {"max_length": 64, "strategy": "LongestFirst", "stride": 0},
  "padding": {"strategy": "BatchLongest", "pad_id": 3, "pad_token": "[PAD]",
              "pad_to_multiple_of": 8},
  "model": {"type": "WordPiece", "unk_token": "[UNK]",
    "continuing_subword_prefix": "##", "max_input_chars_per_word": 20,
    "vocab": {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "[PAD]": 3, "a": 4,
      "##a": 5, "b": 6, "##b": 7, ",": 8, "big": 9, "##ing": 10, "é": 11,
      "東": 12, "'": 13, "do": 14}}
})";

const char *const kSentencePiece = R"({
  "version": "1.0",
  "added_tokens": [
    {"id": 0, "content": "<unk>", "special": true, "normalized": false},
    {"id": 1, "content": "<s>", "special": true, "normalized": false,
     "lstrip": true, "rstrip": true}],
  "normalizer": {"type": "Sequence", "normalizers": [
    {"type": "NFKC"}, {"type": "Prepend", "prepend": "\u2581"},
    {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
  "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581",
                    "prepend_scheme": "first", "split": false},
  "post_processor": {"type": "TemplateProcessing", "single": "<s> $A",
    "pair": "<s> $A <s> $B:1", "special_tokens": {
      "<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
  "decoder": {"type": "Sequence", "decoders": [
    {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
    {"type": "ByteFallback"}, {"type": "Fuse"},
    {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
  "model": {"type": "BPE", "unk_token": "<unk>", "byte_fallback": true,
    "fuse_unk": true,
    "vocab": {"<unk>": 0, "<s>": 1, "<0xC3>": 2, "<0xA9>": 3, "<0x41>": 4,
      "\u2581": 5, "a": 6, "b": 7, "\u2581a": 8, "ab": 9, "\u2581ab": 10,
      "<0xE6>": 11, "<0x9D>": 12, "<0xB1>": 13},
    "merges": [["\u2581", "a"], ["a", "b"], ["\u2581a", "b"]]}
})";

/// A byte-level vocabulary with a few merges, as GGUF metadata.
GgufVocab byteLevel(const char *pre) {
  GgufVocab v;
  v.model = "gpt2";
  v.pre = pre;
  v.tokens = {"<|endoftext|>", "<|im_start|>", "<tool>"};
  v.tokenTypes = {3, 3, 4};
  uint32_t next = 256;
  for (int b = 0; b < 256; ++b) {
    bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) ||
                     (b >= 0xAE && b <= 0xFF);
    uint32_t cp = printable ? static_cast<uint32_t>(b) : next++;
    std::string s;
    tfc::rt::appendUtf8(s, cp);
    v.tokens.push_back(s);
    v.tokenTypes.push_back(1);
  }
  const char *merged[] = {"he",          "ll",        "hell",
                          "hello",       "\xC4\xA0w", "or",
                          "\xC4\xA0wor", "12",        "\xC3\x83\xC2\xA9"};
  const char *merges[] = {"h e",          "l l",        "he ll",
                          "hell o",       "\xC4\xA0 w", "o r",
                          "\xC4\xA0w or", "1 2",        "\xC3\x83 \xC2\xA9"};
  for (size_t k = 0; k < sizeof(merged) / sizeof(merged[0]); ++k) {
    v.tokens.push_back(merged[k]);
    v.tokenTypes.push_back(1);
    v.merges.push_back(merges[k]);
  }
  v.bos = 0;
  v.eos = 0;
  return v;
}

struct Fixed {
  std::unique_ptr<Tokenizer> tokenizer;
  bool byteLevel;
};

const std::vector<Fixed> &fixedTokenizers() {
  static const std::vector<Fixed> all = [] {
    std::vector<Fixed> out;
    std::string error;
    for (const char *json : {kWordPiece, kSentencePiece}) {
      auto t = Tokenizer::fromJson(json, error, "fixed.json");
      if (!t)
        broken("a fixed tokenizer does not load", error);
      out.push_back({std::move(t), false});
    }
    for (const char *pre : {"smollm", "llama-bpe", "qwen2", "default"}) {
      auto t = Tokenizer::fromGguf(byteLevel(pre), error);
      if (!t)
        broken("a fixed GGUF tokenizer does not load", error);
      out.push_back({std::move(t), true});
    }
    return out;
  }();
  return all;
}

/// Decodes `ids` whole and streamed, and checks that they agree.
void decodeBoth(const Fixed &f, const std::vector<int64_t> &ids,
                bool mustDecode) {
  const Tokenizer &t = *f.tokenizer;
  for (bool skip : {false, true}) {
    std::string text, error;
    bool ok = t.decode(ids, skip, text, error);
    if (!ok && error.empty())
      broken("a failed decode has no message", "");
    if (!ok) {
      if (mustDecode)
        broken("the ids of an encoding do not decode", error);
      continue;
    }
    if (!validUtf8(text))
      broken("decode gives invalid UTF-8", text);
    IncrementalDecoder stream(t, skip);
    std::string streamed, piece;
    bool streamOk = true;
    for (int64_t id : ids) {
      piece.clear();
      if (!stream.feed(id, piece, error)) {
        streamOk = false;
        break;
      }
      if (!validUtf8(piece))
        broken("a streamed piece is invalid UTF-8", piece);
      streamed += piece;
    }
    if (!streamOk)
      continue;
    piece.clear();
    if (!stream.finish(piece, error))
      broken("finishing a stream fails", error);
    streamed += piece;
    if (f.byteLevel && streamed != text)
      broken("the stream does not add up to decode", streamed + " vs " + text);
  }
}

void useText(std::string_view text) {
  bool valid = validUtf8(text);
  for (const Fixed &f : fixedTokenizers()) {
    const Tokenizer &t = *f.tokenizer;
    Encoding e;
    std::string error;
    bool ok = t.encode(text, true, e, error);
    if (ok != valid)
      broken(valid ? "valid UTF-8 does not encode" : "invalid UTF-8 encodes",
             error);
    if (!ok) {
      if (error.empty())
        broken("a failed encode has no message", "");
      continue;
    }
    if (e.ids.size() != e.typeIds.size() ||
        e.ids.size() != e.attentionMask.size() ||
        e.ids.size() != e.specialTokensMask.size())
      broken("the encoding's arrays differ in length", "");
    for (int64_t id : e.ids)
      if (id < 0 || static_cast<size_t>(id) >= t.vocabSize())
        broken("an id outside the vocabulary", std::to_string(id));
    decodeBoth(f, e.ids, true);
    std::string norm;
    if (!t.normalize(text, norm, error) || !validUtf8(norm))
      broken("normalize fails on valid text", error);
    std::vector<std::string> pieces;
    if (!t.preTokenize(text, pieces, error))
      broken("preTokenize fails on valid text", error);
    for (const std::string &p : pieces)
      if (!validUtf8(p))
        broken("a piece is invalid UTF-8", p);
    size_t half = text.size() / 2;
    while (half > 0 && (static_cast<unsigned char>(text[half]) & 0xC0) == 0x80)
      --half;
    if (!t.encodePair(text.substr(0, half), text.substr(half), true, e, error))
      broken("a pair of valid texts does not encode", error);
    std::vector<Encoding> batch;
    if (!t.encodeBatch({std::string(text), "a", ""}, true, batch, error))
      broken("a batch of valid texts does not encode", error);
  }
}

void useIds(std::string_view bytes) {
  std::vector<int64_t> ids;
  for (size_t i = 0; i + 1 < bytes.size(); i += 2) {
    uint16_t v =
        static_cast<uint16_t>(static_cast<unsigned char>(bytes[i]) |
                              static_cast<unsigned char>(bytes[i + 1]) << 8);
    // Mostly small ids; 0xFFxx are negative or huge ones.
    if ((v >> 8) == 0xFF)
      ids.push_back((v & 1) ? -static_cast<int64_t>(v & 0xFF)
                            : (int64_t(1) << 40) + v);
    else
      ids.push_back(v % 300);
  }
  for (const Fixed &f : fixedTokenizers())
    decodeBoth(f, ids, false);
}

void useGguf(std::string_view bytes) {
  static const char *const kPre[] = {"smollm", "gpt-2",   "llama-bpe",
                                     "qwen2",  "default", "bogus"};
  GgufVocab v;
  v.model = bytes.empty() || bytes[0] != 'L' ? "gpt2" : "llama";
  v.pre = kPre[bytes.empty() ? 0 : static_cast<unsigned char>(bytes[0]) % 6];
  std::string_view rest = bytes.empty() ? bytes : bytes.substr(1);
  size_t split = rest.find("\n\n");
  std::string_view tokens = rest.substr(0, split);
  std::string_view merges = split == std::string_view::npos
                                ? std::string_view()
                                : rest.substr(split + 2);
  size_t start = 0;
  while (start <= tokens.size()) {
    size_t end = tokens.find('\0', start);
    if (end == std::string_view::npos)
      end = tokens.size();
    v.tokens.emplace_back(tokens.substr(start, end - start));
    v.tokenTypes.push_back(
        v.tokens.back().size() > 3 && v.tokens.back()[0] == '<' ? 3 : 1);
    start = end + 1;
  }
  start = 0;
  while (start < merges.size()) {
    size_t end = merges.find('\n', start);
    if (end == std::string_view::npos)
      end = merges.size();
    v.merges.emplace_back(merges.substr(start, end - start));
    start = end + 1;
  }
  if (!v.tokens.empty())
    v.bos = static_cast<int64_t>(v.tokens.size()) - 1;
  v.addBos = !bytes.empty() && (bytes[0] & 0x40);
  std::string error;
  auto t = Tokenizer::fromGguf(v, error);
  if (!t) {
    if (error.empty())
      broken("a rejected GGUF vocabulary has no message", "");
    return;
  }
  for (const char *text :
       {"hello world 123", "<|im_start|>x", "", "\xC3\xA9\xE6\x9D\xB1 \t\n"}) {
    Encoding e;
    if (!t->encode(text, true, e, error))
      broken("a loaded GGUF tokenizer fails on valid text", error);
    std::string out;
    if (!t->decode(e.ids, false, out, error))
      broken("the ids of an encoding do not decode", error);
  }
}

std::string jsonString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\u%04x", u);
      out += hex;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

void useRegex(std::string_view bytes) {
  if (bytes.empty())
    return;
  static const char *const kBehaviors[] = {"Removed", "Isolated",
                                           "MergedWithPrevious",
                                           "MergedWithNext", "Contiguous"};
  unsigned char control = static_cast<unsigned char>(bytes[0]);
  std::string_view pattern = bytes.substr(1);
  std::string json =
      R"({"model": {"type": "WordLevel", "unk_token": "[UNK]",
          "vocab": {"[UNK]": 0, "a": 1}},
          "pre_tokenizer": {"type": "Split", "pattern": {")" +
      std::string(control & 8 ? "String" : "Regex") +
      "\": " + jsonString(pattern) + R"(}, "behavior": ")" +
      kBehaviors[control % 5] + R"(", "invert": )" +
      (control & 16 ? "true" : "false") + "}}";
  std::string error;
  auto t = Tokenizer::fromJson(json, error, "regex.json");
  if (!t) {
    if (error.empty())
      broken("a rejected regex has no message", "");
    return;
  }
  for (const char *text :
       {"a aa  aaa\t\n\r\n b", "", "\xC3\xA9\xE6\x9D\xB1\xF0\x9F\xA4\x97 x",
        "'s 'T 123 4567 --- ..."}) {
    std::vector<std::string> pieces;
    if (t->preTokenize(text, pieces, error)) {
      for (const std::string &p : pieces)
        if (!validUtf8(p))
          broken("a regex piece is invalid UTF-8", p);
    } else if (error.empty()) {
      broken("a failed regex split has no message", "");
    }
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  std::string_view bytes(reinterpret_cast<const char *>(data) + 1, size - 1);
  switch (data[0] % 5) {
  case 0: {
    std::string error;
    auto t = Tokenizer::fromJson(bytes, error, "fuzz.json");
    if (!t) {
      if (error.empty())
        broken("a rejected tokenizer.json has no message", "");
      return 0;
    }
    for (const char *text : {"Hello, world! 123", "", "\xC3\xA9 \xE6\x9D\xB1",
                             "[CLS] <s> \t\n x"}) {
      Encoding e;
      if (t->encode(text, true, e, error)) {
        std::string out;
        t->decode(e.ids, data[0] & 8, out, error);
      } else if (error.empty()) {
        broken("a failed encode has no message", "");
      }
    }
    return 0;
  }
  case 1:
    useText(bytes);
    return 0;
  case 2:
    useIds(bytes);
    return 0;
  case 3:
    useGguf(bytes);
    return 0;
  default:
    useRegex(bytes);
    return 0;
  }
}
