//===- SafeTensors.cpp - Reading .safetensors weight files ----------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// A small JSON reader for the header (objects, arrays, strings, integers;
// bounded nesting), then the checks of the format: known dtypes, sizes that
// match shapes without overflow, offsets inside the data section, no two
// tensors overlapping, no duplicate names.
//
//===----------------------------------------------------------------------===//

#include "tfc/Runtime/SafeTensors.h"

#include <algorithm>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace tfc::rt;

const char *tfc::rt::dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F64: return "F64";
  case DType::F32: return "F32";
  case DType::F16: return "F16";
  case DType::BF16: return "BF16";
  case DType::I64: return "I64";
  case DType::I32: return "I32";
  case DType::I16: return "I16";
  case DType::I8: return "I8";
  case DType::U8: return "U8";
  case DType::Bool: return "BOOL";
  }
  return "?";
}

size_t tfc::rt::dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F64: case DType::I64: return 8;
  case DType::F32: case DType::I32: return 4;
  case DType::F16: case DType::BF16: case DType::I16: return 2;
  case DType::I8: case DType::U8: case DType::Bool: return 1;
  }
  return 0;
}

static bool parseDType(std::string_view s, DType &out) {
  static const DType all[] = {DType::F64, DType::F32, DType::F16, DType::BF16,
                              DType::I64, DType::I32, DType::I16, DType::I8,
                              DType::U8,  DType::Bool};
  for (DType d : all)
    if (s == dtypeName(d)) {
      out = d;
      return true;
    }
  return false;
}

uint64_t TensorView::numElements() const {
  uint64_t n = 1;
  for (int64_t d : shape)
    n *= static_cast<uint64_t>(d);
  return n;
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

namespace {

struct Json {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool boolean = false;
  /// Integers only are needed; `isInteger` is false for fractions, exponents
  /// and values outside [0, 2^63).
  bool isInteger = false;
  uint64_t integer = 0;
  std::string string;
  std::vector<Json> items;
  std::vector<std::pair<std::string, Json>> members;
};

class JsonReader {
public:
  JsonReader(std::string_view text) : text(text) {}

  bool read(Json &out, std::string &error) {
    if (!value(out, 0)) {
      error = "invalid JSON header at byte " + std::to_string(pos) + ": " +
              why;
      return false;
    }
    skipSpace();
    if (pos != text.size()) {
      error = "invalid JSON header at byte " + std::to_string(pos) +
              ": unexpected text after the top-level object";
      return false;
    }
    return true;
  }

private:
  static constexpr int kMaxDepth = 64;

  bool fail(const char *message) {
    why = message;
    return false;
  }
  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }
  bool literal(const char *word) {
    size_t n = std::strlen(word);
    if (text.substr(pos, n) != word)
      return fail("unknown literal");
    pos += n;
    return true;
  }

  bool value(Json &out, int depth) {
    if (depth > kMaxDepth)
      return fail("nested too deeply");
    skipSpace();
    if (pos >= text.size())
      return fail("unexpected end");
    char c = text[pos];
    if (c == '{')
      return object(out, depth);
    if (c == '[')
      return array(out, depth);
    if (c == '"') {
      out.kind = Json::String;
      return string(out.string);
    }
    if (c == 't' || c == 'f') {
      out.kind = Json::Bool;
      out.boolean = c == 't';
      return literal(c == 't' ? "true" : "false");
    }
    if (c == 'n') {
      out.kind = Json::Null;
      return literal("null");
    }
    if (c == '-' || (c >= '0' && c <= '9'))
      return number(out);
    return fail("expected a value");
  }

  bool number(Json &out) {
    out.kind = Json::Number;
    size_t start = pos;
    bool negative = text[pos] == '-', fractional = false, overflow = false;
    if (negative)
      ++pos;
    if (pos >= text.size() || !(text[pos] >= '0' && text[pos] <= '9'))
      return fail("expected digits");
    uint64_t v = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      uint64_t d = static_cast<uint64_t>(text[pos++] - '0');
      if (v > (UINT64_C(1) << 62) / 5) // v * 10 + d could pass 2^63
        overflow = true;
      v = v * 10 + d;
    }
    while (pos < text.size() &&
           (text[pos] == '.' || text[pos] == 'e' || text[pos] == 'E' ||
            text[pos] == '+' || text[pos] == '-' ||
            (text[pos] >= '0' && text[pos] <= '9'))) {
      fractional = true;
      ++pos;
    }
    out.isInteger = !negative && !fractional && !overflow &&
                    v < (UINT64_C(1) << 63);
    out.integer = v;
    (void)start;
    return true;
  }

  bool string(std::string &out) {
    ++pos; // "
    while (true) {
      if (pos >= text.size())
        return fail("unterminated string");
      char c = text[pos++];
      if (c == '"')
        return true;
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("control character in a string");
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos >= text.size())
        return fail("unterminated escape");
      char e = text[pos++];
      switch (e) {
      case '"': case '\\': case '/': out.push_back(e); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'u': {
        uint32_t cp;
        if (!hex4(cp))
          return false;
        if (cp >= 0xD800 && cp < 0xDC00) { // a surrogate pair
          uint32_t low;
          if (text.substr(pos, 2) != "\\u" || (pos += 2, !hex4(low)) ||
              low < 0xDC00 || low >= 0xE000)
            return fail("invalid surrogate pair");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        } else if (cp >= 0xDC00 && cp < 0xE000) {
          return fail("invalid surrogate pair");
        }
        appendUtf8(out, cp);
        break;
      }
      default:
        return fail("invalid escape");
      }
    }
  }

  bool hex4(uint32_t &cp) {
    if (pos + 4 > text.size())
      return fail("truncated \\u escape");
    cp = 0;
    for (int i = 0; i < 4; ++i) {
      char h = text[pos++];
      cp <<= 4;
      if (h >= '0' && h <= '9') cp |= h - '0';
      else if (h >= 'a' && h <= 'f') cp |= h - 'a' + 10;
      else if (h >= 'A' && h <= 'F') cp |= h - 'A' + 10;
      else return fail("invalid \\u escape");
    }
    return true;
  }

  static void appendUtf8(std::string &out, uint32_t cp) {
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  bool array(Json &out, int depth) {
    out.kind = Json::Array;
    ++pos; // [
    skipSpace();
    if (pos < text.size() && text[pos] == ']') {
      ++pos;
      return true;
    }
    while (true) {
      out.items.emplace_back();
      if (!value(out.items.back(), depth + 1))
        return false;
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == ']') {
        ++pos;
        return true;
      }
      return fail("expected ',' or ']'");
    }
  }

  bool object(Json &out, int depth) {
    out.kind = Json::Object;
    ++pos; // {
    skipSpace();
    if (pos < text.size() && text[pos] == '}') {
      ++pos;
      return true;
    }
    while (true) {
      skipSpace();
      if (pos >= text.size() || text[pos] != '"')
        return fail("expected a member name");
      std::string key;
      if (!string(key))
        return false;
      skipSpace();
      if (pos >= text.size() || text[pos] != ':')
        return fail("expected ':'");
      ++pos;
      out.members.emplace_back(std::move(key), Json());
      if (!value(out.members.back().second, depth + 1))
        return false;
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == '}') {
        ++pos;
        return true;
      }
      return fail("expected ',' or '}'");
    }
  }

  std::string_view text;
  size_t pos = 0;
  std::string why;
};

} // namespace

