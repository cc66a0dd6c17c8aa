//===- SafeTensors.cpp - Reading and writing .safetensors files -----------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The header goes through the runtime's JSON reader (Json.h), then the checks
// of the format: known dtypes, sizes that match shapes without overflow,
// offsets inside the data section, no two tensors overlapping, no duplicate
// names. The writer streams a header and the tensors' bytes to a temporary
// file and renames it into place.
//
//===----------------------------------------------------------------------===//

#include "tfc/Formats/SafeTensors.h"

#include "tfc/Formats/Files.h"
#include "tfc/Formats/Float16.h"
#include "tfc/Formats/Json.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace tfc::rt;

WeightSource::~WeightSource() = default;

std::vector<const TensorView *> SafeTensorsFile::allTensors() const {
  std::vector<const TensorView *> out;
  for (const TensorView &v : views)
    out.push_back(&v);
  return out;
}

static bool parseDType(std::string_view s, DType &out) {
  for (const DTypeTraits &t : kDTypeTable)
    if (t.inSafeTensors && s == t.fileName) {
      out = t.type;
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
// SafeTensorsFile
//===----------------------------------------------------------------------===//

SafeTensorsFile::~SafeTensorsFile() = default;

std::unique_ptr<SafeTensorsFile>
SafeTensorsFile::open(const std::string &path, std::string &error) {
  // Never blocks on a FIFO (Files.h).
  std::unique_ptr<SafeTensorsFile> file(new SafeTensorsFile());
  if (!file->mapping.map(path, error))
    return nullptr;
  file->base = file->mapping.data();
  file->size = file->mapping.size();
  file->path = path;
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
  json::Value header;
  if (!json::parse(headerText, header, error, "JSON header"))
    return fail(error);
  if (header.kind != json::Value::Object)
    return fail("the header is not a JSON object");

  const uint8_t *data = base + 8 + headerBytes;
  uint64_t dataBytes = size - 8 - headerBytes;
  for (auto &member : header.members) {
    const std::string &name = member.first;
    const json::Value &entry = member.second;
    if (name == "__metadata__") {
      if (entry.kind != json::Value::Object)
        return fail("__metadata__ is not an object");
      for (auto &[key, value] : entry.members) {
        if (value.kind != json::Value::String)
          return fail("__metadata__ value of '" + key + "' is not a string");
        meta[key] = value.string;
      }
      continue;
    }
    auto bad = [&](const std::string &m) {
      return fail("tensor '" + name + "': " + m);
    };
    if (entry.kind != json::Value::Object)
      return bad("entry is not an object");
    const json::Value *dtype = nullptr, *shape = nullptr, *offsets = nullptr;
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
    if (dtype->kind != json::Value::String ||
        !parseDType(dtype->string, view.dtype))
      return bad("unknown dtype" + (dtype->kind == json::Value::String
                                        ? " '" + dtype->string + "'"
                                        : std::string()));
    if (shape->kind != json::Value::Array)
      return bad("shape is not an array");
    // Element count with overflow checks (it must fit the data anyway).
    uint64_t elements = 1;
    for (const json::Value &d : shape->items) {
      if (d.kind != json::Value::Number || !d.isInteger)
        return bad("shape entries must be non-negative integers");
      if (d.integer != 0 && elements > UINT64_MAX / d.integer)
        return bad("shape is too large");
      elements *= d.integer;
      view.shape.push_back(static_cast<int64_t>(d.integer));
    }
    if (offsets->kind != json::Value::Array || offsets->items.size() != 2 ||
        offsets->items[0].kind != json::Value::Number ||
        offsets->items[1].kind != json::Value::Number ||
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

//===----------------------------------------------------------------------===//
// Writer
//===----------------------------------------------------------------------===//

namespace {

/// A tensor placed in the data section.
struct Placed {
  const TensorToWrite *tensor;
  uint64_t begin, bytes;
};

} // namespace

/// Orders and places `tensors` and returns the padded header (with its 8-byte
/// length prefix), or fails.
static bool layOut(const std::vector<TensorToWrite> &tensors,
                   const std::map<std::string, std::string> &metadata,
                   std::string &prefix, std::vector<Placed> &placed,
                   std::string &error) {
  std::vector<const TensorToWrite *> order;
  for (const TensorToWrite &t : tensors)
    order.push_back(&t);
  // Tensors whose size is a multiple of 64 bytes first: the data section
  // starts at a multiple of 64, so they all stay 64-byte aligned and the
  // runtime can use them in place (the format allows no padding between
  // tensors). Then larger elements first, then names.
  auto bytesOf = [](const TensorToWrite *t) {
    uint64_t n = dtypeSize(t->dtype);
    for (int64_t d : t->shape)
      n *= static_cast<uint64_t>(d < 0 ? 0 : d);
    return n;
  };
  std::sort(order.begin(), order.end(),
            [&](const TensorToWrite *a, const TensorToWrite *b) {
              bool oddA = bytesOf(a) % 64 != 0, oddB = bytesOf(b) % 64 != 0;
              if (oddA != oddB)
                return oddB;
              size_t sa = dtypeSize(a->dtype), sb = dtypeSize(b->dtype);
              return sa != sb ? sa > sb : a->name < b->name;
            });
  std::string header = "{";
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    bool first = true;
    for (const auto &[key, value] : metadata) {
      header +=
          (first ? "" : ",") + json::quote(key) + ":" + json::quote(value);
      first = false;
    }
    header += "}";
  }
  uint64_t offset = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    const TensorToWrite &t = *order[i];
    if (t.name.empty() || t.name == "__metadata__")
      return error = "cannot write a tensor named '" + t.name + "'", false;
    if (i > 0 && order[i - 1]->name == t.name)
      return error = "tensor '" + t.name + "' is given twice", false;
    uint64_t elements = 1;
    for (int64_t d : t.shape) {
      if (d < 0)
        return error = "tensor '" + t.name + "' has a negative dim", false;
      if (d != 0 && elements > UINT64_MAX / 16 / static_cast<uint64_t>(d))
        return error = "tensor '" + t.name + "' is too large", false;
      elements *= static_cast<uint64_t>(d);
    }
    uint64_t bytes = elements * dtypeSize(t.dtype);
    if (bytes > 0 && !t.data)
      return error = "tensor '" + t.name + "' has no data", false;
    if (offset > UINT64_MAX - bytes)
      return error = "the tensors are too large", false;
    header += (header.size() > 1 ? "," : "") + json::quote(t.name) +
              ":{\"dtype\":\"" + dtypeName(t.dtype) + "\",\"shape\":[";
    for (size_t k = 0; k < t.shape.size(); ++k)
      header += (k ? "," : "") + std::to_string(t.shape[k]);
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," +
              std::to_string(offset + bytes) + "]}";
    placed.push_back({&t, offset, bytes});
    offset += bytes;
  }
  header += "}";
  // JSON allows trailing white space: pad so that the data starts at a
  // multiple of 64 bytes.
  header.append((64 - (8 + header.size()) % 64) % 64, ' ');
  if (header.size() > SafeTensorsFile::kMaxHeaderBytes)
    return error = "the header would exceed the format's limit", false;
  prefix.assign(8, '\0');
  for (int i = 0; i < 8; ++i)
    prefix[i] = static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  prefix += header;
  return true;
}

bool tfc::rt::encodeSafeTensors(
    const std::vector<TensorToWrite> &tensors,
    const std::map<std::string, std::string> &metadata, std::string &image,
    std::string &error) {
  std::vector<Placed> placed;
  if (!layOut(tensors, metadata, image, placed, error))
    return false;
  for (const Placed &p : placed)
    image.append(static_cast<const char *>(p.tensor->data), p.bytes);
  return true;
}

bool tfc::rt::writeSafeTensors(
    const std::string &path, const std::vector<TensorToWrite> &tensors,
    const std::map<std::string, std::string> &metadata, std::string &error) {
  std::string prefix;
  std::vector<Placed> placed;
  if (!layOut(tensors, metadata, prefix, placed, error)) {
    error = path + ": " + error;
    return false;
  }
  return writeFileWhole(
      path,
      [&](int fd) {
        bool ok = writeAll(fd, prefix.data(), prefix.size());
        for (size_t i = 0; ok && i < placed.size(); ++i)
          ok = writeAll(fd, placed[i].tensor->data, placed[i].bytes);
        return ok;
      },
      error);
}
