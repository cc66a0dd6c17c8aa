//===- Gguf.cpp - Reading GGUF model files ---------------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// A cursor walks the mapped bytes; every read checks the bytes that remain,
// so a count or length from the file can never make the reader step outside
// it, and nothing is allocated from a count before the bytes it describes
// have been seen to exist (an array of N elements needs at least N bytes of
// file; its strings are skipped, not copied). Tensor infos are checked
// against the data section once it is known: type, dims (overflow), size,
// alignment, bounds, overlaps and duplicate names.
//
//===----------------------------------------------------------------------===//

#include "tfc/Formats/Gguf.h"

#include "tfc/Formats/Files.h"
#include "tfc/Formats/Float16.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace tfc::rt;

const char *tfc::rt::ggufTypeName(GgufType type) {
  switch (type) {
  case GgufType::U8: return "uint8";
  case GgufType::I8: return "int8";
  case GgufType::U16: return "uint16";
  case GgufType::I16: return "int16";
  case GgufType::U32: return "uint32";
  case GgufType::I32: return "int32";
  case GgufType::F32: return "float32";
  case GgufType::Bool: return "bool";
  case GgufType::String: return "string";
  case GgufType::Array: return "array";
  case GgufType::U64: return "uint64";
  case GgufType::I64: return "int64";
  case GgufType::F64: return "float64";
  }
  return "?";
}

bool GgufValue::isInteger() const {
  switch (type) {
  case GgufType::U8: case GgufType::I8: case GgufType::U16: case GgufType::I16:
  case GgufType::U32: case GgufType::I32: case GgufType::U64: case GgufType::I64:
    return true;
  default:
    return false;
  }
}

namespace {

/// Size in bytes of a fixed-size value type; 0 for strings and arrays.
uint64_t scalarBytes(GgufType t) {
  switch (t) {
  case GgufType::U8: case GgufType::I8: case GgufType::Bool: return 1;
  case GgufType::U16: case GgufType::I16: return 2;
  case GgufType::U32: case GgufType::I32: case GgufType::F32: return 4;
  case GgufType::U64: case GgufType::I64: case GgufType::F64: return 8;
  default: return 0;
  }
}

bool validType(uint32_t t) { return t <= 12; }

const char *ggmlTypeName(uint32_t t) {
  static const char *names[] = {
      "F32",  "F16",  "Q4_0", "Q4_1", "Q4_2", "Q4_3",  "Q5_0",    "Q5_1",
      "Q8_0", "Q8_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K",  "Q6_K",    "Q8_K",
      "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S", "IQ2_S",
      "IQ4_XS", "I8", "I16", "I32", "I64", "F64", "IQ1_M", "BF16"};
  return t < sizeof(names) / sizeof(names[0]) ? names[t] : "unknown";
}

struct Cursor {
  const uint8_t *base;
  uint64_t size;
  uint64_t pos = 0;
  std::string &error;
  const std::string &file;

  bool fail(const std::string &m) {
    error = file + ": " + m + " (at byte " + std::to_string(pos) + ")";
    return false;
  }
  bool need(uint64_t n, const char *what) {
    if (n > size - pos)
      return fail(std::string("truncated: ") + what + " needs " +
                  std::to_string(n) + " bytes, " + std::to_string(size - pos) +
                  " remain");
    return true;
  }
  template <typename T> bool read(T &out, const char *what) {
    if (!need(sizeof(T), what))
      return false;
    std::memcpy(&out, base + pos, sizeof(T));
    pos += sizeof(T);
    return true;
  }
  bool str(std::string_view &out, const char *what) {
    uint64_t n;
    if (!read(n, what))
      return false;
    if (!need(n, what))
      return false;
    out = std::string_view(reinterpret_cast<const char *>(base + pos), n);
    pos += n;
    return true;
  }
};

} // namespace

GgufFile::~GgufFile() = default;

