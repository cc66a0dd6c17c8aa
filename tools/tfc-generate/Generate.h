//===- Generate.h - tfc-generate's batch machinery --------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// What tfc-generate's loops share (Steps.cpp): the inputs of each run of a
// session's entry (token ids, masks along them, tensors given by name), an
// encoder-decoder's encoder run and cross-attention caches, and generation
// over a batch (greedy, sampled or beam search). The streamed single-prompt
// loop and the command line stay in tfc-generate.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TOOLS_TFC_GENERATE_GENERATE_H
#define TFC_TOOLS_TFC_GENERATE_GENERATE_H

#include "tfc/Runtime/tfc.h"
#include "tfc/Sampling/BeamSearch.h"
#include "tfc/Sampling/Sampler.h"

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace tfcgen {

/// Prints "tfc-generate: error: m" and exits with status 1.
[[noreturn]] void fail(const std::string &m);
double msSince(std::chrono::steady_clock::time_point t);

/// A tensor with its own storage.
struct OwnedTensor {
  tfc_dtype dtype = TFC_F32;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;

  tfc_tensor view() {
    tfc_tensor t{dtype, static_cast<int32_t>(shape.size()), {}, bytes.data(),
                 nullptr};
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
      std::memcpy(r.bytes.data() + i * row,
                  static_cast<const unsigned char *>(t.data) + (i / times) * row,
                  row);
    return r;
  }
};

/// Builds the inputs of the session's entry for each run: the token ids,
/// masks of ones along the token sequence, and tensors given by name (an
/// encoder-decoder's encoder output and source mask, one row per sequence
/// of the batch).
class StepInputs {
public:
  StepInputs(tfc_model *m, tfc_session *session, const std::string &entry)
      : session(session) {
    int64_t e = tfc_model_find_entry(m, entry.c_str());
    // Logits [batch, seq, vocab] with a static vocabulary go into one
    // buffer of ours (tfc_session_run_into: decode steps compute in it).
    tfc_tensor_info logits;
    if (tfc_entry_num_outputs(m, static_cast<size_t>(e)) == 1 &&
        tfc_entry_output_info(m, static_cast<size_t>(e), 0, &logits) ==
            TFC_OK &&
        logits.dtype == TFC_F32 && logits.rank == 3 && logits.dims[2] > 0) {
      vocab = logits.dims[2];
      // --kv-cache-last: one position, whatever the tokens given.
      lastOnly = logits.dims[1] == 1;
    }
    std::vector<tfc_tensor_info> infos;
    for (size_t i = 0; i < tfc_session_num_inputs(session); ++i) {
      std::string name = tfc_session_input_name(session, i);
      tfc_tensor_info info{};
      for (size_t k = 0; k < tfc_entry_num_inputs(m, static_cast<size_t>(e));
           ++k)
        if (tfc_entry_input_info(m, static_cast<size_t>(e), k, &info) ==
                TFC_OK &&
            name == info.name)
          break;
      Input in;
      in.name = name;
      bool tokens = info.dtype == TFC_I64 && info.rank == 2 && info.dim_names[1];
      if (tokens && seqDim.empty()) {
        in.kind = Input::Ids;
        seqDim = info.dim_names[1];
      } else if (tokens && seqDim == info.dim_names[1]) {
        in.kind = Input::Ones;
      } else {
        in.kind = Input::Given;
      }
      inputs.push_back(std::move(in));
    }
  }

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
  const float *run(const std::vector<int64_t> &tokens, int64_t rows,
                   int64_t n, int64_t &vocabOut,
                   const std::vector<int64_t> *keep = nullptr) {
    std::vector<int64_t> ones =
        keep ? *keep : std::vector<int64_t>(static_cast<size_t>(rows * n), 1);
    std::vector<tfc_tensor> args;
    for (Input &in : inputs) {
      if (in.kind == Input::Given) {
        args.push_back(in.given.view());
        continue;
      }
      const std::vector<int64_t> &data = in.kind == Input::Ids ? tokens : ones;
      args.push_back(tfc_tensor{TFC_I64,
                                2,
                                {rows, n},
                                const_cast<int64_t *>(data.data()),
                                nullptr});
    }
    if (vocab > 0) {
      int64_t positions = lastOnly ? 1 : n;
      reserve(static_cast<size_t>(rows * positions * vocab));
      tfc_tensor out{
          TFC_F32, 3, {rows, positions, vocab}, buffer.get(), nullptr};
      if (tfc_session_run_into(session, args.data(), args.size(),
                               keep ? keep->data() : nullptr, &out,
                               1) != TFC_OK)
        fail(tfc_last_error());
      vocabOut = vocab;
      return lastRows(rows, positions, vocab);
    }
    tfc_tensor out;
    if (tfc_session_run_padded(session, args.data(), args.size(),
                               keep ? keep->data() : nullptr, &out,
                               1) != TFC_OK)
      fail(tfc_last_error());
    vocabOut = out.shape[out.rank - 1];
    int64_t positions = out.shape[1];
    size_t need = static_cast<size_t>(rows * positions * vocabOut);
    reserve(need);
    std::memcpy(buffer.get(), out.data, need * sizeof(float));
    tfc_tensor_release(&out);
    return lastRows(rows, positions, vocabOut);
  }

private:
  /// The buffer's [rows, positions, vocab] logits with each row's last
  /// position moved to row r of its front ([rows, vocab]).
  const float *lastRows(int64_t rows, int64_t positions, int64_t vocab) {
    if (positions > 1)
      for (int64_t r = 0; r < rows; ++r)
        std::memmove(buffer.get() + r * vocab,
                     buffer.get() + (r * positions + positions - 1) * vocab,
                     static_cast<size_t>(vocab) * sizeof(float));
    return buffer.get();
  }

  /// Grows the logits buffer (64-byte aligned) to `need` floats.
  void reserve(size_t need) {
    if (need <= capacity)
      return;
    buffer.reset(static_cast<float *>(
        std::aligned_alloc(64, (need * sizeof(float) + 63) / 64 * 64)));
    if (!buffer)
      fail("out of memory for the logits");
    capacity = need;
  }

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
                          const tfc::rt::BeamSearchParams &beam,
                          tfc::rt::Sampler &sampler,
                          const std::vector<int64_t> &eos, int64_t maxNew);

} // namespace tfcgen

#endif // TFC_TOOLS_TFC_GENERATE_GENERATE_H
