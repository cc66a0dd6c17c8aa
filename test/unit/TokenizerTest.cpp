//===- TokenizerTest.cpp - The runtime's tokenizers -----------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Every stage of Tokenizer.h on small tokenizer.json files written here,
// with the values Hugging Face `tokenizers` 0.23 gives for the same files
// (ids, pieces, normalized text, decoded text); the GGUF constructor; the C
// API; and each kind of malformed input with its message.
//
//===----------------------------------------------------------------------===//

#include "tfc/Text/Tokenizer/Tokenizer.h"
#include "tfc/Runtime/tfc.h"
#include "tfc/Text/Tokenizer/TokenizerSource.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace tfc::rt;

namespace {

using Ids = std::vector<int64_t>;
using Pieces = std::vector<std::string>;

std::unique_ptr<Tokenizer> load(const std::string &json) {
  std::string error;
  std::unique_ptr<Tokenizer> t = Tokenizer::fromJson(json, error, "t.json");
  EXPECT_TRUE(t) << error;
  return t;
}

/// The error of loading `json`, or "" if it loaded.
std::string loadError(const std::string &json) {
  std::string error;
  std::unique_ptr<Tokenizer> t = Tokenizer::fromJson(json, error, "t.json");
  return t ? "" : error;
}

Ids encode(const Tokenizer &t, const std::string &text, bool special = true) {
  Encoding e;
  std::string error;
  EXPECT_TRUE(t.encode(text, special, e, error)) << error;
  return e.ids;
}

std::string decode(const Tokenizer &t, const Ids &ids, bool skip = false) {
  std::string out, error;
  EXPECT_TRUE(t.decode(ids, skip, out, error)) << error;
  return out;
}

Pieces pieces(const Tokenizer &t, const std::string &text) {
  Pieces out;
  std::string error;
  EXPECT_TRUE(t.preTokenize(text, out, error)) << error;
  return out;
}

std::string normalized(const Tokenizer &t, const std::string &text) {
  std::string out, error;
  EXPECT_TRUE(t.normalize(text, out, error)) << error;
  return out;
}

/// A tokenizer.json with a WordLevel model over `vocab` (a JSON object) and
/// the given stages (JSON values or "null").
std::string wordLevel(const std::string &vocab, const std::string &pre,
                      const std::string &normalizer = "null",
                      const std::string &decoder = "null",
                      const std::string &added = "[]") {
  return R"({"version": "1.0", "added_tokens": )" + added +
         R"(, "normalizer": )" + normalizer + R"(, "pre_tokenizer": )" + pre +
         R"(, "post_processor": null, "decoder": )" + decoder +
         R"(, "model": {"type": "WordLevel", "unk_token": "[UNK]", "vocab": )" +
         vocab + "}}";
}

/// A WordLevel tokenizer only for its pre-tokenizer.
std::unique_ptr<Tokenizer> preTokenizer(const std::string &pre) {
  return load(wordLevel(R"({"[UNK]": 0})", pre));
}

std::unique_ptr<Tokenizer> normalizer(const std::string &n) {
  return load(wordLevel(R"({"[UNK]": 0})", "null", n));
}

const char *const kSplitTemplate =
    R"({"type": "Split", "pattern": {"String": "-"}, "behavior": "%s",
        "invert": false})";

std::string splitWith(const char *behavior) {
  char buffer[256];
  std::snprintf(buffer, sizeof(buffer), kSplitTemplate, behavior);
  return buffer;
}

//===----------------------------------------------------------------------===//
// A BERT-like WordPiece tokenizer
//===----------------------------------------------------------------------===//

const char *const kBert = R"({
  "version": "1.0", "truncation": null, "padding": null,
  "added_tokens": [
    {"id": 0, "content": "[UNK]", "special": true, "normalized": false,
     "lstrip": false, "rstrip": false, "single_word": false},
    {"id": 1, "content": "[CLS]", "special": true, "normalized": false,
     "lstrip": false, "rstrip": false, "single_word": false},
    {"id": 2, "content": "[SEP]", "special": true, "normalized": false,
     "lstrip": false, "rstrip": false, "single_word": false},
    {"id": 3, "content": "[PAD]", "special": true, "normalized": false,
     "lstrip": false, "rstrip": false, "single_word": false},
    {"id": 4, "content": "[MASK]", "special": true, "normalized": false,
     "lstrip": false, "rstrip": false, "single_word": false}],
  "normalizer": {"type": "BertNormalizer", "clean_text": true,
                 "handle_chinese_chars": true, "strip_accents": null,
                 "lowercase": true},
  "pre_tokenizer": {"type": "BertPreTokenizer"},
  "post_processor": {"type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
               {"Sequence": {"id": "A", "type_id": 0}},
               {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
    "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
             {"Sequence": {"id": "A", "type_id": 0}},
             {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
             {"Sequence": {"id": "B", "type_id": 1}},
             {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
    "special_tokens": {
      "[CLS]": {"id": "[CLS]", "ids": [1], "tokens": ["[CLS]"]},
      "[SEP]": {"id": "[SEP]", "ids": [2], "tokens": ["[SEP]"]}}},
  "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
  "model": {"type": "WordPiece", "unk_token": "[UNK]",
    "continuing_subword_prefix": "##", "max_input_chars_per_word": 12,
    "vocab": {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "[PAD]": 3, "[MASK]": 4,
      "un": 5, "##aff": 6, "##able": 7, "hello": 8, ",": 9, "!": 10,
      "##s": 11, "a": 12, "don": 13, "'": 14, "t": 15, "cafe": 16,
      "東": 17, "naive": 18, ".": 19, "?": 20, "world": 21, "##ly": 22,
      "n": 23, "do": 24, "not": 25}}
})";

TEST(TokenizerWordPiece, EncodesAndDecodesLikeHuggingFace) {
  auto t = load(kBert);
  ASSERT_TRUE(t);
  EXPECT_STREQ(t->modelType(), "WordPiece");
  EXPECT_EQ(t->vocabSize(), 26u);
  struct Case {
    std::string text;
    Ids ids;
    const char *decoded, *decodedSkip;
  } cases[] = {
      {"UNaffable, hello!",
       {1, 5, 6, 7, 9, 8, 10, 2},
       "[CLS] unaffable, hello! [SEP]",
       "unaffable, hello!"},
      {"H\u00e9llo  WORLD\t\u6771\u4eac",
       {1, 8, 21, 17, 0, 2},
       "[CLS] hello world \u6771 [UNK] [SEP]",
       "hello world \u6771"},
      {"don't do not.",
       {1, 13, 14, 15, 24, 25, 19, 2},
       "[CLS] don ' t do not. [SEP]",
       "don ' t do not."},
      // A word over max_input_chars_per_word is the unknown token.
      {"a aaaaaaaaaaaaa", {1, 12, 0, 2}, "[CLS] a [UNK] [SEP]", "a"},
      // Special tokens in the text are matched before the normalizer.
      {"[CLS] hello [MASK]",
       {1, 1, 8, 4, 2},
       "[CLS] [CLS] hello [MASK] [SEP]",
       "hello"},
      {"", {1, 2}, "[CLS] [SEP]", ""},
      {"Na\u00efve caf\u00e9?",
       {1, 18, 16, 20, 2},
       "[CLS] naive cafe? [SEP]",
       "naive cafe?"},
      // Controls and format characters go, so one word remains.
      {std::string("\0hello\u200bworld\x7f", 15),
       {1, 0, 2},
       "[CLS] [UNK] [SEP]",
       ""},
      {"unaffables unaffably",
       {1, 5, 6, 7, 11, 0, 2},
       "[CLS] unaffables [UNK] [SEP]",
       "unaffables"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.text);
    Ids ids = encode(*t, c.text);
    EXPECT_EQ(ids, c.ids);
    EXPECT_EQ(decode(*t, ids), c.decoded);
    EXPECT_EQ(decode(*t, ids, true), c.decodedSkip);
  }
  // Embedded NUL: the text is given with its length.
  Encoding e;
  std::string error;
  ASSERT_TRUE(t->encode(std::string("\0hello", 6), true, e, error));
  EXPECT_EQ(e.ids, (Ids{1, 8, 2}));
  EXPECT_EQ(encode(*t, "hello", false), (Ids{8}));
}

TEST(TokenizerWordPiece, PairsTruncationAndPadding) {
  auto t = load(kBert);
  ASSERT_TRUE(t);
  Encoding e;
  std::string error;
  ASSERT_TRUE(t->encodePair("hello world", "a, hello", true, e, error));
  EXPECT_EQ(e.ids, (Ids{1, 8, 21, 2, 12, 9, 8, 2}));
  EXPECT_EQ(e.typeIds, (Ids{0, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(e.specialTokensMask, (Ids{1, 0, 0, 1, 0, 0, 0, 1}));

  TruncationParams trunc;
  trunc.maxLength = 6;
  t->setTruncation(trunc);
  ASSERT_TRUE(t->encodePair("hello world", "a, hello", true, e, error));
  EXPECT_EQ(e.ids, (Ids{1, 8, 2, 12, 9, 2}));
  EXPECT_EQ(e.typeIds, (Ids{0, 0, 0, 1, 1, 1}));
  trunc.strategy = TruncationParams::Strategy::OnlySecond;
  t->setTruncation(trunc);
  ASSERT_TRUE(t->encodePair("hello world", "a, hello", true, e, error));
  EXPECT_EQ(e.ids, (Ids{1, 8, 21, 2, 12, 2}));
  EXPECT_FALSE(t->encode("hello world a a a", true, e, error));
  EXPECT_NE(error.find("only_second needs a second sequence"),
            std::string::npos)
      << error;
  trunc = TruncationParams();
  trunc.maxLength = 4;
  trunc.direction = TruncationParams::Direction::Left;
  t->setTruncation(trunc);
  EXPECT_EQ(encode(*t, "hello world , a"), (Ids{1, 9, 12, 2}));
  t->setTruncation(std::nullopt);

  PaddingParams pad;
  pad.direction = PaddingParams::Direction::Left;
  pad.padId = 3;
  pad.padToMultipleOf = 8;
  t->setPadding(pad);
  std::vector<Encoding> batch;
  ASSERT_TRUE(
      t->encodeBatch({"hello", "a a a a a a a a a"}, true, batch, error));
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch[0].ids,
            (Ids{3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 1, 8, 2}));
  EXPECT_EQ(batch[0].attentionMask,
            (Ids{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(batch[1].ids,
            (Ids{3, 3, 3, 3, 3, 1, 12, 12, 12, 12, 12, 12, 12, 12, 12, 2}));
  pad = PaddingParams();
  pad.strategy = PaddingParams::Strategy::Fixed;
  pad.length = 5;
  t->setPadding(pad);
  ASSERT_TRUE(t->encode("hello", true, e, error));
  EXPECT_EQ(e.ids, (Ids{1, 8, 2, 0, 0}));
  EXPECT_EQ(e.attentionMask, (Ids{1, 1, 1, 0, 0}));
}

TEST(TokenizerWordPiece, BertAndRobertaProcessing) {
  std::string bert = kBert;
  size_t at = bert.find("\"post_processor\"");
  size_t end = bert.find("\"decoder\"");
  std::string head = bert.substr(0, at), tail = bert.substr(end);
  auto b = load(head + R"("post_processor": {"type": "BertProcessing",
      "sep": ["[SEP]", 2], "cls": ["[CLS]", 1]}, )" +
                tail);
  ASSERT_TRUE(b);
  Encoding e;
  std::string error;
  ASSERT_TRUE(b->encodePair("hello", "a", true, e, error));
  EXPECT_EQ(e.ids, (Ids{1, 8, 2, 12, 2}));
  EXPECT_EQ(e.typeIds, (Ids{0, 0, 0, 1, 1}));
  auto r = load(head + R"("post_processor": {"type": "RobertaProcessing",
      "sep": ["[SEP]", 2], "cls": ["[CLS]", 1], "trim_offsets": true,
      "add_prefix_space": false}, )" +
                tail);
  ASSERT_TRUE(r);
  ASSERT_TRUE(r->encodePair("hello", "a", true, e, error));
  EXPECT_EQ(e.ids, (Ids{1, 8, 2, 2, 12, 2}));
  EXPECT_EQ(e.typeIds, (Ids{0, 0, 0, 0, 0, 0}));
  ASSERT_TRUE(r->encodePair("hello", "a", false, e, error));
  EXPECT_EQ(e.ids, (Ids{8, 12}));
  EXPECT_EQ(e.typeIds, (Ids{0, 0}));
  // Template pieces written as strings.
  auto s = load(head + R"("post_processor": {"type": "TemplateProcessing",
      "single": "[CLS] $A [SEP]", "pair": ["[CLS]", "$A", "[SEP]", "$B:1",
      "[SEP]:1"], "special_tokens": {
      "[CLS]": {"id": "[CLS]", "ids": [1], "tokens": ["[CLS]"]},
      "[SEP]": {"id": "[SEP]", "ids": [2], "tokens": ["[SEP]"]}}}, )" +
                tail);
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->encodePair("hello", "a", true, e, error));
  EXPECT_EQ(e.ids, (Ids{1, 8, 2, 12, 2}));
  EXPECT_EQ(e.typeIds, (Ids{0, 0, 0, 1, 1}));
}