std::unique_ptr<GgufFile> GgufFile::open(const std::string &path,
                                         std::string &error) {
  std::unique_ptr<GgufFile> file(new GgufFile());
  if (!file->mapping.map(path, error))
    return nullptr;
  file->name = path;
  file->base = file->mapping.data();
  file->size = file->mapping.size();
  if (!file->parse(error))
    return nullptr;
  return file;
}

std::unique_ptr<GgufFile> GgufFile::fromBytes(std::string_view bytes,
                                              std::string &error) {
  std::unique_ptr<GgufFile> file(new GgufFile());
  file->name = "<memory>";
  // 64-byte aligned storage, as a mapping would be.
  file->owned.resize(bytes.size() + 64);
  size_t shift = (64 - reinterpret_cast<uintptr_t>(file->owned.data()) % 64) % 64;
  std::memcpy(file->owned.data() + shift, bytes.data(), bytes.size());
  file->base = file->owned.data() + shift;
  file->size = bytes.size();
  if (!file->parse(error))
    return nullptr;
  return file;
}

bool GgufFile::parse(std::string &error) {
  Cursor c{base, size, 0, error, name};
  uint32_t magic;
  if (!c.read(magic, "the magic"))
    return false;
  if (magic != 0x46554747u) // "GGUF" little-endian
    return c.fail("not a GGUF file (the magic is not \"GGUF\")");
  if (!c.read(ver, "the version"))
    return false;
  if (ver != 2 && ver != 3)
    return c.fail("GGUF version " + std::to_string(ver) +
                  " is not supported (2 and 3 are)");
  uint64_t tensorCount, kvCount;
  if (!c.read(tensorCount, "the tensor count") ||
      !c.read(kvCount, "the metadata count"))
    return false;
  // Each key/value takes at least 8 + 4 bytes, each tensor info 8 + 4 + 4 + 8.
  if (kvCount > (size - c.pos) / 12)
    return c.fail("metadata count " + std::to_string(kvCount) +
                  " is larger than the file can hold");
  if (tensorCount > (size - c.pos) / 24)
    return c.fail("tensor count " + std::to_string(tensorCount) +
                  " is larger than the file can hold");

  for (uint64_t k = 0; k < kvCount; ++k) {
    std::string_view key;
    if (!c.str(key, "a metadata key"))
      return false;
    std::string keyName(key);
    uint64_t valueStart = c.pos;
    uint32_t rawType;
    if (!c.read(rawType, "a metadata type"))
      return false;
    if (!validType(rawType))
      return c.fail("metadata '" + keyName + "' has unknown type " +
                    std::to_string(rawType));
    GgufValue v;
    v.type = static_cast<GgufType>(rawType);
    auto readScalar = [&](GgufType t, GgufValue &out) -> bool {
      switch (t) {
      case GgufType::U8: { uint8_t x; if (!c.read(x, "a value")) return false; out.u = x; out.i = x; return true; }
      case GgufType::I8: { int8_t x; if (!c.read(x, "a value")) return false; out.i = x; return true; }
      case GgufType::U16: { uint16_t x; if (!c.read(x, "a value")) return false; out.u = x; out.i = x; return true; }
      case GgufType::I16: { int16_t x; if (!c.read(x, "a value")) return false; out.i = x; return true; }
      case GgufType::U32: { uint32_t x; if (!c.read(x, "a value")) return false; out.u = x; out.i = x; return true; }
      case GgufType::I32: { int32_t x; if (!c.read(x, "a value")) return false; out.i = x; return true; }
      case GgufType::U64: { uint64_t x; if (!c.read(x, "a value")) return false; out.u = x; out.i = static_cast<int64_t>(x); return true; }
      case GgufType::I64: { int64_t x; if (!c.read(x, "a value")) return false; out.i = x; return true; }
      case GgufType::F32: { float x; if (!c.read(x, "a value")) return false; out.f = x; return true; }
      case GgufType::F64: { double x; if (!c.read(x, "a value")) return false; out.f = x; return true; }
      case GgufType::Bool: {
        uint8_t x;
        if (!c.read(x, "a value")) return false;
        if (x > 1) return c.fail("metadata '" + keyName + "': bool value " + std::to_string(x) + " is not 0 or 1");
        out.u = x; out.i = x; return true;
      }
      case GgufType::String: return c.str(out.str, "a string value");
      case GgufType::Array: return false;
      }
      return false;
    };
    if (v.type == GgufType::Array) {
      uint32_t elem;
      if (!c.read(elem, "an array type") || !c.read(v.count, "an array count"))
        return false;
      if (!validType(elem) || elem == static_cast<uint32_t>(GgufType::Array))
        return c.fail("metadata '" + keyName + "': array of unsupported type " +
                      std::to_string(elem));
      v.elemType = static_cast<GgufType>(elem);
      v.offset = c.pos;
      uint64_t each = scalarBytes(v.elemType);
      if (each) {
        if (v.count > (size - c.pos) / each)
          return c.fail("metadata '" + keyName + "': array of " +
                        std::to_string(v.count) + " " + ggufTypeName(v.elemType) +
                        " runs past the end of the file");
        c.pos += v.count * each;
      } else {
        // Strings: each at least 8 bytes; walk them.
        if (v.count > (size - c.pos) / 8)
          return c.fail("metadata '" + keyName + "': array of " +
                        std::to_string(v.count) +
                        " strings runs past the end of the file");
        for (uint64_t i = 0; i < v.count; ++i) {
          std::string_view s;
          if (!c.str(s, "an array string"))
            return false;
        }
      }
    } else if (!readScalar(v.type, v)) {
      if (error.empty())
        return c.fail("metadata '" + keyName + "' cannot be read");
      return false;
    }
    v.raw = std::string_view(reinterpret_cast<const char *>(base) + valueStart,
                             c.pos - valueStart);
    if (!kv.emplace(keyName, v).second)
      return c.fail("metadata key '" + keyName + "' appears twice");
  }

  if (const GgufValue *a = find("general.alignment")) {
    if (!a->isInteger() || a->i <= 0 || a->i > (1 << 20) ||
        (a->i & (a->i - 1)) != 0)
      return c.fail("general.alignment must be a power of two of at most "
                    "1 MiB");
    align = static_cast<uint64_t>(a->i);
  }

  struct Info {
    TensorView view;
    uint64_t offset, bytes;
  };
  std::vector<Info> infos;
  for (uint64_t t = 0; t < tensorCount; ++t) {
    std::string_view tname;
    if (!c.str(tname, "a tensor name"))
      return false;
    std::string tn(tname);
    uint32_t nDims;
    if (!c.read(nDims, "a tensor's dim count"))
      return false;
    if (nDims == 0 || nDims > 4)
      return c.fail("tensor '" + tn + "' has " + std::to_string(nDims) +
                    " dims (GGUF allows 1 to 4)");
    Info info;
    info.view.name = tn;
    uint64_t elements = 1;
    std::vector<int64_t> dims;
    for (uint32_t d = 0; d < nDims; ++d) {
      uint64_t n;
      if (!c.read(n, "a tensor dim"))
        return false;
      if (n > static_cast<uint64_t>(INT64_MAX) ||
          (n != 0 && elements > UINT64_MAX / n))
        return c.fail("tensor '" + tn + "' has dims too large");
      elements *= n;
      dims.push_back(static_cast<int64_t>(n));
    }
    info.view.shape.assign(dims.rbegin(), dims.rend()); // row-major
    uint32_t type;
    if (!c.read(type, "a tensor type") || !c.read(info.offset, "a tensor offset"))
      return false;
    const DTypeTraits *traits = dtypeByGgml(type);
    if (!traits)
      return c.fail("tensor '" + tn + "' has ggml type " + std::to_string(type) +
                    " (" + ggmlTypeName(type) +
                    "), which tfc does not read (it reads F32, F16, BF16, " +
                    quantFormatList("and", /*upper=*/true) + ")");
    info.view.dtype = traits->type;
    uint64_t blockElems = traits->blockElements;
    if (dims[0] % static_cast<int64_t>(blockElems) != 0)
      return c.fail("tensor '" + tn + "': its innermost dim " +
                    std::to_string(dims[0]) + " is not a multiple of the " +
                    dtypeName(info.view.dtype) + " block of " +
                    std::to_string(blockElems));
    if (!dtypeBytes(info.view.dtype, elements, info.bytes))
      return c.fail("tensor '" + tn + "' is too large");
    if (info.offset % align != 0)
      return c.fail("tensor '" + tn + "' starts at offset " +
                    std::to_string(info.offset) +
                    ", not a multiple of the alignment " + std::to_string(align));
    infos.push_back(std::move(info));
  }

  uint64_t dataStart = (c.pos + align - 1) / align * align;
  if (dataStart > size && !infos.empty())
    return c.fail("truncated: the tensor data would start at byte " +
                  std::to_string(dataStart) + " of a " + std::to_string(size) +
                  "-byte file");
  uint64_t dataBytes = dataStart <= size ? size - dataStart : 0;
  for (Info &info : infos) {
    if (info.offset > dataBytes || info.bytes > dataBytes - info.offset) {
      error = name + ": tensor '" + info.view.name + "' (" +
              std::to_string(info.bytes) + " bytes at data offset " +
              std::to_string(info.offset) + ") runs past the end of the file (" +
              std::to_string(dataBytes) + " bytes of tensor data)";
      return false;
    }
    info.view.begin = info.offset;
    info.view.end = info.offset + info.bytes;
    info.view.data = base + dataStart + info.offset;
    views.push_back(info.view);
  }
  std::sort(views.begin(), views.end(),
            [](const TensorView &a, const TensorView &b) { return a.name < b.name; });
  for (size_t i = 1; i < views.size(); ++i)
    if (views[i].name == views[i - 1].name) {
      error = name + ": tensor '" + views[i].name + "' appears twice";
      return false;
    }
  // No two tensors overlap.
  std::vector<const TensorView *> byOffset;
  for (const TensorView &v : views)
    if (v.end > v.begin)
      byOffset.push_back(&v);
  std::sort(byOffset.begin(), byOffset.end(),
            [](const TensorView *a, const TensorView *b) { return a->begin < b->begin; });
  for (size_t i = 1; i < byOffset.size(); ++i)
    if (byOffset[i]->begin < byOffset[i - 1]->end) {
      error = name + ": tensors '" + byOffset[i - 1]->name + "' and '" +
              byOffset[i]->name + "' overlap";
      return false;
    }
  return true;
}

