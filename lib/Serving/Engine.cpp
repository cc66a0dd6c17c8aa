//===- Engine.cpp - Many requests on one model, one batch -----------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// See Engine.h. The engine thread owns the session and every active
// request; the queue, the cancels and the counters are shared under the
// mutex. Callbacks are called without the mutex held (they may submit or
// cancel).
//
//===----------------------------------------------------------------------===//

#include "tfc/Serving/Engine.h"

#include <algorithm>
#include <cstring>

using namespace tfc::serve;

const char *tfc::serve::finishName(Finish f) {
  switch (f) {
  case Finish::EndOfSequence:
    return "stop";
  case Finish::Length:
    return "length";
  case Finish::Context:
    return "context";
  case Finish::Cancelled:
    return "cancelled";
  case Finish::Error:
    return "error";
  }
  return "error";
}

/// A request holding a row.
struct Engine::Active {
  uint64_t id = 0;
  Request request;
  rt::Sampler sampler;
  /// Tokens in the row's caches; prompt tokens fed so far.
  int64_t position = 0;
  size_t fed = 0;
  /// Prompt and generated ids (the repetition penalty).
  std::vector<int64_t> history;
  int64_t generated = 0;
  /// The token the next decode run feeds (once the prompt is in).
  int64_t last = -1;
  bool decoding = false;

  Active(uint64_t id, Request r)
      : id(id), request(std::move(r)), sampler(request.sampling),
        history(request.prompt) {}
};

std::unique_ptr<Engine> Engine::create(tfc_model *model,
                                       const std::string &entry,
                                       const EngineOptions &options,
                                       std::string &error) {
  if (!model) {
    error = "the model is null";
    return nullptr;
  }
  if (options.rows < 1 || options.rows > 4096) {
    error = "rows must be in [1, 4096], not " + std::to_string(options.rows);
    return nullptr;
  }
  if (options.context < 2) {
    error = "the context must be at least 2 tokens, not " +
            std::to_string(options.context);
    return nullptr;
  }
  if (options.prefillChunk < 1) {
    error = "the prefill chunk must be at least 1 token, not " +
            std::to_string(options.prefillChunk);
    return nullptr;
  }
  int64_t index = tfc_model_find_entry(model, entry.c_str());
  if (index < 0) {
    error = "the model has no entry '" + entry + "'";
    return nullptr;
  }
  if (tfc_entry_num_outputs(model, static_cast<size_t>(index)) != 1) {
    error = "entry '" + entry + "' returns " +
            std::to_string(tfc_entry_num_outputs(model, index)) +
            " outputs; the engine reads one, the logits";
    return nullptr;
  }
  tfc_tensor_info out;
  if (tfc_entry_output_info(model, static_cast<size_t>(index), 0, &out) !=
          TFC_OK ||
      out.dtype != TFC_F32 || out.rank != 3 || out.dims[2] <= 0) {
    error = "entry '" + entry +
            "' does not return f32 logits [batch, seq, vocabulary] with a "
            "static vocabulary";
    return nullptr;
  }
  std::unique_ptr<Engine> e(new Engine());
  e->model = model;
  e->entry = entry;
  e->opts = options;
  e->vocab = out.dims[2];
  e->lastOnly = out.dims[1] == 1;

  if (tfc_session_create(model, entry.c_str(), options.rows, options.context,
                         &e->session) != TFC_OK) {
    error = tfc_last_error();
    return nullptr;
  }
  // The rows form runs decoding rows together; without it (a model it
  // cannot express, or compiled without --kv-cache-rows) each row runs
  // alone through the cached entry. Prefix reuse needs every position in
  // the caches: the rows form's.
  e->hasRows = tfc_session_can_run_rows(e->session) != 0;
  e->opts.prefixCache = options.prefixCache && e->hasRows;
  // The session's inputs: the token ids first, then any other [batch, seq]
  // integer input (a mask along the tokens: ones).
  size_t inputs = tfc_session_num_inputs(e->session);
  for (size_t i = 0; i < inputs; ++i) {
    std::string name = tfc_session_input_name(e->session, i);
    tfc_tensor_info info{};
    size_t n = tfc_entry_num_inputs(model, static_cast<size_t>(index));
    for (size_t k = 0; k < n; ++k)
      if (tfc_entry_input_info(model, static_cast<size_t>(index), k, &info) ==
              TFC_OK &&
          name == info.name)
        break;
    if (info.dtype != TFC_I64 || info.rank != 2) {
      error = "entry '" + entry + "' has the input '" + name +
              "', which is not i64 [batch, seq]: the engine feeds token ids "
              "(and masks of ones along them)";
      return nullptr;
    }
  }
  e->extraInputs = inputs ? inputs - 1 : 0;
  int64_t most = std::max(options.rows, options.prefillChunk);
  e->logits.resize(static_cast<size_t>(most) * static_cast<size_t>(e->vocab));
  e->counters.cacheCapacity = options.rows * options.context;
  e->thread = std::thread([engine = e.get()] { engine->loop(); });
  return e;
}

