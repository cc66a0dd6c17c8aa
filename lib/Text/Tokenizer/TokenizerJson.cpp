//===- TokenizerJson.cpp - Loading tokenizer.json -------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Reads a Hugging Face tokenizer.json (serialization version 1.0) with
// nlohmann-json and builds the stages of TokenizerInternal.h. Every key is
// checked for its type; a message names the file, the key path
// (model.merges[12], pre_tokenizer.pretokenizers[0].pattern.Regex) and what
// was expected. Unknown stage types are an error listing the supported
// ones. Unknown keys are ignored, as Hugging Face does.
//
//===----------------------------------------------------------------------===//

#include "TokenizerInternal.h"

#include "tfc/Formats/Files.h"
#include "tfc/Formats/JsonDocument.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <sstream>
#include <sys/stat.h>

using namespace tfc::rt;
using namespace tfc::rt::tok;
using json = nlohmann::json;

namespace {

constexpr int kMaxDepth = 32;

std::string quote(std::string_view s) { return quoteText(s); }

std::string join(const char *const *names) {
  std::string out;
  for (; *names; ++names)
    out += std::string(out.empty() ? "" : ", ") + *names;
  return out;
}

struct Loader {
  std::string file;
  std::string &error;

  bool fail(const std::string &path, const std::string &message) {
    error = file + ": " + (path.empty() ? "" : path + ": ") + message;
    return false;
  }
  bool wrongType(const std::string &path, const char *expected,
                 const json &found) {
    return fail(path, std::string("expected ") + expected + ", found " +
                          tfc::rt::jsonKindName(found));
  }

  static std::string key(const std::string &path, const char *name) {
    return path.empty() ? name : path + "." + name;
  }
  static std::string index(const std::string &path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
  }

  /// The member `name` of `obj`, or null when absent.
  static const json *member(const json &obj, const char *name) {
    auto it = obj.find(name);
    return it == obj.end() ? nullptr : &*it;
  }

  bool object(const json &v, const std::string &path) {
    return v.is_object() || wrongType(path, "an object", v);
  }

  /// A boolean member; absent or null keeps `out`.
  bool optBool(const json &obj, const std::string &path, const char *name,
               bool &out) {
    const json *v = member(obj, name);
    if (!v || v->is_null())
      return true;
    if (!v->is_boolean())
      return wrongType(key(path, name), "a boolean", *v);
    out = v->get<bool>();
    return true;
  }

  bool string(const json &v, const std::string &path, std::string &out) {
    if (!v.is_string())
      return wrongType(path, "a string", v);
    out = v.get<std::string>();
    return true;
  }

  /// A required string member.
  bool reqString(const json &obj, const std::string &path, const char *name,
                 std::string &out) {
    const json *v = member(obj, name);
    if (!v)
      return fail(key(path, name), "missing (expected a string)");
    return string(*v, key(path, name), out);
  }

  /// A string member; absent or null gives nullopt.
  bool optString(const json &obj, const std::string &path, const char *name,
                 std::optional<std::string> &out) {
    const json *v = member(obj, name);
    if (!v || v->is_null())
      return true;
    std::string s;
    if (!string(*v, key(path, name), s))
      return false;
    out = std::move(s);
    return true;
  }

  /// A non-negative integer at most `max`.
  bool integer(const json &v, const std::string &path, uint64_t max,
               uint64_t &out) {
    if (!v.is_number_unsigned() &&
        !(v.is_number_integer() && v.get<int64_t>() >= 0)) {
      const char *what = "a non-negative integer";
      if (v.is_number_integer())
        return fail(path, std::string("expected ") + what + ", found " +
                              std::to_string(v.get<int64_t>()));
      return wrongType(path, what, v);
    }
    out = v.get<uint64_t>();
    if (out > max)
      return fail(path, "the integer " + std::to_string(out) +
                            " is too large (at most " + std::to_string(max) +
                            ")");
    return true;
  }

  bool optInteger(const json &obj, const std::string &path, const char *name,
                  uint64_t max, uint64_t &out) {
    const json *v = member(obj, name);
    if (!v || v->is_null())
      return true;
    return integer(*v, key(path, name), max, out);
  }

  /// A string of exactly one character.
  bool character(const json &obj, const std::string &path, const char *name,
                 uint32_t &out) {
    std::string s;
    if (!reqString(obj, path, name, s))
      return false;
    size_t i = 0;
    if (s.empty() || (out = nextChar(s, i), i != s.size()))
      return fail(key(path, name),
                  "expected a single character, found " + quote(s));
    return true;
  }

  /// The "type" of a stage, or its absence.
  bool type(const json &v, const std::string &path, std::string &out) {
    if (!object(v, path))
      return false;
    const json *t = member(v, "type");
    if (!t)
      return fail(key(path, "type"), "missing (expected a string)");
    return string(*t, key(path, "type"), out);
  }

  bool unknownType(const std::string &path, const char *stage,
                   const std::string &type, const char *const *supported) {
    return fail(key(path, "type"), std::string("unknown ") + stage + " type " +
                                       quote(type) +
                                       " (supported: " + join(supported) + ")");
  }

