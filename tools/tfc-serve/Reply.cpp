//===- Reply.cpp - One request's reply, from the engine to HTTP -----------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// See Reply.h.
//
//===----------------------------------------------------------------------===//

#include "Reply.h"

using namespace tfc::serve;

std::shared_ptr<Reply> Reply::submit(Engine &engine, Request request,
                                     const rt::Tokenizer &tokenizer,
                                     std::vector<std::string> stops,
                                     ApiError &error) {
  std::shared_ptr<Reply> reply(new Reply(engine, tokenizer, std::move(stops)));
  if (std::string bad = reply->text.invalid(); !bad.empty()) {
    error = ApiError::badRequest(bad, "stop");
    return nullptr;
  }
  // The engine's callbacks hold the reply: it outlives a client that left.
  request.onToken = [reply](int64_t token) {
    std::lock_guard<std::mutex> lock(reply->mutex);
    if (reply->abandoned)
      return false;
    if (reply->tokens.empty() && reply->first == Clock::time_point())
      reply->first = Clock::now();
    reply->tokens.push_back(token);
    reply->changed.notify_all();
    return true;
  };
  request.onFinish = [reply](Finish why, const std::string &message) {
    std::lock_guard<std::mutex> lock(reply->mutex);
    reply->finished = true;
    reply->why = why;
    reply->message = message;
    reply->changed.notify_all();
  };
  std::string message;
  switch (engine.submit(std::move(request), &reply->id, message)) {
  case Engine::Submitted::Ok:
    return reply;
  case Engine::Submitted::Invalid:
    error = ApiError::badRequest(message);
    break;
  case Engine::Submitted::QueueFull:
    error = ApiError{429, "the server is busy: " + message + "; retry later",
                     "", "rate_limit_exceeded"};
    break;
  case Engine::Submitted::Stopped:
    error = ApiError{503, "the server is shutting down", "", "server_error"};
    break;
  }
  return nullptr;
}

Reply::Clock::time_point Reply::firstToken() const {
  std::lock_guard<std::mutex> lock(mutex);
  return first;
}

void Reply::abandon() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (finished || abandoned)
      return;
    abandoned = true;
  }
  engine.cancel(id);
}

bool Reply::decode(int64_t token, std::string &out) {
  std::string piece, message;
  if (!decoder.feed(token, piece, message)) {
    // An id the tokenizer does not know: the model's vocabulary is wider
    // than the tokenizer's (padding rows); it has no text.
    return false;
  }
  return text.append(piece, out);
}

Reply::Step Reply::next(std::string &out, Clock::time_point until) {
  if (done)
    return Step::Done;
  std::vector<int64_t> fresh;
  bool ended;
  Finish endedWhy;
  std::string endedMessage;
  {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait_until(lock, until,
                       [&] { return !tokens.empty() || finished; });
    fresh.swap(tokens);
    ended = finished;
    endedWhy = why;
    endedMessage = message;
  }
  if (fresh.empty() && !ended)
    return Step::Waiting;
  for (int64_t token : fresh) {
    ++taken;
    if (decode(token, out)) {
      // A stop string: the reply ends here; the engine frees the row.
      reason = "stop";
      done = true;
      abandon();
      return Step::Done;
    }
  }
  if (!ended)
    return Step::Text;
  done = true;
  std::string last, ignored;
  decoder.finish(last, ignored);
  bool stopped = text.finish(last, out);
  switch (endedWhy) {
  case Finish::EndOfSequence:
    reason = "stop";
    break;
  case Finish::Length:
  case Finish::Context:
    reason = stopped ? "stop" : "length";
    break;
  case Finish::Cancelled:
    error = ApiError{503,
                     "the request was cancelled: the server is shutting "
                     "down",
                     "", "server_error"};
    break;
  case Finish::Error:
    error =
        ApiError{500, "the model failed: " + endedMessage, "", "server_error"};
    break;
  }
  return Step::Done;
}
