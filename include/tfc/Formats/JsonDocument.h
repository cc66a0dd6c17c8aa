//===- JsonDocument.h - JSON files read with nlohmann-json ------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The readers of JSON configuration files (tokenizer.json, config.json,
// modules.json, tokenizer_config.json, chat contexts, tuning records) parse
// them with nlohmann-json through this one function, so that every malformed
// file is reported the same way. (The binary formats' headers use the strict
// DOM of Json.h, built by the same parser.) Header-only.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FORMATS_JSONDOCUMENT_H
#define TFC_FORMATS_JSONDOCUMENT_H

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace tfc::rt {

/// Parses `text` into an nlohmann-json document (json or ordered_json). On
/// failure sets `error` to "WHAT: invalid JSON: parse error at line L,
/// column C: <why>" (nlohmann's message without its exception prefix).
template <class Document>
bool parseJsonDocument(std::string_view text, const std::string &what,
                       Document &out, std::string &error) {
  try {
    out = Document::parse(text.begin(), text.end());
    return true;
  } catch (const typename Document::exception &e) {
    // parse_error, and out_of_range for a number past a double's range.
    std::string message = e.what();
    size_t at = message.find("] ");
    error = what + ": invalid JSON: " +
            (at == std::string::npos ? message : message.substr(at + 2));
    return false;
  }
}

} // namespace tfc::rt

#endif // TFC_FORMATS_JSONDOCUMENT_H