  bool depth(int d, const std::string &path) {
    return d <= kMaxDepth ||
           fail(path, "nested more than " + std::to_string(kMaxDepth) +
                          " levels deep");
  }

  bool regexOrString(const json &obj, const std::string &path,
                     std::unique_ptr<Regex> &out) {
    const json *p = member(obj, "pattern");
    std::string pp = key(path, "pattern");
    if (!p)
      return fail(pp, "missing (expected {\"String\": ...} or "
                      "{\"Regex\": ...})");
    if (!p->is_object() || p->size() != 1 ||
        (!p->contains("String") && !p->contains("Regex")))
      return fail(pp, std::string("expected {\"String\": ...} or "
                                  "{\"Regex\": ...}, found ") +
                          tfc::rt::jsonKindName(*p));
    bool literal = p->contains("String");
    const char *which = literal ? "String" : "Regex";
    std::string source;
    if (!string(p->at(which), key(pp, which), source))
      return false;
    std::string message;
    out = Regex::compile(source, literal, message);
    return out || fail(key(pp, which), message);
  }

  bool behavior(const json &obj, const std::string &path, SplitBehavior &out,
                bool required) {
    const json *v = member(obj, "behavior");
    if (!v) {
      if (required)
        return fail(key(path, "behavior"), "missing (expected a string)");
      return true;
    }
    std::string s;
    if (!string(*v, key(path, "behavior"), s))
      return false;
    static const std::pair<const char *, SplitBehavior> kNames[] = {
        {"Removed", SplitBehavior::Removed},
        {"Isolated", SplitBehavior::Isolated},
        {"MergedWithPrevious", SplitBehavior::MergedWithPrevious},
        {"MergedWithNext", SplitBehavior::MergedWithNext},
        {"Contiguous", SplitBehavior::Contiguous}};
    for (const auto &[name, b] : kNames)
      if (s == name) {
        out = b;
        return true;
      }
    return fail(key(path, "behavior"),
                "unknown behavior " + quote(s) +
                    " (supported: Removed, Isolated, MergedWithPrevious, "
                    "MergedWithNext, Contiguous)");
  }

  bool prependScheme(const json &obj, const std::string &path,
                     PrependScheme &out) {
    const json *v = member(obj, "prepend_scheme");
    if (v && !v->is_null()) {
      std::string s;
      if (!string(*v, key(path, "prepend_scheme"), s))
        return false;
      if (s == "first")
        out = PrependScheme::First;
      else if (s == "never")
        out = PrependScheme::Never;
      else if (s == "always")
        out = PrependScheme::Always;
      else
        return fail(key(path, "prepend_scheme"),
                    "unknown scheme " + quote(s) +
                        " (supported: first, never, always)");
    }
    // The older add_prefix_space: false means never.
    bool addPrefixSpace = true;
    if (!optBool(obj, path, "add_prefix_space", addPrefixSpace))
      return false;
    if (!addPrefixSpace) {
      if (v && !v->is_null() && out != PrependScheme::Never)
        return fail(key(path, "add_prefix_space"),
                    "false does not match prepend_scheme");
      out = PrependScheme::Never;
    }
    return true;
  }

  //===--------------------------------------------------------------------===//
  // Normalizers
  //===--------------------------------------------------------------------===//

  bool normalizer(const json &v, const std::string &path, int d,
                  std::unique_ptr<Normalizer> &out) {
    static const char *const kSupported[] = {
        "BertNormalizer", "NFC",       "NFD",          "NFKC", "NFKD",
        "Lowercase",      "Strip",     "StripAccents", "Nmt",  "Prepend",
        "Replace",        "ByteLevel", "Sequence",     nullptr};
    std::string t;
    if (!depth(d, path) || !type(v, path, t))
      return false;
    if (t == "BertNormalizer" || t == "Bert") {
      auto n = std::make_unique<BertNormalizer>();
      if (!optBool(v, path, "clean_text", n->cleanText) ||
          !optBool(v, path, "handle_chinese_chars", n->handleChineseChars) ||
          !optBool(v, path, "lowercase", n->lowercase))
        return false;
      if (const json *s = member(v, "strip_accents"); s && !s->is_null()) {
        if (!s->is_boolean())
          return wrongType(key(path, "strip_accents"), "a boolean or null", *s);
        n->stripAccents = s->get<bool>();
      }
      out = std::move(n);
    } else if (t == "NFC" || t == "NFD" || t == "NFKC" || t == "NFKD") {
      NormalForm f = t == "NFC"    ? NormalForm::NFC
                     : t == "NFD"  ? NormalForm::NFD
                     : t == "NFKC" ? NormalForm::NFKC
                                   : NormalForm::NFKD;
      out = std::make_unique<UnicodeNormalizer>(f);
    } else if (t == "Lowercase") {
      out = std::make_unique<LowercaseNormalizer>();
    } else if (t == "Strip") {
      auto n = std::make_unique<StripNormalizer>();
      if (!optBool(v, path, "strip_left", n->left) ||
          !optBool(v, path, "strip_right", n->right))
        return false;
      out = std::move(n);
    } else if (t == "StripAccents") {
      out = std::make_unique<StripAccentsNormalizer>();
    } else if (t == "Nmt") {
      out = std::make_unique<NmtNormalizer>();
    } else if (t == "Prepend") {
      auto n = std::make_unique<PrependNormalizer>();
      if (!reqString(v, path, "prepend", n->prepend))
        return false;
      out = std::move(n);
    } else if (t == "Replace") {
      auto n = std::make_unique<ReplaceNormalizer>();
      if (!regexOrString(v, path, n->pattern) ||
          !reqString(v, path, "content", n->content))
        return false;
      out = std::move(n);
    } else if (t == "ByteLevel") {
      out = std::make_unique<ByteLevelNormalizer>();
    } else if (t == "Sequence") {
      auto n = std::make_unique<SequenceNormalizer>();
      const json *list = member(v, "normalizers");
      std::string lp = key(path, "normalizers");
      if (!list)
        return fail(lp, "missing (expected an array)");
      if (!list->is_array())
        return wrongType(lp, "an array", *list);
      for (size_t i = 0; i < list->size(); ++i) {
        std::unique_ptr<Normalizer> item;
        if (!normalizer((*list)[i], index(lp, i), d + 1, item))
          return false;
        n->normalizers.push_back(std::move(item));
      }
      out = std::move(n);
    } else if (t == "Precompiled") {
      return fail(key(path, "type"),
                  "the Precompiled normalizer (a SentencePiece charsmap) is "
                  "not supported");
    } else {
      return unknownType(path, "normalizer", t, kSupported);
    }
    return true;
  }

