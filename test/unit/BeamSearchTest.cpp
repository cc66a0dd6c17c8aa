//===- BeamSearchTest.cpp - Beam search ------------------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// BeamSearch against searches worked by hand with transformers' rules: only
// beam 0 is live at the start; an EOS among the first N continuations
// finishes a hypothesis scored sum(log p) / length^penalty; the best
// running beam that cannot beat the worst finished one ends the search; the
// length limit finishes every beam; ties go to the smaller (beam, token).
//
//===----------------------------------------------------------------------===//

#include "tfc/Sampling/BeamSearch.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace tfc::rt;

namespace {

/// Logits whose softmax is `p` (log p itself), one row per beam.
std::vector<float> rows(const std::vector<double> &p, size_t beams) {
  std::vector<float> out;
  for (size_t b = 0; b < beams; ++b)
    for (double x : p)
      out.push_back(static_cast<float>(std::log(x)));
  return out;
}

TEST(BeamSearch, LengthLimitFinishesTheBestBeams) {
  BeamSearchParams params;
  params.beams = 2;
  params.maxNewTokens = 3;
  params.eos = {3};
  BeamSearch search(params);
  std::vector<float> l = rows({0.5, 0.3, 0.15, 0.05}, 2);
  BeamSearch::Step step;
  ASSERT_TRUE(search.step(l.data(), 4, step));
  // Only beam 0 was live: its two best tokens.
  EXPECT_EQ(step.parents, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(step.tokens, (std::vector<int64_t>{0, 1}));
  ASSERT_TRUE(search.step(l.data(), 4, step));
  // [0,1] and [1,0] tie (0.15): the smaller (beam, token) index wins.
  EXPECT_EQ(step.parents, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(step.tokens, (std::vector<int64_t>{0, 1}));
  EXPECT_FALSE(search.step(l.data(), 4, step));
  ASSERT_EQ(search.finished().size(), 2u);
  EXPECT_EQ(search.best().tokens, (std::vector<int64_t>{0, 0, 0}));
  EXPECT_NEAR(search.best().score, std::log(0.125) / 3, 1e-6);
  EXPECT_EQ(search.finished()[1].tokens, (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(search.steps(), 3);
}

// Step 1: p = [eos .4, a .35, b .25] finishes [eos] (log .4); a and b run.
// Step 2: p = [eos .9, a .05, b .05] finishes [a, eos] (.315) and [b, eos]
// (.225); the running [a, a] (.0175) cannot beat them: the search ends.
void eosSearch(double lengthPenalty, std::vector<int64_t> best,
               double bestScore) {
  BeamSearchParams params;
  params.beams = 2;
  params.maxNewTokens = 10;
  params.eos = {0};
  params.lengthPenalty = lengthPenalty;
  BeamSearch search(params);
  BeamSearch::Step step;
  std::vector<float> first = rows({0.4, 0.35, 0.25}, 2);
  ASSERT_TRUE(search.step(first.data(), 3, step));
  EXPECT_EQ(step.parents, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(step.tokens, (std::vector<int64_t>{1, 2}));
  std::vector<float> second = rows({0.9, 0.05, 0.05}, 2);
  EXPECT_FALSE(search.step(second.data(), 3, step));
  EXPECT_EQ(search.best().tokens, best);
  EXPECT_NEAR(search.best().score, bestScore, 1e-6);
  EXPECT_EQ(search.finished().size(), 2u);
}

TEST(BeamSearch, LengthPenaltyOneFavoursTheLongerHypothesis) {
  eosSearch(1.0, {1, 0}, std::log(0.315) / 2);
}

TEST(BeamSearch, LengthPenaltyZeroKeepsTheRawScore) {
  eosSearch(0.0, {0}, std::log(0.4));
}

TEST(BeamSearch, EarlyStoppingEndsWhenBeamsHaveFinished) {
  BeamSearchParams params;
  params.beams = 1;
  params.maxNewTokens = 10;
  params.eos = {0};
  params.earlyStopping = true;
  BeamSearch search(params);
  BeamSearch::Step step;
  std::vector<float> l = rows({0.6, 0.4}, 1);
  EXPECT_FALSE(search.step(l.data(), 2, step));
  EXPECT_EQ(search.best().tokens, (std::vector<int64_t>{0}));
}

TEST(BeamSearch, OneBeamIsGreedy) {
  BeamSearchParams params;
  params.beams = 1;
  params.maxNewTokens = 4;
  BeamSearch search(params);
  BeamSearch::Step step;
  std::vector<float> l = {0.1f, 2.0f, -1.0f};
  int steps = 0;
  while (search.step(l.data(), 3, step)) {
    EXPECT_EQ(step.tokens, (std::vector<int64_t>{1}));
    ++steps;
  }
  EXPECT_EQ(steps, 3);
  EXPECT_EQ(search.best().tokens, (std::vector<int64_t>{1, 1, 1, 1}));
}

TEST(BeamSearch, RejectsBadParameters) {
  std::string error;
  BeamSearchParams params;
  params.beams = 0;
  EXPECT_FALSE(validateBeamSearchParams(params, error));
  EXPECT_NE(error.find("beams"), std::string::npos);
  params.beams = 2;
  params.maxNewTokens = 0;
  EXPECT_FALSE(validateBeamSearchParams(params, error));
  params.maxNewTokens = 5;
  params.lengthPenalty = NAN;
  EXPECT_FALSE(validateBeamSearchParams(params, error));
}

} // namespace
