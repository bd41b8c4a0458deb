// Interface addresses (RTM_NEWADDR / RTM_DELADDR / RTM_GETADDR), IPv4 and IPv6.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "inet.h"
#include "nl_socket.h"

namespace sriovctl {

struct AddressInfo {
  int index = 0;
  int family = 0;  // AF_INET / AF_INET6
  std::string address;
  uint8_t prefixLen = 0;
  uint32_t flags = 0;  // IFA_F_* (IFA_FLAGS when the kernel sends it: it carries the bits above 8)
};

// index 0: every link; family AF_UNSPEC: both.
std::vector<AddressInfo> listAddresses(NlSocket& s, int index, int family);
void addAddress(NlSocket& s, int index, const InetAddr& addr, uint8_t prefixLen);
void deleteAddress(NlSocket& s, int index, const InetAddr& addr, uint8_t prefixLen);

}  // namespace sriovctl
