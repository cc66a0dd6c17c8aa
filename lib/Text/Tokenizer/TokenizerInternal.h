//===- TokenizerInternal.h - The pieces of a tokenizer ----------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The stages of Tokenizer.h (normalizers, pre-tokenizers, models,
// post-processors, decoders), the added vocabulary, and the Unicode, regex
// and hash-map helpers they share. Text is carried as UTF-8 strings without
// offsets (the runtime returns ids only), so every stage works on plain
// strings. Private to libtfcrt.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_LIB_TEXT_TOKENIZER_TOKENIZERINTERNAL_H
#define TFC_LIB_TEXT_TOKENIZER_TOKENIZERINTERNAL_H

#include "tfc/Formats/Utf8.h"
#include "tfc/Text/Tokenizer/Tokenizer.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace tfc::rt::tok {

//===----------------------------------------------------------------------===//
// UTF-8 and Unicode properties (TokenizerUnicode.cpp)
//===----------------------------------------------------------------------===//

/// The offset of the first byte of `s` that does not start a well-formed
/// UTF-8 sequence (overlong forms, surrogates and values past U+10FFFF are
/// ill-formed), or std::string_view::npos.
size_t findInvalidUtf8(std::string_view s);

/// The length of the sequence a lead byte starts (1 for other bytes).
inline size_t utf8Length(unsigned char lead) {
  return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}

/// Decodes the character at s[i] of well-formed UTF-8 and moves i past it.
inline uint32_t nextChar(std::string_view s, size_t &i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) {
    ++i;
    return c;
  }
  size_t n = utf8Length(c);
  uint32_t cp = c & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07);
  for (size_t k = 1; k < n && i + k < s.size(); ++k)
    cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  i += n;
  return cp;
}

using ::tfc::rt::appendUtf8;
/// `s` in double quotes for messages, escaped, at most `max` bytes of it.
std::string quoteText(std::string_view s, size_t max = 80);
size_t countChars(std::string_view s);

/// Unicode general categories (utf8proc's numbering).
int category(uint32_t cp);
/// The White_Space property: the Z categories plus U+0009-U+000D and U+0085
/// (what Rust's char::is_whitespace, Oniguruma's \s and Python's str.split
/// agree on).
bool isWhitespace(uint32_t cp);
/// Categories Nd, Nl, No (Rust's char::is_numeric).
bool isNumeric(uint32_t cp);
/// Categories Pc, Pd, Ps, Pe, Pi, Pf, Po.
bool isPunctuation(uint32_t cp);
/// Hugging Face's punctuation for BERT: ASCII punctuation (symbols included)
/// or a P category.
inline bool isBertPunctuation(uint32_t cp) {
  return (cp >= 0x21 && cp <= 0x2F) || (cp >= 0x3A && cp <= 0x40) ||
         (cp >= 0x5B && cp <= 0x60) || (cp >= 0x7B && cp <= 0x7E) ||
         (cp >= 0x80 && isPunctuation(cp));
}
/// Categories Mn, Mc, Me.
bool isMark(uint32_t cp);
bool isNonspacingMark(uint32_t cp);
/// Categories Cc, Cf, Co (BertNormalizer's control characters).
bool isOtherControl(uint32_t cp);
/// The CJK ideograph blocks BERT pads with spaces.
bool isChineseChar(uint32_t cp);
/// Unicode word characters (Alphabetic, marks, Nd, Pc, Join_Control), as
/// Rust's and Oniguruma's \w.
bool isWordChar(uint32_t cp);

/// The simple (one character) lowercase mapping of UnicodeData.txt.
uint32_t simpleLowercase(uint32_t cp);
/// The first character of the canonical decomposition of `cp` (NFD), or
/// `cp`: llama.cpp's unicode_cpts_normalize_nfd, which keeps only it.
uint32_t firstOfNfd(uint32_t cp);
/// Categories Sm, Sc, Sk, So.
bool isSymbol(uint32_t cp);

