//===- ModelMetadata.cpp - Parsing and checking model metadata ------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The metadata is JSON (Json.h). Each field is read through a small checker
// that knows where it is ("entry 'forward': input 'ids'") so every message
// names the offending part. The ABI version is checked before anything else:
// another version may have another layout.
//
//===----------------------------------------------------------------------===//

#include "tfc/Runtime/ModelMetadata.h"

#include "tfc/Schemas/ModelABI.h"

#include "tfc/Formats/Json.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <map>
#include <set>

using namespace tfc::rt;

bool tfc::rt::dtypeOfStorage(DType storage, tfc_dtype &out) {
  out = traitsOf(storage).api;
  return out != kNoApiDType;
}

bool tfc::rt::dtypeByteSize(tfc_dtype dtype, uint64_t elements,
                            uint64_t &bytes) {
  const DTypeTraits *t = dtypeTraits(dtype);
  return t && dtypeBytes(t->type, elements, bytes);
}

uint64_t TensorSpec::byteSize() const {
  uint64_t bytes = 0;
  return dtypeByteSize(dtype, numElements(), bytes) ? bytes : 0;
}

bool tfc::rt::parseDTypeName(std::string_view name, tfc_dtype &out) {
  const DTypeTraits *t = dtypeByName(name);
  if (!t || t->api == kNoApiDType)
    return false;
  out = t->api;
  return true;
}

std::string tfc::rt::shapeString(const int64_t *dims, size_t rank) {
  std::string s = "[";
  for (size_t i = 0; i < rank; ++i)
    s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

std::string TensorSpec::shapeString() const {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    const DimSpec &d = shape[i];
    s += i ? ", " : "";
    s += d.isStatic() ? std::to_string(d.size)
                      : (d.name.empty() ? std::string("?") : d.name);
  }
  return s + "]";
}

uint64_t TensorSpec::numElements() const {
  uint64_t n = 1;
  for (const DimSpec &d : shape)
    n *= static_cast<uint64_t>(d.size < 0 ? 0 : d.size);
  return n;
}

