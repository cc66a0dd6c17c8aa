//===- Generation.h - Generation over a compiled model's session *- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The generation loops of tfc-generate as a library, for every front end
// (the tools, a server, the Python package): the inputs of each run of a
// session's entry (StepInputs: token ids, masks along them, tensors given by
// name), an encoder-decoder's encoder run and cross-attention caches,
// generation over a batch (greedy, sampled or beam search), and streamed
// generation of one sequence with stop strings (StreamedGeneration). On the
// C API (tfc.h) of libtfcrt, its tokenizers and its sampler; failures are
// thrown as tfc::gen::Error with the message to show.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_GENERATION_GENERATION_H
#define TFC_GENERATION_GENERATION_H

#include "tfc/Generation/TextStream.h"
#include "tfc/Runtime/tfc.h"
#include "tfc/Sampling/BeamSearch.h"
#include "tfc/Sampling/Sampler.h"
#include "tfc/Text/Tokenizer/Tokenizer.h"

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tfc::gen {

/// A generation failure: the message names what went wrong (the runtime's
/// tfc_last_error(), a prompt that does not fit, ...).
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Milliseconds since `t`.
double msSince(std::chrono::steady_clock::time_point t);

/// A tensor with its own storage.
struct OwnedTensor {
  tfc_dtype dtype = TFC_F32;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;

  tfc_tensor view() {
    tfc_tensor t{
        dtype, static_cast<int32_t>(shape.size()), {}, bytes.data(), nullptr};
    for (size_t i = 0; i < shape.size(); ++i)
      t.shape[i] = shape[i];
    return t;
  }
  /// Each row of `t` repeated `times` times in a row.
  static OwnedTensor repeatRows(const tfc_tensor &t, int64_t times) {
    OwnedTensor r;
    r.dtype = t.dtype;
    size_t row = tfc_dtype_size(t.dtype);
    for (int32_t i = 1; i < t.rank; ++i)
      row *= static_cast<size_t>(t.shape[i]);
    r.shape.assign(t.shape, t.shape + t.rank);
    r.shape[0] = t.shape[0] * times;
    r.bytes.resize(row * static_cast<size_t>(r.shape[0]));
    for (int64_t i = 0; i < r.shape[0]; ++i)
      std::memcpy(
          r.bytes.data() + i * row,
          static_cast<const unsigned char *>(t.data) + (i / times) * row, row);
    return r;
  }
};

/// Builds the inputs of the session's entry for each run: the token ids,
/// masks of ones along the token sequence, and tensors given by name (an
/// encoder-decoder's encoder output and source mask, one row per sequence
/// of the batch).
class StepInputs {
public:
  StepInputs(tfc_model *m, tfc_session *session, const std::string &entry);

  /// The inputs that must be given by name.
  std::vector<std::string> needed() const {
    std::vector<std::string> names;
    for (const Input &in : inputs)
      if (in.kind == Input::Given)
        names.push_back(in.name);
    return names;
  }
  void give(const std::string &name, OwnedTensor t) {
    for (Input &in : inputs)
      if (in.name == name)
        in.given = std::move(t);
  }

  /// Runs `rows` x `n` tokens and returns the logits of each row's last
  /// position, [rows, vocab] (valid until the next run; `vocabOut` is set),
  /// whether the entry returns every position's or only the last's
  /// (tfc-compile --kv-cache-last). `keep` (rows x n, 1 token / 0 left
  /// padding): tfc_session_run_padded, and the value of the masks along the
  /// tokens.
  const float *run(const std::vector<int64_t> &tokens, int64_t rows, int64_t n,
                   int64_t &vocabOut,
                   const std::vector<int64_t> *keep = nullptr);

private:
  /// The buffer's [rows, positions, vocab] logits with each row's last
  /// position moved to row r of its front ([rows, vocab]).
  const float *lastRows(int64_t rows, int64_t positions, int64_t vocab);
  /// Grows the logits buffer (64-byte aligned) to `need` floats.
  void reserve(size_t need);

  struct Input {
    std::string name;
    enum Kind { Ids, Ones, Given } kind = Ids;
    OwnedTensor given;
  };
  struct FreeDeleter {
    void operator()(float *p) const { std::free(p); }
  };
  tfc_session *session;
  std::vector<Input> inputs;
  std::string seqDim;
  /// The static vocabulary of the logits, or 0.
  bool lastOnly = false;
  int64_t vocab = 0;
  std::unique_ptr<float, FreeDeleter> buffer;
  size_t capacity = 0;
};

/// Runs the encoder of an encoder-decoder model on the source ids and gives
/// the decoder's session what it reads from it (by name: the encoder's
/// outputs, else its inputs, e.g. the source mask), one copy per row; then
/// runs `<entry>_cross` (the cross-attention caches) when the model has it.
void prepareEncoderDecoder(tfc_model *m, tfc_session *session,
                           const std::string &entry, StepInputs &inputs,
                           const std::vector<std::vector<int64_t>> &sources,
                           int64_t rowsPerSource, double &encodeMs);

/// Generation for a batch: one row per prompt, or per beam of each prompt
/// with beam search. Prompts of different lengths are padded on the left
/// (tfc_session_run_padded: attention skips the padding, so each row
/// computes what it would alone). Greedy/sampled rows that reach an EOS id
/// are done; beam search runs one BeamSearch per prompt and reorders the
/// caches to the beams that continue (rows of finished prompts stay as they
/// are). The results are printed when every row is done.
struct BatchResult {
  std::vector<std::vector<int64_t>> tokens;
  std::vector<double> scores;
  double prefillMs = 0, decodeMs = 0;
  int64_t decodeSteps = 0;
};

BatchResult generateBatch(tfc_session *session, StepInputs &inputs,
                          const std::vector<std::vector<int64_t>> &prompts,
                          const rt::BeamSearchParams &beam,
                          rt::Sampler &sampler, const std::vector<int64_t> &eos,
                          int64_t maxNew);

/// Why a streamed generation ended.
enum class FinishReason {
  EndOfSequence, ///< an end-of-sequence id was generated
  Stop,          ///< a stop string appeared in the text
  Length,        ///< the token limit
  ContextFull,   ///< the session's context is full
};

/// Generation over one session: prefill the new tokens of a prompt, then
/// sample one token per step until an end-of-sequence id, a stop string, the
/// token limit or a full context. With a decoder, the text is streamed to
/// `sink` as it is decided (never a partial UTF-8 character): text that may
/// be the start of a stop string is held back until it is not, and a stop
/// string ends the reply before it (llama.cpp's and transformers'
/// behaviour). run() may be called again (a chat's next turn) on what the
/// session holds.
class StreamedGeneration {
public:
  using Sink = std::function<void(std::string_view text)>;

  StreamedGeneration(tfc_session *session, StepInputs &inputs,
                     rt::Sampler &sampler, std::vector<int64_t> eos,
                     std::vector<std::string> stops,
                     rt::IncrementalDecoder *decoder, Sink sink)
      : decoder(decoder), session(session), inputs(inputs), sampler(sampler),
        eos(std::move(eos)), text(std::move(stops)), sink(std::move(sink)) {
    if (std::string bad = text.invalid(); !bad.empty())
      throw Error(bad);
  }

  /// Feeds `prompt` (appended to what the session holds) and generates up to
  /// `maxNew` tokens. `streamPrompt`: send the prompt's text to the sink
  /// too. Returns why it ended.
  FinishReason run(std::vector<int64_t> prompt, int64_t maxNew,
                   bool streamPrompt);

  /// The decoder that turns ids into text (null: no text); a chat's next
  /// turn may give a fresh one.
  rt::IncrementalDecoder *decoder;

  /// Every id given to the session, in order (its position is their count).
  std::vector<int64_t> fed;
  /// The ids so far, sampled ones included, for the repetition penalty.
  std::vector<int64_t> history;
  /// Every id generated, over all runs.
  std::vector<int64_t> generated;
  /// The text of the last run's reply (with a decoder), cut at a stop
  /// string.
  std::string reply;
  // Statistics over every run (firstTokenMs: the first run's prefill).
  double firstTokenMs = -1, prefillMs = 0, decodeMs = 0;
  int64_t decodeSteps = 0, promptTokens = 0;

private:
  void send(const std::string &piece) {
    if (sink && !piece.empty())
      sink(piece);
  }

  tfc_session *session;
  StepInputs &inputs;
  rt::Sampler &sampler;
  std::vector<int64_t> eos;
  TextStream text;
  Sink sink;
};

} // namespace tfc::gen

#endif // TFC_GENERATION_GENERATION_H