//===----------------------------------------------------------------------===//
// Normalizers
//===----------------------------------------------------------------------===//

TEST(TokenizerNormalizers, MatchHuggingFace) {
  struct Case {
    const char *normalizer, *text, *expected;
  } cases[] = {
      {R"({"type": "BertNormalizer"})",
       "H\u00e9llo\tW\u00d6RLD\x01\u200b\ufffd\u6771\u4eac \u0130",
       "hello world \u6771  \u4eac  i"},
      {R"({"type": "BertNormalizer", "strip_accents": false})", "H\u00e9llo",
       "h\u00e9llo"},
      {R"({"type": "BertNormalizer", "lowercase": false,
          "strip_accents": true})",
       "H\u00e9llo", "Hello"},
      {R"({"type": "BertNormalizer", "clean_text": false,
          "handle_chinese_chars": false, "lowercase": false})",
       "a\x01\u6771\tb", "a\x01\u6771\tb"},
      {R"({"type": "NFC"})", "e\u0301 \u212b", "\u00e9 \u00c5"},
      {R"({"type": "NFD"})", "\u00e9", "e\u0301"},
      {R"({"type": "NFKC"})", "\ufb01 \u2460 x\u00b2 \uff21", "fi 1 x2 A"},
      {R"({"type": "NFKD"})", "\ufb01\u00e9", "fie\u0301"},
      {R"({"type": "Lowercase"})",
       "\u00c0\u00c9\u00ce \u0130 \u03a3\u0391\u03a3 \u1e9e",
       "\u00e0\u00e9\u00ee i\u0307 \u03c3\u03b1\u03c3 \u00df"},
      {R"({"type": "Strip", "strip_left": true, "strip_right": true})",
       " \t hi there \u3000\n", "hi there"},
      {R"({"type": "Strip", "strip_left": false, "strip_right": true})",
       "  hi  ", "  hi"},
      {R"({"type": "StripAccents"})", "e\u0301a\u0300\u20dd", "ea"},
      {R"({"type": "Nmt"})",
       "a\x01"
       "b\tc\u200bd\ufeff",
       "ab c d "},
      {R"({"type": "Prepend", "prepend": "\u2581"})", "hey", "\u2581hey"},
      {R"({"type": "Prepend", "prepend": "\u2581"})", "", ""},
      {R"({"type": "Replace", "pattern": {"String": " "},
          "content": "\u2581"})",
       "a b  c", "a\u2581b\u2581\u2581c"},
      {R"({"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "})",
       "a \t b\n\nc", "a b c"},
      // An empty pattern matches between every two characters.
      {R"({"type": "Replace", "pattern": {"String": ""}, "content": "-"})",
       "abc", "-a-b-c-"},
      {R"({"type": "Sequence", "normalizers": [{"type": "NFD"},
          {"type": "StripAccents"}, {"type": "Lowercase"}]})",
       "\u00c7a \u00c9t\u00e9", "ca ete"},
      {R"({"type": "ByteLevel"})", "a \u00e9", "a\u0120\u00c3\u00a9"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(std::string(c.normalizer) + " on " + c.text);
    auto t = normalizer(c.normalizer);
    ASSERT_TRUE(t);
    EXPECT_EQ(normalized(*t, c.text), c.expected);
  }
}

//===----------------------------------------------------------------------===//
// Pre-tokenizers
//===----------------------------------------------------------------------===//

TEST(TokenizerPreTokenizers, SplitBehaviors) {
  struct Case {
    const char *behavior;
    Pieces expected;
  } cases[] = {
      {"Removed", {"the", "final", "countdown"}},
      {"Isolated", {"the", "-", "final", "-", "-", "countdown"}},
      {"MergedWithPrevious", {"the-", "final-", "-", "countdown"}},
      {"MergedWithNext", {"the", "-final", "-", "-countdown"}},
      {"Contiguous", {"the", "-", "final", "--", "countdown"}},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.behavior);
    auto t = preTokenizer(splitWith(c.behavior));
    ASSERT_TRUE(t);
    EXPECT_EQ(pieces(*t, "the-final--countdown"), c.expected);
  }
}

