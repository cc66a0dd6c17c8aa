//===- TokenizerGguf.cpp - Tokenizers from GGUF metadata ------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// A GGUF file describes its tokenizer by tokenizer.ggml.model ("gpt2": a
// byte-level BPE vocabulary with merges) and tokenizer.ggml.pre, the name of
// the family whose pre-tokenization it needs (llama.cpp's table in
// llama-vocab.cpp). Each supported name maps to what the family's
// tokenizer.json does, with the stages of tokenizer.json:
//
//   gpt-2, phi-2, mpt, olmo   ByteLevel(add_prefix_space=false, use_regex)
//   smollm, starcoder, refact, codeshell, exaone, minerva-7b
//                             Sequence[Digits(individual_digits),
//                                      ByteLevel(false, use_regex)]
//   llama-bpe, llama3, llama-v3, falcon3
//                             Sequence[Split(Llama-3 regex, Isolated),
//                                      ByteLevel(false, no regex)],
//                             ignore_merges, BOS added by default
//   qwen2, deepseek-r1-qwen   Sequence[Split(Qwen2 regex, Isolated),
//                                      ByteLevel(false, no regex)]
//                             (tokenizer.json adds NFC; llama.cpp does not)
//   and tokenizer.ggml.model "llama": SentencePiece merges by score
//                             (SpmModel), spaces as U+2581
//   default (or empty)        llama.cpp's default: Split on punctuation
//                             runs, GPT-2's regex, digit runs and groups of
//                             three ASCII digits, then ByteLevel
//
// Control and unknown tokens become special added tokens, user-defined ones
// added tokens; add_bos/add_eos become a TemplateProcessing.
//
//===----------------------------------------------------------------------===//

#include "TokenizerInternal.h"

#include <cmath>

using namespace tfc::rt;
using namespace tfc::rt::tok;

namespace {

const char *const kLlama3Pattern =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char *const kQwen2Pattern =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char *const kDefaultPatterns[] = {
    "[\\p{P}\\$\\+<=>\\^~\\|]+",
    ("'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|"
     "\\s+(?!\\S)"),
    "\\p{N}+", "[0-9][0-9][0-9]"};

enum class Family { Gpt2, SmolLM, Llama3, Qwen2, Default };

/// Texts llama.cpp takes for end-of-generation tokens whatever their type in
/// the file, making them control tokens (llama-vocab.cpp, 0.3.36): matched
/// in the text as special tokens (Qwen2.5's vocabulary has a normal "</s>",
/// which llama.cpp's tokenizer and so tfc's keep whole).
const char *const kEndOfGenerationTexts[] = {
    "<|eot_id|>", "<|im_end|>",     "<|end|>",     "<|return|>",
    "<|call|>",   "<|flush|>",      "<|calls|>",   "<end_of_turn>",
    "<|endoftext|>", "</s>",        "<|eom_id|>",  "<EOT>",
    "_<EOT>",     "[EOT]",          "[EOS]",       "<|end_of_text|>",
    "<end_of_utterance>", "<eos>",  "<turn|>",     "<|tool_response>",
    "<\xEF\xBD\234end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>",
    "[e~["};

const struct {
  const char *name;
  Family family;
} kFamilies[] = {
    {"gpt-2", Family::Gpt2},       {"phi-2", Family::Gpt2},
    {"mpt", Family::Gpt2},         {"olmo", Family::Gpt2},
    {"smollm", Family::SmolLM},    {"starcoder", Family::SmolLM},
    {"refact", Family::SmolLM},    {"codeshell", Family::SmolLM},
    {"exaone", Family::SmolLM},    {"minerva-7b", Family::SmolLM},
    {"llama-bpe", Family::Llama3}, {"llama3", Family::Llama3},
    {"llama-v3", Family::Llama3},  {"falcon3", Family::Llama3},
    {"qwen2", Family::Qwen2},      {"deepseek-r1-qwen", Family::Qwen2},
    {"default", Family::Default},
};

std::unique_ptr<ByteLevelPreTokenizer> byteLevel(bool useRegex,
                                                 std::string &error) {
  auto p = std::make_unique<ByteLevelPreTokenizer>();
  p->addPrefixSpace = false;
  p->useRegex = useRegex;
  if (useRegex && !(p->regex = Regex::compile(kGpt2Pattern, false, error)))
    return nullptr;
  return p;
}

std::unique_ptr<SplitPreTokenizer> split(const char *pattern,
                                         std::string &error) {
  auto p = std::make_unique<SplitPreTokenizer>();
  p->behavior = SplitBehavior::Isolated;
  if (!(p->pattern = Regex::compile(pattern, false, error)))
    return nullptr;
  return p;
}

/// The decoder of vocabularies whose pieces carry spaces as U+2581
/// (SentencePiece, llama.cpp's WordPiece): U+2581 back to spaces, byte
/// pieces to bytes when `byteFallback`, fused, and the first space
/// stripped when `stripFirst` (the one the encoder prepended).
std::unique_ptr<Decoder> metaspaceDecoder(bool byteFallback, bool stripFirst,
                                          std::string &error) {
  auto dec = std::make_unique<SequenceDecoder>();
  auto back = std::make_unique<ReplaceDecoder>();
  back->pattern = Regex::compile("\xE2\x96\x81", /*literal=*/true, error);
  back->content = " ";
  if (!back->pattern)
    return nullptr;
  dec->decoders.push_back(std::move(back));
  if (byteFallback)
    dec->decoders.push_back(std::make_unique<ByteFallbackDecoder>());
  dec->decoders.push_back(std::make_unique<FuseDecoder>());
  if (stripFirst) {
    auto strip = std::make_unique<StripDecoder>();
    strip->start = 1;
    dec->decoders.push_back(std::move(strip));
  }
  return dec;
}

} // namespace