/// Appends the full lowercase mapping of `cp` (U+0130 becomes two
/// characters, as in Rust's char::to_lowercase).
void appendLowercase(std::string &out, uint32_t cp);

enum class NormalForm { NFC, NFD, NFKC, NFKD };
/// Normalises well-formed UTF-8 in place.
void normalizeForm(std::string &s, NormalForm form);

/// `bytes` as UTF-8 with every maximal ill-formed subsequence replaced by
/// U+FFFD (Rust's String::from_utf8_lossy).
std::string lossyUtf8(std::string_view bytes);

/// The byte-level alphabet of GPT-2: a printable character for each byte.
const std::string &byteToChars(unsigned char b);
/// The byte of a byte-level character, or -1.
int charToByte(uint32_t cp);

//===----------------------------------------------------------------------===//
// Regular expressions (PCRE2, TokenizerUnicode.cpp)
//===----------------------------------------------------------------------===//

/// A compiled pattern. Patterns of tokenizer.json are Oniguruma (Ruby
/// syntax): they are translated so that \s, \S, \w, \W, \d, \h mean what
/// they mean there, and ^/$ match at line boundaries.
class Regex {
public:
  /// `literal`: the pattern is a plain string (a "String" pattern).
  static std::unique_ptr<Regex> compile(std::string_view pattern, bool literal,
                                        std::string &error);
  ~Regex();
  Regex(const Regex &) = delete;
  Regex &operator=(const Regex &) = delete;

  /// The matches in `text` (well-formed UTF-8), as Oniguruma's find_iter
  /// gives them (an empty match right after the previous match is skipped
  /// by one character). Fails only when the match limits are exceeded.
  bool findAll(std::string_view text,
               std::vector<std::pair<size_t, size_t>> &out,
               std::string &error) const;
  /// Whether the pattern matches at the start of `text` (anchored).
  bool matchesPrefix(std::string_view text) const;

  const std::string &source() const { return source_; }

private:
  Regex() = default;
  void *code = nullptr;
  std::string source_;
};

/// The Oniguruma pattern rewritten for PCRE2.
std::string translateOnigPattern(std::string_view pattern);

//===----------------------------------------------------------------------===//
// Strings to ids
//===----------------------------------------------------------------------===//

/// An open-addressing map from strings to ids with lookups by string_view
/// (no allocation per lookup).
class StringMap {
public:
  /// Inserts or overwrites.
  void set(std::string_view key, int32_t id);
  /// The id of `key`, or -1.
  int32_t find(std::string_view key) const;
  size_t size() const { return count; }
  template <typename F> void forEach(F &&f) const {
    for (const Slot &s : slots)
      if (s.id >= 0)
        f(std::string_view(arena.data() + s.offset, s.length), s.id);
  }

private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t offset = 0, length = 0;
    int32_t id = -1;
  };
  void grow();
  std::vector<Slot> slots;
  std::string arena;
  size_t count = 0;
};

/// A model's vocabulary: token strings and ids in both directions.
class Vocab {
public:
  /// Ids must be in [0, 2^31); an id given twice keeps its first token for
  /// id-to-token. `what` names the JSON key in messages.
  bool build(std::vector<std::pair<std::string, int64_t>> entries,
             const std::string &what, std::string &error);
  int32_t find(std::string_view token) const { return map.find(token); }
  const std::string *token(int64_t id) const;
  size_t size() const { return map.size(); }
  /// One past the largest id.
  int64_t idLimit() const { return limit; }
  const StringMap &strings() const { return map; }

private:
  StringMap map;
  std::vector<std::string> byId;
  std::vector<bool> present;
  std::unordered_map<int64_t, std::string> sparse;
  int64_t limit = 0;
};

//===----------------------------------------------------------------------===//
// Pipeline stages
//===----------------------------------------------------------------------===//

