//===- Json.h - The runtime's small JSON reader -----------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The strict JSON reader of the binary formats' headers (safetensors, the
// model metadata, checkpoint indexes): a small DOM that keeps an object's
// members in order with duplicate keys (so that a reader can refuse them),
// with bounded nesting, and numbers kept as non-negative integers when they
// are (the formats only need those); anything else is a number without an
// integer. Text must be UTF-8 (JSON's rule, which nlohmann enforces: a
// Latin-1 byte in a string is an error). Parsed by nlohmann-json (Json.cpp),
// which the other JSON readers (tokenizer.json, config.json, chat templates,
// tuning records) use directly through parseJsonDocument (JsonDocument.h).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FORMATS_JSON_H
#define TFC_FORMATS_JSON_H

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tfc::rt::json {

struct Value {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool boolean = false;
  /// False for fractions, exponents, negative numbers and values of 2^63 or
  /// more.
  bool isInteger = false;
  uint64_t integer = 0;
  std::string string;
  std::vector<Value> items;
  /// In the order of the text; duplicate keys are kept.
  std::vector<std::pair<std::string, Value>> members;

  /// The first member called `key` of an object, or null.
  const Value *get(std::string_view key) const;
  /// A key that appears twice in an object, or null.
  const std::string *duplicateKey() const;
  /// A non-negative integer that fits int64_t.
  bool isIndex() const { return kind == Number && isInteger; }
};

/// The name of a kind for messages: "an object", "a string", ...
const char *kindName(Value::Kind kind);

/// Parses `text` (exactly one value, surrounded by optional white space).
/// On failure sets `error` to "invalid <what> at byte N: <why>".
bool parse(std::string_view text, Value &out, std::string &error,
           std::string_view what = "JSON");

/// `s` as a JSON string literal, with quotes and escapes, as Python's
/// json.dumps(ensure_ascii=False) writes it (chat templates' tojson too).
std::string quote(std::string_view s);

} // namespace tfc::rt::json

#endif // TFC_FORMATS_JSON_H
