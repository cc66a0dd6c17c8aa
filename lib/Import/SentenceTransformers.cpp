//===- SentenceTransformers.cpp - sentence-transformers modules -----------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// A sentence-transformers directory's modules.json: the pooling and the
// Dense modules after it.
//
//===----------------------------------------------------------------------===//

#include "Common.h"
#include "Encoder.h"

#include "tfc/Formats/JsonDocument.h"

#include <cmath>
#include <sstream>

namespace tfc::importer::detail {

/// A Dense module's config.json (in_features, out_features, bias,
/// activation_function) and its weights file.
static bool readDense(const std::string &dir, const std::string &modulesPath,
                      const std::string &path, DenseModule &d,
                      std::string &error) {
  if (path.empty() || path.find("..") != std::string::npos ||
      path.front() == '/') {
    error = modulesPath + ": the Dense module's path must be inside the "
                          "directory";
    return false;
  }
  d.path = path;
  std::string configPath = dir + "/" + path + "/config.json";
  Json config;
  if (!parseJsonFile(configPath, config, error))
    return false;
  ConfigReader r(configPath, config);
  d.in = r.positive("in_features");
  d.out = r.positive("out_features");
  d.bias = r.boolOr("bias", true);
  std::string act =
      r.stringOr("activation_function", "torch.nn.modules.activation.Tanh");
  if (!r.ok()) {
    error = r.message();
    return false;
  }
  if (act == "torch.nn.modules.activation.Tanh")
    d.activation = "tanh";
  else if (act != "torch.nn.modules.linear.Identity") {
    error = configPath + ": activation_function '" + act +
            "' is not supported (supported: torch.nn.modules.activation.Tanh, "
            "torch.nn.modules.linear.Identity)";
    return false;
  }
  if (!isRegularFile(dir + "/" + path + "/model.safetensors")) {
    error = dir + "/" + path +
            ": the Dense module's weights must be in "
            "model.safetensors" +
            (isRegularFile(dir + "/" + path + "/pytorch_model.bin")
                 ? " (pytorch_model.bin is a pickle tfc does not read: save "
                   "the module with safe_serialization)"
                 : "");
    return false;
  }
  return true;
}

bool readPooling(const std::string &dir, Pooling &p, std::string &error) {
  std::string modulesPath = dir + "/modules.json";
  if (!isRegularFile(modulesPath))
    return true;
  std::string text;
  if (!readText(modulesPath, text, error))
    return false;
  Json modules;
  if (!::tfc::rt::parseJsonDocument(text, modulesPath, modules, error))
    return false;
  if (!modules.is_array()) {
    error = modulesPath + ": expected an array of modules";
    return false;
  }
  std::string poolingDir;
  for (size_t i = 0; i < modules.size(); ++i) {
    const Json &m = modules[i];
    if (!m.is_object() || !m.contains("type") || !m["type"].is_string()) {
      error = modulesPath + ": module " + std::to_string(i) +
              " should be an object with a string 'type'";
      return false;
    }
    std::string type = m["type"].get<std::string>();
    std::string path = m.contains("path") && m["path"].is_string()
                           ? m["path"].get<std::string>()
                           : "";
    // "sentence_transformers.models.Pooling" (up to 5.x) or
    // "sentence_transformers.sentence_transformer.modules.pooling.Pooling"
    // (6.x): the class name decides.
    std::string cls = type.rfind("sentence_transformers.", 0) == 0
                          ? type.substr(type.rfind('.') + 1)
                          : "";
    if (cls == "Transformer")
      continue;
    if (cls == "Pooling") {
      p.present = true;
      poolingDir = path;
    } else if (cls == "Normalize") {
      p.normalize = true;
    } else if (cls == "Dense" && p.present && !p.normalize) {
      p.dense.emplace_back();
      if (!readDense(dir, modulesPath, path, p.dense.back(), error))
        return false;
    } else {
      error = modulesPath + ": module type '" + type + "' is not supported" +
              (cls == "Dense"
                   ? std::string(" here (Dense is supported between Pooling "
                                 "and Normalize)")
                   : std::string(" (supported: Transformer, Pooling, "
                                 "Dense, Normalize)"));
      return false;
    }
  }
  if (!p.present)
    return true;
  if (poolingDir.find("..") != std::string::npos) {
    error = modulesPath + ": the Pooling module's path must be inside the "
                          "directory";
    return false;
  }
  std::string poolConfig = dir + "/" + poolingDir + "/config.json";
  Json pc;
  if (!parseJsonFile(poolConfig, pc, error))
    return false;
  ConfigReader r(poolConfig, pc);
  int modes = 0;
  // sentence-transformers 6: "pooling_mode": "mean" (or "cls", "max", ...).
  if (r.has("pooling_mode")) {
    std::string mode = r.string("pooling_mode");
    if (r.ok() && mode != "mean" && mode != "cls" && mode != "max")
      r.fail("pooling_mode '" + mode +
             "' is not supported (supported: mean, cls, max)");
    if (!r.ok()) {
      error = r.message();
      return false;
    }
    p.mode = mode;
    modes = 1;
  }
  if (r.boolOr("pooling_mode_mean_tokens", false))
    p.mode = "mean", ++modes;
  if (r.boolOr("pooling_mode_cls_token", false))
    p.mode = "cls", ++modes;
  if (r.boolOr("pooling_mode_max_tokens", false))
    p.mode = "max", ++modes;
  for (const char *k :
       {"pooling_mode_mean_sqrt_len_tokens", "pooling_mode_weightedmean_tokens",
        "pooling_mode_lasttoken"})
    if (r.boolOr(k, false))
      r.fail(std::string("key '") + k +
             "' is not supported (supported: mean, cls, max)");
  if (r.ok() && modes != 1)
    r.fail("exactly one of pooling_mode_mean_tokens, pooling_mode_cls_token "
           "and pooling_mode_max_tokens must be true");
  if (!r.ok()) {
    error = r.message();
    return false;
  }
  std::string sbert = dir + "/sentence_bert_config.json";
  if (isRegularFile(sbert)) {
    Json sc;
    if (!parseJsonFile(sbert, sc, error))
      return false;
    ConfigReader sr(sbert, sc);
    p.maxSeqLength = sr.positiveOr("max_seq_length", 0);
    if (!sr.ok()) {
      error = sr.message();
      return false;
    }
  }
  return true;
}

} // namespace tfc::importer::detail
