//===- Tokenizer.h - Hugging Face and GGUF tokenizers -------------*- C++
//-*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The runtime's tokenizers: text to token ids and back, with the semantics of
// Hugging Face `tokenizers` (tokenizer.json) so that the ids match what the
// model was trained on:
//
//   added tokens (special or not, lstrip/rstrip/single_word/normalized),
//   matched before the model, longest first
//   -> normalizer (BertNormalizer, NFC/NFD/NFKC/NFKD, Lowercase, Strip,
//      StripAccents, Prepend, Replace, Nmt, ByteLevel, Sequence)
//   -> pre-tokenizer (BertPreTokenizer, ByteLevel, Split, Digits, Whitespace,
//      WhitespaceSplit, Punctuation, Metaspace, CharDelimiterSplit, Sequence)
//   -> model (WordPiece, BPE (byte-level, byte_fallback, ignore_merges),
//      WordLevel)
//   -> truncation -> post-processor (TemplateProcessing, BertProcessing,
//      RobertaProcessing, ByteLevel, Sequence) -> padding
//
// and back through the decoder (ByteLevel, WordPiece, Metaspace, Replace,
// ByteFallback, Fuse, Strip, BPEDecoder, Sequence). A tokenizer can also be
// built from the tokenizer metadata of a GGUF file (GgufVocab, the byte-level
// BPE vocabularies of llama.cpp's "gpt2" model).
//
// Unicode properties, normalisation and case mapping come from utf8proc and
// regular expressions from PCRE2 (patterns written for Oniguruma, as in
// tokenizer.json, are translated: \s is White_Space, \w is Unicode word).
// Every malformed input gives an error message, never a crash: a bad file
// names the file, the JSON key path and what was expected.
//
// Thread safety: a Tokenizer is immutable after construction except for
// setTruncation/setPadding; encode and decode may run concurrently.
//
// Plain C++17 with no LLVM dependency: this is part of libtfcrt.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TEXT_TOKENIZER_TOKENIZER_H
#define TFC_TEXT_TOKENIZER_TOKENIZER_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tfc::rt {

/// The tokenizer metadata of a GGUF file (the `tokenizer.ggml.*` keys), as a
/// GGUF reader hands it over.
struct GgufVocab {
  /// tokenizer.ggml.model: "gpt2" (byte-level BPE), "llama"
  /// (SentencePiece merges by score, as llama.cpp's SPM tokenizer) and
  /// "bert" (llama.cpp's WordPiece) are supported; others are an error.
  std::string model;
  /// tokenizer.ggml.pre: the pre-tokenizer of the model's family ("smollm",
  /// "llama-bpe", "qwen2", "gpt-2", "default", ...; see supportedGgufPre).
  std::string pre;
  /// tokenizer.ggml.tokens: the vocabulary, id = index.
  std::vector<std::string> tokens;
  /// tokenizer.ggml.token_type, one per token or empty: 1 normal,
  /// 2 unknown, 3 control, 4 user defined, 5 unused, 6 byte. Control and
  /// unknown tokens are special added tokens (matched in the text, skipped
  /// by decode with skipSpecialTokens); user-defined ones are added tokens.
  std::vector<int32_t> tokenTypes;
  /// tokenizer.ggml.merges, "a b" (ranked by position).
  std::vector<std::string> merges;
  /// tokenizer.ggml.scores, one per token or empty ("llama" models).
  std::vector<float> scores;
  /// tokenizer.ggml.add_space_prefix ("llama" models; unset: true, as
  /// llama.cpp).
  std::optional<bool> addSpacePrefix;
  /// tokenizer.ggml.{bos,eos,unknown,padding,seperator}_token_id (sic:
  /// llama.cpp's spelling).
  std::optional<int64_t> bos, eos, unk, pad, sep;
  /// tokenizer.ggml.normalizer.{lowercase,strip_accents} ("bert" models;
  /// unset: true, and strip_accents follows lowercase, as llama.cpp).
  std::optional<bool> lowercase, stripAccents;
  /// tokenizer.ggml.add_bos_token / add_eos_token (unset: llama.cpp's
  /// default for the pre-tokenizer, false except for "llama-bpe").
  std::optional<bool> addBos, addEos;
};

/// The result of encoding one input.
struct Encoding {
  std::vector<int64_t> ids;
  /// 0 for the first sequence, 1 for the second (as the post-processor
  /// says), the padding type id for padding.
  std::vector<int64_t> typeIds;
  /// 1 for real tokens, 0 for padding.
  std::vector<int64_t> attentionMask;
  /// 1 for the tokens the post-processor added and for padding.
  std::vector<int64_t> specialTokensMask;
};

struct TruncationParams {
  enum class Strategy { LongestFirst, OnlyFirst, OnlySecond };
  enum class Direction { Right, Left };
  /// The most tokens of an encoding, special tokens included.
  size_t maxLength = 512;
  Strategy strategy = Strategy::LongestFirst;
  Direction direction = Direction::Right;
  /// Kept for the file's sake; overflowing tokens are not returned.
  size_t stride = 0;
};

/// The longest padding a file or a caller may ask for (Fixed lengths and
/// multiples), so that a bad file cannot make encodings of any size.
constexpr size_t kMaxPadding = size_t(1) << 20;

