//===- Generation.cpp - Streamed generation of one sequence ---------------===//
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

FinishReason StreamedGeneration::run(std::vector<int64_t> prompt,
                                     int64_t maxNew, bool streamPrompt) {
  text.restart();
  reply.clear();
  promptTokens += static_cast<int64_t>(prompt.size());
  if (decoder) {
    std::string promptText, error;
    for (int64_t id : prompt)
      if (!decoder->feed(id, promptText, error))
        throw Error(error);
    if (streamPrompt)
      send(promptText);
  }
  history.insert(history.end(), prompt.begin(), prompt.end());
  std::vector<int64_t> feed = std::move(prompt);
  FinishReason reason = FinishReason::Length;
  for (int64_t step = 0; step < maxNew; ++step) {
    // The prompt must fit (else the session says why); generation stops
    // when the context is full.
    if (step > 0 &&
        tfc_session_position(session) + 1 > tfc_session_context(session)) {
      reason = FinishReason::ContextFull;
      break;
    }
    auto t0 = std::chrono::steady_clock::now();
    int64_t vocab = 0, n = static_cast<int64_t>(feed.size());
    const float *logits = inputs.run(feed, 1, n, vocab);
    fed.insert(fed.end(), feed.begin(), feed.end());
    // The last position's logits: greedy (the argmax) or sampled.
    int64_t next = sampler.sample(logits, static_cast<size_t>(vocab), history);
    history.push_back(next);
    double ms = msSince(t0);
    if (step == 0) {
      prefillMs += ms;
      if (firstTokenMs < 0)
        firstTokenMs = ms;
    } else {
      decodeMs += ms;
      ++decodeSteps;
    }
    generated.push_back(next);
    bool stopped = false;
    if (decoder) {
      std::string piece, out, error;
      if (!decoder->feed(next, piece, error))
        throw Error(error);
      stopped = text.append(piece, out);
      send(out);
    }
    if (stopped) {
      reason = FinishReason::Stop;
      break;
    }
    if (std::find(eos.begin(), eos.end(), next) != eos.end()) {
      reason = FinishReason::EndOfSequence;
      break;
    }
    feed.assign(1, next);
  }
  if (decoder) {
    std::string piece, out, error;
    if (!decoder->finish(piece, error))
      throw Error(error);
    if (text.finish(piece, out))
      reason = FinishReason::Stop;
    send(out);
    reply = text.reply();
  }
  return reason;
}