  //===--------------------------------------------------------------------===//
  // Pre-tokenizers
  //===--------------------------------------------------------------------===//

  bool preTokenizer(const json &v, const std::string &path, int d,
                    std::unique_ptr<PreTokenizer> &out) {
    static const char *const kSupported[] = {
        "BertPreTokenizer",   "ByteLevel",       "Split",       "Digits",
        "Whitespace",         "WhitespaceSplit", "Punctuation", "Metaspace",
        "CharDelimiterSplit", "Sequence",        nullptr};
    std::string t;
    if (!depth(d, path) || !type(v, path, t))
      return false;
    std::string message;
    if (t == "BertPreTokenizer") {
      out = std::make_unique<BertPreTokenizer>();
    } else if (t == "ByteLevel") {
      auto p = std::make_unique<ByteLevelPreTokenizer>();
      if (!optBool(v, path, "add_prefix_space", p->addPrefixSpace) ||
          !optBool(v, path, "use_regex", p->useRegex))
        return false;
      bool trim = true;
      if (!optBool(v, path, "trim_offsets", trim))
        return false;
      if (p->useRegex &&
          !(p->regex = Regex::compile(kGpt2Pattern, false, message)))
        return fail(path, message);
      out = std::move(p);
    } else if (t == "Split") {
      auto p = std::make_unique<SplitPreTokenizer>();
      if (!regexOrString(v, path, p->pattern) ||
          !behavior(v, path, p->behavior, true) ||
          !optBool(v, path, "invert", p->invert))
        return false;
      out = std::move(p);
    } else if (t == "Digits") {
      auto p = std::make_unique<DigitsPreTokenizer>();
      if (!optBool(v, path, "individual_digits", p->individualDigits))
        return false;
      out = std::move(p);
    } else if (t == "Whitespace") {
      auto p = std::make_unique<WhitespacePreTokenizer>();
      if (!(p->regex = Regex::compile("\\w+|[^\\w\\s]+", false, message)))
        return fail(path, message);
      out = std::move(p);
    } else if (t == "WhitespaceSplit") {
      out = std::make_unique<WhitespaceSplitPreTokenizer>();
    } else if (t == "Punctuation") {
      auto p = std::make_unique<PunctuationPreTokenizer>();
      if (!behavior(v, path, p->behavior, false))
        return false;
      out = std::move(p);
    } else if (t == "CharDelimiterSplit") {
      auto p = std::make_unique<CharDelimiterPreTokenizer>();
      if (!character(v, path, "delimiter", p->delimiter))
        return false;
      out = std::move(p);
    } else if (t == "Metaspace") {
      auto p = std::make_unique<MetaspacePreTokenizer>();
      if (!character(v, path, "replacement", p->replacement) ||
          !prependScheme(v, path, p->prependScheme) ||
          !optBool(v, path, "split", p->split))
        return false;
      out = std::move(p);
    } else if (t == "Sequence") {
      auto p = std::make_unique<SequencePreTokenizer>();
      const json *list = member(v, "pretokenizers");
      std::string lp = key(path, "pretokenizers");
      if (!list)
        return fail(lp, "missing (expected an array)");
      if (!list->is_array())
        return wrongType(lp, "an array", *list);
      for (size_t i = 0; i < list->size(); ++i) {
        std::unique_ptr<PreTokenizer> item;
        if (!preTokenizer((*list)[i], index(lp, i), d + 1, item))
          return false;
        p->preTokenizers.push_back(std::move(item));
      }
      out = std::move(p);
    } else if (t == "UnicodeScripts" || t == "FixedLength") {
      return fail(key(path, "type"),
                  "the " + t + " pre-tokenizer is not supported (supported: " +
                      join(kSupported) + ")");
    } else {
      return unknownType(path, "pre-tokenizer", t, kSupported);
    }
    return true;
  }