/// A piece of the input between the stages: text, whether it is an added
/// token (its id) and whether it starts at the beginning of the input.
struct Split {
  std::string text;
  bool atOrigin = false;
};

class Normalizer {
public:
  virtual ~Normalizer();
  virtual bool normalize(std::string &s, std::string &error) const = 0;
};

class PreTokenizer {
public:
  virtual ~PreTokenizer();
  /// Splits each of `splits` further (empty pieces are dropped).
  virtual bool apply(std::vector<Split> &splits, std::string &error) const = 0;
};

class Model {
public:
  virtual ~Model();
  virtual const char *type() const = 0;
  /// Appends the ids of one pre-tokenized word.
  virtual bool tokenize(std::string_view word, std::vector<int32_t> &ids,
                        std::string &error) const = 0;
  virtual const Vocab &vocab() const = 0;
};

/// An encoding between the stages.
struct Enc {
  std::vector<int32_t> ids;
  std::vector<int32_t> typeIds;
  std::vector<uint8_t> special;
  void append(const Enc &other);
};

class PostProcessor {
public:
  virtual ~PostProcessor();
  virtual size_t addedTokens(bool isPair) const = 0;
  /// Hugging Face's process_encodings: the encodings (one or two) become
  /// the parts that are concatenated.
  virtual void process(std::vector<Enc> &encodings,
                       bool addSpecialTokens) const = 0;
};

class Decoder {
public:
  virtual ~Decoder();
  virtual bool decodeChain(std::vector<std::string> &tokens,
                           std::string &error) const = 0;
};

enum class SplitBehavior {
  Removed,
  Isolated,
  MergedWithPrevious,
  MergedWithNext,
  Contiguous
};

/// A stretch of text and whether the pattern matched it.
struct Match {
  size_t begin, end;
  bool isMatch;
};
/// The matches of a regex covering `text` (Hugging Face's find_matches).
bool regexMatches(const Regex &re, std::string_view text,
                  std::vector<Match> &out, std::string &error);
/// The pieces of `text` that `behavior` keeps, in order (empty ones too).
void splitByBehavior(const std::vector<Match> &matches, SplitBehavior behavior,
                     bool invert,
                     std::vector<std::pair<size_t, size_t>> &pieces);

//===----------------------------------------------------------------------===//
// Normalizers (TokenizerNormalize.cpp)
//===----------------------------------------------------------------------===//

struct BertNormalizer final : Normalizer {
  bool cleanText = true, handleChineseChars = true, lowercase = true;
  std::optional<bool> stripAccents;
  bool normalize(std::string &s, std::string &error) const override;
};

struct UnicodeNormalizer final : Normalizer {
  NormalForm form;
  explicit UnicodeNormalizer(NormalForm form) : form(form) {}
  bool normalize(std::string &s, std::string &error) const override;
};

struct LowercaseNormalizer final : Normalizer {
  bool normalize(std::string &s, std::string &error) const override;
};

struct StripNormalizer final : Normalizer {
  bool left = true, right = true;
  bool normalize(std::string &s, std::string &error) const override;
};

struct StripAccentsNormalizer final : Normalizer {
  bool normalize(std::string &s, std::string &error) const override;
};

struct NmtNormalizer final : Normalizer {
  bool normalize(std::string &s, std::string &error) const override;
};

struct PrependNormalizer final : Normalizer {
  std::string prepend;
  bool normalize(std::string &s, std::string &error) const override;
};

struct ReplaceNormalizer final : Normalizer {
  std::unique_ptr<Regex> pattern;
  std::string content;
  bool normalize(std::string &s, std::string &error) const override;
};

struct ByteLevelNormalizer final : Normalizer {
  bool normalize(std::string &s, std::string &error) const override;
};

struct SequenceNormalizer final : Normalizer {
  std::vector<std::unique_ptr<Normalizer>> normalizers;
  bool normalize(std::string &s, std::string &error) const override;
};