//===----------------------------------------------------------------------===//
// SafeTensorsFile
//===----------------------------------------------------------------------===//

SafeTensorsFile::~SafeTensorsFile() {
  if (mapped && base)
    munmap(const_cast<uint8_t *>(base), size);
}

std::unique_ptr<SafeTensorsFile>
SafeTensorsFile::open(const std::string &path, std::string &error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = path + ": cannot open: " + std::strerror(errno);
    return nullptr;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    error = path + ": not a regular file";
    ::close(fd);
    return nullptr;
  }
  std::unique_ptr<SafeTensorsFile> file(new SafeTensorsFile());
  file->size = static_cast<size_t>(st.st_size);
  if (file->size > 0) {
    void *p = mmap(nullptr, file->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      error = path + ": cannot map: " + std::strerror(errno);
      ::close(fd);
      return nullptr;
    }
    file->base = static_cast<const uint8_t *>(p);
    file->mapped = true;
  }
  ::close(fd);
  if (!file->parse(path, error))
    return nullptr;
  return file;
}

std::unique_ptr<SafeTensorsFile>
SafeTensorsFile::fromBytes(std::string_view bytes, std::string &error) {
  std::unique_ptr<SafeTensorsFile> file(new SafeTensorsFile());
  file->owned.assign(bytes.begin(), bytes.end());
  file->base = file->owned.data();
  file->size = file->owned.size();
  if (!file->parse("<memory>", error))
    return nullptr;
  return file;
}

const TensorView *SafeTensorsFile::find(std::string_view name) const {
  auto it = std::lower_bound(
      views.begin(), views.end(), name,
      [](const TensorView &v, std::string_view n) { return v.name < n; });
  return it != views.end() && it->name == name ? &*it : nullptr;
}

