//===- Common.cpp - What every importer family shares ---------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Files, config.json reads, weight declarations and their checks.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "tfc/Formats/JsonDocument.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace tfc::importer::detail {

bool isDirectory(const std::string &p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool isRegularFile(const std::string &p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool readText(const std::string &path, std::string &out, std::string &error) {
  if (!isRegularFile(path)) {
    error = path + ": " +
            (isDirectory(path)
                 ? std::string("is a directory")
                 : std::string("cannot open: ") + std::strerror(ENOENT));
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
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
  if (v.is_null())
    return "null";
  if (v.is_boolean())
    return "a bool";
  if (v.is_number_integer() || v.is_number_unsigned())
    return "an integer";
  if (v.is_number())
    return "a number";
  if (v.is_string())
    return "a string (" + v.dump() + ")";
  if (v.is_array())
    return "an array";
  return "an object";
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
  std::vector<Use> &list =
      tensor.find("{l}") == std::string::npos ? model : perLayer;
  for (const Use &u : list)
    if (u.name == tensor)
      return;
  list.push_back({tensor, std::move(shape)});
}

std::vector<Use> WeightDecls::uses() const {
  std::vector<Use> all = model;
  for (int64_t l = 0; l < layers; ++l)
    for (const Use &u : perLayer)
      all.push_back({subst(u.name, "l", std::to_string(l)), u.shape});
  return all;
}

GenericBlock::GenericBlock(std::string name, std::string args,
                           std::vector<std::string> intParams)
    : name(std::move(name)), args(std::move(args)),
      intParams(std::move(intParams)) {}

GenericBlock &GenericBlock::weight(const std::string &var,
                                   std::vector<Dim> dims,
                                   const std::string &suffix) {
  weights.push_back({var, std::move(dims), suffix});
  return *this;
}

std::string GenericBlock::text(const std::string &body) const {
  std::string t = "block " + name + "(" + args + ", p: str";
  for (const std::string &i : intParams)
    t += ", " + i + ": int";
  t += ") {\n";
  for (const Weight &w : weights)
    t += "  weight " + w.var + ": " + dimsText(w.dims) + " = \"{p}" + w.suffix +
         "\"\n";
  return t + body + "}\n\n";
}

std::string GenericBlock::call(WeightDecls &decls, const std::string &callArgs,
                               const std::string &tensor,
                               const std::vector<Dim> &ints) const {
  for (const Weight &w : weights) {
    std::vector<int64_t> shape;
    for (const Dim &d : w.dims) {
      int64_t value = d.value;
      for (size_t i = 0; i < intParams.size() && i < ints.size(); ++i)
        if (d.value == Dim::kParam && d.text == intParams[i])
          value = ints[i].value;
      shape.push_back(value);
    }
    decls.record(tensor + w.suffix, std::move(shape));
  }
  std::string t = name + "(" + callArgs + ", \"" + tensor + "\"";
  for (const Dim &d : ints)
    t += ", " + d.text;
  return t + ")";
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