TEST(TokenizerPreTokenizers, MatchHuggingFace) {
  struct Case {
    const char *pre, *text;
    Pieces expected;
  } cases[] = {
      {R"({"type": "Split", "pattern": {"Regex": "\\w+"},
          "behavior": "Removed", "invert": true})",
       "Hey, you!  ok",
       {"Hey", "you", "ok"}},
      {R"({"type": "Digits", "individual_digits": true})",
       "ab1234c5d",
       {"ab", "1", "2", "3", "4", "c", "5", "d"}},
      {R"({"type": "Digits", "individual_digits": false})",
       "ab1234c5d",
       {"ab", "1234", "c", "5", "d"}},
      {R"({"type": "Whitespace"})",
       "Hey man!! How's it\tgoing?",
       {"Hey", "man", "!!", "How", "'", "s", "it", "going", "?"}},
      {R"({"type": "WhitespaceSplit"})",
       " Hey  man!!\u00a0How's\u3000it ",
       {"Hey", "man!!", "How's", "it"}},
      {R"({"type": "Punctuation"})",
       "Hey, you!? $5",
       {"Hey", ",", " you", "!", "?", " ", "$", "5"}},
      {R"({"type": "Punctuation", "behavior": "MergedWithNext"})",
       "Hey, you!? $5",
       {"Hey", ", you", "!", "? ", "$5"}},
      {R"({"type": "Metaspace", "replacement": "\u2581",
          "prepend_scheme": "always", "split": true})",
       "Hey my  friend",
       {"\u2581Hey", "\u2581my", "\u2581", "\u2581friend"}},
      {R"({"type": "Metaspace", "replacement": "\u2581",
          "prepend_scheme": "never", "split": true})",
       "Hey my  friend",
       {"Hey", "\u2581my", "\u2581", "\u2581friend"}},
      {R"({"type": "Metaspace", "replacement": "\u2581",
          "add_prefix_space": true, "split": false})",
       "Hey my friend",
       {"\u2581Hey\u2581my\u2581friend"}},
      {R"({"type": "CharDelimiterSplit", "delimiter": "x"})",
       "axbxxc",
       {"a", "b", "c"}},
      {R"({"type": "ByteLevel", "add_prefix_space": true,
          "trim_offsets": true, "use_regex": true})",
       "Hello  world's 123!\n \u00e9",
       {"\u0120Hello", "\u0120", "\u0120world", "'s", "\u0120123", "!",
        "\u010a", "\u0120\u00c3\u00a9"}},
      {R"({"type": "ByteLevel", "add_prefix_space": false,
          "use_regex": false})",
       "a b",
       {"a\u0120b"}},
      {R"({"type": "BertPreTokenizer"})",
       "Hey friend!     How are you?!?",
       {"Hey", "friend", "!", "How", "are", "you", "?", "!", "?"}},
      {R"({"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"},
          {"type": "Digits", "individual_digits": true}]})",
       "ab12 c3",
       {"ab", "1", "2", "c", "3"}},
      // An empty regex matches everywhere: one piece per character.
      {R"({"type": "Split", "pattern": {"Regex": ""},
          "behavior": "Isolated", "invert": false})",
       "abc",
       {"a", "b", "c"}},
      // U+0085 is white space for Oniguruma's \s (and so for PCRE2 here).
      {R"({"type": "Split", "pattern": {"Regex": "\\s+(?!\\S)|\\s+"},
          "behavior": "MergedWithNext", "invert": false})",
       "a  b \u0085c",
       {"a", " ", " b", " ", "\u0085c"}},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(std::string(c.pre) + " on " + c.text);
    auto t = preTokenizer(c.pre);
    ASSERT_TRUE(t);
    EXPECT_EQ(pieces(*t, c.text), c.expected);
  }
}

//===----------------------------------------------------------------------===//
// BPE
//===----------------------------------------------------------------------===//

std::string bpe(const std::string &vocab, const std::string &merges,
                const std::string &options, const std::string &pre,
                const std::string &decoder = "null") {
  return R"({"version": "1.0", "added_tokens": [], "normalizer": null,
    "pre_tokenizer": )" +
         pre + R"(, "post_processor": null, "decoder": )" + decoder +
         R"(, "model": {"type": "BPE", "vocab": )" + vocab + R"(, "merges": )" +
         merges + options + "}}";
}

const char *const kSmallVocab =
    R"({"<unk>": 0, "a": 1, "b": 2, "c": 3, "ab": 4, "bc": 5, "abc": 6,
        "<0xC3>": 7, "<0xA9>": 8, "\u2581": 9, "\u2581a": 10, "d": 11})";
const char *const kWs = R"({"type": "WhitespaceSplit"})";

TEST(TokenizerBpe, ByteFallbackUnknownAndRanks) {
  auto fb = load(bpe(kSmallVocab, R"(["a b", "b c", "ab c"])",
                     R"(, "unk_token": "<unk>", "byte_fallback": true)", kWs,
                     R"({"type": "Sequence", "decoders": [
                         {"type": "ByteFallback"}, {"type": "Fuse"}]})"));
  ASSERT_TRUE(fb);
  EXPECT_EQ(encode(*fb, "abc abcabc"), (Ids{6, 6, 6}));
  EXPECT_EQ(encode(*fb, "a\u00e9bx"), (Ids{1, 7, 8, 2, 0}));
  EXPECT_EQ(decode(*fb, {1, 7, 8, 2, 0}), "a\u00e9b<unk>");
  // A lone byte is not UTF-8: one U+FFFD per byte.
  EXPECT_EQ(decode(*fb, {7, 1}), "\ufffda");
  EXPECT_EQ(encode(*fb, "bcab"), (Ids{5, 4}));
  EXPECT_EQ(encode(*fb, "zzz"), (Ids{0, 0, 0}));

  auto fuse = load(bpe(kSmallVocab, R"(["a b", "b c", "ab c"])",
                       R"(, "unk_token": "<unk>", "fuse_unk": true)", kWs));
  ASSERT_TRUE(fuse);
  EXPECT_EQ(encode(*fuse, "axyzb"), (Ids{1, 0, 2}));
  EXPECT_EQ(decode(*fuse, {1, 0, 2}), "a <unk> b");

  // The lower rank merges first: "b c" before "a b".
  auto ranks = load(bpe(kSmallVocab, R"([["b", "c"], ["a", "b"],
      ["ab", "c"]])",
                        "", "null"));
  ASSERT_TRUE(ranks);
  EXPECT_EQ(encode(*ranks, "abc"), (Ids{1, 5}));
  EXPECT_EQ(encode(*ranks, "abcd"), (Ids{1, 5, 11}));
  // Without an unknown token, unknown characters are dropped.
  EXPECT_EQ(encode(*ranks, "xbc"), (Ids{5}));
}

TEST(TokenizerUnigram, HighestScoringSegmentationAndUnknowns) {
  // Scores worked by hand: "ab" alone (-2.5) beats "a" + "b" (-3); "abc"
  // ends in "c", which no piece covers: the unknown piece scores the lowest
  // score minus 10 (-14). Consecutive unknowns fuse into one.
  const char *vocab = R"([["<unk>", 0], ["a", -1], ["b", -2], ["ab", -2.5],
                          ["bc", -4], ["<0x63>", -3]])";
  auto t = load(std::string(R"({"model": {"type": "Unigram", "unk_id": 0,
      "vocab": )") + vocab + R"(}, "pre_tokenizer": {"type": "Whitespace"}})");
  ASSERT_TRUE(t);
  EXPECT_EQ(encode(*t, "ab"), (Ids{3}));
  EXPECT_EQ(encode(*t, "abc"), (Ids{1, 4}));
  EXPECT_EQ(encode(*t, "abxx"), (Ids{3, 0}));
  EXPECT_EQ(encode(*t, "xa\u00e9zb"), (Ids{0, 1, 0, 2}));
  EXPECT_EQ(encode(*t, "b ab a"), (Ids{2, 3, 1}));
  // With byte fallback an unknown run becomes its bytes when they all have
  // pieces ("c" = <0x63>), else the unknown piece.
  auto fb = load(std::string(R"({"model": {"type": "Unigram", "unk_id": 0,
      "byte_fallback": true, "vocab": )") + vocab + "}}");
  ASSERT_TRUE(fb);
  EXPECT_EQ(encode(*fb, "abcc"), (Ids{1, 4, 5}));
  EXPECT_EQ(encode(*fb, "acc"), (Ids{1, 5, 5}));
  EXPECT_EQ(encode(*fb, "ax"), (Ids{1, 0}));
  // Without an unknown piece, a character no piece covers is an error.
  auto strict = load(std::string(R"({"model": {"type": "Unigram",
      "vocab": )") + vocab + "}}");
  ASSERT_TRUE(strict);
  Encoding e;
  std::string error;
  EXPECT_FALSE(strict->encode("ax", true, e, error));
  EXPECT_NE(error.find("Unigram: no segmentation"), std::string::npos)
      << error;
}