const GgufValue *GgufFile::find(std::string_view key) const {
  auto it = kv.find(key);
  return it == kv.end() ? nullptr : &it->second;
}

const TensorView *GgufFile::findTensor(std::string_view tname) const {
  auto it = std::lower_bound(
      views.begin(), views.end(), tname,
      [](const TensorView &v, std::string_view n) { return v.name < n; });
  return it != views.end() && it->name == tname ? &*it : nullptr;
}

std::vector<const TensorView *> GgufFile::allTensors() const {
  std::vector<const TensorView *> out;
  for (const TensorView &v : views)
    out.push_back(&v);
  return out;
}

static std::string describeValue(const GgufValue &v) {
  if (v.type == GgufType::Array)
    return std::string("an array of ") + ggufTypeName(v.elemType);
  return std::string("a ") + ggufTypeName(v.type);
}

bool GgufFile::getString(std::string_view key, std::string &out,
                         std::string &error) const {
  const GgufValue *v = find(key);
  if (!v) {
    error = name + ": metadata '" + std::string(key) + "' is missing";
    return false;
  }
  if (v->type != GgufType::String) {
    error = name + ": metadata '" + std::string(key) +
            "' should be a string, the file has " + describeValue(*v);
    return false;
  }
  out.assign(v->str);
  return true;
}

