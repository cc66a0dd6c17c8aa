//===- Files.h - Opening untrusted files without blocking -------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Every file libtfcrt reads (model libraries, weights, .npy arrays) is opened
// with O_NONBLOCK and checked to be a regular file before anything reads it:
// a FIFO, a socket or a terminal named as an input must be an error, not a
// process that waits forever in open() or read().
//
// Private to libtfcrt (tools reach it through readNpy and the C API).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FORMATS_FILES_H
#define TFC_FORMATS_FILES_H

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

namespace tfc::rt {

/// Opens `path` read-only (O_CLOEXEC) without blocking, checks that it is a
/// regular file and returns the descriptor, in blocking mode again, with its
/// size in `size`; -1 with `error` set ("PATH: cannot open: ...", "PATH: not
/// a regular file (a FIFO)") otherwise.
int openRegularFile(const std::string &path, uint64_t &size,
                    std::string &error);

/// The whole of the regular file `path`, at most `maxBytes` long ("PATH: is
/// N bytes, more than the M allowed" otherwise).
bool readRegularFile(const std::string &path, std::string &out,
                     uint64_t maxBytes, std::string &error);

/// Writes all `bytes` of `data` to `fd` (short writes and EINTR retried).
bool writeAll(int fd, const void *data, uint64_t bytes);

/// Writes `path` whole or not at all: `fill(fd)` writes a temporary file
/// created next to it (mkstemp), which gets mode 0644 and is renamed over
/// `path`; on any failure the temporary file is removed and `error` says
/// "PATH: cannot create a temporary file next to it: ..." or "PATH: cannot
/// write: ...".
bool writeFileWhole(const std::string &path,
                    const std::function<bool(int fd)> &fill,
                    std::string &error);

/// The most bytes of a JSON configuration file (config.json,
/// tokenizer_config.json, generation_config.json, ...) that is read whole.
inline constexpr uint64_t kMaxConfigFileBytes = uint64_t(64) << 20;

/// "a FIFO", "a directory", ... for an st_mode.
const char *fileKind(unsigned mode);

/// Whether `path` exists (stat succeeds), is a directory, is a regular file
/// (links followed).
bool pathExists(const std::string &path);
bool isDirectory(const std::string &path);
bool isRegularFile(const std::string &path);

/// The user's cache of tfc (compiled models, packed weights, tuning
/// records): $TFC_CACHE_DIR, else $XDG_CACHE_HOME/tfc, else
/// $HOME/.cache/tfc (/tmp/.cache/tfc without a home).
std::string userCacheDir();

/// A regular file mapped read-only and private (the one way the formats map
/// a file: safetensors, GGUF, packed weights), unmapped when destroyed.
/// Opening goes through openRegularFile, so a FIFO is an error, not a hang.
class MappedFile {
public:
  MappedFile() = default;
  MappedFile(MappedFile &&other) noexcept;
  MappedFile &operator=(MappedFile &&other) noexcept;
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;
  ~MappedFile();

  /// Maps `path` (an empty file maps to no bytes); false with `error` set
  /// ("PATH: cannot open: ...", "PATH: cannot map: ...") otherwise.
  bool map(const std::string &path, std::string &error);

  const uint8_t *data() const { return base_; }
  uint64_t size() const { return size_; }
  /// Whether bytes are mapped (not for an empty file).
  bool mapped() const { return base_ != nullptr; }
  /// Whether [p, p + bytes) lies inside the mapping.
  bool contains(const void *p, uint64_t bytes) const {
    auto at = reinterpret_cast<uintptr_t>(p),
         b = reinterpret_cast<uintptr_t>(base_);
    return base_ && at >= b && bytes <= size_ && at - b <= size_ - bytes;
  }

private:
  void unmap();
  const uint8_t *base_ = nullptr;
  uint64_t size_ = 0;
};

} // namespace tfc::rt

#endif // TFC_FORMATS_FILES_H