TEST(TokenizerBpe, PrefixSuffixAndIgnoreMerges) {
  auto p = load(bpe(R"({"a": 0, "b": 1, "c": 2, "##b": 3, "##c": 4,
      "a##b": 5, "ab": 6, "##bc": 7, "c</w>": 8, "##c</w>": 9, "abc</w>": 10,
      "##bc</w>": 11, "ab##c</w>": 12})",
                    R"(["a ##b", "##b ##c</w>", "a ##bc</w>"])",
                    R"(, "continuing_subword_prefix": "##",
                        "end_of_word_suffix": "</w>")",
                    kWs));
  ASSERT_TRUE(p);
  EXPECT_EQ(encode(*p, "abc"), (Ids{6, 9}));
  EXPECT_EQ(encode(*p, "c"), (Ids{8}));
  EXPECT_EQ(encode(*p, "ab"), (Ids{0}));

  const char *vocab = R"({"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4,
                          "bc": 5})";
  auto ignore =
      load(bpe(vocab, R"(["a b", "b c"])", R"(, "ignore_merges": true)", kWs));
  ASSERT_TRUE(ignore);
  EXPECT_EQ(encode(*ignore, "abc"), (Ids{4}));
  EXPECT_EQ(encode(*ignore, "abcabc"), (Ids{3, 2, 3, 2}));
  auto merge = load(bpe(vocab, R"(["a b", "b c"])", "", kWs));
  ASSERT_TRUE(merge);
  EXPECT_EQ(encode(*merge, "abc"), (Ids{3, 2}));
}

//===----------------------------------------------------------------------===//
// Added tokens
//===----------------------------------------------------------------------===//

TEST(TokenizerAddedTokens, StripSingleWordNormalizedLongest) {
  auto added = [](int id, const char *content, const char *flags) {
    return std::string(R"({"id": )") + std::to_string(id) +
           R"(, "content": ")" + content + R"(", "special": false,
           "normalized": false, "lstrip": false, "rstrip": false,
           "single_word": false)" +
           flags + "}";
  };
  std::string tokens = "[" + added(3, "<s>", R"(, "special": true,
      "lstrip": true, "rstrip": true)") +
                       ", " + added(7, "<S>", R"(, "special": true)") + ", " +
                       added(8, "Big", R"(, "normalized": true,
      "single_word": true)") +
                       ", " + added(9, "<s>x", "") + ", " +
                       added(10, "tool", R"(, "single_word": true)") + "]";
  auto t = load(wordLevel(R"({"[UNK]": 0, "hello": 1, "world": 2, "<s>": 3,
      "x": 4, " ": 5, "hello world": 6})",
                          kWs, R"({"type": "Lowercase"})", "null", tokens));
  ASSERT_TRUE(t);
  EXPECT_EQ(encode(*t, "hello  <s>  world"), (Ids{1, 3, 2}));
  EXPECT_EQ(decode(*t, {1, 3, 2}), "hello <s> world");
  EXPECT_EQ(decode(*t, {1, 3, 2}, true), "hello world");
  EXPECT_EQ(encode(*t, "a<s>xb"), (Ids{0, 9, 0}));
  EXPECT_EQ(encode(*t, "BIG big Bigger bigBig"), (Ids{8, 8, 0, 0}));
  // The decoded text of a normalized added token is its normalized form.
  EXPECT_EQ(decode(*t, {8}), "big");
  EXPECT_EQ(encode(*t, "<S> <s>"), (Ids{7, 3}));
  EXPECT_EQ(encode(*t, "tool tools atool tool."), (Ids{10, 0, 0, 10, 0}));
  EXPECT_TRUE(t->isSpecial(3));
  EXPECT_FALSE(t->isSpecial(8));
  EXPECT_EQ(t->tokenToId("<S>"), 7);
  EXPECT_EQ(t->idToToken(9), "<s>x");
}

TEST(TokenizerAddedTokens, IdsOfNewTokensFollowTheVocabulary) {
  // As Hugging Face: tokens outside the model's vocabulary take the next
  // ids after it, whatever the file says.
  auto t = load(wordLevel(R"({"[UNK]": 0, "hello": 1, "<s>": 2})", kWs, "null",
                          "null",
                          R"([{"id": 2, "content": "<s>", "special": true},
                              {"id": 20, "content": "new1"},
                              {"id": 21, "content": "new2",
                               "special": true}])"));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->tokenToId("<s>"), 2);
  EXPECT_EQ(t->tokenToId("new1"), 3);
  EXPECT_EQ(t->tokenToId("new2"), 4);
  EXPECT_EQ(t->vocabSize(), 5u);
  EXPECT_EQ(encode(*t, "hello new1new2"), (Ids{1, 3, 4}));
}

//===----------------------------------------------------------------------===//
// Decoders
//===----------------------------------------------------------------------===//

TEST(TokenizerDecoders, MatchHuggingFace) {
  struct Case {
    const char *decoder;
    Pieces tokens;
    const char *expected;
  } cases[] = {
      {R"({"type": "ByteLevel"})",
       {"Hello", "\u0120w", "orld", "\u0120", "\u00f0\u0141", "\u00a4",
        "\u0139", "<|x|>"},
       "Hello world \U0001F917<|x|>"},
      {R"({"type": "ByteLevel"})", {"\u00f0\u0141", "\u00a4"}, "\ufffd"},
      {R"({"type": "WordPiece", "prefix": "##", "cleanup": true})",
       {"hello", "##s", ",", "don", "'", "t", "do", "not", ".", "'", "s"},
       "hellos, don ' t do not. ' s"},
      {R"({"type": "WordPiece", "prefix": "##", "cleanup": false})",
       {"hello", "##s", ","},
       "hellos ,"},
      {R"({"type": "Metaspace", "replacement": "\u2581",
          "prepend_scheme": "always"})",
       {"\u2581Hey", "\u2581my", "\u2581\u2581friend"},
       "Hey my  friend"},
      {R"({"type": "Metaspace", "replacement": "\u2581",
          "prepend_scheme": "never"})",
       {"\u2581Hey", "\u2581my"},
       " Hey my"},
      {R"({"type": "Sequence", "decoders": [
          {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
          {"type": "ByteFallback"}, {"type": "Fuse"},
          {"type": "Strip", "content": " ", "start": 1, "stop": 0}]})",
       {"\u2581Hey", "<0xE2>", "<0x82>", "<0xAC>", "<0xFF>", "\u2581x"},
       "Hey\ufffd\ufffd\ufffd\ufffd x"},
      {R"({"type": "BPEDecoder", "suffix": "</w>"})",
       {"hel", "lo</w>", "wor", "ld</w>"},
       "hello world"},
      // Stripping more than a token holds gives the empty string (Hugging
      // Face panics).
      {R"({"type": "Strip", "content": "x", "start": 2, "stop": 1})",
       {"xxxhix", "x"},
       "xhi"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.decoder);
    // One id per distinct token.
    std::vector<std::string> distinct;
    Ids ids;
    for (const std::string &token : c.tokens) {
      size_t k = 0;
      while (k < distinct.size() && distinct[k] != token)
        ++k;
      if (k == distinct.size())
        distinct.push_back(token);
      ids.push_back(static_cast<int64_t>(k));
    }
    std::string vocab = "{";
    for (size_t k = 0; k < distinct.size(); ++k) {
      std::string escaped;
      for (char ch : distinct[k]) {
        if (ch == '"' || ch == '\\')
          escaped += '\\';
        escaped += ch;
      }
      vocab += (k ? ", \"" : "\"") + escaped + "\": " + std::to_string(k);
    }
    vocab += "}";
    auto t = load(wordLevel(vocab, "null", "null", c.decoder));
    ASSERT_TRUE(t);
    EXPECT_EQ(decode(*t, ids), c.expected);
  }
}

