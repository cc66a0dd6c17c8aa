//===- BeamSearch.cpp - Beam search over the logits of each step ----------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// See BeamSearch.h: transformers' _beam_search, step by step, for one
// sequence.
//
//===----------------------------------------------------------------------===//

#include "tfc/Sampling/BeamSearch.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

using namespace tfc::rt;

namespace {
/// transformers' stand-in for "never": added to scores that must lose.
constexpr double kLose = -1.0e9;
} // namespace

bool tfc::rt::validateBeamSearchParams(const BeamSearchParams &params,
                                       std::string &error) {
  if (params.beams < 1) {
    error = "the number of beams must be >= 1, not " +
            std::to_string(params.beams);
    return false;
  }
  if (params.maxNewTokens < 1) {
    error = "beam search needs max new tokens >= 1, not " +
            std::to_string(params.maxNewTokens);
    return false;
  }
  if (!std::isfinite(params.lengthPenalty)) {
    error = "the length penalty must be a finite number";
    return false;
  }
  return true;
}

BeamSearch::BeamSearch(const BeamSearchParams &params) : params_(params) {
  running_.resize(static_cast<size_t>(params_.beams));
  for (size_t b = 1; b < running_.size(); ++b)
    running_[b].score = kLose;
}

bool BeamSearch::step(const float *logits, size_t vocab, Step &next) {
  if (done_ || vocab == 0)
    return false;
  const size_t n = running_.size();
  // Accumulated log-probabilities of every (beam, token).
  std::vector<double> scores(n * vocab);
  for (size_t b = 0; b < n; ++b) {
    const float *row = logits + b * vocab;
    double max = -std::numeric_limits<double>::infinity();
    for (size_t t = 0; t < vocab; ++t)
      if (!std::isnan(row[t]))
        max = std::max(max, static_cast<double>(row[t]));
    double sum = 0;
    for (size_t t = 0; t < vocab; ++t)
      if (!std::isnan(row[t]))
        sum += std::exp(row[t] - max);
    double logSum = max + std::log(sum);
    for (size_t t = 0; t < vocab; ++t)
      scores[b * vocab + t] =
          (std::isnan(row[t]) ? -std::numeric_limits<double>::infinity()
                              : row[t] - logSum) +
          running_[b].score;
  }
  // The K best continuations, best first (ties: the smaller index).
  size_t k = std::min(
      static_cast<size_t>(std::max<int64_t>(
                              2, 1 + static_cast<int64_t>(params_.eos.size()))) *
          n,
      n * vocab);
  std::vector<size_t> top(n * vocab);
  std::iota(top.begin(), top.end(), 0);
  auto better = [&](size_t a, size_t b) {
    return scores[a] > scores[b] || (scores[a] == scores[b] && a < b);
  };
  std::partial_sort(top.begin(), top.begin() + k, top.end(), better);
  top.resize(k);

  bool atLimit = steps_ + 1 >= params_.maxNewTokens;
  std::vector<bool> ends(k);
  bool allEnd = true;
  for (size_t i = 0; i < k; ++i) {
    int64_t token = static_cast<int64_t>(top[i] % vocab);
    ends[i] = atLimit || std::find(params_.eos.begin(), params_.eos.end(),
                                   token) != params_.eos.end();
    allEnd &= ends[i];
  }

  // Finished hypotheses: those among the first N that end, while they can
  // still improve on what has finished.
  bool full = finished_.size() == n;
  if (improvable_ && !(params_.earlyStopping && full)) {
    double norm = std::pow(static_cast<double>(steps_ + 1),
                           params_.lengthPenalty);
    std::vector<Hypothesis> merged = finished_;
    for (size_t i = 0; i < std::min(k, n); ++i) {
      if (!ends[i])
        continue;
      Hypothesis h;
      size_t beam = top[i] / vocab;
      h.tokens = running_[beam].tokens;
      h.tokens.push_back(static_cast<int64_t>(top[i] % vocab));
      h.score = scores[top[i]] / norm;
      merged.push_back(std::move(h));
    }
    // Best first; of equal scores the one kept earlier.
    std::vector<size_t> rank(merged.size());
    std::iota(rank.begin(), rank.end(), 0);
    std::sort(rank.begin(), rank.end(), [&](size_t a, size_t b) {
      return merged[a].score > merged[b].score ||
             (merged[a].score == merged[b].score && a < b);
    });
    finished_.clear();
    for (size_t i = 0; i < rank.size() && i < n; ++i)
      finished_.push_back(std::move(merged[rank[i]]));
  }

  // The N best continuations that do not end run on (those that end sort
  // last, 1e9 lower, as in transformers).
  std::vector<size_t> order(k);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    double sa = scores[top[a]] + (ends[a] ? kLose : 0),
           sb = scores[top[b]] + (ends[b] ? kLose : 0);
    return sa > sb || (sa == sb && a < b);
  });
  std::vector<Beam> running(n);
  Step step;
  for (size_t i = 0; i < n && i < k; ++i) {
    size_t c = top[order[i]];
    size_t beam = c / vocab;
    running[i].tokens = running_[beam].tokens;
    running[i].tokens.push_back(static_cast<int64_t>(c % vocab));
    running[i].score = scores[c] + (ends[order[i]] ? kLose : 0);
    step.parents.push_back(static_cast<int64_t>(beam));
    step.tokens.push_back(static_cast<int64_t>(c % vocab));
  }
  running_ = std::move(running);
  ++steps_;

  // Can the best running beam still beat the worst finished hypothesis?
  double best = running_.front().score /
                std::pow(static_cast<double>(steps_), params_.lengthPenalty);
  double worst = finished_.size() == n ? finished_.back().score : kLose;
  improvable_ = improvable_ && best > worst;
  full = finished_.size() == n;
  done_ = !improvable_ || (params_.earlyStopping && full) || allEnd;
  if (done_) {
    if (finished_.empty()) { // nothing ended: keep the best running beam
      Hypothesis h;
      h.tokens = running_.front().tokens;
      h.score = running_.front().score;
      finished_.push_back(std::move(h));
    }
    return false;
  }
  next = std::move(step);
  return true;
}
