//===- SamplerTest.cpp - Choosing the next token
//---------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Sampler: greedy is the argmax; a seed fixes the ids; top-k 1 is greedy;
// the repetition penalty as transformers applies it; the distributions after
// temperature, top-k, top-p and min-p against values worked by hand; and
// chi-squared goodness-of-fit tests of 20,000 draws against the softmax, with
// and without truncation (truncated ids never drawn).
//
//===----------------------------------------------------------------------===//

#include "tfc/Sampling/Sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

using namespace tfc::rt;

namespace {

const std::vector<float> kLogits = {1.0f, 2.5f,  -0.5f, 0.3f,
                                    2.0f, -1.0f, 0.8f,  1.7f};

std::vector<double> softmax(const std::vector<float> &l, double temperature) {
  double m = -INFINITY, sum = 0;
  for (float x : l)
    m = std::max(m, x / temperature);
  std::vector<double> p;
  for (float x : l) {
    p.push_back(std::exp(x / temperature - m));
    sum += p.back();
  }
  for (double &x : p)
    x /= sum;
  return p;
}

SamplingParams sampling(double temperature, uint64_t seed = 42) {
  SamplingParams p;
  p.temperature = temperature;
  p.seed = seed;
  return p;
}

/// Pearson's statistic of `draws` samples against the probabilities of
/// `expected` (ids outside it must never be drawn).
double chiSquared(Sampler &s, const std::vector<float> &logits,
                  const std::map<int64_t, double> &expected, int draws) {
  std::map<int64_t, int> counts;
  for (int i = 0; i < draws; ++i)
    ++counts[s.sample(logits.data(), logits.size(), {})];
  for (const auto &kv : counts)
    EXPECT_TRUE(expected.count(kv.first))
        << "id " << kv.first << " was drawn " << kv.second
        << " times but has probability 0";
  double chi2 = 0;
  for (const auto &kv : expected) {
    double e = kv.second * draws;
    double d = counts[kv.first] - e;
    chi2 += d * d / e;
  }
  return chi2;
}

// Critical values of the chi-squared distribution at p = 0.001.
double critical(size_t degreesOfFreedom) {
  static const double table[] = {0,      10.828, 13.816, 16.266,
                                 18.467, 20.515, 22.458, 24.322};
  return table[degreesOfFreedom];
}

TEST(Sampler, Validation) {
  std::string error;
  EXPECT_TRUE(validateSamplingParams(SamplingParams(), error));
  SamplingParams p;
  p.temperature = -1;
  EXPECT_FALSE(validateSamplingParams(p, error));
  EXPECT_EQ(error, "temperature must be a number >= 0 (0: greedy), not -1");
  p = SamplingParams();
  p.temperature = NAN;
  EXPECT_FALSE(validateSamplingParams(p, error));
  p = SamplingParams();
  p.topP = 0;
  EXPECT_FALSE(validateSamplingParams(p, error));
  EXPECT_EQ(error, "top-p must be in (0, 1] (1: off), not 0");
  p.topP = 1.5;
  EXPECT_FALSE(validateSamplingParams(p, error));
  p = SamplingParams();
  p.topK = -3;
  EXPECT_FALSE(validateSamplingParams(p, error));
  EXPECT_EQ(error, "top-k must be >= 0 (0: off), not -3");
  p = SamplingParams();
  p.minP = 1;
  EXPECT_FALSE(validateSamplingParams(p, error));
  EXPECT_EQ(error, "min-p must be in [0, 1) (0: off), not 1");
  p = SamplingParams();
  p.repetitionPenalty = 0;
  EXPECT_FALSE(validateSamplingParams(p, error));
  EXPECT_EQ(error,
            "the repetition penalty must be a number > 0 (1: off), not 0");
}

TEST(Sampler, GreedyIsArgmax) {
  Sampler s(sampling(0));
  EXPECT_EQ(s.sample(kLogits.data(), kLogits.size(), {}), 1);
  // The first of equal maxima; NaN never wins.
  std::vector<float> ties = {0, 3, 1, 3};
  EXPECT_EQ(s.sample(ties.data(), ties.size(), {}), 1);
  std::vector<float> nan = {NAN, 1, 2, NAN};
  EXPECT_EQ(s.sample(nan.data(), nan.size(), {}), 2);
  EXPECT_EQ(Sampler::argmax(kLogits.data(), kLogits.size()), 1);
  auto d = s.distribution(kLogits.data(), kLogits.size(), {});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].first, 1);
  EXPECT_EQ(d[0].second, 1.0);
}