TEST(TokenizerDecoders, IncrementalDecoderHoldsPartialCharacters) {
  std::string error;
  auto t = Tokenizer::fromFile(
      TFC_TOKENIZER_INPUTS "/tokenizer_gpt2_pairs.json", error);
  ASSERT_TRUE(t) << error;
  // "é🤗" is <|begin_of_text|>, "Ã©", "ĠðŁ"-like pieces: the emoji's bytes
  // span two tokens.
  Ids ids = encode(*t, "\u00e9\U0001F917");
  EXPECT_EQ(ids, (Ids{0, 265, 284, 353}));
  IncrementalDecoder d(*t, /*skipSpecialTokens=*/true);
  std::vector<std::string> out;
  for (int64_t id : ids) {
    std::string piece;
    ASSERT_TRUE(d.feed(id, piece, error)) << error;
    out.push_back(piece);
  }
  EXPECT_EQ(out, (Pieces{"", "\u00e9", "", "\U0001F917"}));
  std::string rest;
  ASSERT_TRUE(d.finish(rest, error));
  EXPECT_EQ(rest, "");
  // An incomplete character at the end comes out as U+FFFD on finish.
  IncrementalDecoder e(*t, false);
  std::string piece;
  ASSERT_TRUE(e.feed(284, piece, error));
  EXPECT_EQ(piece, "");
  ASSERT_TRUE(e.finish(piece, error));
  EXPECT_EQ(piece, "\ufffd");
  EXPECT_FALSE(e.feed(1 << 30, piece, error));
  EXPECT_NE(error.find("not in the vocabulary"), std::string::npos) << error;
}

//===----------------------------------------------------------------------===//
// The GPT-2 style file of test/Runtime/Inputs
//===----------------------------------------------------------------------===//

TEST(TokenizerFile, PairMergesAndLlama3Split) {
  std::string error;
  auto t = Tokenizer::fromFile(
      TFC_TOKENIZER_INPUTS "/tokenizer_gpt2_pairs.json", error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->vocabSize(), 483u);
  EXPECT_EQ(t->tokenToId("\u0120the"), 291);
  EXPECT_EQ(t->idToToken(300), "'t");
  struct Case {
    const char *text;
    Ids ids;
    const char *decoded, *decodedSkip;
  } cases[] = {
      {"Hello, world! It's 2024.",
       {0, 41, 326, 13, 222, 88, 80, 83, 77, 69, 2, 412, 299, 222, 310, 21, 15},
       "<|begin_of_text|>Hello, world! It's 2024.",
       "Hello, world! It's 2024."},
      {"say hello world <|eot|>  now",
       {0, 84, 66, 90, 222, 480, 479, 335, 88},
       "<|begin_of_text|>say hello world<|eot|>now",
       "say hello worldnow"},
      {"I'M don'T <tool>   x",
       {0, 42, 8, 46, 421, 8, 53, 222, 482, 89},
       "<|begin_of_text|>I'M don'T <tool>x",
       "I'M don'T <tool>x"},
      {"\uff2d\uff41\uff58 caf\u00e9 \U0001F917\r\n\tend",
       {0, 481, 222, 68, 66, 328, 383, 353, 203, 200, 199, 271, 69},
       "<|begin_of_text|>\uff2d\uff41\uff58 caf\u00e9 \U0001F917\r\n\tend",
       "\uff2d\uff41\uff58 caf\u00e9 \U0001F917\r\n\tend"},
      {"", {0}, "<|begin_of_text|>", ""},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.text);
    Ids ids = encode(*t, c.text);
    EXPECT_EQ(ids, c.ids);
    EXPECT_EQ(decode(*t, ids), c.decoded);
    EXPECT_EQ(decode(*t, ids, true), c.decodedSkip);
  }
  Encoding e;
  ASSERT_TRUE(t->encodePair("abc", "d\u00e9f", true, e, error));
  EXPECT_EQ(e.ids, (Ids{0, 66, 67, 68, 0, 69, 265, 71}));
  EXPECT_EQ(e.typeIds, (Ids{0, 0, 0, 0, 0, 1, 1, 1}));
}

TEST(TokenizerFile, ConcurrentEncodesAgree) {
  // One tokenizer, several threads: the BPE word cache and the regex match
  // data are shared or per thread; every thread sees the same ids.
  std::string error;
  auto t = Tokenizer::fromFile(
      TFC_TOKENIZER_INPUTS "/tokenizer_gpt2_pairs.json", error);
  ASSERT_TRUE(t) << error;
  std::vector<std::string> texts;
  for (int k = 0; k < 200; ++k)
    texts.push_back("word" + std::to_string(k * 7919 % 1000) + " caf\u00e9 " +
                    std::string(k % 13, 'x') + " It's <|eot|> " +
                    std::to_string(k));
  std::vector<Ids> expected;
  for (const std::string &text : texts)
    expected.push_back(encode(*t, text));
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int w = 0; w < 4; ++w)
    threads.emplace_back([&, w] {
      for (int round = 0; round < 5; ++round)
        for (size_t k = 0; k < texts.size(); ++k) {
          Encoding e;
          std::string message;
          size_t i = (k * (w + 3) + round) % texts.size();
          if (!t->encode(texts[i], true, e, message) || e.ids != expected[i])
            ++mismatches[w];
        }
    });
  for (std::thread &th : threads)
    th.join();
  EXPECT_EQ(mismatches, (std::vector<int>{0, 0, 0, 0}));
}

//===----------------------------------------------------------------------===//
// GGUF metadata
//===----------------------------------------------------------------------===//

/// A byte-level vocabulary: the 256 byte characters, then merged tokens.
GgufVocab byteLevelVocab(const std::string &pre) {
  GgufVocab v;
  v.model = "gpt2";
  v.pre = pre;
  v.tokens = {"<|endoftext|>", "<|im_start|>"};
  v.tokenTypes = {3, 3};
  // The GPT-2 alphabet: printable bytes as themselves, others from U+0100.
  auto utf8 = [](uint32_t cp) {
    std::string s;
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else {
      s += static_cast<char>(0xC0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    }
    return s;
  };
  uint32_t next = 256;
  for (int b = 0; b < 256; ++b) {
    bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) ||
                     (b >= 0xAE && b <= 0xFF);
    v.tokens.push_back(utf8(printable ? b : next++));
    v.tokenTypes.push_back(1);
  }
  for (const char *t : {"he", "ll", "hell", "hello", "\u0120w", "or",
                        "\u0120wor", "\u0120world", "12"}) {
    v.tokens.push_back(t);
    v.tokenTypes.push_back(1);
  }
  v.merges = {"h e", "l l",        "he ll",       "hell o", "\u0120 w",
              "o r", "\u0120w or", "\u0120wor l", "1 2"};
  v.tokens.push_back("\u0120worl");
  v.tokenTypes.push_back(1);
  v.merges.push_back("\u0120worl d");
  v.bos = 0;
  v.eos = 0;
  return v;
}

