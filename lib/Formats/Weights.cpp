//===- Weights.cpp - Opening a checkpoint's weights ------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Formats/Weights.h"

#include "tfc/Formats/Gguf.h"
#include "tfc/Formats/Json.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

using namespace tfc::rt;

namespace {

/// The shards of a Hugging Face checkpoint, as one source.
class ShardedWeights : public WeightSource {
public:
  std::string dir;
  std::vector<std::unique_ptr<SafeTensorsFile>> shards;
  std::map<std::string, const TensorView *, std::less<>> byName;

  const TensorView *findTensor(std::string_view name) const override {
    auto it = byName.find(name);
    return it == byName.end() ? nullptr : it->second;
  }
  std::vector<const TensorView *> allTensors() const override {
    std::vector<const TensorView *> out;
    for (auto &[n, v] : byName)
      out.push_back(v);
    return out;
  }
  std::string describe() const override { return dir; }
  bool isFileMapping() const override {
    for (const auto &shard : shards)
      if (!shard->isFileMapping())
        return false;
    return true;
  }
  bool mapsRange(const void *p, uint64_t bytes) const override {
    for (const auto &shard : shards)
      if (shard->mapsRange(p, bytes))
        return true;
    return false;
  }
};

/// A checkpoint plus the weights of its sentence-transformers Dense
/// modules (modules.json), each named "<module path>.<tensor>":
/// "2_Dense.linear.weight".
class WithModules : public WeightSource {
public:
  std::unique_ptr<WeightSource> main;
  std::vector<std::unique_ptr<SafeTensorsFile>> modules;
  /// The modules' tensors under their prefixed names (views into `modules`).
  std::map<std::string, TensorView, std::less<>> byName;

