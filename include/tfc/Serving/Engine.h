//===- Engine.h - Many requests on one model, one batch ---------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The engine of a server: requests from any thread decode together, one
// batch per step, each at its own position (continuous batching, as
// llama.cpp's server and vLLM do it). It owns one session of `rows` rows of
// a model compiled with --kv-cache --kv-cache-rows and one thread that, each
// iteration:
//   - admits waiting requests into free rows (a bounded queue: submit refuses
//     when it is full);
//   - prefills each joining prompt by chunks of `prefillChunk` tokens, one row
//     per run, so that a long prompt does not stall the others' decoding;
//   - decodes every decoding row as one run of rows [0, highest decoding row]
//     (tfc_session_run_rows; the rows between that are idle or prefilling
//     ride along, their outputs unread), each at its own position; a model
//     without a rows form (sliding windows, learned positions: tfc-compile
//     warns) decodes its rows one run each, through the cached entry;
//   - samples each row's next token with the request's own sampler and seed,
//     and ends a request at an end-of-sequence id, its token limit, the row's
//     context, a cancel, or an error, freeing its row at once.
// A row computes what it would alone (docs/abi.md, "Rows at their own
// positions"), so a request's greedy tokens do not depend on the others.
// Prefix reuse: a row keeps the keys and values of the prompt chunks it
// prefilled after its request ends; a new request takes the free row that
// shares the longest prefix with its prompt and starts after it. Only whole
// chunks of `prefillChunk` tokens prefilled at multiples of it count, so
// that the request cuts the rest of its prompt as it would from scratch and
// computes every value to the bit as without reuse.
// Token ids in, token ids out: text, chat templates and stop strings are the
// caller's (the HTTP layer). Callbacks run on the engine's thread.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_SERVING_ENGINE_H
#define TFC_SERVING_ENGINE_H

#include "tfc/Runtime/tfc.h"
#include "tfc/Sampling/Sampler.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tfc::serve {

/// Why a request ended.
enum class Finish {
  EndOfSequence, ///< an end-of-sequence id was generated (it is the last token)
  Length,        ///< the request's token limit
  Context,       ///< the row's context is full
  Cancelled,     ///< cancel(), a callback's refusal, or the engine stopping
  Error,         ///< a run failed (the message says why)
};

const char *finishName(Finish f);

struct EngineOptions {
  /// Requests decoded together (the session's rows).
  int64_t rows = 4;
  /// Tokens per row: a request's prompt plus what it generates.
  int64_t context = 2048;
  /// Requests waiting for a row at most; submit refuses past it.
  size_t maxWaiting = 64;
  /// Prompt tokens per prefill run.
  int64_t prefillChunk = 256;
  /// Reuse a free row's keys and values for the prompt prefix it shares
  /// with a new request, in whole prefill chunks (below). Only with a rows
  /// form (whose caches keep every position).
  bool prefixCache = true;
};

struct Request {
  std::vector<int64_t> prompt;
  rt::SamplingParams sampling;
  /// New tokens at most (>= 1).
  int64_t maxTokens = 16;
  /// Ids that end the generation (kept as its last token).
  std::vector<int64_t> eos;
  /// Each generated token, in order; returning false cancels the request.
  std::function<bool(int64_t token)> onToken;
  /// Called once, last: why it ended (the message for Finish::Error).
  std::function<void(Finish, const std::string &message)> onFinish;
};

/// Counters for metrics (a snapshot).
struct EngineStats {
  int64_t running = 0, waiting = 0;
  uint64_t requests = 0, promptTokens = 0, generatedTokens = 0;
  /// Prompt tokens whose keys and values a request found in its row.
  uint64_t reusedTokens = 0;
  /// Rows' tokens held in the caches now, of rows x context.
  int64_t cachedTokens = 0, cacheCapacity = 0;
};

class Engine {
public:
  /// An engine on `entry` (a cached entry, `<name>_cached`) of `model`,
  /// whose weights are loaded; the model must outlive it. Null with `error`
  /// set if the options are out of range, the entry is not a cached entry of
  /// token ids, or the caches cannot be allocated.
  static std::unique_ptr<Engine> create(tfc_model *model,
                                        const std::string &entry,
                                        const EngineOptions &options,
                                        std::string &error);
  /// Stops (cancelling what runs and waits) and joins the thread.
  ~Engine();
  Engine(const Engine &) = delete;
  Engine &operator=(const Engine &) = delete;

  enum class Submitted { Ok, Invalid, QueueFull, Stopped };
  /// Queues `request` (any thread). Invalid: an empty prompt, ids outside the
  /// vocabulary, maxTokens < 1, bad sampling parameters, or a prompt plus
  /// maxTokens past the context (`error` says which); QueueFull: maxWaiting
  /// requests wait already; Stopped: stop() was called. On Ok, `*id` (may be
  /// null) names it for cancel().
  Submitted submit(Request request, uint64_t *id, std::string &error);
  /// Ends request `id` at the engine's next step (Finish::Cancelled); unknown
  /// or ended ids are ignored.
  void cancel(uint64_t id);
  /// Stops accepting; `finish`: lets what runs and waits complete, else
  /// cancels it; returns when the thread has ended.
  void stop(bool finish);
  /// Ends every running and waiting request at the next step
  /// (Finish::Cancelled) without waiting; while stop(true) waits, this
  /// makes it return.
  void cancelAll();

  EngineStats stats() const;
  /// Whether decoding rows run together (the model has a rows form).
  bool batched() const { return hasRows; }
  int64_t vocabulary() const { return vocab; }
  const EngineOptions &options() const { return opts; }

private:
  Engine() = default;
  struct Active;
  void loop();
  /// One iteration's prefill and decode runs; false when nothing ran.
  void step(std::vector<std::unique_ptr<Active>> &rows);
  /// Samples row `a`'s next token from `logits` and ends it if it is done.
  void advance(Active &a, const float *logits);
  /// Runs the next token of the decoding rows among [first, first + n) as
  /// one run (the others ride along, their outputs unread).
  void decode(std::vector<std::unique_ptr<Active>> &rows, size_t first,
              size_t n);
  /// Hands row `slot`'s new token to its request and ends it if it is done.
  void finishIfDone(std::unique_ptr<Active> &slot);
  void end(std::unique_ptr<Active> &slot, Finish why,
           const std::string &message = "");
  /// Gives `request` the free row that shares the longest reusable prefix
  /// with its prompt (the lowest such row), starting it after that prefix.
  void admit(std::vector<std::unique_ptr<Active>> &rows, uint64_t id,
             Request request);

  /// Per row: the tokens of the whole prefill chunks in its caches, from
  /// position 0 (the engine thread's).
  std::vector<std::vector<int64_t>> reusable;

  tfc_model *model = nullptr;
  tfc_session *session = nullptr;
  std::string entry;
  EngineOptions opts;
  int64_t vocab = 0;
  /// The entry returns only the last position's logits (--kv-cache-last).
  bool lastOnly = false;
  /// The model has `<entry>_rows`: decoding rows run together.
  bool hasRows = false;
  /// The entry's inputs along the tokens besides the ids (masks of ones).
  size_t extraInputs = 0;
  std::vector<float> logits;

  mutable std::mutex mutex;
  std::condition_variable wake;
  struct Waiting {
    uint64_t id;
    Request request;
  };
  std::deque<Waiting> waiting;
  std::vector<uint64_t> cancels;
  bool stopping = false, finishOnStop = true, cancelEverything = false;
  uint64_t nextId = 1;
  EngineStats counters;
  std::thread thread;
};

} // namespace tfc::serve

#endif // TFC_SERVING_ENGINE_H
