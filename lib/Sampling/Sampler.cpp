//===- Sampler.cpp - Choosing the next token from logits ------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The filters work on (id, weight) candidates, weight = exp((l - max l) / T)
// in float, so the most probable id has weight 1 and min-p compares weights
// directly. Top-k finds the k-th logit with a min-heap of k values (one
// comparison for most of the vocabulary); top-p pops a heap until the kept
// mass reaches p (O(V + m log V) for a nucleus of m ids) instead of sorting
// the whole vocabulary every step. On SmolLM2's 49,152 ids each mode,
// top-p over a flat distribution included, costs a small fraction of a
// decode step (figures: commit a18bcce).
//
//===----------------------------------------------------------------------===//

#include "tfc/Sampling/Sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

using namespace tfc::rt;

namespace {

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

using Candidate = std::pair<int64_t, double>; // id, score or weight

/// Higher first, then the smaller id.
bool before(const Candidate &a, const Candidate &b) {
  return a.second > b.second || (a.second == b.second && a.first < b.first);
}

} // namespace

bool tfc::rt::validateSamplingParams(const SamplingParams &p,
                                     std::string &error) {
  if (!(p.temperature >= 0) || std::isinf(p.temperature)) {
    error = "temperature must be a number >= 0 (0: greedy), not " +
            number(p.temperature);
    return false;
  }
  if (p.topK < 0) {
    error = "top-k must be >= 0 (0: off), not " + std::to_string(p.topK);
    return false;
  }
  if (!(p.topP > 0 && p.topP <= 1)) {
    error = "top-p must be in (0, 1] (1: off), not " + number(p.topP);
    return false;
  }
  if (!(p.minP >= 0 && p.minP < 1)) {
    error = "min-p must be in [0, 1) (0: off), not " + number(p.minP);
    return false;
  }
  if (!(p.repetitionPenalty > 0) || std::isinf(p.repetitionPenalty)) {
    error = "the repetition penalty must be a number > 0 (1: off), not " +
            number(p.repetitionPenalty);
    return false;
  }
  return true;
}

Sampler::Sampler(const SamplingParams &params)
    : params_(params), rng_(params.seed) {}

int64_t Sampler::argmax(const float *logits, size_t vocab) {
  int64_t best = -1;
  for (size_t i = 0; i < vocab; ++i) {
    if (std::isnan(logits[i]))
      continue;
    if (best < 0 || logits[i] > logits[best])
      best = static_cast<int64_t>(i);
  }
  return best < 0 ? 0 : best;
}

const float *Sampler::penalize(const float *logits, size_t vocab,
                               const std::vector<int64_t> &previous,
                               std::vector<float> &scratch) const {
  if (params_.repetitionPenalty == 1 || previous.empty())
    return logits;
  scratch.assign(logits, logits + vocab);
  std::vector<int64_t> ids = previous;
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  float penalty = static_cast<float>(params_.repetitionPenalty);
  for (int64_t id : ids) {
    if (id < 0 || static_cast<size_t>(id) >= vocab)
      continue;
    float &x = scratch[static_cast<size_t>(id)];
    x = x < 0 ? x * penalty : x / penalty;
  }
  return scratch.data();
}