  const TensorView *findTensor(std::string_view name) const override {
    auto it = byName.find(name);
    return it != byName.end() ? &it->second : main->findTensor(name);
  }
  std::vector<const TensorView *> allTensors() const override {
    std::vector<const TensorView *> out = main->allTensors();
    for (auto &[n, v] : byName)
      out.push_back(&v);
    std::sort(out.begin(), out.end(),
              [](const TensorView *a, const TensorView *b) {
                return a->name < b->name;
              });
    return out;
  }
  std::string describe() const override { return main->describe(); }
  bool isFileMapping() const override {
    if (!main->isFileMapping())
      return false;
    for (const auto &m : modules)
      if (!m->isFileMapping())
        return false;
    return true;
  }
  bool mapsRange(const void *p, uint64_t bytes) const override {
    if (main->mapsRange(p, bytes))
      return true;
    for (const auto &m : modules)
      if (m->mapsRange(p, bytes))
        return true;
    return false;
  }
};

bool readSmallFile(const std::string &path, std::string &out,
                   std::string &error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    error = path + ": not a regular file";
    return false;
  }
  if (st.st_size > (64 << 20)) {
    ::close(fd);
    error = path + ": larger than 64 MiB";
    return false;
  }
  out.resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::read(fd, &out[done], out.size() - done);
    if (n <= 0) {
      ::close(fd);
      error = path + ": cannot read: " +
              (n < 0 ? std::strerror(errno) : "unexpected end of file");
      return false;
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return true;
}

bool isRegular(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::unique_ptr<WeightSource> openShards(const std::string &dir,
                                         const std::string &index,
                                         std::string &error) {
  std::string text;
  if (!readSmallFile(index, text, error))
    return nullptr;
  json::Value root;
  if (!json::parse(text, root, error, "JSON")) {
    error = index + ": " + error;
    return nullptr;
  }
  const json::Value *map =
      root.kind == json::Value::Object ? root.get("weight_map") : nullptr;
  if (!map || map->kind != json::Value::Object) {
    error = index + ": \"weight_map\" should be an object mapping tensor names "
                    "to shard files";
    return nullptr;
  }
  auto out = std::make_unique<ShardedWeights>();
  out->dir = dir;
  std::map<std::string, size_t> shardIndex;
  std::map<std::string, std::string> expected; // tensor -> shard
  for (auto &[tensor, file] : map->members) {
    if (file.kind != json::Value::String || file.string.empty() ||
        file.string.find('/') != std::string::npos || file.string == "." ||
        file.string == "..") {
      error = index + ": weight_map[\"" + tensor +
              "\"] should be the file name of a shard in the directory";
      return nullptr;
    }
    expected[tensor] = file.string;
    if (shardIndex.count(file.string))
      continue;
    std::string shardPath = dir + "/" + file.string;
    auto shard = SafeTensorsFile::open(shardPath, error);
    if (!shard) {
      error = index + " names shard '" + file.string + "': " + error;
      return nullptr;
    }
    shardIndex[file.string] = out->shards.size();
    out->shards.push_back(std::move(shard));
  }
  for (auto &[shardName, k] : shardIndex)
    for (const TensorView &v : out->shards[k]->tensors()) {
      auto it = out->byName.find(v.name);
      if (it != out->byName.end()) {
        error = dir + ": tensor '" + v.name + "' is in two shards";
        return nullptr;
      }
      out->byName.emplace(v.name, &v);
    }
  for (auto &[tensor, file] : expected) {
    if (!out->shards[shardIndex[file]]->find(tensor)) {
      error = index + ": tensor '" + tensor + "' should be in shard '" + file +
              "', which does not hold it";
      return nullptr;
    }
  }
  return out;
}

} // namespace

bool tfc::rt::isGgufFile(const std::string &path) {
  if (!isRegular(path))
    return false;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return false;
  char magic[4];
  bool yes = ::read(fd, magic, 4) == 4 && std::memcmp(magic, "GGUF", 4) == 0;
  ::close(fd);
  return yes;
}

namespace {

/// `main` with the safetensors weights of the Dense modules that the
/// directory's modules.json lists (a module without a model.safetensors
/// adds nothing: the importer names what is missing).
std::unique_ptr<WeightSource>
withDenseModules(const std::string &dir, std::unique_ptr<WeightSource> main,
                 std::string &error) {
  std::string modulesPath = dir + "/modules.json";
  if (!main || !isRegular(modulesPath))
    return main;
  std::string text;
  json::Value root;
  if (!readSmallFile(modulesPath, text, error))
    return nullptr;
  if (!json::parse(text, root, error, "JSON")) {
    error = modulesPath + ": " + error;
    return nullptr;
  }
  if (root.kind != json::Value::Array)
    return main; // the importer names the problem
  auto out = std::make_unique<WithModules>();
  for (const json::Value &m : root.items) {
    const json::Value *type = m.kind == json::Value::Object ? m.get("type")
                                                            : nullptr;
    const json::Value *path = m.kind == json::Value::Object ? m.get("path")
                                                            : nullptr;
    // "sentence_transformers.models.Dense" (up to 5.x),
    // "sentence_transformers.base.modules.dense.Dense" (6.x).
    auto isDense = [](const std::string &t) {
      return t.rfind("sentence_transformers.", 0) == 0 && t.size() > 6 &&
             t.compare(t.size() - 6, 6, ".Dense") == 0;
    };
    if (!type || type->kind != json::Value::String || !isDense(type->string) ||
        !path ||
        path->kind != json::Value::String || path->string.empty() ||
        path->string.find("..") != std::string::npos ||
        path->string.front() == '/')
      continue;
    std::string file = dir + "/" + path->string + "/model.safetensors";
    if (!isRegular(file))
      continue;
    auto weights = SafeTensorsFile::open(file, error);
    if (!weights)
      return nullptr;
    for (const TensorView &v : weights->tensors()) {
      TensorView named = v;
      named.name = path->string + "." + v.name;
      if (main->findTensor(named.name)) {
        error = file + ": tensor '" + v.name + "' would be '" + named.name +
                "', which the checkpoint already has";
        return nullptr;
      }
      out->byName.emplace(named.name, std::move(named));
    }
    out->modules.push_back(std::move(weights));
  }
  if (out->modules.empty())
    return main;
  out->main = std::move(main);
  return out;
}

} // namespace

std::unique_ptr<WeightSource> tfc::rt::openWeights(const std::string &path,
                                                   std::string &error) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    error = path + ": cannot open: " + std::strerror(errno);
    return nullptr;
  }
  if (S_ISDIR(st.st_mode)) {
    std::string index = path + "/model.safetensors.index.json";
    std::string single = path + "/model.safetensors";
    if (isRegular(index))
      return withDenseModules(path, openShards(path, index, error), error);
    if (isRegular(single))
      return withDenseModules(path, SafeTensorsFile::open(single, error),
                              error);
    error = path + ": a checkpoint directory needs model.safetensors or "
                   "model.safetensors.index.json (with its shards)";
    return nullptr;
  }
  if (isGgufFile(path))
    return GgufFile::open(path, error);
  return SafeTensorsFile::open(path, error);
}
