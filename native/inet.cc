#include "inet.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <cerrno>

#include "sys_failure.h"

namespace sriovctl {

size_t InetAddr::size() const { return family == AF_INET ? 4 : 16; }

InetAddr parseInet(int family, const std::string& text, const std::string& op) {
  InetAddr a;
  for (int f : {AF_INET, AF_INET6}) {
    if (family != AF_UNSPEC && family != f) continue;
    if (inet_pton(f, text.c_str(), a.bytes) == 1) {
      a.family = f;
      return a;
    }
  }
  throw SysFailure::withDetail(EINVAL, op, "bad address '" + text + "'");
}

std::string formatInet(int family, const void* bytes) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (!inet_ntop(family, bytes, buf, sizeof buf)) return {};
  return buf;
}

}  // namespace sriovctl
