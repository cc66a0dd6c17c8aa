//===- Common.h - What every importer family shares ----------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Private to lib/Import. Each family (one file per architecture, as
// llama.cpp's src/models/*.cpp) reads its hyper-parameters (config.json
// through ConfigReader, GGUF metadata through GgufFile's typed accessors),
// writes the .tfm and the list of tensors it uses with their shapes
// (WeightDecls: each weight declared once), and checks that list against the
// checkpoint's tensors (checkUses). LLaMA-style decoders share one writer
// (Decoder.h), BERT-style encoders another (Encoder.h).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_LIB_IMPORT_COMMON_H
#define TFC_LIB_IMPORT_COMMON_H

#include "tfc/Formats/Files.h"
#include "tfc/Formats/Weights.h"
#include "tfc/Import/Importer.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tfc::importer::detail {

using Json = nlohmann::json;

using tfc::rt::isDirectory;
using tfc::rt::isRegularFile;
/// The whole file, or false with `error` naming it.
bool readText(const std::string &path, std::string &out, std::string &error);
/// A JSON object read from `path` (errors with line:col).
bool parseJsonFile(const std::string &path, Json &out, std::string &error);
/// What a JSON value is, for messages: "an integer", "a string (\"x\")".
std::string jsonKind(const Json &v);

/// (file, key, expected, found) and later reads return defaults.
class ConfigReader {
public:
  ConfigReader(std::string file, const Json &json)
      : file(std::move(file)), json(json) {}

  bool ok() const { return error.empty(); }
  const std::string &message() const { return error; }
  bool has(const std::string &key) const {
    return json.contains(key) && !json.at(key).is_null();
  }
  void fail(const std::string &m) {
    if (error.empty())
      error = file + ": " + m;
  }

  int64_t positive(const std::string &key) {
    const Json *v = find(key, "a positive integer");
    if (!v)
      return 1;
    if (!(v->is_number_integer() || v->is_number_unsigned()) ||
        v->get<int64_t>() <= 0 || v->get<int64_t>() > (int64_t(1) << 40)) {
      fail("key '" + key + "' should be a positive integer, found " +
           (v->is_number_integer() ? v->dump() : jsonKind(*v)));
      return 1;
    }
    return v->get<int64_t>();
  }
  int64_t positiveOr(const std::string &key, int64_t dflt) {
    return has(key) ? positive(key) : dflt;
  }
  double number(const std::string &key) {
    const Json *v = find(key, "a number");
    if (!v)
      return 0;
    if (!v->is_number()) {
      fail("key '" + key + "' should be a number, found " + jsonKind(*v));
      return 0;
    }
    return v->get<double>();
  }
  double positiveNumberOr(const std::string &key, double dflt) {
    if (!has(key))
      return dflt;
    double x = number(key);
    if (ok() && !(x > 0 && std::isfinite(x)))
      fail("key '" + key + "' should be a positive number, found " +
           json.at(key).dump());
    return x;
  }
  std::string string(const std::string &key) {
    const Json *v = find(key, "a string");
    if (!v)
      return "";
    if (!v->is_string()) {
      fail("key '" + key + "' should be a string, found " + jsonKind(*v));
      return "";
    }
    return v->get<std::string>();
  }
  std::string stringOr(const std::string &key, const std::string &dflt) {
    return has(key) ? string(key) : dflt;
  }
  bool boolOr(const std::string &key, bool dflt) {
    if (!has(key))
      return dflt;
    const Json &v = json.at(key);
    if (!v.is_boolean()) {
      fail("key '" + key + "' should be true or false, found " + jsonKind(v));
      return dflt;
    }
    return v.get<bool>();
  }

private:
  const Json *find(const std::string &key, const char *expected) {
    if (!json.contains(key)) {
      fail("key '" + key + "' is missing (expected " + expected + ")");
      return nullptr;
    }
    return &json.at(key);
  }

  std::string file;
  const Json &json;
  std::string error;
};

/// A tensor the description uses, with the shape its hyper-parameters imply.
struct Use {
  std::string name;
  std::vector<int64_t> shape;
};

/// "[2, 3]".
std::string shapeText(const std::vector<int64_t> &s);
/// Every "{key}" in `t` replaced by `value`.
std::string subst(std::string t, const std::string &key,
                  const std::string &value);
/// A float as the language reads it back exactly ("1e-05", "10000.0").
std::string fmtFloat(double x);
/// A model name the language accepts: letters, digits and '_'.
std::string identifier(const std::string &raw);
/// The last component of a path.
std::string baseName(std::string p);

/// A dimension of a declared weight: its .tfm expression and its value. In a
/// GenericBlock, a dimension without a value (kParam) is the block's int
/// parameter of that name, given at each call.
struct Dim {
  static constexpr int64_t kParam = -1;
  std::string text;
  int64_t value = kParam;
};

/// The weights a family's .tfm declares, each declared once: the call
/// writes its `weight` line and records the checkpoint tensor that must
/// match, so the description and the checks cannot disagree. A tensor name
/// with "{l}" belongs to a layer and is checked for every layer of the stack
/// being written (setLayers: an encoder-decoder's two stacks), after the
/// model's own weights (in declaration order); a tensor declared twice (two
/// entries reading one table) is checked once.
class WeightDecls {
public:
  explicit WeightDecls(int64_t layers) : layers(layers) {}

  /// The layers that "{l}" in the tensors declared from now on ranges over.
  void setLayers(int64_t n) { layers = n; }