bool GgufFile::getInt(std::string_view key, int64_t &out,
                      std::string &error) const {
  const GgufValue *v = find(key);
  if (!v) {
    error = name + ": metadata '" + std::string(key) + "' is missing";
    return false;
  }
  if (!v->isInteger() || (v->type == GgufType::U64 && v->u > INT64_MAX)) {
    error = name + ": metadata '" + std::string(key) +
            "' should be an integer, the file has " + describeValue(*v);
    return false;
  }
  out = v->i;
  return true;
}

bool GgufFile::getFloat(std::string_view key, double &out,
                        std::string &error) const {
  const GgufValue *v = find(key);
  if (!v) {
    error = name + ": metadata '" + std::string(key) + "' is missing";
    return false;
  }
  if (v->isFloat())
    out = v->f;
  else if (v->isInteger())
    out = static_cast<double>(v->i);
  else {
    error = name + ": metadata '" + std::string(key) +
            "' should be a number, the file has " + describeValue(*v);
    return false;
  }
  return true;
}

bool GgufFile::getBool(std::string_view key, bool &out,
                       std::string &error) const {
  const GgufValue *v = find(key);
  if (!v) {
    error = name + ": metadata '" + std::string(key) + "' is missing";
    return false;
  }
  if (v->type != GgufType::Bool) {
    error = name + ": metadata '" + std::string(key) +
            "' should be a bool, the file has " + describeValue(*v);
    return false;
  }
  out = v->u != 0;
  return true;
}

