// Interface addresses (RTM_NEWADDR / RTM_DELADDR / RTM_GETADDR), IPv4 and IPv6.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inet.h"
#include "nl_socket.h"

namespace sriovctl {

// INFINITY_LIFE_TIME of the kernel's addrconf: a lifetime that never runs out.
constexpr uint32_t kForeverLifetime = 0xFFFFFFFFu;

struct AddressInfo {
  int index = 0;
  int family = 0;  // AF_INET / AF_INET6
  std::string address;  // IFA_LOCAL, else IFA_ADDRESS: the interface's own address
  uint8_t prefixLen = 0;
  uint32_t flags = 0;  // IFA_F_* (IFA_FLAGS when the kernel sends it: it carries the bits above 8)
  uint8_t scope = 0;   // RT_SCOPE_*
  std::optional<std::string> peer;       // IFA_ADDRESS when it differs from IFA_LOCAL (point-to-point)
  std::optional<std::string> broadcast;  // IFA_BROADCAST (IPv4)
  std::optional<std::string> label;      // IFA_LABEL (IPv4)
  uint32_t validLft = kForeverLifetime;      // IFA_CACHEINFO: seconds left
  uint32_t preferredLft = kForeverLifetime;
  std::optional<uint8_t> proto;    // IFA_PROTO (IFAPROT_*; kernels from 5.18)
  std::optional<uint32_t> metric;  // IFA_RT_PRIORITY: the metric of the prefix route the kernel makes for it
};

// An address as it is put back (RTM_NEWADDR with NLM_F_CREATE | NLM_F_REPLACE: one already there is updated).
struct AddressSpec {
  int index = 0;
  InetAddr local;
  uint8_t prefixLen = 0;
  std::optional<InetAddr> peer;
  std::optional<InetAddr> broadcast;
  std::optional<std::string> label;
  uint32_t flags = 0;
  uint8_t scope = 0;
  uint32_t validLft = kForeverLifetime;
  uint32_t preferredLft = kForeverLifetime;
  std::optional<uint32_t> metric;
  std::optional<uint8_t> proto;
};

// An RTM_NEWADDR of IPv4 or IPv6 with its address (IFA_LOCAL, else IFA_ADDRESS); false for anything else.
bool parseAddressMessage(const nlmsghdr* h, AddressInfo& out);

// index 0: every link (else a dump the kernel filters by index, NETLINK_GET_STRICT_CHK); family AF_UNSPEC: both.
std::vector<AddressInfo> listAddresses(NlSocket& s, int index, int family);
void addAddress(NlSocket& s, int index, const InetAddr& addr, uint8_t prefixLen);
void deleteAddress(NlSocket& s, int index, const InetAddr& addr, uint8_t prefixLen);
void putAddress(NlSocket& s, const AddressSpec& a);

}  // namespace sriovctl