namespace {

/// The candidates left by temperature, top-k, top-p and min-p, as (id,
/// weight) with the most probable at weight 1.
void filterCandidates(const SamplingParams &p, const float *l, size_t vocab,
                      std::vector<Candidate> &out) {
  out.clear();
  const float inf = std::numeric_limits<float>::infinity();
  // The largest logit; +inf logits (if any) share all the probability.
  float lmax = -inf;
  for (size_t i = 0; i < vocab; ++i)
    if (l[i] > lmax)
      lmax = l[i];
  if (lmax == -inf)
    return; // all -inf or NaN
  if (lmax == inf) {
    for (size_t i = 0; i < vocab; ++i)
      if (l[i] == inf)
        out.emplace_back(static_cast<int64_t>(i), 1.0);
    return;
  }
  // Top-k: everything at least as large as the k-th largest logit (ties
  // kept, as transformers' TopKLogitsWarper; dividing by the temperature
  // keeps the order). The k-th comes from a min-heap of k values: one
  // comparison for most logits.
  float floor = -inf;
  if (p.topK > 0 && static_cast<size_t>(p.topK) < vocab) {
    std::vector<float> heap;
    size_t k = static_cast<size_t>(p.topK);
    heap.reserve(k);
    for (size_t i = 0; i < vocab; ++i) {
      float x = l[i];
      if (!(x > -inf))
        continue;
      if (heap.size() < k) {
        heap.push_back(x);
        std::push_heap(heap.begin(), heap.end(), std::greater<float>());
      } else if (x > heap.front()) {
        std::pop_heap(heap.begin(), heap.end(), std::greater<float>());
        heap.back() = x;
        std::push_heap(heap.begin(), heap.end(), std::greater<float>());
      }
    }
    if (heap.size() == k)
      floor = heap.front();
  }
  for (size_t i = 0; i < vocab; ++i)
    if (l[i] > -inf && l[i] >= floor) // not NaN, not -inf
      out.emplace_back(static_cast<int64_t>(i), l[i]);
  // Weights exp((l - max) / T) in float (the most probable is 1).
  float invT = static_cast<float>(1.0 / p.temperature);
  for (Candidate &c : out)
    c.second = std::exp((static_cast<float>(c.second) - lmax) * invT);
  // Top-p: the most probable ids until their mass reaches p.
  if (p.topP < 1) {
    double total = 0;
    for (const Candidate &c : out)
      total += c.second;
    double want = p.topP * total;
    auto heapLess = [](const Candidate &a, const Candidate &b) {
      return before(b, a);
    };
    std::make_heap(out.begin(), out.end(), heapLess);
    size_t kept = 0;
    double mass = 0;
    auto end = out.end();
    while (end != out.begin() && (kept == 0 || mass < want)) {
      std::pop_heap(out.begin(), end, heapLess);
      --end;
      mass += end->second;
      ++kept;
    }
    // The popped ids are at the back, least probable first.
    out.erase(out.begin(), end);
    std::reverse(out.begin(), out.end());
  }
  // Min-p: at least min_p times the top probability (weight 1).
  if (p.minP > 0)
    out.erase(
        std::remove_if(out.begin(), out.end(),
                       [&](const Candidate &c) { return c.second < p.minP; }),
        out.end());
}

} // namespace

std::vector<std::pair<int64_t, double>>
Sampler::distribution(const float *logits, size_t vocab,
                      const std::vector<int64_t> &previous) const {
  std::vector<float> scratch;
  const float *l = penalize(logits, vocab, previous, scratch);
  if (params_.temperature == 0)
    return {{argmax(l, vocab), 1.0}};
  std::vector<Candidate> c;
  filterCandidates(params_, l, vocab, c);
  if (c.empty())
    return {{argmax(l, vocab), 1.0}};
  double total = 0;
  for (const Candidate &x : c)
    total += x.second;
  for (Candidate &x : c)
    x.second /= total;
  std::sort(c.begin(), c.end(), before);
  return c;
}

int64_t Sampler::sample(const float *logits, size_t vocab,
                        const std::vector<int64_t> &previous) {
  const float *l = penalize(logits, vocab, previous, penalized_);
  if (params_.temperature == 0)
    return argmax(l, vocab);
  std::vector<Candidate> &c = candidates_;
  filterCandidates(params_, l, vocab, c);
  // A uniform double in [0, 1) from the top 53 bits: the same on every
  // standard library (std::uniform_real_distribution is not).
  double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
  if (c.empty())
    return argmax(l, vocab);
  double total = 0;
  for (const Candidate &x : c)
    total += x.second;
  double target = u * total, cum = 0;
  for (const Candidate &x : c) {
    cum += x.second;
    if (target < cum)
      return x.first;
  }
  return c.back().first;
}