TEST(TokenizerGguf, SmolLMDigitsAndControlTokens) {
  std::string error;
  GgufVocab v = byteLevelVocab("smollm");
  auto t = Tokenizer::fromGguf(v, error);
  ASSERT_TRUE(t) << error;
  int64_t hello = *t->tokenToId("hello");
  int64_t world = *t->tokenToId("\u0120world");
  int64_t one = *t->tokenToId("1"), two = *t->tokenToId("2");
  // Digits are split one by one before the byte-level regex ("12" exists
  // as a token but is never formed).
  EXPECT_EQ(encode(*t, "hello world12"), (Ids{hello, world, one, two}));
  EXPECT_EQ(encode(*t, "<|im_start|>hello"), (Ids{1, hello}));
  EXPECT_EQ(decode(*t, {1, hello, world}), "<|im_start|>hello world");
  EXPECT_EQ(decode(*t, {1, hello, world}, true), "hello world");
  // With add_bos_token, the BOS id starts every encoding.
  v.addBos = true;
  t = Tokenizer::fromGguf(v, error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(encode(*t, "hello"), (Ids{0, hello}));
  EXPECT_EQ(encode(*t, "hello", false), (Ids{hello}));
}

// llama.cpp's SentencePiece tokenizer of GGUF "llama" vocabularies: merges by
// score (the higher first, the leftmost of equals), spaces as U+2581, bytes
// of pieces that are no token as <0xXX>; decoding undoes it.
TEST(TokenizerGguf, SentencePieceMergesByScore) {
  const std::string sp = "\xE2\x96\x81"; // U+2581
  GgufVocab v;
  v.model = "llama";
  v.tokens = {"<unk>", "<s>", "</s>", "<0x41>", "<0xC3>", "<0xA9>", sp,
              "a",     "b",   "c",    "ab",     "bc",     "abc",  sp + "a",
              sp + "ab"};
  v.scores = {0, 0, 0, 0, 0, 0, -1, -2, -2, -2, -5, -3, -4, -6, -1};
  v.tokenTypes = {2, 3, 3, 6, 6, 6, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  v.unk = 0;
  v.bos = 1;
  v.addBos = true;
  v.addSpacePrefix = false;
  std::string error;
  auto t = Tokenizer::fromGguf(v, error);
  ASSERT_TRUE(t) << error;
  // "bc" (-3) merges before "ab" (-5), then "a" + "bc" into "abc" (-4).
  EXPECT_EQ(encode(*t, "abc"), (Ids{1, 12}));
  // " ab": U+2581 + a (-6) and a + b (-5): "ab" first, then "▁ab" (-1).
  EXPECT_EQ(encode(*t, " ab"), (Ids{1, 14}));
  // "A" is no token: its byte; "é" (C3 A9) its two bytes.
  EXPECT_EQ(encode(*t, "A\xC3\xA9", false), (Ids{3, 4, 5}));
  EXPECT_EQ(decode(*t, {1, 14, 9, 3, 4, 5}, true), " abcA\xC3\xA9");
  // With add_space_prefix (llama.cpp's default), one U+2581 is prepended
  // and decoding strips it again.
  v.addSpacePrefix.reset();
  t = Tokenizer::fromGguf(v, error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(encode(*t, "ab", false), (Ids{14}));
  EXPECT_EQ(decode(*t, {14}), "ab");
  // A byte with neither a <0xXX> nor a one-byte token is the unknown token.
  EXPECT_EQ(encode(*t, "Z", false), (Ids{6, 0}));
  // Scores order the merges: one that is not a number is an error.
  v.scores[8] = std::nanf("");
  t = Tokenizer::fromGguf(v, error);
  EXPECT_FALSE(t);
  EXPECT_NE(error.find("tokenizer.ggml.scores[8]: not a finite number"),
            std::string::npos)
      << error;
}

TEST(TokenizerGguf, WordPieceAsLlamaCpp) {
  const std::string sp = "\xE2\x96\x81"; // U+2581
  GgufVocab v;
  v.model = "bert";
  v.tokens = {"[PAD]",    "[UNK]",   "[CLS]",  "[SEP]",    sp + "cafe",
              sp + "caf", "e",       sp + ",", sp + "the", "s",
              sp + "\xE6\x9D\xB1", sp + "!", sp + "x"};
  v.tokenTypes = {3, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  v.unk = 1;
  v.bos = 2;
  v.sep = 3;
  std::string error;
  auto t = Tokenizer::fromGguf(v, error);
  ASSERT_TRUE(t) << error;
  // [CLS] ... [SEP]; lowercase, accents stripped (é is the first character
  // of its NFD), punctuation a word of its own, longest match first.
  EXPECT_EQ(encode(*t, "Caf\xC3\xA9, THE"), (Ids{2, 4, 7, 8, 3}));
  EXPECT_EQ(encode(*t, "thes", false), (Ids{8, 9}));
  // A remainder no token matches makes the whole word unknown; a CJK
  // ideograph is a word; "xs!" is "x" + "s" and "!".
  EXPECT_EQ(encode(*t, "theq \xE6\x9D\xB1xs!", false), (Ids{1, 10, 12, 9, 11}));
  // Control characters are dropped, any white space separates.
  EXPECT_EQ(encode(*t, "the\x01s\u3000the", false), (Ids{8, 9, 8}));
  EXPECT_EQ(decode(*t, {2, 4, 7, 8, 9, 3}, true), "cafe , thes");
  // With strip_accents off, the mark stays: "cafe\u0301" has no token.
  v.stripAccents = false;
  t = Tokenizer::fromGguf(v, error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(encode(*t, "cafe\xCC\x81", false), (Ids{1}));
  // Without the ids of its specials, llama.cpp's defaults (100-102) must
  // exist.
  v = GgufVocab();
  v.model = "bert";
  v.tokens = {"[PAD]", sp + "a"};
  t = Tokenizer::fromGguf(v, error);
  EXPECT_FALSE(t);
  EXPECT_NE(error.find("tokenizer.ggml.unknown_token_id: unset, and "
                       "llama.cpp's default 100 is out of range (2 tokens)"),
            std::string::npos)
      << error;
}

TEST(TokenizerGguf, FamiliesAndErrors) {
  std::string error;
  for (const char *pre : {"gpt-2", "llama-bpe", "qwen2", "default", ""}) {
    SCOPED_TRACE(pre);
    auto t = Tokenizer::fromGguf(byteLevelVocab(pre), error);
    ASSERT_TRUE(t) << error;
    EXPECT_FALSE(encode(*t, "hello world 12").empty());
  }
  // Llama-3 adds BOS unless the file says otherwise.
  auto llama = Tokenizer::fromGguf(byteLevelVocab("llama-bpe"), error);
  ASSERT_TRUE(llama);
  EXPECT_EQ(encode(*llama, "hello")[0], 0);

  auto errorOf = [&](GgufVocab v) {
    std::string message;
    auto t = Tokenizer::fromGguf(v, message);
    EXPECT_FALSE(t);
    return message;
  };
  GgufVocab v = byteLevelVocab("nonsense");
  std::string m = errorOf(v);
  EXPECT_NE(m.find("tokenizer.ggml.pre: unknown pre-tokenizer \"nonsense\""),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("smollm"), std::string::npos) << m;
  v = byteLevelVocab("smollm");
  v.model = "llama";
  m = errorOf(v);
  EXPECT_NE(m.find("tokenizer.ggml.scores: a SentencePiece vocabulary needs "
                   "one score per token"),
            std::string::npos)
      << m;
  v.model = "rwkv";
  m = errorOf(v);
  EXPECT_NE(m.find("\"rwkv\" is not supported yet"), std::string::npos) << m;
  v = byteLevelVocab("smollm");
  v.merges.push_back("nospace");
  m = errorOf(v);
  EXPECT_NE(m.find("tokenizer.ggml.merges[10]: expected \"a b\""),
            std::string::npos)
      << m;
  v = byteLevelVocab("smollm");
  v.merges.push_back("x yz");
  m = errorOf(v);
  EXPECT_NE(m.find("tokenizer.ggml.merges[10]: the token \"yz\" is not in the "
                   "vocabulary"),
            std::string::npos)
      << m;
  v = byteLevelVocab("smollm");
  v.bos = 1LL << 40;
  m = errorOf(v);
  EXPECT_NE(m.find("tokenizer.ggml.bos_token_id: the id 1099511627776 is out "
                   "of range"),
            std::string::npos)
      << m;
  v = byteLevelVocab("smollm");
  v.tokenTypes.pop_back();
  m = errorOf(v);
  EXPECT_NE(m.find("tokenizer.ggml.token_type"), std::string::npos) << m;
  v = byteLevelVocab("smollm");
  v.bos.reset();
  v.addBos = true;
  m = errorOf(v);
  EXPECT_NE(m.find("add_bos_token: true, but tokenizer.ggml.bos_token_id is "
                   "not set"),
            std::string::npos)
      << m;
  v = byteLevelVocab("smollm");
  v.tokens[5] = "\xff";
  m = errorOf(v);
  EXPECT_NE(m.find("tokenizer.ggml.tokens[5]: not valid UTF-8"),
            std::string::npos)
      << m;
  v = GgufVocab();
  v.model = "gpt2";
  m = errorOf(v);
  EXPECT_NE(m.find("tokenizer.ggml.tokens: empty"), std::string::npos) << m;
  EXPECT_NE(Tokenizer::supportedGgufPre().find("llama-bpe"), std::string::npos);
}

//===----------------------------------------------------------------------===//
// Bad input
//===----------------------------------------------------------------------===//

TEST(TokenizerErrors, MalformedFilesNameTheKey) {
  struct Case {
    std::string json;
    const char *message;
  } cases[] = {
      {"{", "t.json: invalid JSON: parse error at line 1, column 2"},
      {"[]", "t.json: expected a JSON object at the top level, found an "
             "array"},
      {R"({"version": "2.0", "model": {}})",
       "t.json: version: unknown tokenizer.json version \"2.0\""},
      {R"({"version": "1.0"})", "t.json: model: missing"},
      {R"({"model": {"type": "Unigram", "vocab": []}})",
       "t.json: model.vocab: the Unigram vocabulary is empty"},
      {R"({"model": {"type": "Unigram", "vocab": [["a", "x"]]}})",
       "t.json: model.vocab[0]: expected [piece, score], found an array"},
      {R"({"model": {"type": "Unigram", "vocab": [["a", -1.5]], "unk_id": 3}})",
       "t.json: model.vocab: unk_id 3 is not an id of the vocabulary (1 "
       "pieces)"},
      {R"({"model": {"type": "Unigram"}})",
       "t.json: model.vocab: missing (expected an array of [piece, score])"},
      {R"({"model": {"type": "Foo"}})",
       "t.json: model.type: unknown model type \"Foo\" (supported: "
       "WordPiece, BPE, WordLevel, Unigram)"},
      {R"({"model": {"type": "WordPiece", "vocab": []}})",
       "t.json: model.vocab: expected an object of token: id, found an "
       "array"},
      {R"({"model": {"type": "WordPiece", "vocab": {"a": "1"}}})",
       "t.json: model.vocab[\"a\"]: expected a non-negative integer, found "
       "a string"},
      {R"({"model": {"type": "WordPiece", "vocab": {"a": -1}}})",
       "t.json: model.vocab[\"a\"]: expected a non-negative integer, found "
       "-1"},
      {R"({"model": {"type": "WordPiece", "vocab": {"a": 4294967296}}})",
       "t.json: model.vocab[\"a\"]: the integer 4294967296 is too large"},
      {R"({"model": {"type": "BPE", "vocab": {"a": 0}}})",
       "t.json: model.merges: missing (expected an array)"},
      {R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a"]}})",
       "t.json: model.merges[0]: expected \"a b\""},
      {R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [["a"]]}})",
       "t.json: model.merges[0]: expected a pair of strings"},
      {R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [7]}})",
       "t.json: model.merges[0]: expected a string \"a b\" or a pair "
       "[\"a\", \"b\"], found an integer"},
      {R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a a"]}})",
       "t.json: model.merges[0]: the merged token \"aa\" is not in the "
       "vocabulary"},
      {R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}})",
       "t.json: model.merges[0]: the token \"b\" is not in the vocabulary"},
      {R"({"model": {"type": "BPE", "vocab": {}, "merges": [],
           "dropout": 0.1}})",
       "t.json: model.dropout: BPE dropout is random and not supported"},
      {R"({"model": {"type": "BPE", "vocab": {}, "merges": [],
           "byte_fallback": "yes"}})",
       "t.json: model.byte_fallback: expected a boolean, found a string"},
      {R"({"model": {"type": "WordLevel", "vocab": {}, "unk_token": "u"},
           "normalizer": {"type": "Sequence", "normalizers": [
             {"type": "NFC"}, {"type": "Bogus"}]}})",
       "t.json: normalizer.normalizers[1].type: unknown normalizer type "
       "\"Bogus\" (supported: BertNormalizer, NFC"},
      {R"({"model": {"type": "WordLevel", "vocab": {}, "unk_token": "u"},
           "normalizer": {"type": "Precompiled"}})",
       "t.json: normalizer.type: the Precompiled normalizer"},
      {R"({"model": {"type": "WordLevel", "vocab": {}, "unk_token": "u"},
           "normalizer": {"kind": "NFC"}})",
       "t.json: normalizer.type: missing (expected a string)"},
      {R"({"model": {"type": "WordLevel", "vocab": {}, "unk_token": "u"},
           "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
             {"type": "Split", "pattern": {"Regex": "(unclosed"},
              "behavior": "Isolated", "invert": false}]}})",
       "t.json: pre_tokenizer.pretokenizers[0].pattern.Regex: invalid regex "
       "\"(unclosed\": missing closing parenthesis"},
      {R"({"model": {"type": "WordLevel", "vocab": {}, "unk_token": "u"},
           "pre_tokenizer": {"type": "Split", "pattern": {"Glob": "*"},
             "behavior": "Isolated"}})",
       "t.json: pre_tokenizer.pattern: expected {\"String\": ...} or "
       "{\"Regex\": ...}"},
      {R"({"model": {"type": "WordLevel", "vocab": {}, "unk_token": "u"},
           "pre_tokenizer": {"type": "Split", "pattern": {"String": "a"},
             "behavior": "Sideways"}})",
       "t.json: pre_tokenizer.behavior: unknown behavior \"Sideways\""},
      {R"({"model": {"type": "WordLevel", "vocab": {}, "unk_token": "u"},
           "pre_tokenizer": {"type": "Metaspace", "replacement": "ab"}})",
       "t.json: pre_tokenizer.replacement: expected a single character, "
       "found \"ab\""},
      {R"({"model": {"type": "WordLevel", "vocab": {}, "unk_token": "u"},
           "pre_tokenizer": {"type": "UnicodeScripts"}})",
       "t.json: pre_tokenizer.type: the UnicodeScripts pre-tokenizer is not "
       "supported"},
      {R"({"model": {"type": "WordLevel", "vocab": {}, "unk_token": "u"},
           "post_processor": {"type": "TemplateProcessing", "single": ["$A",
             "[X]"], "pair": ["$A", "$B"], "special_tokens": {}}})",
       "t.json: post_processor.special_tokens: the template uses the special "
       "token \"[X]\" that special_tokens does not define"},
      {R"({"model": {"type": "WordLevel", "vocab": {}, "unk_token": "u"},
           "post_processor": {"type": "TemplateProcessing", "single":
             [{"Sequence": {"id": "C", "type_id": 0}}], "pair": []}})",
       "t.json: post_processor.single[0].Sequence.id: expected \"A\" or "
       "\"B\", found \"C\""},
      {R"({"model": {"type": "WordLevel", "vocab": {}, "unk_token": "u"},
           "post_processor": {"type": "BertProcessing", "sep": ["[SEP]"],
             "cls": ["[CLS]", 1]}})",
       "t.json: post_processor.sep: expected [token, id], found an array"},
      {R"({"model": {"type": "WordLevel", "vocab": {}, "unk_token": "u"},
           "decoder": {"type": "CTC"}})",
       "t.json: decoder.type: the CTC decoder is not supported"},
      {R"({"model": {"type": "WordLevel", "vocab": {}, "unk_token": "u"},
           "decoder": {"type": "Nope"}})",
       "t.json: decoder.type: unknown decoder type \"Nope\""},
      {R"({"model": {"type": "WordLevel", "vocab": {}, "unk_token": "u"},
           "truncation": {"max_length": -5}})",
       "t.json: truncation.max_length: expected a non-negative integer, "
       "found -5"},
      {R"({"model": {"type": "WordLevel", "vocab": {}, "unk_token": "u"},
           "padding": {"strategy": {"Fixed": "big"}}})",
       "t.json: padding.strategy.Fixed: expected a non-negative integer, "
       "found a string"},
      {R"({"model": {"type": "WordLevel", "vocab": {}, "unk_token": "u"},
           "padding": {"strategy": {"Fixed": 2097152}}})",
       "t.json: padding.strategy.Fixed: the integer 2097152 is too large (at "
       "most 1048576)"},
      {R"({"model": {"type": "WordLevel", "vocab": {}, "unk_token": "u"},
           "added_tokens": [{"content": "x"}]})",
       "t.json: added_tokens[0].id: missing"},
      {R"({"model": {"type": "WordLevel", "vocab": {}, "unk_token": "u"},
           "added_tokens": [{"id": 0, "content": 5}]})",
       "t.json: added_tokens[0].content: expected a string, found an integer"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.json);
    std::string m = loadError(c.json);
    EXPECT_NE(m.find(c.message), std::string::npos) << m;
  }
  // Stages nested without end.
  std::string deep = R"({"model": {"type": "WordLevel", "vocab": {},
      "unk_token": "u"}, "normalizer": )";
  for (int k = 0; k < 100; ++k)
    deep += R"({"type": "Sequence", "normalizers": [)";
  deep += R"({"type": "NFC"})";
  for (int k = 0; k < 100; ++k)
    deep += "]}";
  deep += "}";
  EXPECT_NE(loadError(deep).find("nested more than 32 levels deep"),
            std::string::npos)
      << loadError(deep);
}

