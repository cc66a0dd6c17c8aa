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

size_t tfc::gen::heldBack(const std::string &text, const std::string &stop) {
  for (size_t k = std::min(stop.size() - 1, text.size()); k > 0; --k)
    if (text.compare(text.size() - k, k, stop, 0, k) == 0)
      return k;
  return 0;
}

void StreamedGeneration::flush(size_t &sent, bool final) {
  size_t hold = 0;
  if (!final)
    for (const std::string &stop : stops)
      hold = std::max(hold, heldBack(reply, stop));
  if (reply.size() - hold > sent) {
    if (sink)
      sink(std::string_view(reply).substr(sent, reply.size() - hold - sent));
    sent = reply.size() - hold;
  }
}

bool StreamedGeneration::cutAtStop() {
  size_t at = std::string::npos;
  for (const std::string &stop : stops)
    at = std::min(at, reply.find(stop));
  if (at == std::string::npos)
    return false;
  reply.resize(at);
  return true;
}

FinishReason StreamedGeneration::run(std::vector<int64_t> prompt,
                                     int64_t maxNew, bool streamPrompt) {
  reply.clear();
  promptTokens += static_cast<int64_t>(prompt.size());
  if (decoder) {
    std::string text, error;
    for (int64_t id : prompt)
      if (!decoder->feed(id, text, error))
        throw Error(error);
    if (streamPrompt && sink)
      sink(text);
  }
  history.insert(history.end(), prompt.begin(), prompt.end());
  std::vector<int64_t> feed = std::move(prompt);
  size_t sent = 0;
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
      std::string text, error;
      if (!decoder->feed(next, text, error))
        throw Error(error);
      reply += text;
      stopped = cutAtStop();
      flush(sent, stopped);
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
    std::string text, error;
    if (!decoder->finish(text, error))
      throw Error(error);
    if (reason != FinishReason::Stop) {
      reply += text;
      if (cutAtStop())
        reason = FinishReason::Stop;
    }
    flush(sent, /*final=*/true);
  }
  return reason;
}