//===----------------------------------------------------------------------===//
// Pre-tokenizers (TokenizerPreTokenize.cpp)
//===----------------------------------------------------------------------===//

struct BertPreTokenizer final : PreTokenizer {
  bool apply(std::vector<Split> &splits, std::string &error) const override;
};

/// GPT-2's regex, as the ByteLevel pre-tokenizer uses it.
extern const char *const kGpt2Pattern;

struct ByteLevelPreTokenizer final : PreTokenizer {
  bool addPrefixSpace = true, useRegex = true;
  std::unique_ptr<Regex> regex; // kGpt2Pattern when useRegex
  bool apply(std::vector<Split> &splits, std::string &error) const override;
};

struct SplitPreTokenizer final : PreTokenizer {
  std::unique_ptr<Regex> pattern;
  SplitBehavior behavior = SplitBehavior::Isolated;
  bool invert = false;
  bool apply(std::vector<Split> &splits, std::string &error) const override;
};

struct DigitsPreTokenizer final : PreTokenizer {
  bool individualDigits = false;
  bool apply(std::vector<Split> &splits, std::string &error) const override;
};

struct WhitespacePreTokenizer final : PreTokenizer {
  std::unique_ptr<Regex> regex; // \w+|[^\w\s]+
  bool apply(std::vector<Split> &splits, std::string &error) const override;
};

struct WhitespaceSplitPreTokenizer final : PreTokenizer {
  bool apply(std::vector<Split> &splits, std::string &error) const override;
};

struct PunctuationPreTokenizer final : PreTokenizer {
  SplitBehavior behavior = SplitBehavior::Isolated;
  bool apply(std::vector<Split> &splits, std::string &error) const override;
};

struct CharDelimiterPreTokenizer final : PreTokenizer {
  uint32_t delimiter = ' ';
  bool apply(std::vector<Split> &splits, std::string &error) const override;
};

enum class PrependScheme { First, Never, Always };

struct MetaspacePreTokenizer final : PreTokenizer {
  uint32_t replacement = 0x2581;
  PrependScheme prependScheme = PrependScheme::Always;
  bool split = true;
  bool apply(std::vector<Split> &splits, std::string &error) const override;
};

/// llama.cpp's normalisation and word split for WordPiece vocabularies of
/// GGUF files (tokenizer.ggml.model "bert"; llm_tokenizer_wpm_session's
/// preprocess): with stripAccents each character becomes the first of its
/// NFD and marks are dropped; NUL, U+FFFD and C* characters are dropped;
/// whitespace separates words; punctuation, ASCII symbols and CJK
/// ideographs are words of their own; with lowercase, the simple lowercase
/// mapping.
struct GgufWpmPreTokenizer final : PreTokenizer {
  bool lowercase = true, stripAccents = true;
  bool apply(std::vector<Split> &splits, std::string &error) const override;
};

struct SequencePreTokenizer final : PreTokenizer {
  std::vector<std::unique_ptr<PreTokenizer>> preTokenizers;
  bool apply(std::vector<Split> &splits, std::string &error) const override;
};

//===----------------------------------------------------------------------===//
// Models (TokenizerModels.cpp)
//===----------------------------------------------------------------------===//

class WordPieceModel final : public Model {
public:
  /// Fails when the unknown token is not in the vocabulary.
  bool init(Vocab vocab, std::string unkToken, std::string prefix,
            size_t maxInputCharsPerWord, std::string &error);
  const char *type() const override { return "WordPiece"; }
  bool tokenize(std::string_view word, std::vector<int32_t> &ids,
                std::string &error) const override;
  const Vocab &vocab() const override { return vocab_; }

private:
  Vocab vocab_;
  /// The tokens that start with the prefix, without it.
  StringMap continuing;
  std::string prefix;
  int32_t unkId = -1;
  size_t maxChars = 100;
};

