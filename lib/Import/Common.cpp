//===- Common.cpp - What every importer family shares ---------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Files, config.json reads, weight declarations and their checks.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "tfc/Formats/Files.h"
#include "tfc/Formats/JsonDocument.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>

namespace tfc::importer::detail {

bool readText(const std::string &path, std::string &out, std::string &error) {
  return tfc::rt::readRegularFile(path, out, tfc::rt::kMaxConfigFileBytes,
                                  error);
}

bool parseJsonFile(const std::string &path, Json &out, std::string &error) {
  std::string text;
  if (!readText(path, text, error))
    return false;
  if (!::tfc::rt::parseJsonDocument(text, path, out, error))
    return false;
  if (!out.is_object()) {
    error = path + ": expected a JSON object at the top level";
    return false;
  }
  return true;
}

std::string jsonKind(const Json &v) {
  std::string kind = tfc::rt::jsonKindName(v);
  return v.is_string() ? kind + " (" + v.dump() + ")" : kind;
}

std::string shapeText(const std::vector<int64_t> &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

/// "{p}" in a name template replaced by the layer's prefix.
std::string subst(std::string t, const std::string &key,
                  const std::string &value) {
  std::string pat = "{" + key + "}";
  for (size_t at; (at = t.find(pat)) != std::string::npos;)
    t.replace(at, pat.size(), value);
  return t;
}

std::string fmtFloat(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos)
    s += ".0";
  return s;
}

/// A model name the language accepts: letters, digits and '_'.
std::string identifier(const std::string &raw) {
  std::string out;
  for (char c : raw)
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])))
    out = "m_" + out;
  return out;
}