  //===--------------------------------------------------------------------===//
  // Models
  //===--------------------------------------------------------------------===//

  bool vocab(const json &m, const std::string &path, Vocab &out) {
    const json *v = member(m, "vocab");
    std::string vp = key(path, "vocab");
    if (!v)
      return fail(vp, "missing (expected an object of token: id)");
    if (!v->is_object())
      return wrongType(vp, "an object of token: id", *v);
    std::vector<std::pair<std::string, int64_t>> entries;
    entries.reserve(v->size());
    for (auto it = v->begin(); it != v->end(); ++it) {
      uint64_t id;
      if (!integer(it.value(), vp + "[" + quote(it.key()) + "]", INT32_MAX - 1,
                   id))
        return false;
      entries.emplace_back(it.key(), static_cast<int64_t>(id));
    }
    std::string message;
    return out.build(std::move(entries), vp, message) || fail("", message);
  }

  bool merges(const json &m, const std::string &path,
              std::vector<std::pair<std::string, std::string>> &out) {
    const json *v = member(m, "merges");
    std::string mp = key(path, "merges");
    if (!v)
      return fail(mp, "missing (expected an array)");
    if (!v->is_array())
      return wrongType(mp, "an array", *v);
    out.reserve(v->size());
    for (size_t i = 0; i < v->size(); ++i) {
      const json &item = (*v)[i];
      std::string ip = index(mp, i);
      if (item.is_string()) {
        const std::string &s = item.get_ref<const std::string &>();
        if (s.rfind("#version", 0) == 0)
          continue;
        size_t space = s.find(' ');
        if (space == std::string::npos ||
            s.find(' ', space + 1) != std::string::npos)
          return fail(ip, "expected \"a b\" (two tokens separated by one "
                          "space), found " +
                              quote(s));
        out.emplace_back(s.substr(0, space), s.substr(space + 1));
      } else if (item.is_array()) {
        if (item.size() != 2 || !item[0].is_string() || !item[1].is_string())
          return fail(ip, "expected a pair of strings [\"a\", \"b\"]");
        out.emplace_back(item[0].get<std::string>(),
                         item[1].get<std::string>());
      } else {
        return wrongType(ip, "a string \"a b\" or a pair [\"a\", \"b\"]", item);
      }
    }
    return true;
  }

  bool model(const json &v, const std::string &path,
             std::unique_ptr<Model> &out) {
    static const char *const kSupported[] = {"WordPiece", "BPE", "WordLevel",
                                             "Unigram", nullptr};
    if (!object(v, path))
      return false;
    std::string t;
    if (const json *tp = member(v, "type")) {
      if (!string(*tp, key(path, "type"), t))
        return false;
    } else if (v.contains("merges")) {
      t = "BPE"; // files without "type" are recognised by their keys
    } else if (v.contains("continuing_subword_prefix") ||
               v.contains("max_input_chars_per_word")) {
      t = "WordPiece";
    } else if (v.contains("vocab") && v.contains("unk_token")) {
      t = "WordLevel";
    } else {
      return fail(key(path, "type"), "missing (expected a string)");
    }
    std::string message;
    if (t == "WordPiece") {
      Vocab vb;
      std::string unk = "[UNK]", prefix = "##";
      uint64_t maxChars = 100;
      std::optional<std::string> u, p;
      if (!vocab(v, path, vb) || !optString(v, path, "unk_token", u) ||
          !optString(v, path, "continuing_subword_prefix", p) ||
          !optInteger(v, path, "max_input_chars_per_word", SIZE_MAX, maxChars))
        return false;
      auto m = std::make_unique<WordPieceModel>();
      if (!m->init(std::move(vb), u.value_or(unk), p.value_or(prefix),
                   static_cast<size_t>(maxChars), message))
        return fail(path, message);
      out = std::move(m);
    } else if (t == "BPE") {
      Vocab vb;
      std::vector<std::pair<std::string, std::string>> ms;
      BpeModel::Options o;
      if (!vocab(v, path, vb) || !merges(v, path, ms) ||
          !optString(v, path, "unk_token", o.unkToken) ||
          !optString(v, path, "continuing_subword_prefix",
                     o.continuingSubwordPrefix) ||
          !optString(v, path, "end_of_word_suffix", o.endOfWordSuffix) ||
          !optBool(v, path, "fuse_unk", o.fuseUnk) ||
          !optBool(v, path, "byte_fallback", o.byteFallback) ||
          !optBool(v, path, "ignore_merges", o.ignoreMerges))
        return false;
      if (const json *dp = member(v, "dropout"); dp && !dp->is_null()) {
        if (!dp->is_number())
          return wrongType(key(path, "dropout"), "a number or null", *dp);
        double p = dp->get<double>();
        if (p < 0 || p > 1)
          return fail(key(path, "dropout"), "expected a probability in [0, 1]");
        if (p > 0)
          return fail(key(path, "dropout"),
                      "BPE dropout is random and not supported (expected "
                      "null or 0)");
      }
      auto m = std::make_unique<BpeModel>();
      if (!m->init(std::move(vb), ms, std::move(o), key(path, "merges"),
                   message))
        return fail("", message);
      out = std::move(m);
    } else if (t == "WordLevel") {
      Vocab vb;
      std::string unk;
      if (!vocab(v, path, vb) || !reqString(v, path, "unk_token", unk))
        return false;
      auto m = std::make_unique<WordLevelModel>();
      if (!m->init(std::move(vb), std::move(unk), message))
        return fail(path, message);
      out = std::move(m);
    } else if (t == "Unigram") {
      const json *vs = member(v, "vocab");
      std::string vp = key(path, "vocab");
      if (!vs)
        return fail(vp, "missing (expected an array of [piece, score])");
      if (!vs->is_array())
        return wrongType(vp, "an array of [piece, score]", *vs);
      std::vector<std::pair<std::string, double>> pieces;
      pieces.reserve(vs->size());
      for (size_t i = 0; i < vs->size(); ++i) {
        const json &e = (*vs)[i];
        if (!e.is_array() || e.size() != 2 || !e[0].is_string() ||
            !e[1].is_number())
          return wrongType(index(vp, i), "[piece, score]", e);
        double score = e[1].get<double>();
        if (!std::isfinite(score))
          return fail(index(vp, i), "the score must be a finite number");
        pieces.emplace_back(e[0].get<std::string>(), score);
      }
      int64_t unk = -1;
      if (const json *u = member(v, "unk_id"); u && !u->is_null()) {
        uint64_t n;
        if (!integer(*u, key(path, "unk_id"), INT32_MAX - 1, n))
          return false;
        unk = static_cast<int64_t>(n);
      }
      bool fallback = false;
      if (!optBool(v, path, "byte_fallback", fallback))
        return false;
      auto m = std::make_unique<UnigramModel>();
      if (!m->init(std::move(pieces), unk, fallback, vp, message))
        return fail("", message);
      out = std::move(m);
    } else {
      return unknownType(path, "model", t, kSupported);
    }
    return true;
  }

