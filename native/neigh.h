// Neighbour entries (RTM_GETNEIGH / RTM_NEWNEIGH), IPv4 (ARP) and IPv6 (NDP).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hwaddr.h"
#include "inet.h"
#include "nl_socket.h"

namespace sriovctl {

struct NeighbourInfo {
  int index = 0;
  int family = 0;  // AF_INET / AF_INET6
  std::string address;
  std::optional<std::string> lladdr;  // NDA_LLADDR, any length, when the entry has one
  uint16_t state = 0;                 // NUD_*
  uint8_t flags = 0;                  // NTF_*
};

// An RTM_NEWNEIGH of IPv4 or IPv6 with its NDA_DST; false for anything else (a bridge FDB entry, a proxy).
bool parseNeighbourMessage(const nlmsghdr* h, NeighbourInfo& out);

// The entries of one link (index > 0), of one family or both (AF_UNSPEC).
std::vector<NeighbourInfo> listNeighbours(NlSocket& s, int index, int family);

struct NeighbourSpec {
  int index = 0;
  InetAddr address;
  std::optional<Mac> lladdr;
  uint16_t state = 0;
  uint8_t flags = 0;
};

// NLM_F_CREATE | NLM_F_REPLACE: writing an entry that is there already is no error.
void replaceNeighbour(NlSocket& s, const NeighbourSpec& spec);

}  // namespace sriovctl