std::string Tokenizer::supportedGgufPre() {
  std::string out;
  for (const auto &f : kFamilies)
    out += std::string(out.empty() ? "" : ", ") + f.name;
  return out;
}

std::unique_ptr<Tokenizer> Tokenizer::fromGguf(const GgufVocab &v,
                                               std::string &error) {
  const std::string what = "GGUF tokenizer";
  auto fail = [&](const std::string &key, const std::string &message) {
    error = what + ": " + key + ": " + message;
    return nullptr;
  };
  bool spm = v.model == "llama";
  bool wpm = v.model == "bert";
  if (v.model != "gpt2" && !spm && !wpm)
    return fail("tokenizer.ggml.model",
                quoteText(v.model) +
                    " is not supported yet (supported: \"gpt2\", byte-level "
                    "BPE; \"llama\", SentencePiece; \"bert\", WordPiece)");
  if (spm && v.scores.size() != v.tokens.size())
    return fail("tokenizer.ggml.scores",
                "a SentencePiece vocabulary needs one score per token");
  for (size_t i = 0; spm && i < v.scores.size(); ++i)
    if (!std::isfinite(v.scores[i])) // merges are ordered by score
      return fail("tokenizer.ggml.scores[" + std::to_string(i) + "]",
                  "not a finite number");
  std::optional<Family> family;
  if (spm || wpm) {
    family = Family::Default; // unused: pre-tokenized by the model's rules
  } else if (v.pre.empty()) {
    family = Family::Default; // llama.cpp's fallback for old files
  } else {
    for (const auto &f : kFamilies)
      if (v.pre == f.name)
        family = f.family;
  }
  if (!family)
    return fail("tokenizer.ggml.pre",
                "unknown pre-tokenizer " + quoteText(v.pre) +
                    " (supported: " + supportedGgufPre() + ")");
  size_t n = v.tokens.size();
  if (n == 0)
    return fail("tokenizer.ggml.tokens", "empty");
  if (n >= static_cast<size_t>(INT32_MAX))
    return fail("tokenizer.ggml.tokens", "too many tokens");
  if (!v.tokenTypes.empty() && v.tokenTypes.size() != n)
    return fail("tokenizer.ggml.token_type",
                std::to_string(v.tokenTypes.size()) + " types for " +
                    std::to_string(n) + " tokens");
  for (size_t i = 0; i < n; ++i) {
    size_t bad = findInvalidUtf8(v.tokens[i]);
    if (bad != std::string::npos)
      return fail("tokenizer.ggml.tokens[" + std::to_string(i) + "]",
                  "not valid UTF-8 at byte " + std::to_string(bad));
  }
  struct IdKey {
    const char *key;
    const std::optional<int64_t> *id;
  };
  for (const IdKey &k : {IdKey{"tokenizer.ggml.bos_token_id", &v.bos},
                         IdKey{"tokenizer.ggml.eos_token_id", &v.eos},
                         IdKey{"tokenizer.ggml.unknown_token_id", &v.unk},
                         IdKey{"tokenizer.ggml.padding_token_id", &v.pad}})
    if (*k.id && (**k.id < 0 || static_cast<uint64_t>(**k.id) >= n))
      return fail(k.key, "the id " + std::to_string(**k.id) +
                             " is out of range (" + std::to_string(n) +
                             " tokens)");

  std::vector<std::pair<std::string, int64_t>> entries;
  entries.reserve(n);
  for (size_t i = 0; i < n; ++i)
    entries.emplace_back(v.tokens[i], static_cast<int64_t>(i));
  Vocab vocab;
  std::string message;
  if (!vocab.build(std::move(entries), "tokenizer.ggml.tokens", message)) {
    error = what + ": " + message;
    return nullptr;
  }
  std::vector<std::pair<std::string, std::string>> merges;
  if (!spm && !wpm)
    merges.reserve(v.merges.size());
  for (size_t i = 0; i < v.merges.size(); ++i) {
    const std::string &m = v.merges[i];
    // As llama.cpp: the first space after the first character separates.
    size_t space = m.size() > 1 ? m.find(' ', 1) : std::string::npos;
    if (space == std::string::npos || space + 1 >= m.size())
      return fail("tokenizer.ggml.merges[" + std::to_string(i) + "]",
                  "expected \"a b\", found " + quoteText(m));
    merges.emplace_back(m.substr(0, space), m.substr(space + 1));
  }

  auto impl = std::make_unique<Impl>();
  // llama.cpp's defaults for "bert" vocabularies: [UNK] 100, [CLS] 101,
  // [SEP] 102, added around every text.
  int64_t wpmCls = v.bos.value_or(101), wpmSep = v.sep.value_or(102);
  if (wpm) {
    int64_t unk = v.unk.value_or(100);
    for (auto [key, id] : {std::pair<const char *, int64_t>{
                               "tokenizer.ggml.unknown_token_id", unk},
                           {"tokenizer.ggml.bos_token_id", wpmCls},
                           {"tokenizer.ggml.seperator_token_id", wpmSep}})
      if (id < 0 || static_cast<uint64_t>(id) >= n)
        return fail(key, "unset, and llama.cpp's default " +
                             std::to_string(id) + " is out of range (" +
                             std::to_string(n) + " tokens)");
    auto model = std::make_unique<WpmModel>();
    if (!model->init(std::move(vocab), static_cast<int32_t>(unk), message)) {
      error = what + ": " + message;
      return nullptr;
    }
    impl->model = std::move(model);
    auto pre = std::make_unique<GgufWpmPreTokenizer>();
    pre->lowercase = v.lowercase.value_or(true);
    pre->stripAccents = v.stripAccents.value_or(pre->lowercase);
    impl->preTokenizer = std::move(pre);
    // Word-initial tokens carry U+2581: a space before each, none first.
    if (!(impl->decoder = metaspaceDecoder(false, true, message))) {
      error = what + ": " + message;
      return nullptr;
    }
  }
  if (spm) {
    // llama.cpp: spaces become U+2581 (and one is prepended with
    // add_space_prefix), the whole text between special tokens is one
    // piece, merged by score; decoding undoes it.
    auto model = std::make_unique<SpmModel>();
    if (!model->init(std::move(vocab), v.scores,
                     v.unk ? static_cast<int32_t>(*v.unk) : -1, message)) {
      error = what + ": " + message;
      return nullptr;
    }
    impl->model = std::move(model);
    bool prefix = v.addSpacePrefix.value_or(true);
    auto norm = std::make_unique<SequenceNormalizer>();
    if (prefix) {
      auto p = std::make_unique<PrependNormalizer>();
      p->prepend = " ";
      norm->normalizers.push_back(std::move(p));
    }
    auto replace = std::make_unique<ReplaceNormalizer>();
    replace->pattern = Regex::compile(" ", /*literal=*/true, message);
    replace->content = "\xE2\x96\x81";
    if (!replace->pattern) {
      error = what + ": " + message;
      return nullptr;
    }
    norm->normalizers.push_back(std::move(replace));
    impl->normalizer = std::move(norm);
    if (!(impl->decoder = metaspaceDecoder(true, prefix, message))) {
      error = what + ": " + message;
      return nullptr;
    }
  }
  if (!spm && !wpm) {
    BpeModel::Options options;
    options.ignoreMerges = *family == Family::Llama3;
    auto model = std::make_unique<BpeModel>();
    if (!model->init(std::move(vocab), merges, options, "tokenizer.ggml.merges",
                     message)) {
      error = what + ": " + message;
      return nullptr;
    }
    impl->model = std::move(model);

    std::unique_ptr<PreTokenizer> pre;
    auto seq = std::make_unique<SequencePreTokenizer>();
    switch (*family) {
    case Family::Gpt2:
      pre = byteLevel(true, message);
      break;
    case Family::SmolLM: {
      auto digits = std::make_unique<DigitsPreTokenizer>();
      digits->individualDigits = true;
      seq->preTokenizers.push_back(std::move(digits));
      seq->preTokenizers.push_back(byteLevel(true, message));
      break;
    }
    case Family::Llama3:
    case Family::Qwen2:
      seq->preTokenizers.push_back(split(
          *family == Family::Llama3 ? kLlama3Pattern : kQwen2Pattern, message));
      seq->preTokenizers.push_back(byteLevel(false, message));
      break;
    case Family::Default:
      for (const char *p : kDefaultPatterns)
        seq->preTokenizers.push_back(split(p, message));
      seq->preTokenizers.push_back(byteLevel(false, message));
      break;
    }
    for (const auto &p : seq->preTokenizers)
      if (!p) {
        error = what + ": " + message;
        return nullptr;
      }
    if (!pre && !seq->preTokenizers.empty())
      pre = std::move(seq);
    if (!pre) {
      error = what + ": " + message;
      return nullptr;
    }
    impl->preTokenizer = std::move(pre);
    // No NFC for qwen2, although its tokenizer.json has one: llama.cpp
    // tokenizes GGUF files without it, and the ids fed to a model from a
    // .gguf are llama.cpp's (e + U+0301 stays two pieces; checked on
    // 2,500 strings by test/Import/large-models.test).
    impl->decoder = std::make_unique<ByteLevelDecoder>();
  }

  // Control (3) and unknown (2) tokens are special, user-defined (4) ones
  // plain added tokens; all match the raw text.
  std::vector<AddedToken> added;
  for (size_t i = 0; i < v.tokenTypes.size(); ++i) {
    int32_t type = v.tokenTypes[i];
    for (const char *t : kEndOfGenerationTexts)
      if (v.tokens[i] == t)
        type = 3;
    if (type != 2 && type != 3 && type != 4)
      continue;
    if (v.tokens[i].empty())
      continue;
    AddedToken t;
    t.content = v.tokens[i];
    t.special = type != 4;
    t.normalized = false;
    added.push_back(std::move(t));
  }
  if (!impl->added.add(added, *impl->model, impl->normalizer.get(), message)) {
    error = what + ": " + message;
    return nullptr;
  }

  // WordPiece: llama.cpp adds [CLS] and [SEP] whatever add_*_token say.
  bool addBos = wpm || v.addBos.value_or(*family == Family::Llama3);
  bool addEos = wpm || v.addEos.value_or(false);
  if (addBos && !v.bos && !wpm)
    return fail("tokenizer.ggml.add_bos_token",
                "true, but tokenizer.ggml.bos_token_id is not set");
  if (addEos && !v.eos && !wpm)
    return fail("tokenizer.ggml.add_eos_token",
                "true, but tokenizer.ggml.eos_token_id is not set");
  if (addBos || addEos) {
    auto t = std::make_unique<TemplateProcessor>();
    auto special = [&](const char *name, int32_t typeId) {
      TemplatePiece p;
      p.specialId = name;
      p.typeId = typeId;
      return p;
    };
    auto sequence = [](bool b, int32_t typeId) {
      TemplatePiece p;
      p.isSequence = true;
      p.sequenceB = b;
      p.typeId = typeId;
      return p;
    };
    if (addBos)
      t->specialTokens["BOS"].ids = {
          static_cast<int32_t>(wpm ? wpmCls : *v.bos)};
    if (addEos)
      t->specialTokens["EOS"].ids = {
          static_cast<int32_t>(wpm ? wpmSep : *v.eos)};
    for (int s = 0; s < 2; ++s) {
      if (addBos)
        t->pair.push_back(special("BOS", s));
      t->pair.push_back(sequence(s == 1, s));
      if (addEos)
        t->pair.push_back(special("EOS", s));
    }
    if (addBos)
      t->single.push_back(special("BOS", 0));
    t->single.push_back(sequence(false, 0));
    if (addEos)
      t->single.push_back(special("EOS", 0));
    impl->postProcessor = std::move(t);
  }
  return TokenizerBuilder::make(std::move(impl));
}
