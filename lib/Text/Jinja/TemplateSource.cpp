//===- TemplateSource.cpp - Where chat templates come from ----------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// readChatTemplate and openChatTemplate (ChatTemplate.h): a checkpoint's
// template from GGUF metadata, tokenizer_config.json, chat_template.json or
// chat_template.jinja, with its special tokens.
//
//===----------------------------------------------------------------------===//

#include "tfc/Text/Jinja/ChatTemplate.h"

#include "tfc/Formats/Files.h"
#include "tfc/Formats/Gguf.h"
#include "tfc/Formats/JsonDocument.h"
#include "tfc/Formats/Weights.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <sys/stat.h>

using namespace tfc::rt;

namespace {
using ojson = nlohmann::ordered_json;
} // namespace

//===----------------------------------------------------------------------===//
// Where templates come from
//===----------------------------------------------------------------------===//

namespace {

std::string join(const std::string &dir, const char *file) {
  return dir + (dir.empty() || dir.back() == '/' ? "" : "/") + file;
}

bool readJsonFile(const std::string &path, ojson &out, std::string &error) {
  std::string text;
  if (!readRegularFile(path, text, kMaxConfigFileBytes, error))
    return false;
  if (!::tfc::rt::parseJsonDocument(text, path, out, error))
    return false;
  if (!out.is_object()) {
    error =
        path + ": expected a JSON object, found " + tfc::rt::jsonKindName(out);
    return false;
  }
  return true;
}

/// "chat_template": a string, or [{name, template}, ...] (take "default").
bool templateFromJson(const ojson &v, const std::string &where,
                      std::string &out, std::string &error) {
  if (v.is_string()) {
    out = v.get<std::string>();
    return true;
  }
  if (v.is_array()) {
    std::string names;
    for (size_t k = 0; k < v.size(); ++k) {
      const ojson &item = v[k];
      std::string at = where + "[" + std::to_string(k) + "]";
      if (!item.is_object() || !item.contains("name") ||
          !item["name"].is_string() || !item.contains("template") ||
          !item["template"].is_string()) {
        error = at + ": expected {\"name\": string, \"template\": string}";
        return false;
      }
      std::string name = item["name"].get<std::string>();
      if (name == "default") {
        out = item["template"].get<std::string>();
        return true;
      }
      names += (names.empty() ? "" : ", ") + name;
    }
    error = where + ": no template named \"default\" (the list has: " +
            (names.empty() ? std::string("none") : names) + ")";
    return false;
  }
  error = where + ": expected a string or a list of {name, template}, found " +
          tfc::rt::jsonKindName(v);
  return false;
}

/// bos_token/eos_token of tokenizer_config.json: a string or an AddedToken
/// object {"content": ...}; null or absent is "".
bool specialToken(const ojson &config, const char *key, const std::string &path,
                  std::string &out, std::string &error) {
  out.clear();
  auto it = config.find(key);
  if (it == config.end() || it->is_null())
    return true;
  if (it->is_string()) {
    out = it->get<std::string>();
    return true;
  }
  if (it->is_object()) {
    auto c = it->find("content");
    if (c != it->end() && c->is_string()) {
      out = c->get<std::string>();
      return true;
    }
  }
  error = path + ": " + key +
          ": expected a string or {\"content\": string}, found " +
          tfc::rt::jsonKindName(*it);
  return false;
}

} // namespace

bool tfc::rt::readChatTemplate(const std::string &path, ChatTemplateSource &out,
                               std::string &error) {
  out = ChatTemplateSource();
  if (!tfc::rt::pathExists(path)) {
    error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  if (!tfc::rt::isDirectory(path) && isGgufFile(path)) {
    std::unique_ptr<GgufFile> file = GgufFile::open(path, error);
    if (!file)
      return false;
    if (!file->find("tokenizer.chat_template")) {
      error = path + ": the file has no chat template (no "
                     "tokenizer.chat_template key)";
      return false;
    }
    if (!file->getString("tokenizer.chat_template", out.text, error))
      return false;
    out.origin = path + ": tokenizer.chat_template";
    if (file->find("tokenizer.ggml.tokens")) {
      std::vector<std::string> tokens;
      if (!file->getStringArray("tokenizer.ggml.tokens", tokens, error))
        return false;
      auto token = [&](const char *key, std::string &dst) {
        if (!file->find(key))
          return true;
        int64_t id;
        if (!file->getInt(key, id, error))
          return false;
        if (id >= 0 && id < int64_t(tokens.size()))
          dst = tokens[size_t(id)];
        return true;
      };
      if (!token("tokenizer.ggml.bos_token_id", out.bos) ||
          !token("tokenizer.ggml.eos_token_id", out.eos))
        return false;
    }
    return true;
  }
  std::string dir;
  if (tfc::rt::isDirectory(path)) {
    dir = path;
  } else if (path.size() >= 5 &&
             path.compare(path.size() - 5, 5, ".json") == 0) {
    // A tokenizer.json: its directory.
    size_t slash = path.rfind('/');
    dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  } else {
    // A template file of its own.
    if (!readRegularFile(path, out.text, kMaxConfigFileBytes, error))
      return false;
    out.origin = path;
    return true;
  }
  std::string configPath = join(dir, "tokenizer_config.json");
  ojson config;
  bool haveConfig = tfc::rt::pathExists(configPath);
  if (haveConfig) {
    if (!readJsonFile(configPath, config, error))
      return false;
    if (!specialToken(config, "bos_token", configPath, out.bos, error) ||
        !specialToken(config, "eos_token", configPath, out.eos, error))
      return false;
  }
  std::string jinjaPath = join(dir, "chat_template.jinja");
  if (tfc::rt::pathExists(jinjaPath)) {
    out.origin = jinjaPath;
    return readRegularFile(jinjaPath, out.text, kMaxConfigFileBytes, error);
  }
  std::string jsonPath = join(dir, "chat_template.json");
  if (tfc::rt::pathExists(jsonPath)) {
    ojson j;
    if (!readJsonFile(jsonPath, j, error))
      return false;
    if (!j.contains("chat_template")) {
      error = jsonPath + ": no \"chat_template\" key";
      return false;
    }
    out.origin = jsonPath + ": chat_template";
    return templateFromJson(j["chat_template"], out.origin, out.text, error);
  }
  if (!haveConfig) {
    error = dir + ": no chat template (no tokenizer_config.json, "
                  "chat_template.jinja or chat_template.json)";
    return false;
  }
  if (!config.contains("chat_template") || config["chat_template"].is_null()) {
    error = configPath + ": no \"chat_template\" key: the checkpoint has no "
                         "chat template";
    return false;
  }
  out.origin = configPath + ": chat_template";
  return templateFromJson(config["chat_template"], out.origin, out.text, error);
}

std::unique_ptr<ChatTemplate>
tfc::rt::openChatTemplate(const std::string &checkpointPath,
                          std::string &error) {
  ChatTemplateSource source;
  if (!readChatTemplate(checkpointPath, source, error))
    return nullptr;
  std::unique_ptr<ChatTemplate> t =
      ChatTemplate::parse(source.text, error, source.origin);
  if (t)
    t->setSpecialTokens(source.bos, source.eos);
  return t;
}