Engine::~Engine() {
  stop(false);
  tfc_session_free(session);
}

Engine::Submitted Engine::submit(Request request, uint64_t *id,
                                 std::string &error) {
  if (request.prompt.empty()) {
    error = "the prompt is empty";
    return Submitted::Invalid;
  }
  for (int64_t t : request.prompt)
    if (t < 0 || t >= vocab) {
      error = "the prompt has the token id " + std::to_string(t) +
              ", outside the vocabulary [0, " + std::to_string(vocab) + ")";
      return Submitted::Invalid;
    }
  if (request.maxTokens < 1) {
    error = "the token limit must be at least 1, not " +
            std::to_string(request.maxTokens);
    return Submitted::Invalid;
  }
  if (!rt::validateSamplingParams(request.sampling, error))
    return Submitted::Invalid;
  int64_t need = static_cast<int64_t>(request.prompt.size());
  if (need > opts.context || request.maxTokens > opts.context - need) {
    error = "the prompt's " + std::to_string(need) + " tokens and " +
            std::to_string(request.maxTokens) +
            " new ones exceed the context of " + std::to_string(opts.context);
    return Submitted::Invalid;
  }
  std::lock_guard<std::mutex> lock(mutex);
  if (stopping) {
    error = "the engine is stopping";
    return Submitted::Stopped;
  }
  if (waiting.size() >= opts.maxWaiting) {
    error = "the queue is full (" + std::to_string(waiting.size()) +
            " requests wait)";
    return Submitted::QueueFull;
  }
  uint64_t assigned = nextId++;
  if (id)
    *id = assigned;
  waiting.push_back({assigned, std::move(request)});
  counters.waiting = static_cast<int64_t>(waiting.size());
  wake.notify_one();
  return Submitted::Ok;
}

void Engine::cancel(uint64_t id) {
  std::lock_guard<std::mutex> lock(mutex);
  cancels.push_back(id);
  wake.notify_one();
}

void Engine::stop(bool finish) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!stopping) {
      stopping = true;
      finishOnStop = finish;
    } else if (!finish) {
      finishOnStop = false;
    }
    wake.notify_one();
  }
  if (thread.joinable() && thread.get_id() != std::this_thread::get_id())
    thread.join();
}

void Engine::cancelAll() {
  std::lock_guard<std::mutex> lock(mutex);
  cancelEverything = true;
  wake.notify_one();
}

EngineStats Engine::stats() const {
  std::lock_guard<std::mutex> lock(mutex);
  return counters;
}

void Engine::end(std::unique_ptr<Active> &slot, Finish why,
                 const std::string &message) {
  std::unique_ptr<Active> a = std::move(slot);
  {
    std::lock_guard<std::mutex> lock(mutex);
    counters.running -= 1;
    counters.cachedTokens -= a->position;
  }
  if (a->request.onFinish)
    a->request.onFinish(why, message);
}

void Engine::advance(Active &a, const float *rowLogits) {
  int64_t token =
      a.sampler.sample(rowLogits, static_cast<size_t>(vocab), a.history);
  a.history.push_back(token);
  a.generated += 1;
  {
    std::lock_guard<std::mutex> lock(mutex);
    counters.generatedTokens += 1;
  }
  a.last = token;
  a.decoding = true;
}

void Engine::finishIfDone(std::unique_ptr<Active> &slot) {
  Active &a = *slot;
  bool keep = !a.request.onToken || a.request.onToken(a.last);
  if (!keep)
    end(slot, Finish::Cancelled);
  else if (std::find(a.request.eos.begin(), a.request.eos.end(), a.last) !=
           a.request.eos.end())
    end(slot, Finish::EndOfSequence);
  else if (a.generated >= a.request.maxTokens)
    end(slot, Finish::Length);
  else if (a.position >= opts.context)
    end(slot, Finish::Context);
}