TEST(Sampler, SeedFixesTheIds) {
  auto run = [](uint64_t seed) {
    SamplingParams p = sampling(1.0, seed);
    p.topK = 6;
    p.topP = 0.95;
    Sampler s(p);
    std::vector<int64_t> ids;
    for (int i = 0; i < 200; ++i)
      ids.push_back(s.sample(kLogits.data(), kLogits.size(), ids));
    return ids;
  };
  EXPECT_EQ(run(7), run(7));
  EXPECT_NE(run(7), run(8));
  // Without filters the draw walks the ids in order: the first id whose
  // cumulative weight exceeds u * total, u from the top 53 bits of
  // mt19937_64's first output.
  std::mt19937_64 rng(7);
  double u = double(rng() >> 11) * 0x1.0p-53;
  std::vector<double> p = softmax(kLogits, 1);
  double cum = 0;
  int64_t want = 0;
  while (want < 7 && (cum += p[size_t(want)]) <= u)
    ++want;
  Sampler s(sampling(1, 7));
  EXPECT_EQ(s.sample(kLogits.data(), kLogits.size(), {}), want);
}

TEST(Sampler, TopKOneIsGreedy) {
  SamplingParams p = sampling(1.5);
  p.topK = 1;
  Sampler s(p);
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(s.sample(kLogits.data(), kLogits.size(), {}), 1);
}

TEST(Sampler, RepetitionPenalty) {
  // Positive logits divided, negative multiplied, each id once however often
  // it occurred (transformers' RepetitionPenaltyLogitsProcessor).
  SamplingParams p = sampling(0);
  p.repetitionPenalty = 2;
  Sampler s(p);
  // 2.5 -> 1.25 loses to 2.0 (id 4).
  EXPECT_EQ(s.sample(kLogits.data(), kLogits.size(), {1, 1, 1}), 4);
  // And to 1.7 when 4 was seen too (2.0 -> 1.0).
  EXPECT_EQ(s.sample(kLogits.data(), kLogits.size(), {1, 4}), 7);
  // Negative logits: -0.5 -> -1.0 at temperature 1.
  SamplingParams q = sampling(1);
  q.repetitionPenalty = 2;
  std::vector<float> l = {-0.5f, -1.0f};
  auto d = Sampler(q).distribution(l.data(), l.size(), {0, 99, -1});
  ASSERT_EQ(d.size(), 2u);
  EXPECT_NEAR(d[0].second, 0.5, 1e-6);
  EXPECT_NEAR(d[1].second, 0.5, 1e-6);
}

TEST(Sampler, DistributionsAfterEachFilter) {
  // Temperature: softmax(l / T).
  SamplingParams p = sampling(0.7);
  auto d = Sampler(p).distribution(kLogits.data(), kLogits.size(), {});
  std::vector<double> want = softmax(kLogits, 0.7);
  ASSERT_EQ(d.size(), 8u);
  for (const auto &kv : d)
    EXPECT_NEAR(kv.second, want[size_t(kv.first)], 1e-6);
  // Sorted, most probable first: 1, 4, 7, 0, 6, 3, 2, 5.
  std::vector<int64_t> order;
  for (const auto &kv : d)
    order.push_back(kv.first);
  EXPECT_EQ(order, (std::vector<int64_t>{1, 4, 7, 0, 6, 3, 2, 5}));

  // Top-k 3: ids 1, 4, 7 renormalised.
  p = sampling(1);
  p.topK = 3;
  d = Sampler(p).distribution(kLogits.data(), kLogits.size(), {});
  std::vector<double> all = softmax(kLogits, 1);
  double mass = all[1] + all[4] + all[7];
  ASSERT_EQ(d.size(), 3u);
  EXPECT_NEAR(d[0].second, all[1] / mass, 1e-6);
  EXPECT_NEAR(d[2].second, all[7] / mass, 1e-6);
  // Ties at the k-th value are kept, as transformers keeps them.
  std::vector<float> tied = {3, 1, 1, 0};
  p.topK = 2;
  EXPECT_EQ(Sampler(p).distribution(tied.data(), 4, {}).size(), 3u);

  // Top-p: softmax(kLogits) sorted is 0.377 (id 1), 0.2287 (4), 0.1694 (7),
  // 0.0841 (0), ...: p = 0.3 keeps id 1 alone, p = 0.5 ids 1 and 4.
  p = sampling(1);
  p.topP = 0.3;
  d = Sampler(p).distribution(kLogits.data(), kLogits.size(), {});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].first, 1);
  p.topP = 0.5;
  d = Sampler(p).distribution(kLogits.data(), kLogits.size(), {});
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[1].first, 4);
  EXPECT_NEAR(d[1].second, all[4] / (all[1] + all[4]), 1e-6);
  // Top-p 1 keeps everything; a tiny p keeps at least one id.
  p.topP = 1e-9;
  EXPECT_EQ(Sampler(p).distribution(kLogits.data(), 8, {}).size(), 1u);

  // Min-p 0.3: p(id) >= 0.3 * p(1) = 0.1131: ids 1, 4, 7 (0.0841 < 0.1131).
  p = sampling(1);
  p.minP = 0.3;
  d = Sampler(p).distribution(kLogits.data(), kLogits.size(), {});
  ASSERT_EQ(d.size(), 3u);
  EXPECT_NEAR(d[0].second, all[1] / mass, 1e-6);

  // -inf logits have probability 0; NaN logits are never drawn.
  std::vector<float> inf = {-INFINITY, 0, NAN, 0};
  d = Sampler(sampling(1)).distribution(inf.data(), 4, {});
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].first, 1);
  EXPECT_EQ(d[1].first, 3);
  EXPECT_NEAR(d[0].second, 0.5, 1e-6);
}