/// llama.cpp's WordPiece of GGUF "bert" vocabularies (word-initial tokens
/// start with U+2581, continuations have no prefix): U+2581 + the word is
/// split greedily into the longest tokens from the left; a word with a
/// remainder no token matches is the unknown token.
class WpmModel final : public Model {
public:
  bool init(Vocab vocab, int32_t unkId, std::string &error);
  const char *type() const override { return "WPM"; }
  bool tokenize(std::string_view word, std::vector<int32_t> &ids,
                std::string &error) const override;
  const Vocab &vocab() const override { return vocab_; }

private:
  Vocab vocab_;
  int32_t unkId = -1;
  size_t maxTokenBytes = 0;
};

class WordLevelModel final : public Model {
public:
  bool init(Vocab vocab, std::string unkToken, std::string &error);
  const char *type() const override { return "WordLevel"; }
  bool tokenize(std::string_view word, std::vector<int32_t> &ids,
                std::string &error) const override;
  const Vocab &vocab() const override { return vocab_; }

private:
  Vocab vocab_;
  std::string unkToken;
  int32_t unkId = -1;
};

/// SentencePiece's unigram model as Hugging Face tokenizers runs it: the
/// segmentation of a word into pieces with the highest total score
/// (Viterbi over every vocabulary piece that starts at each character); a
/// character no piece covers is the unknown piece with the lowest score
/// minus 10, consecutive unknowns fused into one; with `byte_fallback`
/// an unknown piece becomes its bytes' <0xXX> tokens when they all exist.
class UnigramModel final : public Model {
public:
  bool init(std::vector<std::pair<std::string, double>> pieces,
            int64_t unkId, bool byteFallback, const std::string &what,
            std::string &error);
  const char *type() const override { return "Unigram"; }
  bool tokenize(std::string_view word, std::vector<int32_t> &ids,
                std::string &error) const override;
  const Vocab &vocab() const override { return vocab_; }

private:
  Vocab vocab_;
  std::vector<double> scores; // by id
  int32_t unkId = -1;
  bool byteFallback = false;
  double unkScore = 0;
  size_t maxPieceBytes = 0;
};

/// llama.cpp's SentencePiece tokenizer of GGUF files (tokenizer.ggml.model
/// "llama": Llama 2, Gemma): a word starts as its UTF-8 characters, and the
/// adjacent pair whose concatenation is a token with the highest score
/// merges first (ties: the leftmost pair), until no pair is a token; each
/// remaining piece is its token, or its bytes' <0xXX> tokens (the byte as a
/// one-character token where there is none, else the unknown token).
class SpmModel final : public Model {
public:
  bool init(Vocab vocab, std::vector<float> scores, int32_t unkId,
            std::string &error);
  const char *type() const override { return "SPM"; }
  bool tokenize(std::string_view word, std::vector<int32_t> &ids,
                std::string &error) const override;
  const Vocab &vocab() const override { return vocab_; }

private:
  Vocab vocab_;
  std::vector<float> scores; // by id
  int32_t unkId = -1;
  int32_t byteIds[256];
};

class BpeModel final : public Model {
public:
  struct Options {
    std::optional<std::string> unkToken, continuingSubwordPrefix,
        endOfWordSuffix;
    bool fuseUnk = false, byteFallback = false, ignoreMerges = false;
  };
  BpeModel();
  ~BpeModel() override;
  /// Every merge's parts and result must be in the vocabulary; `what`
  /// names the merges in messages.
  bool init(Vocab vocab,
            const std::vector<std::pair<std::string, std::string>> &merges,
            Options options, const std::string &what, std::string &error);
  const char *type() const override { return "BPE"; }
  bool tokenize(std::string_view word, std::vector<int32_t> &ids,
                std::string &error) const override;
  const Vocab &vocab() const override { return vocab_; }

private:
  struct Cache;
  bool mergeWord(std::string_view word, std::vector<int32_t> &ids,
                 std::string &error) const;
  int32_t charId(std::string_view ch, bool first, bool last) const;
  Vocab vocab_;
  Options options;
  /// (left << 32 | right) -> (rank << 32 | new id), open addressing.
  std::vector<uint64_t> mergeKeys, mergeValues;
  uint64_t mergeMask = 0;
  bool lookupMerge(int32_t left, int32_t right, uint32_t &rank,
                   int32_t &id) const;
  /// Single characters below U+0800 without prefix or suffix: their ids.
  std::vector<int32_t> smallChars;
  int32_t unkId = -1;
  std::unique_ptr<Cache> cache;
};