int64_t ModelSpec::findEntry(std::string_view entryName) const {
  for (size_t i = 0; i < entries.size(); ++i)
    if (entries[i].name == entryName)
      return static_cast<int64_t>(i);
  return -1;
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

namespace {

using json::Value;

/// Reads fields of the metadata, keeping the first error with its location.
class MetadataReader {
public:
  explicit MetadataReader(std::string &error) : error(error) {}

  bool read(const Value &root, ModelSpec &out);

private:
  bool fail(const std::string &where, const std::string &message) {
    error = "metadata: " + (where.empty() ? "" : where + ": ") + message;
    return false;
  }

  /// `obj[key]` of kind `kind`; null (and an error when `required`) if absent
  /// or of another kind.
  const Value *field(const Value &obj, const std::string &where,
                     const char *key, Value::Kind kind, bool required,
                     bool &ok) {
    const Value *v = obj.get(key);
    if (!v) {
      if (required)
        ok = fail(where, std::string("missing \"") + key + "\"");
      return nullptr;
    }
    if (v->kind != kind) {
      ok = fail(where, std::string("\"") + key + "\" must be " +
                           json::kindName(kind) + ", not " +
                           json::kindName(v->kind));
      return nullptr;
    }
    return v;
  }

  bool object(const Value &v, const std::string &where) {
    if (v.kind != Value::Object)
      return fail(where, std::string("must be an object, not ") +
                             json::kindName(v.kind));
    if (const std::string *dup = v.duplicateKey())
      return fail(where, "\"" + *dup + "\" appears twice");
    return true;
  }

  bool tensor(const Value &v, const std::string &where, bool isWeight,
              bool isInput, TensorSpec &out);

  std::string &error;
  std::map<std::string, int64_t> dimMax;
};

bool MetadataReader::tensor(const Value &v, const std::string &outer,
                            bool isWeight, bool isInput, TensorSpec &out) {
  if (!object(v, outer))
    return false;
  bool ok = true;
  const Value *name = field(v, outer, "name", Value::String, true, ok);
  if (!ok)
    return false;
  if (name->string.empty())
    return fail(outer, "empty name");
  out.name = name->string;
  std::string where = outer + " '" + out.name + "'";
  const Value *dtype = field(v, where, "dtype", Value::String, true, ok);
  const Value *shape =
      ok ? field(v, where, "shape", Value::Array, true, ok) : nullptr;
  if (!ok)
    return false;
  if (!parseDTypeName(dtype->string, out.dtype))
    return fail(where, "unknown dtype '" + dtype->string +
                           "' (expected f32, f64, f16, bf16, i64, i32, "
                           "bool, or for weights " +
                           quantFormatList() + ")");
  const DTypeTraits &traits = *dtypeTraits(out.dtype);
  if (traits.quantized && !isWeight)
    return fail(where, "dtype " + dtype->string +
                           " is a weight format; inputs and outputs cannot "
                           "have it");
  if (shape->items.size() > TFC_MAX_RANK)
    return fail(where, "rank " + std::to_string(shape->items.size()) +
                           " is more than the supported " +
                           std::to_string(TFC_MAX_RANK));
  // Weights: the size in bytes must fit (per element, rounded up to bytes
  // for the block formats).
  uint64_t bytes = traits.blockBytes;
  for (size_t i = 0; i < shape->items.size(); ++i) {
    const Value &d = shape->items[i];
    DimSpec dim;
    std::string at = "shape[" + std::to_string(i) + "]";
    if (d.kind == Value::Number) {
      if (!d.isIndex())
        return fail(where, at + " must be a non-negative integer");
      dim.size = static_cast<int64_t>(d.integer);
      if (isWeight) {
        if (dim.size != 0 && bytes > (UINT64_C(1) << 62) / d.integer)
          return fail(where, "the shape is too large");
        bytes *= d.integer;
      }
    } else if (isWeight) {
      return fail(where, at + ": weights must have static shapes");
    } else if (d.kind == Value::String) {
      auto it = dimMax.find(d.string);
      if (it == dimMax.end())
        return fail(where, at + " names '" + d.string +
                               "', which is not declared in \"dims\"");
      dim.name = d.string;
      dim.max = it->second;
    } else if (d.kind != Value::Null) {
      return fail(where, at + " must be an integer, a dim name or null");
    }
    out.shape.push_back(std::move(dim));
  }
  if (traits.quantized &&
      (out.shape.empty() ||
       out.shape.back().size % traits.blockElements != 0))
    return fail(where, "a " + dtype->string +
                           " weight's last dim must be a multiple of " +
                           std::to_string(traits.blockElements));
  if (const Value *bound = v.get("bound")) {
    if (!isInput || (out.dtype != TFC_I64 && out.dtype != TFC_I32))
      return fail(where, "\"bound\" is only allowed on integer inputs");
    if (!bound->isIndex())
      return fail(where, "\"bound\" must be a non-negative integer");
    out.bound = static_cast<int64_t>(bound->integer);
  }
  if (const Value *state = v.get("state")) {
    if (!isInput || state->kind != Value::Bool)
      return fail(where, "\"state\" must be true or false, on inputs only");
    out.state = state->boolean;
  }
  if (const Value *window = v.get("window")) {
    if (!isInput || !out.state || !window->isIndex() || window->integer == 0)
      return fail(where, "\"window\" must be a positive integer, on state "
                         "inputs only");
    out.window = static_cast<int64_t>(window->integer);
  }
  if (const Value *host = v.get("host")) {
    if (!isInput || host->kind != Value::Bool)
      return fail(where, "\"host\" must be true or false, on inputs only");
    out.host = host->boolean;
  }
  if (const Value *initOnly = v.get("init_only")) {
    if (!isWeight || initOnly->kind != Value::Bool)
      return fail(where,
                  "\"init_only\" must be true or false, on weights only");
    out.initOnly = initOnly->boolean;
  }
  return true;
}

bool MetadataReader::read(const Value &root, ModelSpec &out) {
  if (!object(root, ""))
    return false;
  const Value *abi = root.get("abi");
  if (!abi || !abi->isIndex())
    return fail("", "\"abi\" must be a non-negative integer (the ABI "
                    "version)");
  out.abi = static_cast<int64_t>(abi->integer);
  if (out.abi != TFC_ABI_VERSION)
    return fail("", "the model was compiled for runtime ABI version " +
                        std::to_string(out.abi) +
                        ", but this libtfcrt implements version " +
                        std::to_string(TFC_ABI_VERSION) +
                        " (recompile the model or update the runtime)");
  bool ok = true;
  const Value *model = field(root, "", "model", Value::String, true, ok);
  const Value *target =
      ok ? field(root, "", "target", Value::Object, true, ok) : nullptr;
  const Value *dims =
      ok ? field(root, "", "dims", Value::Array, false, ok) : nullptr;
  const Value *weights =
      ok ? field(root, "", "weights", Value::Array, false, ok) : nullptr;
  const Value *constants =
      ok ? field(root, "", "constants", Value::Array, false, ok) : nullptr;
  const Value *entries =
      ok ? field(root, "", "entries", Value::Array, true, ok) : nullptr;
  if (!ok)
    return false;
  out.name = model->string;

  if (!object(*target, "target"))
    return false;
  const Value *triple =
      field(*target, "target", "triple", Value::String, true, ok);
  const Value *cpu =
      ok ? field(*target, "target", "cpu", Value::String, false, ok) : nullptr;
  const Value *features =
      ok ? field(*target, "target", "features", Value::String, false, ok)
         : nullptr;
  const Value *device =
      ok ? field(*target, "target", "device", Value::String, false, ok)
         : nullptr;
  if (!ok)
    return false;
  out.target.triple = triple->string;
  out.target.cpu = cpu ? cpu->string : "";
  out.target.features = features ? features->string : "";
  out.target.device = device ? device->string : "cpu";
  if (out.target.device != "cpu" && out.target.device != "cuda") {
    error = "target.device is '" + out.target.device +
            "'; expected \"cpu\" or \"cuda\"";
    return false;
  }

  if (dims) {
    for (size_t i = 0; i < dims->items.size(); ++i) {
      std::string where = "dims[" + std::to_string(i) + "]";
      const Value &d = dims->items[i];
      if (!object(d, where))
        return false;
      const Value *name = field(d, where, "name", Value::String, true, ok);
      if (!ok)
        return false;
      NamedDimSpec dim;
      dim.name = name->string;
      if (dim.name.empty())
        return fail(where, "empty name");
      if (const Value *max = d.get("max")) {
        if (!max->isIndex())
          return fail("dim '" + dim.name + "'",
                      "\"max\" must be a non-negative integer");
        dim.max = static_cast<int64_t>(max->integer);
      }
      if (!dimMax.emplace(dim.name, dim.max).second)
        return fail("dim '" + dim.name + "'", "declared twice");
      out.dims.push_back(std::move(dim));
    }
  }

  std::set<std::string> names;
  if (weights) {
    for (size_t i = 0; i < weights->items.size(); ++i) {
      TensorSpec w;
      if (!tensor(weights->items[i], "weight", true, false, w))
        return false;
      if (!names.insert(w.name).second)
        return fail("weight '" + w.name + "'", "declared twice");
      out.weights.push_back(std::move(w));
    }
  }

  if (constants) {
    for (size_t i = 0; i < constants->items.size(); ++i) {
      std::string where = "constants[" + std::to_string(i) + "]";
      const Value &c = constants->items[i];
      if (!object(c, where))
        return false;
      const Value *bytes = c.get("bytes");
      if (!bytes || !bytes->isIndex() || bytes->integer > (UINT64_C(1) << 48))
        return fail(where, "\"bytes\" must be an integer in [0, 2^48]");
      ConstantSpec spec;
      spec.bytes = bytes->integer;
      if (const Value *align = c.get("align")) {
        if (!align->isIndex() || align->integer == 0 ||
            (align->integer & (align->integer - 1)) != 0 ||
            align->integer > 4096)
          return fail(where, "\"align\" must be a power of two up to 4096");
        spec.align = align->integer;
      }
      out.constants.push_back(spec);
    }
  }

  std::set<std::string> entryNames, symbols;
  for (size_t i = 0; i < entries->items.size(); ++i) {
    std::string where = "entries[" + std::to_string(i) + "]";
    const Value &e = entries->items[i];
    if (!object(e, where))
      return false;
    EntrySpec entry;
    const Value *name = field(e, where, "name", Value::String, true, ok);
    if (!ok)
      return false;
    entry.name = name->string;
    where = "entry '" + entry.name + "'";
    if (entry.name.empty())
      return fail(where, "empty name");
    const Value *symbol = field(e, where, "symbol", Value::String, true, ok);
    const Value *inputs =
        ok ? field(e, where, "inputs", Value::Array, true, ok) : nullptr;
    const Value *outputs =
        ok ? field(e, where, "outputs", Value::Array, true, ok) : nullptr;
    if (!ok)
      return false;
    entry.symbol = symbol->string;
    if (entry.symbol.empty())
      return fail(where, "empty symbol");
    if (!entryNames.insert(entry.name).second)
      return fail(where, "declared twice");
    if (!symbols.insert(entry.symbol).second)
      return fail(where,
                  "symbol '" + entry.symbol + "' is used by another entry");
    std::set<std::string> argNames;
    for (const Value &in : inputs->items) {
      TensorSpec t;
      if (!tensor(in, where + ": input", false, true, t))
        return false;
      if (!argNames.insert(t.name).second)
        return fail(where, "input '" + t.name + "' is declared twice");
      entry.inputs.push_back(std::move(t));
    }
    for (const Value &o : outputs->items) {
      TensorSpec t;
      if (!tensor(o, where + ": output", false, false, t))
        return false;
      if (!argNames.insert(t.name).second)
        return fail(where, "'" + t.name +
                               "' is declared twice among inputs and outputs");
      entry.outputs.push_back(std::move(t));
    }
    out.entries.push_back(std::move(entry));
  }
  if (out.entries.empty())
    return fail("", "the model has no entries");
  return true;
}

} // namespace

bool tfc::rt::parseModelMetadata(std::string_view text, ModelSpec &out,
                                 std::string &error) {
  out = ModelSpec();
  json::Value root;
  if (!json::parse(text, root, error, "metadata JSON"))
    return false;
  return MetadataReader(error).read(root, out);
}

//===----------------------------------------------------------------------===//
// Target checks
//===----------------------------------------------------------------------===//

std::string tfc::rt::checkTarget(
    const TargetSpec &target, std::string_view hostArch,
    const std::function<FeatureSupport(std::string_view)> &hostHas) {
  std::string_view triple = target.triple;
  std::string_view arch = triple.substr(0, triple.find('-'));
  // LLVM's spellings of the same architecture.
  auto canonical = [](std::string_view a) -> std::string_view {
    if (a == "amd64" || a == "x86_64h")
      return "x86_64";
    if (a == "arm64")
      return "aarch64";
    return a;
  };
  if (canonical(arch) != canonical(hostArch))
    return "the model was compiled for " +
           (arch.empty() ? std::string("an unknown architecture")
                         : std::string(arch)) +
           " (triple '" + target.triple + "'), but this host is " +
           std::string(hostArch);
  std::string missing;
  size_t count = 0;
  std::string_view features = target.features;
  while (!features.empty()) {
    size_t comma = features.find(',');
    std::string_view f = features.substr(0, comma);
    features = comma == std::string_view::npos ? std::string_view()
                                               : features.substr(comma + 1);
    if (f.size() < 2 || f[0] != '+')
      continue;
    f.remove_prefix(1);
    if (hostHas(f) == FeatureSupport::No) {
      missing += (count++ ? ", " : "") + std::string(f);
    }
  }
  if (count == 0)
    return "";
  std::string cpu = target.cpu.empty() ? "" : " ('" + target.cpu + "')";
  return "the model was compiled for a CPU" + cpu + " with " + missing +
         ", which this host does not support (recompile it for this host's "
         "CPU)";
}
