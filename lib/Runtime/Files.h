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

#ifndef TFC_LIB_RUNTIME_FILES_H
#define TFC_LIB_RUNTIME_FILES_H

#include <cstdint>
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

/// "a FIFO", "a directory", ... for an st_mode.
const char *fileKind(unsigned mode);

} // namespace tfc::rt

#endif // TFC_LIB_RUNTIME_FILES_H
