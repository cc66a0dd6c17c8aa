//===- StepInputs.cpp - The inputs of each run of a session's entry ------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// See Generation.h.
//
//===----------------------------------------------------------------------===//

#include "tfc/Generation/Generation.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

using namespace tfc;
using namespace tfc::gen;

double tfc::gen::msSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - t)
      .count();
}

StepInputs::StepInputs(tfc_model *m, tfc_session *session,
                       const std::string &entry)
    : session(session) {
  int64_t e = tfc_model_find_entry(m, entry.c_str());
  // Logits [batch, seq, vocab] with a static vocabulary go into one
  // buffer of ours (tfc_session_run_into: decode steps compute in it).
  tfc_tensor_info logits;
  if (tfc_entry_num_outputs(m, static_cast<size_t>(e)) == 1 &&
      tfc_entry_output_info(m, static_cast<size_t>(e), 0, &logits) == TFC_OK &&
      logits.dtype == TFC_F32 && logits.rank == 3 && logits.dims[2] > 0) {
    vocab = logits.dims[2];
    // --kv-cache-last: one position, whatever the tokens given.
    lastOnly = logits.dims[1] == 1;
  }
  std::vector<tfc_tensor_info> infos;
  for (size_t i = 0; i < tfc_session_num_inputs(session); ++i) {
    std::string name = tfc_session_input_name(session, i);
    tfc_tensor_info info{};
    for (size_t k = 0; k < tfc_entry_num_inputs(m, static_cast<size_t>(e)); ++k)
      if (tfc_entry_input_info(m, static_cast<size_t>(e), k, &info) == TFC_OK &&
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

const float *StepInputs::run(const std::vector<int64_t> &tokens, int64_t rows,
                             int64_t n, int64_t &vocabOut,
                             const std::vector<int64_t> *keep) {
  std::vector<int64_t> ones =
      keep ? *keep : std::vector<int64_t>(static_cast<size_t>(rows * n), 1);
  std::vector<tfc_tensor> args;
  for (Input &in : inputs) {
    if (in.kind == Input::Given) {
      args.push_back(in.given.view());
      continue;
    }
    const std::vector<int64_t> &data = in.kind == Input::Ids ? tokens : ones;
    args.push_back(tfc_tensor{
        TFC_I64, 2, {rows, n}, const_cast<int64_t *>(data.data()), nullptr});
  }
  if (vocab > 0) {
    int64_t positions = lastOnly ? 1 : n;
    reserve(static_cast<size_t>(rows * positions * vocab));
    tfc_tensor out{TFC_F32, 3, {rows, positions, vocab}, buffer.get(), nullptr};
    if (tfc_session_run_into(session, args.data(), args.size(),
                             keep ? keep->data() : nullptr, &out, 1) != TFC_OK)
      throw Error(tfc_last_error());
    vocabOut = vocab;
    return lastRows(rows, positions, vocab);
  }
  tfc_tensor out;
  if (tfc_session_run_padded(session, args.data(), args.size(),
                             keep ? keep->data() : nullptr, &out, 1) != TFC_OK)
    throw Error(tfc_last_error());
  vocabOut = out.shape[out.rank - 1];
  int64_t positions = out.shape[1];
  size_t need = static_cast<size_t>(rows * positions * vocabOut);
  try {
    reserve(need);
  } catch (...) {
    tfc_tensor_release(&out);
    throw;
  }
  std::memcpy(buffer.get(), out.data, need * sizeof(float));
  tfc_tensor_release(&out);
  return lastRows(rows, positions, vocabOut);
}

/// The buffer's [rows, positions, vocab] logits with each row's last
/// position moved to row r of its front ([rows, vocab]).
const float *StepInputs::lastRows(int64_t rows, int64_t positions,
                                  int64_t vocab) {
  if (positions > 1)
    for (int64_t r = 0; r < rows; ++r)
      std::memmove(buffer.get() + r * vocab,
                   buffer.get() + (r * positions + positions - 1) * vocab,
                   static_cast<size_t>(vocab) * sizeof(float));
  return buffer.get();
}

/// Grows the logits buffer (64-byte aligned) to `need` floats.
void StepInputs::reserve(size_t need) {
  if (need <= capacity)
    return;
  auto *grown = static_cast<float *>(
      std::aligned_alloc(64, (need * sizeof(float) + 63) / 64 * 64));
  if (!grown)
    throw Error("out of memory for the logits");
  buffer.reset(grown);
  capacity = need;
}