  //===--------------------------------------------------------------------===//
  // Post-processors
  //===--------------------------------------------------------------------===//

  bool tokenIdPair(const json &obj, const std::string &path, const char *name,
                   int32_t &id) {
    const json *v = member(obj, name);
    std::string p = key(path, name);
    if (!v)
      return fail(p, "missing (expected [token, id])");
    if (!v->is_array() || v->size() != 2 || !(*v)[0].is_string())
      return fail(p, std::string("expected [token, id], found ") +
                         tfc::rt::jsonKindName(*v));
    uint64_t n;
    if (!integer((*v)[1], index(p, 1), INT32_MAX - 1, n))
      return false;
    id = static_cast<int32_t>(n);
    return true;
  }

  bool templatePiece(const json &v, const std::string &path,
                     TemplatePiece &out) {
    auto fromString = [&](const std::string &s) {
      // "$A", "$B:1", "[CLS]", "[SEP]:1" (Hugging Face's Piece::try_from).
      std::string id = s;
      int32_t typeId = 0;
      size_t colon = s.find(':');
      if (colon != std::string::npos) {
        if (s.find(':', colon + 1) != std::string::npos)
          return fail(path, "cannot read the template piece " + quote(s));
        id = s.substr(0, colon);
        std::string n = s.substr(colon + 1);
        if (n.empty() || n.size() > 9 ||
            n.find_first_not_of("0123456789") != std::string::npos)
          return fail(path, "cannot read the type id of " + quote(s));
        typeId = std::stoi(n);
      }
      out.typeId = typeId;
      if (!id.empty() && id[0] == '$') {
        std::string rest = id.substr(1);
        out.isSequence = true;
        if (rest.empty() || rest == "A" || rest == "a") {
          out.sequenceB = false;
        } else if (rest == "B" || rest == "b") {
          out.sequenceB = true;
        } else if (rest.size() <= 9 &&
                   rest.find_first_not_of("0123456789") == std::string::npos) {
          out.sequenceB = false;
          out.typeId = std::stoi(rest);
        } else {
          return fail(path, "cannot read the template piece " + quote(s));
        }
      } else {
        out.isSequence = false;
        out.specialId = id;
      }
      return true;
    };
    if (v.is_string())
      return fromString(v.get<std::string>());
    if (!v.is_object() || v.size() != 1 ||
        (!v.contains("Sequence") && !v.contains("SpecialToken")))
      return fail(path, std::string("expected {\"Sequence\": ...}, "
                                    "{\"SpecialToken\": ...} or a string, "
                                    "found ") +
                            tfc::rt::jsonKindName(v));
    bool seq = v.contains("Sequence");
    const char *which = seq ? "Sequence" : "SpecialToken";
    const json &body = v.at(which);
    std::string bp = key(path, which);
    if (!object(body, bp))
      return false;
    std::string id;
    uint64_t typeId = 0;
    if (!reqString(body, bp, "id", id) ||
        !optInteger(body, bp, "type_id", INT32_MAX, typeId))
      return false;
    out.typeId = static_cast<int32_t>(typeId);
    out.isSequence = seq;
    if (seq) {
      if (id != "A" && id != "B")
        return fail(key(bp, "id"),
                    "expected \"A\" or \"B\", found " + quote(id));
      out.sequenceB = id == "B";
    } else {
      out.specialId = id;
    }
    return true;
  }