struct PaddingParams {
  enum class Strategy { BatchLongest, Fixed };
  enum class Direction { Right, Left };
  Strategy strategy = Strategy::BatchLongest;
  /// The length for Strategy::Fixed.
  size_t length = 0;
  Direction direction = Direction::Right;
  /// 0: none.
  size_t padToMultipleOf = 0;
  int64_t padId = 0;
  int64_t padTypeId = 0;
  std::string padToken = "[PAD]";
};

class Tokenizer {
public:
  struct Impl;

  /// Loads a tokenizer.json file, or the tokenizer.json of a directory.
  /// Returns null and sets `error` (naming the file and the JSON key path)
  /// on failure.
  static std::unique_ptr<Tokenizer> fromFile(const std::string &path,
                                             std::string &error);
  /// Parses the text of a tokenizer.json; `what` names it in messages.
  static std::unique_ptr<Tokenizer>
  fromJson(std::string_view json, std::string &error,
           const std::string &what = "tokenizer.json");
  /// Builds a byte-level BPE tokenizer from GGUF metadata, with the
  /// pre-tokenizer, normalizer and BOS/EOS handling that the family's
  /// tokenizer.json has (llama.cpp's table of `pre` types).
  static std::unique_ptr<Tokenizer> fromGguf(const GgufVocab &vocab,
                                             std::string &error);
  /// The `pre` values fromGguf accepts, comma-separated.
  static std::string supportedGgufPre();

  ~Tokenizer();
  Tokenizer(const Tokenizer &) = delete;
  Tokenizer &operator=(const Tokenizer &) = delete;

  /// Encodes UTF-8 text (invalid UTF-8 is an error naming the byte offset).
  /// With addSpecialTokens the post-processor adds its tokens ([CLS] ...
  /// [SEP], BOS); truncation and padding apply as configured.
  bool encode(std::string_view text, bool addSpecialTokens, Encoding &out,
              std::string &error) const;
  /// Encodes a pair of sequences (the pair template, type ids 0 and 1).
  bool encodePair(std::string_view first, std::string_view second,
                  bool addSpecialTokens, Encoding &out,
                  std::string &error) const;
  /// Encodes each input as `encode` does, then pads the batch (to the
  /// longest with BatchLongest), as Hugging Face's encode_batch.
  bool encodeBatch(const std::vector<std::string> &texts, bool addSpecialTokens,
                   std::vector<Encoding> &out, std::string &error) const;

  /// The normalizer's output for `text` (Hugging Face's normalize_str).
  bool normalize(std::string_view text, std::string &out,
                 std::string &error) const;
  /// The pieces the model sees: added tokens cut out (kept as their text),
  /// the rest normalized and pre-tokenized.
  bool preTokenize(std::string_view text, std::vector<std::string> &pieces,
                   std::string &error) const;

  /// Decodes ids to text. An id outside the vocabulary is an error.
  bool decode(const std::vector<int64_t> &ids, bool skipSpecialTokens,
              std::string &out, std::string &error) const;

  /// The id of a token of the vocabulary (added tokens included).
  std::optional<int64_t> tokenToId(std::string_view token) const;
  /// The token string of an id (as stored: byte-level tokens are in the
  /// byte-to-unicode alphabet), or nullopt.
  std::optional<std::string> idToToken(int64_t id) const;
  /// The same as a pointer into the vocabulary, valid as long as the
  /// tokenizer (the C API hands it out), or null.
  const std::string *tokenText(int64_t id) const;
  /// The number of ids: the model's vocabulary with the added tokens.
  size_t vocabSize() const;
  /// Whether `id` is a special added token.
  bool isSpecial(int64_t id) const;

  /// "WordPiece", "BPE" or "WordLevel".
  const char *modelType() const;

  const std::optional<TruncationParams> &truncation() const;
  const std::optional<PaddingParams> &padding() const;
  /// Not thread safe with respect to concurrent encodes. Padding lengths
  /// are capped at kMaxPadding.
  void setTruncation(std::optional<TruncationParams> params);
  void setPadding(std::optional<PaddingParams> params);

  const Impl &impl() const { return *impl_; }

private:
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  friend struct TokenizerBuilder;
};

/// Decodes a stream of ids one at a time (generation), returning only text
/// that will not change and never a partial UTF-8 character: bytes of an
/// incomplete character are held until it completes. The same algorithm as
/// Hugging Face's DecodeStream (decode a window of ids and emit the part
/// past the previous text), so spaces and cleanups match `decode`.
class IncrementalDecoder {
public:
  IncrementalDecoder(const Tokenizer &tokenizer, bool skipSpecialTokens);

  /// Feeds one id and appends the new text (possibly none) to `out`.
  bool feed(int64_t id, std::string &out, std::string &error);
  /// Appends what is held back (an incomplete character at the end of the
  /// stream comes out as U+FFFD) and resets the stream.
  bool finish(std::string &out, std::string &error);

private:
  const Tokenizer &tokenizer;
  bool skipSpecialTokens;
  std::vector<int64_t> ids;
  std::string prefix;
  size_t prefixIndex = 0;
};

} // namespace tfc::rt

#endif // TFC_TEXT_TOKENIZER_TOKENIZER_H
