//===- TextStream.cpp - A reply's text, streamed with stop strings --------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// See TextStream.h.
//
//===----------------------------------------------------------------------===//

#include "tfc/Generation/TextStream.h"

#include <algorithm>

using namespace tfc::gen;

size_t tfc::gen::heldBack(std::string_view text, std::string_view stop) {
  if (stop.empty())
    return 0;
  for (size_t k = std::min(stop.size() - 1, text.size()); k > 0; --k)
    if (text.compare(text.size() - k, k, stop.substr(0, k)) == 0)
      return k;
  return 0;
}

std::string TextStream::invalid() const {
  for (size_t i = 0; i < stops.size(); ++i)
    if (stops[i].empty())
      return "stop string " + std::to_string(i) + " is empty";
  return "";
}

bool TextStream::cutAtStop() {
  size_t at = std::string::npos;
  for (const std::string &stop : stops)
    if (!stop.empty())
      at = std::min(at, text.find(stop));
  if (at == std::string::npos)
    return false;
  text.resize(at);
  isStopped = true;
  return true;
}

void TextStream::release(bool final, std::string &out) {
  size_t hold = 0;
  if (!final)
    for (const std::string &stop : stops)
      hold = std::max(hold, heldBack(text, stop));
  if (text.size() - hold > sent) {
    out.append(text, sent, text.size() - hold - sent);
    sent = text.size() - hold;
  }
}

bool TextStream::append(std::string_view piece, std::string &out) {
  if (isStopped)
    return true;
  text.append(piece);
  bool stop = cutAtStop();
  release(/*final=*/stop, out);
  return stop;
}

bool TextStream::finish(std::string_view last, std::string &out) {
  if (!isStopped) {
    text.append(last);
    cutAtStop();
  }
  release(/*final=*/true, out);
  return isStopped;
}
