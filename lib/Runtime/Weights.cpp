//===- Weights.cpp - Opening a checkpoint's weights ------------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Runtime/Weights.h"

#include "Json.h"
#include "tfc/Runtime/Gguf.h"

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
      return openShards(path, index, error);
    if (isRegular(single))
      return SafeTensorsFile::open(single, error);
    error = path + ": a checkpoint directory needs model.safetensors or "
                   "model.safetensors.index.json (with its shards)";
    return nullptr;
  }
  if (isGgufFile(path))
    return GgufFile::open(path, error);
  return SafeTensorsFile::open(path, error);
}
