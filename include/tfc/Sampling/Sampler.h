//===- Sampler.h - Choosing the next token from logits ----------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Picks the next token of a generation from the logits of the last position,
// with the logits processors of Hugging Face transformers, in its order:
//
//   repetition penalty: the logit of every id seen so far (prompt and
//     generated) is divided by the penalty when positive, multiplied by it
//     when negative (RepetitionPenaltyLogitsProcessor);
//   temperature 0: greedy, the first id of the largest logit (no sampling:
//     no random numbers are drawn);
//   otherwise: logits / temperature, then top-k (the k largest), top-p (the
//     smallest set of the most probable ids whose probability reaches p, at
//     least one), min-p (ids at least min_p times as probable as the most
//     probable one), and a draw from the softmax of what is left with a
//     seeded std::mt19937_64: the same seed and logits give the same ids on
//     every platform.
//
// Ties are broken by the smaller id. Logits that are NaN never win and are
// never drawn; -inf logits have probability 0.
//
// Plain C++17 with no LLVM dependency: this is part of libtfcrt.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_SAMPLING_SAMPLER_H
#define TFC_SAMPLING_SAMPLER_H

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace tfc::rt {

struct SamplingParams {
  /// 0: greedy. Otherwise > 0.
  double temperature = 0;
  /// 0: off. Otherwise keep the k most probable ids.
  int64_t topK = 0;
  /// In (0, 1]; 1: off.
  double topP = 1;
  /// In [0, 1); 0: off.
  double minP = 0;
  /// > 0; 1: off.
  double repetitionPenalty = 1;
  uint64_t seed = 0;
};

/// Checks the parameters; false with a message naming the first bad one
/// ("temperature must be >= 0, not -1").
bool validateSamplingParams(const SamplingParams &params, std::string &error);

class Sampler {
public:
  /// `params` must be valid (validateSamplingParams).
  explicit Sampler(const SamplingParams &params);

  /// The next id from `vocab` logits, given the ids so far (for the
  /// repetition penalty; ids outside the vocabulary are ignored).
  int64_t sample(const float *logits, size_t vocab,
                 const std::vector<int64_t> &previous);

  /// The distribution `sample` draws from for these logits: (id,
  /// probability) pairs with non-zero probability, most probable first.
  /// With temperature 0, the greedy id with probability 1.
  std::vector<std::pair<int64_t, double>>
  distribution(const float *logits, size_t vocab,
               const std::vector<int64_t> &previous) const;

  const SamplingParams &params() const { return params_; }

  /// The greedy choice: the first index of the largest value (NaN never
  /// wins; all NaN gives 0).
  static int64_t argmax(const float *logits, size_t vocab);

private:
  /// The penalised logits, in `scratch`.
  const float *penalize(const float *logits, size_t vocab,
                        const std::vector<int64_t> &previous,
                        std::vector<float> &scratch) const;

  SamplingParams params_;
  std::mt19937_64 rng_;
  std::vector<float> penalized_;
  std::vector<std::pair<int64_t, double>> candidates_;
};

} // namespace tfc::rt

#endif // TFC_SAMPLING_SAMPLER_H
