//===- JsonDocument.h - JSON files read with nlohmann-json ------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The readers of JSON configuration files (tokenizer.json, config.json,
// modules.json, tokenizer_config.json, chat contexts, tuning records) parse
// them with nlohmann-json through this one function, so that every malformed
// file is reported the same way. (The binary formats' headers use the strict
// DOM of Json.h, built by the same parser.) Their messages name a value
// found where another was expected with jsonKindName. Header-only.
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

/// What a JSON value is, in the words every reader's messages use ("found
/// an integer"): "null", "a boolean", "an integer", "a number", "a string",
/// "an array" or "an object".
template <class Document> const char *jsonKindName(const Document &v) {
  switch (v.type()) {
  case Document::value_t::null:
    return "null";
  case Document::value_t::boolean:
    return "a boolean";
  case Document::value_t::number_integer:
  case Document::value_t::number_unsigned:
    return "an integer";
  case Document::value_t::number_float:
    return "a number";
  case Document::value_t::string:
    return "a string";
  case Document::value_t::array:
    return "an array";
  case Document::value_t::object:
    return "an object";
  default:
    return "a value";
  }
}

} // namespace tfc::rt

#endif // TFC_FORMATS_JSONDOCUMENT_H
