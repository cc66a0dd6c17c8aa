//===- TokenizerModels.cpp - WordPiece, BPE and WordLevel -----------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The models turn one pre-tokenized word into ids:
//
//  - WordPiece: greedy longest match first, continuation pieces carry the
//    prefix ("##"); a word longer than max_input_chars_per_word, or with a
//    part that matches nothing, is the unknown token as a whole.
//  - BPE: the word's characters (with byte fallback or the unknown token for
//    characters outside the vocabulary), then the merge of lowest rank
//    (leftmost on ties) until none applies. ignore_merges takes a word that
//    is a token as it is. A cache keeps the ids of recent words.
//  - WordLevel: the word is a token or the unknown token.
//
//===----------------------------------------------------------------------===//

#include "TokenizerInternal.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <mutex>
#include <queue>

using namespace tfc::rt;
using namespace tfc::rt::tok;

Model::~Model() = default;

namespace {
std::string shorten(std::string_view s) { return quoteText(s); }
} // namespace

//===----------------------------------------------------------------------===//
// WordPiece
//===----------------------------------------------------------------------===//

bool WordPieceModel::init(Vocab vocab, std::string unkToken, std::string prefix,
                          size_t maxInputCharsPerWord, std::string &) {
  vocab_ = std::move(vocab);
  this->prefix = std::move(prefix);
  maxChars = maxInputCharsPerWord;
  unkId = vocab_.find(unkToken);
  const std::string &p = this->prefix;
  vocab_.strings().forEach([&](std::string_view token, int32_t id) {
    if (token.size() >= p.size() && token.compare(0, p.size(), p) == 0)
      continuing.set(token.substr(p.size()), id);
  });
  return true;
}

