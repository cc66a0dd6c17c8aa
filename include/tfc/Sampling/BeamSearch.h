//===- BeamSearch.h - Beam search over the logits of each step --*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The beam search of Hugging Face transformers' generate(num_beams=N,
// do_sample=False) (generation/utils.py, _beam_search, 5.x), for one
// sequence: the model runs N beams as a batch of N rows; each step gives the
// logits of each beam's last position and gets back which beam each row
// continues (the session reorders its caches: tfc_session_reorder) and the
// token it appends.
//
// Each step: log-softmax of every beam's logits plus the beam's score; the
// K = max(2, 1 + number of EOS ids) * N best (beam, token) continuations;
// those that end (an EOS id, or the length limit) among the first N are
// finished hypotheses scored sum(log p) / generated_length^length_penalty
// (generated_length counts the EOS); the N best unfinished ones run on.
// The search stops when the N finished hypotheses cannot be beaten (the best
// running score over the current length, the "early_stopping=False"
// heuristic; with earlyStopping as soon as N have finished), or at the
// length limit. At the start only beam 0 is live (the others score -1e9),
// so the first step's N continuations all differ.
//
// Ties are broken by the smaller (beam, token) index, and a finished
// hypothesis already kept wins over a new one of equal score.
//
// Plain C++17 with no LLVM dependency: this is part of libtfcrt.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_SAMPLING_BEAMSEARCH_H
#define TFC_SAMPLING_BEAMSEARCH_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tfc::rt {

struct BeamSearchParams {
  /// The number of beams (>= 1).
  int64_t beams = 4;
  /// The exponent of the length normalisation (transformers' default 1).
  double lengthPenalty = 1.0;
  /// Stop as soon as `beams` hypotheses have finished.
  bool earlyStopping = false;
  /// Tokens generated at most (>= 1).
  int64_t maxNewTokens = 64;
  /// End-of-sequence ids.
  std::vector<int64_t> eos;
};

/// Checks the parameters; false with a message naming the first bad one.
bool validateBeamSearchParams(const BeamSearchParams &params,
                              std::string &error);

class BeamSearch {
public:
  /// `params` must be valid.
  explicit BeamSearch(const BeamSearchParams &params);

  /// What the model runs next: row i of the batch continues row parents[i]
  /// of the last step with tokens[i].
  struct Step {
    std::vector<int64_t> parents, tokens;
  };

  /// One step from the logits of the beams' last positions ([beams, vocab],
  /// row-major). False when the search is over (then `next` is unchanged and
  /// best() holds the result).
  bool step(const float *logits, size_t vocab, Step &next);

  struct Hypothesis {
    /// The generated ids (the EOS id included when it ended with one).
    std::vector<int64_t> tokens;
    /// sum(log p) / length^lengthPenalty.
    double score = 0;
  };
  /// The finished hypotheses, best first (up to `beams`).
  const std::vector<Hypothesis> &finished() const { return finished_; }
  /// The best finished hypothesis (the search must be over).
  const Hypothesis &best() const { return finished_.front(); }
  /// Steps taken.
  int64_t steps() const { return steps_; }

private:
  struct Beam {
    std::vector<int64_t> tokens;
    double score = 0;
  };
  BeamSearchParams params_;
  std::vector<Beam> running_;
  std::vector<Hypothesis> finished_;
  bool improvable_ = true;
  bool done_ = false;
  int64_t steps_ = 0;
};

} // namespace tfc::rt

#endif // TFC_SAMPLING_BEAMSEARCH_H