//===----------------------------------------------------------------------===//
// Post-processors (TokenizerProcessors.cpp)
//===----------------------------------------------------------------------===//

struct SpecialTokenSpec {
  std::vector<int32_t> ids;
};

struct TemplatePiece {
  bool isSequence = false;
  bool sequenceB = false; // for sequences: $B
  std::string specialId;  // for special tokens: the key of specialTokens
  int32_t typeId = 0;
};

struct TemplateProcessor final : PostProcessor {
  std::vector<TemplatePiece> single, pair;
  std::unordered_map<std::string, SpecialTokenSpec> specialTokens;
  size_t addedTokens(bool isPair) const override;
  void process(std::vector<Enc> &encodings,
               bool addSpecialTokens) const override;
};

/// BertProcessing (roberta = false) and RobertaProcessing.
struct BertProcessor final : PostProcessor {
  bool roberta = false;
  int32_t cls = 0, sep = 0;
  size_t addedTokens(bool isPair) const override;
  void process(std::vector<Enc> &encodings,
               bool addSpecialTokens) const override;
};

/// ByteLevel as a post-processor: offsets only, so nothing for ids.
struct PassThroughProcessor final : PostProcessor {
  size_t addedTokens(bool) const override { return 0; }
  void process(std::vector<Enc> &, bool) const override {}
};

struct SequenceProcessor final : PostProcessor {
  std::vector<std::unique_ptr<PostProcessor>> processors;
  size_t addedTokens(bool isPair) const override;
  void process(std::vector<Enc> &encodings,
               bool addSpecialTokens) const override;
};

//===----------------------------------------------------------------------===//
// Decoders (TokenizerDecode.cpp)
//===----------------------------------------------------------------------===//

struct ByteLevelDecoder final : Decoder {
  bool decodeChain(std::vector<std::string> &tokens,
                   std::string &error) const override;
};

struct WordPieceDecoder final : Decoder {
  std::string prefix = "##";
  bool cleanup = true;
  bool decodeChain(std::vector<std::string> &tokens,
                   std::string &error) const override;
};

struct MetaspaceDecoder final : Decoder {
  uint32_t replacement = 0x2581;
  PrependScheme prependScheme = PrependScheme::Always;
  bool decodeChain(std::vector<std::string> &tokens,
                   std::string &error) const override;
};

struct ReplaceDecoder final : Decoder {
  std::unique_ptr<Regex> pattern;
  std::string content;
  bool decodeChain(std::vector<std::string> &tokens,
                   std::string &error) const override;
};

struct ByteFallbackDecoder final : Decoder {
  bool decodeChain(std::vector<std::string> &tokens,
                   std::string &error) const override;
};

struct FuseDecoder final : Decoder {
  bool decodeChain(std::vector<std::string> &tokens,
                   std::string &error) const override;
};

struct StripDecoder final : Decoder {
  uint32_t content = ' ';
  size_t start = 0, stop = 0;
  bool decodeChain(std::vector<std::string> &tokens,
                   std::string &error) const override;
};

struct BpeSuffixDecoder final : Decoder {
  std::string suffix = "</w>";
  bool decodeChain(std::vector<std::string> &tokens,
                   std::string &error) const override;
};