bool SafeTensorsFile::parse(const std::string &what, std::string &error) {
  auto fail = [&](const std::string &message) {
    error = what + ": " + message;
    return false;
  };
  if (size < 8)
    return fail("truncated: " + std::to_string(size) +
                " bytes, shorter than the 8-byte header length");
  uint64_t headerBytes = 0;
  for (int i = 7; i >= 0; --i)
    headerBytes = (headerBytes << 8) | base[i];
  if (headerBytes > kMaxHeaderBytes)
    return fail("header of " + std::to_string(headerBytes) +
                " bytes is larger than the limit of " +
                std::to_string(kMaxHeaderBytes));
  if (headerBytes > size - 8)
    return fail("truncated: the header needs " + std::to_string(headerBytes) +
                " bytes but only " + std::to_string(size - 8) + " follow");

  std::string_view headerText(reinterpret_cast<const char *>(base + 8),
                              headerBytes);
  Json header;
  if (!JsonReader(headerText).read(header, error))
    return fail(error);
  if (header.kind != Json::Object)
    return fail("the header is not a JSON object");

  const uint8_t *data = base + 8 + headerBytes;
  uint64_t dataBytes = size - 8 - headerBytes;
  for (auto &member : header.members) {
    const std::string &name = member.first;
    const Json &entry = member.second;
    if (name == "__metadata__") {
      if (entry.kind != Json::Object)
        return fail("__metadata__ is not an object");
      for (auto &[key, value] : entry.members) {
        if (value.kind != Json::String)
          return fail("__metadata__ value of '" + key + "' is not a string");
        meta[key] = value.string;
      }
      continue;
    }
    auto bad = [&](const std::string &m) {
      return fail("tensor '" + name + "': " + m);
    };
    if (entry.kind != Json::Object)
      return bad("entry is not an object");
    const Json *dtype = nullptr, *shape = nullptr, *offsets = nullptr;
    for (auto &[key, value] : entry.members) {
      if (key == "dtype")
        dtype = &value;
      else if (key == "shape")
        shape = &value;
      else if (key == "data_offsets")
        offsets = &value;
      else
        return bad("unknown field '" + key + "'");
    }
    if (!dtype || !shape || !offsets)
      return bad("needs dtype, shape and data_offsets");
    TensorView view;
    view.name = name;
    if (dtype->kind != Json::String || !parseDType(dtype->string, view.dtype))
      return bad("unknown dtype" +
                 (dtype->kind == Json::String ? " '" + dtype->string + "'"
                                              : std::string()));
    if (shape->kind != Json::Array)
      return bad("shape is not an array");
    // Element count with overflow checks (it must fit the data anyway).
    uint64_t elements = 1;
    for (const Json &d : shape->items) {
      if (d.kind != Json::Number || !d.isInteger)
        return bad("shape entries must be non-negative integers");
      if (d.integer != 0 && elements > UINT64_MAX / d.integer)
        return bad("shape is too large");
      elements *= d.integer;
      view.shape.push_back(static_cast<int64_t>(d.integer));
    }
    if (offsets->kind != Json::Array || offsets->items.size() != 2 ||
        offsets->items[0].kind != Json::Number ||
        offsets->items[1].kind != Json::Number ||
        !offsets->items[0].isInteger || !offsets->items[1].isInteger)
      return bad("data_offsets must be [begin, end] with integers");
    view.begin = offsets->items[0].integer;
    view.end = offsets->items[1].integer;
    if (view.begin > view.end)
      return bad("data_offsets [" + std::to_string(view.begin) + ", " +
                 std::to_string(view.end) + "] end before they begin");
    if (view.end > dataBytes)
      return bad("data_offsets end at " + std::to_string(view.end) +
                 " but the data section has " + std::to_string(dataBytes) +
                 " bytes (truncated file?)");
    size_t elementSize = dtypeSize(view.dtype);
    if (elements > UINT64_MAX / elementSize ||
        elements * elementSize != view.end - view.begin)
      return bad("holds " + std::to_string(view.end - view.begin) +
                 " bytes but " + dtypeName(view.dtype) + " of " +
                 std::to_string(elements) + " elements needs " +
                 (elements > UINT64_MAX / elementSize
                      ? std::string("more")
                      : std::to_string(elements * elementSize)));
    view.data = data + view.begin;
    views.push_back(std::move(view));
  }

  std::sort(views.begin(), views.end(),
            [](const TensorView &a, const TensorView &b) {
              return a.name < b.name;
            });
  for (size_t i = 1; i < views.size(); ++i)
    if (views[i].name == views[i - 1].name)
      return fail("tensor '" + views[i].name + "' appears twice");

  // No two tensors may share bytes.
  std::vector<const TensorView *> byOffset;
  for (const TensorView &v : views)
    if (v.end > v.begin)
      byOffset.push_back(&v);
  std::sort(byOffset.begin(), byOffset.end(),
            [](const TensorView *a, const TensorView *b) {
              return a->begin < b->begin;
            });
  for (size_t i = 1; i < byOffset.size(); ++i)
    if (byOffset[i]->begin < byOffset[i - 1]->end)
      return fail("tensors '" + byOffset[i - 1]->name + "' [" +
                  std::to_string(byOffset[i - 1]->begin) + ", " +
                  std::to_string(byOffset[i - 1]->end) + ") and '" +
                  byOffset[i]->name + "' [" +
                  std::to_string(byOffset[i]->begin) + ", " +
                  std::to_string(byOffset[i]->end) + ") overlap");
  return true;
}