TEST(TokenizerErrors, BadTextAndIds) {
  auto t = load(kBert);
  ASSERT_TRUE(t);
  Encoding e;
  std::string error;
  EXPECT_FALSE(t->encode("ab\xc3(", true, e, error));
  EXPECT_EQ(error, "the text is not valid UTF-8: byte 2 (0xC3) does not start "
                   "a valid character");
  EXPECT_FALSE(t->encode("\xed\xa0\x80", true, e, error)); // a surrogate
  EXPECT_FALSE(t->encode("\xc0\xaf", true, e, error));     // overlong
  std::string out;
  EXPECT_FALSE(t->decode({1, 99999999999LL}, false, out, error));
  EXPECT_NE(error.find("id 99999999999 (at index 1) is not in the "
                       "vocabulary (ids 0 to 25)"),
            std::string::npos)
      << error;
  EXPECT_FALSE(t->decode({-1}, false, out, error));
  std::string missing;
  EXPECT_FALSE(Tokenizer::fromFile("/nonexistent/tokenizer.json", missing));
  EXPECT_NE(missing.find("/nonexistent/tokenizer.json: cannot open"),
            std::string::npos)
      << missing;
  EXPECT_FALSE(Tokenizer::fromFile("/", missing));
  EXPECT_NE(missing.find("a directory without tokenizer.json"),
            std::string::npos)
      << missing;
}

//===----------------------------------------------------------------------===//
// The C API
//===----------------------------------------------------------------------===//