bool WordPieceModel::tokenize(std::string_view word, std::vector<int32_t> &ids,
                              std::string &error) const {
  auto unknown = [&] {
    if (unkId < 0) {
      error = "WordPiece: the unknown token is not in the vocabulary";
      return false;
    }
    ids.push_back(unkId);
    return true;
  };
  if (countChars(word) > maxChars)
    return unknown();
  size_t mark = ids.size();
  size_t start = 0;
  while (start < word.size()) {
    size_t end = word.size();
    int32_t found = -1;
    while (start < end) {
      std::string_view sub = word.substr(start, end - start);
      found = start == 0 ? vocab_.find(sub) : continuing.find(sub);
      if (found >= 0)
        break;
      // Drop the last character.
      --end;
      while (end > start &&
             (static_cast<unsigned char>(word[end]) & 0xC0) == 0x80)
        --end;
    }
    if (found < 0) {
      ids.resize(mark);
      return unknown();
    }
    ids.push_back(found);
    start = end;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// llama.cpp's WordPiece (GGUF "bert" vocabularies)
//===----------------------------------------------------------------------===//

bool WpmModel::init(Vocab vocab, int32_t unk, std::string &error) {
  vocab_ = std::move(vocab);
  if (unk < 0 || !vocab_.token(unk)) {
    error = "the unknown token id " + std::to_string(unk) +
            " is not in the vocabulary";
    return false;
  }
  unkId = unk;
  vocab_.strings().forEach([&](std::string_view t, int32_t) {
    maxTokenBytes = std::max(maxTokenBytes, t.size());
  });
  return true;
}

bool WpmModel::tokenize(std::string_view word, std::vector<int32_t> &ids,
                        std::string &) const {
  if (word.empty())
    return true;
  // As llama.cpp, by bytes: a token may only match whole characters, since
  // every token is valid UTF-8.
  std::string w = "\xE2\x96\x81";
  w += word;
  std::string_view text = w;
  size_t n = text.size(), start = ids.size();
  for (size_t i = 0; i < n; ++i) {
    bool match = false;
    for (size_t j = std::min(n, i + maxTokenBytes + 1); j > i; --j) {
      int32_t id = vocab_.find(text.substr(i, j - i));
      if (id >= 0) {
        ids.push_back(id);
        match = true;
        i = j - 1;
        break;
      }
    }
    if (!match) {
      ids.resize(start);
      break;
    }
  }
  if (ids.size() == start)
    ids.push_back(unkId);
  return true;
}

//===----------------------------------------------------------------------===//
// WordLevel
//===----------------------------------------------------------------------===//

bool WordLevelModel::init(Vocab vocab, std::string unkToken, std::string &) {
  vocab_ = std::move(vocab);
  this->unkToken = std::move(unkToken);
  unkId = vocab_.find(this->unkToken);
  return true;
}

bool WordLevelModel::tokenize(std::string_view word, std::vector<int32_t> &ids,
                              std::string &error) const {
  int32_t id = vocab_.find(word);
  if (id < 0)
    id = unkId;
  if (id < 0) {
    error = "WordLevel: the unknown token " + shorten(unkToken) +
            " is not in the vocabulary";
    return false;
  }
  ids.push_back(id);
  return true;
}

//===----------------------------------------------------------------------===//
// Unigram
//===----------------------------------------------------------------------===//

bool UnigramModel::init(std::vector<std::pair<std::string, double>> pieces,
                        int64_t unk, bool fallback, const std::string &what,
                        std::string &error) {
  if (pieces.empty()) {
    error = what + ": the Unigram vocabulary is empty";
    return false;
  }
  std::vector<std::pair<std::string, int64_t>> entries;
  entries.reserve(pieces.size());
  scores.assign(pieces.size(), 0.0);
  double minScore = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    maxPieceBytes = std::max(maxPieceBytes, pieces[i].first.size());
    scores[i] = pieces[i].second;
    minScore = i == 0 ? scores[i] : std::min(minScore, scores[i]);
    entries.emplace_back(std::move(pieces[i].first), static_cast<int64_t>(i));
  }
  if (!vocab_.build(std::move(entries), what, error))
    return false;
  if (unk >= static_cast<int64_t>(scores.size())) {
    error = what + ": unk_id " + std::to_string(unk) +
            " is not an id of the vocabulary (" +
            std::to_string(scores.size()) + " pieces)";
    return false;
  }
  unkId = static_cast<int32_t>(unk);
  byteFallback = fallback;
  // Hugging Face's K_UNK_PENALTY.
  unkScore = minScore - 10.0;
  return true;
}

bool UnigramModel::tokenize(std::string_view word, std::vector<int32_t> &ids,
                            std::string &error) const {
  size_t n = word.size();
  if (n == 0)
    return true;
  // best[e]: the highest score of a segmentation of word[0, e), reached by
  // the piece (from[e], id[e]); -1 ids mark the unknown piece. Ties keep
  // the first candidate in Hugging Face's order (by start, then length).
  constexpr double kNone = -std::numeric_limits<double>::infinity();
  std::vector<double> best(n + 1, kNone);
  std::vector<size_t> from(n + 1, 0);
  std::vector<int32_t> pieceId(n + 1, -2);
  best[0] = 0;
  auto charBytes = [&](size_t at) {
    return std::min(utf8Length(static_cast<unsigned char>(word[at])), n - at);
  };
  // Candidates are relaxed in the order Hugging Face inserts lattice nodes,
  // so that equal totals pick the same path: end positions are settled
  // before any node starting there is considered.
  for (size_t b = 0; b < n; b = b + charBytes(b)) {
    if (best[b] == kNone)
      continue;
    size_t first = charBytes(b);
    bool single = false;
    for (size_t len = first; len <= maxPieceBytes;) {
      int32_t id = vocab_.find(word.substr(b, len));
      if (id >= 0) {
        single |= len == first;
        double s = best[b] + scores[static_cast<size_t>(id)];
        if (s > best[b + len]) {
          best[b + len] = s;
          from[b + len] = b;
          pieceId[b + len] = id;
        }
      }
      if (b + len == n)
        break;
      len += charBytes(b + len);
    }
    if (!single && unkId >= 0) {
      double s = best[b] + unkScore;
      if (s > best[b + first]) {
        best[b + first] = s;
        from[b + first] = b;
        pieceId[b + first] = -1;
      }
    }
  }
  if (best[n] == kNone) {
    error = "Unigram: no segmentation of " + shorten(word) +
            " (the vocabulary has no unknown piece: unk_id is null)";
    return false;
  }
  // The path back to 0, then forward with consecutive unknowns fused.
  std::vector<std::pair<size_t, int32_t>> path; // (end, id)
  for (size_t e = n; e > 0; e = from[e])
    path.emplace_back(e, pieceId[e]);
  std::reverse(path.begin(), path.end());
  size_t start = 0, unkStart = 0;
  bool inUnk = false;
  auto flushUnk = [&](size_t end) {
    if (!inUnk)
      return;
    inUnk = false;
    std::string_view piece = word.substr(unkStart, end - unkStart);
    if (byteFallback) {
      std::vector<int32_t> bytes;
      for (unsigned char c : piece) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", c);
        int32_t id = vocab_.find(name);
        if (id < 0)
          break;
        bytes.push_back(id);
      }
      if (bytes.size() == piece.size()) {
        ids.insert(ids.end(), bytes.begin(), bytes.end());
        return;
      }
    }
    ids.push_back(unkId);
  };
  for (auto [end, id] : path) {
    if (id == -1 || id == unkId) {
      if (!inUnk) {
        inUnk = true;
        unkStart = start;
      }
    } else {
      flushUnk(start);
      ids.push_back(id);
    }
    start = end;
  }
  flushUnk(n);
  return true;
}