void Engine::step(std::vector<std::unique_ptr<Active>> &rows) {
  // Prefill: one chunk of each joining prompt, one row per run.
  for (size_t r = 0; r < rows.size(); ++r) {
    if (!rows[r] || rows[r]->decoding)
      continue;
    Active &a = *rows[r];
    int64_t chunk = std::min<int64_t>(
        opts.prefillChunk,
        static_cast<int64_t>(a.request.prompt.size() - a.fed));
    std::vector<int64_t> ids(a.request.prompt.begin() + a.fed,
                             a.request.prompt.begin() + a.fed + chunk);
    std::vector<int64_t> ones(static_cast<size_t>(chunk), 1);
    std::vector<tfc_tensor> in;
    in.push_back(tfc_tensor{TFC_I64, 2, {1, chunk}, ids.data(), nullptr});
    for (size_t k = 0; k < extraInputs; ++k)
      in.push_back(tfc_tensor{TFC_I64, 2, {1, chunk}, ones.data(), nullptr});
    int64_t positions = lastOnly ? 1 : chunk;
    tfc_tensor out{TFC_F32, 3, {1, positions, vocab}, logits.data(), nullptr};
    int64_t at = a.position;
    if (tfc_session_run_rows(session, static_cast<int64_t>(r), 1, &at,
                             in.data(), in.size(), &out, 1) != TFC_OK) {
      reusable[r].clear(); // what the failed run wrote is unknown
      end(rows[r], Finish::Error, tfc_last_error());
      continue;
    }
    // Whole chunks at multiples of the chunk size may serve a later
    // request; anything else written at `at` ends what the row can give.
    std::vector<int64_t> &keep = reusable[r];
    if (static_cast<int64_t>(keep.size()) > at)
      keep.resize(static_cast<size_t>(at));
    if (opts.prefixCache && chunk == opts.prefillChunk &&
        static_cast<int64_t>(keep.size()) == at)
      keep.insert(keep.end(), ids.begin(), ids.end());
    a.position += chunk;
    a.fed += static_cast<size_t>(chunk);
    {
      std::lock_guard<std::mutex> lock(mutex);
      counters.promptTokens += static_cast<uint64_t>(chunk);
      counters.cachedTokens += chunk;
    }
    if (a.fed == a.request.prompt.size()) {
      advance(a, logits.data() + (positions - 1) * vocab);
      finishIfDone(rows[r]);
    }
  }
  // Decode: every row with a token to feed, as one run of rows [0, hi].
  int64_t hi = -1;
  for (size_t r = 0; r < rows.size(); ++r)
    if (rows[r] && rows[r]->decoding)
      hi = static_cast<int64_t>(r);
  if (hi < 0)
    return;
  if (hasRows) {
    decode(rows, 0, static_cast<size_t>(hi) + 1);
    return;
  }
  // Without a rows form: one run per decoding row, through the cached entry.
  for (size_t r = 0; r <= static_cast<size_t>(hi); ++r)
    if (rows[r] && rows[r]->decoding)
      decode(rows, r, 1);
}

void Engine::decode(std::vector<std::unique_ptr<Active>> &rows, size_t first,
                    size_t n) {
  std::vector<int64_t> ids(n, 0), at(n, 0), ones(n, 1);
  for (size_t i = 0; i < n; ++i) {
    size_t r = first + i;
    // A row without a request writes past the prefix it keeps; a
    // prefilling one at its position, which its next chunk overwrites.
    if (!rows[r]) {
      at[i] = static_cast<int64_t>(reusable[r].size());
      continue;
    }
    at[i] = rows[r]->position;
    if (rows[r]->decoding)
      ids[i] = rows[r]->last;
  }
  std::vector<tfc_tensor> in;
  int64_t batch = static_cast<int64_t>(n);
  in.push_back(tfc_tensor{TFC_I64, 2, {batch, 1}, ids.data(), nullptr});
  for (size_t k = 0; k < extraInputs; ++k)
    in.push_back(tfc_tensor{TFC_I64, 2, {batch, 1}, ones.data(), nullptr});
  tfc_tensor out{TFC_F32, 3, {batch, 1, vocab}, logits.data(), nullptr};
  if (tfc_session_run_rows(session, static_cast<int64_t>(first), batch,
                           at.data(), in.data(), in.size(), &out,
                           1) != TFC_OK) {
    std::string message = tfc_last_error();
    for (size_t r = first; r < first + n; ++r) {
      reusable[r].clear(); // what the failed run wrote is unknown
      if (rows[r] && rows[r]->decoding)
        end(rows[r], Finish::Error, message);
    }
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    size_t r = first + i;
    if (!rows[r] || !rows[r]->decoding)
      continue;
    if (static_cast<int64_t>(reusable[r].size()) > at[i])
      reusable[r].resize(static_cast<size_t>(at[i]));
    rows[r]->position += 1;
    {
      std::lock_guard<std::mutex> lock(mutex);
      counters.cachedTokens += 1;
    }
    advance(*rows[r], logits.data() + i * static_cast<size_t>(vocab));
    finishIfDone(rows[r]);
  }
}

