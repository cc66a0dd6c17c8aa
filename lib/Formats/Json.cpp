//===- Json.cpp - The runtime's small JSON reader -------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The DOM of Json.h built from nlohmann-json's SAX parser (the one JSON
// parser of tfc), with a depth limit; a failure names the byte offset and
// nlohmann's reason.
//
//===----------------------------------------------------------------------===//

#include "tfc/Formats/Json.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <vector>

using namespace tfc::rt;
using namespace tfc::rt::json;

const Value *Value::get(std::string_view key) const {
  for (const auto &member : members)
    if (member.first == key)
      return &member.second;
  return nullptr;
}

const std::string *Value::duplicateKey() const {
  for (size_t i = 0; i < members.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (members[i].first == members[j].first)
        return &members[i].first;
  return nullptr;
}

const char *json::kindName(Value::Kind kind) {
  switch (kind) {
  case Value::Null:
    return "null";
  case Value::Bool:
    return "a boolean";
  case Value::Number:
    return "a number";
  case Value::String:
    return "a string";
  case Value::Array:
    return "an array";
  case Value::Object:
    return "an object";
  }
  return "?";
}

namespace {

/// Builds a Value from nlohmann-json's SAX events: members in the order of
/// the text with duplicates kept (the callers refuse them where they
/// matter), nesting bounded, numbers sorted into non-negative integers and
/// the rest.
class Builder final : public nlohmann::json_sax<nlohmann::json> {
public:
  static constexpr size_t kMaxDepth = 64;

  explicit Builder(Value &root) : root(root) {}

  bool null() override { return put(Value()); }
  bool boolean(bool b) override {
    Value v;
    v.kind = Value::Bool;
    v.boolean = b;
    return put(std::move(v));
  }
  bool number_integer(number_integer_t i) override {
    Value v;
    v.kind = Value::Number;
    v.isInteger = i >= 0;
    v.integer = i >= 0 ? static_cast<uint64_t>(i) : 0;
    return put(std::move(v));
  }
  bool number_unsigned(number_unsigned_t u) override {
    Value v;
    v.kind = Value::Number;
    v.isInteger = u < (uint64_t(1) << 63);
    v.integer = v.isInteger ? u : 0;
    return put(std::move(v));
  }
  bool number_float(number_float_t, const string_t &) override {
    Value v;
    v.kind = Value::Number;
    return put(std::move(v));
  }
  bool string(string_t &text) override {
    Value v;
    v.kind = Value::String;
    v.string = std::move(text);
    return put(std::move(v));
  }
  bool binary(binary_t &) override { return false; }
  bool start_object(std::size_t) override { return open(Value::Object); }
  bool key(string_t &name) override {
    stack.back()->members.emplace_back(std::move(name), Value());
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(Value::Array); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t position, const std::string &,
                   const nlohmann::detail::exception &e) override {
    // "[json.exception.parse_error.101] parse error at line 1, column 2:
    // syntax error ...": the reason after the place, which is given as a
    // byte offset instead.
    std::string message = e.what();
    size_t at = message.find("parse error");
    at = message.find(": ", at == std::string::npos ? 0 : at);
    why = at == std::string::npos ? message : message.substr(at + 2);
    byte = position > 0 ? position - 1 : 0;
    return false;
  }

  std::string why;
  size_t byte = 0;
  bool tooDeep = false;

private:
  /// The slot the next value goes to: the root, the last member of the
  /// object being read, or a new item of the array being read.
  Value *slot() {
    if (stack.empty())
      return &root;
    Value *top = stack.back();
    if (top->kind == Value::Object)
      return &top->members.back().second;
    top->items.emplace_back();
    return &top->items.back();
  }
  bool put(Value v) {
    *slot() = std::move(v);
    return true;
  }
  bool open(Value::Kind kind) {
    if (stack.size() >= kMaxDepth) {
      tooDeep = true;
      return false;
    }
    Value *v = slot();
    v->kind = kind;
    stack.push_back(v);
    return true;
  }
  bool close() {
    stack.pop_back();
    return true;
  }

  Value &root;
  /// The open arrays and objects, innermost last. Pointers stay valid: a
  /// container only grows while it is the innermost one.
  std::vector<Value *> stack;
};

} // namespace

bool json::parse(std::string_view text, Value &out, std::string &error,
                 std::string_view what) {
  out = Value();
  Builder builder(out);
  bool ok = nlohmann::json::sax_parse(text.begin(), text.end(), &builder,
                                      nlohmann::json::input_format_t::json,
                                      /*strict=*/true);
  if (ok)
    return true;
  out = Value();
  if (builder.tooDeep)
    error = "invalid " + std::string(what) + ": nested too deeply (more than " +
            std::to_string(Builder::kMaxDepth) + " levels)";
  else
    error = "invalid " + std::string(what) + " at byte " +
            std::to_string(builder.byte) + ": " + builder.why;
  return false;
}

std::string json::quote(std::string_view s) {
  static const char hex[] = "0123456789abcdef";
  std::string out = "\"";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    default:
      if (u < 0x20) {
        out += "\\u00";
        out.push_back(hex[u >> 4]);
        out.push_back(hex[u & 15]);
      } else {
        out.push_back(c);
      }
    }
  }
  return out + "\"";
}
