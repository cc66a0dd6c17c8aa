//===- Batch.cpp - Generation over a batch, encoder-decoders --------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// See Generation.h.
//
//===----------------------------------------------------------------------===//

#include "tfc/Generation/Generation.h"

#include <algorithm>

using namespace tfc;
using namespace tfc::gen;

void tfc::gen::prepareEncoderDecoder(
    tfc_model *m, tfc_session *session, const std::string &entry,
    StepInputs &inputs, const std::vector<std::vector<int64_t>> &sources,
    int64_t rowsPerSource, double &encodeMs) {
  std::vector<std::string> needed = inputs.needed();
  // The encoder: the entry with an output the decoder reads.
  std::string encoder;
  int64_t encoderIndex = -1;
  tfc_model_info modelInfo;
  tfc_model_get_info(m, &modelInfo);
  for (size_t e = 0; e < modelInfo.num_entries && encoder.empty(); ++e) {
    std::string name = tfc_model_entry_name(m, e);
    if (name == entry)
      continue;
    for (size_t k = 0; k < tfc_entry_num_outputs(m, e); ++k) {
      tfc_tensor_info info;
      if (tfc_entry_output_info(m, e, k, &info) == TFC_OK &&
          std::find(needed.begin(), needed.end(), info.name) != needed.end()) {
        encoder = name;
        encoderIndex = static_cast<int64_t>(e);
      }
    }
  }
  if (encoder.empty())
    throw Error(
        "entry '" + entry + "' takes '" + needed.front() +
        "' besides the token ids, and no entry of the model outputs it");
  // Its inputs: the source ids, padded on the right to one length, and
  // masks that mark the padding.
  size_t e = static_cast<size_t>(encoderIndex);
  size_t width = 0;
  for (const std::vector<int64_t> &src : sources)
    width = std::max(width, src.size());
  std::vector<int64_t> ids(sources.size() * width, 0),
      keep(sources.size() * width, 0);
  bool padded = false;
  for (size_t i = 0; i < sources.size(); ++i) {
    padded |= sources[i].size() != width;
    for (size_t t = 0; t < sources[i].size(); ++t) {
      ids[i * width + t] = sources[i][t];
      keep[i * width + t] = 1;
    }
  }
  std::vector<tfc_tensor> args;
  std::vector<std::string> argNames;
  const char *srcDim = nullptr;
  for (size_t k = 0; k < tfc_entry_num_inputs(m, e); ++k) {
    tfc_tensor_info info;
    tfc_entry_input_info(m, e, k, &info);
    bool tokens = info.dtype == TFC_I64 && info.rank == 2 && info.dim_names[1];
    if (!tokens || (srcDim && std::strcmp(srcDim, info.dim_names[1]) != 0))
      throw Error("the encoder '" + encoder + "' takes '" + info.name +
                  "', which is neither its token ids nor a mask over them");
    bool isIds = !srcDim;
    srcDim = info.dim_names[1];
    args.push_back(tfc_tensor{
        TFC_I64,
        2,
        {static_cast<int64_t>(sources.size()), static_cast<int64_t>(width)},
        isIds ? ids.data() : keep.data(),
        nullptr});
    argNames.push_back(info.name);
  }
  if (padded && args.size() < 2)
    throw Error("the sources have different lengths and the encoder '" +
                encoder + "' takes no mask: give sources of one length");
  size_t numOutputs = tfc_entry_num_outputs(m, e);
  std::vector<tfc_tensor> outputs(numOutputs);
  auto t0 = std::chrono::steady_clock::now();
  if (tfc_run(m, encoder.c_str(), args.data(), args.size(), outputs.data(),
              numOutputs) != TFC_OK)
    throw Error(tfc_last_error());
  encodeMs = msSince(t0);
  // The encoder's outputs are released however this ends.
  struct Release {
    std::vector<tfc_tensor> &tensors;
    ~Release() {
      for (tfc_tensor &t : tensors)
        tfc_tensor_release(&t);
    }
  } release{outputs};
  // What the decoder reads, by name.
  std::vector<std::pair<std::string, OwnedTensor>> given;
  for (const std::string &name : needed) {
    const tfc_tensor *found = nullptr;
    for (size_t k = 0; k < numOutputs && !found; ++k) {
      tfc_tensor_info info;
      tfc_entry_output_info(m, e, k, &info);
      if (name == info.name)
        found = &outputs[k];
    }
    for (size_t k = 0; k < args.size() && !found; ++k)
      if (name == argNames[k])
        found = &args[k];
    if (!found)
      throw Error("entry '" + entry + "' takes '" + name +
                  "', which the encoder '" + encoder +
                  "' neither takes nor outputs");
    given.push_back({name, OwnedTensor::repeatRows(*found, rowsPerSource)});
  }
  // The cross-attention caches, once per source.
  std::string base = entry;
  if (base.size() > 7 && base.compare(base.size() - 7, 7, "_cached") == 0)
    base.resize(base.size() - 7);
  std::string cross = base + "_cross";
  int64_t c = tfc_model_find_entry(m, cross.c_str());
  if (c >= 0) {
    std::vector<tfc_tensor> crossArgs;
    for (size_t k = 0; k < tfc_entry_num_inputs(m, static_cast<size_t>(c));
         ++k) {
      if (tfc_entry_input_is_state(m, static_cast<size_t>(c), k))
        continue;
      tfc_tensor_info info;
      tfc_entry_input_info(m, static_cast<size_t>(c), k, &info);
      auto it = std::find_if(given.begin(), given.end(), [&](const auto &g) {
        return g.first == info.name;
      });
      if (it == given.end())
        throw Error("entry '" + cross + "' takes '" + info.name +
                    "', which the encoder does not provide");
      crossArgs.push_back(it->second.view());
    }
    auto t1 = std::chrono::steady_clock::now();
    if (tfc_session_run_entry(session, cross.c_str(), crossArgs.data(),
                              crossArgs.size(), nullptr, 0) != TFC_OK)
      throw Error(tfc_last_error());
    encodeMs += msSince(t1);
  }
  for (auto &[name, tensor] : given)
    inputs.give(name, std::move(tensor));
}