void Engine::admit(std::vector<std::unique_ptr<Active>> &rows, uint64_t id,
                   Request request) {
  // The prefix a row may give: whole chunks, and at least one prompt token
  // left to feed (its logits give the first token).
  const std::vector<int64_t> &prompt = request.prompt;
  int64_t most = (static_cast<int64_t>(prompt.size()) - 1) / opts.prefillChunk *
                 opts.prefillChunk;
  size_t best = rows.size();
  int64_t bestShared = -1;
  for (size_t r = 0; r < rows.size(); ++r) {
    if (rows[r])
      continue;
    int64_t shared = 0;
    if (opts.prefixCache) {
      const std::vector<int64_t> &have = reusable[r];
      int64_t n = std::min<int64_t>(most, static_cast<int64_t>(have.size()));
      while (shared < n && have[shared] == prompt[shared])
        ++shared;
      shared = shared / opts.prefillChunk * opts.prefillChunk;
    }
    if (shared > bestShared) {
      best = r;
      bestShared = shared;
    }
  }
  auto a = std::make_unique<Active>(id, std::move(request));
  a->position = bestShared;
  a->fed = static_cast<size_t>(bestShared);
  reusable[best].resize(static_cast<size_t>(bestShared));
  counters.reusedTokens += static_cast<uint64_t>(bestShared);
  counters.cachedTokens += bestShared;
  rows[best] = std::move(a);
}

void Engine::loop() {
  std::vector<std::unique_ptr<Active>> rows(static_cast<size_t>(opts.rows));
  reusable.assign(rows.size(), {});
  auto anyActive = [&] {
    return std::any_of(rows.begin(), rows.end(),
                       [](const std::unique_ptr<Active> &a) { return !!a; });
  };
  auto anyFree = [&] {
    return std::any_of(rows.begin(), rows.end(),
                       [](const std::unique_ptr<Active> &a) { return !a; });
  };
  while (true) {
    std::vector<uint64_t> toCancel;
    std::vector<Waiting> dropped;
    bool cancelEvery = false, done = false;
    {
      std::unique_lock<std::mutex> lock(mutex);
      wake.wait(lock, [&] {
        return stopping || cancelEverything || !cancels.empty() ||
               anyActive() || (!waiting.empty() && anyFree());
      });
      if ((stopping && !finishOnStop) || cancelEverything) {
        cancelEvery = true;
        cancelEverything = false;
        while (!waiting.empty()) {
          dropped.push_back(std::move(waiting.front()));
          waiting.pop_front();
        }
      }
      // Cancelled requests that still wait leave the queue.
      toCancel.swap(cancels);
      for (uint64_t id : toCancel)
        for (auto it = waiting.begin(); it != waiting.end(); ++it)
          if (it->id == id) {
            dropped.push_back(std::move(*it));
            waiting.erase(it);
            break;
          }
      while (!waiting.empty() && anyFree()) {
        admit(rows, waiting.front().id, std::move(waiting.front().request));
        waiting.pop_front();
        counters.running += 1;
        counters.requests += 1;
      }
      counters.waiting = static_cast<int64_t>(waiting.size());
      done = stopping && waiting.empty() &&
             (cancelEvery || (!anyActive() && dropped.empty()));
    }
    for (Waiting &w : dropped)
      if (w.request.onFinish)
        w.request.onFinish(Finish::Cancelled, "");
    for (auto &slot : rows)
      if (slot && (cancelEvery || std::find(toCancel.begin(), toCancel.end(),
                                            slot->id) != toCancel.end()))
        end(slot, Finish::Cancelled);
    if (done && !anyActive())
      return;
    step(rows);
  }
}