  bool templateList(const json &obj, const std::string &path, const char *name,
                    std::vector<TemplatePiece> &out) {
    const json *v = member(obj, name);
    std::string p = key(path, name);
    if (!v)
      return fail(p, "missing (expected an array of pieces)");
    if (v->is_string()) {
      // A whole template as one string: "[CLS] $A [SEP]".
      std::istringstream words(v->get<std::string>());
      std::string w;
      while (words >> w) {
        TemplatePiece piece;
        if (!templatePiece(json(w), p, piece))
          return false;
        out.push_back(std::move(piece));
      }
      return true;
    }
    if (!v->is_array())
      return wrongType(p, "an array of pieces", *v);
    for (size_t i = 0; i < v->size(); ++i) {
      TemplatePiece piece;
      if (!templatePiece((*v)[i], index(p, i), piece))
        return false;
      out.push_back(std::move(piece));
    }
    return true;
  }

  bool postProcessor(const json &v, const std::string &path, int d,
                     std::unique_ptr<PostProcessor> &out) {
    static const char *const kSupported[] = {
        "TemplateProcessing", "BertProcessing", "RobertaProcessing",
        "ByteLevel",          "Sequence",       nullptr};
    std::string t;
    if (!depth(d, path) || !type(v, path, t))
      return false;
    if (t == "TemplateProcessing") {
      auto p = std::make_unique<TemplateProcessor>();
      if (!templateList(v, path, "single", p->single) ||
          !templateList(v, path, "pair", p->pair))
        return false;
      const json *st = member(v, "special_tokens");
      std::string sp = key(path, "special_tokens");
      if (st && !st->is_null()) {
        if (!object(*st, sp))
          return false;
        for (auto it = st->begin(); it != st->end(); ++it) {
          std::string ep = sp + "[" + quote(it.key()) + "]";
          if (!object(it.value(), ep))
            return false;
          const json *ids = member(it.value(), "ids");
          if (!ids || !ids->is_array())
            return fail(key(ep, "ids"), "expected an array of ids");
          SpecialTokenSpec spec;
          for (size_t i = 0; i < ids->size(); ++i) {
            uint64_t n;
            if (!integer((*ids)[i], index(key(ep, "ids"), i), INT32_MAX - 1, n))
              return false;
            spec.ids.push_back(static_cast<int32_t>(n));
          }
          if (const json *toks = member(it.value(), "tokens");
              toks && (!toks->is_array() || toks->size() != ids->size()))
            return fail(key(ep, "tokens"), "expected as many tokens as ids");
          p->specialTokens[it.key()] = std::move(spec);
        }
      }
      for (const auto *list : {&p->single, &p->pair})
        for (const TemplatePiece &piece : *list)
          if (!piece.isSequence && !p->specialTokens.count(piece.specialId))
            return fail(sp, "the template uses the special token " +
                                quote(piece.specialId) +
                                " that special_tokens does not define");
      for (const TemplatePiece &piece : p->single)
        if (piece.isSequence && piece.sequenceB)
          return fail(key(path, "single"), "the single template cannot use $B");
      out = std::move(p);
    } else if (t == "BertProcessing" || t == "RobertaProcessing") {
      auto p = std::make_unique<BertProcessor>();
      p->roberta = t == "RobertaProcessing";
      if (!tokenIdPair(v, path, "cls", p->cls) ||
          !tokenIdPair(v, path, "sep", p->sep))
        return false;
      out = std::move(p);
    } else if (t == "ByteLevel") {
      out = std::make_unique<PassThroughProcessor>();
    } else if (t == "Sequence") {
      auto p = std::make_unique<SequenceProcessor>();
      const json *list = member(v, "processors");
      std::string lp = key(path, "processors");
      if (!list)
        return fail(lp, "missing (expected an array)");
      if (!list->is_array())
        return wrongType(lp, "an array", *list);
      for (size_t i = 0; i < list->size(); ++i) {
        std::unique_ptr<PostProcessor> item;
        if (!postProcessor((*list)[i], index(lp, i), d + 1, item))
          return false;
        p->processors.push_back(std::move(item));
      }
      out = std::move(p);
    } else {
      return unknownType(path, "post-processor", t, kSupported);
    }
    return true;
  }

  //===--------------------------------------------------------------------===//
  // Decoders
  //===--------------------------------------------------------------------===//