//===----------------------------------------------------------------------===//
// BPE
//===----------------------------------------------------------------------===//

/// Recent words and their ids, shared by the threads that encode.
struct BpeModel::Cache {
  static constexpr size_t kCapacity = 10000;
  static constexpr size_t kMaxWordBytes = 256;
  std::mutex mutex;
  std::unordered_map<std::string, std::vector<int32_t>> words;
};

BpeModel::BpeModel() = default;
BpeModel::~BpeModel() = default;

namespace {
constexpr uint64_t kOccupied = 1ull << 63;
uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}
} // namespace

bool BpeModel::lookupMerge(int32_t left, int32_t right, uint32_t &rank,
                           int32_t &id) const {
  if (mergeKeys.empty())
    return false;
  uint64_t key =
      (static_cast<uint64_t>(left) << 32 | static_cast<uint32_t>(right)) |
      kOccupied;
  for (uint64_t k = mix(key) & mergeMask;; k = (k + 1) & mergeMask) {
    if (mergeKeys[k] == key) {
      rank = static_cast<uint32_t>(mergeValues[k] >> 32);
      id = static_cast<int32_t>(mergeValues[k] & 0xFFFFFFFFu);
      return true;
    }
    if (mergeKeys[k] == 0)
      return false;
  }
}

bool BpeModel::init(
    Vocab vocab, const std::vector<std::pair<std::string, std::string>> &merges,
    Options opts, const std::string &what, std::string &error) {
  vocab_ = std::move(vocab);
  options = std::move(opts);
  cache = std::make_unique<Cache>();
  size_t capacity = 16;
  while (capacity < merges.size() * 2 + 16)
    capacity *= 2;
  mergeKeys.assign(capacity, 0);
  mergeValues.assign(capacity, 0);
  mergeMask = capacity - 1;
  const std::string prefix = options.continuingSubwordPrefix.value_or("");
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto &[a, b] = merges[rank];
    std::string where = what + "[" + std::to_string(rank) + "]";
    int32_t aId = vocab_.find(a), bId = vocab_.find(b);
    if (aId < 0 || bId < 0) {
      error = where + ": the token " + shorten(aId < 0 ? a : b) +
              " is not in the vocabulary";
      return false;
    }
    // The second part loses the continuation prefix in the merged token.
    if (b.size() < prefix.size() ||
        (b.size() > prefix.size() &&
         (static_cast<unsigned char>(b[prefix.size()]) & 0xC0) == 0x80)) {
      error = where + ": the token " + shorten(b) +
              " is shorter than the continuing_subword_prefix";
      return false;
    }
    std::string merged = a + b.substr(prefix.size());
    int32_t id = vocab_.find(merged);
    if (id < 0) {
      error = where + ": the merged token " + shorten(merged) +
              " is not in the vocabulary";
      return false;
    }
    uint64_t key =
        (static_cast<uint64_t>(aId) << 32 | static_cast<uint32_t>(bId)) |
        kOccupied;
    uint64_t k = mix(key) & mergeMask;
    while (mergeKeys[k] != 0 && mergeKeys[k] != key)
      k = (k + 1) & mergeMask;
    // A pair given twice takes its last rank (as a map built in order).
    mergeKeys[k] = key;
    mergeValues[k] =
        static_cast<uint64_t>(rank) << 32 | static_cast<uint32_t>(id);
  }
  unkId = options.unkToken ? vocab_.find(*options.unkToken) : -1;
  if (!options.continuingSubwordPrefix && !options.endOfWordSuffix) {
    smallChars.assign(0x800, -1);
    std::string ch;
    for (uint32_t cp = 0; cp < 0x800; ++cp) {
      ch.clear();
      appendUtf8(ch, cp);
      smallChars[cp] = vocab_.find(ch);
    }
  }
  return true;
}