BatchResult
tfc::gen::generateBatch(tfc_session *session, StepInputs &inputs,
                        const std::vector<std::vector<int64_t>> &prompts,
                        const rt::BeamSearchParams &beam, rt::Sampler &sampler,
                        const std::vector<int64_t> &eos, int64_t maxNew) {
  size_t n = prompts.size();
  int64_t beams = beam.beams;
  int64_t rows = static_cast<int64_t>(n) * beams;
  size_t width = 0;
  for (const std::vector<int64_t> &p : prompts)
    width = std::max(width, p.size());
  // Left-padded prompts: padding is never attended to, its id is moot.
  std::vector<int64_t> tokens(static_cast<size_t>(rows) * width, 0);
  std::vector<int64_t> keep(tokens.size(), 0);
  bool padded = false;
  for (int64_t r = 0; r < rows; ++r) {
    const std::vector<int64_t> &p = prompts[static_cast<size_t>(r / beams)];
    size_t pad = width - p.size();
    padded |= pad > 0;
    for (size_t t = 0; t < p.size(); ++t) {
      tokens[r * width + pad + t] = p[t];
      keep[r * width + pad + t] = 1;
    }
  }
  if (padded && !tfc_session_can_pad(session))
    throw Error(
        "these prompts have different lengths, and the model's cached entry "
        "cannot take left padding (its positions are absolute: learned or "
        "sinusoidal); generate them one at a time");
  BatchResult result;
  result.tokens.resize(n);
  result.scores.assign(n, 0.0);
  std::vector<rt::BeamSearch> searches;
  if (beams > 1)
    for (size_t i = 0; i < n; ++i)
      searches.emplace_back(beam);
  std::vector<bool> done(n, false);
  std::vector<std::vector<int64_t>> history(prompts);
  std::vector<float> last;
  int64_t feedWidth = static_cast<int64_t>(width);
  for (int64_t step = 0;; ++step) {
    auto t0 = std::chrono::steady_clock::now();
    int64_t vocab = 0;
    const float *logits = inputs.run(tokens, rows, feedWidth, vocab,
                                     padded && step == 0 ? &keep : nullptr);
    last.resize(static_cast<size_t>(rows * vocab));
    for (int64_t r = 0; r < rows; ++r)
      std::memcpy(last.data() + r * vocab, logits + r * vocab,
                  static_cast<size_t>(vocab) * sizeof(float));
    // The next token of every row.
    std::vector<int64_t> next(static_cast<size_t>(rows));
    std::vector<int64_t> parents(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      parents[r] = r;
      next[r] = tokens[r * feedWidth + feedWidth - 1];
    }
    bool reorder = false;
    for (size_t i = 0; i < n; ++i) {
      if (done[i])
        continue;
      if (beams > 1) {
        rt::BeamSearch::Step s;
        if (!searches[i].step(last.data() + i * beams * vocab,
                              static_cast<size_t>(vocab), s)) {
          done[i] = true;
          result.tokens[i] = searches[i].best().tokens;
          result.scores[i] = searches[i].best().score;
          continue;
        }
        for (int64_t b = 0; b < beams; ++b) {
          parents[i * beams + b] =
              static_cast<int64_t>(i) * beams + s.parents[b];
          next[i * beams + b] = s.tokens[b];
          reorder |= s.parents[b] != b;
        }
      } else {
        int64_t id = sampler.sample(last.data() + i * vocab,
                                    static_cast<size_t>(vocab), history[i]);
        history[i].push_back(id);
        result.tokens[i].push_back(id);
        next[i] = id;
        if (std::find(eos.begin(), eos.end(), id) != eos.end() ||
            static_cast<int64_t>(result.tokens[i].size()) >= maxNew)
          done[i] = true;
      }
    }
    if (reorder &&
        tfc_session_reorder(session, parents.data(), parents.size()) != TFC_OK)
      throw Error(tfc_last_error());
    double ms = msSince(t0);
    if (step == 0) {
      result.prefillMs = ms;
    } else {
      result.decodeMs += ms;
      ++result.decodeSteps;
    }
    if (std::find(done.begin(), done.end(), false) == done.end())
      break;
    if (tfc_session_position(session) + 1 > tfc_session_context(session))
      throw Error("the context of " +
                  std::to_string(tfc_session_context(session)) +
                  " tokens is full");
    tokens = std::move(next);
    feedWidth = 1;
  }
  return result;
}