  bool decoder(const json &v, const std::string &path, int d,
               std::unique_ptr<Decoder> &out) {
    static const char *const kSupported[] = {
        "ByteLevel", "WordPiece", "Metaspace",  "Replace",  "ByteFallback",
        "Fuse",      "Strip",     "BPEDecoder", "Sequence", nullptr};
    std::string t;
    if (!depth(d, path) || !type(v, path, t))
      return false;
    if (t == "ByteLevel") {
      out = std::make_unique<ByteLevelDecoder>();
    } else if (t == "WordPiece") {
      auto p = std::make_unique<WordPieceDecoder>();
      std::optional<std::string> prefix;
      if (!optString(v, path, "prefix", prefix) ||
          !optBool(v, path, "cleanup", p->cleanup))
        return false;
      if (prefix)
        p->prefix = *prefix;
      out = std::move(p);
    } else if (t == "Metaspace") {
      auto p = std::make_unique<MetaspaceDecoder>();
      if (!character(v, path, "replacement", p->replacement) ||
          !prependScheme(v, path, p->prependScheme))
        return false;
      out = std::move(p);
    } else if (t == "Replace") {
      auto p = std::make_unique<ReplaceDecoder>();
      if (!regexOrString(v, path, p->pattern) ||
          !reqString(v, path, "content", p->content))
        return false;
      out = std::move(p);
    } else if (t == "ByteFallback") {
      out = std::make_unique<ByteFallbackDecoder>();
    } else if (t == "Fuse") {
      out = std::make_unique<FuseDecoder>();
    } else if (t == "Strip") {
      auto p = std::make_unique<StripDecoder>();
      uint64_t start = 0, stop = 0;
      if (!character(v, path, "content", p->content) ||
          !optInteger(v, path, "start", SIZE_MAX, start) ||
          !optInteger(v, path, "stop", SIZE_MAX, stop))
        return false;
      p->start = static_cast<size_t>(start);
      p->stop = static_cast<size_t>(stop);
      out = std::move(p);
    } else if (t == "BPEDecoder") {
      auto p = std::make_unique<BpeSuffixDecoder>();
      std::optional<std::string> suffix;
      if (!optString(v, path, "suffix", suffix))
        return false;
      if (suffix)
        p->suffix = *suffix;
      out = std::move(p);
    } else if (t == "Sequence") {
      auto p = std::make_unique<SequenceDecoder>();
      const json *list = member(v, "decoders");
      std::string lp = key(path, "decoders");
      if (!list)
        return fail(lp, "missing (expected an array)");
      if (!list->is_array())
        return wrongType(lp, "an array", *list);
      for (size_t i = 0; i < list->size(); ++i) {
        std::unique_ptr<Decoder> item;
        if (!decoder((*list)[i], index(lp, i), d + 1, item))
          return false;
        p->decoders.push_back(std::move(item));
      }
      out = std::move(p);
    } else if (t == "CTC") {
      return fail(key(path, "type"), "the CTC decoder is not supported");
    } else {
      return unknownType(path, "decoder", t, kSupported);
    }
    return true;
  }

  //===--------------------------------------------------------------------===//
  // Truncation, padding, added tokens
  //===--------------------------------------------------------------------===//

  bool truncation(const json &v, std::optional<TruncationParams> &out) {
    const std::string path = "truncation";
    if (!object(v, path))
      return false;
    TruncationParams p;
    uint64_t n = 0;
    if (!integer(v.contains("max_length") ? v.at("max_length") : json(),
                 key(path, "max_length"), SIZE_MAX, n))
      return false;
    p.maxLength = static_cast<size_t>(n);
    uint64_t stride = 0;
    if (!optInteger(v, path, "stride", SIZE_MAX, stride))
      return false;
    p.stride = static_cast<size_t>(stride);
    std::optional<std::string> strategy, direction;
    if (!optString(v, path, "strategy", strategy) ||
        !optString(v, path, "direction", direction))
      return false;
    if (strategy) {
      if (*strategy == "LongestFirst")
        p.strategy = TruncationParams::Strategy::LongestFirst;
      else if (*strategy == "OnlyFirst")
        p.strategy = TruncationParams::Strategy::OnlyFirst;
      else if (*strategy == "OnlySecond")
        p.strategy = TruncationParams::Strategy::OnlySecond;
      else
        return fail(key(path, "strategy"),
                    "unknown strategy " + quote(*strategy) +
                        " (supported: LongestFirst, OnlyFirst, OnlySecond)");
    }
    if (direction) {
      if (*direction == "Right")
        p.direction = TruncationParams::Direction::Right;
      else if (*direction == "Left")
        p.direction = TruncationParams::Direction::Left;
      else
        return fail(key(path, "direction"), "unknown direction " +
                                                quote(*direction) +
                                                " (supported: Right, Left)");
    }
    out = p;
    return true;
  }