TEST(Sampler, ChiSquaredAgainstSoftmax) {
  const int draws = 20000;
  // The full softmax at T = 1 and T = 0.8: 7 degrees of freedom.
  for (double t : {1.0, 0.8}) {
    Sampler s(sampling(t, 1234));
    std::vector<double> p = softmax(kLogits, t);
    std::map<int64_t, double> expected;
    for (size_t i = 0; i < p.size(); ++i)
      expected[int64_t(i)] = p[i];
    double chi2 = chiSquared(s, kLogits, expected, draws);
    EXPECT_LT(chi2, critical(7)) << "temperature " << t;
  }
  // Top-k 4: ids 1, 4, 7, 0 renormalised; the others never drawn.
  {
    SamplingParams params = sampling(1, 99);
    params.topK = 4;
    Sampler s(params);
    std::vector<double> p = softmax(kLogits, 1);
    double mass = p[1] + p[4] + p[7] + p[0];
    std::map<int64_t, double> expected = {
        {1, p[1] / mass}, {4, p[4] / mass}, {7, p[7] / mass}, {0, p[0] / mass}};
    EXPECT_LT(chiSquared(s, kLogits, expected, draws), critical(3));
  }
  // Top-p 0.7: 0.377 + 0.2287 = 0.6057 < 0.7, + 0.1694 (id 7) reaches it:
  // three ids.
  {
    SamplingParams params = sampling(1, 5);
    params.topP = 0.7;
    Sampler s(params);
    std::vector<double> p = softmax(kLogits, 1);
    double mass = p[1] + p[4] + p[7];
    std::map<int64_t, double> expected = {
        {1, p[1] / mass}, {4, p[4] / mass}, {7, p[7] / mass}};
    EXPECT_LT(chiSquared(s, kLogits, expected, draws), critical(2));
  }
  // Min-p 0.3 with temperature 1.3.
  {
    SamplingParams params = sampling(1.3, 11);
    params.minP = 0.3;
    Sampler s(params);
    std::vector<double> p = softmax(kLogits, 1.3);
    std::map<int64_t, double> expected;
    double top = p[1], mass = 0;
    for (size_t i = 0; i < p.size(); ++i)
      if (p[i] >= 0.3 * top)
        mass += p[i];
    for (size_t i = 0; i < p.size(); ++i)
      if (p[i] >= 0.3 * top)
        expected[int64_t(i)] = p[i] / mass;
    ASSERT_GE(expected.size(), 2u);
    EXPECT_LT(chiSquared(s, kLogits, expected, draws),
              critical(expected.size() - 1));
  }
}

TEST(Sampler, LargeVocabularyTopP) {
  // 50,000 ids: the heap-based top-p keeps the same set a full sort would.
  std::vector<float> l(50000);
  uint64_t x = 1;
  for (float &v : l) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    v = float((x >> 40) % 1000) / 100.0f;
  }
  SamplingParams p = sampling(1);
  p.topP = 0.9;
  auto d = Sampler(p).distribution(l.data(), l.size(), {});
  std::vector<double> sm = softmax(l, 1);
  std::vector<std::pair<double, int64_t>> sorted;
  for (size_t i = 0; i < sm.size(); ++i)
    sorted.emplace_back(-sm[i], int64_t(i));
  std::sort(sorted.begin(), sorted.end());
  double cum = 0;
  size_t n = 0;
  while (cum < 0.9)
    cum += -sorted[n++].first;
  EXPECT_EQ(d.size(), n);
  for (size_t i = 0; i < std::min(n, d.size()); ++i)
    EXPECT_EQ(d[i].first, sorted[i].second) << i;
}

} // namespace
