//===- tfc-serve.cpp - An OpenAI-compatible HTTP server -------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//   tfc-serve MODEL.so --weights CHECKPOINT [--host H] [--port P] [options]
//   tfc-serve CHECKPOINT [options]
//
// Serves a model over OpenAI's HTTP API (docs/serving.md): every request
// that generates joins one batch decoded step by step (continuous batching,
// include/tfc/Serving/Engine.h), embeddings run the model's encode entry.
// Listens at once (/health says 503 until the model is loaded); SIGTERM or
// SIGINT stops accepting work, lets what runs finish (within
// --shutdown-timeout, then cancels it) and exits 0.
//
//===----------------------------------------------------------------------===//

#include "ServedModel.h"
#include "Server.h"

#include "CommandLine.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <pthread.h>
#include <thread>

namespace {

const char *const kUsage =
    R"(usage: tfc-serve MODEL.so --weights CHECKPOINT [options]
       tfc-serve CHECKPOINT [options]

Serves a model over OpenAI's HTTP API: POST /v1/chat/completions,
/v1/completions, /v1/embeddings; GET /v1/models, /health, /metrics
(docs/serving.md). Requests that generate are decoded together, each at its
own position (continuous batching). A checkpoint (a Hugging Face directory,
a .gguf) is compiled once with --kv-cache --kv-cache-last --kv-cache-rows
into the cache ($TFC_CACHE_DIR/compiled, default ~/.cache/tfc/compiled).

options:
  -w, --weights PATH       the weights (.safetensors, a Hugging Face
                           directory or a .gguf)
      --tokenizer PATH     tokenizer.json, a directory holding one, or a .gguf
                           (default: the weights path)
      --chat-template FILE a Jinja chat template instead of the checkpoint's
      --host ADDR          the address to listen on (default 127.0.0.1)
      --port N             the port (default 8080; 0: any free port, printed)
      --model-name NAME    the name requests give as "model" (default: the
                           model's file name)
      --api-key KEY        require "Authorization: Bearer KEY" on /v1 routes
                           (default: $TFC_API_KEY; none when both are unset)
      --parallel N         requests decoded together (default 4; --np N
                           as llama-server's -np)
      --context N          tokens per request, prompt and reply (default:
                           2048, within the model's bound)
      --queue N            requests waiting for a slot at most; past it a
                           request gets 429 with Retry-After (default 64)
      --prefill-chunk N    prompt tokens per prefill run, so that a long
                           prompt does not stall the others (default 256)
      --no-prefix-cache    do not reuse the keys and values of a prompt
                           prefix that a free slot already holds (reuse is
                           in whole prefill chunks, and exact)
      --max-tokens N       a reply's tokens when a request names none
                           (default: what the context leaves)
      --timeout SECONDS    a request's time limit from its arrival; past it
                           the request ends with 504 (default 600; 0: none)
      --max-body BYTES     the largest request body; larger ones get 413
                           (default 8388608)
      --shutdown-timeout SECONDS
                           on SIGTERM, how long running requests may take to
                           finish before they are cancelled (default 30)
      --threads N          compute threads (default: TFC_NUM_THREADS or all)
      --quiet              no request log on stderr
  -h, --help               this text
)";

} // namespace

int main(int argc, char **argv) {
  using namespace tfc::serve;
  ServeOptions model;
  ServerOptions server;
  int64_t parallel = 4, context = 2048, queue = 64, chunk = 256, threads = 0;
  int64_t timeout = 600, maxBody = int64_t(8) << 20, port = 8080;
  int64_t shutdownTimeout = 30;
  using tfc::tools::integerAtLeast;
  tfc::tools::CommandLine cli("tfc-serve", kUsage);
  cli.add_option("model", model.model);
  cli.add_option("-w,--weights", model.weights);
  cli.add_option("--tokenizer", model.tokenizer);
  cli.add_option("--chat-template", model.chatTemplate);
  cli.add_option("--host", server.host);
  cli.add_option("--port", port)->transform(integerAtLeast(0));
  cli.add_option("--model-name", model.name);
  cli.add_option("--api-key", server.apiKey);
  cli.add_option("--parallel,--np", parallel)->transform(integerAtLeast(1));
  cli.add_option("--context", context)->transform(integerAtLeast(2));
  cli.add_option("--queue", queue)->transform(integerAtLeast(0));
  cli.add_option("--prefill-chunk", chunk)->transform(integerAtLeast(1));
  bool noPrefixCache = false;
  cli.add_flag("--no-prefix-cache", noPrefixCache);
  cli.add_option("--max-tokens", model.defaultMaxTokens)
      ->transform(integerAtLeast(1));
  cli.add_option("--timeout", timeout)->transform(integerAtLeast(0));
  cli.add_option("--max-body", maxBody)->transform(integerAtLeast(1));
  cli.add_option("--shutdown-timeout", shutdownTimeout)
      ->transform(integerAtLeast(0));
  cli.add_option("--threads", threads)->transform(integerAtLeast(1));
  cli.add_flag("--quiet", model.quiet);
  cli.parseOrExit(argc, argv);
  if (model.model.empty())
    cli.fail("no model given (a library from tfc-compile, or a checkpoint)");
  if (port > 65535)
    cli.fail("--port must be in [0, 65535], not " + std::to_string(port));
  if (parallel > 1024)
    cli.fail("--parallel must be at most 1024");
  if (server.apiKey.empty())
    if (const char *key = std::getenv("TFC_API_KEY"))
      server.apiKey = key;
  model.contextGiven = cli.count("--context") > 0;
  model.engine.rows = parallel;
  model.engine.context = context;
  model.engine.maxWaiting = static_cast<size_t>(queue);
  model.engine.prefillChunk = chunk;
  model.engine.prefixCache = !noPrefixCache;
  server.port = static_cast<int>(port);
  server.timeout = std::chrono::seconds(timeout);
  server.maxBody = static_cast<size_t>(maxBody);
  server.quiet = model.quiet;
  // A thread per connection: the running and the waiting requests, and
  // room for health checks, metrics and refusals.
  server.httpThreads = static_cast<size_t>(parallel + queue + 8);
  if (threads > 0 && tfc_set_num_threads(static_cast<int>(threads)) != TFC_OK)
    cli.fail(tfc_last_error());

  // Signals are taken by sigwait below, in this thread only; every thread
  // started from here on inherits the mask. A write to a closed connection
  // fails instead of killing the process.
  std::signal(SIGPIPE, SIG_IGN);
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGUSR1); // the loader: it failed
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  Server http(server);
  std::string error;
  if (!http.bind(error))
    cli.fail(error);
  std::fprintf(stderr, "tfc-serve: listening on http://%s:%d\n",
               server.host.c_str(), http.port());
  bool loopback = server.host == "127.0.0.1" || server.host == "localhost" ||
                  server.host == "::1";
  if (!loopback && server.apiKey.empty())
    std::fprintf(stderr,
                 "tfc-serve: warning: listening on %s without an API key: "
                 "anyone who reaches this address can use the model (give "
                 "--api-key or TFC_API_KEY)\n",
                 server.host.c_str());
  std::fflush(stderr);
  std::thread listener([&] { http.run(); });
  // Accepting before anything may stop it (a stop() before that is lost).
  for (int i = 0; i < 10000 && !http.running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));

