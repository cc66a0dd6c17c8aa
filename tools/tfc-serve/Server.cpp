//===- Server.cpp - tfc-serve's HTTP routes -------------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// See Server.h. cpp-httplib gives each connection a thread of its pool; a
// completion's thread waits on its Reply, so the pool is sized for the
// engine's rows and queue (tfc-serve.cpp). Streams are written with chunked
// transfer encoding. A client that leaves is noticed by a peek at its
// socket (Connection.h) each second or token, or by a write that fails; a
// stream that has nothing to say for a second writes an SSE comment.
//
//===----------------------------------------------------------------------===//

#include "Server.h"
#include "Connection.h"
#include "Reply.h"

#include <httplib.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <thread>

using namespace tfc::serve;
using Clock = std::chrono::steady_clock;

/// Counters for /metrics besides the engine's.
struct Server::Metrics {
  std::mutex mutex;
  /// Answers by route and status.
  std::map<std::pair<std::string, int>, uint64_t> responses;
  /// Time to first token, a histogram in seconds.
  static constexpr double kBuckets[] = {0.025, 0.05, 0.1, 0.25, 0.5,
                                        1,     2.5,  5,   10,   30};
  uint64_t ttftCounts[std::size(kBuckets) + 1] = {};
  double ttftSum = 0;
  uint64_t ttftCount = 0;
  uint64_t cancelled = 0, timedOut = 0;
  // The previous scrape, for the rates.
  Clock::time_point lastScrape = Clock::now();
  uint64_t lastPrompt = 0, lastGenerated = 0;

  void answered(const std::string &route, int status) {
    std::lock_guard<std::mutex> lock(mutex);
    ++responses[{route, status}];
  }
  void firstToken(double seconds) {
    std::lock_guard<std::mutex> lock(mutex);
    size_t b = 0;
    while (b < std::size(kBuckets) && seconds > kBuckets[b])
      ++b;
    ++ttftCounts[b];
    ttftSum += seconds;
    ++ttftCount;
  }
};

Server::Server(ServerOptions options)
    : opts(std::move(options)), http(std::make_unique<httplib::Server>()),
      created(static_cast<int64_t>(std::time(nullptr))),
      metrics(std::make_unique<Metrics>()) {
  size_t threads = std::max<size_t>(opts.httpThreads, 4);
  http->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  http->set_payload_max_length(opts.maxBody);
  http->set_read_timeout(30, 0);
  http->set_write_timeout(30, 0);
  http->set_keep_alive_timeout(5);
  http->set_tcp_nodelay(true);
  routes();
}

Server::~Server() = default;

bool Server::bind(std::string &error) {
  if (opts.port == 0) {
    boundPort = http->bind_to_any_port(opts.host);
    if (boundPort <= 0) {
      error = "cannot listen on " + opts.host + " (any port)";
      return false;
    }
    return true;
  }
  if (!http->bind_to_port(opts.host, opts.port)) {
    error = "cannot listen on " + opts.host + ":" + std::to_string(opts.port) +
            " (in use, or not an address of this machine)";
    return false;
  }
  boundPort = opts.port;
  return true;
}

void Server::run() { http->listen_after_bind(); }

bool Server::running() const { return http->is_running(); }

void Server::stop() { http->stop(); }

void Server::setModel(ServedModel *m) { model = m; }

