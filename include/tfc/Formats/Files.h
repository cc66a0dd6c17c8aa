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

/// "a FIFO", "a directory", ... for an st_mode.
const char *fileKind(unsigned mode);

} // namespace tfc::rt

#endif // TFC_FORMATS_FILES_H
