//===- Files.cpp - Opening untrusted files without blocking ---------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Formats/Files.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

using namespace tfc::rt;

bool tfc::rt::writeAll(int fd, const void *data, uint64_t bytes) {
  const char *p = static_cast<const char *>(data);
  while (bytes > 0) {
    ssize_t n = ::write(fd, p, bytes > (1u << 30) ? (1u << 30) : bytes);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    bytes -= static_cast<uint64_t>(n);
  }
  return true;
}

bool tfc::rt::writeFileWhole(const std::string &path,
                             const std::function<bool(int fd)> &fill,
                             std::string &error) {
  std::string temp = path + ".tmp-XXXXXX";
  int fd = mkstemp(&temp[0]);
  if (fd < 0) {
    error = path + ": cannot create a temporary file next to it: " +
            std::strerror(errno);
    return false;
  }
  bool ok = fill(fd);
  // Files from mkstemp are 0600; give the file the usual permissions.
  if (ok)
    ok = fchmod(fd, 0644) == 0;
  if (::close(fd) != 0)
    ok = false;
  if (ok && std::rename(temp.c_str(), path.c_str()) != 0)
    ok = false;
  if (!ok) {
    error = path + ": cannot write: " + std::strerror(errno);
    ::unlink(temp.c_str());
    return false;
  }
  return true;
}

const char *tfc::rt::fileKind(unsigned mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISSOCK(mode))
    return "a socket";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  return "not a plain file";
}

bool tfc::rt::pathExists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool tfc::rt::isDirectory(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool tfc::rt::isRegularFile(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string tfc::rt::userCacheDir() {
  if (const char *dir = std::getenv("TFC_CACHE_DIR"); dir && *dir)
    return dir;
  if (const char *dir = std::getenv("XDG_CACHE_HOME"); dir && *dir)
    return std::string(dir) + "/tfc";
  const char *home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.cache/tfc";
}

int tfc::rt::openRegularFile(const std::string &path, uint64_t &size,
                             std::string &error) {
  // O_NONBLOCK: opening a FIFO without a writer would wait forever.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    error = path + ": cannot open: " + std::strerror(errno);
    return -1;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    error = path + ": cannot stat: " + std::strerror(errno);
    ::close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    error = path + ": not a regular file (" + fileKind(st.st_mode) + ")";
    ::close(fd);
    return -1;
  }
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0)
    ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  size = static_cast<uint64_t>(st.st_size);
  return fd;
}

bool tfc::rt::readRegularFile(const std::string &path, std::string &out,
                              uint64_t maxBytes, std::string &error) {
  uint64_t size = 0;
  int fd = openRegularFile(path, size, error);
  if (fd < 0)
    return false;
  if (size > maxBytes) {
    error = path + ": is " + std::to_string(size) + " bytes, more than the " +
            std::to_string(maxBytes) + " allowed";
    ::close(fd);
    return false;
  }
  try {
    out.resize(static_cast<size_t>(size));
  } catch (const std::bad_alloc &) {
    error = path + ": cannot allocate " + std::to_string(size) +
            " bytes to read it";
    ::close(fd);
    return false;
  }
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::read(fd, &out[done], out.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      error = path + ": cannot read: " +
              (n < 0 ? std::strerror(errno)
                     : "the file became shorter while it was read");
      ::close(fd);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return true;
}

MappedFile::MappedFile(MappedFile &&other) noexcept
    : base_(std::exchange(other.base_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile &MappedFile::operator=(MappedFile &&other) noexcept {
  if (this != &other) {
    unmap();
    base_ = std::exchange(other.base_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() { unmap(); }

void MappedFile::unmap() {
  if (base_)
    munmap(const_cast<uint8_t *>(base_), size_);
  base_ = nullptr;
  size_ = 0;
}

bool MappedFile::map(const std::string &path, std::string &error) {
  unmap();
  uint64_t size = 0;
  int fd = openRegularFile(path, size, error);
  if (fd < 0)
    return false;
  if (size > 0) {
    void *p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    int mapErrno = errno;
    if (p == MAP_FAILED) {
      ::close(fd);
      error = path + ": cannot map: " + std::strerror(mapErrno);
      return false;
    }
    base_ = static_cast<const uint8_t *>(p);
    size_ = size;
  }
  ::close(fd);
  return true;
}