TEST(TokenizerCApi, EncodeDecodeAndErrors) {
  char dir[] = "/tmp/tfc-tokenizer-XXXXXX";
  ASSERT_TRUE(mkdtemp(dir));
  std::string path = std::string(dir) + "/tokenizer.json";
  {
    std::ofstream f(path);
    f << kBert;
  }
  tfc_tokenizer *tok = nullptr;
  ASSERT_EQ(tfc_tokenizer_load(dir, &tok), TFC_OK) << tfc_last_error();
  EXPECT_EQ(tfc_tokenizer_vocab_size(tok), 26u);

  const char *text = "UNaffable, hello!";
  size_t n = 0;
  ASSERT_EQ(tfc_tokenizer_encode(tok, text, strlen(text), 1, nullptr, 0, &n),
            TFC_OK);
  EXPECT_EQ(n, 8u);
  std::vector<int64_t> ids(n);
  EXPECT_EQ(tfc_tokenizer_encode(tok, text, strlen(text), 1, ids.data(), 3, &n),
            TFC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(n, 8u);
  EXPECT_NE(std::string(tfc_last_error()).find("hold 3 ids"),
            std::string::npos);
  ASSERT_EQ(tfc_tokenizer_encode(tok, text, strlen(text), 1, ids.data(),
                                 ids.size(), &n),
            TFC_OK);
  EXPECT_EQ(ids, (Ids{1, 5, 6, 7, 9, 8, 10, 2}));
  std::vector<int64_t> types(n), mask(n);
  ASSERT_EQ(tfc_tokenizer_encode_with_masks(tok, text, strlen(text), 1, nullptr,
                                            types.data(), mask.data(), n, &n),
            TFC_OK);
  EXPECT_EQ(mask, (Ids(8, 1)));
  EXPECT_EQ(tfc_tokenizer_encode(tok, nullptr, 0, 0, nullptr, 0, &n), TFC_OK);
  EXPECT_EQ(n, 0u);

  size_t len = 0;
  ASSERT_EQ(
      tfc_tokenizer_decode(tok, ids.data(), ids.size(), 1, nullptr, 0, &len),
      TFC_OK);
  std::string out(len + 1, '\0');
  EXPECT_EQ(tfc_tokenizer_decode(tok, ids.data(), ids.size(), 1, out.data(),
                                 len, &len),
            TFC_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(tfc_tokenizer_decode(tok, ids.data(), ids.size(), 1, out.data(),
                                 out.size(), &len),
            TFC_OK);
  EXPECT_STREQ(out.c_str(), "unaffable, hello!");

  int64_t id = -1;
  ASSERT_EQ(tfc_tokenizer_token_to_id(tok, "##able", &id), TFC_OK);
  EXPECT_EQ(id, 7);
  EXPECT_EQ(tfc_tokenizer_token_to_id(tok, "zzz", &id),
            TFC_ERR_INVALID_ARGUMENT);
  const char *token = nullptr;
  ASSERT_EQ(tfc_tokenizer_id_to_token(tok, 17, &token, &len), TFC_OK);
  EXPECT_STREQ(token, "\u6771");
  EXPECT_EQ(len, 3u);
  EXPECT_EQ(tfc_tokenizer_id_to_token(tok, 26, &token, nullptr),
            TFC_ERR_INVALID_ARGUMENT);

  ASSERT_EQ(tfc_tokenizer_set_padding(tok, 10), TFC_OK);
  ASSERT_EQ(tfc_tokenizer_set_truncation(tok, 4), TFC_OK);
  ids.assign(10, -1);
  ASSERT_EQ(tfc_tokenizer_encode(tok, text, strlen(text), 1, ids.data(),
                                 ids.size(), &n),
            TFC_OK);
  EXPECT_EQ(ids, (Ids{1, 5, 6, 2, 3, 3, 3, 3, 3, 3}));
  EXPECT_EQ(tfc_tokenizer_set_padding(tok, size_t(1) << 21),
            TFC_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(tfc_tokenizer_set_padding(tok, 0), TFC_OK);
  ASSERT_EQ(tfc_tokenizer_set_truncation(tok, 0), TFC_OK);

  // Bad text and ids are TFC_ERR_INPUT with a message.
  EXPECT_EQ(tfc_tokenizer_encode(tok, "\xff", 1, 1, nullptr, 0, &n),
            TFC_ERR_INPUT);
  EXPECT_NE(std::string(tfc_last_error()).find("not valid UTF-8"),
            std::string::npos);
  int64_t bad = 1000;
  EXPECT_EQ(tfc_tokenizer_decode(tok, &bad, 1, 0, nullptr, 0, &len),
            TFC_ERR_INPUT);
  EXPECT_EQ(tfc_tokenizer_encode(nullptr, "a", 1, 1, nullptr, 0, &n),
            TFC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(tfc_tokenizer_encode(tok, "a", 1, 1, nullptr, 0, nullptr),
            TFC_ERR_INVALID_ARGUMENT);

  // Streaming.
  tfc_decode_stream *stream = nullptr;
  ASSERT_EQ(tfc_decode_stream_create(tok, 1, &stream), TFC_OK);
  std::string streamed;
  for (int64_t i : {1, 5, 6, 7, 9, 8, 10, 2}) {
    const char *piece = nullptr;
    ASSERT_EQ(tfc_decode_stream_feed(stream, i, &piece, &len), TFC_OK);
    streamed += piece;
  }
  const char *rest = nullptr;
  ASSERT_EQ(tfc_decode_stream_finish(stream, &rest, nullptr), TFC_OK);
  streamed += rest;
  EXPECT_EQ(streamed, "unaffable, hello!");
  EXPECT_EQ(tfc_decode_stream_feed(stream, -5, &rest, nullptr), TFC_ERR_INPUT);
  tfc_decode_stream_free(stream);
  tfc_tokenizer_free(tok);

  // Load errors: I/O, then a malformed file.
  EXPECT_EQ(tfc_tokenizer_load("/nonexistent-dir/x.json", &tok), TFC_ERR_IO);
  EXPECT_EQ(tok, nullptr);
  {
    std::ofstream f(path);
    f << R"({"model": {"type": "BPE", "vocab": {}}})";
  }
  EXPECT_EQ(tfc_tokenizer_load(path.c_str(), &tok), TFC_ERR_INVALID_MODEL);
  EXPECT_NE(std::string(tfc_last_error()).find("model.merges: missing"),
            std::string::npos)
      << tfc_last_error();
  EXPECT_EQ(tfc_tokenizer_load(nullptr, &tok), TFC_ERR_INVALID_ARGUMENT);
  tfc_tokenizer_free(nullptr);
  unlink(path.c_str());
  rmdir(dir);
}

} // namespace

TEST(TokenizerSource, EndOfSequenceIdsOfADirectory) {
  char dir[] = "/tmp/tfc-eos-XXXXXX";
  ASSERT_TRUE(mkdtemp(dir));
  std::string d = dir;
  auto write = [&](const std::string &name, const std::string &text) {
    std::ofstream(d + "/" + name) << text;
  };
  std::vector<int64_t> ids;
  std::string error;
  // No file states one: empty, not an error.
  EXPECT_TRUE(readEndOfSequenceIds(d, ids, error)) << error;
  EXPECT_TRUE(ids.empty());
  write("config.json", R"({"model_type": "llama", "eos_token_id": 2})");
  EXPECT_TRUE(readEndOfSequenceIds(d, ids, error)) << error;
  EXPECT_EQ(ids, (std::vector<int64_t>{2}));
  // generation_config.json comes first, and may list several.
  write("generation_config.json", R"({"eos_token_id": [128001, 128009]})");
  EXPECT_TRUE(readEndOfSequenceIds(d + "/config.json", ids, error)) << error;
  EXPECT_EQ(ids, (std::vector<int64_t>{128001, 128009}));
  // A generation_config.json without the key defers to config.json.
  write("generation_config.json", R"({"do_sample": false})");
  EXPECT_TRUE(readEndOfSequenceIds(d, ids, error)) << error;
  EXPECT_EQ(ids, (std::vector<int64_t>{2}));
  write("generation_config.json", R"({"eos_token_id": "</s>"})");
  EXPECT_FALSE(readEndOfSequenceIds(d, ids, error));
  EXPECT_NE(error.find("generation_config.json: eos_token_id must be a token "
                       "id or a list of them, found \"</s>\""),
            std::string::npos)
      << error;
  write("generation_config.json", "{not json");
  EXPECT_FALSE(readEndOfSequenceIds(d, ids, error));
  EXPECT_NE(error.find("generation_config.json: invalid JSON: parse error at "
                       "line 1, column 3"),
            std::string::npos)
      << error;
  for (const char *f : {"config.json", "generation_config.json"})
    std::remove((d + "/" + f).c_str());
  rmdir(dir);
}
