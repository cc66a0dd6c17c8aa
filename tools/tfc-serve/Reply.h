//===- Reply.h - One request's reply, from the engine to HTTP ---*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// A request submitted to the engine (llama.cpp's server task): the engine's
// thread hands each generated token over; the HTTP thread that waits for
// the reply takes them, turns them into text (never a partial UTF-8
// character), cuts the text at a stop string and learns why the reply
// ended. Either side may end first: a client that goes away abandons the
// reply (the engine's next step ends the request and frees its row); a stop
// string cancels it the same way.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TOOLS_SERVE_REPLY_H
#define TFC_TOOLS_SERVE_REPLY_H

#include "tfc/Generation/TextStream.h"
#include "tfc/Serving/Engine.h"
#include "tfc/Serving/OpenAI.h"
#include "tfc/Text/Tokenizer/Tokenizer.h"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tfc::serve {

class Reply {
public:
  using Clock = std::chrono::steady_clock;

  /// Submits `request` (its callbacks are the reply's) to `engine`. Null
  /// with `error`: 400 for what the engine finds invalid, 429 when its
  /// queue is full, 503 when it stops.
  static std::shared_ptr<Reply> submit(Engine &engine, Request request,
                                       const rt::Tokenizer &tokenizer,
                                       std::vector<std::string> stops,
                                       ApiError &error);

  enum class Step {
    Text,    ///< `out` has the text decided since the last call (may be "")
    Done,    ///< the reply has ended: `out` has its last text
    Waiting, ///< nothing new before the deadline
  };
  /// The next piece of the reply, waiting until `until` at most.
  Step next(std::string &out, Clock::time_point until);
  /// The client is gone or the request took too long: the engine ends it
  /// at its next step.
  void abandon();

  /// Once Done: "stop" (an end-of-sequence token or a stop string),
  /// "length" (max_tokens or the context), or "" when it failed (`error`).
  const std::string &finishReason() const { return reason; }
  const ApiError &failure() const { return error; }
  int64_t completionTokens() const { return taken; }
  /// When the first token arrived (Clock::time_point() until then).
  Clock::time_point firstToken() const;

private:
  Reply(Engine &engine, const rt::Tokenizer &tokenizer,
        std::vector<std::string> stops)
      : engine(engine), decoder(tokenizer, /*skipSpecialTokens=*/true),
        text(std::move(stops)) {}
  /// Decodes `token` into `out`; true when a stop string ended the text.
  bool decode(int64_t token, std::string &out);

  Engine &engine;
  uint64_t id = 0;
  // Shared with the engine's thread.
  mutable std::mutex mutex;
  std::condition_variable changed;
  std::vector<int64_t> tokens;
  bool finished = false, abandoned = false;
  Finish why = Finish::Error;
  std::string message;
  Clock::time_point first;
  // The HTTP thread's.
  rt::IncrementalDecoder decoder;
  gen::TextStream text;
  int64_t taken = 0;
  bool done = false;
  std::string reason;
  ApiError error;
};

} // namespace tfc::serve

#endif // TFC_TOOLS_SERVE_REPLY_H
