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

// An RTM_NEWADDR of IPv4 or IPv6 with its address (IFA_LOCAL, else IFA_ADDRESS); false for anything else.
bool parseAddressMessage(const nlmsghdr* h, AddressInfo& out);

// index 0: every link; family AF_UNSPEC: both.
std::vector<AddressInfo> listAddresses(NlSocket& s, int index, int family);
void addAddress(NlSocket& s, int index, const InetAddr& addr, uint8_t prefixLen);
void deleteAddress(NlSocket& s, int index, const InetAddr& addr, uint8_t prefixLen);

}  // namespace sriovctl