bool GgufFile::getStringArray(std::string_view key,
                              std::vector<std::string> &out,
                              std::string &error) const {
  const GgufValue *v = find(key);
  if (!v) {
    error = name + ": metadata '" + std::string(key) + "' is missing";
    return false;
  }
  if (v->type != GgufType::Array || v->elemType != GgufType::String) {
    error = name + ": metadata '" + std::string(key) +
            "' should be an array of strings, the file has " + describeValue(*v);
    return false;
  }
  // Walked and bounds-checked by parse().
  out.clear();
  out.reserve(v->count);
  uint64_t pos = v->offset;
  for (uint64_t i = 0; i < v->count; ++i) {
    uint64_t n;
    std::memcpy(&n, base + pos, 8);
    out.emplace_back(reinterpret_cast<const char *>(base + pos + 8), n);
    pos += 8 + n;
  }
  return true;
}

template <typename T>
static T loadAt(const uint8_t *p) {
  T x;
  std::memcpy(&x, p, sizeof(T));
  return x;
}

bool GgufFile::getIntArray(std::string_view key, std::vector<int64_t> &out,
                           std::string &error) const {
  const GgufValue *v = find(key);
  GgufValue elem;
  if (v && v->type == GgufType::Array) {
    elem.type = v->elemType;
  }
  if (!v || v->type != GgufType::Array || !elem.isInteger() ||
      elem.type == GgufType::U64) {
    error = name + ": metadata '" + std::string(key) +
            (v ? "' should be an array of integers, the file has " +
                     describeValue(*v)
               : std::string("' is missing"));
    return false;
  }
  out.clear();
  out.reserve(v->count);
  uint64_t each = scalarBytes(v->elemType);
  for (uint64_t i = 0; i < v->count; ++i) {
    const uint8_t *p = base + v->offset + i * each;
    switch (v->elemType) {
    case GgufType::U8: out.push_back(loadAt<uint8_t>(p)); break;
    case GgufType::I8: out.push_back(loadAt<int8_t>(p)); break;
    case GgufType::U16: out.push_back(loadAt<uint16_t>(p)); break;
    case GgufType::I16: out.push_back(loadAt<int16_t>(p)); break;
    case GgufType::U32: out.push_back(loadAt<uint32_t>(p)); break;
    case GgufType::I32: out.push_back(loadAt<int32_t>(p)); break;
    case GgufType::I64: out.push_back(loadAt<int64_t>(p)); break;
    default: break;
    }
  }
  return true;
}

