//===- engine_check.cpp - The serving engine against solo generation ------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//   tfc-engine-check model.so weights ENTRY
//
// ENTRY is a cached entry of a model compiled with --kv-cache
// --kv-cache-rows. Eight requests (prompts of different lengths, different
// token limits, greedy) are generated first one at a time on an engine of
// one row, then submitted together from four threads to an engine of four
// rows (requests joining and leaving while others decode), both prefilling
// prompts in pieces of 4 tokens: every request must get its solo tokens;
// prompts that share prefixes get the same tokens with and without prefix
// reuse. Then
// what the engine refuses (invalid requests, a full queue), a request cancelled
// by its callback and one by cancel(), and stopping with requests in flight.
// Prints a line per check; exit status 1 on a failure.
//
//===----------------------------------------------------------------------===//

#include "tfc/Serving/Engine.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace tfc::serve;

namespace {

struct Outcome {
  std::vector<int64_t> tokens;
  Finish finish = Finish::Error;
  std::string message;
};

/// Submits `r` and returns a future of its outcome.
std::future<Outcome> run(Engine &engine, Request r, Engine::Submitted *status,
                         uint64_t *id = nullptr) {
  auto promise = std::make_shared<std::promise<Outcome>>();
  auto outcome = std::make_shared<Outcome>();
  std::future<Outcome> result = promise->get_future();
  auto onToken = r.onToken;
  r.onToken = [outcome, onToken](int64_t t) {
    outcome->tokens.push_back(t);
    return !onToken || onToken(t);
  };
  r.onFinish = [outcome, promise](Finish f, const std::string &m) {
    outcome->finish = f;
    outcome->message = m;
    promise->set_value(*outcome);
  };
  std::string error;
  *status = engine.submit(std::move(r), id, error);
  if (*status != Engine::Submitted::Ok) {
    outcome->message = error;
    promise->set_value(*outcome);
  }
  return result;
}

Request make(int k, int64_t vocab) {
  Request r;
  int length = 3 + (k * 5) % 17; // 3 .. 19 tokens
  for (int i = 0; i < length; ++i)
    r.prompt.push_back((k * 31 + i * 7 + 1) % vocab);
  r.maxTokens = 6 + (k * 3) % 9;
  return r;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: tfc-engine-check model.so weights ENTRY\n");
    return 2;
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  tfc_model *model = nullptr;
  if (tfc_model_load(argv[1], &model) != TFC_OK ||
      tfc_model_load_weights(model, argv[2]) != TFC_OK) {
    std::fprintf(stderr, "%s\n", tfc_last_error());
    return 1;
  }
  std::string error;
  bool ok = true;
  const int kRequests = 8;

  // Solo: one row, one request at a time.
  std::vector<std::vector<int64_t>> solo(kRequests);
  int64_t vocab = 0;
  {
    EngineOptions o;
    o.rows = 1;
    o.context = 64;
    o.prefillChunk = 4; // as below: a prompt's pieces are the same
    std::unique_ptr<Engine> e = Engine::create(model, argv[3], o, error);
    if (!e) {
      std::fprintf(stderr, "engine: %s\n", error.c_str());
      return 1;
    }
    vocab = e->vocabulary();
    for (int k = 0; k < kRequests; ++k) {
      Engine::Submitted s;
      Outcome out = run(*e, make(k, vocab), &s).get();
      solo[k] = out.tokens;
      ok &= s == Engine::Submitted::Ok && out.finish == Finish::Length;
    }
  }

  // Together: four rows, requests from four threads.
  {
    EngineOptions o;
    o.rows = 4;
    o.context = 64;
    o.prefillChunk = 4;
    std::unique_ptr<Engine> e = Engine::create(model, argv[3], o, error);
    if (!e) {
      std::fprintf(stderr, "engine: %s\n", error.c_str());
      return 1;
    }
    std::vector<std::future<Outcome>> futures(kRequests);
    std::vector<Engine::Submitted> status(kRequests);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        for (int k = t; k < kRequests; k += 4)
          futures[k] = run(*e, make(k, vocab), &status[k]);
      });
    for (std::thread &t : threads)
      t.join();
    for (int k = 0; k < kRequests; ++k) {
      Outcome out = futures[k].get();
      bool same = status[k] == Engine::Submitted::Ok &&
                  out.finish == Finish::Length && out.tokens == solo[k];
      ok &= same;
      std::printf("request %d: %zu tokens, %s (%s)\n", k, out.tokens.size(),
                  same ? "same as solo" : "DIFFERENT", finishName(out.finish));
    }
    EngineStats st = e->stats();
    std::printf("stats: %llu requests, %llu generated, running %lld, "
                "waiting %lld, cached %lld\n",
                (unsigned long long)st.requests,
                (unsigned long long)st.generatedTokens, (long long)st.running,
                (long long)st.waiting, (long long)st.cachedTokens);
  }

  // Prefix reuse: P, a longer Q sharing all of it, R sharing 9 tokens, P
  // again, one after the other on an engine of two rows with chunks of 4:
  // each gets the tokens an engine without reuse gives, and the rows give
  // 12 (Q: P's three whole chunks), 8 (R) and 8 (P after R) tokens.
  {
    std::vector<int64_t> p;
    for (int i = 0; i < 13; ++i)
      p.push_back((i * 11 + 3) % vocab);
    std::vector<int64_t> q = p, r(p.begin(), p.begin() + 9);
    for (int i = 0; i < 5; ++i)
      q.push_back((i * 5 + 2) % vocab);
    for (int i = 0; i < 5; ++i)
      r.push_back((i * 13 + 7) % vocab);
    std::vector<std::vector<int64_t>> prompts = {p, q, r, p};
    std::vector<std::vector<int64_t>> tokens[2];
    uint64_t reused[2] = {0, 0};
    for (int cache = 0; cache < 2; ++cache) {
      EngineOptions o;
      o.rows = 2;
      o.context = 64;
      o.prefillChunk = 4;
      o.prefixCache = cache == 1;
      std::unique_ptr<Engine> e = Engine::create(model, argv[3], o, error);
      if (!e) {
        std::fprintf(stderr, "engine: %s\n", error.c_str());
        return 1;
      }
      for (const std::vector<int64_t> &prompt : prompts) {
        Request req;
        req.prompt = prompt;
        req.maxTokens = 6;
        Engine::Submitted st;
        tokens[cache].push_back(run(*e, std::move(req), &st).get().tokens);
      }
      reused[cache] = e->stats().reusedTokens;
    }
    bool same = tokens[0] == tokens[1];
    // (A model without a rows form keeps rolling caches: no reuse.)
    ok &= same && reused[0] == 0 && (reused[1] == 28 || reused[1] == 0);
    std::printf("prefix reuse: %llu tokens reused, answers %s\n",
                (unsigned long long)reused[1],
                same ? "same as without" : "DIFFERENT");
  }

  // What it refuses, and cancels.
  {
    EngineOptions o;
    o.rows = 2;
    o.context = 32;
    o.maxWaiting = 1;
    std::unique_ptr<Engine> e = Engine::create(model, argv[3], o, error);
    if (!e) {
      std::fprintf(stderr, "engine: %s\n", error.c_str());
      return 1;
    }
    auto refused = [&](Request r, const char *what) {
      std::string why;
      Engine::Submitted s = e->submit(std::move(r), nullptr, why);
      std::printf("%s: %s\n", what, why.c_str());
      ok &= s == Engine::Submitted::Invalid;
    };
    Request r = make(0, vocab);
    r.prompt.clear();
    refused(r, "empty");
    r = make(0, vocab);
    r.prompt[1] = vocab;
    refused(r, "vocabulary");
    r = make(0, vocab);
    r.maxTokens = 30;
    refused(r, "context");
    r = make(0, vocab);
    r.sampling.temperature = -1;
    refused(r, "sampling");

    // A request whose first token blocks the engine's thread until released:
    // meanwhile a request fills the queue of one and the next is refused;
    // then it is cancelled by id, and the queued one runs.
    Request gate = make(2, vocab); // 13 prompt tokens
    gate.maxTokens = 15;
    std::promise<void> started, release;
    std::shared_future<void> released = release.get_future().share();
    bool first = true;
    gate.onToken = [&](int64_t) {
      if (first) {
        first = false;
        started.set_value();
        released.wait();
      }
      return true;
    };
    Engine::Submitted s1, s2, s3, s4;
    uint64_t gateId = 0;
    std::future<Outcome> g = run(*e, gate, &s1, &gateId);
    if (s1 != Engine::Submitted::Ok) {
      std::printf("gate refused: %s\n", g.get().message.c_str());
      return 1;
    }
    started.get_future().wait();
    std::future<Outcome> queued = run(*e, make(3, vocab), &s2);
    std::future<Outcome> full = run(*e, make(4, vocab), &s3);
    e->cancel(gateId);
    release.set_value();
    Outcome og = g.get(), oq = queued.get(), of = full.get();
    std::printf("cancel: %s after %zu tokens\n", finishName(og.finish),
                og.tokens.size());
    std::printf("queue: %s\n", of.message.c_str());
    ok &= s1 == Engine::Submitted::Ok && og.finish == Finish::Cancelled &&
          og.tokens.size() < 15 && s2 == Engine::Submitted::Ok &&
          oq.finish == Finish::Length && s3 == Engine::Submitted::QueueFull;

    // A request whose callback refuses its third token.
    Request self = make(1, vocab);
    self.maxTokens = 20;
    int seen = 0;
    self.onToken = [&seen](int64_t) { return ++seen < 3; };
    Outcome os = run(*e, self, &s4).get();
    std::printf("callback: %zu tokens, %s\n", os.tokens.size(),
                finishName(os.finish));
    ok &= s4 == Engine::Submitted::Ok && os.finish == Finish::Cancelled &&
          os.tokens.size() == 3;

    // Stopping cancels what runs.
    Request last = make(5, vocab); // 11 prompt tokens
    last.maxTokens = 15;
    last.onToken = [](int64_t) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      return true;
    };
    Engine::Submitted s5;
    std::future<Outcome> f = run(*e, last, &s5);
    e->stop(false);
    Outcome ol = f.get();
    std::printf("stop: %s\n", finishName(ol.finish));
    ok &= s5 == Engine::Submitted::Ok && ol.finish == Finish::Cancelled;
    std::string why;
    ok &= e->submit(make(6, vocab), nullptr, why) == Engine::Submitted::Stopped;
    std::printf("after stop: %s\n", why.c_str());
  }
  tfc_model_free(model);
  std::printf("%s\n", ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}