  /// `  weight VAR: [DIM, ...] = "TENSOR"` and a newline.
  std::string operator()(const std::string &var, const std::vector<Dim> &dims,
                         const std::string &tensor);
  /// "[DIM, ...]", recording TENSOR with that shape: for writers that print
  /// the rest of the declaration themselves (one format per layer).
  std::string shape(const std::vector<Dim> &dims, const std::string &tensor);
  /// Records TENSOR with `shape` (a GenericBlock's call).
  void record(const std::string &tensor, std::vector<int64_t> shape);

  /// Every tensor to check, with each layer's names filled in.
  std::vector<Use> uses() const;

private:
  struct LayerUse {
    Use use;
    int64_t layers;
  };
  int64_t layers;
  std::vector<Use> model;
  std::vector<LayerUse> perLayer;
};

/// A string variable of a block naming a prefix (`p = "h.{l}.mlp"`), so that
/// calls read `proj(x, "{p}.dense_h_to_4h", ...)`: `line()` declares it and
/// `(".dense_h_to_4h")` is the argument's text with the tensor it names.
struct Prefix {
  std::string var, value;
  std::string line() const { return "  " + var + " = \"" + value + "\"\n"; }
  struct Name {
    std::string text, tensor;
  };
  Name operator()(const std::string &suffix) const {
    return {"{" + var + "}" + suffix, value + suffix};
  }
};

/// A block whose weights are named after one of its string parameters
/// (`block dense(x, p: str, d_out: int, d_in: int)`, one block for every
/// projection of a layer), declared once: its weight lines, and at each of
/// its calls the tensors that call names. A call from the entry or a layer
/// records them in a WeightDecls; a call from another generic block's body
/// (`proj(xq, "{p}.q", d_inner, d_model)` in T5's `mha`) adds them to that
/// block, to be recorded at its calls.
class GenericBlock {
public:
  /// `block NAME(BEFORE, NAMEPARAM: str, AFTER...) {`; each of `after` is a
  /// parameter's "name: type" (an `int` one may size the weights).
  GenericBlock(std::string name, std::string before,
               std::vector<std::string> after = {},
               std::string nameParam = "p");
  /// `  weight VAR: [DIM, ...] = "{NAMEPARAM}SUFFIX"`.
  GenericBlock &weight(const std::string &var, std::vector<Dim> dims,
                       const std::string &suffix);
  /// The block: its header, its weight lines, `body` and the closing brace.
  std::string text(const std::string &body) const;
  /// `NAME(BEFORE, "TENSOR", AFTER...)` from the entry or a layer block:
  /// records TENSOR + each weight's suffix, shaped with `after`'s values.
  std::string call(WeightDecls &decls, const std::string &before,
                   const std::string &tensor,
                   const std::vector<Dim> &after = {}) const;
  /// The same, naming the tensor through a Prefix variable.
  std::string call(WeightDecls &decls, const std::string &before,
                   const Prefix::Name &tensor,
                   const std::vector<Dim> &after = {}) const;
  /// The same call in the body of `outer`, whose TENSOR starts with
  /// "{NAMEPARAM}" of `outer`: its weights become `outer`'s.
  std::string call(GenericBlock &outer, const std::string &before,
                   const std::string &tensor,
                   const std::vector<Dim> &after = {}) const;

private:
  struct Weight {
    std::string var; // "" for a weight of a block this one calls
    std::vector<Dim> dims;
    std::string suffix;
  };
  /// The weights' shapes with the int parameters bound to `after`.
  std::vector<std::pair<std::string, std::vector<Dim>>>
  bind(const std::vector<Dim> &after) const;
  void record(WeightDecls &decls, const std::string &tensor,
              const std::vector<Dim> &after) const;
  std::string callText(const std::string &before, const std::string &tensor,
                       const std::vector<Dim> &after) const;
  std::string name, before, nameParam;
  std::vector<std::string> after;
  std::vector<Weight> weights;
};

/// Every tensor in `uses` exists in `source` with its shape; otherwise false
/// and `error` lists the problems (the first ten).
bool checkUses(const tfc::rt::WeightSource &source,
               const std::vector<Use> &uses, const std::string &configName,
               std::string &error);

/// A Hugging Face directory: its config.json and its weights.
struct HfCheckpoint {
  std::string dir, configPath;
  Json config;
  std::unique_ptr<tfc::rt::WeightSource> weights;
  std::string header;

  bool hasTensor(const std::string &n) const {
    return weights->findTensor(n) != nullptr;
  }
};

/// The header comment of an imported description: the class, the directory
/// and the config.json keys (of `keys`) the checkpoint sets.
std::string hfHeader(const HfCheckpoint &c, const std::string &what,
                     const std::vector<std::string> &keys);

// The families: each fills `out.tfm` from a checkpoint, or returns false with
// `error` naming the file, the key or tensor, and what was expected.
bool importLlamaLike(HfCheckpoint &c, const std::string &type,
                     ImportedModel &out, std::string &error);
bool importGemmaText(HfCheckpoint &c, const std::string &type,
                     ImportedModel &out, std::string &error);
bool importGpt2(HfCheckpoint &c, ImportedModel &out, std::string &error);
bool importVit(HfCheckpoint &c, ImportedModel &out, std::string &error);
bool importBloom(HfCheckpoint &c, ImportedModel &out, std::string &error);
bool importT5(HfCheckpoint &c, ImportedModel &out, std::string &error);
bool importMarian(HfCheckpoint &c, ImportedModel &out, std::string &error);
bool importBert(HfCheckpoint &c, const std::string &type, ImportedModel &out,
                std::string &error);
bool importGguf(const std::string &path, ImportedModel &out,
                std::string &error);

} // namespace tfc::importer::detail

#endif // TFC_LIB_IMPORT_COMMON_H