bool GgufFile::getFloatArray(std::string_view key, std::vector<double> &out,
                             std::string &error) const {
  const GgufValue *v = find(key);
  if (!v || v->type != GgufType::Array ||
      (v->elemType != GgufType::F32 && v->elemType != GgufType::F64)) {
    error = name + ": metadata '" + std::string(key) +
            (v ? "' should be an array of floats, the file has " +
                     describeValue(*v)
               : std::string("' is missing"));
    return false;
  }
  out.clear();
  out.reserve(v->count);
  uint64_t each = scalarBytes(v->elemType);
  for (uint64_t i = 0; i < v->count; ++i) {
    const uint8_t *p = base + v->offset + i * each;
    out.push_back(v->elemType == GgufType::F32 ? loadAt<float>(p)
                                               : loadAt<double>(p));
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

namespace {

uint32_t ggmlTypeOf(DType d) {
  int32_t ggml = traitsOf(d).ggml;
  return ggml >= 0 ? static_cast<uint32_t>(ggml) : 0; // else F32
}

/// llama.cpp's llama_ftype of a file whose matrices are `d`.
uint32_t fileTypeOf(DType d) {
  switch (d) {
  case DType::Q4_0: return 2;
  case DType::Q4_1: return 3;
  case DType::Q5_0: return 8;
  case DType::Q5_1: return 9;
  case DType::Q8_0: return 7;
  // llama.cpp's names for files of one K-quant: Q2_K, Q3_K_S, Q4_K_S,
  // Q5_K_S, Q6_K.
  case DType::Q2_K:
    return 10;
  case DType::Q3_K:
    return 11;
  case DType::Q4_K:
    return 14;
  case DType::Q5_K:
    return 16;
  case DType::Q6_K:
    return 18;
  default: return 0; // ALL_F32
  }
}

/// The f32 values of a tensor of a type GgufFile reads.
void valuesOf(const TensorView &v, float *out) {
  uint64_t n = v.numElements();
  const auto *p = static_cast<const uint8_t *>(v.data);
  if (isQuantized(v.dtype)) {
    dequantize(v.dtype, v.data, out, n);
    return;
  }
  for (uint64_t i = 0; i < n; ++i) {
    if (v.dtype == DType::F32) {
      std::memcpy(&out[i], p + 4 * i, 4);
    } else {
      uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      out[i] = v.dtype == DType::F16 ? halfToFloat(h) : bfloat16ToFloat(h);
    }
  }
}

void put(std::string &out, const void *p, size_t n) {
  out.append(static_cast<const char *>(p), n);
}
template <typename T> void put(std::string &out, T v) { put(out, &v, sizeof v); }
void putString(std::string &out, std::string_view s) {
  put<uint64_t>(out, s.size());
  put(out, s.data(), s.size());
}

} // namespace

bool tfc::rt::writeRequantizedGguf(const GgufFile &src,
                                   const std::string &path, DType target,
                                   GgufWriteStats &stats, std::string &error) {
  if (target != DType::F32 && !(isQuantized(target) && canQuantize(target))) {
    std::string writable;
    for (const DTypeTraits &t : kDTypeTable)
      if (t.quantized && canQuantize(t.type))
        writable += std::string(", ") + t.fileName;
    error = std::string("cannot write a .gguf of ") + dtypeName(target) +
            " (expected F32" + writable + ")";
    return false;
  }
  uint64_t blockElems = traitsOf(target).blockElements;
  uint64_t align = src.alignment();
  auto alignUp = [&](uint64_t x) { return (x + align - 1) / align * align; };

  struct Out {
    const TensorView *view;
    DType dtype;
    uint64_t offset, bytes;
  };
  std::vector<Out> outs;
  uint64_t dataBytes = 0;
  for (const TensorView *v : src.allTensors()) {
    uint64_t rowLength = v->shape.empty() ? 1 : v->shape.back();
    // What llama-quantize keeps in F32 of the families tfc reads: norms,
    // position embeddings and BERT's token types.
    bool exempt = v->name == "position_embd.weight" ||
                  v->name == "token_types.weight" ||
                  v->name.find("_norm.weight") != std::string::npos;
    bool matrix =
        v->shape.size() >= 2 && rowLength % blockElems == 0 && !exempt;
    DType d = matrix ? target : DType::F32;
    uint64_t bytes;
    if (!dtypeBytes(d, v->numElements(), bytes)) {
      error = "tensor '" + v->name + "' is too large to convert";
      return false;
    }
    outs.push_back({v, d, dataBytes, bytes});
    dataBytes = alignUp(dataBytes + bytes);
    ++stats.tensors;
    stats.converted += v->dtype != d;
    stats.bytesIn += v->end - v->begin;
    stats.bytesOut += bytes;
  }

  // Header, metadata, tensor infos.
  std::string head;
  put<uint32_t>(head, 0x46554747u); // "GGUF"
  put<uint32_t>(head, 3);
  put<uint64_t>(head, outs.size());
  const auto &kv = src.metadata();
  bool hasFileType = kv.count("general.file_type") != 0;
  put<uint64_t>(head, kv.size() + (hasFileType ? 0 : 1));
  for (const auto &[key, value] : kv) {
    putString(head, key);
    if (key == "general.file_type") {
      put<uint32_t>(head, static_cast<uint32_t>(GgufType::U32));
      put<uint32_t>(head, fileTypeOf(target));
    } else {
      put(head, value.raw.data(), value.raw.size());
    }
  }
  if (!hasFileType) {
    putString(head, "general.file_type");
    put<uint32_t>(head, static_cast<uint32_t>(GgufType::U32));
    put<uint32_t>(head, fileTypeOf(target));
  }
  for (const Out &o : outs) {
    putString(head, o.view->name);
    put<uint32_t>(head, static_cast<uint32_t>(o.view->shape.size()));
    for (auto it = o.view->shape.rbegin(); it != o.view->shape.rend(); ++it)
      put<uint64_t>(head, static_cast<uint64_t>(*it)); // innermost first
    put<uint32_t>(head, ggmlTypeOf(o.dtype));
    put<uint64_t>(head, o.offset);
  }
  head.resize(alignUp(head.size()), '\0');

  return writeFileWhole(
      path,
      [&](int fd) {
        if (!writeAll(fd, head.data(), head.size()))
          return false;
        std::vector<float> values;
        std::vector<uint8_t> bytes;
        uint64_t written = 0;
        auto pad = [&](uint64_t n) {
          static const char zeros[4096] = {};
          for (; n > 0; n -= std::min<uint64_t>(n, sizeof zeros))
            if (!writeAll(fd, zeros, std::min<uint64_t>(n, sizeof zeros)))
              return false;
          return true;
        };
        for (const Out &o : outs) {
          const void *data = o.view->data;
          if (o.view->dtype != o.dtype) {
            uint64_t n = o.view->numElements();
            values.resize(n);
            valuesOf(*o.view, values.data());
            if (o.dtype == DType::F32) {
              data = values.data();
            } else {
              bytes.resize(o.bytes);
              quantize(o.dtype, values.data(), bytes.data(), n);
              data = bytes.data();
            }
          }
          if (!pad(o.offset - written) || !writeAll(fd, data, o.bytes))
            return false;
          written = o.offset + o.bytes;
        }
        return pad(alignUp(written) - written);
      },
      error);
}