int32_t BpeModel::charId(std::string_view ch, bool first, bool last) const {
  if (!smallChars.empty()) {
    size_t i = 0;
    uint32_t cp = nextChar(ch, i);
    if (cp < smallChars.size())
      return smallChars[cp];
    return vocab_.find(ch);
  }
  std::string s;
  if (!first && options.continuingSubwordPrefix)
    s += *options.continuingSubwordPrefix;
  s += ch;
  if (last && options.endOfWordSuffix)
    s += *options.endOfWordSuffix;
  return vocab_.find(s);
}

bool BpeModel::mergeWord(std::string_view word, std::vector<int32_t> &ids,
                         std::string &error) const {
  struct Symbol {
    int32_t id;
    int32_t prev, next;
    uint32_t len;
  };
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  auto add = [&](int32_t id, size_t len) {
    int32_t index = static_cast<int32_t>(symbols.size());
    symbols.push_back({id, index - 1, index + 1, static_cast<uint32_t>(len)});
  };
  // A pending unknown token (fused over consecutive unknown characters).
  int32_t pendingUnk = -1;
  size_t pendingLen = 0;
  for (size_t i = 0; i < word.size();) {
    size_t begin = i;
    i += utf8Length(static_cast<unsigned char>(word[i]));
    std::string_view ch = word.substr(begin, i - begin);
    int32_t id = charId(ch, begin == 0, i >= word.size());
    if (id >= 0) {
      if (pendingUnk >= 0) {
        add(pendingUnk, pendingLen);
        pendingUnk = -1;
      }
      add(id, ch.size());
      continue;
    }
    if (options.byteFallback) {
      // "<0xAB>" tokens for each byte, if all of them exist.
      int32_t byteIds[4];
      bool all = true;
      for (size_t k = 0; k < ch.size() && all; ++k) {
        char name[8];
        std::snprintf(name, sizeof(name), "<0x%02X>",
                      static_cast<unsigned char>(ch[k]));
        byteIds[k] = vocab_.find(name);
        all = byteIds[k] >= 0;
      }
      if (all) {
        for (size_t k = 0; k < ch.size(); ++k)
          add(byteIds[k], 1);
        continue;
      }
    }
    if (!options.unkToken)
      continue; // dropped, as without an unknown token in Hugging Face
    if (unkId < 0) {
      error = "BPE: the unknown token " + shorten(*options.unkToken) +
              " is not in the vocabulary";
      return false;
    }
    if (pendingUnk >= 0 && options.fuseUnk) {
      pendingLen += ch.size();
    } else {
      if (pendingUnk >= 0)
        add(pendingUnk, pendingLen);
      pendingUnk = unkId;
      pendingLen = ch.size();
    }
  }
  if (pendingUnk >= 0)
    add(pendingUnk, pendingLen);
  if (symbols.empty())
    return true;
  symbols.back().next = -1;

  struct Candidate {
    uint32_t rank;
    int32_t pos;
    int32_t id;
    bool operator<(const Candidate &o) const {
      // The priority queue pops the largest: lowest rank, then leftmost.
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  std::priority_queue<Candidate> queue;
  for (size_t k = 0; k + 1 < symbols.size(); ++k) {
    uint32_t rank;
    int32_t id;
    if (lookupMerge(symbols[k].id, symbols[k + 1].id, rank, id))
      queue.push({rank, static_cast<int32_t>(k), id});
  }
  while (!queue.empty()) {
    Candidate top = queue.top();
    queue.pop();
    Symbol &left = symbols[top.pos];
    if (left.len == 0 || left.next < 0)
      continue;
    Symbol right = symbols[left.next];
    uint32_t rank;
    int32_t id;
    // Skip entries made stale by an earlier merge.
    if (!lookupMerge(left.id, right.id, rank, id) || id != top.id)
      continue;
    left.id = top.id;
    left.len += right.len;
    symbols[left.next].len = 0;
    left.next = right.next;
    if (right.next >= 0)
      symbols[right.next].prev = top.pos;
    if (left.prev >= 0 && lookupMerge(symbols[left.prev].id, left.id, rank, id))
      queue.push({rank, left.prev, id});
    if (left.next >= 0 && lookupMerge(left.id, symbols[left.next].id, rank, id))
      queue.push({rank, top.pos, id});
  }
  for (const Symbol &s : symbols)
    if (s.len)
      ids.push_back(s.id);
  return true;
}

bool BpeModel::tokenize(std::string_view word, std::vector<int32_t> &ids,
                        std::string &error) const {
  if (word.empty())
    return true;
  if (options.ignoreMerges) {
    int32_t id = vocab_.find(word);
    if (id >= 0) {
      ids.push_back(id);
      return true;
    }
  }
  bool cacheable = word.size() < Cache::kMaxWordBytes;
  std::string key;
  if (cacheable) {
    key.assign(word.data(), word.size());
    std::lock_guard<std::mutex> lock(cache->mutex);
    auto it = cache->words.find(key);
    if (it != cache->words.end()) {
      ids.insert(ids.end(), it->second.begin(), it->second.end());
      return true;
    }
  }
  size_t mark = ids.size();
  if (!mergeWord(word, ids, error))
    return false;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache->mutex);
    if (cache->words.size() < Cache::kCapacity)
      cache->words.emplace(std::move(key),
                           std::vector<int32_t>(ids.begin() + mark, ids.end()));
  }
  return true;
}