  // The model loads while /health says 503.
  std::unique_ptr<ServedModel> served;
  std::string loadError;
  pthread_t mainThread = pthread_self();
  std::thread loader([&] {
    served = ServedModel::load(model, argv[0], loadError);
    if (!served) {
      pthread_kill(mainThread, SIGUSR1);
      return;
    }
    http.setModel(served.get());
    std::fprintf(
        stderr,
        "tfc-serve: serving '%s'%s%s on %d threads; %lld parallel "
        "requests of up to %lld tokens\n",
        served->name().c_str(),
        !served->generates() ? ""
        : served->generationEngine()->batched()
            ? " (generation)"
            : " (generation, a run per request: the model has no rows form)",
        served->embeds() ? " (embeddings)" : "", tfc_num_threads(),
        static_cast<long long>(parallel),
        static_cast<long long>(
            served->generates() ? served->generationEngine()->options().context
                                : 0));
    std::fflush(stderr);
  });
  int sig = 0;
  sigwait(&signals, &sig);
  if (sig == SIGUSR1) {
    loader.join();
    http.stop();
    listener.join();
    std::fprintf(stderr, "tfc-serve: error: %s\n", loadError.c_str());
    return 1;
  }
  std::fprintf(stderr, "tfc-serve: %s: stopping\n",
               sig == SIGINT ? "SIGINT" : "SIGTERM");
  std::fflush(stderr);
  http.drain();
  loader.join(); // a load in progress completes (a compile is not cut)
  if (served && served->generationEngine()) {
    // What runs and waits may finish within the grace period; a second
    // signal or its end cancels the rest.
    Engine *engine = served->generationEngine();
    std::thread finisher([engine] { engine->stop(/*finish=*/true); });
    auto until = std::chrono::steady_clock::now() +
                 std::chrono::seconds(shutdownTimeout);
    for (;;) {
      EngineStats s = engine->stats();
      if (s.running == 0 && s.waiting == 0)
        break;
      timespec slice{0, 50'000'000};
      sigset_t again = signals;
      if (sigtimedwait(&again, nullptr, &slice) > 0 ||
          std::chrono::steady_clock::now() >= until) {
        engine->cancelAll();
        break;
      }
    }
    finisher.join();
  }
  // The answers being written (the last events of streams) complete.
  http.waitIdle(std::chrono::seconds(10));
  http.stop();
  listener.join();
  std::fprintf(stderr, "tfc-serve: stopped\n");
  return 0;
}
