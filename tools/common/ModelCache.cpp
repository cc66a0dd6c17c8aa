//===- ModelCache.cpp - Checkpoints compiled once, for the runtime tools --===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "ModelCache.h"

#include "tfc/Formats/DType.h"
#include "tfc/Formats/Files.h"
#include "tfc/Formats/Gguf.h"
#include "tfc/Formats/PackedWeights.h"
#include "tfc/Formats/Weights.h"
#include "tfc/Runtime/tfc.h"
#include "tfc/Tuning/TuneRecord.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace tfc::tools;

namespace {

/// Two FNV-1a hashes with different bases: a 128-bit key.
class Key {
public:
  void add(const void *data, size_t n) {
    auto *p = static_cast<const unsigned char *>(data);
    for (size_t i = 0; i < n; ++i) {
      a = (a ^ p[i]) * 0x100000001b3ull;
      b = (b ^ p[i]) * 0x100000001b3ull;
    }
    // A separator, so that ("ab", "c") and ("a", "bc") differ.
    a = (a ^ 0xff) * 0x100000001b3ull;
    b = (b ^ 0xfe) * 0x100000001b3ull;
  }
  void add(const std::string &s) { add(s.data(), s.size()); }
  std::string hex() const {
    char buf[33];
    std::snprintf(buf, sizeof buf, "%016llx%016llx",
                  static_cast<unsigned long long>(a),
                  static_cast<unsigned long long>(b));
    return buf;
  }

private:
  uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;
};

/// The identity of a file that is not a checkpoint's weights: its path,
/// size and modification time (the compiler binary).
void addFileIdentity(Key &key, const std::string &path) {
  struct stat st;
  key.add(path);
  if (::stat(path.c_str(), &st) == 0) {
    key.add(&st.st_size, sizeof st.st_size);
    key.add(&st.st_mtim, sizeof st.st_mtim);
  }
}

/// Every JSON file of a directory and of its sub-directories one level
/// down (sentence-transformers' module folders), in name order.
void addJsonFiles(Key &key, const std::string &dir, int depth) {
  DIR *d = ::opendir(dir.c_str());
  if (!d)
    return;
  std::vector<std::string> names;
  while (dirent *e = ::readdir(d))
    if (e->d_name[0] != '.')
      names.push_back(e->d_name);
  ::closedir(d);
  std::sort(names.begin(), names.end());
  for (const std::string &n : names) {
    std::string path = dir + "/" + n;
    if (tfc::rt::isDirectory(path)) {
      if (depth > 0)
        addJsonFiles(key, path, depth - 1);
    } else if (n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0) {
      std::string text, unreadable;
      if (tfc::rt::readRegularFile(path, text, tfc::rt::kMaxConfigFileBytes,
                                   unreadable)) {
        key.add(n);
        key.add(text);
      }
    }
  }
}

/// What of a checkpoint decides the code.
bool addCheckpoint(Key &key, const std::string &path, std::string &error) {
  // The weights' names, types and shapes, from the file already open.
  auto addTensors = [&](const tfc::rt::WeightSource &weights) {
    for (const tfc::rt::TensorView *t : weights.allTensors()) {
      key.add(t->name);
      key.add(tfc::rt::dtypeName(t->dtype));
      key.add(t->shape.data(), t->shape.size() * sizeof(int64_t));
    }
  };
  if (tfc::rt::isGgufFile(path)) {
    std::unique_ptr<tfc::rt::GgufFile> file =
        tfc::rt::GgufFile::open(path, error);
    if (!file)
      return false;
    for (const auto &[name, value] : file->metadata()) {
      key.add(name);
      key.add(value.raw.data(), value.raw.size());
    }
    addTensors(*file);
    return true;
  }
  if (!tfc::rt::isDirectory(path)) {
    // A .tfm description: all of it.
    std::string text;
    if (!tfc::rt::readRegularFile(path, text, tfc::rt::kMaxConfigFileBytes,
                                  error))
      return false;
    key.add(text);
    return true;
  }
  addJsonFiles(key, path, 1);
  std::unique_ptr<tfc::rt::WeightSource> weights =
      tfc::rt::openWeights(path, error);
  if (!weights)
    return false;
  addTensors(*weights);
  return true;
}

/// The host CPU as tfc-compile targets it by default.
void addHost(Key &key) {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  int found = 0;
  while (found < 2 && std::getline(f, line))
    if (line.rfind("model name", 0) == 0 || line.rfind("flags", 0) == 0) {
      key.add(line);
      ++found;
    }
  const char *masked = std::getenv("TFC_HOST_CPU");
  key.add(masked ? masked : "");
}

/// The tuning records tfc-compile reads by default (tfc-tune's: they change
/// the code compiled for the host), by path, size and modification time.
void addTuning(Key &key) {
  const char *env = std::getenv("TFC_TUNE_FILE");
  key.add(env ? env : "");
  std::string path = tfc::tuning::tuneFileInEffect();
  if (!path.empty())
    addFileIdentity(key, path);
}

/// Runs the tfc-tune beside `compiler` with --if-missing (its progress and
/// report on this process's stderr); a failure is left to tfc-compile, which runs it
/// again and reports it.
void runTuner(const std::string &compiler) {
  size_t slash = compiler.find_last_of('/');
  std::string tuner = (slash == std::string::npos ? std::string(".")
                                                  : compiler.substr(0, slash)) +
                      "/tfc-tune";
  std::string file = tfc::tuning::tuneFileInEffect();
  pid_t pid = ::fork();
  if (pid == 0) {
    // Its report on stderr: stdout is the tool's output.
    ::dup2(2, 1);
    const char *argv[] = {tuner.c_str(), "--if-missing", "-o", file.c_str(),
                          nullptr};
    ::execv(tuner.c_str(), const_cast<char *const *>(argv));
    _exit(127);
  }
  int status = 0;
  while (pid > 0 && ::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

std::string compilerPath(const std::string &tool) {
  if (const char *env = std::getenv("TFC_COMPILE"); env && *env)
    return env;
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  std::string dir;
  if (n > 0) {
    self[n] = 0;
    dir = self;
  } else {
    dir = tool;
  }
  size_t slash = dir.find_last_of('/');
  dir = slash == std::string::npos ? "." : dir.substr(0, slash);
  return dir + "/tfc-compile";
}

bool makeDirectories(const std::string &path) {
  for (size_t at = 1; at != std::string::npos;) {
    at = path.find('/', at + 1);
    std::string prefix = path.substr(0, at);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
      return false;
  }
  return true;
}

} // namespace

bool tfc::tools::isModelLibrary(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  char magic[4] = {};
  return f.read(magic, 4) && std::memcmp(magic,
                                         "\x7f"
                                         "ELF",
                                         4) == 0;
}

bool tfc::tools::hasTokenizer(const std::string &path) {
  if (tfc::rt::isGgufFile(path))
    return true;
  if (!tfc::rt::isDirectory(path))
    return path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  return static_cast<bool>(std::ifstream(path + "/tokenizer.json"));
}

std::string tfc::tools::packedCacheDir() {
  return tfc::rt::userCacheDir() + "/packed";
}

std::string tfc::tools::compiledCacheDir() {
  return tfc::rt::userCacheDir() + "/compiled";
}

bool tfc::tools::compiledModel(const std::string &checkpoint,
                               const std::vector<std::string> &flags,
                               const std::string &tool, bool quiet,
                               std::string &library, std::string &error) {
  std::string compiler = compilerPath(tool);
  if (::access(compiler.c_str(), X_OK) != 0) {
    error = checkpoint + " is a checkpoint, and compiling it needs " +
            compiler +
            ", which is missing (set TFC_COMPILE, or give a "
            "library from tfc-compile)";
    return false;
  }
  // TFC_AUTOTUNE=1: tune a host without a record first, so that the key
  // below already has the record (tfc-compile would otherwise tune during
  // the compile and the entry be keyed without it).
  if (const char *autotune = std::getenv("TFC_AUTOTUNE");
      autotune && std::string(autotune) == "1" &&
      !tfc::tuning::tuneFileInEffect().empty())
    runTuner(compiler);
  Key key;
  key.add("tfc compiled model cache 1");
  if (!addCheckpoint(key, checkpoint, error))
    return false;
  for (const std::string &f : flags)
    key.add(f);
  // The compiler by the file it is: a tool beside a link to tfc-compile and
  // tfc-compile itself (tfc-compile --cache-dir) key it the same.
  char realCompiler[PATH_MAX];
  addFileIdentity(key, ::realpath(compiler.c_str(), realCompiler)
                           ? std::string(realCompiler)
                           : compiler);
  addHost(key);
  addTuning(key);
  std::string dir = compiledCacheDir();
  library = dir + "/" + key.hex() + ".so";
  if (isModelLibrary(library))
    return true;
  if (!makeDirectories(dir)) {
    error = "cannot create the cache directory " + dir + ": " +
            std::strerror(errno);
    return false;
  }
  if (!quiet) {
    std::string shown;
    for (const std::string &f : flags)
      shown += " " + f;
    std::fprintf(stderr, "note: compiling %s%s (once; cached as %s)\n",
                 checkpoint.c_str(), shown.c_str(), library.c_str());
  }
  // Into a file of this process, renamed into place: a reader never sees a
  // half-written library, and two processes compiling at once both succeed.
  // (".so" last: tfc-compile picks what to emit by the output's name.)
  std::string partial = library.substr(0, library.size() - 3) + ".tmp" +
                        std::to_string(::getpid()) + ".so";
  std::string log = partial + ".log";
  pid_t pid = ::fork();
  if (pid < 0) {
    error = std::string("cannot start tfc-compile: ") + std::strerror(errno);
    return false;
  }
  if (pid == 0) {
    std::vector<const char *> argv = {compiler.c_str(), checkpoint.c_str(),
                                      "-o", partial.c_str()};
    for (const std::string &f : flags)
      argv.push_back(f.c_str());
    argv.push_back(nullptr);
    if (FILE *out = std::fopen(log.c_str(), "w")) {
      ::dup2(fileno(out), 2);
      std::fclose(out);
    }
    ::execv(compiler.c_str(), const_cast<char *const *>(argv.data()));
    _exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::string messages, unreadable;
  tfc::rt::readRegularFile(log, messages, tfc::rt::kMaxConfigFileBytes,
                           unreadable);
  ::unlink(log.c_str());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    ::unlink(partial.c_str());
    while (!messages.empty() && messages.back() == '\n')
      messages.pop_back();
    error = messages.empty() ? "tfc-compile failed on " + checkpoint : messages;
    return false;
  }
  if (::rename(partial.c_str(), library.c_str()) != 0) {
    error = "cannot move the compiled model into " + library + ": " +
            std::strerror(errno);
    ::unlink(partial.c_str());
    return false;
  }
  return true;
}

bool tfc::tools::resolveModelArgument(std::string &model,
                                      const std::vector<std::string> &flags,
                                      const std::string &tool, bool quiet,
                                      std::string &weights, std::string &error,
                                      std::string *packedCache) {
  if (packedCache)
    packedCache->clear();
  // A checkpoint is a directory, a .gguf or a .tfm; anything else (a
  // library, a missing or mistaken file) goes to the loader, whose message
  // says what it is not.
  bool description =
      model.size() > 4 && model.compare(model.size() - 4, 4, ".tfm") == 0;
  if (model.empty() ||
      !(tfc::rt::isDirectory(model) || tfc::rt::isGgufFile(model) ||
        (description && ::access(model.c_str(), R_OK) == 0)))
    return true;
  std::string library;
  if (!compiledModel(model, flags, tool, quiet, library, error))
    return false;
  // A cached entry that does not load (truncated, from another build of
  // the runtime) is compiled again, once.
  tfc_model *probe = nullptr;
  if (tfc_model_inspect(library.c_str(), &probe) != TFC_OK) {
    ::unlink(library.c_str());
    if (!compiledModel(model, flags, tool, quiet, library, error))
      return false;
  }
  tfc_model_free(probe);
  if (weights.empty() && !description)
    weights = model;
  model = library;
  if (packedCache && !weights.empty())
    *packedCache = packedWeightsCachePath(library, weights);
  return true;
}

std::string tfc::tools::packedWeightsCachePath(const std::string &library,
                                               const std::string &checkpoint) {
  if (const char *env = std::getenv("TFC_WEIGHTS_CACHE");
      env && std::string(env) == "0")
    return "";
  if (tfc::rt::isPackedWeightsFile(checkpoint))
    return "";
  Key key;
  key.add("tfc packed weights cache 1");
  // The weights' files: a file itself, or every file of a directory (and
  // of its module folders), by identity, not content.
  std::vector<std::string> files;
  if (tfc::rt::isDirectory(checkpoint)) {
    std::vector<std::string> dirs = {checkpoint};
    for (size_t i = 0; i < dirs.size(); ++i) {
      DIR *d = ::opendir(dirs[i].c_str());
      if (!d)
        continue;
      while (dirent *e = ::readdir(d)) {
        if (e->d_name[0] == '.')
          continue;
        std::string path = dirs[i] + "/" + e->d_name;
        if (tfc::rt::isDirectory(path)) {
          if (i == 0)
            dirs.push_back(path);
        } else {
          files.push_back(path);
        }
      }
      ::closedir(d);
    }
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(checkpoint);
  }
  // Each file by where it really is and which file it is: the real path,
  // device, inode, size, modification and change times (a copy with the
  // same name, size and modification time is still another file).
  for (const std::string &f : files) {
    char real[PATH_MAX];
    key.add(::realpath(f.c_str(), real) ? std::string(real) : f);
    struct stat st;
    if (::stat(f.c_str(), &st) == 0) {
      key.add(&st.st_dev, sizeof st.st_dev);
      key.add(&st.st_ino, sizeof st.st_ino);
      key.add(&st.st_size, sizeof st.st_size);
      key.add(&st.st_mtim, sizeof st.st_mtim);
      key.add(&st.st_ctim, sizeof st.st_ctim);
    }
  }
  // Named after the library and the weights, in the packed directory.
  size_t slash = library.find_last_of('/');
  std::string name =
      slash == std::string::npos ? library : library.substr(slash + 1);
  if (name.size() > 3 && name.compare(name.size() - 3, 3, ".so") == 0)
    name.resize(name.size() - 3);
  std::string dir = packedCacheDir();
  if (!makeDirectories(dir))
    return "";
  return dir + "/" + name + "-" + key.hex().substr(0, 16) + ".tfcw";
}

bool tfc::tools::bindWeightsCached(tfc_model *model,
                                   const std::string &checkpoint,
                                   const std::string &packedCache, bool quiet,
                                   std::string &error) {
  struct stat before;
  if (!packedCache.empty() && ::stat(packedCache.c_str(), &before) == 0) {
    if (tfc_model_load_weights(model, packedCache.c_str()) == TFC_OK)
      return true;
    // The previous binding (none) stays; the file goes and is written again,
    // unless another process has just put a new one in its place.
    if (!quiet)
      std::fprintf(stderr, "note: %s does not bind (%s); binding %s again\n",
                   packedCache.c_str(), tfc_last_error(), checkpoint.c_str());
    struct stat now;
    if (::stat(packedCache.c_str(), &now) == 0 && now.st_ino == before.st_ino &&
        now.st_dev == before.st_dev)
      ::unlink(packedCache.c_str());
  }
  if (tfc_model_load_weights(model, checkpoint.c_str()) != TFC_OK) {
    error = tfc_last_error();
    return false;
  }
  if (packedCache.empty())
    return true;
  // A model that cannot write its weights packed (a CUDA model) or a cache
  // that cannot take them only costs the next run the same binding.
  tfc_model_info info;
  tfc_model_get_info(model, &info);
  if (std::string(info.device) != "cpu")
    return true;
  if (tfc_model_save_weights(model, packedCache.c_str()) != TFC_OK) {
    if (!quiet)
      std::fprintf(stderr, "note: the packed weights were not cached: %s\n",
                   tfc_last_error());
  } else if (!quiet) {
    std::fprintf(stderr,
                 "note: packed weights cached as %s (later runs map them)\n",
                 packedCache.c_str());
  }
  return true;
}

namespace {
bool clearDirectory(const std::string &dir, size_t &removed, uint64_t &bytes,
                    std::string &error);
} // namespace

bool tfc::tools::clearCompiledCache(size_t &removed, uint64_t &bytes,
                                    std::string &error) {
  removed = 0;
  bytes = 0;
  return clearDirectory(compiledCacheDir(), removed, bytes, error) &&
         clearDirectory(packedCacheDir(), removed, bytes, error);
}

namespace {

bool clearDirectory(const std::string &dir, size_t &removed, uint64_t &bytes,
                    std::string &error) {
  DIR *d = ::opendir(dir.c_str());
  if (!d) {
    if (errno == ENOENT)
      return true; // nothing cached yet
    error = dir + ": cannot open: " + std::strerror(errno);
    return false;
  }
  std::vector<std::string> names;
  while (dirent *e = ::readdir(d))
    names.push_back(e->d_name);
  ::closedir(d);
  auto endsWith = [](const std::string &s, const char *suffix) {
    size_t n = std::strlen(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
  };
  for (const std::string &name : names) {
    // Only what the cache writes: KEY.so, KEY-W.tfcw, their partial files
    // (KEY.tmpPID.so, .log, writeFileWhole's .tmp-XXXXXX).
    if (!(endsWith(name, ".so") || endsWith(name, ".tfcw") ||
          endsWith(name, ".log") || name.find(".tmp") != std::string::npos))
      continue;
    std::string path = dir + "/" + name;
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
      continue;
    if (::unlink(path.c_str()) != 0) {
      error = path + ": cannot remove: " + std::strerror(errno);
      return false;
    }
    ++removed;
    bytes += static_cast<uint64_t>(st.st_size);
  }
  return true;
}

} // namespace