  bool padding(const json &v, std::optional<PaddingParams> &out) {
    const std::string path = "padding";
    if (!object(v, path))
      return false;
    PaddingParams p;
    const json *s = member(v, "strategy");
    std::string sp = key(path, "strategy");
    if (!s || (s->is_string() && s->get<std::string>() == "BatchLongest")) {
      p.strategy = PaddingParams::Strategy::BatchLongest;
    } else if (s->is_object() && s->size() == 1 && s->contains("Fixed")) {
      uint64_t n;
      if (!integer(s->at("Fixed"), key(sp, "Fixed"), kMaxPadding, n))
        return false;
      p.strategy = PaddingParams::Strategy::Fixed;
      p.length = static_cast<size_t>(n);
    } else {
      return fail(sp, std::string("expected \"BatchLongest\" or "
                                  "{\"Fixed\": n}, found ") +
                          tfc::rt::jsonKindName(*s));
    }
    std::optional<std::string> direction, token;
    uint64_t multiple = 0, padId = 0, padTypeId = 0;
    if (!optString(v, path, "direction", direction) ||
        !optString(v, path, "pad_token", token) ||
        !optInteger(v, path, "pad_to_multiple_of", kMaxPadding, multiple) ||
        !optInteger(v, path, "pad_id", INT32_MAX - 1, padId) ||
        !optInteger(v, path, "pad_type_id", INT32_MAX, padTypeId))
      return false;
    if (direction) {
      if (*direction == "Right")
        p.direction = PaddingParams::Direction::Right;
      else if (*direction == "Left")
        p.direction = PaddingParams::Direction::Left;
      else
        return fail(key(path, "direction"), "unknown direction " +
                                                quote(*direction) +
                                                " (supported: Right, Left)");
    }
    p.padToMultipleOf = static_cast<size_t>(multiple);
    p.padId = static_cast<int64_t>(padId);
    p.padTypeId = static_cast<int64_t>(padTypeId);
    if (token)
      p.padToken = *token;
    out = p;
    return true;
  }

  bool addedTokens(const json &v, std::vector<AddedToken> &out) {
    const std::string path = "added_tokens";
    if (!v.is_array())
      return wrongType(path, "an array", v);
    for (size_t i = 0; i < v.size(); ++i) {
      const json &item = v[i];
      std::string ip = index(path, i);
      if (!object(item, ip))
        return false;
      AddedToken t;
      uint64_t id;
      const json *idv = member(item, "id");
      if (!idv)
        return fail(key(ip, "id"), "missing (expected an integer)");
      if (!integer(*idv, key(ip, "id"), INT32_MAX - 1, id) ||
          !reqString(item, ip, "content", t.content) ||
          !optBool(item, ip, "single_word", t.singleWord) ||
          !optBool(item, ip, "lstrip", t.lstrip) ||
          !optBool(item, ip, "rstrip", t.rstrip) ||
          !optBool(item, ip, "normalized", t.normalized) ||
          !optBool(item, ip, "special", t.special))
        return false;
      out.push_back(std::move(t));
    }
    return true;
  }
};

} // namespace

std::unique_ptr<Tokenizer> Tokenizer::fromJson(std::string_view text,
                                               std::string &error,
                                               const std::string &what) {
  json root;
  if (!::tfc::rt::parseJsonDocument(text, what, root, error))
    return nullptr;
  Loader l{what, error};
  if (!root.is_object()) {
    l.wrongType("", "a JSON object at the top level", root);
    return nullptr;
  }
  if (const json *version = Loader::member(root, "version")) {
    std::string v;
    if (!l.string(*version, "version", v))
      return nullptr;
    if (v != "1.0") {
      l.fail("version", "unknown tokenizer.json version " + quote(v) +
                            " (expected \"1.0\")");
      return nullptr;
    }
  }
  auto impl = std::make_unique<Impl>();
  const json *model = Loader::member(root, "model");
  if (!model) {
    l.fail("model", "missing (expected an object)");
    return nullptr;
  }
  if (!l.model(*model, "model", impl->model))
    return nullptr;
  auto present = [&](const char *name) -> const json * {
    const json *v = Loader::member(root, name);
    return v && !v->is_null() ? v : nullptr;
  };
  if (const json *v = present("normalizer");
      v && !l.normalizer(*v, "normalizer", 0, impl->normalizer))
    return nullptr;
  if (const json *v = present("pre_tokenizer");
      v && !l.preTokenizer(*v, "pre_tokenizer", 0, impl->preTokenizer))
    return nullptr;
  if (const json *v = present("post_processor");
      v && !l.postProcessor(*v, "post_processor", 0, impl->postProcessor))
    return nullptr;
  if (const json *v = present("decoder");
      v && !l.decoder(*v, "decoder", 0, impl->decoder))
    return nullptr;
  if (const json *v = present("truncation");
      v && !l.truncation(*v, impl->truncation))
    return nullptr;
  if (const json *v = present("padding"); v && !l.padding(*v, impl->padding))
    return nullptr;
  std::vector<AddedToken> added;
  if (const json *v = present("added_tokens"); v && !l.addedTokens(*v, added))
    return nullptr;
  std::string message;
  if (!impl->added.add(added, *impl->model, impl->normalizer.get(), message)) {
    l.fail("added_tokens", message);
    return nullptr;
  }
  return TokenizerBuilder::make(std::move(impl));
}

std::unique_ptr<Tokenizer> Tokenizer::fromFile(const std::string &path,
                                               std::string &error) {
  std::string file = path;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    error = path + ": cannot open: " + std::strerror(errno);
    return nullptr;
  }
  if (S_ISDIR(st.st_mode)) {
    file = path + (path.empty() || path.back() == '/' ? "" : "/") +
           "tokenizer.json";
    if (::stat(file.c_str(), &st) != 0) {
      error = path + ": a directory without tokenizer.json";
      return nullptr;
    }
  }
  std::string text;
  if (!tfc::rt::readRegularFile(file, text, tfc::rt::kMaxConfigFileBytes,
                                error))
    return nullptr;
  return fromJson(text, error, file);
}