struct SequenceDecoder final : Decoder {
  std::vector<std::unique_ptr<Decoder>> decoders;
  bool decodeChain(std::vector<std::string> &tokens,
                   std::string &error) const override;
};

//===----------------------------------------------------------------------===//
// Added tokens
//===----------------------------------------------------------------------===//

struct AddedToken {
  std::string content;
  bool singleWord = false, lstrip = false, rstrip = false, normalized = true,
       special = false;
};

/// A piece after the added tokens are extracted: an added token (id >= 0)
/// or text for the pre-tokenizer.
struct Piece {
  std::string text;
  int32_t id = -1;
  bool atOrigin = false;
};

class AddedVocabulary {
public:
  /// Hugging Face's add_tokens: ids come from the vocabulary (added tokens
  /// first, then the model), else the next free one.
  bool add(const std::vector<AddedToken> &tokens, const Model &model,
           const Normalizer *normalizer, std::string &error);
  /// Splits on the non-normalized tokens, normalizes the rest, splits on
  /// the normalized tokens.
  bool extractAndNormalize(std::string_view text, const Normalizer *normalizer,
                           std::vector<Piece> &out, std::string &error) const;
  int32_t find(std::string_view content) const;
  /// The text decode uses for an added id (the normalized form for
  /// normalized tokens), or null.
  const std::string *decodeText(int64_t id) const;
  const AddedToken *token(int64_t id) const;
  bool isSpecialContent(std::string_view content) const;
  size_t size() const { return byId.size(); }
  int64_t idLimit() const { return limit; }

private:
  struct Entry {
    AddedToken token;
    int32_t id;
    std::string pattern;
  };
  struct Trie {
    struct Node {
      std::vector<std::pair<unsigned char, int32_t>> next;
      int32_t entry = -1;
    };
    std::vector<Node> nodes;
    bool firstByte[256] = {};
    bool empty() const { return nodes.size() <= 1; }
    void build(const std::vector<Entry> &entries, bool normalized);
    /// The longest entry matching at text[i], or -1; `end` gets its end.
    int32_t longestAt(std::string_view text, size_t i, size_t &end) const;
  };
  void findMatches(
      std::string_view text, const Trie &trie,
      std::vector<std::pair<std::pair<size_t, size_t>, int32_t>> &out) const;
  std::vector<Entry> entries;
  std::unordered_map<std::string, int32_t> byContent;
  std::unordered_map<int32_t, size_t> byId;
  std::unordered_set<std::string> specialContents;
  Trie raw, normalizedTrie;
  int64_t limit = 0;
};

} // namespace tfc::rt::tok

namespace tfc::rt {

struct Tokenizer::Impl {
  std::unique_ptr<tok::Normalizer> normalizer;
  std::unique_ptr<tok::PreTokenizer> preTokenizer;
  std::unique_ptr<tok::Model> model;
  std::unique_ptr<tok::PostProcessor> postProcessor;
  std::unique_ptr<tok::Decoder> decoder;
  tok::AddedVocabulary added;
  std::optional<TruncationParams> truncation;
  std::optional<PaddingParams> padding;

  bool encodeSequence(std::string_view text, int32_t typeId, tok::Enc &out,
                      std::string &error) const;
  bool postProcess(tok::Enc first, std::optional<tok::Enc> second,
                   bool addSpecialTokens, Encoding &out,
                   std::string &error) const;
  std::optional<int32_t> tokenToId(std::string_view token) const;
  const std::string *idToToken(int64_t id) const;
  int64_t idLimit() const;
};

/// Makes a Tokenizer from its stages (the loaders' access to the private
/// constructor).
struct TokenizerBuilder {
  static std::unique_ptr<Tokenizer> make(std::unique_ptr<Tokenizer::Impl> impl);
};

} // namespace tfc::rt

#endif // TFC_LIB_TEXT_TOKENIZER_TOKENIZERINTERNAL_H
