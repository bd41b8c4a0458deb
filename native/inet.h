// IPv4/IPv6 addresses between text and wire bytes.
#pragma once

#include <cstdint>
#include <string>

namespace sriovctl {

struct InetAddr {
  int family = 0;  // AF_INET or AF_INET6
  uint8_t bytes[16] = {};
  size_t size() const;
};

// Throws SysFailure(EINVAL, op) when text is not an address of the given family (AF_UNSPEC: either).
InetAddr parseInet(int family, const std::string& text, const std::string& op);

// inet_ntop of len bytes (4 or 16) of the given family.
std::string formatInet(int family, const void* bytes);

}  // namespace sriovctl
