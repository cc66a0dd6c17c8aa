//===- TextStream.h - A reply's text, streamed with stop strings -*- C++
//-*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The text of one reply as it is generated: decoded pieces go in (from an
// rt::IncrementalDecoder, so never a partial UTF-8 character), the text that
// is decided comes out. Text that may be the beginning of a stop string is
// held back until it is not; a stop string ends the reply before it
// (llama.cpp's and transformers' behaviour). tfc-generate's streamed output
// and each request of tfc-serve go through one.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_GENERATION_TEXTSTREAM_H
#define TFC_GENERATION_TEXTSTREAM_H

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tfc::gen {

/// The length of the longest end of `text` that is a proper prefix of
/// `stop`: text that may still become the stop string.
size_t heldBack(std::string_view text, std::string_view stop);

class TextStream {
public:
  /// `stops` must not hold an empty string (invalid() names one that is).
  explicit TextStream(std::vector<std::string> stops = {})
      : stops(std::move(stops)) {}

  /// An empty stop string, or "".
  std::string invalid() const;

  /// Starts a new reply (the stop strings stay).
  void restart() {
    text.clear();
    sent = 0;
    isStopped = false;
  }
  /// Appends decoded text. `out` gets (appended) the text now decided.
  /// Returns true when a stop string has appeared: the reply ends before
  /// it, `out` has the rest of the reply, and later text is ignored.
  bool append(std::string_view piece, std::string &out);
  /// The end of the reply: `last` (what the decoder held back) is appended
  /// and everything held back is released into `out`. Returns whether the
  /// reply ended at a stop string.
  bool finish(std::string_view last, std::string &out);

  /// The reply so far, cut at a stop string.
  const std::string &reply() const { return text; }
  bool stopped() const { return isStopped; }

private:
  bool cutAtStop();
  void release(bool final, std::string &out);

  std::vector<std::string> stops;
  std::string text;
  size_t sent = 0;
  bool isStopped = false;
};

} // namespace tfc::gen

#endif // TFC_GENERATION_TEXTSTREAM_H
