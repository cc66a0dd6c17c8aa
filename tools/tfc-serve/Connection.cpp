//===- Connection.cpp - Is the client of a request still there? -----------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// See Connection.h.
//
//===----------------------------------------------------------------------===//

#include "Connection.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstdlib>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

using namespace tfc::serve;

namespace {

/// A socket address as "ADDR" and port; false for other families.
bool numeric(const sockaddr_storage &a, std::string &addr, int &port) {
  char text[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET) {
    const auto *in = reinterpret_cast<const sockaddr_in *>(&a);
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    port = ntohs(in->sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto *in = reinterpret_cast<const sockaddr_in6 *>(&a);
    inet_ntop(AF_INET6, &in->sin6_addr, text, sizeof text);
    port = ntohs(in->sin6_port);
  } else {
    return false;
  }
  addr = text;
  return true;
}

} // namespace

int tfc::serve::findConnectionSocket(const std::string &localAddr,
                                     int localPort,
                                     const std::string &remoteAddr,
                                     int remotePort) {
  DIR *dir = opendir("/proc/self/fd");
  if (!dir)
    return -1;
  int found = -1;
  while (dirent *entry = readdir(dir)) {
    char *end = nullptr;
    long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == dirfd(dir))
      continue;
    struct stat st;
    if (fstat(static_cast<int>(fd), &st) != 0 || !S_ISSOCK(st.st_mode))
      continue;
    sockaddr_storage local{}, peer{};
    socklen_t localLen = sizeof local, peerLen = sizeof peer;
    if (getsockname(static_cast<int>(fd), reinterpret_cast<sockaddr *>(&local),
                    &localLen) != 0 ||
        getpeername(static_cast<int>(fd), reinterpret_cast<sockaddr *>(&peer),
                    &peerLen) != 0)
      continue; // not connected (the listening socket)
    std::string la, ra;
    int lp = -1, rp = -1;
    if (numeric(local, la, lp) && numeric(peer, ra, rp) && lp == localPort &&
        rp == remotePort && la == localAddr && ra == remoteAddr) {
      found = static_cast<int>(fd);
      break;
    }
  }
  closedir(dir);
  return found;
}

bool tfc::serve::peerClosed(int fd) {
  if (fd < 0)
    return false;
  char byte;
  ssize_t n = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0)
    return true;
  return n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
}
