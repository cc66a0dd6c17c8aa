//===- Server.h - tfc-serve's HTTP routes -----------------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// OpenAI's routes on cpp-httplib over a ServedModel: chat and text
// completions (whole or streamed as server-sent events), embeddings, the
// model list, health and Prometheus metrics. Each request's tokens come from
// the engine's thread through a Reply (Reply.h); the HTTP thread turns them
// into text, cuts it at stop strings and writes it. The server listens
// before the model is loaded (/health answers 503 until setModel), and
// drain() refuses new work while what runs finishes.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TOOLS_SERVE_SERVER_H
#define TFC_TOOLS_SERVE_SERVER_H

#include "ServedModel.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace httplib {
class Server;
struct Request;
struct Response;
} // namespace httplib

namespace tfc::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;
  /// Bearer key the /v1 routes require (empty: none).
  std::string apiKey;
  /// The largest request body, in bytes.
  size_t maxBody = size_t(8) << 20;
  /// A request's time limit from its arrival (0: none).
  std::chrono::seconds timeout{600};
  /// HTTP worker threads: connections served at once.
  size_t httpThreads = 32;
  bool quiet = false;
};

class Server {
public:
  explicit Server(ServerOptions options);
  ~Server();

  /// Binds the port (0: any free one). False with `error`.
  bool bind(std::string &error);
  int port() const { return boundPort; }
  /// Serves until stop() (blocks).
  void run();
  /// Whether run() is accepting connections (stop() before that would
  /// not stop it).
  bool running() const;
  /// The model is ready: the routes answer.
  void setModel(ServedModel *m);
  /// New completions and embeddings are refused (503) from now on.
  void drain() { draining = true; }
  /// Waits until no request is being answered (true), at most `limit`.
  bool waitIdle(std::chrono::milliseconds limit);
  /// Stops listening and ends every connection; answers still being
  /// written are cut (waitIdle first).
  void stop();

private:
  /// Counts an answer in flight for as long as it lives.
  struct Busy {
    explicit Busy(std::atomic<int> &n) : n(n) { ++n; }
    ~Busy() { --n; }
    Busy(const Busy &) = delete;
    std::atomic<int> &n;
  };
  struct Metrics;
  void routes();
  bool authorised(const httplib::Request &req, httplib::Response &res);
  /// The model for a /v1 request, or null with the answer written: 401
  /// without the API key, 503 while loading (or, `forWork`, draining).
  ServedModel *admit(const httplib::Request &req, httplib::Response &res,
                     bool forWork);
  void completion(const httplib::Request &req, httplib::Response &res,
                  RequestKind kind);
  void embeddings(const httplib::Request &req, httplib::Response &res);
  std::string metricsText();
  void fail(httplib::Response &res, const ApiError &e);

  ServerOptions opts;
  std::unique_ptr<httplib::Server> http;
  int boundPort = 0;
  std::atomic<ServedModel *> model{nullptr};
  std::atomic<bool> draining{false};
  std::atomic<int> inFlight{0};
  int64_t created = 0;
  std::unique_ptr<Metrics> metrics;
};

} // namespace tfc::serve

#endif // TFC_TOOLS_SERVE_SERVER_H