//===----------------------------------------------------------------------===//
// SentencePiece merges by score (GGUF "llama" vocabularies)
//===----------------------------------------------------------------------===//

bool SpmModel::init(Vocab vocab, std::vector<float> scoresById, int32_t unk,
                    std::string &error) {
  vocab_ = std::move(vocab);
  scores = std::move(scoresById);
  unkId = unk;
  static const char hex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    std::string name = "<0x";
    name += hex[b >> 4];
    name += hex[b & 15];
    name += '>';
    int32_t id = vocab_.find(name);
    if (id < 0)
      id = vocab_.find(std::string(1, static_cast<char>(b)));
    byteIds[b] = id;
  }
  (void)error;
  return true;
}

bool SpmModel::tokenize(std::string_view word, std::vector<int32_t> &ids,
                        std::string &error) const {
  struct Symbol {
    size_t begin, size;
    int prev, next;
  };
  struct Bigram {
    float score;
    int left, right;
    size_t size;
  };
  std::vector<Symbol> symbols;
  for (size_t i = 0; i < word.size();) {
    size_t n = std::min(utf8Length(static_cast<unsigned char>(word[i])),
                        word.size() - i);
    int index = static_cast<int>(symbols.size());
    symbols.push_back({i, n, index - 1, i + n == word.size() ? -1 : index + 1});
    i += n;
  }
  // Highest score first; equal scores: the leftmost pair first.
  auto lower = [](const Bigram &a, const Bigram &b) {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  };
  std::priority_queue<Bigram, std::vector<Bigram>, decltype(lower)> queue(
      lower);
  auto tryPair = [&](int left, int right) {
    if (left < 0 || right < 0)
      return;
    std::string_view text = word.substr(
        symbols[left].begin, symbols[left].size + symbols[right].size);
    int32_t id = vocab_.find(text);
    if (id < 0 || static_cast<size_t>(id) >= scores.size())
      return;
    queue.push({scores[id], left, right, text.size()});
  };
  for (size_t i = 1; i < symbols.size(); ++i)
    tryPair(static_cast<int>(i) - 1, static_cast<int>(i));
  while (!queue.empty()) {
    Bigram b = queue.top();
    queue.pop();
    Symbol &l = symbols[b.left], &r = symbols[b.right];
    // Stale: one of the two was merged since.
    if (l.size == 0 || r.size == 0 || l.size + r.size != b.size)
      continue;
    l.size += r.size;
    r.size = 0;
    l.next = r.next;
    if (r.next >= 0)
      symbols[r.next].prev = b.left;
    tryPair(l.prev, b.left);
    tryPair(b.left, l.next);
  }
  for (int i = symbols.empty() ? -1 : 0; i != -1; i = symbols[i].next) {
    std::string_view text = word.substr(symbols[i].begin, symbols[i].size);
    int32_t id = vocab_.find(text);
    if (id >= 0) {
      ids.push_back(id);
      continue;
    }
    for (unsigned char c : text) {
      int32_t b = byteIds[c] >= 0 ? byteIds[c] : unkId;
      if (b < 0) {
        error = "the byte 0x" + std::to_string(c) +
                " has no token and the vocabulary no unknown token";
        return false;
      }
      ids.push_back(b);
    }
  }
  return true;
}