std::string baseName(std::string p) {
  while (p.size() > 1 && p.back() == '/')
    p.pop_back();
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

static std::string dimsText(const std::vector<Dim> &dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    text += (i ? ", " : "") + dims[i].text;
  return text + "]";
}

std::string WeightDecls::operator()(const std::string &var,
                                    const std::vector<Dim> &dims,
                                    const std::string &tensor) {
  return "  weight " + var + ": " + shape(dims, tensor) + " = \"" + tensor +
         "\"\n";
}

std::string WeightDecls::shape(const std::vector<Dim> &dims,
                               const std::string &tensor) {
  std::vector<int64_t> values;
  for (const Dim &d : dims)
    values.push_back(d.value);
  record(tensor, std::move(values));
  return dimsText(dims);
}

void WeightDecls::record(const std::string &tensor,
                         std::vector<int64_t> shape) {
  if (tensor.find("{l}") == std::string::npos) {
    for (const Use &u : model)
      if (u.name == tensor)
        return;
    model.push_back({tensor, std::move(shape)});
    return;
  }
  for (const LayerUse &u : perLayer)
    if (u.use.name == tensor)
      return;
  perLayer.push_back({{tensor, std::move(shape)}, layers});
}

std::vector<Use> WeightDecls::uses() const {
  std::vector<Use> all = model;
  int64_t most = 0;
  for (const LayerUse &u : perLayer)
    most = std::max(most, u.layers);
  for (int64_t l = 0; l < most; ++l)
    for (const LayerUse &u : perLayer)
      if (l < u.layers)
        all.push_back({subst(u.use.name, "l", std::to_string(l)), u.use.shape});
  return all;
}

GenericBlock::GenericBlock(std::string name, std::string before,
                           std::vector<std::string> after,
                           std::string nameParam)
    : name(std::move(name)), before(std::move(before)),
      nameParam(std::move(nameParam)), after(std::move(after)) {}

GenericBlock &GenericBlock::weight(const std::string &var,
                                   std::vector<Dim> dims,
                                   const std::string &suffix) {
  weights.push_back({var, std::move(dims), suffix});
  return *this;
}

std::string GenericBlock::text(const std::string &body) const {
  std::string t = "block " + name + "(" + before +
                  (before.empty() ? "" : ", ") + nameParam + ": str";
  for (const std::string &a : after)
    t += ", " + a;
  t += ") {\n";
  for (const Weight &w : weights)
    if (!w.var.empty())
      t += "  weight " + w.var + ": " + dimsText(w.dims) + " = \"{" +
           nameParam + "}" + w.suffix + "\"\n";
  return t + body + "}\n\n";
}

std::vector<std::pair<std::string, std::vector<Dim>>>
GenericBlock::bind(const std::vector<Dim> &args) const {
  std::vector<std::pair<std::string, std::vector<Dim>>> out;
  for (const Weight &w : weights) {
    std::vector<Dim> dims = w.dims;
    for (Dim &d : dims) {
      if (d.value != Dim::kParam)
        continue;
      for (size_t i = 0; i < after.size() && i < args.size(); ++i)
        if (after[i].substr(0, after[i].find(':')) == d.text)
          d = args[i];
    }
    out.push_back({w.suffix, std::move(dims)});
  }
  return out;
}

std::string GenericBlock::callText(const std::string &callBefore,
                                   const std::string &tensor,
                                   const std::vector<Dim> &args) const {
  std::string t = name + "(" + callBefore + (callBefore.empty() ? "" : ", ") +
                  "\"" + tensor + "\"";
  for (const Dim &d : args)
    t += ", " + d.text;
  return t + ")";
}

void GenericBlock::record(WeightDecls &decls, const std::string &tensor,
                          const std::vector<Dim> &args) const {
  for (auto &[suffix, dims] : bind(args)) {
    std::vector<int64_t> shape;
    for (const Dim &d : dims)
      shape.push_back(d.value);
    decls.record(tensor + suffix, std::move(shape));
  }
}

std::string GenericBlock::call(WeightDecls &decls,
                               const std::string &callBefore,
                               const std::string &tensor,
                               const std::vector<Dim> &args) const {
  record(decls, tensor, args);
  return callText(callBefore, tensor, args);
}

std::string GenericBlock::call(WeightDecls &decls,
                               const std::string &callBefore,
                               const Prefix::Name &tensor,
                               const std::vector<Dim> &args) const {
  record(decls, tensor.tensor, args);
  return callText(callBefore, tensor.text, args);
}

std::string GenericBlock::call(GenericBlock &outer,
                               const std::string &callBefore,
                               const std::string &tensor,
                               const std::vector<Dim> &args) const {
  std::string prefix = "{" + outer.nameParam + "}";
  std::string rest = tensor.compare(0, prefix.size(), prefix) == 0
                         ? tensor.substr(prefix.size())
                         : tensor;
  for (auto &[suffix, dims] : bind(args))
    outer.weights.push_back({"", std::move(dims), rest + suffix});
  return callText(callBefore, tensor, args);
}

bool checkUses(const tfc::rt::WeightSource &source,
               const std::vector<Use> &uses, const std::string &configName,
               std::string &error) {
  std::vector<std::string> problems;
  for (const Use &u : uses) {
    const tfc::rt::TensorView *v = source.findTensor(u.name);
    if (!v)
      problems.push_back("tensor '" + u.name + "' (" + shapeText(u.shape) +
                         ") is missing");
    else if (v->shape != u.shape)
      problems.push_back("tensor '" + u.name + "' has shape " +
                         shapeText(v->shape) + ", " + configName + " implies " +
                         shapeText(u.shape));
  }
  if (problems.empty())
    return true;
  error = source.describe() + " does not match " + configName + " (" +
          std::to_string(problems.size()) +
          (problems.size() == 1 ? " problem" : " problems") + "):";
  for (size_t i = 0; i < problems.size() && i < 10; ++i)
    error += "\n  " + problems[i];
  if (problems.size() > 10)
    error += "\n  ... and " + std::to_string(problems.size() - 10) + " more";
  return false;
}

std::string hfHeader(const HfCheckpoint &c, const std::string &what,
                     const std::vector<std::string> &keys) {
  std::string h = "# " + what + ", imported by tfc-import from\n#   " + c.dir +
                  "\n# Hyper-parameters from config.json";
  if (!keys.empty()) {
    h += ":";
    size_t col = 80;
    for (const std::string &k : keys) {
      if (!c.config.contains(k))
        continue;
      std::string item = " " + k + "=" + c.config[k].dump();
      if (col + item.size() > 78) {
        h += "\n#  ";
        col = 3;
      }
      h += item;
      col += item.size();
    }
  }
  h += "\n# Tensor names are the checkpoint's own.\n";
  return h;
}

} // namespace tfc::importer::detail
