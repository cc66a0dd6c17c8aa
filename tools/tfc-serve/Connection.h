//===- Connection.h - Is the client of a request still there? ---*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// cpp-httplib 0.11 (Debian 12's) gives a handler the addresses of its
// connection but not its socket, and has no call that says whether the
// client has gone. A request that waits for its answer (a completion without
// `stream`) would then run to its end for a client that left. This finds
// the connection's socket among the process's by its two addresses (the
// pair is unique while the handler runs: the socket is closed only after
// it returns) and peeks at it: a peer that closed reads as end of file.
// The scan looks at descriptors other threads may close meanwhile; one
// closed or reused on the way cannot match (scripts/tsan-suppressions.txt).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TOOLS_SERVE_CONNECTION_H
#define TFC_TOOLS_SERVE_CONNECTION_H

#include <string>

namespace tfc::serve {

/// The socket connected from `remoteAddr:remotePort` to
/// `localAddr:localPort` (numeric addresses, as cpp-httplib gives them), or
/// -1 when none is (or /proc/self/fd cannot be read).
int findConnectionSocket(const std::string &localAddr, int localPort,
                         const std::string &remoteAddr, int remotePort);

/// Whether the peer of socket `fd` has closed its side (a peek reads end of
/// file, or the connection was reset). Data waiting to be read (a next
/// request on a kept-alive connection) is not a close. -1: false.
bool peerClosed(int fd);

} // namespace tfc::serve

#endif // TFC_TOOLS_SERVE_CONNECTION_H