bool Server::waitIdle(std::chrono::milliseconds limit) {
  Clock::time_point until = Clock::now() + limit;
  while (inFlight.load() > 0) {
    if (Clock::now() >= until)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

void Server::fail(httplib::Response &res, const ApiError &e) {
  res.status = e.status;
  if (e.status == 429 || e.status == 503)
    res.set_header("Retry-After", "1");
  res.set_content(e.body(), "application/json");
}

bool Server::authorised(const httplib::Request &req, httplib::Response &res) {
  if (opts.apiKey.empty())
    return true;
  std::string given = req.get_header_value("Authorization");
  if (given == "Bearer " + opts.apiKey)
    return true;
  ApiError e{401,
             given.empty() ? "no API key given: send 'Authorization: Bearer "
                             "KEY'"
                           : "the API key is not this server's",
             "", "invalid_request_error", "invalid_api_key"};
  fail(res, e);
  return false;
}

ServedModel *Server::admit(const httplib::Request &req, httplib::Response &res,
                           bool forWork) {
  if (!authorised(req, res))
    return nullptr;
  ServedModel *m = model.load();
  if (!m) {
    fail(res, ApiError{503, "the model is loading", "", "server_error"});
    return nullptr;
  }
  if (forWork && draining) {
    fail(res, ApiError{503, "the server is shutting down", "", "server_error"});
    return nullptr;
  }
  return m;
}

void Server::routes() {
  http->Get(
      "/health", [this](const httplib::Request &, httplib::Response &res) {
        if (!model.load()) {
          res.status = 503;
          res.set_content(R"({"status":"loading"})", "application/json");
        } else if (draining) {
          res.status = 503;
          res.set_content(R"({"status":"shutting down"})", "application/json");
        } else {
          res.set_content(R"({"status":"ok"})", "application/json");
        }
      });
  http->Get("/metrics",
            [this](const httplib::Request &, httplib::Response &res) {
              res.set_content(metricsText(), "text/plain; version=0.0.4");
            });
  http->Get("/v1/models",
            [this](const httplib::Request &req, httplib::Response &res) {
              ServedModel *m = admit(req, res, /*forWork=*/false);
              if (!m)
                return;
              nlohmann::ordered_json entry = nlohmann::ordered_json::object();
              entry["id"] = m->name();
              entry["object"] = "model";
              entry["created"] = created;
              entry["owned_by"] = "tfc";
              nlohmann::ordered_json out = nlohmann::ordered_json::object();
              out["object"] = "list";
              out["data"] = nlohmann::ordered_json::array({entry});
              res.set_content(out.dump(), "application/json");
            });
  http->Post("/v1/chat/completions",
             [this](const httplib::Request &req, httplib::Response &res) {
               Busy busy(inFlight);
               completion(req, res, RequestKind::Chat);
               metrics->answered("/v1/chat/completions",
                                 res.status < 0 ? 200 : res.status);
             });
  http->Post("/v1/completions", [this](const httplib::Request &req,
                                       httplib::Response &res) {
    Busy busy(inFlight);
    completion(req, res, RequestKind::Completion);
    metrics->answered("/v1/completions", res.status < 0 ? 200 : res.status);
  });
  http->Post("/v1/embeddings", [this](const httplib::Request &req,
                                      httplib::Response &res) {
    Busy busy(inFlight);
    embeddings(req, res);
    metrics->answered("/v1/embeddings", res.status < 0 ? 200 : res.status);
  });
  // What httplib answers by itself (no route, a body past the limit, a
  // malformed request) gets OpenAI's error shape too.
  http->set_error_handler(
      [this](const httplib::Request &req, httplib::Response &res) {
        if (!res.body.empty())
          return;
        std::string message;
        switch (res.status) {
        case 404:
          message = "no route " + req.method + " " + req.path;
          break;
        case 413:
          message = "the request body is larger than this server's limit of " +
                    std::to_string(opts.maxBody) + " bytes";
          break;
        default:
          message = "the request could not be read (HTTP " +
                    std::to_string(res.status) + ")";
        }
        ApiError e{res.status, message};
        if (res.status == 404)
          e.code = "unknown_url";
        res.set_content(e.body(), "application/json");
      });
  http->set_exception_handler([this](const httplib::Request &,
                                     httplib::Response &res,
                                     std::exception_ptr ep) {
    std::string what = "unknown";
    try {
      if (ep)
        std::rethrow_exception(ep);
    } catch (const std::exception &e) {
      what = e.what();
    } catch (...) {
    }
    fail(res, ApiError{500, "internal error: " + what, "", "server_error"});
  });
  if (!opts.quiet)
    http->set_logger(
        [](const httplib::Request &req, const httplib::Response &res) {
          std::fprintf(stderr, "tfc-serve: %s %s -> %d\n", req.method.c_str(),
                       req.path.c_str(), res.status);
        });
}

namespace {

/// The model field names this server's model (404 otherwise, as OpenAI).
bool sameModel(const std::string &asked, const ServedModel &m, ApiError &e) {
  if (asked == m.name())
    return true;
  e = ApiError{404,
               "The model '" + asked + "' does not exist (this server has '" +
                   m.name() + "')",
               "model", "invalid_request_error", "model_not_found"};
  return false;
}

} // namespace

void Server::completion(const httplib::Request &req, httplib::Response &res,
                        RequestKind kind) {
  Clock::time_point arrived = Clock::now();
  ServedModel *m = admit(req, res, /*forWork=*/true);
  if (!m)
    return;
  ApiError error;
  std::optional<CompletionRequest> r =
      parseCompletionRequest(req.body, kind, error);
  if (!r || !sameModel(r->model, *m, error))
    return fail(res, error);
  if (!m->generates())
    return fail(res, ApiError::badRequest("the model '" + m->name() +
                                              "' does not generate text (it "
                                              "has no cached entry)",
                                          "model"));
  Request request;
  int64_t maxTokens = 0;
  if (!m->promptIds(*r, request.prompt, maxTokens, error))
    return fail(res, error);
  int64_t promptTokens = static_cast<int64_t>(request.prompt.size());
  request.maxTokens = maxTokens;
  if (!r->ignoreEos)
    request.eos = m->endIds();
  request.sampling.temperature = r->temperature;
  request.sampling.topP = r->topP;
  request.sampling.topK = r->topK;
  request.sampling.minP = r->minP;
  request.sampling.repetitionPenalty = r->repetitionPenalty;
  // Without a seed, as OpenAI: each request samples differently.
  request.sampling.seed = r->seed ? *r->seed
                                  : (uint64_t(std::random_device()()) << 32) ^
                                        std::random_device()();
  std::shared_ptr<Reply> reply =
      Reply::submit(*m->generationEngine(), std::move(request),
                    m->textTokenizer(), r->stop, error);
  if (!reply)
    return fail(res, error);

  ResponseHeader header;
  header.kind = kind;
  header.id = newResponseId(kind == RequestKind::Chat ? "chatcmpl-" : "cmpl-");
  header.model = m->name();
  header.created = static_cast<int64_t>(std::time(nullptr));
  Clock::time_point deadline = opts.timeout.count() > 0
                                   ? arrived + opts.timeout
                                   : Clock::time_point::max();
  Metrics *stats = metrics.get();
  auto noteFirstToken = [stats, arrived, reply] {
    Clock::time_point first = reply->firstToken();
    if (first != Clock::time_point())
      stats->firstToken(std::chrono::duration<double>(first - arrived).count());
  };
  std::string timeoutMessage =
      "the request took longer than this server's limit of " +
      std::to_string(opts.timeout.count()) + " s (--timeout)";

  // The connection's socket, to notice a client that leaves.
  int socket = findConnectionSocket(req.local_addr, req.local_port,
                                    req.remote_addr, req.remote_port);
  if (!r->stream) {
    std::string text;
    for (;;) {
      Reply::Step step = reply->next(
          text, std::min(deadline, Clock::now() + std::chrono::seconds(1)));
      if (step == Reply::Step::Done)
        break;
      if (peerClosed(socket)) {
        // Nobody to answer: the row is freed at the engine's next step.
        reply->abandon();
        {
          std::lock_guard<std::mutex> lock(stats->mutex);
          ++stats->cancelled;
        }
        res.status = 499; // nginx's "client closed request", for the log
        return;
      }
      if (Clock::now() >= deadline) {
        reply->abandon();
        std::lock_guard<std::mutex> lock(stats->mutex);
        ++stats->timedOut;
        return fail(res, ApiError{504, timeoutMessage, "", "timeout"});
      }
    }
    noteFirstToken();
    if (reply->finishReason().empty())
      return fail(res, reply->failure());
    Usage usage{promptTokens, reply->completionTokens()};
    res.set_content(completionBody(header, text, reply->finishReason(), usage),
                    "application/json");
    return;
  }

  // A stream of server-sent events: the first chunk, a chunk per piece of
  // text, the last chunk with the finish reason, the usage, [DONE].
  bool includeUsage = r->includeUsage;
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  struct State {
    bool started = false, ended = false;
  };
  auto state = std::make_shared<State>();
  res.set_chunked_content_provider(
      "text/event-stream",
      [=](size_t, httplib::DataSink &sink) {
        auto gone = [&] {
          reply->abandon(); // its row is freed at the engine's next step
          std::lock_guard<std::mutex> lock(stats->mutex);
          ++stats->cancelled;
          return false;
        };
        auto send = [&](const std::string &event) {
          return sink.write(event.data(), event.size()) || gone();
        };
        if (state->ended)
          return false;
        if (!state->started) {
          state->started = true;
          return send(chunkEvent(header, nullptr, nullptr, true, includeUsage));
        }
        if (peerClosed(socket))
          return gone();
        std::string text;
        Clock::time_point beat = Clock::now() + std::chrono::seconds(1);
        Reply::Step step = reply->next(text, std::min(deadline, beat));
        if (step != Reply::Step::Done && Clock::now() >= deadline) {
          reply->abandon();
          {
            std::lock_guard<std::mutex> lock(stats->mutex);
            ++stats->timedOut;
          }
          state->ended = true;
          if (!text.empty() &&
              !send(chunkEvent(header, &text, nullptr, false, includeUsage)))
            return false;
          send(errorEvent(ApiError{504, timeoutMessage, "", "timeout"}));
          send("data: [DONE]\n\n");
          sink.done();
          return true;
        }
        if (step == Reply::Step::Waiting) {
          // A comment: nothing for the client, a failed write if it left.
          return send(": waiting\n\n");
        }
        if (!text.empty() &&
            !send(chunkEvent(header, &text, nullptr, false, includeUsage)))
          return false;
        if (step == Reply::Step::Text)
          return true;
        state->ended = true;
        noteFirstToken();
        if (reply->finishReason().empty()) {
          send(errorEvent(reply->failure()));
        } else {
          std::string why = reply->finishReason();
          if (!send(chunkEvent(header, nullptr, &why, false, includeUsage)))
            return false;
          if (includeUsage &&
              !send(usageEvent(header,
                               Usage{promptTokens, reply->completionTokens()})))
            return false;
        }
        send("data: [DONE]\n\n");
        sink.done();
        return true;
      },
      [reply, counter = std::make_shared<Busy>(inFlight)](bool success) {
        // The connection ended, written or not: a request still running
        // has lost its client.
        if (!success)
          reply->abandon();
      });
}

void Server::embeddings(const httplib::Request &req, httplib::Response &res) {
  ServedModel *m = admit(req, res, /*forWork=*/true);
  if (!m)
    return;
  ApiError error;
  std::optional<EmbeddingRequest> r = parseEmbeddingRequest(req.body, error);
  if (!r || !sameModel(r->model, *m, error))
    return fail(res, error);
  std::vector<float> vectors;
  int64_t dim = 0, tokens = 0;
  if (!m->embed(*r, vectors, dim, tokens, error))
    return fail(res, error);
  size_t count = r->inputIsIds ? r->ids.size() : r->texts.size();
  res.set_content(
      embeddingsBody(m->name(), vectors, dim, count, r->base64, tokens),
      "application/json");
}

std::string Server::metricsText() {
  std::string out;
  char line[256];
  auto add = [&](const char *name, const char *type, const char *help,
                 double value) {
    std::snprintf(line, sizeof line, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n",
                  name, help, name, type, name, value);
    out += line;
  };
  ServedModel *m = model.load();
  add("tfc_ready", "gauge", "1 when the model is loaded and serving",
      m && !draining ? 1 : 0);
  EngineStats s;
  if (m && m->generationEngine())
    s = m->generationEngine()->stats();
  add("tfc_requests_running", "gauge", "requests holding a row", s.running);
  add("tfc_requests_waiting", "gauge", "requests waiting for a row", s.waiting);
  add("tfc_requests_started_total", "counter", "requests that got a row",
      double(s.requests));
  add("tfc_prompt_tokens_total", "counter", "prompt tokens prefilled",
      double(s.promptTokens));
  add("tfc_generation_tokens_total", "counter", "tokens generated",
      double(s.generatedTokens));
  add("tfc_prompt_tokens_reused_total", "counter",
      "prompt tokens whose keys and values a free slot held (prefix reuse)",
      double(s.reusedTokens));
  add("tfc_kv_cache_tokens", "gauge",
      "positions the running requests hold in the KV caches", s.cachedTokens);
  add("tfc_kv_cache_capacity_tokens", "gauge",
      "positions the KV caches hold (rows x context)", s.cacheCapacity);
  add("tfc_kv_cache_usage_ratio", "gauge", "KV cache positions in use",
      s.cacheCapacity ? double(s.cachedTokens) / double(s.cacheCapacity) : 0);
  std::lock_guard<std::mutex> lock(metrics->mutex);
  Clock::time_point now = Clock::now();
  double since =
      std::chrono::duration<double>(now - metrics->lastScrape).count();
  if (since > 0) {
    add("tfc_prompt_tokens_per_second", "gauge",
        "prompt tokens prefilled per second since the previous scrape",
        double(s.promptTokens - std::min(s.promptTokens, metrics->lastPrompt)) /
            since);
    add("tfc_generation_tokens_per_second", "gauge",
        "tokens generated per second since the previous scrape",
        double(s.generatedTokens -
               std::min(s.generatedTokens, metrics->lastGenerated)) /
            since);
  }
  metrics->lastScrape = now;
  metrics->lastPrompt = s.promptTokens;
  metrics->lastGenerated = s.generatedTokens;
  add("tfc_requests_disconnected_total", "counter",
      "requests whose client left before the end", double(metrics->cancelled));
  add("tfc_requests_timed_out_total", "counter", "requests past --timeout",
      double(metrics->timedOut));
  out += "# HELP tfc_time_to_first_token_seconds from a request's arrival to "
         "its first token\n# TYPE tfc_time_to_first_token_seconds "
         "histogram\n";
  uint64_t cumulative = 0;
  for (size_t b = 0; b <= std::size(Metrics::kBuckets); ++b) {
    cumulative += metrics->ttftCounts[b];
    if (b < std::size(Metrics::kBuckets))
      std::snprintf(line, sizeof line,
                    "tfc_time_to_first_token_seconds_bucket{le=\"%g\"} "
                    "%" PRIu64 "\n",
                    Metrics::kBuckets[b], cumulative);
    else
      std::snprintf(line, sizeof line,
                    "tfc_time_to_first_token_seconds_bucket{le=\"+Inf\"} "
                    "%" PRIu64 "\n",
                    cumulative);
    out += line;
  }
  std::snprintf(line, sizeof line,
                "tfc_time_to_first_token_seconds_sum %.17g\n"
                "tfc_time_to_first_token_seconds_count %" PRIu64 "\n",
                metrics->ttftSum, metrics->ttftCount);
  out += line;
  out += "# HELP tfc_http_responses_total answers by route and status\n"
         "# TYPE tfc_http_responses_total counter\n";
  for (const auto &[key, n] : metrics->responses) {
    std::snprintf(line, sizeof line,
                  "tfc_http_responses_total{route=\"%s\",status=\"%d\"} "
                  "%" PRIu64 "\n",
                  key.first.c_str(), key.second, n);
    out += line;
  }
  return out;
}
